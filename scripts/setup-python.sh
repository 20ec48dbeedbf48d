#!/usr/bin/env bash
# Create (once) the Python venv used by the interop tests and install the
# official MCP Python SDK into it. Idempotent: a stamp file short-circuits
# later runs. The last line printed is the venv's python interpreter.
#
#   scripts/setup-python.sh            # -> <repo>/target/interop/venv/bin/python
#   PYTHON=python3.11 scripts/setup-python.sh
set -euo pipefail

MCP_VERSION="2.3.0"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/.." && pwd)"
VENV="${REPO_ROOT}/target/interop/venv"
VPY="${VENV}/bin/python"
STAMP="${VENV}/.mcp-${MCP_VERSION}-ok"
PYTHON="${PYTHON:-python3}"

if [[ -f "${STAMP}" && -x "${VPY}" ]]; then
    echo "${VPY}"
    exit 0
fi

# Serialise concurrent callers (e.g. parallel cargo test binaries).
mkdir -p "${REPO_ROOT}/target/interop"
LOCK="${REPO_ROOT}/target/interop/.setup.lock"
if command -v flock >/dev/null 2>&1; then
    exec 9>"${LOCK}"
    flock 9
    if [[ -f "${STAMP}" && -x "${VPY}" ]]; then
        echo "${VPY}"
        exit 0
    fi
fi

if [[ ! -x "${VPY}" ]]; then
    echo "setup-python: creating venv at ${VENV}" >&2
    rm -rf "${VENV}"
    "${PYTHON}" -m venv "${VENV}"
fi

echo "setup-python: installing mcp==${MCP_VERSION}" >&2
"${VPY}" -m pip install --quiet --disable-pip-version-check "mcp==${MCP_VERSION}" >&2

# Import check: the names the driver and the reference server rely on.
"${VPY}" - "${MCP_VERSION}" >&2 <<'PY'
import sys
from importlib.metadata import version
want = sys.argv[1]
got = version("mcp")
if got != want:
    sys.exit(f"setup-python: expected mcp=={want}, found {got}")
from mcp import Client, StdioServerParameters  # noqa: F401
from mcp.shared.exceptions import MCPError  # noqa: F401
from mcp.server.mcpserver import MCPServer  # noqa: F401
PY

touch "${STAMP}"
echo "${VPY}"
