#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/bench/net.sh - network sources: fpgad's UDP path against a bare
# recvmmsg loop (bench_recv), each fed by the same sender (hsb_sender, as
# fast as it goes, SECONDS each) over loopback, alternately, RUNS times.
# Prints payload Gbit/s of both, their ratio, and payload Gbit/s per core
# of the receiving thread (fpgad's net-CHANNEL thread; the loop's own),
# then the mean ratio with its spread.  Figures, never assertions.
#
# Environment: BUILD (build), RUNS (3), SECONDS (2), FRAME (1048576),
# MTU (9000), MEMORY (host, or cuda: bounce into a GPU ring).
set -u
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
SECONDS_=${SECONDS:-2}
FRAME=${FRAME:-1048576}
MTU=${MTU:-9000}
SLOTS=16
tck=$(getconf CLK_TCK)
dir=$(mktemp -d /tmp/fpgad-bench-net.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cat > "$dir/fpgad.conf" <<CONF
[daemon]
runtime_dir = $dir
log_level = notice
[channel net0]
source = udp
listen = 127.0.0.1:0
sender = 127.0.0.1
mtu = $MTU
rkey = 0x5eed
slots = $SLOTS
slot_size = $(( (FRAME + 4095) / 4096 * 4096 ))
frame_size = $FRAME
queue_depth = $SLOTS
memory = ${MEMORY:-host}
CONF
"$BUILD/fpgad" --config "$dir/fpgad.conf" 2>"$dir/fpgad.log" &
pid=$!
for _ in $(seq 100); do
	[ -S "$dir/fpgad.sock" ] && break
	sleep 0.05
done
url="ipc://$dir/fpgad.sock"
stats() { "$BUILD/fpgactl" --url "$url" --json stats net0; }
port=$(stats | jq -r '.net.listen' | sed 's/.*://')
[ -n "$port" ] || { cat "$dir/fpgad.log"; echo "bench-net: fpgad did not start"; exit 1; }
# CPU ticks of fpgad's receiving thread.
net_ticks() {
	for t in /proc/$pid/task/*; do
		[ "$(cat "$t/comm")" = net-net0 ] && awk '{ print $14 + $15 }' "$t/stat"
	done
}
send() {
	"$BUILD/net/hsb_sender" --to 127.0.0.1:"$1" --frame "$FRAME" --slots $SLOTS \
		--mtu "$MTU" --rkey 0x5eed --seconds "$SECONDS_" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'
}
gbit() { echo "scale=3; $1 * 8 / $2 / 1000000000" | bc; }

echo "bench-net: $RUNS runs of $SECONDS_ s, $FRAME-byte frames, MTU $MTU, loopback, $(nproc) CPUs"
ratios=
for i in $(seq "$RUNS"); do
	# The bare loop.
	"$BUILD/bench/bench_recv" 127.0.0.1 > "$dir/bare.out" &
	bpid=$!
	for _ in $(seq 100); do grep -q '^port' "$dir/bare.out" && break; sleep 0.02; done
	bport=$(sed -n 's/^port //p' "$dir/bare.out")
	bs=$(send "$bport")
	wait $bpid
	bb=$(sed -n 's/.*payload_bytes=\([0-9]*\).*/\1/p' "$dir/bare.out")
	bcpu=$(sed -n 's/.*cpu_seconds=\([0-9.]*\).*/\1/p' "$dir/bare.out")

	# fpgad, a consumer holding the lease (releasing at once).
	"$BUILD/net/net_consumer" "$url" net0 --idle-ms 500 --verify 0 > "$dir/cons.out" 2>&1 &
	cpid=$!
	for _ in $(seq 100); do grep -q '^leased' "$dir/cons.out" && break; sleep 0.02; done
	b0=$(stats | jq '.net.payload_bytes')
	t0=$(net_ticks)
	fs=$(send "$port")
	wait $cpid
	b1=$(stats | jq '.net.payload_bytes')
	t1=$(net_ticks)
	fb=$((b1 - b0))
	fcpu=$(echo "scale=3; ($t1 - $t0) / $tck" | bc)

	bare=$(gbit "$bb" "$bs")
	ours=$(gbit "$fb" "$fs")
	ratio=$(echo "scale=3; $ours / $bare" | bc)
	ratios="$ratios $ratio"
	echo "bench-net: run $i: bare recvmmsg $bare Gbit/s ($(gbit "$bb" "$bcpu") per core); fpgad $ours Gbit/s delivered ($( [ "$fcpu" != 0 ] && gbit "$fb" "$fcpu" || echo '?') per core of net-net0); ratio $ratio; consumer: $(tail -1 "$dir/cons.out")"
done
echo "$ratios" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1; s += $1 }
	END { printf "bench-net: fpgad / bare recvmmsg: mean %.3f, spread %.3f..%.3f over %d runs\n", s / NR, v[1], v[NR], NR }'
kill -TERM "$pid"
wait "$pid"
pid=
