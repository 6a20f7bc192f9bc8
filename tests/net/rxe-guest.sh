#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/net/rxe-guest.sh - the soft-RoCE suite, run as root inside the QEMU
# guest of tests/system/run.sh (suite rxe, Debian's kernel, systemd as PID
# 1; make rxe-check, or in make check the system tier's boot): load rdma_rxe
# and what it depends on, make a soft-RoCE device on a veth with two
# addresses, check that it has RoCE v2 GIDs and moves data with the stock
# tools (ibv_uc_pingpong), then run tests/net/run-roce.sh, fpgad's RoCE
# path end to end, against it.
#
# What the host carried is under /root/system: modules/load (the module
# files in load order, or modules/missing saying why there are none),
# rxe/build (fpgad, fpgactl, net/*: built on the host, linked against the
# libraries the guest's packages provide) and rxe/tree/tests/net (the
# scripts).  run-roce.sh runs with
#
#   BUILD=/root/system/rxe/build RDMA_DEV=rxe0 NETDEV=rxe-a PEER_NETDEV=rxe-b
#   ADDR=10.79.0.1 ALT_ADDR=10.79.0.2 PREFIX=24
#
# in the initial network namespace (rxe serves no other on 6.1 to 6.12).
# ADDR and ALT_ADDR are both on NETDEV, where rxe0 is, each with its RoCE v2
# GID: QPs of rxe0 on the two GIDs talk to each other (the smoke test below
# does, as a sender on ALT_ADDR and fpgad on ADDR would).  PEER_NETDEV is
# the other end of the veth, up, without addresses, free to be moved into a
# namespace (a sender of raw RoCE v2 packets from there reaches rxe0 as a
# remote host's would).  Its output comes back as "rxe: roce: ...", and its
# exit status decides; a missing script or a "roce: SKIP: why" line is
# reported as that part skipped.
#
# Prints "RXE: ok|not ok N - what" per check (tests/system/guest-lib.sh)
# and a last line "RXE-RESULT: PASS|FAIL|SKIP ..." on the serial console.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
dir=/root/system
RDMA_DEV=rxe0 NETDEV=rxe-a PEER_NETDEV=rxe-b
ADDR=10.79.0.1 ALT_ADDR=10.79.0.2 PREFIX=24
ROCE_TIMEOUT=${ROCE_TIMEOUT:-300}
# shellcheck disable=SC2034 # guest-lib.sh reads it
TAG=RXE
# shellcheck source=tests/system/guest-lib.sh
. "$dir/guest-lib.sh"

