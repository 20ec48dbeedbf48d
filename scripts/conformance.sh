#!/usr/bin/env bash
# Score an MCP server with the official conformance runner (issue 12, point 10):
# start the server, wait until it listens, then run
#   v0.1.16-active        runner 0.1.16          server --url URL --suite active
#   alpha12-2025-11-25    runner 0.2.0-alpha.12  server --url URL --requirements 2025-11-25
#   alpha12-2026-07-28    runner 0.2.0-alpha.12  server --url URL --requirements 2026-07-28
# and print, per run, which scored scenarios passed and failed. The runners are
# installed by scripts/setup-conformance.sh (called here; instant once done).
#
#   scripts/conformance.sh                                   # the release `notes` example
#   scripts/conformance.sh -- ./target/release/examples/conformance --http 127.0.0.1:{PORT}
#   scripts/conformance.sh --url http://127.0.0.1:8000/mcp   # a server already running
#   scripts/conformance.sh --runs alpha12-2026-07-28 --baseline tests/conformance/baseline.txt
#
# Options:
#   -- CMD ARGS...    the server to start; every `{PORT}` in it becomes the chosen port.
#                     Default: target/release/examples/notes --http 127.0.0.1:{PORT}
#                     (build it with `cargo build --release --example notes --all-features`).
#                     The server must serve Streamable HTTP on /mcp at 127.0.0.1:{PORT}.
#   --port N          port to use (default: a free one)
#   --url URL         score a server that is already running; nothing is started
#   --runs A,B        only these runs (names above; default: all three)
#   --baseline FILE   expected failures (default: tests/conformance/baseline.txt if it exists;
#                     `--baseline none` for none)
#
# Results: target/conformance/results/<run>.log is the runner's full output, and
# target/conformance/results/<run>/ holds its per-scenario checks.json files
# (both replaced on each run). target/conformance/results/summary.txt repeats the
# summary printed at the end.
#
# What counts: a run's scored scenarios are those in its `=== SUMMARY ===`, less
# the ones the runner lists under "Not scored for <rev>" (extensions, pending,
# added after release: reported, never failing the script). A scenario fails
# when the runner marks it ✗ (a FAILURE check; WARNINGs do not fail it).
#
# Baseline file: one expected failure per line, `#` starts a comment line:
#     <run> <scenario> <reason and evidence, free text, required>
# <run> is one of the run names above or `*` for every run. The issue allows an
# entry only for a bug in the runner itself, so the reason must say what the
# runner does wrong and where that shows (e.g. the line of its bundled source).
#
# Exit status: 0 when every scored scenario of every run passes or is in the
# baseline; 1 when a scored scenario fails that is not in the baseline, when a
# baseline entry's scenario now passes (stale: remove it) or is not in its run
# (unknown), or when a runner did not print its summary; 2 on a usage or setup
# error.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/.." && pwd)"
RESULTS="${REPO_ROOT}/target/conformance/results"
ALL_RUNS=(v0.1.16-active alpha12-2025-11-25 alpha12-2026-07-28)

die() { echo "conformance: $*" >&2; exit 2; }

port="" url="" runs_opt="" baseline="" server_cmd=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --port) port="${2:?--port needs a number}"; shift 2 ;;
        --url) url="${2:?--url needs a URL}"; shift 2 ;;
        --runs) runs_opt="${2:?--runs needs names}"; shift 2 ;;
        --baseline) baseline="${2:?--baseline needs a file or none}"; shift 2 ;;
        --) shift; server_cmd=("$@"); break ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done

runs=()
if [[ -n "${runs_opt}" ]]; then
    IFS=',' read -r -a runs <<<"${runs_opt}"
    for r in "${runs[@]}"; do
        [[ " ${ALL_RUNS[*]} " == *" ${r} "* ]] || die "unknown run ${r} (one of: ${ALL_RUNS[*]})"
    done
else
    runs=("${ALL_RUNS[@]}")
fi

if [[ -z "${baseline}" && -f "${REPO_ROOT}/tests/conformance/baseline.txt" ]]; then
    baseline="${REPO_ROOT}/tests/conformance/baseline.txt"
