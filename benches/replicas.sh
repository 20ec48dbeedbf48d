#!/usr/bin/env bash
# Replicas under load (docs/PERFORMANCE.md, "Replicas under load"), in one command:
#
#   benches/replicas.sh                 # 10 000 concurrent two-round calls, rounds sent to
#                                       # alternate replicas, then the same through round-robin
#   benches/replicas.sh --soak 1800     # steady traffic for 30 min, each replica's RSS every 10 s
#   benches/replicas.sh --smoke         # 200 calls each way, debug driver: the CI check
#                                       # (tests/replicas_smoke.rs)
#   benches/replicas.sh --tasks         # 1 000 concurrent tasks that ask once, across two
#                                       # `rollout` replicas sharing one Redis, each routing
#   benches/replicas.sh --tasks --smoke # 50 tasks each way, debug driver (tests/tasks_smoke.rs)
#
#   CALLS=10000 CONNECTIONS=4000 IDENTITIES=100 RUNS=3 benches/replicas.sh
#   RATE=200 SOAK_CONNECTIONS=64 benches/replicas.sh --soak 1800
#   TASKS=1000 TASK_CONNECTIONS=256 STEP_MS=20 POLL_MS=200 RUNS=3 benches/replicas.sh --tasks
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
#
# With --tasks the replicas are the release `rollout` example (all features), sharing one state
# key and one redis-server of the run's own (MCP_RESOLVE_REDIS_URL; scripts/setup-redis.sh), with
# MCP_RESOLVE_MAX_TASKS raised (all tasks are one anonymous caller's) and no bearer tokens.
# `mcp-load tasks` starts TASKS 2026-07-28 tasks of `rollout` with a failing canary at once; each
# asks once mid-run, is answered once with tasks/update, and must complete with its own text (see
# benches/load/src/tasks.rs). Polls follow the task's pollIntervalMs unless POLL_MS is set. OUT is
# target/replicas-tasks or target/replicas-tasks-smoke. LOAD_TARGET moves the driver's target
# directory (default target/bench-load); SERVER_BIN runs another build of the replicas' example.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SHAPE=burst
SOAK_SECS=0
WORKLOAD=calls
while [[ $# -gt 0 ]]; do
    case "$1" in
        --smoke) SHAPE=smoke ;;
        --tasks) WORKLOAD=tasks ;;
        --soak)
            SHAPE=soak
            SOAK_SECS="${2:?--soak SECONDS}"
            shift
            ;;
        *)
            echo "usage: $0 [--tasks] [--smoke | --soak SECONDS]" >&2
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
if [[ "$WORKLOAD" == tasks ]]; then
    [[ "$SHAPE" != soak ]] || { echo "replicas.sh: --tasks has no --soak" >&2; exit 2; }
    if [[ "$SHAPE" == smoke ]]; then
        TASKS="${TASKS:-50}"; TASK_CONNECTIONS="${TASK_CONNECTIONS:-16}"; WARMUP="${WARMUP_TASKS:-4}"
        OUT="$ROOT/target/replicas-tasks-smoke"
    else
        TASKS="${TASKS:-1000}"; TASK_CONNECTIONS="${TASK_CONNECTIONS:-256}"; WARMUP="${WARMUP_TASKS:-20}"
        OUT="$ROOT/target/replicas-tasks"
    fi
    STEP_MS="${STEP_MS:-20}"
    POLL_MS="${POLL_MS:-}"
fi

# Every connection is a file descriptor: take the hard limit (20 000 on the benchmark VM).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

echo "== building" >&2
EXAMPLE=bench_server
[[ "$WORKLOAD" == tasks ]] && EXAMPLE=rollout
cargo build -q --release --example "$EXAMPLE" --all-features
LOAD_TARGET="${LOAD_TARGET:-$ROOT/target/bench-load}"
if [[ "$DRIVER_PROFILE" == release ]]; then
    CARGO_TARGET_DIR="$LOAD_TARGET" cargo build -q --release --manifest-path benches/load/Cargo.toml
else
    CARGO_TARGET_DIR="$LOAD_TARGET" cargo build -q --manifest-path benches/load/Cargo.toml
fi
NGINX_BIN="$(scripts/setup-nginx.sh | tail -n1)"
unset NGINX # nginx reads this variable itself
if [[ "$WORKLOAD" == tasks ]]; then
    REDIS_BIN="$(scripts/setup-redis.sh | tail -n1)"
fi

