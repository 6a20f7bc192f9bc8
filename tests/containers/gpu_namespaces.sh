#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/containers/gpu_namespaces.sh BUILD_DIR - GPU consumers in other
# namespaces: the GPU suite's verifying consumer (BUILD/gpu/gpu_client:
# CUDA IPC, a kernel checking each frame in place) leases a c2h channel in
# GPU memory and verifies 2,000 frames of 1 MiB, run under unshare in new
# PID (with its own /proc), IPC, network, UTS and mount namespaces, all at
# once, and as another uid in the socket's group.  A new PID namespace
# without its own /proc is the case CUDA cannot start in: the open must
# fail, and libfpgad's error must say why in words a container user acts
# on.  Skips (77 from gpu_client --probe) without a GPU.  The last line is
# 'N passed, N failed[, N skipped]'.  Needs root.
set -u
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
. "$(dirname "$0")/lib.sh"

CLIENT=$BUILD/gpu/gpu_client
FRAMES=2000
NOBODY=65534

if [ "$(id -u)" != 0 ] || ! have unshare || ! have setpriv; then
	skip gpu-namespaces "needs root, unshare and setpriv"
	summary
	exit
fi
if [ ! -x "$CLIENT" ]; then
	skip gpu-namespaces "no $CLIENT (make gpu)"
	summary
	exit
fi
"$CLIENT" --probe >/dev/null 2>&1
if [ $? = 77 ]; then
	skip gpu-namespaces "no GPU answers here"
	summary
	exit
fi
chmod 0755 "$T"
GROUP=$(getent group $NOBODY | cut -d: -f1)
RUNDIR=$T/gpu
mkdir -p "$RUNDIR"
chmod 0755 "$RUNDIR"
cat >"$RUNDIR.conf" <<EOC
[daemon]
runtime_dir = $RUNDIR
[control]
group = $GROUP
[channel g0]
memory = cuda
mode = gpudirect
slots = 16
slot_size = 1M
frame_size = 1M
EOC
"$BUILD/fpgad" -c "$RUNDIR.conf" 2>"$RUNDIR.log" &
FPGAD_PID=$!
FPGAD_PIDS="$FPGAD_PIDS $FPGAD_PID"
URL=ipc://$RUNDIR/fpgad.sock
for _ in $(seq 400); do
	"$BUILD/fpgactl" --url "$URL" version >/dev/null 2>&1 && break
	sleep 0.05
done

# run NAME COMMAND...: gpu_client under COMMAND; sets OUTPUT and RC.
run() {
	name=$1
	shift
	OUTPUT=$(timeout 120 "$@" "$CLIENT" --frames $FRAMES "$URL" g0 2>&1)
	RC=$?
}

expect_ok() {
	name=$1
	shift
	run "$name" "$@"
	if [ $RC = 0 ] && echo "$OUTPUT" | grep -q "\"verified\": *$FRAMES"; then
		pass "$name" "$(echo "$OUTPUT" | grep -o '"fps": *[0-9.]*' | head -n 1)"
	else
		fail "$name" "gpu_client exit $RC: $(echo "$OUTPUT" | tail -n 2 | tr '\n' ' ')"
	fi
}

expect_ok host
expect_ok pid+proc unshare --pid --fork --mount-proc
expect_ok ipc unshare --ipc
expect_ok net unshare --net
expect_ok uts unshare --uts
expect_ok all unshare --pid --fork --mount-proc --ipc --net --uts
expect_ok uid-in-group unshare --pid --fork --mount-proc --ipc --net --uts \
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups --
# The case CUDA cannot start in: a PID namespace whose /proc is the host's.
run pid-no-proc unshare --pid --fork
if [ $RC != 0 ] && echo "$OUTPUT" | grep -q "PID namespace whose /proc is another's" &&
   echo "$OUTPUT" | grep -q "mount /proc inside it (unshare --mount-proc)"; then
	pass pid-no-proc "refused, saying why: $(echo "$OUTPUT" | grep -o 'GPU .*' | head -n 1 | cut -c1-160)"
else
	fail pid-no-proc "exit $RC, no reason a container user can act on: $(echo "$OUTPUT" | tail -n 2 | tr '\n' ' ')"
fi
summary
