#!/usr/bin/env bash
# The whole test suite, as README.md tells a new user and as CI runs it.
#
# It installs what the tests need (a Python venv with the official MCP SDK, Node 22 with the
# official TypeScript client and the official conformance runners, under target/; nginx and
# redis-server for the replicas tests, Debian's chromium with chromium-driver for the browser
# tests, tmux for the terminal client's tests and strace for the system calls counted per call
# (tests/syscalls.rs), from the distribution's packages), builds the
# release `notes`, `conformance` and `connect` examples that the interop, browser and terminal
# client tests drive, the release `axum` example (the Notes server inside an axum application,
# tests/axum.rs), the release `bench_server` the replicas smoke test runs behind nginx and
# tests/syscalls.rs runs under strace, the
# release `rollout` whose replicas share tasks through Redis (tests/tasks_replicas.rs), and
# the load benchmark's driver and rmcp peer (debug; the smoke tests run them), and runs every
# test of the workspace: unit tests, protocol tests, trybuild UI tests, interop tests, Redis
# tests, browser tests, the terminal client's tmux tests and the benchmark smoke tests with cargo-nextest
# (installed by scripts/setup-nextest.sh when missing), each test a process of its own under a
# time limit that names it (.config/nextest.toml), then the doctests, which nextest does not
# run, with `cargo test --doc`. Last, the official conformance suite scores the `conformance`
# example (0.1.16 --suite active, 0.2.0-alpha.12 --requirements 2025-11-25 and 2026-07-28): every
# scored scenario must pass, or be a runner bug listed in tests/conformance/baseline.txt; and its
# client scenarios score the Rust client (`conformance_client` example, scripts/conformance-client.sh).
#
# Arguments go to `cargo nextest run` (e.g. `scripts/test.sh -E 'binary(http)'`); the doctests
# and the conformance suite run only with none.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup-python.sh >/dev/null
scripts/setup-node.sh >/dev/null
scripts/setup-nginx.sh >/dev/null
scripts/setup-chromium.sh >/dev/null
scripts/setup-redis.sh >/dev/null
scripts/setup-tmux.sh >/dev/null
scripts/setup-strace.sh >/dev/null
scripts/setup-conformance.sh >/dev/null
scripts/setup-nextest.sh >/dev/null
cargo build --release --example notes --example axum --example bench_server --example conformance --example conformance_client --example connect --example rollout --all-features
CARGO_TARGET_DIR=target/bench-load cargo build --manifest-path benches/load/Cargo.toml
CARGO_TARGET_DIR=target/bench-peers cargo build --manifest-path benches/peers/rmcp/Cargo.toml
# The release examples just built, so that each test process (one per test under nextest) does
# not ask cargo for them again (tests/support/mod.rs).
release="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/examples"
export MCP_RESOLVE_NOTES_BIN="${release}/notes"
export MCP_RESOLVE_BENCH_BIN="${release}/bench_server"
export MCP_RESOLVE_AXUM_BIN="${release}/axum"
export MCP_RESOLVE_CONFORMANCE_BIN="${release}/conformance"
export MCP_RESOLVE_CONNECT_BIN="${release}/connect"
export MCP_RESOLVE_ROLLOUT_BIN="${release}/rollout"
cargo nextest run --workspace --all-features "$@"
if [[ $# -eq 0 ]]; then
    cargo test --doc --workspace --all-features
    # The load driver's own tests (its CPU accounting and reports; a separate cargo project).
    CARGO_TARGET_DIR=target/bench-load cargo test --manifest-path benches/load/Cargo.toml
    scripts/conformance.sh -- target/release/examples/conformance --http '127.0.0.1:{PORT}'
    # The Rust client against the runner's client scenarios (mock servers of its own).
    scripts/conformance-client.sh -- "${release}/conformance_client"
fi
