#!/usr/bin/env bash
# Mutation testing of the security-critical modules (issue 30, point 5; docs/TEST-QUALITY.md):
# cargo-mutants changes one thing at a time in sealing, single-use state, asking and rounds, the
# Host/Origin guard, sessions, URL flows, access and scopes, JWT/JWKS and form validation, and
# runs the in-process tests against each change. A mutant no test notices ("missed") is a promise
# no test holds: kill it with a test named for the promise, or explain in docs/TEST-QUALITY.md
# why it changes no behaviour. The modules and the tests are listed once, in .cargo/mutants.toml.
#
# Run it before landing a change to those modules. It is not part of .ci/run: the whole set takes
# hours on 2 cores (docs/TEST-QUALITY.md has the figures).
#
#   scripts/mutants.sh                                         # every module
#   scripts/mutants.sh --re '^runtime/src/resolve/state\.rs'    # one module (a regex on the names)
#   git diff main >target/change.diff && scripts/mutants.sh --in-diff target/change.diff  # what a change touches
#   CARGO_MUTANTS_JOBS=2 scripts/mutants.sh ...                # two scratch trees at once
#
# Two passes, for speed: first every mutant against the runtime's unit tests alone (a rebuild of
# one crate, seconds), then the mutants those missed, and any that timed out, against every test
# binary the configuration lists (`--iterate`: the caught and unviable ones are skipped and the
# results accumulate). The result is in target/mutants/mutants.out (missed.txt, caught.txt,
# previously_caught.txt, timeout.txt, unviable.txt, a log per mutant); the last lines printed
# count them. Exit status: 0 when nothing was missed and nothing timed out, else cargo-mutants'
# (2 missed, 3 timeouts, 4 the tests fail on the unmutated tree).
#
# cargo-mutants is installed once under target/tools (`cargo install --locked`), then reused.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

VERSION=27.1.0
TOOLS=target/tools
BIN="${TOOLS}/bin/cargo-mutants"
OUT=target/mutants
CONFIG=.cargo/mutants.toml

if [[ "$("${BIN}" mutants --version 2>/dev/null || true)" != "cargo-mutants ${VERSION}" ]]; then
    echo "mutants: installing cargo-mutants ${VERSION} under ${TOOLS}" >&2
    cargo install --locked --quiet cargo-mutants --version "${VERSION}" --root "${TOOLS}"
fi

mkdir -p "${OUT}"
# The first pass: the same configuration with the unit tests as the only tests (the same packages,
# so the dependencies are built with the same features in both passes).
QUICK="${OUT}/unit-tests-only.toml"
awk '
    /^additional_cargo_args *= *\[/ { skipping = 1; print "additional_cargo_args = [\"--lib\"]"; next }
    skipping && /^\]/ { skipping = 0; next }
    skipping { next }
    { print }
' "${CONFIG}" >"${QUICK}"
grep -q '^additional_cargo_args = \["--lib"\]$' "${QUICK}" || {
    echo "mutants: could not derive the unit-tests pass from ${CONFIG}" >&2
    exit 1
}

# The timeouts come from the configuration; the mutated package is the runtime.
run() {
    local status=0
    # No debug info in the scratch trees' builds: a mutant is built to be tested, never debugged,
    # and leaving it out makes each build and link faster.
    CARGO_PROFILE_DEV_DEBUG=0 \
        "${BIN}" mutants --package mcp-resolve-runtime --output "${OUT}" --colors never "$@" || status=$?
    return "${status}"
}

start=${SECONDS}
status=0
passes=1
echo "mutants: pass 1 of 2, the runtime's unit tests" >&2
run --config "${QUICK}" "$@" || status=$?
case "${status}" in
    0 | 2 | 3) ;;
    *) exit "${status}" ;;
esac
if [[ -s "${OUT}/mutants.out/missed.txt" || -s "${OUT}/mutants.out/timeout.txt" ]]; then
    # cargo-mutants' own baseline tests only the mutated package, where the integration tests
    # are not: this is the baseline of pass 2, on the unmutated tree, and its time sets the limit.
    # (`printf` leaves no newline at the end, so `read` meets end of input and returns 1: `|| true`.)
    read -r -a targets < <(awk '
        /^additional_cargo_args *= *\[/ { inside = 1; next }
        inside && /^\]/ { inside = 0 }
        inside { gsub(/[",]/, ""); printf "%s ", $0 }
    ' "${CONFIG}") || true
    read -r -a harness < <(awk '
        /^additional_cargo_test_args *= *\[/ { inside = 1; next }
        inside && /^\]/ { inside = 0 }
        inside { gsub(/[",]/, ""); printf "%s ", $0 }
    ' "${CONFIG}") || true
    echo "mutants: pass 2 of 2, baseline: cargo test --all-features ${targets[*]} ${harness[*]}" >&2
    baseline=${SECONDS}
    cargo test --quiet --all-features --package mcp-resolve-runtime --package mcp-resolve "${targets[@]}" "${harness[@]}" || {
        echo "mutants: the listed tests fail on the unmutated tree; fix that first" >&2
        exit 4
    }
    limit=$((3 * (SECONDS - baseline)))
    ((limit < 300)) && limit=300
    echo "mutants: pass 2 of 2, what pass 1 missed against every listed test binary (${limit} s each at most)" >&2
    status=0
    passes=2
    run --config "${CONFIG}" --iterate --baseline=skip --timeout "${limit}" "$@" || status=$?
fi

# Pass 2 moved pass 1's results to mutants.out.old (and counts what pass 1 caught or found
# unviable as "previously caught"): each figure is taken from the pass that decided it.
FINAL="${OUT}/mutants.out"
FIRST="${FINAL}"
[[ "${passes}" == 2 ]] && FIRST="${OUT}/mutants.out.old"
count() {
    local file="$1/$2"
    if [[ -f "${file}" ]]; then grep -c . "${file}" || true; else echo 0; fi
}
caught=$(count "${FIRST}" caught.txt)
unviable=$(count "${FIRST}" unviable.txt)
if [[ "${passes}" == 2 ]]; then
    caught=$((caught + $(count "${FINAL}" caught.txt)))
    unviable=$((unviable + $(count "${FINAL}" unviable.txt)))
fi
missed=$(count "${FINAL}" missed.txt)
timeouts=$(count "${FINAL}" timeout.txt)
echo "mutants: $((caught + missed + timeouts + unviable)) mutants: ${caught} caught, ${missed} missed, ${timeouts} timed out, ${unviable} unviable, in $(((SECONDS - start) / 60)) min"
if [[ "${missed}" != 0 ]]; then
    echo "mutants: missed (each needs a test that kills it or a reason in docs/TEST-QUALITY.md):"
    sed 's/^/  /' "${FINAL}/missed.txt"
fi
exit "${status}"
