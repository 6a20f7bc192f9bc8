#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/net/run-roce.sh - fpgad's RoCE v2 path end to end (source = roce):
# fpgad's UC QP and hsb_sender's (RoCE mode, through rdma-core) on one RDMA
# device, looped back inside it (soft-RoCE, rxe, when source and
# destination address are equal), a verifying consumer written against
# fpgad.h alone (net_consumer).  Each fault the sender can make over verbs
# runs once: no torn or stale frame may reach the consumer as good, and
# fpgad's counters (fpgactl --json stats) must count what verbs let it see.
# fpgad configures each case's sender (sender_control: its QPN, the new
# R_Key, the layout, the path MTU); the stale-R_Key case is configured by
# flags from fpgactl stats.  One fpgad serves every case: each sender
# listens on the control port the first one bound (port 0, read back).
#
# Environment: BUILD (default build), MEMORY (the ring's: host, the
# default, or cuda: bounce into a GPU ring), RDMA_DEV (the device, e.g. rxe0),
# ADDR (an address with a RoCE v2 GID on it), ALT_ADDR (a second address
# on the same interface: the wrong sender).  The rxe tier (QEMU, Debian's
# kernel) sets them.  Without such a device: "roce: SKIP: why", exit 0.
# Exit status: 0 passed, 1 failed.
set -u
BUILD=${BUILD:-build}
RDMA_DEV=${RDMA_DEV:-}
ADDR=${ADDR:-}
ALT_ADDR=${ALT_ADDR:-}
tag=roce channel=roce0 IDLE_MS=700
. "$(dirname "$0")/lib.sh"
# near CASE WHAT GOT WANT SLACK: WANT, or up to SLACK less (frames the
# sender overran: counted as overrun, their own fault unseen).
near() {
	if [ "$3" -le "$4" ] && [ "$3" -ge $(($4 - $5)) ]; then
		ok "$1: $2 = $3 (want $4${5:+, $5 may hide in overruns})"
	else
		bad "$1: $2 = $3, want $4 (or up to $5 less)"
	fi
}

roce_require
scratch fpgad-roce

# Small frames at a low rate: rxe in a TCG guest moves a few MB/s.
FRAME=16000
SLOTS=8
MTU=1024
CHUNKS=$(( (FRAME + MTU - 1) / MTU ))
# conf DEVICE RUNTIME_DIR [SENDER_CONTROL]
conf() {
	cat <<CONF
[daemon]
runtime_dir = $2
[channel roce0]
source = roce
rdma_device = $1
listen = $ADDR
sender = $ADDR
sender_qpn = 1
mtu = $MTU
slots = $SLOTS
slot_size = 16K
frame_size = $FRAME
queue_depth = $SLOTS
memory = ${MEMORY:-host}
sender_control = ${3:-none}
CONF
}

# A device that is not there: fpgad says so and does not start (its own
# runtime directory: the socket it leaves is not the one to wait for).
mkdir -p "$dir/bad"
conf "no-such-$RDMA_DEV" "$dir/bad" > "$dir/bad.conf"
if timeout 30 "$BUILD/fpgad" --config "$dir/bad.conf" >"$dir/bad.log" 2>&1; then
	bad "fpgad started with rdma_device = no-such-$RDMA_DEV"
else
	grep -q "no RDMA device no-such-$RDMA_DEV" "$dir/bad.log" &&
		ok "rdma_device = no-such-$RDMA_DEV: refused, saying so" ||
		bad "rdma_device = no-such-$RDMA_DEV: $(tail -2 "$dir/bad.log")"
fi

# start_sender NAME CONFIGS [ARGS...]: hsb_sender in RoCE mode, told its
# target by fpgad (the CONFIGS-th request starts it) on the control port in
# $cport (0 for the first: any free one, read back); its pid in $spid.
# Each frame carries known sender times (--stamp), which every consumer
# checks it got exactly, through the landing ring and the copy.
cport=
STAMP=1733200000000000000
consumer_args="--stamp $STAMP"
start_sender() {
	name=$1 configs=$2
	shift 2
	timeout 120 "$BUILD/net/hsb_sender" --rdma-dev "$RDMA_DEV" --control "${cport:-0}" \
		--configs "$configs" --from "$ADDR" --alt-from "$ALT_ADDR" --stamp $STAMP "$@" \
		>"$dir/$name.sent" 2>"$dir/$name.err" &
	spid=$!
	for _ in $(seq 200); do
		grep -q '^control' "$dir/$name.sent" && break
		sleep 0.05
	done
	cport=$(sed -n 's/^control .*:\([0-9]*\)$/\1/p' "$dir/$name.sent")
}

