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

# shellcheck source=scripts/debian-package.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian-package.sh"
debian_begin chromium find_driver

started=${SECONDS}
echo "setup-chromium: refreshing package lists" >&2
"${SUDO[@]}" apt-get update -qq >&2
debian_install chromium chromium chromium-driver

DRIVER="$(find_driver)" || {
    echo "setup-chromium: installed chromium and chromium-driver, but ${CHROMIUM} or chromedriver is missing" >&2
    exit 1
}
echo "setup-chromium: installed in $((SECONDS - started)) s: $("${CHROMIUM}" --version 2>/dev/null || echo "${CHROMIUM}"), $("${DRIVER}" --version 2>/dev/null | head -n1)" >&2
echo "${DRIVER}"