fi
[[ "${baseline}" == "none" ]] && baseline=""
[[ -z "${baseline}" || -f "${baseline}" ]] || die "no baseline file ${baseline}"

# The runners and Node 22.
setup_out="$("${SCRIPT_DIR}/setup-conformance.sh")" || die "setup-conformance.sh failed"
read -r ENTRY_0116 ENTRY_ALPHA12 <<<"$(tail -n 1 <<<"${setup_out}")"
NODE_BIN="$("${SCRIPT_DIR}/setup-node.sh" | tail -n 1)"
[[ -f "${ENTRY_0116}" && -f "${ENTRY_ALPHA12}" && -x "${NODE_BIN}" ]] || die "runner entry points missing"

# Start the server unless one is given.
SERVER_PID=""
stop_server() {
    if [[ -n "${SERVER_PID}" ]] && kill -0 "${SERVER_PID}" 2>/dev/null; then
        kill "${SERVER_PID}" 2>/dev/null || true
        wait "${SERVER_PID}" 2>/dev/null || true
    fi
}
trap stop_server EXIT

mkdir -p "${RESULTS}"
if [[ -z "${url}" ]]; then
    if [[ -z "${port}" ]]; then
        port="$("${NODE_BIN}" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
    fi
    if [[ ${#server_cmd[@]} -eq 0 ]]; then
        notes="${REPO_ROOT}/target/release/examples/notes"
        [[ -x "${notes}" ]] || die "${notes} not built: cargo build --release --example notes --all-features (or pass -- CMD)"
        server_cmd=("${notes}" --http "127.0.0.1:{PORT}")
    fi
    cmd=()
    for a in "${server_cmd[@]}"; do cmd+=("${a//\{PORT\}/${port}}"); done
    url="http://127.0.0.1:${port}/mcp"
    echo "conformance: starting ${cmd[*]}" >&2
    "${cmd[@]}" >"${RESULTS}/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 300); do
        kill -0 "${SERVER_PID}" 2>/dev/null || die "server exited early; see ${RESULTS}/server.log"
        (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null && break
        sleep 0.1
    done
    (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null || die "server not listening on ${port} after 30 s"
fi
echo "conformance: scoring ${url}" >&2

# Baseline entries as "run scenario" keys, and their reasons.
declare -A expected=()
if [[ -n "${baseline}" ]]; then
    while IFS= read -r line || [[ -n "${line}" ]]; do
        [[ "${line}" =~ ^[[:space:]]*(#|$) ]] && continue
        read -r b_run b_scn b_reason <<<"${line}"
        [[ -n "${b_reason:-}" ]] || die "baseline entry without a reason: ${line}"
        [[ "${b_run}" == "*" || " ${ALL_RUNS[*]} " == *" ${b_run} "* ]] || die "baseline: unknown run ${b_run}"
        expected["${b_run} ${b_scn}"]="${b_reason}"
    done <"${baseline}"
fi
is_expected() { [[ -n "${expected["$1 $2"]+x}" || -n "${expected["* $2"]+x}" ]]; }

status=0
summary=()
for run in "${runs[@]}"; do
    case "${run}" in
        v0.1.16-active) args=("${ENTRY_0116}" server --url "${url}" --suite active) ;;
        alpha12-2025-11-25) args=("${ENTRY_ALPHA12}" server --url "${url}" --requirements 2025-11-25) ;;
        alpha12-2026-07-28) args=("${ENTRY_ALPHA12}" server --url "${url}" --requirements 2026-07-28) ;;
    esac
    log="${RESULTS}/${run}.log"
    rm -rf "${RESULTS:?}/${run}"
    echo "conformance: ${run}: node ${args[*]}" >&2
    # The runner's exit code is not used: the summary below decides (it also reports unscored scenarios).
    (cd "${RESULTS}" && "${NODE_BIN}" "${args[@]}" -o "${RESULTS}/${run}" >"${log}" 2>&1) || true

    if ! grep -q '^=== SUMMARY ===' "${log}"; then
        summary+=("${run}: ERROR the runner printed no summary; see ${log}")
        status=1
        continue
    fi
    # Scenario lines of the summary: "✓ name: N passed, M failed" / "✗ ...".
    mapfile -t lines < <(sed -n '/^=== SUMMARY ===/,/^Total:/p' "${log}" | grep -E '^(✓|✗) [^ ]+: ')
    # Unscored: "  ✓ name (reason)" lines after "Not scored for".
    mapfile -t unscored < <(sed -n '/^Not scored for/,$p' "${log}" | grep -E '^  (✓|✗) ' | awk '{print $2}')
    passed=() failed=() known=() stale=() other=()
    for l in "${lines[@]}"; do
        mark="${l%% *}"
        rest="${l#* }"
        name="${rest%%:*}"
        # The tasks extension's scenarios are unscored by the runner, but this server serves the
        # extension (issue 26): on the 2026-07-28 run they count as scored.
        required=false
        [[ "${run}" == alpha12-2026-07-28 && "${name}" == tasks-* ]] && required=true
        if [[ "${required}" == false && " ${unscored[*]-} " == *" ${name} "* ]]; then
            other+=("${name}$([[ "${mark}" == "✓" ]] && echo "" || echo "(✗)")")
            continue
        fi
        if [[ "${mark}" == "✓" ]]; then
            passed+=("${name}")
            is_expected "${run}" "${name}" && stale+=("${name}")
        elif is_expected "${run}" "${name}"; then
            known+=("${name}")
        else
            failed+=("${name}")
        fi
    done
    # server-sse-polling is pending (unscored, and it reports only WARNINGs), but this server
    # resumes streams (issue 32): on the 2025-11-25 run its priming, retry and resume checks must
    # each be SUCCESS.
    if [[ "${run}" == alpha12-2025-11-25 ]]; then
        checks="$(find "${RESULTS}/${run}" -path '*server-sse-polling*' -name checks.json | head -n 1)"
        if [[ -n "${checks}" ]] && python3 -c '
import json, sys
want = {"server-sse-priming-event", "server-sse-retry-field", "server-sse-disconnect-resume"}
ok = {c["id"] for c in json.load(open(sys.argv[1])) if c["status"] == "SUCCESS"}
sys.exit(0 if want <= ok else 1)' "${checks}"; then
            passed+=("server-sse-polling")
        else
            failed+=("server-sse-polling")
        fi
        other=("${other[@]/server-sse-polling/}")
    fi
    # A baseline entry naming this run but no scenario of it is a typo or a renamed scenario.
    unknown=()
    for key in "${!expected[@]}"; do
        [[ "${key%% *}" == "${run}" ]] || continue
        scn="${key#* }"
        printf '%s\n' "${lines[@]}" | grep -qE "^(✓|✗) ${scn}: " || unknown+=("${scn}")
    done
    total=$((${#passed[@]} + ${#failed[@]} + ${#known[@]}))
    summary+=("${run}: ${#passed[@]}/${total} scored scenarios passed, ${#failed[@]} failed, ${#known[@]} expected failures (baseline)")
    [[ ${#failed[@]} -gt 0 ]] && summary+=("  failed:   ${failed[*]}")
    [[ ${#known[@]} -gt 0 ]] && summary+=("  expected: ${known[*]}")
    [[ ${#stale[@]} -gt 0 ]] && summary+=("  STALE baseline entries (now passing, remove them): ${stale[*]}")
    [[ ${#unknown[@]} -gt 0 ]] && summary+=("  UNKNOWN baseline entries (no such scenario in this run): ${unknown[*]}")
    [[ ${#passed[@]} -gt 0 ]] && summary+=("  passed:   ${passed[*]}")
    [[ ${#other[@]} -gt 0 ]] && summary+=("  not scored: ${other[*]}")
    summary+=("  $(grep -E '^Total:' "${log}" | tail -n 1) (checks); log: ${log}")
    if [[ ${#failed[@]} -gt 0 || ${#stale[@]} -gt 0 || ${#unknown[@]} -gt 0 ]]; then status=1; fi
done

printf '%s\n' "${summary[@]}" | tee "${RESULTS}/summary.txt"
if [[ ${status} -eq 0 ]]; then
    echo "conformance: every scored scenario passed (or is an expected runner bug)"
else
    echo "conformance: FAILED (see above)"
fi
exit "${status}"
