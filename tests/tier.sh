#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/tier.sh - make check's runner: one tier at a time, a banner before
# each, and a closing table of every tier's result, its test count and time.
#
#   tests/tier.sh SUMMARY K N NAME 'WHAT IT RUNS' make ARGS...   run tier K of N
#   tests/tier.sh SUMMARY --table                                print the table
#
# The table's time is the wall time since SUMMARY's folder's "started"
# file was written (make check writes it), else the tiers' times added up.
# A tier FAILs when its command exits non-zero, is SKIPped when it exited 0
# after a "tool: SKIP: why" (or "tool: SKIPPED") line and counted no test
# (with tests counted, it PASSes, the note saying what skipped), and PASSes
# otherwise.
# The count adds up what the runners print: CMocka's "[  PASSED  ] N
# test(s)", pytest's and the scripts' "N passed", libFuzzer's runs are not
# counted.  Each tier's whole output still goes to standard output, and to
# SUMMARY's folder as NAME.log.
set -u
summary=$1
shift

if [ "$1" = --table ]; then
	[ -f "$summary" ] || { echo "check: no tier ran"; exit 1; }
	pass=0 fail=0 skip=0 tests=0 secs=0
	printf '\n%-18s %-6s %7s %6s  %s\n' tier result tests time note
	printf '%-18s %-6s %7s %6s  %s\n' ---- ------ ----- ---- ----
	while IFS='	' read -r name result count t note; do
		printf '%-18s %-6s %7s %5ss  %s\n' "$name" "$result" "$count" "$t" "$note"
		case $result in
		PASS) pass=$((pass + 1)) ;;
		FAIL) fail=$((fail + 1)) ;;
		SKIP) skip=$((skip + 1)) ;;
		esac
		tests=$((tests + count)) secs=$((secs + t))
	done < "$summary"
	wall=$secs
	started=$(dirname "$summary")/started
	[ -f "$started" ] && wall=$(($(date +%s) - $(cat "$started")))
	printf '\n%d tests in %d tiers, %d min %02d s (tiers in the background overlap: %d min %02d s of tier time)\n' \
		"$tests" $((pass + fail + skip)) $((wall / 60)) $((wall % 60)) \
		$((secs / 60)) $((secs % 60))
	echo "check: $pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
	exit
fi

k=$1 n=$2 name=$3 what=$4
shift 4
log=$(dirname "$summary")/$name.log
printf '\n==== [%s/%s] %s: %s\n' "$k" "$n" "$name" "$what"
t0=$(date +%s)
set -o pipefail
"$@" 2>&1 | tee "$log"
rc=$?
t=$(($(date +%s) - t0))

count=$(awk '
	/^\[  PASSED  \] [0-9]+ test/ { n += $4; next }
	match($0, /(^|[^0-9])[0-9]+ passed/) {
		s = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", s); n += s
	}
	END { print n + 0 }' "$log")
note=
if [ "$rc" != 0 ]; then
	result=FAIL
	# The first line that says what failed ("0 failed" says nothing).
	note=$(grep -m1 'FAIL' "$log" ||
		grep -E '[Ff]ailed|[Ee]rror' "$log" | grep -v -E '(^|[^0-9])0 failed' | head -n 1)
	[ -n "$note" ] || note=$(grep -v '^\s*$' "$log" | tail -1)
	note=$(printf '%s' "$note" | cut -c1-70)
elif skipline=$(grep -m1 -E '^[a-z][a-z0-9 -]*: SKIP' "$log"); then
	# A tier of several parts that ran tests passes, saying what skipped.
	result=SKIP
	[ "$count" = 0 ] || result=PASS
	note=$(printf '%s' "$skipline" | sed 's/.*SKIP\(PED\)\?:\? *//')
	[ -n "$note" ] || note=$skipline
	[ "$result" = SKIP ] || note="partly skipped: $note"
	note=$(printf '%s' "$note" | cut -c1-70)
else
	result=PASS
fi
printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$result" "$count" "$t" "$note" >> "$summary"
printf '==== [%s/%s] %s: %s (%s s)\n' "$k" "$n" "$name" "$result" "$t"
exit "$rc"