WORKSPACE_TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
[[ "$WORKSPACE_TARGET" = /* ]] || WORKSPACE_TARGET="$ROOT/$WORKSPACE_TARGET"
# SERVER_BIN: the replicas are another build of the example (one made elsewhere, or patched).
SERVER="${SERVER_BIN:-$WORKSPACE_TARGET/release/examples/$EXAMPLE}"
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
    [[ "$WORKLOAD" != tasks ]] || echo "redis: $("$REDIS_BIN" --version)"
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

# start_redis LABEL: a fresh redis-server of this run (no persistence); sets PID_R REDIS_URL.
start_redis() {
    local port dir
    port="$(free_port)"
    dir="$OUT/redis-$1"
    mkdir -p "$dir"
    "$REDIS_BIN" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --protected-mode yes --dir "$dir" \
        </dev/null >"$dir/redis.log" 2>&1 &
    PID_R=$!
    PIDS+=("$PID_R")
    wait_port "$port" "$PID_R" "redis-server"
    REDIS_URL="redis://127.0.0.1:$port/0"
}

# start_all LABEL: fresh replicas A and B and a fresh nginx (and, for tasks, a fresh Redis);
# sets PID_A PID_B PID_N LISTEN (and PID_R).
start_all() {
    local label="$1" a b work
    [[ "$WORKLOAD" != tasks ]] || start_redis "$label"
    a="$(free_port)"
    b="$(free_port)"
    while [[ "$b" == "$a" ]]; do b="$(free_port)"; done
    LISTEN="$(free_port)"
    while [[ "$LISTEN" == "$a" || "$LISTEN" == "$b" ]]; do LISTEN="$(free_port)"; done
    for r in a b; do
        local port="$a"
        [[ "$r" == b ]] && port="$b"
        if [[ "$WORKLOAD" == tasks ]]; then
            # Every task is one anonymous caller's: the bound on running tasks (and on calls per
            # second, which MCP_RESOLVE_MAX_TASKS lifts too) would refuse most of the burst.
            MCP_RESOLVE_STATE_KEY="$STATE_KEY" MCP_RESOLVE_REDIS_URL="$REDIS_URL" \
                MCP_RESOLVE_MAX_TASKS="${MAX_TASKS:-100000}" RUST_LOG=warn \
                "$SERVER" --http "127.0.0.1:$port" </dev/null >/dev/null 2>"$OUT/$label-replica-$r.log" &
        else
            MCP_RESOLVE_STATE_KEY="$STATE_KEY" MCP_RESOLVE_JWT_SECRET="$JWT_SECRET" MCP_RESOLVE_AUTH_SERVER=https://auth.bench \
                MCP_RESOLVE_JWT_AUDIENCE="$JWT_AUDIENCE" RUST_LOG=warn \
                "$SERVER" --http "127.0.0.1:$port" </dev/null >/dev/null 2>"$OUT/$label-replica-$r.log" &
        fi
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
    if [[ "$WORKLOAD" == tasks ]]; then
        local poll=()
        [[ -z "$POLL_MS" ]] || poll=(--poll-ms "$POLL_MS")
        if ! "$LOAD" tasks --label "$label" --addr "127.0.0.1:$LISTEN" --warmup "$WARMUP" \
            --pid "replica-a=$PID_A" --pid "replica-b=$PID_B" --pid "nginx=$PID_N" --pid "redis=$PID_R" \
            --out "$OUT/results.jsonl" --md "$OUT/report.md" "${poll[@]}" "$@" >/dev/null; then
            echo "!! $label failed; logs in $OUT" >&2
            FAILED=1
        fi
    # The secret through the environment, not on the command line.
    elif ! MCP_RESOLVE_JWT_SECRET="$JWT_SECRET" MCP_RESOLVE_JWT_AUDIENCE="$JWT_AUDIENCE" \
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

case "$WORKLOAD-$SHAPE" in
    tasks-*)
        for run in $(seq 1 "$RUNS"); do
            suffix=""
            ((RUNS > 1)) && suffix="-$run"
            drive "tasks-alternate$suffix" --route alternate --tasks "$TASKS" --connections "$TASK_CONNECTIONS" --step-ms "$STEP_MS"
            drive "tasks-round-robin$suffix" --route rr --tasks "$TASKS" --connections "$TASK_CONNECTIONS" --step-ms "$STEP_MS"
        done
        ;;
    *-burst | *-smoke)
        for run in $(seq 1 "$RUNS"); do
            suffix=""
            ((RUNS > 1)) && suffix="-$run"
            drive "alternate$suffix" --route alternate --calls "$CALLS" --connections "$CONNECTIONS" --rss-every 1
            drive "round-robin$suffix" --route rr --calls "$CALLS" --connections "$CONNECTIONS" --rss-every 1
        done
        ;;
    *-soak)
        drive soak --route rr --rate "$RATE" --duration "$SOAK_SECS" --connections "$SOAK_CONNECTIONS" \
            --max-in-flight 2000 --rss-every 10 --timeout $((SOAK_SECS + 900))
        ;;
esac
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"

cat "$OUT/report.md"
if [[ "$WORKLOAD" == tasks ]]; then
    echo "== results: $OUT/results.jsonl, $OUT/report.md" >&2
else
    echo "== results: $OUT/results.jsonl, $OUT/report.md, $OUT/rss-*.csv" >&2
fi
exit "$FAILED"