# The first case's sender before fpgad (its control port goes into the
# configuration).  Told at the lease only: the ring pinned at start has no
# slot armed, so fpgad's control thread sends the target once the first
# lease's ring has one (device_roce.c, net_target.c).  Its wait for that
# spans fpgad's start and the checks below: under make check, where this
# guest runs at nice 10 beside the other tiers, they take longer than the
# 30 s a sender started beside a running fpgad is given, so this one
# waits as long as its timeout leaves room for.
start_sender none 1 --count 50 --rate 100 --config-wait 100
[ -n "$cport" ] || { cat "$dir/none.err"; bad "the sender has no control port"; exit 1; }
conf "$RDMA_DEV" "$dir" "$ADDR:$cport" > "$dir/fpgad.conf"
# The landing ring is tried as a dma-buf MR: a GPU ring's is GPU memory
# (MEMORY=cuda, a NIC with dma-buf MRs: "gpu (dma-buf MR)"); with host
# rings a memfd stands in for the GPU's dma-buf, which rxe (no dma-buf
# MRs) refuses: fpgad falls back to a host landing ring, says why, and
# every case below still verifies.
if [ "${MEMORY:-host}" = cuda ]; then
	landing_env= landing="gpu (dma-buf MR)"
else
	landing_env=FPGAD_TEST_LANDING_DMABUF=memfd
	landing="host: $RDMA_DEV refused ibv_reg_dmabuf_mr: "
fi
env $landing_env "$BUILD/fpgad" --config "$dir/fpgad.conf" 2>"$dir/fpgad.log" &
pid=$!
for _ in $(seq 400); do
	stats >/dev/null 2>&1 && break
	sleep 0.05
done
qpn=$(stats | jq -r '.net.qpn')
[ -n "$qpn" ] || { cat "$dir/fpgad.log"; bad "fpgad did not start"; exit 1; }
check channels "roce0's source" "$("$BUILD/fpgactl" --url "$url" --json channels | jq -r '.channels[0].source')" roce
check stats "net.source" "$(stats | jq -r .net.source)" roce
[ "$(stats | jq -r .net.rdma_device)" = "$RDMA_DEV:1" ] && [ "$qpn" -gt 0 ] &&
	ok "roce0: QPN $qpn on $(stats | jq -r .net.rdma_device), GID $(stats | jq -r .net.gid)" ||
	bad "roce0's QP: $(stats | jq -c .net)"
check stats "path MTU" "$(stats | jq -r .net.mtu)" $MTU
case "$(stats | jq -r .net.landing)" in
"$landing"*) ok "stats: landing: $(stats | jq -r .net.landing)" ;;
*) bad "stats: landing: $(stats | jq -r .net.landing), not $landing..." ;;
esac
"$BUILD/fpgactl" --url "$url" status | grep -qF "landing: $landing" &&
	ok "status says the landing ring and why" ||
	bad "status: no \"landing: $landing...\": $("$BUILD/fpgactl" --url "$url" status | grep landing)"
case "$("$BUILD/fpgactl" --url "$url" --json topo | jq -r '.channels[] | select(.name == "roce0") | .net.landing')" in
"$landing"*) ok "topo --json: roce0's net.landing" ;;
*) bad "topo --json: roce0's net.landing: $("$BUILD/fpgactl" --url "$url" --json topo | jq -c '.channels')" ;;
esac

# send NAME RKEY [ARGS...]: hsb_sender in RoCE mode to fpgad's QP,
# configured by flags (--qpn, --rkey, the layout).
send() {
	name=$1 rkey=$2
	shift 2
	timeout 120 "$BUILD/net/hsb_sender" --rdma-dev "$RDMA_DEV" --to "$ADDR" \
		--from "$ADDR" --alt-from "$ALT_ADDR" --qpn "$qpn" --rkey "$rkey" \
		--mtu $MTU --frame $FRAME --slots $SLOTS "$@" >"$dir/$name.sent" 2>"$dir/$name.err" ||
		{ cat "$dir/$name.err"; bad "$name: the sender failed"; }
}

