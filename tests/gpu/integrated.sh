#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/gpu/integrated.sh BUILD_DIR [LOG_DIR] - the integrated-GPU path
# (Jetson, IGX: rings in host memory the GPU reads in place) on a discrete
# GPU, from built binaries only (make gpu).  FPGAD_TEST_GPU_INTEGRATED=1
# makes fpgad take a GPU for an integrated one: its rings are host memfds
# registered with cudaHostRegister, handed over as host rings are, and
# libfpgad maps and registers them so that kernels read the frames where
# the card wrote them (over PCIe here, in the shared memory on a Tegra).
#
# Steps: status (text and --json) and topo say integrated; gpu_client
# verifies every frame in place with its CUDA kernel, twice (a fresh ring
# for each lease) and releasing on the kernel's stream; fpgactl capture
# verifies on the CPU; gpu_h2c fills h2c frames with fpgad_frame_write and
# with a kernel, each checked by the card; probe refuses an integrated
# channel; SIGTERM and a clean exit.  Then the same consumer on the same
# GPU without the override (a ring in GPU memory), for the rate beside it.
# Environment: IGPU_FRAMES (20000), IGPU_FRAME_SIZE (1M), IGPU_TIMEOUT_MS
# (10000), IGPU_COMPARE (1; 0 on a Tegra, whose GPU has no discrete path:
# no CUDA IPC).
#
# Exit status: 0 passed, 1 failed, 77 skipped (no GPU; the reason is printed).
set -u

BUILD=${1:?usage: tests/gpu/integrated.sh BUILD_DIR [LOG_DIR]}
LOGS=${2:-${OUT:-$BUILD/gpu/logs}/integrated}
FRAMES=${IGPU_FRAMES:-20000}
SIZE=${IGPU_FRAME_SIZE:-1M}
TIMEOUT_MS=${IGPU_TIMEOUT_MS:-10000}
FPGAD=$BUILD/fpgad
FPGACTL=$BUILD/fpgactl
CLIENT=$BUILD/gpu/gpu_client
H2C=$BUILD/gpu/gpu_h2c

[ -x "$CLIENT" ] || { echo "integrated: SKIP: $CLIENT not built (make gpu, with nvcc)"; exit 77; }
probe=$("$CLIENT" --probe 2>&1)
case $? in
0) ;;
77) echo "integrated: SKIP: $probe"; exit 77 ;;
*) echo "integrated: FAIL: $CLIENT --probe: $probe"; exit 1 ;;
esac

mkdir -p "$LOGS"
LOGS=$(cd "$LOGS" && pwd)
RUN=$(mktemp -d /tmp/fpgad-igpu.XXXXXX)
URL=ipc://$RUN/fpgad.sock
PID=
passed=0
failed=0
cleanup() {
	[ -z "$PID" ] || kill -9 "$PID" 2>/dev/null
	rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

say() { echo "$*" | tee -a "$LOGS/summary.txt"; }
pass() { passed=$((passed + 1)); say "PASS: [$label] $*"; }
fail() { failed=$((failed + 1)); say "FAIL: [$label] $*"; }
: > "$LOGS/summary.txt"
say "integrated: $probe"

# channel NAME DIRECTION ENGINE MODE
channel() {
	printf '\n[channel %s]\ndirection = %s\nengine = %s\nslots = 16\n' "$1" "$2" "$3"
	printf 'slot_size = %s\nframe_size = %s\nqueue_depth = 8\n' "$SIZE" "$SIZE"
	printf 'memory = cuda\nmode = %s\n' "$4"
	[ "$2" = h2c ] || printf 'frame_rate = 0\npolicy = block\n'
}
{
	printf '[daemon]\nlog_level = debug\n\n[sim]\nlink = unlimited\n'
	channel gd c2h 0 gpudirect
	channel au c2h 1 auto
	channel hc h2c 0 gpudirect
} > "$RUN/fpgad.conf"
cp "$RUN/fpgad.conf" "$LOGS/fpgad.conf"

# start LABEL OVERRIDE: fpgad with FPGAD_TEST_GPU_INTEGRATED=OVERRIDE.
start() {
	label=$1
	FPGAD_TEST_GPU_INTEGRATED=$2 "$FPGAD" -v -c "$RUN/fpgad.conf" --runtime-dir "$RUN" \
		2> "$LOGS/fpgad-$label.log" &
	PID=$!
	i=0
	until "$FPGACTL" --url "$URL" status > "$LOGS/status-$label.txt" 2>&1; do
		i=$((i + 1))
		if [ $i -ge 600 ] || ! kill -0 "$PID" 2>/dev/null; then
			fail "fpgad start (see $LOGS/fpgad-$label.log)"
			tail -5 "$LOGS/fpgad-$label.log"
			PID=
			return 1
		fi
		sleep 0.05
	done
	pass "fpgad start: pid $PID"
}

stop() {
	kill -TERM "$PID"
	if wait "$PID"; then
		pass "SIGTERM: clean exit"
	else
		fail "SIGTERM: exit $? (see $LOGS/fpgad-$label.log)"
	fi
	PID=
}

# consume NAME ARGS...: gpu_client's JSON line into $LOGS/NAME.json; its fps in $fps.
consume() {
	name=$1
	shift
	fps=0
	if "$CLIENT" --frames "$FRAMES" --timeout "$TIMEOUT_MS" "$@" \
		> "$LOGS/$name.json" 2> "$LOGS/$name.err"; then
		fps=$(sed 's/.*"fps":\([0-9.]*\).*/\1/' "$LOGS/$name.json")
		return 0
	fi
	return 1
}

# --- the integrated path ---------------------------------------------------------

# chan FILE NAME: the channel object NAME of a --json status or topo, on one line.
chan() {
	tr -d ' \n' < "$1" | sed 's/},{/}\n{/g' | grep "\"name\":\"$2\"" || true
}
# has TEXT WORD...: every WORD is in TEXT.
has() {
	t=$1
	shift
	for w in "$@"; do
		case $t in *"$w"*) ;; *) return 1 ;; esac
	done
}

