#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/net/run-roce-pair.sh - two roce channels on one RDMA device, fed at
# the same time by two senders, each told its own channel's QP by fpgad
# (sender_control): the device tells the streams apart by destination QPN,
# so each consumer must get its own sender's frames only (each sender
# stamps its frames with its own base time, which the consumer checks) and
# every frame whole.  Environment as tests/net/run-roce.sh (RDMA_DEV, ADDR,
# ALT_ADDR, BUILD, MEMORY); without such a device: "roce: SKIP: why", exit 0.
set -u
BUILD=${BUILD:-build}
RDMA_DEV=${RDMA_DEV:-}
ADDR=${ADDR:-}
ALT_ADDR=${ALT_ADDR:-}
tag=roce-pair IDLE_MS=1500
. "$(dirname "$0")/lib.sh"

roce_require
scratch fpgad-roce-pair

FRAME=16000 SLOTS=8 MTU=1024 COUNT=40
STAMP_A=1733200000000000000
STAMP_B=1733300000000000000

# sender NAME STAMP: hsb_sender in RoCE mode, waiting for fpgad to tell it
# its target on a control port of its own (read back into $port).
sender() {
	timeout 150 "$BUILD/net/hsb_sender" --rdma-dev "$RDMA_DEV" --control 0 \
		--configs 1 --from "$ADDR" --alt-from "$ALT_ADDR" --stamp "$2" \
		--count $COUNT --rate 50 --config-wait 120 \
		>"$dir/$1.sent" 2>"$dir/$1.err" &
	eval "spid_$1=\$!"
	for _ in $(seq 200); do
		grep -q '^control' "$dir/$1.sent" && break
		sleep 0.05
	done
	port=$(sed -n 's/^control .*:\([0-9]*\)$/\1/p' "$dir/$1.sent")
	[ -n "$port" ] || { cat "$dir/$1.err"; bad "sender $1 has no control port"; exit 1; }
}

# section NAME CONTROL_PORT: one roce channel on $RDMA_DEV.
section() {
	cat <<CONF
[channel $1]
source = roce
rdma_device = $RDMA_DEV
listen = $ADDR
sender = $ADDR
sender_qpn = 1
mtu = $MTU
slots = $SLOTS
slot_size = 16K
frame_size = $FRAME
queue_depth = 6
memory = ${MEMORY:-host}
sender_control = $ADDR:$2
CONF
}

sender a $STAMP_A
port_a=$port
sender b $STAMP_B
port_b=$port
{
	printf '[daemon]\nruntime_dir = %s\n' "$dir"
	section roce0 "$port_a"
	section roce1 "$port_b"
} > "$dir/fpgad.conf"
"$BUILD/fpgad" --config "$dir/fpgad.conf" 2>"$dir/fpgad.log" &
pid=$!
channel=roce0
for _ in $(seq 400); do
	stats >/dev/null 2>&1 && break
	sleep 0.05
done
qpn0=$(channel=roce0 stats | jq -r '.net.qpn')
qpn1=$(channel=roce1 stats | jq -r '.net.qpn')
dev0=$(channel=roce0 stats | jq -r '.net.rdma_device')
dev1=$(channel=roce1 stats | jq -r '.net.rdma_device')
[ -n "$qpn0" ] && [ -n "$qpn1" ] || { tail -20 "$dir/fpgad.log"; bad "fpgad did not start"; exit 1; }
[ "$dev0" = "$dev1" ] && [ "$qpn0" != "$qpn1" ] &&
	ok "roce0 and roce1 on one device ($dev0): QPNs $qpn0 and $qpn1" ||
	bad "roce0 on $dev0 QPN $qpn0, roce1 on $dev1 QPN $qpn1: want one device, two QPs"

# Both consumers at once, each checking its own sender's times.
channel=roce0 consumer_args="--stamp $STAMP_A"
consume "$dir/a.out" 60000 || bad "roce0: the consumer did not get its lease"
cpid_a=$cpid
channel=roce1 consumer_args="--stamp $STAMP_B"
consume "$dir/b.out" 60000 || bad "roce1: the consumer did not get its lease"
cpid_b=$cpid
for s in a b; do
	eval "wait \$spid_$s" || { cat "$dir/$s.err"; bad "sender $s failed"; }
done
wait $cpid_a
rc_a=$?
wait $cpid_b
rc_b=$?

for s in a b; do
	case $s in a) c=roce0 rc=$rc_a ;; b) c=roce1 rc=$rc_b ;; esac
	echo "roce-pair: $c: sender $(cat "$dir/$s.sent" | tail -1); consumer $(tail -1 "$dir/$s.out")"
	good=$(field "$dir/$s.out" good)
	wrong=$(field "$dir/$s.out" bad)
	[ "$rc" = 0 ] && [ "${wrong:-1}" = 0 ] &&
		ok "$c: no frame of the other stream, no torn frame reached the consumer" ||
		bad "$c: the consumer found bad frames (exit $rc): $(tail -2 "$dir/$s.out")"
	[ "${good:-0}" -gt 0 ] && ok "$c: $good of $COUNT frames verified, its own sender's" ||
		bad "$c: no frame verified"
	check "$c" "targets its sender acknowledged" \
		"$(channel=$c stats | jq -r .net.control_acks)" 1
done

finish 80
