#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/bench/targets.sh - the hot path's target rows, each measured
# TARGETS_REPEATS (3) times in a row in this one run, every run printed,
# then the spread (lowest..highest) and the verdict against the target, as
# a table for BENCHMARKS.md, so that a figure that does not reproduce shows
# as such:
#
#   tests/bench/targets.sh BUILD_DIR OUT_DIR MARKDOWN
#
# Appends "Targets, three runs in a row" to MARKDOWN, raw JSON lines to
# OUT_DIR/raw.jsonl, one log per program to OUT_DIR.  Each figure is a ratio
# or a difference against a baseline measured in the same run, just before:
#   wake-up p50 / futex ping-pong (default pacing, 64 KiB at 1,000 frames/s):
#     host memory and gpudirect, goal <= 1.3
#   fpgad's own CPU us per 1 MiB frame, flat out (its threads: loop, ch-*,
#     nng; not the sim card's): gpudirect, gpudirect with a busy-polling
#     consumer, host memory, goal <= 2
#   small frames, fpgad / raw copy: gpudirect 64 KiB (goal >= 0.8) and
#     4 KiB (>= 0.5), without MPS and with it; host memory 64 KiB (>= 0.8)
#   card memory transfers: 4 KiB read and write p50 - raw (goal <= +10 us)
#     and a batch of 64 x 64 KiB reads / raw (>= 0.8, with where its time
#     went), with fpgad's and libfpgad's default settings (no [transfer]
#     poll_us, no fpgad_xfer_set_poll) and busy-polling both sides;
#     gpudirect and host; with the defaults, fpgad's CPU per 4 KiB read
#     (back to back, and at 1,000 reads/s) beside the client's and its
#     sleeps per transfer (no target)
#   stream-ordered / CPU release, C consumers (tests/bench/release.sh,
#     short; its own section follows the table), goal >= 1.0 at 1 MiB and
#     >= 0.9 at 64 KiB, without MPS and with it
# Without a GPU the host rows run and the GPU rows say SKIP and why.
#
# Time: about 3 minutes on the 16-vCPU H200 host (estimated from its
# earlier logs: about 0.7 s of start-up per CUDA program beside each
# window), about 1 minute on the 2-core build machine without a GPU; it
# prints each step's time and the total.
#
# Environment: TARGETS_REPEATS [3], TARGETS_SECONDS [1] per throughput
# window, TARGETS_CPU_SECONDS [1.5], TARGETS_LAT_FRAMES [1000],
# TARGETS_XFER_LAT [2000] synchronous transfers per latency figure,
# TARGETS_POLL_US [200; with fewer than 8 CPUs the busy-poll rows are
# skipped unless it is set: four threads spin], TARGETS_MPS [1],
# TARGETS_RELEASE [1] (0: no stream-release rows).

set -eu

BUILD=$(cd "${1:?usage: targets.sh BUILD_DIR OUT_DIR MARKDOWN}" && pwd)
OUTD=$(mkdir -p "${2:?usage: targets.sh BUILD_DIR OUT_DIR MARKDOWN}" && cd "$2" && pwd)
MD=${3:?usage: targets.sh BUILD_DIR OUT_DIR MARKDOWN}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPEATS=${TARGETS_REPEATS:-3}
TSECONDS=${TARGETS_SECONDS:-1}
CPU_SECONDS=${TARGETS_CPU_SECONDS:-1.5}
LAT_FRAMES=${TARGETS_LAT_FRAMES:-1000}
LAT_RATE=1000
XFER_LAT=${TARGETS_XFER_LAT:-2000}
NCPU=$(grep -c '^processor' /proc/cpuinfo)
POLL_US=${TARGETS_POLL_US:-200}
POLL_SKIP=
if [ -z "${TARGETS_POLL_US:-}" ] && [ "$NCPU" -lt 8 ]; then
	POLL_SKIP="$NCPU CPUs: busy-polling spins four threads (TARGETS_POLL_US forces it)"
fi
B=$BUILD/bench
RAW=$OUTD/raw.jsonl
RUNDIR=$(mktemp -d /tmp/fpgad-targets.XXXXXX)
FPGAD_PID=
URL=
BENCH_WHO=targets
. "$TOP/tests/bench/lib.sh"

for f in "$BUILD/fpgad" "$BUILD/fpgactl" "$B/bench_copy" "$B/bench_stream" \
	 "$B/bench_futex" "$B/bench_xfer"; do
	[ -x "$f" ] || { echo "targets: $f not built (make bench-bin)"; exit 1; }
