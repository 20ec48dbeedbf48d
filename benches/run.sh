#!/usr/bin/env bash
# The load benchmark of docs/PERFORMANCE.md, in one command:
#
#   benches/run.sh              # the full run: 3 rounds, 20 000 calls per figure (~15 min)
#   benches/run.sh --smoke      # a few calls per figure, debug builds: checks that it all works
#   RUNS=5 N=50000 benches/run.sh
#   PUBLISH=1 benches/run.sh    # the full run, then its charts copied into docs/perf/
#   ONLY=http benches/run.sh    # the Streamable HTTP workloads only (~3 min)
#
# It builds our `bench_server` example, the driver and null server (benches/load), the rmcp peer
# (benches/peers/rmcp) and installs the Python SDK peer's venv (scripts/setup-python.sh), then
# drives every server with the same driver, interleaved (one spawn of each in turn, RUNS times),
# over stdio (echo and one form elicitation, on 2025-11-25 and 2026-07-28, sequential and
# pipelined) and over Streamable HTTP (echo and one form elicitation, on both eras, concurrent
# clients; on 2025-11-25 each client opens a session of its own). Raw figures go to
# target/bench/results.jsonl, the tables with ratios to target/bench/report.md, SVG charts of the
# same figures to target/bench/charts/ (with PUBLISH=1, also to docs/perf/: never smoke figures).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SMOKE=0
[[ "${1:-}" == "--smoke" ]] && SMOKE=1
PUBLISH="${PUBLISH:-0}"
if (( SMOKE && PUBLISH )); then
    echo "PUBLISH=1 with --smoke: smoke figures are not for the docs" >&2
    exit 2
fi
ONLY="${ONLY:-}"
if [[ -n "$ONLY" && "$ONLY" != http ]]; then
    echo "ONLY=$ONLY: only ONLY=http is known" >&2
    exit 2
fi
if [[ -n "$ONLY" ]] && (( PUBLISH )); then
    # The charts of docs/perf/ are one full run's; a partial run would replace some of them.
    echo "PUBLISH=1 with ONLY=$ONLY: docs/perf/ holds the charts of full runs" >&2
    exit 2
fi

if (( SMOKE )); then
    # 120 calls: past the server's default question limit (100 a minute per tool and caller),
    # so a `bench_server` that asks on every call without lifting the limit fails the smoke run.
    RUNS="${RUNS:-1}"; N="${N:-120}"; N_PY="${N_PY:-10}"; WARMUP=2; CLIENTS="${CLIENTS:-4}"
    PROFILE=debug; CARGO_PROFILE=()
    OUT_DIR="$ROOT/target/bench-smoke"
else
    RUNS="${RUNS:-3}"; N="${N:-20000}"; N_PY="${N_PY:-2000}"; WARMUP=200; CLIENTS="${CLIENTS:-32}"
    PROFILE=release; CARGO_PROFILE=(--release)
    OUT_DIR="$ROOT/target/bench"
fi
LOAD_TARGET="$ROOT/target/bench-load"
PEERS_TARGET="$ROOT/target/bench-peers"

echo "== building" >&2
cargo build -q "${CARGO_PROFILE[@]}" --example bench_server
CARGO_TARGET_DIR="$LOAD_TARGET" cargo build -q "${CARGO_PROFILE[@]}" --manifest-path benches/load/Cargo.toml
CARGO_TARGET_DIR="$PEERS_TARGET" cargo build -q "${CARGO_PROFILE[@]}" --manifest-path benches/peers/rmcp/Cargo.toml
PY="$(scripts/setup-python.sh | tail -n 1)"

