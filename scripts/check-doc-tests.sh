#!/usr/bin/env bash
# Every test a promise names exists: docs/SECURITY.md (and any other page given) names the test
# that holds each promise in backticks; this script finds every such name and fails when no
# function of that name is defined in the workspace's Rust sources. A name cut short with `…`
# (`many_pipelined_…`) must be the start of one.
#
#   scripts/check-doc-tests.sh                      # docs/SECURITY.md
#   scripts/check-doc-tests.sh docs/SECURITY.md docs/SPEC.md
#
# What counts as a test name: a backticked snake_case identifier with at least three underscores
# (method names such as `max_frame_bytes` are shorter and are not checked here; longer ones,
# such as `max_sessions_per_principal`, must exist as functions too, which they do).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

pages=("$@")
[[ ${#pages[@]} -gt 0 ]] || pages=(docs/SECURITY.md)

defined=$(mktemp)
trap 'rm -f "${defined}"' EXIT
grep -rhoE --include='*.rs' 'fn [a-z_][a-z0-9_]*' runtime/src macros/src src tests examples benches fuzz cli 2>/dev/null \
    | sed 's/^fn //' | sort -u >"${defined}"

missing=0 checked=0
for page in "${pages[@]}"; do
    while IFS= read -r name; do
        checked=$((checked + 1))
        if [[ "${name}" == *… ]]; then
            prefix="${name%…}"
            grep -q "^${prefix}" "${defined}" && continue
        else
            grep -qx "${name}" "${defined}" && continue
        fi
        echo "${page}: names \`${name}\`, which no function in the workspace is called" >&2
        missing=$((missing + 1))
    done < <(grep -oE '`[a-z][a-z0-9]*(_[a-z0-9]+){3,}_?…?`' "${page}" | tr -d '`' | sort -u)
done

if [[ ${missing} -gt 0 ]]; then
    echo "check-doc-tests: ${missing} of ${checked} names have no function" >&2
    exit 1
fi
echo "check-doc-tests: all ${checked} test names in ${pages[*]} exist"
