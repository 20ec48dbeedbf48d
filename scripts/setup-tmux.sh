#!/usr/bin/env bash
# Make sure a tmux binary exists for the terminal client's tests (cli/tests/terminal.rs: the
# interactive `mcp-resolve` driven in a detached tmux session with send-keys and capture-pane).
# Idempotent and instant when tmux is already installed. Installs Debian's `tmux` package through
# apt-get (`apt-get update` once, then the install), as root or via sudo. No service is involved:
# each test starts its own tmux server on a private socket and kills it. The last line printed
# is the path of the tmux binary.
#
#   TMUX_BIN=$(scripts/setup-tmux.sh | tail -n1)
set -euo pipefail

find_tmux() {
    local p
    p="$(command -v tmux 2>/dev/null || true)"
    if [[ -z "${p}" && -x /usr/bin/tmux ]]; then
        p=/usr/bin/tmux
    fi
    [[ -n "${p}" ]] && echo "${p}"
}

# shellcheck source=scripts/debian-package.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian-package.sh"
debian_begin tmux find_tmux

# Fresh lists once (an old list may name a version the mirror no longer has), then the install.
echo "setup-tmux: refreshing package lists" >&2
"${SUDO[@]}" apt-get update -qq >&2

debian_install tmux tmux

TMUX_BIN="$(find_tmux)" || {
    echo "setup-tmux: installed tmux but no binary was found" >&2
    exit 1
}
"${TMUX_BIN}" -V >&2
echo "${TMUX_BIN}"
