#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/gpu/mps_users.sh BUILD LOG_DIR - what MPS does with fpgad and a
# consumer of another uid (README, "GPU consumers and MPS"), with an MPS
# control daemon of its own, plain and then multi-user (-M): fpgad (this
# uid) holds a CUDA channel, then a
# process of uid 65534 creates a CUDA context and allocates, under a time
# limit.  Prints what happened: the consumer's context came up (and how
# long it took), or it was still waiting when the limit struck.  Needs
# root (to switch uid) and a GPU; skips (77) otherwise.
set -u
BUILD=${1:?usage: tests/gpu/mps_users.sh BUILD LOG_DIR}
LOGS=${2:?usage: tests/gpu/mps_users.sh BUILD LOG_DIR}
LIMIT=${MPS_USERS_LIMIT:-20}
[ "$(id -u)" = 0 ] || { echo "mps-users: SKIP: needs root to run a second uid"; exit 77; }
command -v nvidia-cuda-mps-control >/dev/null || { echo "mps-users: SKIP: no nvidia-cuda-mps-control"; exit 77; }
command -v setpriv >/dev/null || { echo "mps-users: SKIP: no setpriv"; exit 77; }
mkdir -p "$LOGS"
T=$(mktemp -d /tmp/fpgad-mpsu.XXXXXX)
chmod 0755 "$T"
mkdir -p "$T/pipe" "$T/log" "$T/rt"
chmod 0777 "$T/pipe" "$T/log"
export CUDA_MPS_PIPE_DIRECTORY=$T/pipe CUDA_MPS_LOG_DIRECTORY=$T/log
pid=
mps=
stop_all() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	pid=
	[ -z "$mps" ] || { echo quit | nvidia-cuda-mps-control >/dev/null 2>&1; sleep 1; }
	mps=
}
trap 'stop_all; cp -r "$T/log" "$LOGS/mps-log" 2>/dev/null; rm -rf "$T"' EXIT
# A context and an allocation, as uid 65534, through the driver API.
cat > "$T/ctx.py" <<'PY'
import ctypes as C, time
t = time.time()
cu = C.CDLL("libcuda.so.1")
ctx, ptr = C.c_void_p(), C.c_uint64()
r = [cu.cuInit(0), cu.cuDevicePrimaryCtxRetain(C.byref(ctx), 0)]
r += [cu.cuCtxSetCurrent(ctx), cu.cuMemAlloc_v2(C.byref(ptr), 1 << 20)]
print("results %s after %.2f s" % (r, time.time() - t))
PY
chmod 0644 "$T/ctx.py"
printf '[channel g]\nmemory = cuda\nmode = bounce\nslots = 4\n' > "$T/fpgad.conf"

# try FLAGS: the control daemon started with FLAGS, fpgad, then uid 65534.
try() {
	what="nvidia-cuda-mps-control -d${1:+ $1}"
	# shellcheck disable=SC2086
	nvidia-cuda-mps-control -d $1 || { echo "mps-users: $what: did not start"; return; }
	mps=1
	"$BUILD/fpgad" -c "$T/fpgad.conf" --runtime-dir "$T/rt" 2> "$LOGS/fpgad$1.log" &
	pid=$!
	i=0
	until "$BUILD/fpgactl" --url "ipc://$T/rt/fpgad.sock" status > "$LOGS/status$1.txt" 2>&1; do
		i=$((i + 1))
		if [ $i -ge 400 ] || ! kill -0 $pid 2>/dev/null; then
			echo "mps-users: $what: fpgad did not start"
			stop_all
			return
		fi
		sleep 0.05
	done
	echo "mps-users: $what: fpgad (uid $(id -u)) $(grep '^gpu:' "$LOGS/status$1.txt")"
	t0=$(date +%s%N)
	timeout "$LIMIT" setpriv --reuid=65534 --regid=65534 --clear-groups \
		python3 "$T/ctx.py" > "$LOGS/other-uid$1.txt" 2>&1
	st=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	if [ $st = 124 ]; then
		echo "mps-users: $what: uid 65534's first CUDA call was still waiting after $LIMIT s while fpgad held the MPS server"
	else
		echo "mps-users: $what: uid 65534: exit $st after $ms ms: $(cat "$LOGS/other-uid$1.txt")"
	fi
	stop_all
}
try ""
try -M
exit 0
