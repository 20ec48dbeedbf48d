#!/usr/bin/env bash
# The specification matrix, docs/SPEC.md, stays true to the code: every test it names exists, in the
# file it names, and every requirement row carries a status.
#
#   scripts/check-spec.sh              # docs/SPEC.md
#   scripts/check-spec.sh PAGE.md      # another page written the same way
#
# What is checked:
# - every backticked test name of three or more underscores is a function of the workspace
#   (scripts/check-doc-tests.sh, the one place that rule lives);
# - every `path/FILE.rs` `name`, `name` list names functions defined in that very file, and every
#   backticked path (`tests/…`, `runtime/…`, `macros/…`, `examples/…`, `src/…`) exists;
# - every `conformance:scenario` is a scenario docs/CONFORMANCE.md knows;
# - every requirement row (`| T25-12 | MUST | … | status |`) has a unique id, a level, and a status
#   that starts with HELD:, N/A:, DEVIATION:, OPEN: or UNTESTED:; a HELD row names a test (a
#   function, alone or after its file, a UI test file or a conformance scenario); an OPEN row
#   names its `issue 33 item N`;
# - the summary table's counts (one row per id prefix, and the **all** row) are the rows' counts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

page=${1:-docs/SPEC.md}
[[ -f "${page}" ]] || { echo "check-spec: ${page} does not exist" >&2; exit 1; }

failed=0
fail() {
    echo "${page}: $*" >&2
    failed=$((failed + 1))
}

# 1. Test names exist somewhere in the workspace.
scripts/check-doc-tests.sh "${page}" >/dev/null || failed=$((failed + 1))

# 2. Paths exist; names listed after a path are defined in that file.
while IFS= read -r path; do
    [[ -e "${path}" ]] || fail "names \`${path}\`, which does not exist"
done < <(grep -oE '`(tests|runtime|macros|examples|src|cli)/[^` ]+`' "${page}" | tr -d '`' | sort -u)

while IFS= read -r group; do
    file=$(sed -E 's/^`([^`]+)`.*/\1/' <<<"${group}")
    [[ -f "${file}" ]] || continue
    while IFS= read -r name; do
        grep -qE "fn ${name}[^a-z0-9_]" "${file}" \
            || fail "cites \`${file}\` \`${name}\`, but ${file} defines no function of that name"
    done < <(sed -E 's/^`[^`]+`//' <<<"${group}" | grep -oE '`[a-z0-9_]+`' | tr -d '`')
done < <(grep -oE '`(tests|runtime|macros|examples|src|cli)/[^` ]+\.rs`( `[a-z0-9_]+`(, `[a-z0-9_]+`)*)?' "${page}" | sort -u)

# 3. Conformance scenarios are ones the runner has.
while IFS= read -r scenario; do
    grep -qE -- "(^|[^a-z0-9-])${scenario}([^a-z0-9-]|\$)" docs/CONFORMANCE.md \
        || fail "names the conformance scenario \`${scenario}\`, which docs/CONFORMANCE.md does not know"
done < <(grep -oE '`conformance:[a-z0-9-]+`' "${page}" | sed -E 's/`conformance:([a-z0-9-]+)`/\1/' | sort -u)

