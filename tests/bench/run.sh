#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/bench/run.sh - fpgad's benchmarks (DESIGN.md section 10), from built
# binaries only (nothing is compiled here):
#
#   tests/bench/run.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR holds fpgad, fpgactl and bench/ (make bench-bin).  OUT_DIR (else
# $OUT, else BUILD_DIR/bench/out) receives BENCHMARKS.md, raw.jsonl (every
# program's JSON line) and one log per step; BENCHMARKS.md is also copied
# to $BENCH_MD (default: the top of the source tree; empty: no copy).
#
# Every figure is a ratio against a baseline measured in this run:
#   a. streaming throughput vs a raw copy loop of the same size and path
#      (memcpy for host memory; cudaMemcpyAsync pinned->device on a GPU)
#   b. wake-up latency, DMA end -> consumer running, vs a futex ping-pong
#   c. Status round trip vs a bare nng REQ/REP echo
#   d. fpgad CPU per frame (per thread name) and resident memory
#   e. scaling: 1-64 control clients, 1-16 streaming channels
#   f. a Python consumer (the package in BUILD/python, make python) vs the
#      C consumer on the same channel: frames/s and CPU per frame
#   g. card memory transfers vs the raw copy (tests/bench/xfer.sh)
#   h. on a GPU, stream-ordered release vs CPU release, C and Python,
#      without and with MPS (tests/bench/release.sh)
#
# Environment (defaults in brackets): BENCH_SECONDS [1.5] per throughput
# run, BENCH_SIZES [4K 64K 1M 4M 8M], BENCH_SLOTS [16], BENCH_QDEPTH [8],
# LAT_FRAMES [2000], LAT_RATE [1000] fps, LAT_SIZE [64K], CTL_SECONDS [1],
# CTL_PROCS [1 4 16 64], SCALE_CHANNELS [1 4 16], SCALE_SIZE [256K],
# SCALE_SECONDS [1.5], SCALE_RATE [4000] frames/s per channel in the
# second channel table, CPU_SIZE [1M], CPU_SECONDS [3], GPU_INFLIGHT [8],
# VERIFY_DEPTH [8] frames a verifying consumer holds while the GPU checks them,
# POLL_US [2000] busy-poll of the latency runs that use it, PY_SIZES
# [4K 64K 1M] frame sizes of f, PYTHON [python3] the interpreter of f.

set -eu

BUILD=${1:?usage: tests/bench/run.sh BUILD_DIR [OUT_DIR]}
OUTD=${2:-${OUT:-$BUILD/bench/out}}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_MD=${BENCH_MD-$TOP/BENCHMARKS.md}
BENCH_SECONDS=${BENCH_SECONDS:-1.5}
BENCH_SIZES=${BENCH_SIZES:-4K 64K 1M 4M 8M}
BENCH_SLOTS=${BENCH_SLOTS:-16}
BENCH_QDEPTH=${BENCH_QDEPTH:-8}
LAT_FRAMES=${LAT_FRAMES:-2000}
LAT_RATE=${LAT_RATE:-1000}
LAT_SIZE=${LAT_SIZE:-64K}
CTL_SECONDS=${CTL_SECONDS:-1}
CTL_PROCS=${CTL_PROCS:-1 4 16 64}
SCALE_CHANNELS=${SCALE_CHANNELS:-1 4 16}
SCALE_SIZE=${SCALE_SIZE:-256K}
SCALE_SECONDS=${SCALE_SECONDS:-1.5}
SCALE_RATE=${SCALE_RATE:-4000}
CPU_SIZE=${CPU_SIZE:-1M}
CPU_SECONDS=${CPU_SECONDS:-3}
GPU_INFLIGHT=${GPU_INFLIGHT:-8}
VERIFY_DEPTH=${VERIFY_DEPTH:-8}
POLL_US=${POLL_US:-2000}
PY_SIZES=${PY_SIZES:-4K 64K 1M}
PY=${PYTHON:-python3}

B=$BUILD/bench
for f in "$BUILD/fpgad" "$BUILD/fpgactl" "$B/bench_copy" "$B/bench_stream" \
	 "$B/bench_futex" "$B/bench_ctl"; do
	[ -x "$f" ] || { echo "bench: $f not built (make bench-bin)"; exit 1; }
