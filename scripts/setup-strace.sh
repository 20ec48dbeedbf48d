#!/usr/bin/env bash
# Make sure a strace binary exists for the syscall counts (tests/syscalls.rs: the syscalls a
# sequential stdio call of the release `bench_server` makes, counted by `strace -f -c`).
# Idempotent and instant when strace is already installed. Installs Debian's `strace` package
# through apt-get (`apt-get update` once, then the install), as root or via sudo. The last line
# printed is the path of the strace binary.
#
#   STRACE_BIN=$(scripts/setup-strace.sh | tail -n1)
set -euo pipefail

find_strace() {
    local p
    p="$(command -v strace 2>/dev/null || true)"
    if [[ -z "${p}" && -x /usr/bin/strace ]]; then
        p=/usr/bin/strace
    fi
    [[ -n "${p}" ]] && echo "${p}"
}

# shellcheck source=scripts/debian-package.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian-package.sh"
debian_begin strace find_strace

# Fresh lists once (an old list may name a version the mirror no longer has), then the install.
echo "setup-strace: refreshing package lists" >&2
"${SUDO[@]}" apt-get update -qq >&2

debian_install strace strace

STRACE_BIN="$(find_strace)" || {
    echo "setup-strace: installed strace but no binary was found" >&2
    exit 1
}
"${STRACE_BIN}" -V | head -n1 >&2
echo "${STRACE_BIN}"
