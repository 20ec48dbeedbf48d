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

# shellcheck source=scripts/debian-package.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian-package.sh"
debian_begin nginx find_nginx

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

if ! PKG="$(pick_package)"; then
    echo "setup-nginx: refreshing package lists" >&2
    "${SUDO[@]}" apt-get update -qq >&2
    PKG="$(pick_package)" || {
        echo "setup-nginx: neither nginx nor nginx-light is available from apt" >&2
        exit 1
    }
fi

debian_install nginx "${PKG}"

NGINX_BIN="$(find_nginx)" || {
    echo "setup-nginx: installed ${PKG} but no nginx binary was found" >&2
    exit 1
}
"${NGINX_BIN}" -v >&2
echo "${NGINX_BIN}"