done

T0=$(date +%s)
NOGPU=
TABLE_DONE=
: > "$RUNDIR/release.md"
# A step that fails ends the run, not the table: what was measured is kept.
trap 'rc=$?; [ -n "$TABLE_DONE" ] ||
	table "Stopped early (exit $rc): see the log; rows not reached say not measured." ||
	true; bench_cleanup' EXIT

# --- rows: each run of row KEY is a line "VALUE<TAB>DETAIL" of RUNDIR/KEY.row --

# sample KEY RUN VALUE DETAIL: one run of a row, printed as it is taken.
sample() {
	log "$1, run $2: $3${4:+ ($4)}"
	printf '%s\t%s\n' "$3" "$4" >> "$RUNDIR/$1.row"
}

# skip KEY WHY: the row is not measured here.
skip() { printf '%s\n' "$2" > "$RUNDIR/$1.skip"; }

# row KEY LABEL OP GOAL: the table row of KEY, its runs, their spread and
# the verdict (met when every run meets the goal; OP "-": no target, a
# figure to read beside the others).
row() {
	goal="$3 $4"
	[ "$3" != - ] || goal=-
	if [ -f "$RUNDIR/$1.skip" ]; then
		blank_row "$2" "$goal" "SKIP: $(cat "$RUNDIR/$1.skip")" SKIP
		return
	fi
	[ -f "$RUNDIR/$1.row" ] || { blank_row "$2" "$goal" "not measured" -; return; }
	awk -F '\t' -v label="$2" -v op="$3" -v goal="$4" -v n="$REPEATS" '
	{ v[NR] = $1; d[NR] = $2 }
	END {
		line = "| " label " | " (op == "-" ? "-" : op " " goal) " |"
		met = 0
		lo = v[1]; hi = v[1]
		for (i = 1; i <= NR; i++) {
			ok = op == ">=" ? v[i] + 0 >= goal + 0 : v[i] + 0 <= goal + 0
			met += ok
			if (v[i] + 0 < lo + 0) lo = v[i]
			if (v[i] + 0 > hi + 0) hi = v[i]
			line = line " " v[i] (d[i] != "" ? " (" d[i] ")" : "") " |"
		}
		for (; i <= n; i++)
			line = line " - |"
		if (op == "-")
			verdict = "(no target)"
		else if (met == NR && NR == n)
			verdict = "**met** (" met " of " NR ")"
		else
			verdict = "missed (met in " met " of " NR ")"
		print line " " lo ".." hi " | " verdict " |"
	}' "$RUNDIR/$1.row"
}

# blank_row LABEL GOAL WHAT VERDICT: a row without runs.
blank_row() {
	printf '| %s | %s | %s |' "$1" "$2" "$3"
	k=2
	while [ "$k" -le "$REPEATS" ]; do
		printf ' |'
		k=$((k + 1))
	done
	echo " - | $4 |"
}

