#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/gpu/run.sh - the GPU suite (DESIGN.md section 9, tier 5), from built
# binaries only (nothing is compiled here):
#
#   tests/gpu/run.sh BUILD_DIR [LOG_DIR]
#
# BUILD_DIR holds fpgad, fpgactl and gpu/gpu_client (make gpu).  Logs go to
# LOG_DIR, else $OUT, else BUILD_DIR/gpu/logs: one file per step, plus
# fpgad.log and summary.txt.
#
# The suite runs twice: without MPS, then with an MPS control daemon this
# script starts and stops itself (pipe and log directories under a temp
# directory), each time: fpgad with three C2H channels in GPU memory (gd:
# gpudirect, bn: bounce, sh: for shared readers) and one H2C channel (hc);
# fpgactl --json status shows cuda memory, both modes and how the GPU is
# shared (time-slicing, then mps); fpgactl topo reports the sim card as
# simulated and sh's (mode auto) choice with both probes' rates; fpgactl
# probe measures sh again (and is refused while sh is leased); two
# gpu_client processes at once, one per channel, each verifying every frame
# in place with a CUDA kernel (itself checked first: --selftest); a client
# that releases each frame on the
# verifier's CUDA stream (fpgad_frame_release_async) without waiting for
# any, and the same client releasing from the CPU (their rates printed
# side by side); the Python package
# (built into BUILD/python by make python) verifying every frame in place
# through torch.from_dlpack and cupy.from_dlpack, and a killed Python
# process's lease ending (python/tests/gpu_frames.py, with $PYTHON or
# python3; skipped where torch or cupy is missing); h2c frames made by
# fpgad_frame_write, by cudaMemcpyAsync from pinned memory and by a kernel,
# every one verified by the card, while gd and bn stream; two shared-read
# clients on one channel; a lessee that keeps its ring mapped after its
# lease sees none of the next lessee's frames; a lessee killed with the
# ring mapped leaves fpgad no descriptor more and the next lessee streams;
# SIGTERM and a clean exit.  Rings are exported as file descriptors (VMM):
# every client says so.  A third run forces the legacy export
# (FPGAD_TEST_GPU_EXPORT=ipc) on one channel: frames verified in place, a
# former lessee's mapping, a killed lessee.  Then a RoCE channel's GPU
# landing ring with a stand-in for the NIC (gpu/gpu_roce_landing): frames
# verified in place in a GPU ring, those with a lost packet not delivered.
# Environment: GPU_FRAMES
# (default 20000), GPU_PY_FRAMES (5000), GPU_FRAME_SIZE (1M),
# GPU_SHARED_FRAMES (5000), GPU_SLOTS (16), GPU_TIMEOUT_MS (10000),
# GPU_EXPORT (fd: the export the default runs must use; ipc on a GPU
# without VMM or POSIX file descriptor handles), GPU_RUNS (the runs made,
# of "no-mps export-ipc roce-landing mps", the default).
# GPU_TEST_HOST=1 runs the same steps with host memory and CPU checks on a
# machine without a GPU: a test of this script and gpu_client only.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no GPU; the reason is printed).

set -eu

SKIP=77
BUILD=${1:?usage: tests/gpu/run.sh BUILD_DIR [LOG_DIR]}
LOGS=${2:-${OUT:-$BUILD/gpu/logs}}
GPU_FRAMES=${GPU_FRAMES:-20000}
GPU_FRAME_SIZE=${GPU_FRAME_SIZE:-1M}
GPU_SHARED_FRAMES=${GPU_SHARED_FRAMES:-5000}
GPU_SLOTS=${GPU_SLOTS:-16}
GPU_TIMEOUT_MS=${GPU_TIMEOUT_MS:-10000}
GPU_EXPORT=${GPU_EXPORT:-fd}

FPGAD=$BUILD/fpgad
FPGACTL=$BUILD/fpgactl
CLIENT=$BUILD/gpu/gpu_client
H2C=$BUILD/gpu/gpu_h2c
STALE=$BUILD/gpu/gpu_stale
GPU_H2C_FRAMES=${GPU_H2C_FRAMES:-2000}

GPU_TEST_HOST=${GPU_TEST_HOST:-0}
GPU_PY_FRAMES=${GPU_PY_FRAMES:-5000}
PY=${PYTHON:-python3}
PY_TESTS=$(cd "$(dirname "$0")/../../python/tests" && pwd)

