#!/usr/bin/env bash
# Runs one test binary N times under CPU load and counts the runs that fail, naming the tests
# that failed (issue 30, point 4; the figures are in docs/TEST-QUALITY.md).
#
#   scripts/stress.sh BIN N [HOGS]
#   scripts/stress.sh http 200        # tests/http.rs, 200 runs, 2 busy loops beside it
#   scripts/stress.sh runtime 200 2   # the runtime crate's unit tests
#
# BIN names a test binary of tests/ (built with `cargo test --no-run --all-features --test BIN`),
# or `runtime` for the runtime crate's unit tests (`-p mcp-resolve-runtime --lib`). HOGS busy
# loops (`yes > /dev/null`, default 2) run for the whole time and are killed, by their process
# ids, at the end. Each run is the test binary itself, as `cargo test` runs it: all of its tests
# in one process, on one thread per core, which is the harsher case for tests that share process
# state (nextest gives each test a process of its own). A run still going after STRESS_TIMEOUT
# seconds (default 600) is killed and counted as failed. The output of each failed run is kept in
# target/stress/BIN/run-K.log.
#
# Prints one line per failed run, then a summary: runs, failures, each failing test with its
# count, the commit and the date. Exits 1 when any run failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $# -lt 2 || $# -gt 3 ]]; then
    sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
bin="$1"
runs="$2"
hogs="${3:-2}"
limit="${STRESS_TIMEOUT:-600}"
[[ "${runs}" =~ ^[0-9]+$ && "${hogs}" =~ ^[0-9]+$ && "${limit}" =~ ^[0-9]+$ ]] || {
    echo "N, HOGS and STRESS_TIMEOUT are whole numbers" >&2
    exit 2
}

# Build, and find the executable in cargo's own report of what it built.
if [[ "${bin}" == runtime ]]; then
    build=(cargo test --no-run --all-features -p mcp-resolve-runtime --lib --message-format=json)
    want="mcp_resolve_runtime"
    dir="runtime"
else
    build=(cargo test --no-run --all-features --test "${bin}" --message-format=json)
    want="${bin}"
    dir="."
fi
exe="$("${build[@]}" | python3 -c '
import json, sys
want = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") \
            and m["target"]["name"] == want and m.get("executable"):
        print(m["executable"])
' "${want}")"
if [[ -z "${exe}" || ! -x "${exe}" ]]; then
    echo "no test executable for ${bin} (\`${build[*]}\`)" >&2
    exit 2
fi

logs="target/stress/${bin}"
rm -rf "${logs}"
mkdir -p "${logs}"

pids=()
stop_hogs() {
    if [[ ${#pids[@]} -gt 0 ]]; then
        kill "${pids[@]}" 2>/dev/null || true
        wait "${pids[@]}" 2>/dev/null || true
    fi
}
trap stop_hogs EXIT
for _ in $(seq 1 "${hogs}"); do
    yes >/dev/null &
    pids+=("$!")
done

failed=0
started=${SECONDS}
: >"${logs}/failures"
for k in $(seq 1 "${runs}"); do
    log="${logs}/run-${k}.log"
    status=0
    (cd "${dir}" && timeout --kill-after=10 "${limit}" "${exe}") >"${log}" 2>&1 || status=$?
    if [[ ${status} -eq 0 ]]; then
        rm -f "${log}"
        continue
    fi
    failed=$((failed + 1))
    names="$(sed -n 's/^test \(.*\) \.\.\. FAILED$/\1/p' "${log}")"
    if [[ ${status} -eq 124 || ${status} -eq 137 ]]; then
        names="${names:+${names}$'\n'}(the run was killed after ${limit} s)"
    fi
    [[ -n "${names}" ]] || names="(exit status ${status}; see ${log})"
    printf '%s\n' "${names}" >>"${logs}/failures"
    echo "run ${k}: failed: $(printf '%s' "${names}" | paste -sd, -) (${log})"
done
elapsed=$((SECONDS - started))

echo "${bin}: ${runs} runs under ${hogs} CPU hogs: ${failed} failed (${elapsed} s)"
if [[ -s "${logs}/failures" ]]; then
    sort "${logs}/failures" | uniq -c | sort -rn | sed 's/^/  /'
fi
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)'), $(date -u +%Y-%m-%d)"
[[ ${failed} -eq 0 ]]
