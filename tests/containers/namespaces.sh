#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/containers/namespaces.sh BUILD_DIR - consumers in other namespaces:
# the verifying consumer (consumer.c) leases a host-memory c2h channel of
# an fpgad on the simulated card and checks 100 frames, run under unshare
# in new PID (--mount-proc), IPC, network, UTS and mount namespaces, all of
# them at once, as another uid (in the socket's group, and not: refused),
# and in a user namespace that maps its root to an unprivileged uid.
# Each case prints PASS, FAIL or SKIP with a reason; the last line is
# 'N passed, N failed[, N skipped]'.  Needs root (unshare, setpriv).
set -u
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
. "$(dirname "$0")/lib.sh"

FRAMES=100
NOBODY=65534

if [ "$(id -u)" != 0 ]; then
	skip namespaces "needs root (unshare of PID, mount and network namespaces, setpriv)"
	summary
	exit
fi
for t in unshare setpriv; do
	if ! have $t; then
		skip namespaces "$t is not installed (util-linux)"
		summary
		exit
	fi
done
build_consumer || { fail consumer "cannot be built"; summary; exit 1; }
chmod 0755 "$T"
# The socket's group: nogroup, so that uid 65534 with that group may
# connect and without it may not.
GROUP=$(getent group $NOBODY | cut -d: -f1)
if ! start_fpgad ns "$GROUP"; then
	fail fpgad "did not start"
	summary
	exit 1
fi
if [ "$(stat -c %g "$RUNDIR/fpgad.sock")" != $NOBODY ]; then
	fail socket "fpgad.sock's group is $(stat -c %G "$RUNDIR/fpgad.sock"), not $GROUP"
fi

# The pid and uid fpgad logged for the last lease of c2h0.
last_lease() {
	sed -n 's/.*channel c2h0: leased exclusively by pid \([0-9]*\) (uid \([0-9]*\)[,)].*/\1 \2/p' \
		"$RUNDIR.log" | tail -n 1
}

# consume NAME COMMAND...: run the consumer under COMMAND; sets OUTPUT and RC.
consume() {
	name=$1
	shift
	OUTPUT=$(FPGAD_URL=$URL FPGAD_CHANNEL=c2h0 timeout 30 "$@" "$CONSUMER" $FRAMES 2>&1)
	RC=$?
}