# finish [NOTE]: the verdict, from the checks so far.
finish() {
	note "checks took $(at) s: $((n - failed)) passed, $failed failed"
	if [ "$failed" = 0 ]; then
		echo "RXE-RESULT: PASS $n checks${1:+, $1}"
	else
		echo "RXE-RESULT: FAIL $failed of $n checks failed${1:+, $1}"
	fi
	exit 0
}
# gid_index ADDR: the index of rxe0's RoCE v2 GID for IPv4 address ADDR.
# One grep over the table (1024 entries: a process per entry takes most of
# a minute in an emulated guest).
gid_index() {
	want=$(echo "$1" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
	p=/sys/class/infiniband/$RDMA_DEV/ports/1
	for i in $(cd "$p/gids" && grep -l -x "$want" -- * 2>/dev/null); do
		[ "$(cat "$p/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	return 1
}

note "guest: $(uname -r), rdma-core $(dpkg-query -W -f '${Version}' rdma-core 2>/dev/null)"

# --- the modules -----------------------------------------------------------------
if [ -f "$dir/modules/missing" ]; then
	echo "RXE-RESULT: SKIP $(cat "$dir/modules/missing")"
	exit 0
fi
if [ ! -s "$dir/modules/load" ]; then
	echo "RXE-RESULT: SKIP no kernel modules came with the guest (run.sh -m rdma_rxe)"
	exit 0
fi
loaded=
while read -r ko; do
	m=$(echo "${ko%%.ko*}" | tr - _)
	[ -d "/sys/module/$m" ] && continue
	if insmod "$dir/modules/$ko" >/tmp/check.out 2>&1; then
		loaded="$loaded $m"
	else
		notok "insmod $ko"
		show /tmp/check.out
	fi
done < "$dir/modules/load"
check "rdma_rxe and its dependencies load (insmod$loaded)" test -d /sys/module/rdma_rxe
[ "$failed" = 0 ] || finish

# --- the device: rxe0 on a veth with two addresses ---------------------------------
check "a veth pair $NETDEV/$PEER_NETDEV, $ADDR and $ALT_ADDR on $NETDEV" sh -c "
	ip link add $NETDEV type veth peer name $PEER_NETDEV &&
	ip addr add $ADDR/$PREFIX dev $NETDEV && ip addr add $ALT_ADDR/$PREFIX dev $NETDEV &&
	ip link set $NETDEV up && ip link set $PEER_NETDEV up && ip link set lo up"
check "rdma link add $RDMA_DEV type rxe netdev $NETDEV" \
	rdma link add "$RDMA_DEV" type rxe netdev "$NETDEV"
[ "$failed" = 0 ] || finish
# udev makes /dev/infiniband/uverbsN, and the link comes up with the veth.
port_up() {
	rdma link show "$RDMA_DEV/1" | grep -q 'state ACTIVE' &&
	ls /dev/infiniband/uverbs* >/dev/null 2>&1
}
if wait_for 10 port_up && udevadm settle -t 10; then
	ok "$RDMA_DEV's port is ACTIVE, its uverbs node there"
	rdma link show "$RDMA_DEV/1" | sed 's/^/RXE: # /'
else
	notok "$RDMA_DEV's port is ACTIVE, its uverbs node there"
	{ rdma link show; ls -l /dev/infiniband; } 2>&1 | show /dev/stdin
fi
gids() { gid='' alt_gid=''; gid=$(gid_index "$ADDR") && alt_gid=$(gid_index "$ALT_ADDR"); }
wait_for 5 gids
gids
if [ -n "$gid" ] && [ -n "$alt_gid" ]; then
	ok "RoCE v2 GIDs for $ADDR (index $gid) and $ALT_ADDR (index $alt_gid)"
else
	notok "RoCE v2 GIDs for $ADDR and $ALT_ADDR"
	grep -H -v -x '0000:0000:0000:0000:0000:0000:0000:0000' \
		/sys/class/infiniband/"$RDMA_DEV"/ports/1/gids/* 2>/dev/null | show /dev/stdin
fi
check "ibv_devinfo -v lists $RDMA_DEV, its port active, the GID of $ADDR" sh -c "
	ibv_devinfo -v -d $RDMA_DEV > /tmp/rxe-devinfo &&
	grep -q 'state:.*PORT_ACTIVE' /tmp/rxe-devinfo &&
	grep -q -i 'GID\\[ *$gid\\]:.*::ffff:$ADDR, RoCE v2' /tmp/rxe-devinfo || { cat /tmp/rxe-devinfo; exit 1; }"
[ "$failed" = 0 ] || finish

# --- the stock tools move data: a UC QP pair on rxe0 -------------------------------
# ibv_uc_pingpong: a server on the GID of $ADDR, a client on that of
# $ALT_ADDR, QP numbers exchanged over TCP, then 200 4 KiB SENDs each way
# on Unreliable Connection QPs, every one completed at its receiver (the
# tool counts the receive completions and fails short of 200).
pp="ibv_uc_pingpong -d $RDMA_DEV -i 1 -s 4096 -n 200"
# Generous bounds: an emulated guest beside busy tiers gets little CPU.
timeout 120 $pp -g "$gid" >/tmp/rxe-pp-server.out 2>&1 &
server=$!
listening() { ss -ltn | grep -q ':18515 '; }
wait_for 60 listening
if timeout 120 $pp -g "$alt_gid" "$ADDR" >/tmp/rxe-pp-client.out 2>&1 && wait $server &&
   grep -q '200 iters in' /tmp/rxe-pp-client.out && grep -q '200 iters in' /tmp/rxe-pp-server.out; then
	ok "ibv_uc_pingpong on $RDMA_DEV, $ALT_ADDR to $ADDR: 200 x 4 KiB UC SENDs each way: $(grep 'bytes in' /tmp/rxe-pp-client.out)"
else
	wait $server
	notok "ibv_uc_pingpong on $RDMA_DEV"
	cat /tmp/rxe-pp-server.out /tmp/rxe-pp-client.out | show /dev/stdin
fi
[ "$failed" = 0 ] || finish

# --- fpgad's RoCE path: tests/net/run-roce.sh ----------------------------------------
roce=$dir/rxe/tree/tests/net/run-roce.sh
if [ ! -f "$roce" ]; then
	note "SKIP: fpgad's RoCE path: no tests/net/run-roce.sh in the tree under test"
	finish "RoCE path skipped: no tests/net/run-roce.sh"
fi
cd "$dir/rxe" || finish
# run_roce SCRIPT TAG: one of the tree's RoCE scripts.  Its lines go to the
# console as they come (a hang still shows how far it got); its exit status
# through a file, sh having no pipefail.  Returns 1 when it skipped.
run_roce() {
	{
		env BUILD="$dir/rxe/build" RDMA_DEV="$RDMA_DEV" NETDEV="$NETDEV" \
			PEER_NETDEV="$PEER_NETDEV" ADDR="$ADDR" ALT_ADDR="$ALT_ADDR" PREFIX="$PREFIX" \
			timeout "$ROCE_TIMEOUT" sh "$dir/rxe/tree/tests/net/$1" </dev/null 2>&1
		echo $? > /tmp/rxe-roce.rc
	} | tee /tmp/rxe-roce.out | sed 's/^/RXE: /'
	rc=$(cat /tmp/rxe-roce.rc)
	why=$(sed -n 's/^roce: SKIP: //p' /tmp/rxe-roce.out | head -n 1)
	summary=$(grep "^$2: [0-9]* passed" /tmp/rxe-roce.out | tail -n 1)
	if [ "$rc" = 0 ] && [ -n "$why" ]; then
		note "SKIP: fpgad's RoCE path ($1): $why"
		return 1
	elif [ "$rc" = 0 ]; then
		ok "tests/net/$1: $summary"
	elif [ "$rc" = 124 ]; then
		notok "tests/net/$1 did not finish within $ROCE_TIMEOUT s"
	else
		notok "tests/net/$1 exited $rc: $summary"
	fi
}
run_roce run-roce.sh roce || finish "RoCE path skipped: $why"
# Two channels on the device, two senders at once, told apart by QPN.
if [ -f "$dir/rxe/tree/tests/net/run-roce-pair.sh" ]; then
	run_roce run-roce-pair.sh roce-pair || true
fi
finish