skip() { echo "gpu: SKIP: no GPU ($*)"; exit $SKIP; }

if [ "$GPU_TEST_HOST" = 1 ]; then
	MEMORY=host MODE_GD=host MODE_BN=host MODE_SH=host HOST_OK=--host-ok
	probe="GPU_TEST_HOST=1: host memory, frames checked on the CPU"
	smi=
else
	MEMORY=cuda MODE_GD=gpudirect MODE_BN=bounce MODE_SH=auto HOST_OK=
# --- is there a GPU? --------------------------------------------------------------

if command -v nvidia-smi >/dev/null 2>&1; then
	smi=$(nvidia-smi -L 2>&1) || skip "nvidia-smi: $(echo "$smi" | head -1)"
	[ -n "$smi" ] || skip "nvidia-smi lists no GPU"
else
	smi=
fi
if [ ! -x "$CLIENT" ]; then
	[ -n "$smi" ] || skip "nvidia-smi not found and $CLIENT not built"
	echo "gpu: FAIL: $CLIENT not built (make gpu, with nvcc)"
	exit 1
fi
probe=$("$CLIENT" --probe 2>&1) || {
	rc=$?
	[ $rc = $SKIP ] && skip "${probe#no GPU: }${smi:+; nvidia-smi: $smi}"
	echo "gpu: FAIL: $CLIENT --probe: exit $rc: $probe"
	exit 1
}
fi
for b in "$FPGAD" "$FPGACTL"; do
	[ -x "$b" ] || { echo "gpu: FAIL: $b not built"; exit 1; }
done

mkdir -p "$LOGS"
LOGS=$(cd "$LOGS" && pwd)
ALL_LOGS=$LOGS
TOPRUN=$(mktemp -d /tmp/fpgad-gpu.XXXXXX)
FPGAD_PID=
MPS_UP=
CLIENT_PIDS=
passed=0
failed=0

cleanup() {
	for p in $CLIENT_PIDS $FPGAD_PID; do
		kill -9 "$p" 2>/dev/null || true
	done
	[ -z "$MPS_UP" ] || echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
	rm -rf "$TOPRUN"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

say() { echo "$*" | tee -a "$ALL_LOGS/summary.txt"; }
pass() { passed=$((passed + 1)); say "PASS: [${label:-}] $*"; }
fail() { failed=$((failed + 1)); say "FAIL: [${label:-}] $*"; }

: > "$LOGS/summary.txt"
say "gpu: $(hostname), $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "gpu: $probe"
[ -z "$smi" ] || say "gpu: nvidia-smi: $smi"
{ nvidia-smi 2>&1 || true; } > "$LOGS/nvidia-smi.txt"
label=
# The checker every step below relies on, checked first.
if [ "$MEMORY" = cuda ]; then
	if out=$("$CLIENT" --selftest 2>&1); then
		pass "$out"
	else
		fail "$out"
	fi
fi

# py_step LOGNAME ARGS...: python/tests/gpu_frames.py with the package of
# $BUILD/python; exit 77 is a skip (no framework or no GPU there).
py_step() {
	name=$1
	shift
	rc=0
	PYTHONPATH=$BUILD/python${PYTHONPATH:+:$PYTHONPATH} "$PY" "$PY_TESTS/gpu_frames.py" \
		"$@" > "$LOGS/$name.log" 2>&1 || rc=$?
	line=$(grep '^{' "$LOGS/$name.log" | tail -1 || true)
	case $rc in
	0) pass "$name: $line" ;;
	77) say "SKIP: [$label] $name: $(tail -1 "$LOGS/$name.log")" ;;
	*) fail "$name: exit $rc: $(tail -1 "$LOGS/$name.log") (see $LOGS/$name.log)" ;;
	esac
}