# table [NOTE]: the section, appended to MARKDOWN and printed; NOTE says
# why it stops early (rows not reached say "not measured").
table() {
	TOTAL=$(($(date +%s) - T0))
	TABLE_DONE=1
	{
		echo
		echo "## Targets, $REPEATS runs in a row"
		echo
		echo "\`tests/bench/targets.sh\` on $(hostname) ($NCPU CPUs, $(uname -r)), GPU:"
		echo "${GPU:-$NOGPU}, $(date -u '+%Y-%m-%d %H:%M UTC'), $("$BUILD/fpgad" --version 2>&1 | head -1)."
		echo "Each row was measured $REPEATS times in a row; a run's cell is its figure"
		echo "and, in brackets, what it was computed from (fpgad's figure / the baseline"
		echo "measured just before it). Verdict: met when every run meets the goal."
		echo "Windows: ${TSECONDS} s per throughput run, $CPU_SECONDS s per CPU run, $LAT_FRAMES"
		echo "frames of 64 KiB at $LAT_RATE frames/s per wake-up run, $XFER_LAT synchronous transfers"
		echo "per transfer latency; busy-poll rows: [transfer] poll_us and"
		echo "fpgad_xfer_set_poll() at $POLL_US us; \"default\" rows configure no busy-poll."
		echo
		printf '| target | goal |'
		k=1
		while [ "$k" -le "$REPEATS" ]; do
			printf ' run %s |' $k
			k=$((k + 1))
		done
		echo ' spread | verdict |'
		printf '|---|---|'
		k=1
		while [ "$k" -le "$REPEATS" ]; do
			printf -- '---|'
			k=$((k + 1))
		done
		echo '---|---|'
		row wake_host "wake-up p50 / futex ping-pong, host memory" "<=" 1.3
		row wake_gd "wake-up p50 / futex ping-pong, gpudirect" "<=" 1.3
		row cpu_gd "fpgad's own CPU us per 1 MiB frame, gpudirect" "<=" 2
		row cpu_gd_poll "the same, the consumer busy-polling" "<=" 2
		row cpu_host "fpgad's own CPU us per 1 MiB frame, host memory" "<=" 2
		row sf_gd_64K_no-mps "64 KiB frames gpudirect / raw, no MPS" ">=" 0.8
		row sf_gd_4K_no-mps "4 KiB frames gpudirect / raw, no MPS" ">=" 0.5
		row sf_gd_64K_mps "64 KiB frames gpudirect / raw, MPS" ">=" 0.8
		row sf_gd_4K_mps "4 KiB frames gpudirect / raw, MPS" ">=" 0.5
		row sf_host_64K "64 KiB frames host / memcpy" ">=" 0.8
		for m in gpudirect host; do
			for c in def poll; do
				what=default
				[ $c = def ] || what="busy-poll $POLL_US us"
				row "xfer_${c}_${m}_read" "4 KiB read p50 - raw us, $m, $what" "<=" +10
				row "xfer_${c}_${m}_write" "4 KiB write p50 - raw us, $m, $what" "<=" +10
				row "batch_${c}_$m" "64 x 64 KiB read batch / raw, $m, $what" ">=" 0.8
			done
			row "xcpu_${m}_b2b" "fpgad's own CPU us per 4 KiB read, $m, default, back to back" - -
			row "xcpu_${m}_1k" "the same, 1,000 reads/s" - -
		done
		row rel_no-mps_1M "stream / CPU release, C, 1 MiB, no MPS" ">=" 1.0
		row rel_no-mps_64K "stream / CPU release, C, 64 KiB, no MPS" ">=" 0.9
		row rel_mps_1M "stream / CPU release, C, 1 MiB, MPS" ">=" 1.0
		row rel_mps_64K "stream / CPU release, C, 64 KiB, MPS" ">=" 0.9
		echo
		[ -z "${1:-}" ] || { echo "**$1**"; echo; }
		echo "Steps: $TIMES; total $TOTAL s."
		cat "$RUNDIR/release.md"
	} > "$RUNDIR/targets.md"
	cat "$RUNDIR/targets.md" >> "$MD"
	cat "$RUNDIR/targets.md"
}

# step NAME: the start of a step; step_end logs its time.
step() {
	STEP=$1
	STEP_T0=$(date +%s)
	log "== $1"
}
step_end() {
	t=$(($(date +%s) - STEP_T0))
	log "$STEP: $t s"
	TIMES="$TIMES${TIMES:+, }$STEP $t s"
}
TIMES=

GPU=
MPS_WHY=
if GPU_PROBE=$("$B/bench_copy" probe 2>&1); then
	GPU=$GPU_PROBE
	command -v nvidia-smi >/dev/null 2>&1 &&
		GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
			head -1 || echo "$GPU_PROBE")
	log "GPU: $GPU"
else
	NOGPU="no GPU (${GPU_PROBE#no GPU: })"
	log "$NOGPU: host rows only"
	for k in wake_gd cpu_gd cpu_gd_poll sf_gd_64K_no-mps sf_gd_4K_no-mps \
		 sf_gd_64K_mps sf_gd_4K_mps xfer_def_gpudirect_read xfer_def_gpudirect_write \
		 xfer_poll_gpudirect_read xfer_poll_gpudirect_write batch_def_gpudirect \
		 xcpu_gpudirect_b2b xcpu_gpudirect_1k \
		 batch_poll_gpudirect rel_no-mps_64K rel_no-mps_1M rel_mps_64K rel_mps_1M; do
		skip "$k" "no GPU"
	done
fi

# --- streaming: wake-up, fpgad's CPU per frame, small frames ----------------------

