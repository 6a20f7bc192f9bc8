#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/mutants/run.sh - mutation testing: each one-line bug of
# tests/mutants/list applied alone, in a scratch copy of the tree, and the
# tier that must catch it run there.
#
#   tests/mutants/run.sh [NAME...]   run every mutant (or those named):
#                                    "caught" or "SURVIVED" per mutant, the
#                                    score, exit 1 when any survived
#   tests/mutants/run.sh --check     only check the list: five fields a
#                                    line, FILE there, FROM in it exactly
#                                    once (make check runs this)
#
# The list: one mutant a line, TAB-separated: NAME FILE FROM TO TIER.
# FROM is an exact substring of FILE that occurs once in it, TO its
# replacement (in both, \t stands for a tab and \n for a newline); TIER is
# the make target, or several separated by spaces, that must fail with the
# mutant in.  Blank lines and lines starting with # are skipped.
#
# The working tree is never touched: its files (tracked and untracked, not
# ignored) are copied to a temporary directory, built once there, and each
# mutant is applied there, its tier run, and the file put back.  A tier
# that runs past MUTANT_TIMEOUT seconds (600) counts as caught (a hang).
# KEEP=1 keeps the scratch tree and the logs.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
LIST=tests/mutants/list
TIMEOUT=${MUTANT_TIMEOUT:-600}

# substitute FILE FROM TO [apply]: how many times FROM occurs in FILE;
# with "apply", FILE gets TO in its place (when it occurs exactly once).
substitute() {
	python3 - "$@" <<'PY'
import sys
path, frm, to = sys.argv[1:4]
unesc = lambda s: s.replace("\\t", "\t").replace("\\n", "\n")
frm, to = unesc(frm), unesc(to)
try:
    text = open(path, encoding="utf-8").read()
except OSError as e:
    print(f"{path}: {e.strerror}", file=sys.stderr)
    sys.exit(2)
n = text.count(frm)
if len(sys.argv) > 4 and n == 1:
    open(path, "w", encoding="utf-8").write(text.replace(frm, to))
print(n)
PY
}

# check_list: every line well-formed and its FROM found once (one python
# for the whole list: make check runs it).
check_list() {
	python3 - "$LIST" <<'PY'
import sys
path = sys.argv[1]
unesc = lambda s: s.replace("\\t", "\t").replace("\\n", "\n")
n = bad = 0
for line, raw in enumerate(open(path, encoding="utf-8"), 1):
    f = raw.rstrip("\n").split("\t")
    if not f[0] or f[0].startswith("#"):
        continue
    n += 1
    if len(f) != 5 or not f[4]:
        print(f"{path}:{line}: {f[0]}: not five TAB-separated fields (NAME FILE FROM TO TIER)")
        bad += 1
        continue
    try:
        count = open(f[1], encoding="utf-8").read().count(unesc(f[2]))
    except OSError as e:
        count = e.strerror
    if count != 1:
        print(f"{path}:{line}: {f[0]}: '{f[2]}' occurs {count} times in {f[1]}, not once")
        bad += 1
if bad:
    print(f"mutants: {bad} of {n} lines of {path} are out of date")
    sys.exit(1)
print(f"mutants: {n} mutants in {path}, each FROM found once")
PY
}

if [ "${1:-}" = --check ]; then
	check_list
	exit
fi
check_list || exit 1

SCRATCH=$(mktemp -d /tmp/fpgad-mutants.XXXXXX) || exit 1
[ -n "${KEEP:-}" ] || trap 'rm -rf "$SCRATCH"' EXIT
echo "mutants: copying the tree to $SCRATCH"
git ls-files -z --cached --others --exclude-standard |
	xargs -0 -I{} cp --parents -P {} "$SCRATCH/" 2>/dev/null
cd "$SCRATCH" || exit 1
echo "mutants: building (log $SCRATCH/build.log)"
make -j2 all > build.log 2>&1 || { tail -20 build.log; echo "mutants: the unmutated tree does not build"; exit 1; }

caught=0 survived=0 total=0 names=("$@")
while IFS=$'\t' read -r name file from to tier extra; do
	case $name in ''|'#'*) continue ;; esac
	if [ ${#names[@]} -gt 0 ] && [[ " ${names[*]} " != *" $name "* ]]; then
		continue
	fi
	total=$((total + 1))
	cp -p "$file" "$file.orig"
	substitute "$file" "$from" "$to" apply >/dev/null
	t0=$(date +%s)
	rc=0
	for t in $tier; do
		timeout "$TIMEOUT" make -j2 --no-print-directory "$t" \
			> "mutant-$name.log" 2>&1 < /dev/null || { rc=$?; break; }
	done
	mv "$file.orig" "$file"
	touch "$file"
	if [ "$rc" != 0 ]; then
		caught=$((caught + 1))
		printf 'caught    %-28s %-12s %4d s (%s exit %d)\n' "$name" "$tier" \
			$(($(date +%s) - t0)) "$t" "$rc"
	else
		survived=$((survived + 1))
		printf 'SURVIVED  %-28s %-12s %4d s (log %s)\n' "$name" "$tier" \
			$(($(date +%s) - t0)) "$SCRATCH/mutant-$name.log"
		KEEP=1
		trap - EXIT
	fi
done < "$ROOT/$LIST"
echo "mutants: $caught of $total caught, $survived survived"
[ "$survived" = 0 ]
