#!/usr/bin/env bash
# Instructions per seal and per unseal of the micro-benchmarks' 1 KiB requestState, counted by
# valgrind's callgrind: unlike a time, the count does not depend on what else the machine runs.
#
#   benches/callgrind-state.sh          # ~1 min; prints one line per operation
#   SECONDS_EACH=5 benches/callgrind-state.sh
#   BIN=/path/to/an/older/micro-bench benches/callgrind-state.sh   # another commit's build
#
# It runs `benches/micro.rs` under callgrind in criterion's --profile-time mode (the bench's own
# closure, many iterations, no analysis) for `state/seal` and for `state/unseal`, and divides the
# inclusive instruction count of `StateSealer::seal` / `StateSealer::unseal_raw` (the doors the
# benches call, as the engine's `CallBinding::seal`/`open` are) by their number of calls. The
# kernel's share (the salt's getrandom system call) is not counted: callgrind sees user space only.
# Valgrind's emulated CPU also lacks the SHA extensions, so SHA-256 runs sha2's portable code
# here (a quarter to a third of the count) where a native run uses SHA-NI: compare counts with
# counts, commit against commit, not with times.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_EACH="${SECONDS_EACH:-3}"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

# BIN=PATH counts an already built micro bench instead (another commit's, to compare).
if [[ -z "${BIN:-}" ]]; then
    BIN="$(cargo bench -q --features bench --bench micro --no-run --message-format=json 2>/dev/null \
        | grep -o '"executable":"[^"]*"' | grep -v ':null' | head -n 1 | cut -d'"' -f4)"
fi
[[ -x "$BIN" ]] || { echo "cannot find the micro bench executable" >&2; exit 1; }
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# calls and inclusive Ir of the calls to function $2 in callgrind output $1 made by criterion's
# loop, not by the bench's setup in `micro::` (fn and cfn share one table of compressed names).
count() {
    awk -v want="$2" '
        function name(line, key,   s, id, rest) {
            s = line; sub("^" key "=\\(", "", s); id = s; sub(/\).*/, "", id)
            rest = s; sub(/^[0-9]+\) ?/, "", rest)
            if (rest != "") names[id] = rest
            return id
        }
        /^fn=\(/  { caller = name($0, "fn"); next }
        /^cfn=\(/ { cur = name($0, "cfn"); next }
        /^calls=/ {
            split($0, a, /[= ]/); n = a[2]
            getline; split($0, b, " ")
            if (names[cur] == want && names[caller] !~ /^micro::/) { calls += n; ir += b[2] }
        }
        END { printf "%d %d\n", calls, ir }
    ' "$1"
}

echo "$BIN ($(git rev-parse --short HEAD) checked out), $(date -u +%Y-%m-%dT%H:%MZ), $(valgrind --version)"
for op in seal unseal; do
    fn="mcp_resolve_runtime::bench::StateSealer::seal"
    [[ $op == unseal ]] && fn="mcp_resolve_runtime::bench::StateSealer::unseal_raw"
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$op.%p.out" \
        "$BIN" --bench --profile-time "$SECONDS_EACH" "state/$op\$" >"$OUT/$op.log" 2>&1
    read -r calls ir < <(for f in "$OUT/$op".*.out; do count "$f" "$fn"; done | awk '{c += $1; i += $2} END {print c, i}')
    (( calls > 0 )) || { echo "no call to $fn counted (inlined?)" >&2; exit 1; }
    echo "state/$op: $((ir / calls)) instructions per call ($calls calls)"
done