# small_frames LABEL: gpudirect / raw at 64 KiB and 4 KiB, and host / memcpy
# at 64 KiB without MPS, on the running fpgad's sf_* channels.
small_frames() {
	k=1
	while [ "$k" -le "$REPEATS" ]; do
		for s in 64K 4K; do
			[ -n "$GPU" ] || continue
			run "sf-copy-gpu-$1-$s-$k" "$B/bench_copy" gpu "$s" 16 8 "$TSECONDS"
			base=$(jget "$LINE" gbps)
			stream "sf-gd-$1-$s-$k" "sf_gd_$s" none
			got=$(jget "$LINE" gbps)
			sample "sf_gd_${s}_$1" $k "$(ratio "$got" "$base")" "$got / $base GB/s"
		done
		if [ "$1" = no-mps ]; then
			run "sf-copy-host-64K-$k" "$B/bench_copy" host 64K 16 "$TSECONDS"
			base=$(jget "$LINE" gbps)
			stream "sf-host-64K-$k" sf_host_64K none
			got=$(jget "$LINE" gbps)
			sample sf_host_64K $k "$(ratio "$got" "$base")" "$got / $base GB/s"
		fi
		k=$((k + 1))
	done
}

{
	header
	channel lat_host 0 64K host host $LAT_RATE
	channel cpu_host 1 1M host host 0
	channel sf_host_64K 2 64K host host 0
	if [ -n "$GPU" ]; then
		channel lat_gd 3 64K cuda gpudirect $LAT_RATE
		channel cpu_gd 4 1M cuda gpudirect 0
		channel sf_gd_64K 5 64K cuda gpudirect 0
		channel sf_gd_4K 6 4K cuda gpudirect 0
	fi
} > "$RUNDIR/targets-stream.conf"
fpgad_start targets-stream

step wake-up
interval=$((1000000 / LAT_RATE))
k=1
while [ "$k" -le "$REPEATS" ]; do
	run "futex-$k" "$B/bench_futex" "$LAT_FRAMES" "$interval"
	fp50=$(jget "$LINE" lat_p50_us)
	for c in host ${GPU:+gd}; do
		run "wake-$c-$k" "$B/bench_stream" --frames "$LAT_FRAMES" --warmup 16 \
			--poll-us 0 --daemon-pid "$FPGAD_PID" "$URL" "lat_$c"
		p50=$(jget "$LINE" lat_p50_us)
		sample "wake_$c" $k "$(ratio "$p50" "$fp50")" "$p50 / $fp50 us"
	done
	k=$((k + 1))
done
step_end

step cpu
BENCH_SECONDS=$CPU_SECONDS
k=1
while [ "$k" -le "$REPEATS" ]; do
	for c in ${GPU:+gd gd_poll} host; do
		poll=0
		case $c in *_poll) poll=2000 ;; esac
		stream "cpu-$c-$k" "cpu_${c%_poll}" none "--poll-us $poll"
		split=$(cpu_split "$LINE")
		sample "cpu_$c" $k "${split% *}" "$(jget "$LINE" fps) frames/s"
	done
	k=$((k + 1))
done
step_end

step small-frames
BENCH_SECONDS=$TSECONDS
small_frames no-mps
fpgad_stop
if [ -z "$GPU" ]; then
	:
elif [ "${TARGETS_MPS:-1}" = 0 ]; then
	MPS_WHY="TARGETS_MPS=0"
elif ! mps_start; then
	MPS_WHY="no MPS control daemon"
else
	{
		header
		channel sf_gd_64K 5 64K cuda gpudirect 0
		channel sf_gd_4K 6 4K cuda gpudirect 0
	} > "$RUNDIR/targets-mps.conf"
	fpgad_start targets-mps
	small_frames mps
	fpgad_stop
	mps_stop
fi
if [ -n "$MPS_WHY" ]; then
	skip sf_gd_64K_mps "$MPS_WHY"
	skip sf_gd_4K_mps "$MPS_WHY"
fi
step_end

# --- card memory transfers -------------------------------------------------------------

# xfer_cpu KEY K: fpgad's own CPU per transfer in the last bench_xfer
# run's read line, with the card's, the client's and its sleeps beside it.
xfer_cpu() {
	l=$(grep '"dir":"read"' "$RUNDIR/$name.out")
	split=$(cpu_split "$l")
	sample "$1" "$2" "${split% *}" "card ${split#* }, client $(jget "$l" client_cpu_us_per_xfer) us, client sleeps $(jget "$l" client_sleeps_per_xfer)"
}

