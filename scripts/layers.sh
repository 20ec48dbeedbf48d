#!/usr/bin/env bash
# The runtime's layers, written once, and the check that its imports run only downward.
#
#   scripts/layers.sh           # check runtime/src; exit 1 naming every import that breaks a rule
#   scripts/layers.sh --list    # print each file with its layer
#
# Rules, for every file of runtime/src (its `#[cfg(test)]` module aside: tests may reach anything):
# - it imports (a `use`, or a path written out in code) only from its own layer or a lower one;
# - it imports from the module that defines a name, never through the crate root's re-exports
#   (`crate::Server`): the root's list is the public surface, not a way around the layers;
# - every file has a layer (a new file is placed here, in LAYERS, before it lands).
# docs/ARCHITECTURE.md draws these layers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 - "$@" <<'PY'
import os
import re
import sys

# Bottom first. A pattern is a module path under runtime/src ("resolve/def"), or "dir/*" for every
# file under it. The first pattern that matches a file places it.
LAYERS = [
    ("base: helpers that know nothing of MCP",
     ["secret", "app_state", "expiring", "authority", "throttle", "budget", "args", "form", "form/*",
      "uri_template", "outbound"]),
    ("protocol: the wire model of both eras and the content it carries", ["protocol", "protocol/*"]),
    ("who and where: callers, access, sealing, stores, bearer tokens, the client back-channel, "
     "resource updates, tasks as the store keeps them, telemetry (spans, metrics)",
     ["principal", "access", "seal", "store", "event_store", "redis_store", "auth", "auth/*", "peer", "updates", "tasks", "telemetry"]),
    ("questions: what a question is (forms, URL flows, samples, roots) and its answers",
     ["choices", "elicit", "sampling", "url_flow", "question"]),
    ("what a body sees: the context, results, completions", ["context", "tool_result", "completion"]),
    ("registered items: tools, prompts, resources and the resolvers they declare",
     ["item", "resolve/def", "resolve/checks", "tool", "prompt", "resource", "__private"]),
    ("the engine: rounds, asking, sealed state, question limits", ["resolve", "resolve/*"]),
    ("the server: the registry, calls, sessions, subscriptions, rate limits", ["server", "server/*"]),
    ("the dispatcher", ["dispatch"]),
    ("transports: stdio, HTTP, the connection loop", ["transport", "transport/*"]),
    ("on top: the crate root, the client, testing and benchmark helpers",
     ["lib", "moved", "client", "client/*", "testing", "bench"]),
]

ROOT = "runtime/src"


def module_of(path):
    rel = os.path.relpath(path, ROOT)[:-3].split("/")
    if rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(rel) if rel != ["lib"] else ("lib",)


def layer_of(mod):
    name = "/".join(mod)
    for i, (_, patterns) in enumerate(LAYERS):
        for p in patterns:
            if p == name or (p.endswith("/*") and name.startswith(p[:-1])):
                return i
    return None


files = {}
for d, _, names in os.walk(ROOT):
    for n in names:
        if n.endswith(".rs"):
            p = os.path.join(d, n)
            files[module_of(p)] = p


def code_of(path):
    src = open(path, encoding="utf-8").read()
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\])'", "' '", src)
    # Cut each `#[cfg(test)] mod … { … }` out, braces balanced.
    while m := re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s*)?mod \w+\s*\{", src):
        depth, i = 1, m.end()
        while depth and i < len(src):
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        src = src[: m.start()] + src[i:]
    return src


def expand(tree):
    """`a::{b, c::{d, e as f}}` -> ["a::b", "a::c::d", "a::c::e"]."""
    tree = tree.strip()
    i = tree.find("{")
    if i < 0:
        return [re.sub(r"\s+as\s+\w+$", "", tree).strip()]
    prefix, inner = tree[:i], tree[i + 1 : tree.rfind("}")]
    items, cur, depth = [], "", 0
    for ch in inner:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for it in filter(None, (s.strip() for s in items)):
        for e in expand(it):
            out.append(prefix.rstrip(":") if e == "self" else prefix + e)
    return out


def children(path):
    return set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod (\w+);", open(path, encoding="utf-8").read(), re.M))


def target(mod, path, kids):
    # `__private01` is `__private.rs` (`#[path]`): the versioned name of generated code's module.
    segs = [re.sub(r"^__private\d+$", "__private", s) for s in re.split(r"\s*::\s*", path) if s]
    if not segs:
        return None
    own = list(mod) if mod != ("lib",) else []
    if segs[0] == "crate":
        full = segs[1:]
    elif segs[0] in ("super", "self"):
        base = own
        if segs[0] == "self":
            segs = segs[1:]
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
        full = base + segs
    elif segs[0] in kids:
        full = own + segs
    else:
        return None
    for k in range(len(full), 0, -1):
        if tuple(full[:k]) in files:
            return tuple(full[:k]), full[k:]
    return ("lib",), full


errors = []
if "--list" in sys.argv[1:]:
    for mod in sorted(files, key=lambda m: (layer_of(m) or 0, m)):
        print(layer_of(mod), "/".join(mod))
    sys.exit(0)
for mod, path in sorted(files.items()):
    mine = layer_of(mod)
    if mine is None:
        errors.append(f"{path}: in no layer; place it in scripts/layers.sh")
        continue
    code = code_of(path)
    kids = children(path)
    paths = []
    for u in re.finditer(r"\buse\s+([^;]+);", code):
        paths += expand(u.group(1))
    paths += re.findall(r"\b((?:crate|super)(?:\s*::\s*\w+)+)", code)
    seen = set()
    for p in paths:
        t = target(mod, p, kids)
        if t is None:
            continue
        to, rest = t
        if to == mod:
            continue
        name = rest[0] if rest else ""
        if to == ("lib",) and mod != ("lib",) and name and name not in ("__private",):
            key = ("root", name)
            if key not in seen:
                seen.add(key)
                errors.append(f"{path}: `crate::{name}` goes through the crate root; import it from its module")
            continue
        theirs = layer_of(to)
        if theirs is not None and theirs > mine:
            key = ("up", to)
            if key not in seen:
                seen.add(key)
                errors.append(
                    f"{path} (layer {mine}: {LAYERS[mine][0].split(':')[0]}) imports "
                    f"{files[to]} (layer {theirs}: {LAYERS[theirs][0].split(':')[0]})"
                )
for e in errors:
    print(e)
if errors:
    print(f"layers: {len(errors)} problem(s); the order is LAYERS in scripts/layers.sh")
    sys.exit(1)
print(f"layers: {len(files)} files of runtime/src, {len(LAYERS)} layers, every import runs downward")
PY
