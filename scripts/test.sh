#!/usr/bin/env bash
# The whole test suite, as README.md tells a new user and as CI runs it.
#
# It installs what the tests need (a Python venv with the official MCP SDK under target/),
# builds the release `notes` example that the interop tests drive, and runs every test of the
# workspace: unit tests, protocol tests, trybuild UI tests, interop tests and doctests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup-python.sh >/dev/null
scripts/setup-node.sh >/dev/null
scripts/setup-nginx.sh >/dev/null
cargo build --release --example notes --all-features
cargo test --workspace --all-features "$@"
