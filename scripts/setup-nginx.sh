#!/usr/bin/env bash
# Make sure an nginx binary exists for the scale-out interop test (two server
# replicas behind a round-robin nginx, see tests/interop/nginx/). Idempotent and
# instant when nginx is already installed. Installs Debian's `nginx` package
# (falling back to `nginx-light` where only that has a candidate) through
# apt-get, as root or via sudo. The system nginx service is never started: a
# temporary policy-rc.d denies service starts during the install, and the test
# runs its own nginx with a private config. The last line printed is the path
# of the nginx binary.
#
#   NGINX=$(scripts/setup-nginx.sh | tail -n1)
set -euo pipefail

find_nginx() {
    # /usr/sbin is often missing from a non-root PATH.
    local p
    p="$(command -v nginx 2>/dev/null || true)"
    if [[ -z "${p}" && -x /usr/sbin/nginx ]]; then
        p=/usr/sbin/nginx
    fi
    [[ -n "${p}" ]] && echo "${p}"
}

if NGINX_BIN="$(find_nginx)"; then
    echo "${NGINX_BIN}"
    exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo -n)
    else
        echo "setup-nginx: nginx not found and not root (no sudo); install Debian's nginx package" >&2
        exit 1
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-nginx: nginx not found and apt-get is unavailable; install nginx by hand" >&2
    exit 1
fi

# Serialise concurrent callers (dpkg has its own lock, but we want the second
# caller to wait and then take the fast path rather than fail).
LOCK="${TMPDIR:-/tmp}/mcp-resolve-setup-nginx.lock"
if command -v flock >/dev/null 2>&1; then
    exec 9>"${LOCK}"
    flock 9
    if NGINX_BIN="$(find_nginx)"; then
        echo "${NGINX_BIN}"
        exit 0
    fi
fi

has_candidate() {
    local c
    c="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
    [[ -n "${c}" && "${c}" != "(none)" ]]
}

pick_package() {
    local pkg
    for pkg in nginx nginx-light; do
        if has_candidate "${pkg}"; then
            echo "${pkg}"
            return 0
        fi
    done
    return 1
}

export DEBIAN_FRONTEND=noninteractive
if ! PKG="$(pick_package)"; then
    echo "setup-nginx: refreshing package lists" >&2
    "${SUDO[@]}" apt-get update -qq >&2
    PKG="$(pick_package)" || {
        echo "setup-nginx: neither nginx nor nginx-light is available from apt" >&2
        exit 1
    }
fi

# Keep the package's maintainer scripts from starting the system service.
# invoke-rc.d and deb-systemd-invoke both honour policy-rc.d (exit 101 = deny).
POLICY=/usr/sbin/policy-rc.d
POLICY_ADDED=0
cleanup() {
    if [[ "${POLICY_ADDED}" -eq 1 ]]; then
        "${SUDO[@]}" rm -f "${POLICY}"
    fi
}
trap cleanup EXIT
if [[ ! -e "${POLICY}" ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "${POLICY}" >/dev/null
    "${SUDO[@]}" chmod 755 "${POLICY}"
    POLICY_ADDED=1
fi

echo "setup-nginx: installing ${PKG} with apt-get" >&2
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${PKG}" >&2

NGINX_BIN="$(find_nginx)" || {
    echo "setup-nginx: installed ${PKG} but no nginx binary was found" >&2
    exit 1
}
"${NGINX_BIN}" -v >&2
echo "${NGINX_BIN}"
