#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/run-gpu-host.sh BUILD OUT - on a GPU host, from binaries built
# elsewhere (make STATIC=1 BUILD=BUILD all gpu bench-bin): the demo in GPU
# memory, the GPU suite, CUDA under the unit's sandbox and the benchmarks.  OUT receives summary.txt,
# BENCHMARKS.md and logs.tgz (every log).  Builds nothing.
set -u
BUILD=${1:?usage: tests/run-gpu-host.sh BUILD OUT}
OUT=${2:?usage: tests/run-gpu-host.sh BUILD OUT}
mkdir -p "$OUT/logs"
S=$OUT/summary.txt
: > "$S"

# Libraries the build host linked dynamically, should this host lack them.
if ldd "$BUILD/fpgad" | grep -q 'not found' && [ -d "$BUILD/lib" ]; then
	export LD_LIBRARY_PATH="$BUILD/lib"
fi
{
	echo "host: $(hostname), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	nvidia-smi -L 2>&1
	ldd "$BUILD/fpgad" | grep 'not found' || true
} >> "$S"

echo "== demo: capture and verify 10,000 frames (GPU memory)" >> "$S"
BUILD=$BUILD tests/demo.sh > "$OUT/logs/demo.log" 2>&1
echo "demo: exit $?" >> "$S"
grep -E '^(mode|channel|frames|verified|drops|rate|wake-up)' "$OUT/logs/demo.log" >> "$S"

echo "== GPU suite" >> "$S"
tests/gpu/run.sh "$BUILD" "$OUT/logs/gpu" > "$OUT/logs/gpu.log" 2>&1
echo "gpu suite: exit $?" >> "$S"
tail -n 30 "$OUT/logs/gpu.log" >> "$S"

echo "== CUDA under fpgad.service's sandbox (needs systemd as PID 1)" >> "$S"
tests/system/gpu-sandbox.sh "$BUILD" > "$OUT/logs/gpu-sandbox.log" 2>&1
echo "gpu sandbox: exit $?" >> "$S"
grep '^gpu-sandbox:' "$OUT/logs/gpu-sandbox.log" >> "$S"

echo "== benchmarks" >> "$S"
BENCH_MD="$OUT/BENCHMARKS.md" tests/bench/run.sh "$BUILD" "$OUT/logs/bench" \
	> "$OUT/logs/bench.log" 2>&1
echo "bench: exit $?" >> "$S"

tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$S"