# The Python package's GPU steps: every frame verified in place through
# torch.from_dlpack (released on torch's stream, then released once its
# tensors are gone) and cupy.from_dlpack, on gd and bn; a Python process
# killed with frames and tensors held loses its lease.
python_steps() {
	if ! command -v "$PY" >/dev/null 2>&1; then
		say "SKIP: [$label] python: no $PY on this host"
		return
	fi
	if [ ! -f "$BUILD/python/fpgad/__init__.py" ]; then
		fail "python: $BUILD/python not built (make python)"
		return
	fi
	say "gpu: python ($("$PY" --version 2>&1)): $GPU_PY_FRAMES frames per step"
	if [ "$MEMORY" = cuda ]; then
		libs="torch cupy"
	else
		libs=numpy
	fi
	for lib in $libs; do
		py_step "py-$lib-gd" verify --lib "$lib" --frames "$GPU_PY_FRAMES" \
			--timeout "$((GPU_TIMEOUT_MS / 1000))" "$URL" gd
		py_step "py-$lib-bn" verify --lib "$lib" --frames "$GPU_PY_FRAMES" \
			--timeout "$((GPU_TIMEOUT_MS / 1000))" "$URL" bn
		py_step "py-$lib-gd-sync" verify --lib "$lib" --release sync \
			--frames "$GPU_PY_FRAMES" --timeout "$((GPU_TIMEOUT_MS / 1000))" "$URL" gd
		py_step "py-$lib-kill" kill --lib "$lib" \
			--timeout "$((GPU_TIMEOUT_MS / 1000))" "$URL" gd
	done
}

# start_fpgad [EXPORT]: fpgad on $RUNDIR/fpgad.conf (its GPU rings
# exported as EXPORT: FPGAD_TEST_GPU_EXPORT), logging to $LOGS, until it
# answers on $URL.
start_fpgad() {
	env ${1:+FPGAD_TEST_GPU_EXPORT=$1} "$FPGAD" -v -c "$RUNDIR/fpgad.conf" --runtime-dir "$RUNDIR" 2> "$LOGS/fpgad.log" &
	FPGAD_PID=$!
	up=0
	i=0
	while [ $i -lt 600 ]; do
		if "$FPGACTL" --url "$URL" status > "$LOGS/status.txt" 2>&1; then
			up=1
			break
		fi
		kill -0 "$FPGAD_PID" 2>/dev/null || break
		sleep 0.05
		i=$((i + 1))
	done
	if [ $up = 0 ]; then
		fail "fpgad start (see $LOGS/fpgad.log)"
		tail -20 "$LOGS/fpgad.log" || true
		return 1
	fi
	pass "fpgad start: pid $FPGAD_PID, ready after $((i * 50)) ms or less"
}

# stop_fpgad: SIGTERM, a clean exit, and how many error lines it logged.
stop_fpgad() {
	kill -TERM "$FPGAD_PID"
	rc=0
	wait "$FPGAD_PID" || rc=$?
	FPGAD_PID=
	if [ $rc = 0 ]; then
		pass "fpgad stopped on SIGTERM with exit status 0"
	else
		fail "fpgad exit status $rc after SIGTERM (see $LOGS/fpgad.log)"
	fi
	errs=$(grep -c '^<[0-3]>' "$LOGS/fpgad.log" || true)
	say "gpu: fpgad logged $errs error lines"
}

