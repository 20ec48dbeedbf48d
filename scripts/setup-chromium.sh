#!/usr/bin/env bash
# Make sure Debian's headless-capable Chromium and its matching WebDriver exist for the browser
# tests (tests/browser.rs drives `chromedriver`, which starts `chromium`). Idempotent and
# instant when both are installed. Installs Debian's `chromium` and `chromium-driver` packages
# through apt-get (as root or via sudo), refreshing the package lists once first. Both come from
# the same source package, so the driver always matches the browser. The last line printed is
# the path of the chromedriver binary (the browser is /usr/bin/chromium).
#
#   CHROMEDRIVER=$(scripts/setup-chromium.sh | tail -n1)
set -euo pipefail

CHROMIUM=/usr/bin/chromium

find_driver() {
    local p
    p="$(command -v chromedriver 2>/dev/null || true)"
    if [[ -z "${p}" && -x /usr/bin/chromedriver ]]; then
        p=/usr/bin/chromedriver
    fi
    [[ -n "${p}" && -x "${CHROMIUM}" ]] && echo "${p}"
}

if DRIVER="$(find_driver)"; then
    echo "${DRIVER}"
    exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo -n)
    else
        echo "setup-chromium: chromium or chromedriver not found and not root (no sudo); install Debian's chromium and chromium-driver packages" >&2
        exit 1
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-chromium: chromium or chromedriver not found and apt-get is unavailable; install them by hand" >&2
    exit 1
fi

# Serialise concurrent callers (parallel test binaries): the second one waits, then takes the
# fast path.
LOCK="${TMPDIR:-/tmp}/mcp-resolve-setup-chromium.lock"
if command -v flock >/dev/null 2>&1; then
    exec 9>"${LOCK}"
    flock 9
    if DRIVER="$(find_driver)"; then
        echo "${DRIVER}"
        exit 0
    fi
fi

export DEBIAN_FRONTEND=noninteractive
started=${SECONDS}
echo "setup-chromium: refreshing package lists" >&2
"${SUDO[@]}" apt-get update -qq >&2
echo "setup-chromium: installing chromium and chromium-driver with apt-get" >&2
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends chromium chromium-driver >&2

DRIVER="$(find_driver)" || {
    echo "setup-chromium: installed chromium and chromium-driver, but ${CHROMIUM} or chromedriver is missing" >&2
    exit 1
}
echo "setup-chromium: installed in $((SECONDS - started)) s: $("${CHROMIUM}" --version 2>/dev/null || echo "${CHROMIUM}"), $("${DRIVER}" --version 2>/dev/null | head -n1)" >&2
echo "${DRIVER}"
