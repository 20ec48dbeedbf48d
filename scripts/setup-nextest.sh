#!/usr/bin/env bash
# Make sure `cargo nextest` (cargo-nextest) exists for scripts/test.sh: instant when it is
# installed already, otherwise `cargo install --locked cargo-nextest` (from source, a few
# minutes once). The last line printed is its version.
#
#   scripts/setup-nextest.sh
set -euo pipefail

if ! cargo nextest --version >/dev/null 2>&1; then
    echo "cargo-nextest is missing: installing it with cargo install --locked cargo-nextest" >&2
    cargo install --locked cargo-nextest >&2
fi
cargo nextest --version | head -n1
