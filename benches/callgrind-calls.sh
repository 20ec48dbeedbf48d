#!/usr/bin/env bash
# Instructions per call of a stdio server, counted by valgrind's callgrind over the load driver's
# calls: unlike a time, the count does not depend on what else the machine runs, so two commits
# can be compared on a busy machine and a change of a few percent is seen (a time on this VM
# moves by more than that from one run to the next).
#
#   benches/callgrind-calls.sh SERVER [SERVER_ARGS...]
#   PROTOCOL=2025-11-25 benches/callgrind-calls.sh target/release/examples/bench_server
#   TOOL=ask_name ARGS='{}' EXPECT='hello bench' benches/callgrind-calls.sh target/release/examples/bench_server --current-thread
#
# Two runs of the driver (`benches/load`, pipelined by default: MODE=seq for one call at a time),
# of 1 000 and 6 000 calls, each counted whole; their difference divided by 5 000 is the cost of a
# call, without the start-up and the shutdown both runs share. User space only (callgrind does
# not see the kernel). Under valgrind every thread of the server runs on one emulated CPU: the
# current-thread runtime (`--current-thread` for bench_server) gives the steadiest count; the
# multi-thread one counts the same work plus what its workers do to hand it around.
#
# To compare commits, build each one's server (e.g. in a `git worktree`) and run this on both.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# >= 1)) || { sed -n '2,17p' "${BASH_SOURCE[0]}" >&2; exit 2; }
SERVER="$1"
shift
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate is missing (it comes with valgrind)" >&2; exit 2; }
[[ -x "$SERVER" ]] || { echo "not an executable: $SERVER" >&2; exit 2; }

PROTOCOL="${PROTOCOL:-2026-07-28}"
MODE="${MODE:-pipe}"
TOOL="${TOOL:-echo}"
ECHO_ARGS='{"text":"hello"}'
ARGS="${ARGS:-$ECHO_ARGS}"
EXPECT="${EXPECT:-hello}"
DRIVER="$ROOT/target/bench-load/release/mcp-load"
if [[ ! -x "$DRIVER" ]]; then
    cargo build --quiet --release --manifest-path "$ROOT/benches/load/Cargo.toml" --target-dir "$ROOT/target/bench-load"
fi
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# The instructions the server ran to answer $1 calls (every thread, start to exit).
total() {
    local n="$1" file
    shift
    if ! "$DRIVER" stdio --label callgrind -n "$n" --warmup 0 --protocol "$PROTOCOL" --mode "$MODE" \
        --tool "$TOOL" --args "$ARGS" --expect "$EXPECT" \
        -- valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$n.%p" "$SERVER" "$@" >"$OUT/driver.$n" 2>&1; then
        echo "the driver failed with $n calls:" >&2
        tail -n 5 "$OUT/driver.$n" >&2
        exit 1
    fi
    grep -q '"errors":0,' "$OUT/driver.$n" || { echo "calls failed with $n calls:" >&2; tail -n 2 "$OUT/driver.$n" >&2; exit 1; }
    # Less what start-up spends calibrating a clock for a while (quanta's, under the Prometheus
    # recorder of MCP_RESOLVE_BENCH_METRICS=1): a time, not a count, so it differs between runs
    # by more than the calls' difference.
    for file in "$OUT"/cg."$n".*; do
        callgrind_annotate --inclusive=yes --threshold=100 "$file" 2>/dev/null | awk '
            /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
            / \?\?\?:quanta::Clock::new / { gsub(",", "", $1); calibration = $1 }
            END { print total - calibration }'
    done | awk '{ s += $1 } END { print s + 0 }'
}

small="$(total 1000 "$@")"
large="$(total 6000 "$@")"
((small > 0 && large > small)) || { echo "no count (1 000 calls: $small, 6 000: $large)" >&2; exit 1; }
echo "$(basename "$SERVER") $* $PROTOCOL $TOOL $MODE: $(((large - small) / 5000)) instructions per call"
