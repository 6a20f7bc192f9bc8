#!/bin/bash
# The hostile-client tier: each case attacks a real fpgad the way an
# outside user would and checks that fpgad holds.  One case per function
# in cases/*.sh, registered with hostile_case; each runs in its own
# process with its own scratch directory and a time limit, and prints one
# PASS, FAIL or SKIP line; a summary line and the tier's time close the
# run, and any failure makes the exit status non-zero.
#
# As root the tier creates the users it needs (fpgad-h1-TAG, fpgad-h2-TAG and
# the socket group fpgad-hg-TAG, TAG random per run) and removes them at the
# end, failed or not.
# Cases that need them skip, with the reason, when not run as root.
#
#   tests/hostile/run.sh [CASE...]        BUILD=build by default
set -u
here=$(cd "$(dirname "$0")" && pwd)
export BUILD=${BUILD:-build}
export HOSTILE_HERE=$here
# shellcheck source=tests/hostile/lib.sh
. "$here/lib.sh"
for f in "$here"/cases/*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

# One case, in this process: the runner calls itself for each.
if [ "${1:-}" = --case ]; then
	hostile_run_one "$2"
	exit $?
fi

hostile_main "$@"
