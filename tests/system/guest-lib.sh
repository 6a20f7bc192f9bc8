# SPDX-License-Identifier: MIT
#
# tests/system/guest-lib.sh - how the guest suites of tests/system/run.sh
# report, sourced by each (tests/system/guest.sh, tests/net/rxe-guest.sh)
# with TAG set to the suite's name in capitals: one line per check,
# "TAG: ok|not ok N - what [seconds since the suite began]", on the serial
# console, where run.sh picks the suite's lines out by TAG.
n=0
failed=0
t0=$(cut -d' ' -f1 /proc/uptime)

# The guest's clock since the checks began, for each line.
at() { awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime; }
ok() { n=$((n + 1)); echo "$TAG: ok $n - $* [$(at) s]"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "$TAG: not ok $n - $* [$(at) s]"; }
note() { echo "$TAG: # $*"; }
# show FILE: the tail of a command's output, under a failed check.
show() { tail -n 15 "$1" | sed "s/^/$TAG:     /"; }
# check WHAT CMD...: CMD succeeds.
check() {
	what=$1
	shift
	if "$@" >/tmp/check.out 2>&1; then ok "$what"; else notok "$what"; show /tmp/check.out; fi
}
# wait_for SECONDS CMD...: poll CMD until it succeeds.
wait_for() {
	s=$1
	shift
	i=0
	while [ "$i" -lt $((s * 10)) ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