# transfers CFG [POLL_US]: on the running fpgad, REPEATS runs of 4 KiB
# transfers and of the batch, in each mode; CFG names the rows.  With
# fpgad's defaults, also what a transfer costs in CPU, back to back and
# at 1,000 transfers/s.
transfers() {
	pollarg=${2:+--poll-us $2}
	k=1
	while [ "$k" -le "$REPEATS" ]; do
		for m in ${GPU:+gpudirect} host; do
			run "xfer-$1-$m-4K-$k" "$B/bench_xfer" --seconds 0.2 --lat "$XFER_LAT" \
				--daemon-pid "$FPGAD_PID" $pollarg "$URL" "$m" 4K
			for d in read write; do
				l=$(grep "\"dir\":\"$d\"" "$RUNDIR/xfer-$1-$m-4K-$k.out")
				p50=$(jget "$l" lat_p50_us)
				rp50=$(jget "$l" raw_lat_p50_us)
				sample "xfer_$1_${m}_$d" $k "$(minus "$p50" "$rp50")" "$p50 / $rp50 us"
			done
			if [ "$1" = def ]; then
				xfer_cpu "xcpu_${m}_b2b" $k
				run "xfer-$1-$m-4K-1000-$k" "$B/bench_xfer" --seconds 0.01 \
					--lat 500 --interval-us 1000 --daemon-pid "$FPGAD_PID" \
					"$URL" "$m" 4K
				xfer_cpu "xcpu_${m}_1k" $k
			fi
			run "batch-$1-$m-$k" "$B/bench_xfer" --seconds 0.5 --batch 64 \
				$pollarg "$URL" "$m" 64K
			sample "batch_$1_$m" $k "$(ratio "$(jget "$LINE" gbps)" "$(jget "$LINE" raw_gbps)")" \
				"p50 $(jget "$LINE" p50_us) / $(jget "$LINE" raw_p50_us) us; take $(jget "$LINE" take_p50_us), span $(jget "$LINE" span_p50_us), return $(jget "$LINE" return_p50_us)"
		done
		k=$((k + 1))
	done
}

step transfers
xfer_config > "$RUNDIR/targets-xfer-default.conf"
fpgad_start targets-xfer-default
transfers def
fpgad_stop
if [ -n "$POLL_SKIP" ]; then
	for k in xfer_poll_gpudirect_read xfer_poll_gpudirect_write batch_poll_gpudirect \
		 xfer_poll_host_read xfer_poll_host_write batch_poll_host; do
		[ -f "$RUNDIR/$k.skip" ] || skip "$k" "$POLL_SKIP"
	done
else
	xfer_config "$POLL_US" > "$RUNDIR/targets-xfer-poll.conf"
	fpgad_start targets-xfer-poll
	transfers poll "$POLL_US"
	fpgad_stop
fi
step_end

# --- stream-ordered release (GPU) ------------------------------------------------------

if [ -n "$GPU" ] && [ "${TARGETS_RELEASE:-1}" != 0 ]; then
	step stream-release
	RELEASE_SECONDS=0.5 RELEASE_REPEATS=$REPEATS PYTHON=/bin/false \
		"$TOP/tests/bench/release.sh" "$BUILD" "$OUTD" "$RUNDIR/release.md" ||
		die "stream-ordered release (see $OUTD)"
	# Its rows: | SHARING | C | SIZE | cpu | stream | r1, r2, r3 | ...
	awk -F ' *[|] *' '$3 == "C" { print $2, $4, $7 }' "$RUNDIR/release.md" |
	while read -r sh sz ratios; do
		k=1
		for r in $(echo "$ratios" | tr ',' ' '); do
			sample "rel_${sh}_$sz" $k "$r" ""
			k=$((k + 1))
		done
	done
	step_end
elif [ -n "$GPU" ]; then
	for k in rel_no-mps_64K rel_no-mps_1M rel_mps_64K rel_mps_1M; do
		skip "$k" "TARGETS_RELEASE=0"
	done
fi
if [ -n "$MPS_WHY" ]; then
	for k in rel_mps_64K rel_mps_1M; do
		[ -f "$RUNDIR/$k.skip" ] || [ -f "$RUNDIR/$k.row" ] || skip "$k" "$MPS_WHY"
	done
fi

# --- the table ----------------------------------------------------------------------------

table
log "done in $TOTAL s"
