#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/bench/multigpu.sh - several cards and GPUs on one host: one sim
# fpgad per card (as fpgad@NAME.service runs them, side by side under one
# runtime root), each card's channel in the memory of its own GPU, and a
# verifying consumer (tests/gpu/gpu_client) per channel on that GPU, all
# at once.
#
#   multigpu.sh BUILD          the suite: 2 cards on 2 GPUs, every frame
#                              verified; SKIP (exit 77) with fewer than 2 GPUs
#   multigpu.sh BUILD bench    aggregate verified GB/s with 1, 2 and 4 GPUs
#                              (as many as the host has), fpgad CPU per
#                              frame, and the ratios to 1 GPU (goals: 1.8x
#                              at 2, 3.4x at 4, CPU per frame flat), as a
#                              BENCHMARKS.md section on stdout
#
# BUILD holds fpgad, fpgactl and gpu/gpu_client (make gpu).  Environment:
# FRAMES (per consumer, default 2000), FRAME_SIZE (default 4M).
set -eu
BUILD=${1:?usage: multigpu.sh BUILD [suite|bench]}
FRAMES=${FRAMES:-2000}
FRAME_SIZE=${FRAME_SIZE:-4M}
mode=${2:-suite}
client=$BUILD/gpu/gpu_client

[ -x "$client" ] || { echo "multigpu: SKIP: no $client (make gpu, with nvcc)"; exit 77; }
"$client" --probe >/dev/null 2>&1 || { echo "multigpu: SKIP: no GPU answers"; exit 77; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || :)
ngpu=${ngpu:-0}
if [ "$mode" = suite ] && [ "$ngpu" -lt 2 ]; then
	echo "multigpu: SKIP: $ngpu GPU(s) on this host; the suite needs 2 or more"; exit 77
fi

root=$(mktemp -d)
pids=
stop_all() { for p in $pids; do kill "$p" 2>/dev/null || :; done; for p in $pids; do wait "$p" 2>/dev/null || :; done; pids=; }
trap 'stop_all; rm -rf "$root"' EXIT
export FPGAD_RUNTIME_ROOT="$root"

# run N [SHIFT]: N cards, card i's channel on GPU i, N consumers at once,
# card i's on GPU (i + SHIFT) % N (SHIFT 0: its ring's own GPU, else
# through peer access); prints "GBPS CPU_NS_PER_FRAME" and fails when a
# consumer does.
run() {
	n=$1 shift_by=${2:-0} i=0 cpids= rc=0
	rm -rf "${root:?}"/*
	while [ $i -lt "$n" ]; do
		mkdir "$root/card$i"
		printf '[device]\ngpu = %d\n[channel cam]\nmemory = cuda\nslots = 8\nslot_size = %s\nframe_size = %s\n' \
			$i "$FRAME_SIZE" "$FRAME_SIZE" >"$root/card$i.conf"
		"$BUILD/fpgad" -c "$root/card$i.conf" --runtime-dir "$root/card$i" >"$root/card$i.log" 2>&1 &
		pids="$pids $!"
		i=$((i + 1))
	done
	i=0
	while [ $i -lt "$n" ]; do
		t=0
		until "$BUILD/fpgactl" --card card$i version >/dev/null 2>&1; do
			t=$((t + 1)); [ $t -lt 400 ] || { echo "multigpu: FAIL: card$i did not start"; cat "$root/card$i.log"; return 1; }
			sleep 0.05
		done
		i=$((i + 1))
	done
	cpu0=$(for p in $pids; do awk '{ print $14 + $15 }' "/proc/$p/stat"; done | awk '{ s += $1 } END { print s }')
	i=0
	while [ $i -lt "$n" ]; do
		"$client" --device $(((i + shift_by) % n)) --frames "$FRAMES" "ipc://$root/card$i/fpgad.sock" cam \
			>"$root/client$i.json" 2>"$root/client$i.err" &
		cpids="$cpids $!"
		i=$((i + 1))
	done
	for p in $cpids; do wait "$p" || rc=1; done
	cpu1=$(for p in $pids; do awk '{ print $14 + $15 }' "/proc/$p/stat"; done | awk '{ s += $1 } END { print s }')
	stop_all
	if [ $rc != 0 ]; then
		cat "$root"/client*.err "$root"/client*.json >"$root/failed.txt"
		return 1
	fi
	cat "$root"/client*.json | python3 -c '
import json, sys, os
rows = [json.loads(l) for l in sys.stdin if l.strip()]
ticks = os.sysconf("SC_CLK_TCK")
frames = sum(r["frames"] for r in rows)
cpu_ns = (int(sys.argv[2]) - int(sys.argv[1])) * 1e9 / ticks
print("%.3f %.0f" % (sum(r["gbps"] for r in rows), cpu_ns / frames if frames else 0))
' "$cpu0" "$cpu1"
}

if [ "$mode" = suite ]; then
	out=$(run 2) || { echo "multigpu: FAIL: a consumer on its ring's GPU:"; cat "$root/failed.txt"; exit 1; }
	echo "multigpu: 2 cards on 2 GPUs, $FRAMES frames each verified: PASS ($out GB/s, ns CPU/frame)"
	# Each consumer on the other card's GPU: peer access, or a refusal
	# that names both GPUs.
	if out=$(run 2 1); then
		echo "multigpu: consumers on the other GPU (peer access), $FRAMES frames each verified: PASS ($out)"
	elif grep -q "the ring is on GPU [0-9] (.*) and this thread works on GPU [0-9] (.*): the pair has no peer access" "$root/failed.txt"; then
		echo "multigpu: consumers on the other GPU: refused, naming both GPUs (no peer access on this host): PASS"
		grep -m1 "no peer access" "$root/failed.txt"
	else
		echo "multigpu: FAIL: a consumer on the other GPU:"; cat "$root/failed.txt"; exit 1
	fi
	exit 0
fi
echo
echo "## h. Several cards and GPUs"
echo
echo "One sim fpgad per card (as fpgad@NAME.service), card i's channel in GPU i's"
echo "memory ($FRAME_SIZE frames, 8 slots), one verifying consumer per channel on"
echo "that GPU, all at once, $FRAMES frames each (tests/bench/multigpu.sh). GB/s:"
echo "the consumers' verified rates summed; CPU: fpgad's utime+stime over the run"
echo "divided by the frames delivered. Goals: >= 1.8x at 2 GPUs, >= 3.4x at 4,"
echo "CPU per frame flat."
echo
echo '```'
nvidia-smi topo -m 2>/dev/null || echo "(nvidia-smi topo -m: none)"
echo '```'
echo
echo "| GPUs | verified GB/s, all | ratio to 1 GPU | fpgad CPU ns/frame | ratio to 1 GPU |"
echo "|---|---|---|---|---|"
base= cbase=
for n in 1 2 4; do
	[ "$n" -le "$ngpu" ] || break
	res=$(run $n) || { cat "$root/failed.txt" >&2; exit 1; }
	set -- $res
	[ -n "$base" ] || { base=$1; cbase=$2; }
	echo "| $n | $1 | $(echo "$1 $base" | awk '{ printf "%.2f", $2 > 0 ? $1 / $2 : 0 }') | $2 | $(echo "$2 $cbase" | awk '{ printf "%.2f", $2 > 0 ? $1 / $2 : 0 }') |"
done
[ "$ngpu" -ge 2 ] || echo "| 2 | not measured: this host has $ngpu GPU | | | |"