WORKSPACE_TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
[[ "$WORKSPACE_TARGET" = /* ]] || WORKSPACE_TARGET="$ROOT/$WORKSPACE_TARGET"
OURS="$WORKSPACE_TARGET/$PROFILE/examples/bench_server"
LOAD="$LOAD_TARGET/$PROFILE/mcp-load"
NULL="$LOAD_TARGET/$PROFILE/null-server"
RMCP="$PEERS_TARGET/$PROFILE/rmcp-peer"
PYSERVER=("$PY" "$ROOT/benches/peers/python/server.py")

mkdir -p "$OUT_DIR"
RESULTS="$OUT_DIR/results.jsonl"
: > "$RESULTS"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) × $(nproc)"
    echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel: $(uname -r)"
    echo "rustc: $(rustc --version)"
    echo "python: $("$PY" --version 2>&1)"
    echo "runs: $RUNS, calls per figure: $N (Python: $N_PY), HTTP clients: $CLIENTS, workloads: ${ONLY:-all}"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT_DIR/machine.txt"

FAILED=0
drive() { # drive TRANSPORT LABEL N ARGS... -- CMD...
    local transport="$1" label="$2" n="$3"; shift 3
    # --round: the report pairs each server's run with the null server's run of the same round.
    if ! "$LOAD" "$transport" --label "$label" --round "$run" -n "$n" --warmup "$WARMUP" --out "$RESULTS" --timeout 600 "$@"; then
        echo "!! $label $transport $* failed" >&2
        FAILED=1
    fi
}

for run in $(seq 1 "$RUNS"); do
    if [[ "$ONLY" != http ]]; then
        echo "== stdio, round $run of $RUNS" >&2
        for proto in 2025-11-25 2026-07-28; do
            for mode in seq pipe; do
                echo_args=(--protocol "$proto" --mode "$mode" --tool echo --args '{"text":"hello"}' --expect hello)
                drive stdio null-server "$N" "${echo_args[@]}" -- "$NULL"
                drive stdio mcp-resolve "$N" "${echo_args[@]}" -- "$OURS"
                drive stdio mcp-resolve-ct "$N" "${echo_args[@]}" -- "$OURS" --current-thread
                drive stdio rmcp-best "$N" "${echo_args[@]}" -- "$RMCP" --pipes
                drive stdio rmcp-best-ct "$N" "${echo_args[@]}" -- "$RMCP" --pipes --current-thread
                drive stdio rmcp-default "$N" "${echo_args[@]}" -- "$RMCP"
                drive stdio python-sdk "$N_PY" "${echo_args[@]}" -- "${PYSERVER[@]}"

                ask=(--protocol "$proto" --mode "$mode" --args '{}' --expect "hello bench")
                # rmcp has no era-neutral way to ask: its legacy `peer.elicit` fails on 2026-07-28,
                # so there the hand-written MRTR tool stands in.
                rmcp_tool=ask_name
                [[ "$proto" == 2026-07-28 ]] && rmcp_tool=ask_name_mrtr
                drive stdio mcp-resolve "$N" "${ask[@]}" --tool ask_name -- "$OURS"
                drive stdio mcp-resolve-ct "$N" "${ask[@]}" --tool ask_name -- "$OURS" --current-thread
                drive stdio rmcp-best "$N" "${ask[@]}" --tool "$rmcp_tool" -- "$RMCP" --pipes
                drive stdio rmcp-best-ct "$N" "${ask[@]}" --tool "$rmcp_tool" -- "$RMCP" --pipes --current-thread
                drive stdio python-sdk "$N_PY" "${ask[@]}" --tool ask_name -- "${PYSERVER[@]}"
            done
        done
    fi
    echo "== Streamable HTTP, round $run of $RUNS" >&2
    for proto in 2025-11-25 2026-07-28; do
        for tool in echo ask; do
            if [[ $tool == echo ]]; then
                a=(--tool echo --args '{"text":"hello"}' --expect hello); rt=echo
            else
                a=(--tool ask_name --args '{}' --expect "hello bench"); rt=ask_name_mrtr
            fi
            common=(--protocol "$proto" --mode concurrent --clients "$CLIENTS")
            # rmcp's best for each era (benches/peers/rmcp): stateless JSON on 2026-07-28; on the
            # handshake era its sessions, the only mode where `peer.elicit` reaches an HTTP client
            # (echo on the same mode, the baseline of the call that asks).
            rmcp_mode=()
            if [[ $proto == 2025-11-25 ]]; then
                rmcp_mode=(--sessions)
                if [[ $tool == ask ]]; then rt=ask_name; fi
            fi
            drive http mcp-resolve "$N" "${common[@]}" "${a[@]}" --addr 127.0.0.1:18431 -- "$OURS" --http 127.0.0.1:18431
            ra=("${a[@]}"); ra[1]="$rt"
            drive http rmcp-best "$N" "${common[@]}" "${ra[@]}" --addr 127.0.0.1:18432 -- "$RMCP" --http 127.0.0.1:18432 "${rmcp_mode[@]}"
            # The Python peer is stateless over HTTP: it cannot ask on the handshake era.
            if [[ $proto == 2026-07-28 ]]; then
                drive http python-sdk "$N_PY" "${common[@]}" "${a[@]}" --addr 127.0.0.1:18433 -- "${PYSERVER[@]}" --http 127.0.0.1:18433
            fi
        done
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT_DIR/machine.txt"

rm -rf "$OUT_DIR/charts"
# The report refuses (and says which) when a server time lacks the null server's run of its round.
if ! "$LOAD" report "$RESULTS" --charts "$OUT_DIR/charts" > "$OUT_DIR/report.md"; then
    echo "!! the report was refused: see above" >&2
    FAILED=1
fi
if (( PUBLISH )); then
    if (( FAILED )); then
        echo "!! a run failed: charts not copied to docs/perf/" >&2
    else
        mkdir -p docs/perf
        cp "$OUT_DIR"/charts/*.svg docs/perf/
        echo "== charts copied to docs/perf/" >&2
    fi
fi
cat "$OUT_DIR/machine.txt" >&2
cat "$OUT_DIR/report.md"
exit "$FAILED"
