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

if REDIS_BIN="$(find_redis)"; then
    echo "${REDIS_BIN}"
    exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo -n)
    else
        echo "setup-redis: redis-server not found and not root (no sudo); install Debian's redis-server package" >&2
        exit 1
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-redis: redis-server not found and apt-get is unavailable; install redis-server by hand" >&2
    exit 1
fi

# Serialise concurrent callers: the second waits, then takes the fast path.
LOCK="${TMPDIR:-/tmp}/mcp-resolve-setup-redis.lock"
if command -v flock >/dev/null 2>&1; then
    exec 9>"${LOCK}"
    flock 9
    if REDIS_BIN="$(find_redis)"; then
        echo "${REDIS_BIN}"
        exit 0
    fi
fi

export DEBIAN_FRONTEND=noninteractive
# Fresh lists once (an old list may name a version the mirror no longer has), then the install.
echo "setup-redis: refreshing package lists" >&2
"${SUDO[@]}" apt-get update -qq >&2

# Keep the package's maintainer scripts from starting the system service.
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

echo "setup-redis: installing redis-server with apt-get" >&2
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends redis-server >&2

REDIS_BIN="$(find_redis)" || {
    echo "setup-redis: installed redis-server but no binary was found" >&2
    exit 1
}
"${REDIS_BIN}" --version >&2
echo "${REDIS_BIN}"
