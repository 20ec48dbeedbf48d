#!/usr/bin/env bash
# Score the Rust client (`examples/conformance_client.rs`, on `mcp_resolve::client`) with the
# official conformance runner 0.2.0-alpha.12's client scenarios (issue 25, point 3). Each
# scenario runs on its own (`client --scenario NAME --spec-version V`), which is the strict
# mode: a FAILURE, a WARNING, a time-out or a non-zero exit of the client fails it. The
# runner starts the client with the mock server's URL as its last argument and the scenario's
# name and version in MCP_CONFORMANCE_SCENARIO / MCP_CONFORMANCE_PROTOCOL_VERSION.
#
#   scripts/conformance-client.sh                   # builds the client (release), runs them all
#   scripts/conformance-client.sh -- CMD ARGS...    # another client command
#   scripts/conformance-client.sh --only sse-retry  # one scenario (every version it has here)
#
# Results: target/conformance/client-results/<scenario>@<version>.log (the runner's output)
# and target/conformance/client-results/<scenario>@<version>/ (its checks.json); the summary is
# printed at the end and kept in target/conformance/client-results/summary.txt.
#
# Baseline: tests/conformance/client-baseline.txt lists expected failures, one per line,
# `<scenario>@<version> <reason and evidence>`; like the server's, only for a bug in the runner.
# The OAuth scenarios (`auth/*`) are not run: the client has no OAuth flow yet (issue 25's note).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# scenario@version, as the suite's requirement sets name them (`list --client`).
RUNS=(
    initialize@2025-11-25
    tools_call@2025-11-25
    elicitation-sep1034-client-defaults@2025-11-25
    sse-retry@2025-11-25
    json-schema-2020-12-preservation@2025-11-25
    tools_call@2026-07-28
    request-metadata@2026-07-28
    sep-2322-client-request-state@2026-07-28
    http-standard-headers@2026-07-28
    http-custom-headers@2026-07-28
    http-invalid-tool-headers@2026-07-28
    json-schema-ref-no-deref@2026-07-28
    json-schema-2020-12-preservation@2026-07-28
)

only=""
cmd=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --only) only="$2"; shift 2 ;;
        --) shift; cmd=("$@"); break ;;
        *) echo "conformance-client: unknown option $1" >&2; exit 2 ;;
    esac
done

if [[ ${#cmd[@]} -eq 0 ]]; then
    cargo build --release --example conformance_client --features client >&2
    target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    cmd=("${target_dir}/release/examples/conformance_client")
fi

read -r -a entries <<<"$(scripts/setup-conformance.sh | tail -n 1)" || true
runner="${entries[1]}"
node="$(scripts/setup-node.sh | tail -n 1)"
out="target/conformance/client-results"
rm -rf "${out}"
mkdir -p "${out}"
baseline="tests/conformance/client-baseline.txt"

run_one() { # $1 = scenario@version
    local scenario="${1%@*}" version="${1#*@}"
    local log="${out}/$1.log"
    if "${node}" "${runner}" client --command "${cmd[*]}" --scenario "${scenario}" \
        --spec-version "${version}" -o "${out}/$1" >"${log}" 2>&1; then
        echo "pass $1 $(grep -o 'Passed: [0-9]*/[0-9]*' "${log}" | tail -n 1)"
    else
        echo "FAIL $1 $(grep -o 'Passed: [0-9]*/[0-9]*, [0-9]* failed, [0-9]* warnings' "${log}" | tail -n 1)"
    fi
}
export -f run_one
export out node runner
export cmd_string="${cmd[*]}"

selected=()
for r in "${RUNS[@]}"; do
    if [[ -z "${only}" || "${r%@*}" == "${only}" ]]; then selected+=("${r}"); fi
done
[[ ${#selected[@]} -gt 0 ]] || { echo "conformance-client: no scenario named ${only}" >&2; exit 2; }

# Two at a time: each is a node process and the client, mostly waiting.
results="$(printf '%s\n' "${selected[@]}" | xargs -P 2 -I{} bash -c 'cmd=(${cmd_string}); run_one "$@"' _ {})"
failed=0
{
    echo "conformance client scenarios (runner 0.2.0-alpha.12):"
    while read -r status run rest; do
        if [[ "${status}" == "FAIL" ]]; then
            if [[ -f "${baseline}" ]] && grep -q "^${run} " "${baseline}"; then
                echo "  expected failure (baseline): ${run} ${rest}"
            else
                echo "  ✗ ${run} ${rest}   (see ${out}/${run}.log)"
                failed=1
            fi
        else
            echo "  ✓ ${run} ${rest}"
        fi
    done < <(sort -k2 <<<"${results}")
} | tee "${out}/summary.txt"
grep -q "✗" "${out}/summary.txt" && exit 1
exit 0