# run_case FAULT: 50 frames at 100 frames/s, every 7th faulted, from a
# sender fpgad configures at the lease (the first one is running already).
run_case() {
	name=$1
	[ "$name" = none ] || start_sender "$name" 1 --count 50 --rate 100 --fault "$name" --every 7
	before=$(stats)
	consume "$dir/$name.out" 30000 || { bad "$name: the consumer did not get its lease"; return; }
	wait $spid || { cat "$dir/$name.err"; bad "$name: the sender failed"; }
	wait $cpid
	crc=$?
	after=$(stats)
	deltas
	check "$name" "the R_Key the sender was told" "$(field "$dir/$name.sent" rkey)" \
		"$(echo "$after" | jq -r .net.rkey)"
	check "$name" "targets the sender acknowledged" "$(delta .net.control_acks)" 1
	sent=$(field "$dir/$name.sent" frames)
	faulted=$(field "$dir/$name.sent" faulted)
	good=$(field "$dir/$name.out" good)
	echo "roce: $name: $(cat "$dir/$name.sent"); consumer $(tail -1 "$dir/$name.out"); overrun $(delta .net.overrun_frames)"
	[ "$crc" = 0 ] && [ "$(field "$dir/$name.out" bad)" = 0 ] &&
		ok "$name: no torn or stale frame reached the consumer as good" ||
		bad "$name: the consumer found bad frames (exit $crc): $(tail -2 "$dir/$name.out")"
	[ "${good:-0}" -gt 0 ] && ok "$name: $good frames verified" || bad "$name: no frame verified"
	lost=$(delta .net.lost_packets) late=$(delta .net.late_packets)
	inc=$(delta .net.incomplete_frames) over=$(delta .net.overrun_frames)
	# Each frame whose immediate came has one outcome (a lost one has none).
	outcomes=$(( $(delta .frames) + inc + over + $(delta .net.no_slot_frames) ))
	merged=0
	[ "$name" = lose-imm ] && merged=$faulted
	check "$name" "frames delivered + incomplete + overrun + no slot" $outcomes $((sent - merged))
	check "$name" "late packets" "$late" 0
	case $name in
	none|dup|bad-rkey|bad-qpn|wrong-sender)
		# Duplicates land on the same bytes; the NIC drops the others.
		check "$name" "lost packets" "$lost" 0
		check "$name" "incomplete frames" "$inc" 0 ;;
	drop)
		near "$name" "lost packets (chunks still holding the canary)" "$lost" "$faulted" "$over"
		near "$name" "incomplete frames" "$inc" "$faulted" "$over" ;;
	lose-imm)
		# An overrun starts the PSN count over: a gap there is not seen.
		near "$name" "lost packets (the PSN gap)" "$lost" $((faulted * (CHUNKS + 1))) \
			$((over * (CHUNKS + 1)))
		# A frame the sender wrote over (overrun) may be left torn.
		[ "$inc" -le "$over" ] &&
			ok "$name: incomplete frames = $inc (want 0, or up to the $over overrun)" ||
			bad "$name: incomplete frames = $inc, want 0 (or up to the $over overrun)" ;;
	reorder)
		# The late packet may land before fpgad looks: then the frame is whole.
		[ "$lost" -le "$faulted" ] && [ "$inc" = "$lost" ] &&
			ok "$name: $inc of $faulted frames caught before their late packet landed" ||
			bad "$name: lost $lost, incomplete $inc, faulted $faulted" ;;
	esac
}

for f in none drop dup reorder lose-imm bad-rkey bad-qpn wrong-sender; do
	run_case "$f"
done

# A sender still writing with the R_Key of the lessee before is refused by
# the NIC: each lease registers the landing ring anew.
stale_rkey_leases 3000
send stale "$old" --count 20 --rate 100
stale_rkey_refused

"$BUILD/fpgactl" --url "$url" stats roce0 | sed 's/^/roce:   /'
# fpgad's log on a failure: all of it (a few lines a lease), for the
# first case's failure is at its start.
finish 200
