#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/net/run.sh - network sources end to end: fpgad in one network
# namespace, an HSB-style sender (hsb_sender) in another, a veth pair
# between them, a verifying consumer written against fpgad.h alone
# (net_consumer).  Every fault the sender can make runs once: no torn or
# stale frame may reach the consumer as good, and fpgad's counters
# (fpgactl --json stats) must count each fault.  Each case starts the
# sender first, listening on a control port of its own (port 0, read
# back), then an fpgad told to configure it there (sender_control): the
# sender sends once fpgad told it the lessee's ring (its second target:
# the first is the ring fpgad starts with).  One case configures the
# sender by flags from fpgactl stats instead, as before.  Names carry a random
# suffix; everything is removed on exit.  Needs root (namespaces).
# NETNS=0 runs the same on loopback instead, unprivileged and without the
# ip command: fpgad on 127.0.0.1, the sender from 127.0.0.1, the wrong
# sender from 127.0.0.2 (loopback owns 127/8).
#
# Environment: BUILD (default build), MEMORY (the ring's: host, the
# default, or cuda: bounce into a GPU ring), NETNS (1, the default, or 0).
# Exit status: 0 passed, 1 failed.
set -u
BUILD=${BUILD:-build}
tag=net channel=net0
. "$(dirname "$0")/lib.sh"

NETNS=${NETNS:-1}
if [ "$NETNS" != 0 ] && [ "$(id -u)" != 0 ]; then
	echo "net: SKIP: needs root to create network namespaces and a veth pair (NETNS=0: loopback, unprivileged)"
	exit 0
fi
tools="jq timeout"
[ "$NETNS" != 0 ] && tools="$tools ip"
for t in $tools; do
	command -v $t >/dev/null 2>&1 || { echo "net: SKIP: $t is not installed"; exit 0; }
done

sfx=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
ns_rx=fpgad-rx-$sfx
ns_tx=fpgad-tx-$sfx
if_rx=fr$sfx
if_tx=ft$sfx
dir=$(mktemp -d /tmp/fpgad-net.XXXXXX)
url=
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	if [ "$NETNS" != 0 ]; then
		ip netns del "$ns_rx" 2>/dev/null
		ip netns del "$ns_tx" 2>/dev/null
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# $in_rx / $in_tx COMMAND...: COMMAND on fpgad's side, on the sender's
# (a prefix, not a function: $! is then the command's own pid).
in_rx= in_tx=
[ "$NETNS" != 0 ] && in_rx="ip netns exec $ns_rx" in_tx="ip netns exec $ns_tx"

if [ "$NETNS" = 0 ]; then
	# Loopback: every port is bound as port 0 and read back.
	RX=127.0.0.1 TX=127.0.0.1 ALT=127.0.0.2
	echo "net: loopback (NETNS=0): fpgad on $RX, the sender on $TX, the wrong sender on $ALT"
# Addresses inside namespaces of this run alone: no other run can hold them.
elif RX=10.77.0.1 TX=10.77.0.2 ALT=10.77.0.3 &&
   ! { ip netns add "$ns_rx" && ip netns add "$ns_tx" &&
       ip link add "$if_rx" type veth peer name "$if_tx" &&
       ip link set "$if_rx" netns "$ns_rx" && ip link set "$if_tx" netns "$ns_tx" &&
       ip -n "$ns_rx" addr add $RX/24 dev "$if_rx" &&
       ip -n "$ns_tx" addr add $TX/24 dev "$if_tx" &&
       ip -n "$ns_tx" addr add $ALT/24 dev "$if_tx" &&
       ip -n "$ns_rx" link set lo up && ip -n "$ns_tx" link set lo up &&
       ip -n "$ns_rx" link set "$if_rx" up && ip -n "$ns_tx" link set "$if_tx" up; }; then
	echo "net: SKIP: cannot create network namespaces and a veth pair here (a container without CAP_NET_ADMIN?)"
	exit 0
fi

