#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/bench/xfer.sh - the card memory transfer benchmarks, a section of
# BENCHMARKS.md (tests/bench/run.sh calls it; it runs alone too):
#
#   tests/bench/xfer.sh BUILD_DIR OUT_DIR MARKDOWN
#
# Appends "g. Card memory transfers" to MARKDOWN, raw JSON lines to
# OUT_DIR/raw.jsonl, logs to OUT_DIR.  For each size, read (card to
# buffer) and write: latency p50/p99 of synchronous transfers and bandwidth
# with XFER_DEPTH in flight, against the raw copy of the same size and
# direction measured in the same run (memcpy for host buffers on the
# simulated card; cudaMemcpyAsync between pinned host memory and the GPU
# for GPU buffers, gpudirect and bounce); a batch of 64 reads of 64 KiB
# against 64 raw copies; the targets of the GPU host, met or not.
#
# Environment: XFER_SIZES [4K 64K 1M 4M 8M], XFER_SECONDS [1], XFER_LAT
# [2000] synchronous transfers per latency figure, XFER_DEPTH [8],
# XFER_POLL_US busy-poll of the rows that use it [200, or 0 on machines
# with fewer than 8 CPUs: four threads spin, the client, fpgad's transfer
# thread and the sim's engine of each direction].

set -eu

BUILD=$(cd "${1:?usage: xfer.sh BUILD_DIR OUT_DIR MARKDOWN}" && pwd)
OUTD=$(cd "${2:?usage: xfer.sh BUILD_DIR OUT_DIR MARKDOWN}" && pwd)
MD=${3:?usage: xfer.sh BUILD_DIR OUT_DIR MARKDOWN}
XFER_SIZES=${XFER_SIZES:-4K 64K 1M 4M 8M}
XFER_SECONDS=${XFER_SECONDS:-1}
XFER_LAT=${XFER_LAT:-2000}
XFER_DEPTH=${XFER_DEPTH:-8}
NCPU=$(grep -c '^processor' /proc/cpuinfo)
if [ -z "${XFER_POLL_US:-}" ]; then
	XFER_POLL_US=200
	[ "$NCPU" -ge 8 ] || XFER_POLL_US=0
fi
B=$BUILD/bench
RAW=$OUTD/raw.jsonl
RUNDIR=$(mktemp -d /tmp/fpgad-xbench.XXXXXX)
FPGAD_PID=
URL=

for f in "$BUILD/fpgad" "$B/bench_xfer"; do
	[ -x "$f" ] || { echo "xfer bench: $f not built (make bench-bin)"; exit 1; }
done

BENCH_WHO="xfer bench"
. "$(dirname "$0")/lib.sh"

# start NAME [POLL_US]: fpgad on the sim card with transfers, until it answers.
start() {
	xfer_config "${2:-}" > "$RUNDIR/xfer-$1.conf"
	fpgad_start "xfer-$1"
}

# bench NAME ARGS...: bench_xfer's JSON lines into $RUNDIR/xfer-NAME.out and raw.jsonl.
bench() {
	n=$1
	shift
	run "xfer-$n" "$B/bench_xfer" "$@"
}

line() { grep "\"dir\":\"$2\"" "$RUNDIR/xfer-$1.out" | head -1; }

GPU=
if "$B/bench_xfer" probe > "$RUNDIR/probe" 2>&1; then
	GPU=$(cat "$RUNDIR/probe")
	MODES="gpudirect bounce"
else
	MODES=host
fi
common="--seconds $XFER_SECONDS --lat $XFER_LAT --depth $XFER_DEPTH"

