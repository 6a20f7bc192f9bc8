#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/net/run.sh - network sources end to end: fpgad in one network
# namespace, an HSB-style sender (hsb_sender) in another, a veth pair
# between them, a verifying consumer written against fpgad.h alone
# (net_consumer).  Every fault the sender can make runs once: no torn or
# stale frame may reach the consumer as good, and fpgad's counters
# (fpgactl --json stats) must count each fault.  Names carry a random
# suffix; everything is removed on exit.  Needs root (namespaces).
#
# Environment: BUILD (default build), MEMORY (the ring's: host, the
# default, or cuda: bounce into a GPU ring).  Exit status: 0 passed, 1 failed.
set -u
BUILD=${BUILD:-build}
tag=net channel=net0
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "net: SKIP: needs root to create network namespaces and a veth pair"
	exit 0
fi
for t in ip jq timeout; do
	command -v $t >/dev/null 2>&1 || { echo "net: SKIP: $t is not installed"; exit 0; }
done

sfx=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
ns_rx=fpgad-rx-$sfx
ns_tx=fpgad-tx-$sfx
if_rx=fr$sfx
if_tx=ft$sfx
dir=$(mktemp -d /tmp/fpgad-net.XXXXXX)
url="ipc://$dir/fpgad.sock"
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	ip netns del "$ns_rx" 2>/dev/null
	ip netns del "$ns_tx" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Addresses inside namespaces of this run alone: no other run can hold them.
RX=10.77.0.1 TX=10.77.0.2 ALT=10.77.0.3
if ! { ip netns add "$ns_rx" && ip netns add "$ns_tx" &&
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
cat > "$dir/fpgad.conf" <<CONF
[daemon]
runtime_dir = $dir
[channel net0]
source = udp
listen = $RX:0
sender = $TX
mtu = 1500
qpn = 0x4d2
slots = $SLOTS
slot_size = 64K
frame_size = $FRAME
queue_depth = $SLOTS
memory = ${MEMORY:-host}
CONF
ip netns exec "$ns_rx" "$BUILD/fpgad" --config "$dir/fpgad.conf" 2>"$dir/fpgad.log" &
pid=$!
for _ in $(seq 100); do
	[ -S "$dir/fpgad.sock" ] && break
	sleep 0.05
done
[ -S "$dir/fpgad.sock" ] || { cat "$dir/fpgad.log"; bad "fpgad did not start"; exit 1; }

port=$(stats | jq -r '.net.listen' | sed 's/.*://')
[ -n "$port" ] && [ "$port" != 0 ] &&
	ok "net0 listens on $RX:$port (port 0 in the file), mode $(stats | jq -r .mode)" ||
	bad "net0's bound port: '$port'"

check channels "net0's source" "$("$BUILD/fpgactl" --url "$url" --json channels | jq -r '.channels[0].source')" udp

# run_case NAME FAULT: send 300 frames at 1000 frames/s, every 7th faulted.
run_case() {
	name=$1 fault=$2
	t0=$(date +%s.%N)
	before=$(stats)
	rkey=$(echo "$before" | jq -r '.net.rkey')
	consume "$dir/$name.out" || { bad "$name: the consumer did not get its lease"; return; }
	rkey=$(stats | jq -r '.net.rkey')
	ip netns exec "$ns_tx" timeout 60 "$BUILD/net/hsb_sender" --to $RX:$port --from $TX \
		--alt-from $ALT --qpn 0x4d2 --rkey "$rkey" --frame $FRAME --slots $SLOTS \
		--count 300 --rate 1000 --fault "$fault" --every 7 >"$dir/$name.sent" 2>&1 ||
		{ cat "$dir/$name.sent"; bad "$name: the sender failed"; }
	wait $cpid
	crc=$?
	after=$(stats)
	sent=$(field "$dir/$name.sent" frames)
	faulted=$(field "$dir/$name.sent" faulted)
	foreign=$(field "$dir/$name.sent" foreign_packets)
	good=$(field "$dir/$name.out" good)
	kd=$(delta .net.kernel_drops)
	echo "net: $name: $(cat "$dir/$name.sent"); consumer $(tail -1 "$dir/$name.out"); $(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null) s"
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
		check "$name" "lost packets" "$lost" 0
		check "$name" "late packets" "$late" 0
		check "$name" "incomplete frames" "$inc" 0 ;;
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

for f in none drop dup reorder lose-imm bad-rkey bad-qpn wrong-sender; do
	run_case "$f" "$f"
done

# A sender still writing to the ring of the lessee before is refused: each
# lease gets a ring of its own with a new R_Key.
consume "$dir/first.out" 300 || bad "stale-rkey: no lease"
old=$(stats | jq -r '.net.rkey')
wait $cpid
consume "$dir/second.out" 2000 || bad "stale-rkey: no second lease"
new=$(stats | jq -r '.net.rkey')
[ "$old" != "$new" ] && ok "stale-rkey: a new lease has a new R_Key" ||
	bad "stale-rkey: R_Key $old kept across leases"
before=$(stats)
ip netns exec "$ns_tx" timeout 60 "$BUILD/net/hsb_sender" --to $RX:$port --from $TX \
	--qpn 0x4d2 --rkey "$old" --frame $FRAME --slots $SLOTS --count 20 --rate 1000 \
	>"$dir/stale.sent" 2>&1
wait $cpid
after=$(stats)
check stale-rkey "wrong_rkey" "$(delta .net.wrong_rkey)" "$(field "$dir/stale.sent" packets)"
check stale-rkey "frames delivered" "$(delta .frames)" 0
check stale-rkey "frames the consumer got" "$(field "$dir/second.out" frames)" 0

"$BUILD/fpgactl" --url "$url" stats net0 | sed 's/^/net:   /'
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
check fpgad "exit status after SIGTERM" $rc 0
echo "net: $pass passed, $fail failed"
[ "$fail" = 0 ]
