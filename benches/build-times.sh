#!/usr/bin/env bash
# Clean release build time and stripped binary size: our `notes` example (built as a user's
# crate, benches/build/notes-app) next to the rmcp peer (benches/peers/rmcp), its equivalent
# (stdio and Streamable HTTP, elicitation, a few tools). Dependencies are fetched first so the
# network is not timed; each build starts from an empty target directory. Writes a Markdown
# table to target/bench/build-times.md and prints it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/target/bench"
mkdir -p "$OUT"
TMP="$ROOT/target/bench-clean"

measure() { # measure LABEL MANIFEST BIN_NAME
    local label="$1" manifest="$2" bin="$3" dir="$TMP/$1"
    cargo fetch -q --manifest-path "$manifest"
    rm -rf "$dir"
    local start end
    start=$(date +%s.%N)
    CARGO_TARGET_DIR="$dir" cargo build -q --release --manifest-path "$manifest"
    end=$(date +%s.%N)
    strip -o "$dir/stripped" "$dir/release/$bin"
    local crates
    crates=$(grep -c '^name = ' "$(dirname "$manifest")/Cargo.lock")
    printf '| %s | %.0f s | %.2f MiB | %.2f MiB | %s |\n' "$label" "$(echo "$end - $start" | bc)" \
        "$(echo "$(stat -c %s "$dir/release/$bin") / 1048576" | bc -l)" \
        "$(echo "$(stat -c %s "$dir/stripped") / 1048576" | bc -l)" "$crates"
    rm -rf "$dir"
}

{
    echo "| build | clean release build (wall) | binary | stripped | packages in Cargo.lock |"
    echo "|---|---|---|---|---|"
    measure "mcp-resolve notes" "$ROOT/benches/build/notes-app/Cargo.toml" notes
    measure "rmcp 3.11 peer" "$ROOT/benches/peers/rmcp/Cargo.toml" rmcp-peer
} | tee "$OUT/build-times.md"
