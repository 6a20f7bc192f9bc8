#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/gpu/xfer.sh - card memory transfers with GPU buffers (the GPU
# tier's part of them), from built binaries only:
#
#   tests/gpu/xfer.sh BUILD_DIR [LOG_DIR]
#
# Starts fpgad on the simulated card and runs gpu/gpu_xfer against it
# (tests/gpu/gpu_xfer.c says what it checks).  Logs go to LOG_DIR, else
# $OUT, else BUILD_DIR/gpu/logs: gpu_xfer.log and fpgad-xfer.log.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no GPU; the reason is printed).

set -u

BUILD=${1:?usage: tests/gpu/xfer.sh BUILD_DIR [LOG_DIR]}
LOGS=${2:-${OUT:-$BUILD/gpu/logs}}
PROG=$BUILD/gpu/gpu_xfer

if [ ! -x "$PROG" ]; then
	echo "gpu xfer: SKIP: $PROG not built (make gpu, with nvcc)"
	exit 77
fi
probe=$("$PROG" --probe 2>&1)
rc=$?
if [ $rc = 77 ]; then
	echo "gpu xfer: SKIP: ${probe}"
	exit 77
fi
[ $rc = 0 ] || { echo "gpu xfer: FAIL: $PROG --probe: $probe"; exit 1; }

mkdir -p "$LOGS"
RUNDIR=$(mktemp -d /tmp/fpgad-gpuxfer.XXXXXX)
PID=
cleanup() {
	[ -z "$PID" ] || kill -9 "$PID" 2>/dev/null || true
	rm -rf "$RUNDIR"
}
trap cleanup EXIT

printf '[daemon]\nlog_level = info\n[transfer]\nengines = 1\n' > "$RUNDIR/fpgad.conf"
"$BUILD/fpgad" -c "$RUNDIR/fpgad.conf" --runtime-dir "$RUNDIR" \
	2> "$LOGS/fpgad-xfer.log" &
PID=$!
URL=ipc://$RUNDIR/fpgad.sock
i=0
until "$BUILD/fpgactl" --url "$URL" status > /dev/null 2>&1; do
	kill -0 "$PID" 2>/dev/null || { echo "gpu xfer: FAIL: fpgad exited at start"; exit 1; }
	i=$((i + 1))
	[ $i -lt 600 ] || { echo "gpu xfer: FAIL: fpgad not answering"; exit 1; }
	sleep 0.05
done
echo "gpu xfer: $probe"
"$PROG" "$URL" > "$LOGS/gpu_xfer.log" 2>&1
rc=$?
cat "$LOGS/gpu_xfer.log"
kill -TERM "$PID"
wait "$PID" || { echo "gpu xfer: FAIL: fpgad did not stop cleanly"; rc=1; }
PID=
[ $rc = 0 ] && echo "gpu xfer: PASS" || echo "gpu xfer: FAIL (see $LOGS)"
exit $rc
