#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/check.sh - make check: the tiers of tests/tiers, each through
# tests/tier.sh (a banner, its output in $BUILD/check/NAME.log, a line in
# the closing table).  The first tiers run alone, and a failure there ends
# it; the background ones start next, niced, their output printed whole
# when they end; the others run in turn meanwhile; then the table.
#
#   tests/check.sh [NAME...]        those tiers only (all by default)
#   tests/check.sh --list           the tiers, what each proves
#   tests/check.sh --goals GOALS    (tier.sh's command) make each of GOALS
#
# Environment: BUILD (default build), MAKE (default make), CHECK_JOBS
# (make -j for each goal; default the number of CPUs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
CHECK_JOBS=${CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}
table=$here/tiers

# --goals 'a b; c': `make a b`, then `make c`, the later ones run whatever
# the earlier gave; the status: 1 if one failed.
if [ "${1:-}" = --goals ]; then
	rc=0
	IFS=';' read -r -a goals <<< "$2"
	for g in "${goals[@]}"; do
		# shellcheck disable=SC2086
		$MAKE --no-print-directory -j"$CHECK_JOBS" BUILD="$BUILD" $g || rc=1
	done
	exit $rc
fi

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }
names=() when=() goals=() what=()
while IFS='|' read -r n w g d; do
	n=$(trim "$n")
	case $n in '' | '#'*) continue ;; esac
	names+=("$n") when+=("$(trim "$w")") goals+=("$(trim "$g")") what+=("$(trim "$d")")
done < "$table"

if [ "${1:-}" = --list ]; then
	for i in "${!names[@]}"; do printf '%-12s %s\n' "${names[$i]}" "${what[$i]}"; done
	exit 0
fi

# The tiers asked for, in the table's order (the first ones always).
pick=()
for i in "${!names[@]}"; do
	want=0
	[ $# = 0 ] || [ "${when[$i]}" = first ] && want=1
	for a in "$@"; do [ "$a" = "${names[$i]}" ] && want=1; done
	[ "$want" = 1 ] && pick+=("$i")
done
for a in "$@"; do
	found=0
	for n in "${names[@]}"; do [ "$n" = "$a" ] && found=1; done
	[ "$found" = 1 ] || { echo "check: no tier '$a' (tests/check.sh --list)" >&2; exit 2; }
done

dir=$BUILD/check
mkdir -p "$dir" && rm -f "$dir/summary" && date +%s > "$dir/started" || exit 1
n=${#pick[@]} k=0 rc=0 bg=() bgnames=()
run() {	# run INDEX K
	"$here/tier.sh" "$dir/summary" "$2" "$n" "${names[$1]}" "${what[$1]}" \
		"$here/check.sh" --goals "${goals[$1]}"
}
order=()
for w in first background -; do
	for i in "${pick[@]}"; do [ "${when[$i]}" = "$w" ] && order+=("$i"); done
done
for i in "${order[@]}"; do
	k=$((k + 1))
	case ${when[$i]} in
	first)
		run "$i" "$k" || { "$here/tier.sh" "$dir/summary" --table; exit 1; } ;;
	background)
		echo "==== [$k/$n] ${names[$i]}: started in the background"
		( renice -n 10 -p "$BASHPID" >/dev/null; run "$i" "$k" ) > "$dir/${names[$i]}.out" 2>&1 &
		bg+=("$!") bgnames+=("${names[$i]}") ;;
	*)
		run "$i" "$k" || rc=1 ;;
	esac
done
for j in "${!bg[@]}"; do
	wait "${bg[$j]}" || rc=1
	cat "$dir/${bgnames[$j]}.out"
done
"$here/tier.sh" "$dir/summary" --table || rc=1
exit $rc