if start igpu 1; then
	"$FPGACTL" --url "$URL" --json status > "$LOGS/status-igpu.json" 2>&1
	ok=1
	for n in gd au hc; do
		has "$(chan "$LOGS/status-igpu.json" $n)" '"memory":"cuda"' '"integrated":true' \
			'"mode":"gpudirect"' || { ok=0; say "  status: $n: $(chan "$LOGS/status-igpu.json" $n)"; }
	done
	if [ $ok = 1 ] && grep -q '^gd .* igpu ' "$LOGS/status-igpu.txt" &&
	   grep -q '^igpu: ' "$LOGS/status-igpu.txt"; then
		pass "status: gd, au and hc in cuda memory, integrated, gpudirect; the table says igpu"
	else
		fail "status (see $LOGS/status-igpu.*)"
	fi
	"$FPGACTL" --url "$URL" topo > "$LOGS/topo-igpu.txt" 2>&1
	"$FPGACTL" --url "$URL" --json topo > "$LOGS/topo-igpu.json" 2>&1
	au=$(chan "$LOGS/topo-igpu.json" au)
	if has "$au" '"integrated":true' '"mode":"gpudirect"' 'integratedGPU' '"gpudirect_bps":null'; then
		pass "topo: au (mode auto) integrated, nothing probed: $(grep '^au ' "$LOGS/topo-igpu.txt")"
	else
		fail "topo: au: $au"
	fi

	if consume igpu-gd "$URL" gd && grep -q '"integrated":true' "$LOGS/igpu-gd.json" &&
	   grep -q '"export":"host"' "$LOGS/igpu-gd.json"; then
		igpu_fps=$fps
		pass "gpu_client gd: $(cat "$LOGS/igpu-gd.json")"
	else
		igpu_fps=0
		fail "gpu_client gd: $(cat "$LOGS/igpu-gd.json" "$LOGS/igpu-gd.err")"
	fi
	if consume igpu-gd-again "$URL" gd; then
		pass "gpu_client gd, a second lease (a fresh ring): $fps frames/s"
	else
		fail "gpu_client gd, second lease: $(cat "$LOGS/igpu-gd-again.err")"
	fi
	if consume igpu-gd-async --async "$URL" gd; then
		pass "gpu_client gd, released on the kernel's stream: $fps frames/s"
	else
		fail "gpu_client gd --async: $(cat "$LOGS/igpu-gd-async.err")"
	fi
	if consume igpu-au "$URL" au; then
		pass "gpu_client au: $fps frames/s"
	else
		fail "gpu_client au: $(cat "$LOGS/igpu-au.err")"
	fi
	if "$FPGACTL" --url "$URL" capture gd -n 2000 --verify > "$LOGS/capture-igpu.txt" 2>&1 &&
	   grep -q "integrated GPU's host memory" "$LOGS/capture-igpu.txt"; then
		pass "capture gd --verify (CPU, no copy): $(grep -E '^(verified|rate)' "$LOGS/capture-igpu.txt" | tr '\n' ' ')"
	else
		fail "capture gd --verify: $(tail -3 "$LOGS/capture-igpu.txt")"
	fi
	for fill in write kernel; do
		if "$H2C" --fill $fill --frames 500 --timeout "$TIMEOUT_MS" "$URL" hc \
			> "$LOGS/h2c-$fill.json" 2> "$LOGS/h2c-$fill.err" &&
		   grep -q '"integrated":true' "$LOGS/h2c-$fill.json"; then
			pass "gpu_h2c --fill $fill: $(cat "$LOGS/h2c-$fill.json")"
		else
			fail "gpu_h2c --fill $fill: $(cat "$LOGS/h2c-$fill.json" "$LOGS/h2c-$fill.err")"
		fi
	done
	if out=$("$FPGACTL" --url "$URL" probe au 2>&1); then
		fail "probe au: not refused: $out"
	else
		case $out in
		*'integrated GPU'*) pass "probe au refused: $out" ;;
		*) fail "probe au: $out" ;;
		esac
	fi
	"$FPGACTL" --url "$URL" status > "$LOGS/status-igpu-after.txt" 2>&1
	stop
	if grep -Eq 'cannot (register|flush)|integrated GPU .*: cannot' "$LOGS/fpgad-igpu.log"; then
		fail "fpgad's log: $(grep -E 'cannot (register|flush)' "$LOGS/fpgad-igpu.log" | head -2)"
	fi
fi

# --- the same GPU as it is: a ring in its own memory ----------------------------------

if [ "${IGPU_COMPARE:-1}" = 0 ]; then
	say "integrated: no discrete run (IGPU_COMPARE=0)"
elif start discrete 0; then
	if consume discrete-gd "$URL" gd && grep -q '"integrated":false' "$LOGS/discrete-gd.json"; then
		pass "gpu_client gd, discrete (a ring in GPU memory): $(cat "$LOGS/discrete-gd.json")"
		say "integrated: frames/s of $SIZE frames verified in place: integrated path $igpu_fps, discrete $fps$(awk -v a="$igpu_fps" -v b="$fps" 'BEGIN { if (b > 0) printf " (ratio %.2f)", a / b }')"
	else
		fail "gpu_client gd, discrete: $(cat "$LOGS/discrete-gd.json" "$LOGS/discrete-gd.err")"
	fi
	stop
fi

say "integrated: $passed passed, $failed failed"
[ $failed = 0 ]
