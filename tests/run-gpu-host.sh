#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/run-gpu-host.sh BUILD OUT [STEPS] - on a GPU host, from binaries
# built elsewhere (make STATIC=1 BUILD=BUILD all gpu bench-bin python), the
# STEPS named (default "suite bench"):
#   suite    the demo in GPU memory, then with each ring export (fd, ipc;
#            DEMO_RUNS each, default 5: first map and frames/s), fpgactl
#            topo, the GPU suite (streaming, card memory transfers, the
#            integrated-GPU path), MPS with two uids and CUDA under the
#            unit's sandbox
#   bench    the benchmarks, BENCHMARKS.md
#   targets  the hot path's target rows, three runs each with their spread
#            (tests/bench/targets.sh, about 3 minutes): TARGETS.md
#   net      the UDP path against a bare recvmmsg loop, per CPU-second of
#            the receiving thread, and 1 -> 8 channels with 8 senders
#            (tests/bench/net.sh, about 2 minutes)
#   roce     a RoCE channel's GPU landing ring with a stand-in for the NIC
#            (gpu/gpu_roce_landing), three runs at 64 KiB, 1 MiB and 8 MiB
#            frames and at 1 MiB with the write ordering taken as none:
#            fpgad's step per frame against a bare device-to-device copy
#            and against the frame's time on a 400 Gbit/s wire
# OUT receives summary.txt, BENCHMARKS.md and/or TARGETS.md, and logs.tgz
# (every log).  Builds nothing.
set -u
BUILD=${1:?usage: tests/run-gpu-host.sh BUILD OUT [suite bench targets net roce]}
OUT=${2:?usage: tests/run-gpu-host.sh BUILD OUT [suite bench targets net roce]}
STEPS=${3:-suite bench}
mkdir -p "$OUT/logs"
S=$OUT/summary.txt
: > "$S"

# Libraries the build host linked dynamically, should this host lack them.
if ldd "$BUILD/fpgad" | grep -q 'not found' && [ -d "$BUILD/lib" ]; then
	export LD_LIBRARY_PATH="$BUILD/lib"
fi
{
	echo "host: $(hostname), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "kernel: $(uname -r)"
	nvidia-smi -L 2>&1
	ldd "$BUILD/fpgad" | grep 'not found' || true
} >> "$S"

case $STEPS in *suite*)
echo "== demo: capture and verify 10,000 frames (GPU memory)" >> "$S"
BUILD=$BUILD tests/demo.sh > "$OUT/logs/demo.log" 2>&1
echo "demo: exit $?" >> "$S"
grep -E '^(mode|channel|frames|verified|drops|rate|wake-up|setup)' "$OUT/logs/demo.log" >> "$S"

# The GPU ring's two exports, in turn, DEMO_RUNS times each: the lease's
# first map and frames/s of each run, then the median of each export.
echo "== demo with each GPU ring export (FPGAD_TEST_GPU_EXPORT), ${DEMO_RUNS:=5} runs each, in turn" >> "$S"
for i in $(seq "$DEMO_RUNS"); do
	for e in fd ipc; do
		FPGAD_TEST_GPU_EXPORT=$e BUILD=$BUILD tests/demo.sh > "$OUT/logs/demo-$e-$i.log" 2>&1
		rc=$?
		map=$(sed -n 's/^setup .*first map \([0-9.]*\) ms.*/\1/p' "$OUT/logs/demo-$e-$i.log")
		fps=$(sed -n 's/^rate *\([0-9]*\) frames.*/\1/p' "$OUT/logs/demo-$e-$i.log")
		echo "$e $i ${map:--} ${fps:--}" >> "$OUT/logs/exports.txt"
		echo "demo export $e, run $i: exit $rc: $(grep '^setup' "$OUT/logs/demo-$e-$i.log" | sed 's/^setup *//'); $(grep '^rate' "$OUT/logs/demo-$e-$i.log" | sed 's/^rate *//')" >> "$S"
	done
done
for e in fd ipc; do
	awk -v e="$e" '
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n ? a[int((n + 1) / 2)] : "-"
		}
		$1 == e && $3 != "-" { m[++nm] = $3; ms = ms " " $3 }
		$1 == e && $4 != "-" { f[++nf] = $4; fs = fs " " $4 }
		END {
			printf "demo export %s: first map median %s ms (%s), frames/s median %s (%s)\n",
				e, median(m, nm), substr(ms, 2), median(f, nf), substr(fs, 2)
		}' "$OUT/logs/exports.txt" >> "$S"
done

# The same with the GPU's GPUDirect write ordering taken as none: the
# card's writes are flushed before each burst is published (its cost is
# the rate against the run above).
echo "== demo, write ordering taken as none (FPGAD_TEST_RDMA_ORDER=none)" >> "$S"
FPGAD_TEST_RDMA_ORDER=none BUILD=$BUILD tests/demo.sh > "$OUT/logs/demo-flush.log" 2>&1
echo "demo (flush): exit $?" >> "$S"
grep -E '^(mode|channel|frames|verified|drops|rate|wake-up|setup)|flushed|cannot flush' \
	"$OUT/logs/demo-flush.log" >> "$S"