# leases NAME N: wait (5 s at most) until channel NAME has N leases.
leases() {
	i=0
	until "$FPGACTL" --url "$URL" channels 2>/dev/null |
	      awk -v n="$1" -v want="$2" '$1 == n && $6 == want { f = 1 } END { exit !f }'; do
		[ $i -ge 100 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
}

# export_of LOG WANT: the client of LOG mapped its ring through export WANT.
export_of() {
	line=$(grep '^{' "$1" | tail -1 || true)
	if echo "$line" | grep -q "\"export\":\"$2\""; then
		pass "$(basename "$1" .log): ring mapped through export $2 (${line#*\"cpu_us_per_frame\"})"
	else
		fail "$(basename "$1" .log): not mapped through export $2: ${line:-no result}"
	fi
}

# stale_step EXPORT: a lessee that keeps its mapping sees nothing of the next.
stale_step() {
	rc=0
	"$STALE" -n 500 -e "$1" "$URL" gd > "$LOGS/stale.log" 2>&1 || rc=$?
	line=$(grep '^{' "$LOGS/stale.log" | tail -1 || true)
	if [ $rc = 0 ]; then
		pass "a former lessee's mapping: $line"
	else
		fail "a former lessee's mapping: exit $rc: ${line:-no result} (see $LOGS/stale.log)"
	fi
}

# killed_step: a lessee killed with gd's ring mapped and frames held: its
# lease ends, fpgad holds no descriptor more than before it, and the next
# lessee streams.
killed_step() {
	fds0=$(ls "/proc/$FPGAD_PID/fd" | wc -l)
	"$CLIENT" $HOST_OK --frames 100000000 --timeout "$GPU_TIMEOUT_MS" "$URL" gd \
		> "$LOGS/killed.log" 2>&1 &
	k=$!
	CLIENT_PIDS=$k
	leases gd 1 || say "  killed lessee: gd was never leased (see $LOGS/killed.log)"
	sleep 0.2
	kill -9 "$k" 2>/dev/null || true
	wait "$k" 2>/dev/null || true
	CLIENT_PIDS=
	i=0
	fds1=$(ls "/proc/$FPGAD_PID/fd" | wc -l)
	while [ "$fds1" -ne "$fds0" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
		fds1=$(ls "/proc/$FPGAD_PID/fd" | wc -l)
	done
	if leases gd 0 && [ "$fds1" -eq "$fds0" ]; then
		pass "killed lessee: its lease ended; fpgad holds $fds1 descriptors, as before it"
	else
		fail "killed lessee: gd leases $("$FPGACTL" --url "$URL" channels | awk '$1 == "gd" { print $6 }'), fpgad descriptors $fds0 before, $fds1 after"
	fi
	run_clients 2000 after-kill gd ""
}

# export_run EXPORT: fpgad with one gpudirect channel whose rings it
# exports as EXPORT (FPGAD_TEST_GPU_EXPORT): its frames verified in place,
# a former lessee's mapping, a killed lessee.  Uses suite's helpers (run
# it after suite).
export_run() {
	label=export-$1
	LOGS=$ALL_LOGS/$label
	RUNDIR=$TOPRUN/$label
	URL=ipc://$RUNDIR/fpgad.sock
	mkdir -p "$LOGS" "$RUNDIR"
	say "gpu: --- $label: FPGAD_TEST_GPU_EXPORT=$1 ---"
	{
		printf '[daemon]\nlog_level = debug\n\n[sim]\nlink = unlimited\n'
		channel gd 0 gpudirect block
	} > "$RUNDIR/fpgad.conf"
	start_fpgad "$1" || return
	run_clients "$GPU_SHARED_FRAMES" client-gd gd ""
	export_of "$LOGS/client-gd.log" "$1"
	stale_step "$1"
	killed_step
	stop_fpgad
}

# suite LABEL SHARING: one run of every step; logs in $ALL_LOGS/LABEL.
suite() {
	label=$1
	SHARING=$2
	[ "$MEMORY" = cuda ] || SHARING=
	LOGS=$ALL_LOGS/$label
	RUNDIR=$TOPRUN/$label
	URL=ipc://$RUNDIR/fpgad.sock
	mkdir -p "$LOGS" "$RUNDIR"
	say "gpu: --- $label ---"
	# --- fpgad with three channels in GPU memory ----------------------------------------------

	channel() { # name engine mode policy
		cat <<-EOT

	[channel $1]
	direction = c2h
	engine = $2
	slots = $GPU_SLOTS
	slot_size = $GPU_FRAME_SIZE
	frame_size = $GPU_FRAME_SIZE
	frame_rate = 0
	queue_depth = 8
	memory = $MEMORY
	mode = $3
	policy = $4
	EOT
	}

	{
		printf '[daemon]\nlog_level = debug\n\n[control]\nmax_clients = 64\n'
		printf '\n[sim]\nlink = unlimited\n'
		channel gd 0 $MODE_GD block
		channel bn 1 $MODE_BN block
		channel sh 2 $MODE_SH block
		if [ "$MEMORY" = cuda ]; then
			printf '\n[channel hc]\ndirection = h2c\nengine = 0\nslots = 8\n'
			printf 'slot_size = %s\nframe_size = %s\nmemory = cuda\nmode = gpudirect\n' \
				"$GPU_FRAME_SIZE" "$GPU_FRAME_SIZE"
		fi
	} > "$RUNDIR/fpgad.conf"
	cp "$RUNDIR/fpgad.conf" "$LOGS/fpgad.conf"

	start_fpgad || return

	# --- status shows cuda memory and both modes ------------------------------------------------

	# The channel object NAME of fpgactl --json status, on one line.
	chan_json() {
		tr -d ' \n' < "$LOGS/status.json" | sed 's/},{/}\n{/g' |
			grep "\"name\":\"$1\"" || true
	}

	if "$FPGACTL" --url "$URL" --json status > "$LOGS/status.json" 2>&1; then
		ok=1
		for want in gd:$MODE_GD bn:$MODE_BN; do
			n=${want%%:*}
			m=${want#*:}
			j=$(chan_json "$n")
			case $j in
			*'"memory":"'$MEMORY'"'*'"mode":"'"$m"'"'*) ;;
			*) ok=0; say "  channel $n: want memory $MEMORY, mode $m; got: $j" ;;
			esac
		done
		if [ "$MEMORY" = cuda ] &&
		   ! tr -d ' \n' < "$LOGS/status.json" | grep -q "\"gpu_sharing\":\"$SHARING\""; then
			ok=0
			say "  gpu_sharing: want $SHARING; got: $(tr -d ' \n' < "$LOGS/status.json" | sed 's/.*"gpu_sharing":"\([^"]*\)".*/\1/')"
		fi
		if [ $ok = 1 ]; then
			pass "status: gd $MEMORY/$MODE_GD, bn $MEMORY/$MODE_BN, GPU sharing ${SHARING:-none}"
		else
			fail "status (see $LOGS/status.json)"
		fi
	else
		fail "fpgactl --json status: $(head -1 "$LOGS/status.json")"
	fi

	# --- topology: the sim card says what it is; auto measured its choice -------------------

	if "$FPGACTL" --url "$URL" topo > "$LOGS/topo.txt" 2>&1 &&
	   "$FPGACTL" --url "$URL" --json topo > "$LOGS/topo.json" 2>&1; then
		j=$(tr -d ' \n' < "$LOGS/topo.json")
		ok=1
		case $j in
		*'"simulated":true'*) ;;
		*) ok=0; say "  topo: the sim card does not say it is simulated" ;;
		esac
		# sh runs with mode = auto: its reason carries the rates of both probes.
		if [ "$MEMORY" = cuda ]; then
			sh=$(echo "$j" | sed 's/.*"channels":\[//; s/},{/}\n{/g' |
				grep '"name":"sh"' || true)
			case $sh in
			*'"mode_reason":"gpudirect:'*'GB/svsbounce'*) ;;
			*'"mode_reason":"bounce:'*'gpudirect'*'GB/svsbounce'*) ;;
			*) ok=0; say "  topo: channel sh (mode auto) has no measured choice: $sh" ;;
			esac
		fi
		if [ $ok = 1 ]; then
			pass "topo: simulated card, channel sh: $(grep '^sh ' "$LOGS/topo.txt" || echo -)"
		else
			fail "topo (see $LOGS/topo.json)"
		fi
	else
		fail "fpgactl topo: $(head -1 "$LOGS/topo.txt")"
	fi

	# --- probe: sh (mode auto) measured again, idle; refused while leased --------------

	if [ "$MEMORY" = cuda ]; then
		if "$FPGACTL" --url "$URL" --json probe sh > "$LOGS/probe.json" 2>&1; then
			j=$(tr -d ' \n' < "$LOGS/probe.json")
			case $j in
			*'"mode":"gpudirect"'*|*'"mode":"bounce"'*)
				if echo "$j" | grep -q '"gpudirect_bps":0[,.}]\|"bounce_bps":0[,.}]'; then
					fail "probe sh: a mode was not measured: $j"
				else
					pass "probe sh: $j"
				fi ;;
			*) fail "probe sh: $j" ;;
			esac
		else
			fail "fpgactl probe sh: $(head -1 "$LOGS/probe.json")"
		fi
		# Leased: the engine is not the probe's to borrow.  The holder
		# is killed only once it releases frames (more than a ring's
		# worth delivered since it started): a consumer killed in its
		# CUDA start, which follows its lease, can leave the MPS server
		# taking no new client (seen with driver 580).
		sh_frames() {
			"$FPGACTL" --url "$URL" status 2>/dev/null |
				awk '$1 == "sh" && $2 == "c2h" { print $8 }'
		}
		f0=$(sh_frames)
		"$CLIENT" --frames 1000000 --timeout "$GPU_TIMEOUT_MS" "$URL" sh \
			> "$LOGS/probe-holder.log" 2>&1 &
		holder=$!
		CLIENT_PIDS="$CLIENT_PIDS $holder"
		i=0
		until [ "$(sh_frames)" -gt $((${f0:-0} + GPU_SLOTS)) ] 2>/dev/null ||
		      [ $i -ge 200 ]; do
			sleep 0.05
			i=$((i + 1))
		done
		if out=$("$FPGACTL" --url "$URL" probe sh 2>&1); then
			fail "probe sh while leased succeeded: $out"
		else
			case $out in
			*"is leased"*) pass "probe sh while leased: refused ($out)" ;;
			*) fail "probe sh while leased: $out" ;;
			esac
		fi
		kill "$holder" 2>/dev/null || true
		wait "$holder" 2>/dev/null || true
	fi

	# --- clients ------------------------------------------------------------------------

	# check_client LOG EXIT_STATUS FRAMES WHAT
	check_client() {
		line=$(grep '^{' "$1" | tail -1 || true)
		case $line in
		*'"errors":0,'*'"flagged":0,"seq_gaps":0,'*) clean=1 ;;
		*) clean=0 ;;
		esac
		if [ "$2" = 0 ] && [ $clean = 1 ] &&
		   echo "$line" | grep -q "\"frames\":$3,\"verified\":$3,"; then
			pass "$4: $line"
		else
			fail "$4: exit $2: ${line:-no result} (see $1)"
			grep -v '^{' "$1" | head -5 | sed 's/^/  /' | tee -a "$ALL_LOGS/summary.txt" || true
		fi
	}

	# Run gpu_client once per argument pair "LOGNAME CHANNEL [--shared]" at once.
	run_clients() { # frames then: logname channel flags ...
		frames=$1
		shift
		CLIENT_PIDS=
		names=
		while [ $# -ge 3 ]; do
			"$CLIENT" $3 $HOST_OK --frames "$frames" --timeout "$GPU_TIMEOUT_MS" \
				"$URL" "$2" > "$LOGS/$1.log" 2>&1 &
			CLIENT_PIDS="$CLIENT_PIDS $!"
			names="$names $1"
			shift 3
		done
		set -- $names
		for p in $CLIENT_PIDS; do
			rc=0
			wait "$p" || rc=$?
			check_client "$LOGS/$1.log" $rc "$frames" "$1"
			shift
		done
		CLIENT_PIDS=
	}

	say "gpu: $GPU_FRAMES frames of $GPU_FRAME_SIZE on gd (gpudirect) and bn (bounce) at once"
	run_clients "$GPU_FRAMES" client-gpudirect gd "" client-bounce bn ""
	if [ "$MEMORY" = cuda ]; then
		export_of "$LOGS/client-gpudirect.log" "$GPU_EXPORT"
		export_of "$LOGS/client-bounce.log" "$GPU_EXPORT"
	fi

	say "gpu: two shared readers on sh, $GPU_SHARED_FRAMES frames each"
	run_clients "$GPU_SHARED_FRAMES" shared-1 sh --shared shared-2 sh --shared

	# Many releases queued on the verifier's stream and none waited for: a
	# shape in which fpgad once slept through the stream's releases (they
	# wake nobody), 16 frames per 10 ms.  Then the same consumer releasing
	# from the CPU, alone on gd too; the rates are printed, not judged.
	say "gpu: $GPU_FRAMES frames on gd, each released on the verifier's stream, none waited for"
	run_clients "$GPU_FRAMES" client-async gd --async
	afps=$(grep '^{' "$LOGS/client-async.log" | tail -1 | sed -n 's/.*"fps":\([0-9.]*\).*/\1/p')
	run_clients "$GPU_FRAMES" client-cpu gd ""
	cfps=$(grep '^{' "$LOGS/client-cpu.log" | tail -1 | sed -n 's/.*"fps":\([0-9.]*\).*/\1/p')
	say "gpu: gd frames/s, stream release $afps, CPU release $cfps: stream/CPU $(awk -v a="${afps:-0}" -v c="${cfps:-0}" 'BEGIN { if (c > 0) printf "%.2f", a / c; else printf "-" }')"

	# --- Python: PyTorch and CuPy take every frame in place ----------------------------
	python_steps

	if [ "$MEMORY" = cuda ]; then
		# h2c frames from three producers while both c2h channels stream.
		say "gpu: h2c frames on hc ($GPU_H2C_FRAMES each way of filling) while gd and bn stream"
		"$CLIENT" --frames 1000000 --timeout "$GPU_TIMEOUT_MS" "$URL" gd \
			> "$LOGS/bg-gd.log" 2>&1 &
		bg1=$!
		"$CLIENT" --frames 1000000 --timeout "$GPU_TIMEOUT_MS" "$URL" bn \
			> "$LOGS/bg-bn.log" 2>&1 &
		bg2=$!
		CLIENT_PIDS="$bg1 $bg2"
		for fill in write memcpy kernel; do
			rc=0
			"$H2C" --fill $fill --frames "$GPU_H2C_FRAMES" \
				--timeout "$GPU_TIMEOUT_MS" "$URL" hc > "$LOGS/h2c-$fill.log" 2>&1 || rc=$?
			line=$(grep '^{' "$LOGS/h2c-$fill.log" | tail -1 || true)
			if [ $rc = 0 ]; then
				pass "h2c, filled by $fill: $line"
			else
				fail "h2c, filled by $fill: exit $rc: ${line:-no result} (see $LOGS/h2c-$fill.log)"
			fi
		done
		kill $bg1 $bg2 2>/dev/null || true
		wait $bg1 $bg2 2>/dev/null || true
		CLIENT_PIDS=

		stale_step "$GPU_EXPORT"
	fi
	killed_step

	# Status again: the counters moved and the channels are idle again.
	if "$FPGACTL" --url "$URL" --json status > "$LOGS/status-after.json" 2>&1 &&
	   tr -d ' \n' < "$LOGS/status-after.json" | grep -q '"name":"gd"'; then
		pass "status after the clients"
	else
		fail "status after the clients (see $LOGS/status-after.json)"
	fi

	# --- stop ---------------------------------------------------------------------------

	stop_fpgad
}

