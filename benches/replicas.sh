#!/usr/bin/env bash
# Replicas under load (docs/PERFORMANCE.md, "Replicas under load"), in one command:
#
#   benches/replicas.sh                 # 10 000 concurrent two-round calls, rounds sent to
#                                       # alternate replicas, then the same through round-robin
#   benches/replicas.sh --soak 1800     # steady traffic for 30 min, each replica's RSS every 10 s
#   benches/replicas.sh --smoke         # 200 calls each way, debug driver: the CI check
#                                       # (tests/replicas_smoke.rs)
#
#   CALLS=10000 CONNECTIONS=4000 IDENTITIES=100 RUNS=3 benches/replicas.sh
#   RATE=200 SOAK_CONNECTIONS=64 benches/replicas.sh --soak 1800
#
# Two release `bench_server` replicas (built with all features: bearer tokens) share one
# MCP_RESOLVE_STATE_KEY (32 random bytes, hex) and one MCP_RESOLVE_JWT_SECRET (another 32, with
# MCP_RESOLVE_JWT_AUDIENCE, the `aud` its tokens must carry) and sit behind one nginx (installed
# by scripts/setup-nginx.sh, run with the private config benches/replicas/nginx.conf.template
# under target/). `mcp-load replicas` (benches/load) mints one HS256 token per identity and makes
# two-round `ask_name` calls: round 1 must ask, round 2 answers with the echoed requestState and
# must come back as `hello <a name unique to the call>`; every 10th call's state is also replayed
# under another identity, which must be refused. Every run starts fresh replicas and a fresh
# nginx. Each run appends a JSON line to OUT/results.jsonl and Markdown tables to OUT/report.md;
# the RSS samples go to OUT/rss-LABEL.csv. OUT is target/replicas, target/replicas-soak or
# target/replicas-smoke.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SHAPE=burst
SOAK_SECS=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --smoke) SHAPE=smoke ;;
        --soak)
            SHAPE=soak
            SOAK_SECS="${2:?--soak SECONDS}"
            shift
            ;;
        *)
            echo "usage: $0 [--smoke | --soak SECONDS]" >&2
            exit 2
            ;;
    esac
    shift
done

IDENTITIES="${IDENTITIES:-100}"
RUNS="${RUNS:-1}"
case "$SHAPE" in
    burst)
        CALLS="${CALLS:-10000}"; CONNECTIONS="${CONNECTIONS:-4000}"; WARMUP="${WARMUP:-500}"
        DRIVER_PROFILE=release; OUT="$ROOT/target/replicas"
        ;;
    soak)
        RATE="${RATE:-200}"; SOAK_CONNECTIONS="${SOAK_CONNECTIONS:-64}"; WARMUP="${WARMUP:-200}"
        DRIVER_PROFILE=release; OUT="$ROOT/target/replicas-soak"
        ;;
    smoke)
        CALLS="${CALLS:-200}"; CONNECTIONS="${CONNECTIONS:-32}"; WARMUP="${WARMUP:-20}"
        IDENTITIES="${IDENTITIES_SMOKE:-10}"
        DRIVER_PROFILE=debug; OUT="$ROOT/target/replicas-smoke"
        ;;
esac

# Every connection is a file descriptor: take the hard limit (20 000 on the benchmark VM).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

echo "== building" >&2
cargo build -q --release --example bench_server --all-features
LOAD_TARGET="$ROOT/target/bench-load"
if [[ "$DRIVER_PROFILE" == release ]]; then
    CARGO_TARGET_DIR="$LOAD_TARGET" cargo build -q --release --manifest-path benches/load/Cargo.toml
else
    CARGO_TARGET_DIR="$LOAD_TARGET" cargo build -q --manifest-path benches/load/Cargo.toml
fi
NGINX_BIN="$(scripts/setup-nginx.sh | tail -n1)"
unset NGINX # nginx reads this variable itself

