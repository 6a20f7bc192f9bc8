#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/bench/net.sh - network sources: fpgad's UDP path against a bare
# recvmmsg loop (bench_recv), each fed by the same sender (hsb_sender, as
# fast as it goes, SECONDS each) over loopback, alternately, RUNS times.
# Prints payload Gbit/s of both, their ratio, and payload Gbit/s per
# CPU-second of the receiving thread (fpgad's net-CHANNEL thread; the
# loop's own) with the ratio of those, then the means with their spread.
# Then UDP GRO: the sender sends coalesced (--gso, UDP_SEGMENT) to a
# channel with gro = yes and to one with gro = no (the kernel splits the
# datagrams before the socket), and the ratio of the two.  Then channel
# scaling: one sender into one channel, then SCALE senders into SCALE
# channels at once, and the ratio of the payload delivered.  Then a
# shared port: one sender into channel sh0 of a port it shares with sh1
# (told apart by QPN: datagrams copied from the port's buffers), per
# CPU-second against net0's alone.  Figures, never assertions.
#
# Runs from a build folder alone (make net-bin, STATIC=1 for a host that
# cannot build): fpgad, fpgactl, net/hsb_sender, net/net_consumer and
# bench/bench_recv, with sh, awk and sed.
#
# Environment: BUILD (build), RUNS (3), SECONDS (2), FRAME (1048576),
# MTU (9000), MEMORY (host, or cuda: bounce into a GPU ring), SCALE (8;
# 0: no scaling rows).
set -u
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
SECONDS_=${SECONDS:-2}
FRAME=${FRAME:-1048576}
MTU=${MTU:-9000}
SLOTS=16
SCALE=${SCALE:-8}
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
queue_depth = $((SLOTS - 4))
memory = ${MEMORY:-host}
sender_control = none
CONF
# The same channel without UDP GRO, for its row.
sed -n '/^\[channel net0\]/,$p' "$dir/fpgad.conf" |
	sed 's/^\[channel net0\]/[channel net1]/; $a gro = no' >> "$dir/fpgad.conf"
# The channels of the scaling rows, sc0 .. sc(SCALE-1).
i=0
while [ "$i" -lt "$SCALE" ]; do
	sed -n '/^\[channel net0\]/,/^\[channel net1\]/p' "$dir/fpgad.conf" |
		sed '$d; s/^\[channel net0\]/[channel sc'$i']/' >> "$dir/fpgad.conf"
	i=$((i + 1))
done
# Two channels on one port, its number one bench_recv was given (read back).
"$BUILD/bench/bench_recv" 127.0.0.1 > "$dir/free.out" &
fpid=$!
for _ in $(seq 100); do grep -q '^port' "$dir/free.out" && break; sleep 0.02; done
shport=$(sed -n 's/^port //p' "$dir/free.out")
kill "$fpid"
wait "$fpid" 2>/dev/null
for sh in "sh0" "sh1
qpn = 0x101"; do
	sed -n '/^\[channel net0\]/,/^\[channel net1\]/p' "$dir/fpgad.conf" |
		sed '$d; s/^\[channel net0\]/[channel '"${sh%%
*}"']/; s/^listen = .*/listen = 127.0.0.1:'"$shport"'/' >> "$dir/fpgad.conf"
	[ "$sh" = sh0 ] || echo "${sh#*
}" >> "$dir/fpgad.conf"
done
"$BUILD/fpgad" --config "$dir/fpgad.conf" 2>"$dir/fpgad.log" &
pid=$!
for _ in $(seq 100); do
	[ -S "$dir/fpgad.sock" ] && break
	sleep 0.05