# 4. Rows: ids, levels, statuses; counts per prefix and status.
rows=$(grep -E '^\| [A-Z]+[0-9]{2}-[0-9]+ \|' "${page}" || true)
[[ -n "${rows}" ]] || fail "has no requirement rows"
# (No `{n,}` in these patterns: mawk, the usual awk, has no interval expressions.)
counted=$(awk -F' \\| ' '
    BEGIN { split("HELD N/A DEVIATION OPEN UNTESTED", order, " ") }
    {
        id = substr($1, 3); level = $2; status = $NF; sub(/ \|$/, "", status)
        if (NF != 4) { printf "BAD %s has %d cells, not 4 (a `|` inside a cell?)\n", id, NF; next }
        if (seen[id]++) printf "BAD %s is used twice\n", id
        if (level !~ /^(MUST|MUST NOT|SHOULD|SHOULD NOT|REQUIRED|SHALL|SHALL NOT|RECOMMENDED)$/)
            printf "BAD %s has the level \"%s\"\n", id, level
        kind = status; sub(/:.*/, "", kind)
        if (kind !~ /^(HELD|N\/A|DEVIATION|OPEN|UNTESTED)$/ || status !~ /^[A-Z\/]+: ./) {
            printf "BAD %s has no status (HELD:, N/A:, DEVIATION:, OPEN: or UNTESTED:)\n", id; next
        }
        if (kind == "HELD" && status !~ /`[a-z][a-z0-9]*_[a-z0-9]+_[a-z0-9]+_[a-z0-9_]+`|`(tests|runtime|macros|examples|src|cli)\/[^`]+\.rs` `[a-z0-9_]+`|`tests\/ui\/[^`]+\.rs`|`conformance:[a-z0-9-]+`/)
            printf "BAD %s is HELD but names no test\n", id
        if (kind == "OPEN" && status !~ /issue 33 item [0-9]+/)
            printf "BAD %s is OPEN but names no issue 33 item\n", id
        prefix = id; sub(/-[0-9]+$/, "", prefix)
        n[prefix, kind]++; n["all", kind]++; total[prefix]++; total["all"]++
        if (!(prefix in known)) { known[prefix] = 1; prefixes[++p] = prefix }
    }
    END {
        prefixes[++p] = "all"
        for (i = 1; i <= p; i++) {
            line = prefixes[i]
            for (j = 1; j <= 5; j++) line = line " " n[prefixes[i], order[j]] + 0
            print "COUNT " line " " total[prefixes[i]]
        }
    }' <<<"${rows}")
while IFS= read -r bad; do
    fail "${bad#BAD }"
done < <(grep '^BAD ' <<<"${counted}" || true)

# The summary table: `| [T25](#t25) … | HELD | N/A | DEVIATION | OPEN | UNTESTED | rows |`.
summary=$(grep -E '^\| (\[[A-Z]+[0-9]{2}\]|\*\*all\*\*)' "${page}" \
    | sed -E 's/^\| \[([A-Z]+[0-9]{2})\][^|]*/\1 /; s/^\| \*\*all\*\* /all /; s/\*\*//g; s/\|//g; s/  +/ /g; s/ $//' || true)
[[ -n "${summary}" ]] || fail "has no summary table"
while IFS= read -r line; do
    prefix=${line%% *}
    want=$(grep -E "^${prefix} " <<<"${summary}" || true)
    if [[ -z "${want}" ]]; then
        fail "the summary table has no row for ${prefix} (rows: ${line#* })"
    elif [[ "${want}" != "${line}" ]]; then
        fail "the summary says \"${want}\" but the rows count \"${line}\" (prefix, HELD, N/A, DEVIATION, OPEN, UNTESTED, rows)"
    fi
done < <(grep '^COUNT ' <<<"${counted}" | sed 's/^COUNT //')
while IFS= read -r line; do
    grep -qE "^${line%% *} " <<<"$(grep '^COUNT ' <<<"${counted}" | sed 's/^COUNT //')" \
        || fail "the summary table has a row for ${line%% *}, which has no requirement rows"
done <<<"${summary}"

if [[ ${failed} -gt 0 ]]; then
    echo "check-spec: ${page} has ${failed} problem(s)" >&2
    exit 1
fi
echo "check-spec: ${page}: $(grep -c '' <<<"${rows}") rows, every status set, every named test exists; $(grep '^COUNT all' <<<"${counted}" | sed 's/^COUNT all //' | awk '{printf "HELD %s, N/A %s, DEVIATION %s, OPEN %s, UNTESTED %s", $1, $2, $3, $4, $5}')"