FRAME=60000
SLOTS=16
# Frames per second the sender sends.  Unprivileged, fpgad's socket
# buffer stops at net.core.rmem_max (SO_RCVBUFFORCE needs CAP_NET_ADMIN):
# slower, so that a busy machine's kernel drops none.
RATE=1000
[ "$(id -u)" != 0 ] && RATE=250
# channel_conf NAME LISTEN QPN CONTROL [KEY=VALUE]: a channel from $TX on
# LISTEN, told QPN, telling the sender its target at CONTROL
# (sender_control), with one more key if given.
channel_conf() {
	cat <<CONF
[channel $1]
source = udp
listen = $2
sender = $TX
mtu = 1500
qpn = $3
slots = $SLOTS
slot_size = 64K
frame_size = $FRAME
queue_depth = $SLOTS
memory = ${MEMORY:-host}
sender_control = $4
${5:-}
CONF
}

# start_fpgad CONTROL [KEY=VALUE]: a new fpgad (its own runtime folder,
# $url) whose channel net0 (channel_conf, on $listen or port 0) tells the
# sender its target at CONTROL; its bound data port in $port.  $channels:
# more channels' sections.
n_fpgad=0
fpgad_key=	# one more key for the fpgad of run_case
channels=
start_fpgad() {
	n_fpgad=$((n_fpgad + 1))
	rt=$dir/rt$n_fpgad
	mkdir -p "$rt"
	url="ipc://$rt/fpgad.sock"
	{ printf '[daemon]\nruntime_dir = %s\n' "$rt"
	  channel_conf net0 "${listen:-$RX:0}" 0x4d2 "$1" "${2:-}"
	  echo "$channels"; } > "$rt/fpgad.conf"
	$in_rx "$BUILD/fpgad" --config "$rt/fpgad.conf" 2>"$rt/fpgad.log" &
	pid=$!
	for _ in $(seq 100); do
		[ -S "$rt/fpgad.sock" ] && break
		sleep 0.05
	done
	[ -S "$rt/fpgad.sock" ] || { cat "$rt/fpgad.log"; bad "fpgad did not start"; exit 1; }
	port=$(stats | jq -r '.net.listen' | sed 's/.*://')
}

# stop_fpgad: SIGTERM, and it exits 0.
stop_fpgad() {
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	pid=
	[ "$rc" = 0 ] || bad "fpgad: exit status after SIGTERM $rc, want 0"
}

# start_sender OUT [OPTIONS]: a sender configured by fpgad, listening on a
# control port of its own (in $cport) before fpgad starts; its pid in $spid.
start_sender() {
	out=$1
	shift
	$in_tx timeout 60 "$BUILD/net/hsb_sender" --control 0 --configs 2 --from $TX \
		"$@" >"$out" 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		grep -q '^control' "$out" && break
		sleep 0.05
	done
	cport=$(sed -n 's/^control .*:\([0-9]*\)$/\1/p' "$out")
}

start_fpgad none
[ -n "$port" ] && [ "$port" != 0 ] &&
	ok "net0 listens on $RX:$port (port 0 in the file), mode $(stats | jq -r .mode)" ||
	bad "net0's bound port: '$port'"

check channels "net0's source" "$("$BUILD/fpgactl" --url "$url" --json channels | jq -r '.channels[0].source')" udp
stop_fpgad