done
url="ipc://$dir/fpgad.sock"
stats() { "$BUILD/fpgactl" --url "$url" --json stats "${1:-net0}"; }
# field NAME: its value in the stats on stdin (fpgactl --json prints one
# key a line; jq is not on every host).
field() { sed -n 's/^ *"'"$1"'": *"\{0,1\}\([^",]*\)"\{0,1\},\{0,1\}$/\1/p'; }
port_of() { stats "$1" | field listen | sed 's/.*://'; }
port=$(port_of net0)
port1=$(port_of net1)
[ -n "$port" ] || { cat "$dir/fpgad.log"; echo "bench-net: fpgad did not start"; exit 1; }
# CPU ticks of fpgad's receiving thread of channel $1 (net0).
net_ticks() {
	for t in /proc/$pid/task/*; do
		[ "$(cat "$t/comm")" = "net-${1:-net0}" ] && awk '{ print $14 + $15 }' "$t/stat"
	done
}
# send PORT [SENDER OPTIONS]: the seconds it sent for.
send() {
	p=$1
	shift
	"$BUILD/net/hsb_sender" --to 127.0.0.1:"$p" --frame "$FRAME" --slots $SLOTS \
		--mtu "$MTU" --rkey 0x5eed --seconds "$SECONDS_" "$@" |
		sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'
}
# through CHANNEL PORT [SENDER OPTIONS]: "GBIT PER_CORE" delivered by fpgad,
# a consumer holding the lease (releasing at once).
through() {
	ch=$1 p=$2
	shift 2
	"$BUILD/net/net_consumer" "$url" "$ch" --idle-ms 500 --verify 0 > "$dir/cons.out" 2>&1 &
	cpid=$!
	for _ in $(seq 100); do grep -q '^leased' "$dir/cons.out" && break; sleep 0.02; done
	b0=$(stats "$ch" | field payload_bytes)
	t0=$(net_ticks "$ch")
	fs=$(send "$p" "$@")
	wait $cpid
	b1=$(stats "$ch" | field payload_bytes)
	t1=$(net_ticks "$ch")
	fcpu=$(div $((t1 - t0)) "$tck")
	echo "$(gbit $((b1 - b0)) "$fs") $( [ "$fcpu" != 0.000 ] && gbit $((b1 - b0)) "$fcpu" || echo '?')"
}
# Arithmetic in awk (bc is not on every host).
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a / b : 0 }'; }
gbit() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a * 8 / b / 1e9 : 0 }'; }

echo "bench-net: $RUNS runs of $SECONDS_ s, $FRAME-byte frames, MTU $MTU, loopback, $(nproc) CPUs"
ratios=
cpus=
gros=
shares=
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

	set -- $(through net0 "$port")
	ours=$1 percore=$2
	bare=$(gbit "$bb" "$bs")
	barecore=$(gbit "$bb" "$bcpu")
	ratio=$(div "$ours" "$bare")
	ratios="$ratios $ratio"
	cpur=$( [ "$percore" != '?' ] && div "$percore" "$barecore" || echo '?')
	cpus="$cpus $cpur"
	echo "bench-net: run $i: bare recvmmsg $bare Gbit/s ($barecore per CPU-second); fpgad $ours Gbit/s delivered ($percore per CPU-second of net-net0); ratio $ratio; per CPU-second $cpur; consumer: $(tail -1 "$dir/cons.out")"

	# Coalesced datagrams, with and without UDP GRO on fpgad's socket.
	set -- $(through net0 "$port" --gso)
	gro=$1 grocore=$2
	set -- $(through net1 "$port1" --gso)
	nogro=$1 nogrocore=$2
	r=$(div "$gro" "$nogro")
	gros="$gros $r"
	echo "bench-net: run $i: sender --gso: fpgad with UDP GRO $gro Gbit/s ($grocore per core), without $nogro Gbit/s ($nogrocore per core); ratio $r"

	# A port shared by two channels: copied from the port's buffers.
	set -- $(through sh0 "$shport")
	r=$( [ "$2" != '?' ] && [ "$percore" != '?' ] && div "$2" "$percore" || echo '?')
	shares="$shares $r"
	echo "bench-net: run $i: shared port: fpgad into sh0 (sh1 on its port too) $1 Gbit/s ($2 per CPU-second of net-sh0); per CPU-second / net0's alone $r"
done
spread() {
	echo "$2" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk -v what="$1" '{ v[NR] = $1; s += $1 }
		END { printf "bench-net: %s: mean %.3f, spread %.3f..%.3f over %d runs\n", what, s / NR, v[1], v[NR], NR }'
}
spread "fpgad / bare recvmmsg, delivered" "$ratios"
spread "fpgad / bare recvmmsg, per CPU-second of the receiving thread" "$cpus"
spread "fpgad with UDP GRO / without (sender --gso)" "$gros"
spread "a shared port's channel / a port's only one, per CPU-second" "$shares"

# scaled N: "GBIT" delivered by channels sc0 .. sc(N-1), each with its
# consumer and its sender, all at once.
scaled() {
	n=$1 k=0 before=0 after=0 secs=0 pids=
	while [ "$k" -lt "$n" ]; do
		"$BUILD/net/net_consumer" "$url" sc$k --idle-ms 500 --verify 0 > "$dir/cons$k.out" 2>&1 &
		pids="$pids $!"
		k=$((k + 1))
	done
	k=0
	while [ "$k" -lt "$n" ]; do
		for _ in $(seq 100); do grep -q '^leased' "$dir/cons$k.out" && break; sleep 0.02; done
		before=$((before + $(stats sc$k | field payload_bytes)))
		k=$((k + 1))
	done
	k=0
	while [ "$k" -lt "$n" ]; do
		send "$(port_of sc$k)" > "$dir/send$k.out" &
		pids="$pids $!"
		k=$((k + 1))
	done
	wait $pids
	k=0
	while [ "$k" -lt "$n" ]; do
		after=$((after + $(stats sc$k | field payload_bytes)))
		secs=$(awk -v a="$secs" -v b="$(cat "$dir/send$k.out")" 'BEGIN { print (a + 0 > b + 0 ? a : b) }')
		k=$((k + 1))
	done
	gbit $((after - before)) "$secs"
}
if [ "$SCALE" -gt 0 ]; then
	scales=
	for i in $(seq "$RUNS"); do
		one=$(scaled 1)
		many=$(scaled "$SCALE")
		r=$(div "$many" "$one")
		scales="$scales $r"
		echo "bench-net: run $i: channels: 1 sender into 1 channel $one Gbit/s; $SCALE senders into $SCALE channels $many Gbit/s; ratio $r"
	done
	spread "$SCALE channels / 1, payload delivered" "$scales"
fi
kill -TERM "$pid"
wait "$pid"
pid=