echo "== fpgactl topo: the sim card, the host's GPUs, auto's choice for c2h0" >> "$S"
T=$(mktemp -d /tmp/fpgad-topo.XXXXXX)
"$BUILD/fpgad" --runtime-dir "$T" 2> "$OUT/logs/topo-fpgad.log" &
pid=$!
i=0
until "$BUILD/fpgactl" --url "ipc://$T/fpgad.sock" topo > "$OUT/logs/topo.txt" 2>&1 ||
      [ $i -ge 200 ] || ! kill -0 $pid 2>/dev/null; do
	sleep 0.05
	i=$((i + 1))
done
sed '/^Legend:/,$d' "$OUT/logs/topo.txt" >> "$S"
kill $pid 2>/dev/null
wait $pid 2>/dev/null
rm -rf "$T"

echo "== GPU suite" >> "$S"
tests/gpu/run.sh "$BUILD" "$OUT/logs/gpu" > "$OUT/logs/gpu.log" 2>&1
echo "gpu suite: exit $?" >> "$S"
tail -n 30 "$OUT/logs/gpu.log" >> "$S"

echo "== GPU suite: card memory transfers" >> "$S"
tests/gpu/xfer.sh "$BUILD" "$OUT/logs/gpu-xfer" > "$OUT/logs/gpu-xfer.log" 2>&1
echo "gpu xfer: exit $?" >> "$S"
tail -n 30 "$OUT/logs/gpu-xfer.log" >> "$S"

echo "== the integrated-GPU path on this GPU (FPGAD_TEST_GPU_INTEGRATED=1)" >> "$S"
tests/gpu/integrated.sh "$BUILD" "$OUT/logs/integrated" > "$OUT/logs/integrated.log" 2>&1
echo "integrated: exit $?" >> "$S"
grep -E '^(FAIL|integrated:)' "$OUT/logs/integrated.log" >> "$S"

echo "== CUDA in fpgad under PR_SET_MDWE (MemoryDenyWriteExecute= without systemd)" >> "$S"
tests/gpu/mdwe.sh "$BUILD" >> "$S" 2>&1
echo "mdwe: exit $?" >> "$S"

echo "== network source: UDP frames into a GPU ring (bounce), loopback" >> "$S"
MEMORY=cuda NETNS=0 BUILD=$BUILD tests/net/run.sh > "$OUT/logs/net-cuda.log" 2>&1
echo "net (cuda, loopback): exit $?" >> "$S"
grep -E 'FAIL|SKIP|passed' "$OUT/logs/net-cuda.log" >> "$S"

echo "== several cards: two sim cards on two GPUs, a verifying consumer each" >> "$S"
tests/bench/multigpu.sh "$BUILD" suite >> "$S" 2>&1
echo "multigpu: exit $? (77: skipped)" >> "$S"

echo "== MPS and a consumer of another uid" >> "$S"
tests/gpu/mps_users.sh "$BUILD" "$OUT/logs/mps-users" >> "$S" 2>&1

echo "== CUDA under fpgad.service's sandbox (needs systemd as PID 1)" >> "$S"
tests/system/gpu-sandbox.sh "$BUILD" > "$OUT/logs/gpu-sandbox.log" 2>&1
echo "gpu sandbox: exit $?" >> "$S"
grep '^gpu-sandbox:' "$OUT/logs/gpu-sandbox.log" >> "$S"

;; esac

case $STEPS in *bench*)
echo "== benchmarks" >> "$S"
BENCH_MD="$OUT/BENCHMARKS.md" tests/bench/run.sh "$BUILD" "$OUT/logs/bench" \
	> "$OUT/logs/bench.log" 2>&1
echo "bench: exit $?" >> "$S"
;; esac

case $STEPS in *targets*)
echo "== targets: three runs of each target row (about 3 minutes)" >> "$S"
t0=$(date +%s)
tests/bench/targets.sh "$BUILD" "$OUT/logs/targets" "$OUT/TARGETS.md" \
	> "$OUT/logs/targets.log" 2>&1
echo "targets: exit $? in $(($(date +%s) - t0)) s" >> "$S"
sed -n '/^| target/,/^Steps:/p' "$OUT/TARGETS.md" >> "$S"
;; esac

case $STEPS in *net*)
echo "== network: the UDP path against a bare recvmmsg loop, 1 -> 8 channels" >> "$S"
BUILD=$BUILD tests/bench/net.sh > "$OUT/logs/bench-net.log" 2>&1
echo "bench-net: exit $?" >> "$S"
grep '^bench-net:' "$OUT/logs/bench-net.log" >> "$S"
;; esac

case $STEPS in *roce*)
echo "== RoCE: the GPU landing ring with a stand-in NIC, three runs" >> "$S"
for i in 1 2 3; do
	for a in "256 65536" "256 1048576" "128 8388608" "256 1048576 none"; do
		set -- $a
		log=$OUT/logs/roce-landing-$2${3:+-$3}-$i.log
		FPGAD_TEST_RDMA_ORDER=${3:-} \
			"$BUILD/gpu/gpu_roce_landing" -n "$1" -s "$2" -m 4096 > "$log" 2>&1
		echo "roce landing run $i${3:+ (write ordering taken as $3)}: exit $?: $(grep -E 'figure|FAIL' "$log" | sed 's/^gpu-roce: //')" >> "$S"
	done
done
;; esac

tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$S"