# A RoCE channel's GPU landing ring, every part but the NIC
# (gpu_roce_landing): a frame size that fills its last packet and one that
# does not, at two MTUs; then with the GPU's write ordering taken as none
# (the NIC's writes flushed at each poll).
roce_landing_step() {
	label=roce-landing
	for a in "128 1048576 4096 -" "64 300001 1024 -" "64 1048576 4096 none"; do
		set -- $a
		order=
		[ "$4" = - ] || order=$4
		log=$LOGS/roce-landing-$2${order:+-$order}.log
		if FPGAD_TEST_RDMA_ORDER=$order \
		   "$BUILD/gpu/gpu_roce_landing" -n "$1" -s "$2" -m "$3" > "$log" 2>&1; then
			pass "$(grep 'verified in place' "$log" | sed 's/^gpu-roce: PASS: //') (MTU $3${order:+, write ordering taken as $order})"
		else
			fail "gpu_roce_landing -n $1 -s $2 -m $3${order:+ (ordering $order)}: $(grep -m1 -E 'FAIL|SKIP' "$log" || tail -1 "$log")"
		fi
	done
	label=
}

runs=" ${GPU_RUNS:-no-mps export-ipc roce-landing mps} "
want() { case $runs in *" $1 "*) return 0 ;; esac; return 1; }
! want no-mps || suite no-mps time-slicing
[ "$MEMORY" != cuda ] || ! want export-ipc || export_run ipc
[ "$MEMORY" != cuda ] || ! want roce-landing || roce_landing_step
if [ "$MEMORY" = cuda ] && want mps; then
	if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
		export CUDA_MPS_PIPE_DIRECTORY=$TOPRUN/mps-pipe
		export CUDA_MPS_LOG_DIRECTORY=$TOPRUN/mps-log
		mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
		if nvidia-cuda-mps-control -d; then
			MPS_UP=1
			suite mps mps
			echo quit | nvidia-cuda-mps-control || true
			MPS_UP=
		else
			fail "nvidia-cuda-mps-control -d did not start"
		fi
	else
		say "gpu: no nvidia-cuda-mps-control: the MPS run is not made"
	fi
fi

say "$passed passed, $failed failed"
[ $failed = 0 ]