done
mkdir -p "$OUTD"
OUTD=$(cd "$OUTD" && pwd)
BUILD=$(cd "$BUILD" && pwd)
B=$BUILD/bench
RUNDIR=$(mktemp -d /tmp/fpgad-bench.XXXXXX)
RAW=$OUTD/raw.jsonl
MD=$OUTD/BENCHMARKS.md
FPGAD_PID=
URL=
BENCH_WHO=bench
. "$TOP/tests/bench/lib.sh"
: > "$RAW"


# --- the machine ---------------------------------------------------------------------

T0=$(date +%s)
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
NCPU=$(grep -c '^processor' /proc/cpuinfo)
GPU=
if GPU_PROBE=$("$B/bench_copy" probe 2>&1); then
	GPU=$GPU_PROBE
	if command -v nvidia-smi >/dev/null 2>&1; then
		GPU=$(nvidia-smi --query-gpu=name,driver_version,pci.bus_id \
			--format=csv,noheader 2>/dev/null | head -1 || echo "$GPU_PROBE")
		nvidia-smi > "$OUTD/nvidia-smi.txt" 2>&1 || true
	fi
	log "GPU: $GPU"
else
	log "no GPU: ${GPU_PROBE#no GPU: }: host memory only"
fi

{
	echo "# fpgad benchmarks"
	echo
	echo "Every figure is a ratio against a baseline measured in the same run"
	echo "(DESIGN.md section 10); the simulated card (sim backend, link unlimited)"
	echo "stands in for the hardware, so absolute numbers are this machine's."
	echo
	echo "- machine: $(hostname), $CPU_MODEL, $NCPU CPUs, $(uname -sr)"
	echo "- GPU: ${GPU:-none (${GPU_PROBE#no GPU: })}"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- command: \`tests/bench/run.sh $1 ${2:-}\` ($("$BUILD/fpgad" --version 2>&1 | head -1))"
	echo "- settings: BENCH_SECONDS=$BENCH_SECONDS BENCH_SLOTS=$BENCH_SLOTS BENCH_QDEPTH=$BENCH_QDEPTH" \
		"LAT_FRAMES=$LAT_FRAMES LAT_RATE=$LAT_RATE LAT_SIZE=$LAT_SIZE CTL_SECONDS=$CTL_SECONDS" \
		"SCALE_SIZE=$SCALE_SIZE SCALE_SECONDS=$SCALE_SECONDS SCALE_RATE=$SCALE_RATE CPU_SIZE=$CPU_SIZE CPU_SECONDS=$CPU_SECONDS"
	echo "- raw results: raw.jsonl (one JSON line per run), logs beside it"
} > "$MD"

# --- a. streaming throughput -------------------------------------------------------------

{
	header
	e=0
	for s in $BENCH_SIZES; do
		channel "h_$s" $e "$s" host host 0
		e=$((e + 1))
	done
} > "$RUNDIR/host.conf"
fpgad_start host
{
	echo
	echo "## a. Streaming throughput, host memory"
	echo
	echo "One consumer takes and releases every frame (policy block: nothing is"
	echo "dropped), $BENCH_SLOTS slots, $BENCH_QDEPTH transfers in flight. Baseline: memcpy"
	echo "of the frame size from one buffer into a ring of $BENCH_SLOTS buffers, in a loop."
	echo "Verified: every frame checked on the CPU (fpgad_simframe_check). fpgad CPU"
	echo "per frame includes the sim engine threads that stand in for the card."
	echo
	echo "| frame | memcpy GB/s | fpgad GB/s | frames/s | fpgad/memcpy | verified GB/s | verified/memcpy | fpgad CPU us/frame |"
	echo "|---|---|---|---|---|---|---|---|"
} >> "$MD"
for s in $BENCH_SIZES; do
	run "copy-host-$s" "$B/bench_copy" host "$s" "$BENCH_SLOTS" "$BENCH_SECONDS"
	base=$(jget "$LINE" gbps)
	stream "stream-host-$s" "h_$s" none
	got=$(jget "$LINE" gbps)
	fps=$(jget "$LINE" fps)
	cpu=$(jget "$LINE" daemon_run_us_per_frame)
	[ "$(jget "$LINE" gaps)" = 0 ] || log "stream-host-$s: sequence gaps with policy block"
	stream "verify-host-$s" "h_$s" cpu
	ver=$(jget "$LINE" gbps)
	[ "$(jget "$LINE" errors)" = 0 ] || die "verify-host-$s: verify errors: $LINE"
	echo "| $s | $base | $got | $fps | $(ratio "$got" "$base") | $ver | $(ratio "$ver" "$base") | $cpu |" >> "$MD"
done
fpgad_stop

# gpu_rows LABEL: the GPU throughput table, once per GPU sharing setting.
gpu_rows() {
	{
		header
		e=0
		for s in $BENCH_SIZES; do
			channel "gd_$s" $e "$s" cuda gpudirect 0
			channel "bn_$s" $((e + 8)) "$s" cuda bounce 0
			e=$((e + 1))
		done
	} > "$RUNDIR/cuda-$1.conf"
	fpgad_start "cuda-$1"
	sharing=$("$BUILD/fpgactl" --url "$URL" --json status | tr -d ' \n' |
		sed -n 's/.*"gpu_sharing":"\([^"]*\)".*/\1/p')
	{
		echo
		echo "## a. Streaming throughput, GPU memory, $1 (fpgad reports GPU sharing: ${sharing:-?})"
		echo
		echo "One consumer per run; gpudirect: the sim card's DMA is a cudaMemcpyAsync from"
		echo "its pinned card memory straight into the GPU slot; bounce: into pinned host"
		echo "staging, then a copy into the GPU slot. Baseline (raw): cudaMemcpyAsync from"
		echo "pinned host memory into a ring of $BENCH_SLOTS device buffers, $GPU_INFLIGHT copies in"
		echo "flight on as many streams. Verified: every frame checked in place by the CUDA"
		echo "kernel of tests/gpu before it is released ($VERIFY_DEPTH frames in flight);"
		echo "async: released on the verifier's stream (fpgad_frame_release_async), with the"
		echo "consumer's own CPU time per frame."
		echo
		echo "| frame | raw GB/s | gpudirect GB/s | bounce GB/s | gpudirect/raw | bounce/raw | gpudirect/bounce | gd verified GB/s | bn verified GB/s | verified gd/raw | gd verified async GB/s | async gd/raw | consumer CPU us/frame cpu / async | fpgad CPU us/frame gd / bn |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	} >> "$MD"
	for s in $BENCH_SIZES; do
		run "copy-gpu-$1-$s" "$B/bench_copy" gpu "$s" "$BENCH_SLOTS" "$GPU_INFLIGHT" "$BENCH_SECONDS"
		base=$(jget "$LINE" gbps)
		stream "stream-gd-$1-$s" "gd_$s" none
		gd=$(jget "$LINE" gbps)
		gdcpu=$(jget "$LINE" daemon_run_us_per_frame)
		[ "$(jget "$LINE" mode)" = gpudirect ] || log "gd_$s runs in mode $(jget "$LINE" mode)"
		stream "stream-bn-$1-$s" "bn_$s" none
		bn=$(jget "$LINE" gbps)
		bncpu=$(jget "$LINE" daemon_run_us_per_frame)
		stream "verify-gd-$1-$s" "gd_$s" gpu
		gdv=$(jget "$LINE" gbps)
		ccpu=$(jget "$LINE" client_cpu_us_per_frame)
		[ "$(jget "$LINE" errors)" = 0 ] || die "verify-gd-$s: verify errors: $LINE"
		stream "verify-bn-$1-$s" "bn_$s" gpu
		bnv=$(jget "$LINE" gbps)
		[ "$(jget "$LINE" errors)" = 0 ] || die "verify-bn-$s: verify errors: $LINE"
		stream "verify-gd-async-$1-$s" "gd_$s" gpu --async
		gda=$(jget "$LINE" gbps)
		acpu=$(jget "$LINE" client_cpu_us_per_frame)
		[ "$(jget "$LINE" errors)" = 0 ] || die "verify-gd-async-$s: verify errors: $LINE"
		echo "| $s | $base | $gd | $bn | $(ratio "$gd" "$base") | $(ratio "$bn" "$base") | $(ratio "$gd" "$bn") | $gdv | $bnv | $(ratio "$gdv" "$base") | $gda | $(ratio "$gda" "$base") | $ccpu / $acpu | $gdcpu / $bncpu |" >> "$MD"
	done
	fpgad_stop
}

if [ -n "$GPU" ]; then
	gpu_rows no-mps
	if mps_start; then
		gpu_rows mps
		mps_stop
	else
		log "no MPS control daemon: the MPS rows are not measured"
	fi

	run gpuslice "$B/bench_gpuslice" 2000
	{
		echo
		echo "### Why a verifying consumer lags: GPU contexts of two processes"
		echo
		echo "The sim card's DMA into GPU memory is CUDA copies in fpgad's own CUDA"
		echo "context; the verifying consumer's kernels run in another process's, and the"
		echo "GPU time-slices the two contexts. bench_gpuslice: one process keeps 8"
		echo "host-to-GPU copies of 1 MiB in flight, another runs verify kernels on a"
		echo "1 MiB frame back to back (launch to result on the host)."
		echo
		echo "| | p50 us | p99 us | copies GB/s |"
		echo "|---|---|---|---|"
		echo "| verify kernels alone | $(jget "$LINE" alone_p50_us) | $(jget "$LINE" alone_p99_us) | |"
		echo "| copies alone | | | $(jget "$LINE" copies_alone_gbps) |"
		echo "| both at once | $(jget "$LINE" beside_copies_p50_us) | $(jget "$LINE" beside_copies_p99_us) | $(jget "$LINE" copies_beside_kernels_gbps) |"
	} >> "$MD"

	# The card's side of a verifying consumer: queue depth and DMA time.
	{
		header
		channel vq 0 1M cuda gpudirect 0
	} > "$RUNDIR/vq.conf"
	fpgad_start vq
	# qstat NAME: fpgad's counters of channel vq after step NAME.
	qstat() {
		"$BUILD/fpgactl" --url "$URL" --json stats vq | tr -d ' \n' > "$RUNDIR/$1.stats"
		cat "$RUNDIR/$1.stats" >> "$OUTD/vq.log"
		echo >> "$OUTD/vq.log"
	}
	# per_transfer A B: mean queue depth and DMA us per transfer between them.
	per_transfer() {
		a=$(cat "$RUNDIR/$1.stats")
		b=$(cat "$RUNDIR/$2.stats")
		awk -v f0="$(jget "$a" frames)" -v f1="$(jget "$b" frames)" \
		    -v q0="$(jget "$a" queued_avg)" -v q1="$(jget "$b" queued_avg)" \
		    -v d0="$(jget "$a" dma_ns_total)" -v d1="$(jget "$b" dma_ns_total)" \
		    -v s0="$(jget "$a" stalls)" -v s1="$(jget "$b" stalls)" \
		    'BEGIN { n = f1 - f0; if (n <= 0) { print "- | - | -"; exit }
			     printf "%.2f | %.1f | %d", (q1 * f1 - q0 * f0) / n,
			            (d1 - d0) / n / 1000, s1 - s0 }'
	}
	qstat vq0
	stream vq-none vq none
	none_fps=$(jget "$LINE" fps)
	qstat vq1
	stream vq-gpu vq gpu
	gpu_fps=$(jget "$LINE" fps)
	qstat vq2
	fpgad_stop
	{
		echo
		echo "The card's side (fpgad's counters, \`fpgactl --json stats\`): one 1 MiB"
		echo "gpudirect channel, $BENCH_SLOTS slots, queue_depth $BENCH_QDEPTH, policy block;"
		echo "a consumer that only releases, then one that verifies every frame in place."
		echo
		echo "| consumer | frames/s | card queue depth at each completion | DMA us per transfer (queued to done) | stalls |"
		echo "|---|---|---|---|---|"
		echo "| releases at once | $none_fps | $(per_transfer vq0 vq1) |"
		echo "| verifies on the GPU ($VERIFY_DEPTH in flight) | $gpu_fps | $(per_transfer vq1 vq2) |"
	} >> "$MD"
fi

# --- h. stream-ordered release against CPU release ----------------------------------------

if [ -n "$GPU" ]; then
	"$TOP/tests/bench/release.sh" "$BUILD" "$OUTD" "$MD" || die "stream-ordered release (see $OUTD)"
fi

# --- f. a Python consumer against the C consumer ------------------------------------------

# python_rows: bench_python.py (BUILD/python, take + DLPack wrap + release
# per frame) and bench_stream on the same channel, one after the other.
python_rows() {
	if ! PYTHONPATH=$BUILD/python "$PY" -c 'import fpgad, numpy' > "$OUTD/python-probe.log" 2>&1; then
		{
			echo
			echo "## f. Python consumer"
			echo
			echo "Not measured: $PY cannot import fpgad from $BUILD/python ($(tail -1 "$OUTD/python-probe.log"); make python)."
		} >> "$MD"
		return
	fi
	{
		header
		e=0
		for s in $PY_SIZES; do
			channel "py_h_$s" $e "$s" host host 0
			[ -z "$GPU" ] || channel "py_gd_$s" $((e + 8)) "$s" cuda gpudirect 0
			e=$((e + 1))
		done
	} > "$RUNDIR/py.conf"
	fpgad_start py
	{
		echo
		echo "## f. Python consumer against the C consumer"
		echo
		echo "The same channel (policy block, $BENCH_SLOTS slots) read for $BENCH_SECONDS s by"
		echo "bench_stream (C: fpgad_frame_wait, fpgad_frame_release; run before and after"
		echo "Python, the C columns are the mean of both) and by"
		echo "tests/bench/bench_python.py ($("$PY" --version 2>&1)): \`with ch.wait() as f: t ="
		echo "from_dlpack(f)\` per frame (numpy.from_dlpack in host memory, torch.from_dlpack"
		echo "in GPU memory, or the bare capsule without torch), so each release runs"
		echo "deferred from the tensor's DLPack deleter. Python's overhead per frame is its"
		echo "consumer CPU time per frame less C's (getrusage over the window)."
		echo
		echo "| memory | frame | wrap | C frames/s | Python frames/s | Python/C | C CPU us/frame | Python CPU us/frame | Python overhead us/frame |"
		echo "|---|---|---|---|---|---|---|---|---|"
	} >> "$MD"
	for m in host ${GPU:+gd}; do
		for s in $PY_SIZES; do
			ch=py_h_$s
			[ "$m" = host ] || ch=py_gd_$s
			stream "py-c-$m-$s" "$ch" none
			cfps=$(jget "$LINE" fps)
			ccpu=$(jget "$LINE" client_cpu_us_per_frame)
			run "py-python-$m-$s" env PYTHONPATH="$BUILD/python" "$PY" \
				"$TOP/tests/bench/bench_python.py" --seconds "$BENCH_SECONDS" \
				--warmup $((BENCH_SLOTS * 2)) "$URL" "$ch"
			pfps=$(jget "$LINE" fps)
			pcpu=$(jget "$LINE" client_cpu_us_per_frame)
			[ "$(jget "$LINE" gaps)" = 0 ] || log "py-python-$m-$s: sequence gaps with policy block"
			wrap=$(jget "$LINE" wrap)
			pmem=$(jget "$LINE" memory)
			# C again after Python: the mean of both cancels drift.
			stream "py-c2-$m-$s" "$ch" none
			cfps=$(awk -v a="$cfps" -v b="$(jget "$LINE" fps)" 'BEGIN { printf "%.1f", (a + b) / 2 }')
			ccpu=$(awk -v a="$ccpu" -v b="$(jget "$LINE" client_cpu_us_per_frame)" \
				'BEGIN { printf "%.2f", (a + b) / 2 }')
			over=$(awk -v p="$pcpu" -v c="$ccpu" 'BEGIN { printf "%.2f", p - c }')
			echo "| $pmem | $s | $wrap | $cfps | $pfps | $(ratio "$pfps" "$cfps") | $ccpu | $pcpu | $over |" >> "$MD"
		done
	done
	fpgad_stop
}
python_rows

# --- b. wake-up latency -----------------------------------------------------------------------

{
	header
	channel lat_host 0 "$LAT_SIZE" host host "$LAT_RATE"
	PACING=wait channel lat_host_wait 5 "$LAT_SIZE" host host "$LAT_RATE"
	channel lat_host_poll 3 "$LAT_SIZE" host host "$LAT_RATE"
	printf 'poll_us = %s\n' "$POLL_US"
	if [ -n "$GPU" ]; then
		channel lat_gd 1 "$LAT_SIZE" cuda gpudirect "$LAT_RATE"
		PACING=wait channel lat_gd_wait 6 "$LAT_SIZE" cuda gpudirect "$LAT_RATE"
		channel lat_bn 2 "$LAT_SIZE" cuda bounce "$LAT_RATE"
		channel lat_gd_poll 4 "$LAT_SIZE" cuda gpudirect "$LAT_RATE"
		printf 'poll_us = %s\n' "$POLL_US"
	fi
} > "$RUNDIR/lat.conf"
fpgad_start lat
interval=$((1000000 / LAT_RATE))
run futex "$B/bench_futex" "$LAT_FRAMES" "$interval"
fp50=$(jget "$LINE" lat_p50_us)
fp99=$(jget "$LINE" lat_p99_us)
fmax=$(jget "$LINE" lat_max_us)
{
	echo
	echo "## b. Wake-up latency"
	echo
	echo "From DMA completion (fpgad_frame.t_dma_end_ns, stamped by the sim card) to"
	echo "the consumer running (clock_gettime right after fpgad_frame_wait returns),"
	echo "CLOCK_MONOTONIC, $LAT_FRAMES frames of $LAT_SIZE at $LAT_RATE frames/s so the consumer"
	echo "sleeps when each frame lands. The path includes the card's completion"
	echo "reaching fpgad's streaming thread, the publish, and the futex wake of the"
	echo "consumer. Baseline: a bare futex ping-pong between two processes over shared"
	echo "memory, one wake every $interval us, timestamp before FUTEX_WAKE to the woken process."
	echo
	echo "Busy-poll rows: the channel's poll_us and the consumer's"
	echo "fpgad_channel_set_poll() at $POLL_US us, so neither sleeps between frames; the"
	echo "CPU column (fpgad's own threads, the simulated card's aside) says what that"
	echo "costs fpgad."
	echo
	echo "Rows without a suffix run the default pacing (hybrid: fpgad's streaming thread"
	echo "sleeps until a completion is due and spins briefly, so only the consumer is"
	echo "woken); \"wait\" rows let the card's completion wake it (two wake-ups in series)."
	echo
	echo "| path | p50 us | p99 us | max us | p50 / futex | p99 / futex | fpgad CPU us/frame | fpgad CPU, % of a core |"
	echo "|---|---|---|---|---|---|---|---|"
	echo "| futex ping-pong (baseline) | $fp50 | $fp99 | $fmax | 1.00 | 1.00 | | |"
} >> "$MD"
for c in lat_host lat_host_wait lat_host_poll ${GPU:+lat_gd lat_gd_wait lat_bn lat_gd_poll}; do
	poll=0
	case $c in *_poll) poll=$POLL_US ;; esac
	run "latency-$c" "$B/bench_stream" --frames "$LAT_FRAMES" --warmup 16 \
		--poll-us "$poll" --daemon-pid "$FPGAD_PID" "$URL" "$c"
	p50=$(jget "$LINE" lat_p50_us)
	p99=$(jget "$LINE" lat_p99_us)
	what="$(jget "$LINE" memory) memory, $(jget "$LINE" mode)"
	[ "$poll" = 0 ] || what="$what, busy-poll"
	case $c in *_wait) what="$what, wait" ;; esac
	split=$(cpu_split "$LINE")
	own=${split% *}
	pct=$(awk -v u="$own" -v r="$LAT_RATE" 'BEGIN { printf "%.1f", u * r / 1e4 }')
	echo "| fpgad, $what | $p50 | $p99 | $(jget "$LINE" lat_max_us) | $(ratio "$p50" "$fp50") | $(ratio "$p99" "$fp99") | $own | $pct |" >> "$MD"
done
fpgad_stop

# --- c. control round trip, e. client scaling ------------------------------------------------------

{
	header
	channel c0 0 64K host host 0 4
} > "$RUNDIR/ctl.conf"
fpgad_start ctl
run echo-1 "$B/bench_ctl" echo "$RUNDIR" 1 "$CTL_SECONDS"
ep50=$(jget "$LINE" lat_p50_us)
ep99=$(jget "$LINE" lat_p99_us)
erps=$(jget "$LINE" rps)
run status-1 "$B/bench_ctl" status "$URL" 1 "$CTL_SECONDS"
sp50=$(jget "$LINE" lat_p50_us)
sp99=$(jget "$LINE" lat_p99_us)
srps=$(jget "$LINE" rps)
{
	echo
	echo "## c. Control round trip"
	echo
	echo "One client process, back-to-back requests for $CTL_SECONDS s. fpgad: a Status"
	echo "request through libfpgad (fpgad_status_get: encode, nng ipc, the loop"
	echo "thread's decode, authorization, dispatch and reply, decode). Baseline: a bare"
	echo "nng REQ/REP echo over ipc:// between two processes (16-byte request, 512-byte reply)."
	echo
	echo "| | p50 us | p99 us | requests/s | p50 / echo | p99 / echo |"
	echo "|---|---|---|---|---|---|"
	echo "| nng echo (baseline) | $ep50 | $ep99 | $erps | 1.00 | 1.00 |"
	echo "| fpgad Status | $sp50 | $sp99 | $srps | $(ratio "$sp50" "$ep50") | $(ratio "$sp99" "$ep99") |"
	echo
	echo "## e. Scaling: control clients"
	echo
	echo "N client processes, each doing Status round trips back to back for $CTL_SECONDS s;"
	echo "fpgad answers them all from one loop thread."
	echo
	echo "| clients | requests/s | vs 1 client | p50 us | p99 us |"
	echo "|---|---|---|---|---|"
} >> "$MD"
for p in $CTL_PROCS; do
	if [ "$p" = 1 ]; then
		rps=$srps
		p50=$sp50
		p99=$sp99
	else
		run "status-$p" "$B/bench_ctl" status "$URL" "$p" "$CTL_SECONDS"
		rps=$(jget "$LINE" rps)
		p50=$(jget "$LINE" lat_p50_us)
		p99=$(jget "$LINE" lat_p99_us)
	fi
	echo "| $p | $rps | $(ratio "$rps" "$srps") | $p50 | $p99 |" >> "$MD"
done
fpgad_stop

# --- e. channel scaling ---------------------------------------------------------------------

maxch=1
for n in $SCALE_CHANNELS; do
	[ "$n" -le "$maxch" ] || maxch=$n
done
[ "$maxch" -le 16 ] || die "SCALE_CHANNELS: the sim card has 16 C2H engines"

# scale RATE: the channel table, every channel at RATE frames/s (0: flat out).
scale() {
	{
		header
		i=0
		while [ $i -lt "$maxch" ]; do
			channel "s$i" $i "$SCALE_SIZE" auto auto "$1" 8
			i=$((i + 1))
		done
	} > "$RUNDIR/scale$1.conf"
	fpgad_start "scale$1"
	{
		echo
		if [ "$1" = 0 ]; then
			echo "## e. Scaling: streaming channels"
			echo
			echo "N channels of $SCALE_SIZE frames (8 slots each, memory auto) streaming at once,"
			echo "one consumer process each, for $SCALE_SECONDS s; aggregate over all channels."
			echo "Flat out, one channel runs faster than each of sixteen, and fpgad's CPU"
			echo "per frame depends on each channel's rate (at high rates the streaming"
			echo "thread wakes once for several completions), so the second table holds"
			echo "every channel at $SCALE_RATE frames/s: there, what remains is what channels"
			echo "cost each other."
		else
			echo "### Every channel at $1 frames/s"
		fi
		echo
		echo "| channels | memory / mode | frames/s | GB/s | vs 1 channel | fpgad's own CPU us/frame | own CPU/frame vs 1 channel | the simulated card's CPU us/frame |"
		echo "|---|---|---|---|---|---|---|---|"
	} >> "$MD"
	one=
	cpu_one=
	for n in $SCALE_CHANNELS; do
		list=s0
		i=1
		while [ $i -lt "$n" ]; do
			list=$list,s$i
			i=$((i + 1))
		done
		run "scale$1-$n" "$B/bench_stream" --seconds "$SCALE_SECONDS" --warmup 16 \
			--daemon-pid "$FPGAD_PID" "$URL" "$list"
		gb=$(jget "$LINE" gbps)
		split=$(cpu_split "$LINE")
		own=${split% *}
		[ -n "$one" ] || one=$gb
		[ -n "$cpu_one" ] || cpu_one=$own
		echo "| $n | $(jget "$LINE" memory) / $(jget "$LINE" mode) | $(jget "$LINE" fps) | $gb | $(ratio "$gb" "$one") | $own | $(ratio "$own" "$cpu_one") | ${split#* } |" >> "$MD"
	done
	fpgad_stop
}
scale 0
scale "$SCALE_RATE"

# --- d. daemon CPU per frame and memory ----------------------------------------------------------

# status_kb PID FIELD: a kB figure of /proc/PID/status.
status_kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; }

# cpu_run NAME MEMORY [POLL_US]: one channel of $CPU_SIZE frames for
# $CPU_SECONDS s, the consumer busy-polling POLL_US when given;
# fpgad's threads split from the card model's, memory sampled mid-run.
cpu_run() {
	{
		header
		channel "$1" 0 "$CPU_SIZE" "$2" auto 0
	} > "$RUNDIR/$1.conf"
	fpgad_start "$1"
	idle_anon=$(status_kb "$FPGAD_PID" RssAnon)
	( sleep "$(awk -v s="$CPU_SECONDS" 'BEGIN { print s / 2 }')"
	  for f in VmRSS RssAnon RssFile RssShmem; do
		echo "$f $(status_kb "$FPGAD_PID" $f)"
	  done > "$RUNDIR/$1.mem" ) &
	sampler=$!
	run "$1" "$B/bench_stream" --seconds "$CPU_SECONDS" --warmup $((BENCH_SLOTS * 2)) \
		--poll-us "${3:-0}" --daemon-pid "$FPGAD_PID" "$URL" "$1"
	wait "$sampler" || true
	fpgad_stop
	split=$(cpu_split "$LINE")
	own=${split% *}
	card=${split#* }
	mem() { sed -n "s/^$1 //p" "$RUNDIR/$2.mem"; }
	{
		echo
		echo "### $(jget "$LINE" memory) memory, $(jget "$LINE" mode)${3:+, the consumer busy-polls ($3 us)}: $(jget "$LINE" frames) frames of $CPU_SIZE at $(jget "$LINE" fps) frames/s"
		[ -z "${3:-}" ] || { echo; echo "The consumer never sleeps, so fpgad never wakes it: what fpgad's threads cost without that futex wake."; }
		echo
		echo "| thread (count) | CPU us/frame |"
		echo "|---|---|"
		for t in $(jget "$LINE" daemon_threads); do
			echo "| ${t%%=*} | ${t#*=} |"
		done
		echo "| **fpgad's own threads** (loop, ch-*, nng) | **$own** |"
		echo "| the simulated card (sim-*, and cuda-* serving its copies) | $card |"
		echo "| whole process (utime+stime, $(jget "$LINE" daemon_cpu_ticks) ticks) | $(jget "$LINE" daemon_cpu_us_per_frame) |"
		echo
		echo "| fpgad memory | kB |"
		echo "|---|---|"
		echo "| VmRSS while streaming | $(mem VmRSS "$1") |"
		echo "| RssShmem (the ring and descriptor rings, host memory) | $(mem RssShmem "$1") |"
		echo "| RssFile (mapped binaries and libraries; libcuda's when CUDA is up) | $(mem RssFile "$1") |"
		echo "| RssAnon (heap and stacks; the CUDA runtime's when CUDA is up) | $(mem RssAnon "$1") |"
		echo "| RssAnon idle, before the lease | $idle_anon |"
	} >> "$MD"
}

{
	echo
	echo "## d. fpgad CPU per frame and memory"
	echo
	echo "One channel, one consumer for $CPU_SECONDS s. CPU time from"
	echo "/proc/PID/task/TID/schedstat (ns) per thread, grouped by thread name and"
	echo "divided by the frames delivered, read while the lease (and so the ch-NAME"
	echo "streaming thread) still exists. fpgad's own threads: \"fpgad\" (the libuv"
	echo "loop), ch-NAME (the channel's streaming thread), nng:* (nng's). The sim-*"
	echo "threads are the simulated card's DMA engines, and in gpudirect mode the"
	echo "cuda-* runtime threads serve only their copies: on real hardware that work"
	echo "is the card's. utime+stime (whole process, clock ticks) is a check."
	echo "Memory: /proc/PID/status sampled mid-run."
} >> "$MD"
cpu_run cpu_host host
[ -z "$GPU" ] || cpu_run cpu_cuda cuda
# The same without a wake-up per frame: the consumer busy-polls.
if [ -n "$GPU" ]; then
	cpu_run cpu_cudapoll cuda "$POLL_US"
else
	cpu_run cpu_hostpoll host "$POLL_US"
fi

# --- g. card memory transfers ------------------------------------------------------------------

"$TOP/tests/bench/xfer.sh" "$BUILD" "$OUTD" "$MD" || die "card memory transfers (see $OUTD)"
# --- h. several cards and GPUs -------------------------------------------------------------

if [ -n "$GPU" ]; then
	"$TOP/tests/bench/multigpu.sh" "$BUILD" bench >> "$MD" 2> "$OUTD/multigpu.log" ||
		log "several cards and GPUs: failed (see $OUTD/multigpu.log)"
fi
echo >> "$MD"
echo "Total time: $(($(date +%s) - T0)) s." >> "$MD"

if [ -n "$BENCH_MD" ]; then
	cp "$MD" "$BENCH_MD" || log "cannot copy BENCHMARKS.md to $BENCH_MD"
fi
log "done in $(($(date +%s) - T0)) s: $MD"
cat "$MD"