# expect_ok NAME WANT_UID_INSIDE WANT_UID_SEEN COMMAND...: the consumer must
# verify every frame, print uid WANT_UID_INSIDE, and fpgad must have seen
# the lease from uid WANT_UID_SEEN and a pid of its own namespace.
expect_ok() {
	name=$1 inside=$2 seen=$3
	shift 3
	before=$(grep -c 'leased exclusively' "$RUNDIR.log")
	consume "$name" "$@"
	after=$(grep -c 'leased exclusively' "$RUNDIR.log")
	lease=$(last_lease)
	lpid=${lease% *} luid=${lease#* }
	if [ $RC != 0 ] || ! echo "$OUTPUT" | grep -q "$FRAMES frames verified"; then
		fail "$name" "consumer exit $RC: $(echo "$OUTPUT" | tail -n 1)"
	elif ! echo "$OUTPUT" | grep -q " uid $inside pid "; then
		fail "$name" "consumer ran as another uid than $inside: $OUTPUT"
	elif [ "$after" -le "$before" ]; then
		fail "$name" "fpgad logged no lease"
	elif [ "$luid" != "$seen" ]; then
		fail "$name" "fpgad saw uid $luid, not $seen"
	elif [ "$lpid" = 1 ]; then
		fail "$name" "fpgad saw pid 1: a pid of another namespace"
	else
		pass "$name" "$(echo "$OUTPUT" | sed 's/^consumer: //'); fpgad saw pid $lpid uid $luid"
	fi
}

# expect_refused NAME COMMAND...: the consumer must be refused (EACCES on
# the socket) and lease nothing.
expect_refused() {
	name=$1
	shift
	before=$(grep -c 'leased exclusively' "$RUNDIR.log")
	consume "$name" "$@"
	after=$(grep -c 'leased exclusively' "$RUNDIR.log")
	if [ $RC = 0 ]; then
		fail "$name" "the consumer was let in: $OUTPUT"
	elif [ "$after" -gt "$before" ]; then
		fail "$name" "fpgad granted a lease"
	elif echo "$OUTPUT" | grep -qi 'permission denied'; then
		pass "$name" "refused: $(echo "$OUTPUT" | tail -n 1 | cut -c1-120)"
	else
		fail "$name" "refused, but not for permission: $(echo "$OUTPUT" | tail -n 1)"
	fi
}

# Can this kernel make the namespace at all?  (A container without
# CAP_SYS_ADMIN, or user namespaces turned off, cannot.)
can() { unshare "$@" true >/dev/null 2>&1; }

expect_ok host 0 0 env
for ns in "pid:--pid --fork --mount-proc" "ipc:--ipc" "net:--net" "uts:--uts" "mount:--mount"; do
	name=${ns%%:*} flags=${ns#*:}
	# shellcheck disable=SC2086
	if can $flags; then
		expect_ok "$name-namespace" 0 0 unshare $flags
	else
		skip "$name-namespace" "unshare $flags: $(unshare $flags true 2>&1 | tail -n 1)"
	fi
done
# In its own PID namespace the consumer is pid 1; fpgad must have seen its
# host pid (SO_PEERCRED translates it), which it logs and checks the
# handoff against.
consume pid-translation unshare --pid --fork --mount-proc
lpid=$(last_lease)
lpid=${lpid% *}
if [ $RC = 0 ] && echo "$OUTPUT" | grep -q ' pid 1$' && [ "$lpid" != 1 ]; then
	pass pid-translation "pid 1 in its namespace, pid $lpid to fpgad"
else
	fail pid-translation "exit $RC, consumer: $OUTPUT; fpgad saw pid $lpid"
fi
# A mount namespace whose /dev/shm and /tmp are empty tmpfs (this run's
# directory, the runtime directory and the consumer in it, bound back
# alone): the rings are memfds with no name, so the consumer shares no
# file system with fpgad but the sockets' directory.
if can --mount && have mount; then
	# The consumer must be in this run's directory, the one thing kept.
	shared=$CONSUMER
	CONSUMER=$T/consumer.here
	cp "$shared" "$CONSUMER"
	expect_ok mount-namespace-empty-tmp 0 0 unshare --mount --propagation private sh -c '
		set -e
		mount --bind "$0" /mnt
		mount -t tmpfs -o size=1m none /dev/shm
		mount -t tmpfs -o size=1m none /tmp
		mkdir -p "$0"
		mount --move /mnt "$0"
		[ -z "$(ls /dev/shm)" ] && [ "$(ls /tmp)" = "${0#/tmp/}" ]
		exec "$@"' "$T"
	CONSUMER=$shared
else
	skip mount-namespace-empty-tmp "no mount namespace, or no mount(8)"
fi
all="--pid --fork --mount-proc --ipc --net --uts --mount"
# shellcheck disable=SC2086
if can $all; then
	expect_ok all-namespaces 0 0 unshare $all
else
	skip all-namespaces "unshare $all refused"
fi

# Another uid: in the socket's group it is served, without it refused.
expect_ok other-uid-in-group $NOBODY $NOBODY setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups
expect_refused other-uid-not-in-group setpriv --reuid=$NOBODY --regid=12345 --clear-groups
# shellcheck disable=SC2086
if can $all; then
	expect_ok other-uid-all-namespaces $NOBODY $NOBODY \
		unshare $all setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups
fi

# A user namespace: root inside, mapped to uid 65534 outside (created by
# that unprivileged uid itself, as a rootless container runtime does).
# fpgad sees uid 65534; the socket's group (nogroup) is the consumer's
# gid outside, so it may connect.
userns="setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups unshare --user --map-root-user"
# shellcheck disable=SC2086
if $userns true >/dev/null 2>&1; then
	expect_ok userns-root-as-nobody 0 $NOBODY $userns
	expect_ok userns-all-namespaces 0 $NOBODY $userns --pid --fork --mount-proc --ipc --net --uts --mount
	expect_refused userns-not-in-group setpriv --reuid=$NOBODY --regid=12345 --clear-groups \
		unshare --user --map-root-user
else
	why=$($userns true 2>&1 | tail -n 1)
	skip userns-root-as-nobody "an unprivileged uid cannot make a user namespace here: $why"
fi
# Root's own user namespace, root mapped to root.
if can --user --map-root-user; then
	expect_ok userns-root-as-root 0 0 unshare --user --map-root-user
fi

summary