# run_case NAME FAULT [SENDER OPTIONS]: send 300 frames at $RATE frames/s,
# every 7th faulted, to a new fpgad that configures the sender.
run_case() {
	name=$1 fault=$2
	shift 2
	t0=$(date +%s.%N)
	start_sender "$dir/$name.sent" --alt-from $ALT --count 300 --rate $RATE \
		--fault "$fault" --every 7 "$@"
	[ -n "$cport" ] || { cat "$dir/$name.sent"; bad "$name: the sender has no control port"; return; }
	start_fpgad "$TX:$cport" "$fpgad_key"
	before=$(stats)
	consume "$dir/$name.out" || { bad "$name: the consumer did not get its lease"; return; }
	wait $spid || { cat "$dir/$name.sent"; bad "$name: the sender failed"; }
	wait $cpid
	crc=$?
	after=$(stats)
	deltas
	check "$name" "the R_Key the sender was told" "$(field "$dir/$name.sent" rkey)" \
		"$(echo "$after" | jq -r .net.rkey)"
	check "$name" "targets the sender acknowledged" "$(echo "$after" | jq -r .net.control_acks)" 2
	stop_fpgad
	sent=$(field "$dir/$name.sent" frames)
	faulted=$(field "$dir/$name.sent" faulted)
	foreign=$(field "$dir/$name.sent" foreign_packets)
	good=$(field "$dir/$name.out" good)
	kd=$(delta .net.kernel_drops)
	echo "net: $name: $(tail -1 "$dir/$name.sent"); consumer $(tail -1 "$dir/$name.out"); $(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null) s"
	[ "$crc" = 0 ] && [ "$(field "$dir/$name.out" bad)" = 0 ] &&
		ok "$name: no torn or stale frame reached the consumer as good" ||
		bad "$name: the consumer found bad frames (exit $crc): $(tail -2 "$dir/$name.out")"
	[ "${good:-0}" -gt 0 ] && ok "$name: $good frames verified" ||
		bad "$name: no frame verified"
	if [ "$kd" != 0 ]; then
		bad "$name: the kernel dropped $kd datagrams (machine too busy?): counts below are off by them"
	fi
	lost=$(delta .net.lost_packets) late=$(delta .net.late_packets)
	torn=$(( $(delta .net.incomplete_frames) + $(delta .net.no_slot_frames) ))
	inc=$(delta .net.incomplete_frames)
	# Every frame sent has one outcome: delivered, incomplete or no slot
	# (a lost immediate merges two frames into one outcome).
	outcomes=$(( $(delta .frames) + torn ))
	merged=0
	[ "$fault" = lose-imm ] && merged=$faulted
	check "$name" "frames delivered + incomplete + no slot" $outcomes $((sent - merged))
	case $fault in
	none)
		check "$name" "bad iCRC" "$(delta .net.bad_icrc)" 0
		check "$name" "lost packets" "$lost" 0
		check "$name" "late packets" "$late" 0
		check "$name" "incomplete frames" "$inc" 0 ;;
	bad-icrc)
		# The packet is not used: lost, its frame never delivered.
		check "$name" "bad iCRC" "$(delta .net.bad_icrc)" "$faulted"
		check "$name" "lost packets" "$lost" "$faulted"
		[ "$torn" -ge "$faulted" ] && ok "$name: $torn frames not delivered, $faulted faulted" ||
			bad "$name: $torn frames not delivered, $faulted faulted" ;;
	drop|lose-imm)
		check "$name" "lost packets" "$lost" "$faulted"
		check "$name" "late packets" "$late" 0
		[ "$torn" -ge "$faulted" ] && ok "$name: $torn frames not delivered, $faulted faulted" ||
			bad "$name: $torn frames not delivered, $faulted faulted" ;;
	dup)
		check "$name" "late packets" "$late" "$faulted"
		check "$name" "lost packets" "$lost" 0
		check "$name" "incomplete frames" "$inc" 0 ;;
	reorder)
		check "$name" "late packets" "$late" "$faulted"
		check "$name" "lost packets" "$lost" "$faulted"
		[ "$torn" -ge "$faulted" ] && ok "$name: $torn frames not delivered, $faulted faulted" ||
			bad "$name: $torn frames not delivered, $faulted faulted" ;;
	bad-rkey|bad-qpn|wrong-sender)
		key=$(echo "$fault" | sed 's/bad-rkey/wrong_rkey/; s/bad-qpn/wrong_qp/; s/wrong-sender/wrong_sender/')
		check "$name" "$key" "$(delta .net.$key)" "$foreign"
		check "$name" "lost packets" "$lost" 0
		check "$name" "incomplete frames" "$inc" 0 ;;
	esac
}

