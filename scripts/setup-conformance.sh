#!/usr/bin/env bash
# Install (once) the official MCP conformance runner, in the two versions the
# conformance runs use, side by side, under target/conformance/. Node 22 comes
# from scripts/setup-node.sh (its last line). Needs only the system npm; no
# install scripts run. Idempotent: a stamp file per runner records the Node
# version and the hash of that runner's package.json + package-lock.json, so
# later runs return at once. The last line printed is the two runner entry
# points, space-separated, in the order of RUNNER_VERSIONS (0.1.16 first, then
# 0.2.0-alpha.12); run each as `<node> <entry> server --url ...`.
#
#   scripts/setup-conformance.sh
#   # -> <repo>/target/conformance/v0.1.16/node_modules/@modelcontextprotocol/conformance/dist/index.js \
#   #    <repo>/target/conformance/v0.2.0-alpha.12/node_modules/@modelcontextprotocol/conformance/dist/index.js
#
# Layout:
#   target/interop/node22/bin/node      Node 22 (installed by scripts/setup-node.sh)
#   target/conformance/v<VERSION>/      `npm ci` of tests/conformance/v<VERSION>/{package.json,package-lock.json}
#                                       (@modelcontextprotocol/conformance pinned exactly)
#
# To bump a runner: add tests/conformance/v<NEW>/package.json naming the exact
# version, then in a scratch copy of it run
#   npm install --package-lock-only --omit-lockfile-registry-resolved
# and copy the package-lock.json back (no "resolved" URLs are stored; npm ci
# fetches by name, version and integrity from the configured registry). Then
# update RUNNER_VERSIONS below and scripts/conformance.sh.
set -euo pipefail

RUNNER_VERSIONS=("0.1.16" "0.2.0-alpha.12")
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/.." && pwd)"
CONF="${REPO_ROOT}/target/conformance"
PKG_REL="node_modules/@modelcontextprotocol/conformance"

NODE_BIN="$("${SCRIPT_DIR}/setup-node.sh" | tail -n 1)"
[[ -x "${NODE_BIN}" ]] || { echo "setup-conformance: setup-node.sh gave no node (${NODE_BIN})" >&2; exit 1; }
NODE_VERSION="$("${NODE_BIN}" --version)"

want_stamp() { # $1 = runner version
    local src="${REPO_ROOT}/tests/conformance/v$1" lock_hash
    lock_hash="$(cat "${src}/package.json" "${src}/package-lock.json" | sha256sum | cut -d' ' -f1)"
    echo "node=${NODE_VERSION} conformance=$1 lock=${lock_hash}"
}

entry_of() { # $1 = runner version -> the runner's CLI script (its package.json "bin")
    local pkg="${CONF}/v$1/${PKG_REL}"
    "${NODE_BIN}" -e '
const p = require(process.argv[1] + "/package.json");
const b = typeof p.bin === "string" ? p.bin : Object.values(p.bin)[0];
console.log(require("path").join(process.argv[1], b));' "${pkg}"
}

up_to_date() { # $1 = runner version
    local stamp="${CONF}/v$1/.setup-conformance-ok"
    [[ -f "${stamp}" && "$(cat "${stamp}")" == "$(want_stamp "$1")" && -f "${CONF}/v$1/${PKG_REL}/package.json" ]]
}

all_up_to_date() {
    local v
    for v in "${RUNNER_VERSIONS[@]}"; do up_to_date "${v}" || return 1; done
}

print_entries() {
    local v out=()
    for v in "${RUNNER_VERSIONS[@]}"; do out+=("$(entry_of "${v}")"); done
    echo "${out[*]}"
}

if all_up_to_date; then
    print_entries
    exit 0
fi

# Serialise concurrent callers.
mkdir -p "${CONF}"
if command -v flock >/dev/null 2>&1; then
    exec 9>"${CONF}/.setup-conformance.lock"
    flock 9
fi

command -v npm >/dev/null 2>&1 || { echo "setup-conformance: npm not found on PATH" >&2; exit 1; }
export NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
export NPM_CONFIG_LOGLEVEL=error NPM_CONFIG_IGNORE_SCRIPTS=true

for v in "${RUNNER_VERSIONS[@]}"; do
    up_to_date "${v}" && continue
    src="${REPO_ROOT}/tests/conformance/v${v}"
    dir="${CONF}/v${v}"
    echo "setup-conformance: npm ci @modelcontextprotocol/conformance@${v} into ${dir}" >&2
    rm -rf "${dir}"
    mkdir -p "${dir}"
    cp "${src}/package.json" "${src}/package-lock.json" "${dir}/"
    # npm under Node 22, so engine checks see the Node that will run the runner.
    (cd "${dir}" && PATH="$(dirname "${NODE_BIN}"):${PATH}" npm ci >&2)
    got="$("${NODE_BIN}" -p 'require(process.argv[1]).version' "${dir}/${PKG_REL}/package.json")"
    if [[ "${got}" != "${v}" ]]; then
        echo "setup-conformance: expected conformance ${v}, found ${got}" >&2
        exit 1
    fi
    # Smoke check: the CLI loads under this Node (it needs >= 22) and knows `server`.
    if ! "${NODE_BIN}" "$(entry_of "${v}")" server --help >/dev/null 2>&1; then
        echo "setup-conformance: conformance ${v} does not start under node ${NODE_VERSION}" >&2
        exit 1
    fi
    want_stamp "${v}" >"${dir}/.setup-conformance-ok"
done

print_entries
