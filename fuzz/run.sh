#!/usr/bin/env bash
# Builds one fuzz target with AFL++ instrumentation and fuzzes it for SECONDS.
#
#   fuzz/run.sh TARGET SECONDS [OUT]      # TARGET: frames classify unseal form http
#
# Needs cargo-afl (`cargo install cargo-afl`, which also builds its AFL++). Starts from the
# committed corpus fuzz/corpus/TARGET; findings go to OUT (default fuzz/out/TARGET, not
# committed): OUT/default/crashes and OUT/default/hangs hold inputs to turn into regressions
# (fuzz/regressions/TARGET/), OUT/default/fuzzer_stats the figures. One afl-fuzz uses one core.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

target=${1:?usage: fuzz/run.sh TARGET SECONDS [OUT]}
seconds=${2:?usage: fuzz/run.sh TARGET SECONDS [OUT]}
out=${3:-out/$target}
[[ -d corpus/$target ]] || { echo "no target $target (see fuzz/corpus/)" >&2; exit 2; }

cargo afl build --release --bin "$target"
mkdir -p "$out"
# -V: stop after SECONDS; -t: 2 s per input (the HTTP target starts a connection per input).
# The environment lets it run on a shared machine: no CPU-governor or core-dump checks, no UI.
AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1 \
    cargo afl fuzz -V "$seconds" -t 2000 -i "corpus/$target" -o "$out" "target/release/$target"

stats=$out/default/fuzzer_stats
grep -E '^(run_time|execs_done|execs_per_sec|corpus_count|saved_crashes|saved_hangs|bitmap_cvg|stability)' "$stats"