# The sender's frame start and end times reach the consumer exactly as
# sent (hsb_sender --stamp: known ones), and as 0 from a sender that
# sends none.
consumer_args="--stamp none"
run_case none none
consumer_args="--stamp 1733200000000000000"
run_case stamp none --stamp 1733200000000000000
consumer_args=
for f in drop dup reorder lose-imm bad-rkey bad-qpn wrong-sender bad-icrc; do
	run_case "$f" "$f"
done
# Packets coalesced by the sender (UDP_SEGMENT), split again by fpgad
# (UDP_GRO where the path keeps them whole): the same frames, the same counts.
run_case gso none --gso
run_case gso-drop drop --gso
# A sender that sends no iCRC, served by a channel told so (icrc = no).
fpgad_key="icrc = no"
run_case no-icrc none --no-icrc
fpgad_key=

# Configured by flags from fpgactl stats (sender_control = none).
start_fpgad none
before=$(stats)
consume "$dir/flags.out" || bad "flags: no lease"
$in_tx timeout 60 "$BUILD/net/hsb_sender" --to $RX:$port --from $TX --qpn 0x4d2 \
	--rkey "$(stats | jq -r .net.rkey)" --frame $FRAME --slots $SLOTS --count 100 \
	--rate $RATE >"$dir/flags.sent" 2>&1 || bad "flags: the sender failed"
wait $cpid
crc=$?
after=$(stats)
deltas
[ "$crc" = 0 ] && [ "$(field "$dir/flags.out" good)" -gt 0 ] &&
	ok "flags: $(field "$dir/flags.out" good) frames verified, none bad" ||
	bad "flags: $(tail -2 "$dir/flags.out")"
check flags "frames delivered + incomplete + no slot" \
	$(( $(delta .frames) + $(delta .net.incomplete_frames) + $(delta .net.no_slot_frames) )) 100
check flags "targets sent" "$(echo "$after" | jq -r '.net.control_acks + .net.control_failures')" 0

# A sender still writing to the ring of the lessee before is refused: each
# lease gets a ring of its own with a new R_Key.
stale_rkey_leases 2000
$in_tx timeout 60 "$BUILD/net/hsb_sender" --to $RX:$port --from $TX \
	--qpn 0x4d2 --rkey "$old" --frame $FRAME --slots $SLOTS --count 20 --rate $RATE \
	>"$dir/stale.sent" 2>&1
stale_rkey_refused
check stale-rkey "wrong_rkey" "$(delta .net.wrong_rkey)" "$(field "$dir/stale.sent" packets)"
"$BUILD/fpgactl" --url "$url" stats net0 | sed 's/^/net:   /'
stop_fpgad

# A sender that never acknowledges: fpgad retries a bounded number of
# times, then counts and logs each target it could not deliver (the ring
# fpgad starts with, the lessee's).
start_sender "$dir/no-ack.sent" --no-ack --count 20 --rate $RATE
start_fpgad "$TX:$cport"
consume "$dir/no-ack.out" || bad "no-ack: no lease"
wait $spid
wait $cpid
# 5 tries 200 ms apart: the second target's last one is due by now.
for _ in $(seq 40); do
	[ "$(stats | jq -r .net.control_failures)" = 2 ] && break
	sleep 0.1
done
after=$(stats)
check no-ack "targets not acknowledged" "$(echo "$after" | jq -r .net.control_failures)" 2
check no-ack "targets acknowledged" "$(echo "$after" | jq -r .net.control_acks)" 0
grep -q "did not acknowledge its target" "$rt/fpgad.log" &&
	ok "no-ack: fpgad says the sender did not acknowledge" ||
	bad "no-ack: no log line: $(tail -3 "$rt/fpgad.log")"
"$BUILD/fpgactl" --url "$url" stats net0 >/dev/null &&
	ok "no-ack: fpgad still serves" || bad "no-ack: fpgad stopped serving"
stop_fpgad

