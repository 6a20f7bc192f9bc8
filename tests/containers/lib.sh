# SPDX-License-Identifier: MIT
# tests/containers/lib.sh - what the container tests share: PASS/FAIL/SKIP
# counting, a temporary directory, an fpgad on the simulated card in it,
# and the verifying consumer (consumer.c) built statically, so that it runs
# in a namespace or a container root filesystem with nothing else.
#
# Sourced with BUILD set (the build directory holding fpgad, fpgactl and
# libfpgad.a).  Each script ends with summary, which prints
# 'N passed, N failed[, N skipped]' and returns 1 when a case failed.

PASSED=0
FAILED=0
SKIPPED=0
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
# No bytecode left in the tree (k8s/, tests/containers/).
export PYTHONDONTWRITEBYTECODE=1

pass() { PASSED=$((PASSED + 1)); echo "PASS $1${2:+: $2}"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1${2:+: $2}"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "SKIP $1${2:+: $2}"; }

summary() {
	if [ "$SKIPPED" -gt 0 ]; then
		echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	else
		echo "$PASSED passed, $FAILED failed"
	fi
	[ "$FAILED" = 0 ]
}

# A directory of this run's own (sockets, specs, logs), world-traversable
# so that another uid reaches the sockets in it.
T=$(mktemp -d /tmp/fpgad-containers.XXXXXX)
chmod 0755 "$T"
FPGAD_PIDS=
CLEANUPS=
cleanup() {
	for p in $FPGAD_PIDS; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	for c in $CLEANUPS; do
		"$c"
	done
	rm -rf "$T"
}
trap cleanup EXIT
# A signal (a reader gone from the pipe too) still runs cleanup.
trap 'exit 130' INT TERM HUP PIPE

# start_fpgad NAME [GROUP]: an fpgad on the sim in $T/NAME, channels c2h0
# and c2h1 (host memory, 64 KiB frames) and h2c0; its socket's group GROUP
# (default: fpgad's own).  Sets URL and RUNDIR, appends to FPGAD_PIDS.
start_fpgad() {
	RUNDIR=$T/$1
	mkdir -p "$RUNDIR"
	chmod 0755 "$RUNDIR"
	cat >"$RUNDIR.conf" <<EOF
[daemon]
runtime_dir = $RUNDIR
[control]
${2:+group = $2}
[channel c2h0]
direction = c2h
engine = 0
memory = host
slots = 8
slot_size = 64K
frame_size = 64K
[channel c2h1]
direction = c2h
engine = 1
memory = host
slots = 8
slot_size = 64K
frame_size = 64K
frame_rate = 2000
[channel h2c0]
direction = h2c
engine = 2
memory = host
slots = 4
slot_size = 64K
frame_size = 64K
EOF
	"$BUILD/fpgad" -c "$RUNDIR.conf" 2>"$RUNDIR.log" &
	FPGAD_PID=$!
	FPGAD_PIDS="$FPGAD_PIDS $FPGAD_PID"
	URL=ipc://$RUNDIR/fpgad.sock
	for _ in $(seq 200); do
		[ -S "$RUNDIR/fpgad.sock" ] && [ -S "$RUNDIR/fpgad.handoff" ] &&
			"$BUILD/fpgactl" --url "$URL" version >/dev/null 2>&1 && return 0
		kill -0 "$FPGAD_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "fpgad did not start:" >&2
	sed 's/^/  /' "$RUNDIR.log" >&2
	return 1
}

# stop_fpgad PID: SIGTERM and wait.
stop_fpgad() {
	kill "$1" 2>/dev/null && wait "$1" 2>/dev/null
	FPGAD_PIDS=$(echo "$FPGAD_PIDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
	return 0
}

# build_consumer: $T/consumer, statically linked over $BUILD/libfpgad.a
# (run.sh builds it once and passes it on as $CONTAINERS_CONSUMER).
CONSUMER=${CONTAINERS_CONSUMER:-$T/consumer}
build_consumer() {
	[ -x "$CONSUMER" ] || "$HERE/build_consumer.sh" "$BUILD" "$CONSUMER"
}

have() { command -v "$1" >/dev/null 2>&1; }

# podman_detect ARGS...: how this host lets podman run a container at all,
# found by running `podman run --rm --network=none ... ARGS` until it exits
# 0; sets PODMAN (the command and its global options) and RUNARGS (the
# run options), and PODMAN_WHY (what failed before, or why none ran:
# then it returns 1).  Debian 12's crun refuses a hybrid cgroup hierarchy
# with a controller on cgroup2 ("cgroups in hybrid mode not supported");
# runc runs there.  Without CAP_SYS_RESOURCE the OCI runtime cannot raise
# the limits podman asks for by default, so ask for the ones this shell
# has (podman lowers its own RLIMIT_NPROC to 32768).
podman_detect() {
	nproc=$(awk '/^Max processes/ { print $4 }' /proc/self/limits)
	{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
	nofile=$(awk '/^Max open files/ { print $4 ":" $5 }' /proc/self/limits)
	PODMAN_WHY=
	for rt in "" "--runtime runc"; do
		for lim in "" "--ulimit nofile=$nofile --ulimit nproc=$nproc:$nproc"; do
			# shellcheck disable=SC2086
			if podman $rt run --rm --network=none $lim "$@" >/dev/null 2>"$T/podman.err"; then
				PODMAN="podman${rt:+ $rt}"
				RUNARGS="--network=none${lim:+ $lim}"
				return 0
			fi
			PODMAN_WHY="${PODMAN_WHY:+$PODMAN_WHY; }podman ${rt:+$rt }run${lim:+ with this shell's ulimits}: $(tail -n 1 "$T/podman.err")"
		done
	done
	return 1
}