{
	echo
	echo "## g. Card memory transfers"
	echo
	echo "A client registers one buffer and reads (card to buffer) and writes card"
	echo "memory through its transfer queue (fpgad_xfer.h): latency of $XFER_LAT synchronous"
	echo "fpgad_read()/fpgad_write() calls one after the other (p50, p99), and"
	echo "bandwidth with $XFER_DEPTH transfers in flight (fpgad_xfer_submit/reap) for"
	echo "$XFER_SECONDS s. Baseline, measured in the same run and process: the raw copy of"
	if [ -n "$GPU" ]; then
		echo "the same size and direction, cudaMemcpyAsync between pinned host memory and"
		echo "the GPU (read: host to device, write: device to host), one at a time for"
		echo "latency (with a stream synchronize), $XFER_DEPTH in flight on as many streams for"
		echo "bandwidth. The sim card's memory is pinned host memory: gpudirect is its"
		echo "cudaMemcpyAsync straight into the GPU buffer, bounce is a copy into fpgad's"
		echo "pinned staging (memcpy) and a cudaMemcpyAsync on to the GPU."
	else
		echo "the same size and direction, memcpy between two host buffers (what the sim"
		echo "card does for a transfer into host memory), one at a time for latency, back"
		echo "to back for bandwidth. No GPU here: host buffers only; the GPU rows and"
		echo "targets come from the GPU host (\`tests/run-gpu-host.sh\`)."
	fi
	if [ "$XFER_POLL_US" != 0 ]; then
		echo "Busy-poll: fpgad's [transfer] poll_us and the client's fpgad_xfer_set_poll()"
		echo "at $XFER_POLL_US us, so neither side sleeps between transfers; the last table"
		echo "shows 4 KiB without it."
	else
		echo "No busy-poll: this machine has $NCPU CPUs, and busy-polling needs one for each"
		echo "of the four threads that would spin (the client, fpgad's transfer thread, the"
		echo "sim's engine of each direction); the default settings: each waiting thread"
		echo "spins for its adaptive window (common/spin.h), then sleeps."
	fi
	echo
	echo "| size | dir | mode | p50 us | p99 us | raw p50 us | raw p99 us | p50 - raw us | GB/s | raw GB/s | GB/s / raw |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >> "$MD"

start poll "$XFER_POLL_US"
for s in $XFER_SIZES; do
	for m in $MODES; do
		bench "$m-$s" $common --poll-us "$XFER_POLL_US" "$URL" "$m" "$s"
		for d in read write; do
			l=$(line "$m-$s" $d)
			p50=$(jget "$l" lat_p50_us)
			rp50=$(jget "$l" raw_lat_p50_us)
			echo "| $s | $d | $m | $p50 | $(jget "$l" lat_p99_us) | $rp50 | $(jget "$l" raw_lat_p99_us) | $(minus "$p50" "$rp50") | $(jget "$l" gbps) | $(jget "$l" raw_gbps) | $(ratio "$(jget "$l" gbps)" "$(jget "$l" raw_gbps)") |" >> "$MD"
		done
	done
done
bmode=${MODES%% *}
bench "batch" --seconds "$XFER_SECONDS" --batch 64 --poll-us "$XFER_POLL_US" "$URL" "$bmode" 64K
bl=$(grep '"bench":"xfer_batch"' "$RUNDIR/xfer-batch.out" | head -1)
fpgad_stop

if [ "$XFER_POLL_US" != 0 ]; then
	start sleep
	bench "sleep-4K" $common "$URL" "$bmode" 4K
	fpgad_stop
fi

{
	echo
	echo "A batch: fpgad_xfer_batch() of 64 reads of 64 KiB ($bmode), back to back, against"
	echo "64 raw copies of 64 KiB and a wait for them, back to back."
	echo
	echo "| | batch p50 us | batch p99 us | GB/s | raw GB/s | GB/s / raw |"
	echo "|---|---|---|---|---|---|"
	echo "| 64 x 64 KiB reads | $(jget "$bl" p50_us) | $(jget "$bl" p99_us) | $(jget "$bl" gbps) | $(jget "$bl" raw_gbps) | $(ratio "$(jget "$bl" gbps)" "$(jget "$bl" raw_gbps)") |"
	if [ "$XFER_POLL_US" != 0 ]; then
		echo
		echo "4 KiB with the default settings (no busy-poll: each waiting thread spins"
		echo "for its adaptive window, common/spin.h, then sleeps):"
		echo
		echo "| dir | p50 us | p99 us | raw p50 us | p50 - raw us |"
		echo "|---|---|---|---|---|"
		for d in read write; do
			l=$(line sleep-4K $d)
			echo "| $d | $(jget "$l" lat_p50_us) | $(jget "$l" lat_p99_us) | $(jget "$l" raw_lat_p50_us) | $(minus "$(jget "$l" lat_p50_us)" "$(jget "$l" raw_lat_p50_us)") |"
		done
	fi
} >> "$MD"

if [ -n "$GPU" ]; then
	gdr=$(line gpudirect-4M read)
	gdw=$(line gpudirect-4M write)
	bnr=$(line bounce-4M read)
	bnw=$(line bounce-4M write)
	r4=$(line gpudirect-4K read)
	w4=$(line gpudirect-4K write)
	{
		echo
		echo "### Targets (GPU host)"
		echo
		echo "| target | measured | |"
		echo "|---|---|---|"
		for x in "read:$gdr" "write:$gdw"; do
			d=${x%%:*}
			l=${x#*:}
			q=$(ratio "$(jget "$l" gbps)" "$(jget "$l" raw_gbps)")
			echo "| 4 MiB gpudirect $d bandwidth >= 0.95 of raw | $q | $(met "$q" ">=" 0.95) |"
		done
		for x in "read:$r4" "write:$w4"; do
			d=${x%%:*}
			l=${x#*:}
			lim=$(awk -v r="$(jget "$l" raw_lat_p50_us)" 'BEGIN { printf "%.1f", r + 10 }')
			echo "| 4 KiB gpudirect $d p50 <= raw + 10 us ($lim) | $(jget "$l" lat_p50_us) us | $(met "$(jget "$l" lat_p50_us)" "<=" "$lim") |"
		done
		# The lines are JSON, full of colons: one direction at a time.
		q=$(ratio "$(jget "$gdr" gbps)" "$(jget "$bnr" gbps)")
		echo "| 4 MiB gpudirect / bounce read >= 2 | $q | $(met "$q" ">=" 2) |"
		q=$(ratio "$(jget "$gdw" gbps)" "$(jget "$bnw" gbps)")
		echo "| 4 MiB gpudirect / bounce write >= 2 | $q | $(met "$q" ">=" 2) |"
		q=$(ratio "$(jget "$bl" gbps)" "$(jget "$bl" raw_gbps)")
		echo "| 64 x 64 KiB batch of reads >= 0.8 of raw | $q | $(met "$q" ">=" 0.8) |"
	} >> "$MD"
fi
log "done"
