#!/usr/bin/env bash
# Make sure a redis-server binary exists for the RedisStore tests (tests/redis_store.rs) and the
# single-use replicas test (tests/scale_out.rs: two replicas behind nginx sharing one Redis).
# Idempotent and instant when redis-server is already installed. Installs Debian's
# `redis-server` package through apt-get (`apt-get update` once, then the install), as
# root or via sudo. The system service is never started: a temporary policy-rc.d denies service
# starts during the install, and each test runs its own redis-server on a free loopback port
# with no persistence (`--save '' --appendonly no`) in a temporary directory. The last line
# printed is the path of the redis-server binary.
#
#   REDIS_SERVER=$(scripts/setup-redis.sh | tail -n1)
set -euo pipefail

find_redis() {
    # /usr/bin on Debian; /usr/sbin or /usr/local/bin elsewhere.
    local p
    p="$(command -v redis-server 2>/dev/null || true)"
    if [[ -z "${p}" ]]; then
        for c in /usr/bin/redis-server /usr/sbin/redis-server /usr/local/bin/redis-server; do
            if [[ -x "${c}" ]]; then
                p="${c}"
                break
            fi
        done
    fi
    [[ -n "${p}" ]] && echo "${p}"
}

# shellcheck source=scripts/debian-package.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian-package.sh"
debian_begin redis-server find_redis

# Fresh lists once (an old list may name a version the mirror no longer has), then the install.
echo "setup-redis: refreshing package lists" >&2
"${SUDO[@]}" apt-get update -qq >&2

debian_install redis-server redis-server

REDIS_BIN="$(find_redis)" || {
    echo "setup-redis: installed redis-server but no binary was found" >&2
    exit 1
}
"${REDIS_BIN}" --version >&2
echo "${REDIS_BIN}"
