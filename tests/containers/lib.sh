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