# Two channels on one port (net0 QPN 0x4d2, net1 0x4d3), two senders at
# once, each told its channel's target by fpgad, each consumer checking
# its own sender's frames (their times differ: --stamp); net0 is leased
# (a new ring, its slots reset) once net1's frames flow, and net1 loses
# nothing to it; a third sender at once to QPN 0x4d4, no channel's, is
# counted in both channels' wrong_qp and never delivered.  The port: one
# a first fpgad was given (port 0), read back.
start_fpgad none
shared=$RX:$port
stop_fpgad
start_sender "$dir/share0.sent" --count 300 --rate $RATE --stamp 1733200000000000000
spid0=$spid cport0=$cport
start_sender "$dir/share1.sent" --count 1000 --rate $RATE --stamp 1733300000000000000
spid1=$spid
channels=$(channel_conf net1 "$shared" 0x4d3 "$TX:$cport")
listen=$shared
start_fpgad "$TX:$cport0"
channels= listen=
check shared "net1's port" "$(channel=net1 stats | jq -r .net.listen)" "$shared"
check shared "net0's port" "$(stats | jq -r .net.listen)" "$shared"
before0=$(stats) before1=$(channel=net1 stats)
consumer_args="--stamp 1733300000000000000"
channel=net1
consume "$dir/share1.out" || bad "shared: net1's consumer did not get its lease"
cpid1=$cpid channel=net0
for _ in $(seq 200); do
	[ "$(channel=net1 stats | jq -r .frames)" -gt 0 ] && break
	sleep 0.05
done
consumer_args="--stamp 1733200000000000000"
consume "$dir/share0.out" || bad "shared: net0's consumer did not get its lease"
cpid0=$cpid
consumer_args=
kill -0 $spid1 2>/dev/null &&
	ok "shared: net0 leased while net1's sender sends" ||
	echo "net: shared: net1's sender was done before net0's lease (a slow machine): the lease mid-stream is not shown this run"
$in_tx timeout 60 "$BUILD/net/hsb_sender" --to "$shared" --from $TX --qpn 0x4d4 \
	--rkey 1 --frame $FRAME --slots $SLOTS --count 100 --rate $RATE \
	>"$dir/share2.sent" 2>&1 || bad "shared: the sender to QPN 0x4d4 failed"
wait $spid0 || bad "shared: net0's sender failed: $(tail -1 "$dir/share0.sent")"
wait $spid1 || bad "shared: net1's sender failed: $(tail -1 "$dir/share1.sent")"
wait $cpid0
crc0=$?
wait $cpid1
crc1=$?
after0=$(stats) after1=$(channel=net1 stats)
stranger=$(field "$dir/share2.sent" packets)
for c in 0 1; do
	eval "before=\$before$c after=\$after$c crc=\$crc$c"
	out=$dir/share$c.out
	echo "net: shared net$c: $(tail -1 "$dir/share$c.sent"); consumer $(tail -1 "$out")"
	[ "$crc" = 0 ] && [ "$(field "$out" bad)" = 0 ] && [ "$(field "$out" good)" -gt 0 ] &&
		ok "shared: net$c: $(field "$out" good) frames of its own sender verified, none bad" ||
		bad "shared: net$c's consumer (exit $crc): $(tail -2 "$out")"
	check shared "net$c: frames delivered + incomplete + no slot" \
		$(( $(delta .frames) + $(delta .net.incomplete_frames) + $(delta .net.no_slot_frames) )) \
		"$(field "$dir/share$c.sent" frames)"
	check shared "net$c: targets the sender acknowledged" "$(echo "$after" | jq -r .net.control_acks)" 2
	check shared "net$c: wrong_qp (the packets to QPN 0x4d4)" "$(delta .net.wrong_qp)" "$stranger"
	check shared "net$c: lost packets" "$(delta .net.lost_packets)" 0
	check shared "net$c: kernel drops" "$(delta .net.kernel_drops)" 0
done
stop_fpgad
echo "net: $pass passed, $fail failed"
[ "$fail" = 0 ]
