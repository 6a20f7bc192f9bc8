#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/bench/release.sh - stream-ordered release against CPU release, a
# section of BENCHMARKS.md (tests/bench/run.sh calls it on a GPU host; it
# runs alone too):
#
#   tests/bench/release.sh BUILD_DIR OUT_DIR MARKDOWN
#
# Appends "h. Stream-ordered release" to MARKDOWN, raw JSON lines to
# OUT_DIR/raw.jsonl, logs to OUT_DIR.  One gpudirect channel per frame size
# (16 slots, 8 transfers in flight, policy block).  Each consumer verifies
# every frame in place on the GPU and either waits for the check and
# releases from the CPU, or queues the release on the checking stream and
# goes on (fpgad_frame_release_async: many releases queued, none waited
# for).  C: bench_stream --verify gpu [--async]; Python:
# python/tests/gpu_frames.py verify --release sync|stream (torch, else
# cupy).  Without MPS, then with an MPS control daemon of its own;
# RELEASE_REPEATS runs of each pair, each ratio printed, then the lowest.
#
# Environment: RELEASE_SIZES [64K 1M], RELEASE_REPEATS [3],
# RELEASE_SECONDS [1.5] per C run, RELEASE_PY_FRAMES [20000] per Python
# run, RELEASE_SHARING [no-mps mps], PYTHON [python3].

set -eu

BUILD=$(cd "${1:?usage: release.sh BUILD_DIR OUT_DIR MARKDOWN}" && pwd)
OUTD=$(cd "${2:?usage: release.sh BUILD_DIR OUT_DIR MARKDOWN}" && pwd)
MD=${3:?usage: release.sh BUILD_DIR OUT_DIR MARKDOWN}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RELEASE_SIZES=${RELEASE_SIZES:-64K 1M}
RELEASE_REPEATS=${RELEASE_REPEATS:-3}
RELEASE_SECONDS=${RELEASE_SECONDS:-1.5}
RELEASE_PY_FRAMES=${RELEASE_PY_FRAMES:-20000}
RELEASE_SHARING=${RELEASE_SHARING:-no-mps mps}
BENCH_SECONDS=$RELEASE_SECONDS
BENCH_SLOTS=16
VERIFY_DEPTH=8
PY=${PYTHON:-python3}
RAW=$OUTD/raw.jsonl
RUNDIR=$(mktemp -d /tmp/fpgad-release.XXXXXX)
FPGAD_PID=
URL=
BENCH_WHO="release bench"
. "$TOP/tests/bench/lib.sh"

for f in "$BUILD/fpgad" "$BUILD/fpgactl" "$BUILD/bench/bench_stream"; do
	[ -x "$f" ] || { echo "release bench: $f not built (make bench-bin)"; exit 1; }
done

# start LABEL: fpgad with one channel r_SIZE per frame size.
start() {
	{
		header
		e=0
		for s in $RELEASE_SIZES; do
			channel "r_$s" $e "$s" cuda gpudirect 0 16
			e=$((e + 1))
		done
	} > "$RUNDIR/release-$1.conf"
	fpgad_start "release-$1"
}

# c_run NAME CHANNEL [--async]: bench_stream verifying on the GPU.
c_run() {
	stream "$1" "$2" gpu ${3:-}
	[ "$(jget "$LINE" errors)" = 0 ] || die "$1: verify errors: $LINE"
}

# ch_cpu: CPU us per frame of the channel's streaming thread (ch-NAME) in
# the last C run's JSON line.
ch_cpu() {
	for t in $(jget "$LINE" daemon_threads); do
		case $t in ch-*) echo "${t#*=}" ;; esac
	done | head -1
}

py_run() { # NAME CHANNEL sync|stream
	run "$1" env PYTHONPATH="$BUILD/python" "$PY" "$TOP/python/tests/gpu_frames.py" \
		verify --lib "$PYLIB" --release "$3" --frames "$RELEASE_PY_FRAMES" \
		--timeout 30 "$URL" "$2"
}

# rows LABEL: RELEASE_REPEATS runs of CPU release then stream release, for
# C and Python, one table row each.
rows() {
	for s in $RELEASE_SIZES; do
		for lang in C Python; do
			[ $lang = C ] || [ -n "$PYLIB" ] || continue
			cpu= str= rat= low= thr=
			k=1
			while [ $k -le "$RELEASE_REPEATS" ]; do
				n=$1-$lang-$s-$k
				if [ $lang = C ]; then
					c_run "rel-cpu-$n" "r_$s"
					a=$(jget "$LINE" fps)
					ta=$(ch_cpu)
					c_run "rel-stream-$n" "r_$s" --async
					b=$(jget "$LINE" fps)
					thr="$thr${thr:+, }$ta / $(ch_cpu)"
				else
					py_run "rel-cpu-$n" "r_$s" sync
					a=$(jget "$LINE" fps)
					py_run "rel-stream-$n" "r_$s" stream
					b=$(jget "$LINE" fps)
				fi
				r=$(ratio "$b" "$a")
				cpu="$cpu${cpu:+, }$(printf '%.0f' "$a")"
				str="$str${str:+, }$(printf '%.0f' "$b")"
				rat="$rat${rat:+, }$r"
				low=$(awk -v a="${low:-$r}" -v b="$r" 'BEGIN { print (b < a) ? b : a }')
				k=$((k + 1))
			done
			lbl=$lang
			[ $lang = C ] || lbl="Python ($PYLIB)"
			echo "| $1 | $lbl | $s | $cpu | $str | $rat | **$low** | ${thr:--} |" >> "$MD"
		done
	done
}

PYLIB=
for lib in torch cupy; do
	if PYTHONPATH=$BUILD/python "$PY" -c "import fpgad, $lib" > /dev/null 2>&1; then
		PYLIB=$lib
		break
	fi
done
[ -n "$PYLIB" ] || log "no torch or cupy with fpgad from $BUILD/python: C rows only"

{
	echo
	echo "## h. Stream-ordered release against CPU release"
	echo
	echo "One gpudirect channel per frame size (16 slots, 8 transfers in flight,"
	echo "policy block). Each consumer verifies every frame in place on the GPU."
	echo "CPU release: it waits for each check (8 in flight) and calls"
	echo "fpgad_frame_release. Stream release: it queues the release on the checking"
	echo "stream (fpgad_frame_release_async, frame.release(stream=...) in Python)"
	echo "and takes the next frame at once, so releases queue up, none waited for."
	echo "C: bench_stream --verify gpu [--async], $RELEASE_SECONDS s; Python:"
	echo "python/tests/gpu_frames.py verify --release sync|stream, $RELEASE_PY_FRAMES frames."
	echo "$RELEASE_REPEATS runs of each, in turn; frames/s of each run, stream/CPU of each run,"
	echo "then the lowest of them (target: >= 1.0 at 1 MiB, >= 0.9 at 64 KiB). The"
	echo "last column: CPU us per frame of fpgad's streaming thread (ch-NAME), CPU"
	echo "release / stream release, per run (C only)."
	echo
	echo "| GPU sharing | consumer | frame | CPU release frames/s | stream release frames/s | stream/CPU per run | lowest | fpgad ch thread us/frame |"
	echo "|---|---|---|---|---|---|---|---|"
} >> "$MD"

for sharing in $RELEASE_SHARING; do
	if [ "$sharing" = mps ] && ! mps_start; then
		log "no MPS control daemon: no MPS rows"
		continue
	fi
	start "$sharing"
	rows "$sharing"
	fpgad_stop
	mps_stop
done