WORKSPACE_TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
[[ "$WORKSPACE_TARGET" = /* ]] || WORKSPACE_TARGET="$ROOT/$WORKSPACE_TARGET"
SERVER="$WORKSPACE_TARGET/release/examples/bench_server"
LOAD="$LOAD_TARGET/$DRIVER_PROFILE/mcp-load"

# Secrets of this run only: the replicas share them, the driver signs tokens with the second.
# Each is 32 random bytes in hex (a passphrase is refused).
STATE_KEY="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
JWT_SECRET="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
# The audience the replicas require in every token, and the driver puts in the tokens it signs.
JWT_AUDIENCE="http://replicas.bench/mcp"

rm -rf "$OUT"
mkdir -p "$OUT"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) × $(nproc)"
    echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel: $(uname -r)"
    echo "nginx: $("$NGINX_BIN" -v 2>&1 | sed 's/^nginx version: //')"
    echo "open files: $(ulimit -n)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 12000))
        port_taken "$p" || { echo "$p"; return; }
    done
}
wait_port() { # wait_port PORT PID WHAT
    local deadline=$((SECONDS + 30))
    until port_taken "$1"; do
        if ! kill -0 "$2" 2>/dev/null; then
            echo "!! $3 exited before listening on $1" >&2
            return 1
        fi
        if ((SECONDS > deadline)); then
            echo "!! nothing listens on $1 ($3)" >&2
            return 1
        fi
        sleep 0.05
    done
}

PIDS=()
stop_all() {
    local p
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${PIDS[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    PIDS=()
}
trap stop_all EXIT

# start_all LABEL: fresh replicas A and B and a fresh nginx; sets PID_A PID_B PID_N LISTEN.
start_all() {
    local label="$1" a b work
    a="$(free_port)"
    b="$(free_port)"
    while [[ "$b" == "$a" ]]; do b="$(free_port)"; done
    LISTEN="$(free_port)"
    while [[ "$LISTEN" == "$a" || "$LISTEN" == "$b" ]]; do LISTEN="$(free_port)"; done
    for r in a b; do
        local port="$a"
        [[ "$r" == b ]] && port="$b"
        MCP_RESOLVE_STATE_KEY="$STATE_KEY" MCP_RESOLVE_JWT_SECRET="$JWT_SECRET" MCP_RESOLVE_AUTH_SERVER=https://auth.bench \
            MCP_RESOLVE_JWT_AUDIENCE="$JWT_AUDIENCE" RUST_LOG=warn \
            "$SERVER" --http "127.0.0.1:$port" </dev/null >/dev/null 2>"$OUT/$label-replica-$r.log" &
        PIDS+=("$!")
        if [[ "$r" == a ]]; then PID_A=$!; else PID_B=$!; fi
    done
    work="$OUT/nginx-$label"
    mkdir -p "$work/tmp"
    sed -e "s|@WORKDIR@|$work|g" -e "s|@PORT_A@|$a|g" -e "s|@PORT_B@|$b|g" -e "s|@LISTEN_PORT@|$LISTEN|g" \
        benches/replicas/nginx.conf.template > "$work/nginx.conf"
    "$NGINX_BIN" -p "$work" -e "$work/error.log" -c "$work/nginx.conf" </dev/null >/dev/null 2>>"$work/error.log" &
    PID_N=$!
    PIDS+=("$PID_N")
    wait_port "$a" "$PID_A" "replica A"
    wait_port "$b" "$PID_B" "replica B"
    wait_port "$LISTEN" "$PID_N" "nginx"
}

FAILED=0
drive() { # drive LABEL ARGS...
    local label="$1"
    shift
    start_all "$label"
    echo "== $label: replicas $PID_A, $PID_B behind nginx $PID_N on :$LISTEN" >&2
    # The secret through the environment, not on the command line.
    if ! MCP_RESOLVE_JWT_SECRET="$JWT_SECRET" MCP_RESOLVE_JWT_AUDIENCE="$JWT_AUDIENCE" \
        "$LOAD" replicas --label "$label" --addr "127.0.0.1:$LISTEN" \
        --identities "$IDENTITIES" --warmup "$WARMUP" \
        --pid "replica-a=$PID_A" --pid "replica-b=$PID_B" --pid "nginx=$PID_N" \
        --rss-csv "$OUT/rss-$label.csv" --out "$OUT/results.jsonl" --md "$OUT/report.md" "$@" >/dev/null; then
        echo "!! $label failed; logs in $OUT" >&2
        FAILED=1
    fi
    for r in a b; do
        local pid="$PID_A"
        [[ "$r" == b ]] && pid="$PID_B"
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "!! replica $r died during $label; its log: $OUT/$label-replica-$r.log" >&2
            FAILED=1
        fi
    done
    stop_all
}

case "$SHAPE" in
    burst | smoke)
        for run in $(seq 1 "$RUNS"); do
            suffix=""
            ((RUNS > 1)) && suffix="-$run"
            drive "alternate$suffix" --route alternate --calls "$CALLS" --connections "$CONNECTIONS" --rss-every 1
            drive "round-robin$suffix" --route rr --calls "$CALLS" --connections "$CONNECTIONS" --rss-every 1
        done
        ;;
    soak)
        drive soak --route rr --rate "$RATE" --duration "$SOAK_SECS" --connections "$SOAK_CONNECTIONS" \
            --max-in-flight 2000 --rss-every 10 --timeout $((SOAK_SECS + 900))
        ;;
esac
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"

cat "$OUT/report.md"
echo "== results: $OUT/results.jsonl, $OUT/report.md, $OUT/rss-*.csv" >&2
exit "$FAILED"
