# Sourced by scripts/setup-nginx.sh, setup-redis.sh, setup-chromium.sh and setup-tmux.sh: the
# steps of installing one of Debian's packages for the tests, in one place. A setup script defines
# a function that prints the binary's path when it exists, then calls
#
#   debian_begin TOOL FIND   # prints the binary and exits when FIND finds it; otherwise checks
#                            # root (or sudo) and apt-get, and waits for any other caller
#   debian_install TOOL PKG...  # installs the packages without letting them start a system service
#
# `SUDO` is set for the script's own apt-get calls (e.g. `"${SUDO[@]}" apt-get update`).

debian_begin() {
    local tool="$1" find="$2" bin me
    me="$(basename "$0" .sh)"
    if bin="$("${find}")"; then
        echo "${bin}"
        exit 0
    fi
    SUDO=()
    if [[ "$(id -u)" -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO=(sudo -n)
        else
            echo "${me}: ${tool} not found and not root (no sudo); install Debian's ${tool} package" >&2
            exit 1
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "${me}: ${tool} not found and apt-get is unavailable; install ${tool} by hand" >&2
        exit 1
    fi
    # Serialise concurrent callers (dpkg has its own lock, but the second caller should wait and
    # then take the fast path rather than fail).
    if command -v flock >/dev/null 2>&1; then
        exec 9>"${TMPDIR:-/tmp}/mcp-resolve-setup-${tool}.lock"
        flock 9
        if bin="$("${find}")"; then
            echo "${bin}"
            exit 0
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
}

DEBIAN_POLICY=/usr/sbin/policy-rc.d
DEBIAN_POLICY_ADDED=0
debian_cleanup() {
    if [[ "${DEBIAN_POLICY_ADDED}" -eq 1 ]]; then
        "${SUDO[@]}" rm -f "${DEBIAN_POLICY}"
    fi
}

debian_install() {
    local tool="$1" me
    shift
    me="$(basename "$0" .sh)"
    # Keep the package's maintainer scripts from starting the system service: invoke-rc.d and
    # deb-systemd-invoke both honour policy-rc.d (exit 101 = deny). The tests run their own.
    trap debian_cleanup EXIT
    if [[ ! -e "${DEBIAN_POLICY}" ]]; then
        printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "${DEBIAN_POLICY}" >/dev/null
        "${SUDO[@]}" chmod 755 "${DEBIAN_POLICY}"
        DEBIAN_POLICY_ADDED=1
    fi
    echo "${me}: installing $* with apt-get" >&2
    "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "$@" >&2
}
