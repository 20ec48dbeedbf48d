#!/usr/bin/env bash
# wrk against our HTTP endpoint and rmcp's (issue 31, point 6): a stateless 2026-07-28 echo,
# 32 connections, 2 wrk threads, interleaved rounds (a 3 s warm-up, then 10 s measured), each
# server fresh per round. Per round: requests/s, wrk's mean latency, the server's peak RSS and
# its CPU per request (utime+stime from /proc over the measured 10 s).
#
#   benches/wrk.sh            # 6 rounds; needs wrk (apt-get install wrk) and the two servers:
#   cargo build --release --example bench_server
#   CARGO_TARGET_DIR=target/bench-peers cargo build --release --manifest-path benches/peers/rmcp/Cargo.toml
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
OURS=target/release/examples/bench_server
RMCP=target/bench-peers/release/rmcp-peer
SCRIPT=benches/wrk/echo.lua
TICK="$(getconf CLK_TCK)"
for round in $(seq "${ROUNDS:-6}"); do
    for who in mcp-resolve rmcp-best; do
        if [[ $who == mcp-resolve ]]; then bin=$OURS; port=18601; else bin=$RMCP; port=18602; fi
        "$bin" --http "127.0.0.1:$port" >/dev/null 2>&1 &
        pid=$!
        for _ in $(seq 50); do curl -s -o /dev/null "127.0.0.1:$port/mcp" && break; sleep 0.1; done
        wrk -t2 -c32 -d3s -s "$SCRIPT" "http://127.0.0.1:$port/mcp" >/dev/null 2>&1
        t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
        out="$(wrk -t2 -c32 -d10s -s "$SCRIPT" "http://127.0.0.1:$port/mcp" 2>&1)"
        t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
        rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
        reqs=$(awk '/requests in/ {print $1}' <<<"$out")
        rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
        bad=$(awk '/^BAD/ {print $2}' <<<"$out")
        lat=$(awk '/Latency/ {print $2}' <<<"$out")
        cpu=$(python3 -c "print(round(($t1 - $t0) * 1e6 / $TICK / $reqs, 1))")
        echo "round=$round server=$who requests_per_s=$rps bad=$bad mean_latency=$lat peak_rss_kib=$rss cpu_us_per_request=$cpu"
        kill "$pid"; wait "$pid" 2>/dev/null || true
    done
done
