#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/net/bringup.sh - the first run of fpgad's RoCE path on a host with
# a real RDMA NIC (a ConnectX: mlx5), as tests/system's bring-up is for the
# first XDMA card.  Run as root from the tree, after `make` (not STATIC=1:
# the RoCE path needs libibverbs, ROCE=1) and `make build/net/hsb_sender
# build/net/net_consumer build/bench/bench_roce_rx` (and `make gpu` on a
# GPU host):
#
#   ADDR=192.168.10.1 ALT_ADDR=192.168.10.9 [RDMA_DEV=mlx5_0] tests/net/bringup.sh
#
# ADDR: an address of the NIC's port (its RoCE v2 GID is what fpgad's QP
# uses); ALT_ADDR: a second address on the same interface, added for the
# test if it is not there (ip addr add ALT_ADDR/32 dev IF) and removed
# after.  fpgad and the sender share the NIC, looped back inside it (mlx5
# loops RoCE traffic between its own QPs).  What it does, and what to
# expect:
#
#   1. the device: the port ACTIVE, RoCE v2 GIDs for ADDR and ALT_ADDR
#      ("bringup: ok ..." lines; else it says what is missing and stops)
#   2. tests/net/run-roce.sh with host rings: every fault, "roce: N passed,
#      0 failed" (run-roce.sh's counters are exact on a NIC as on rxe; the
#      reorder case may catch fewer frames: the late packet often lands
#      before fpgad looks, and the frame is then whole)
#   3. with a GPU, first gpu/gpu_roce_landing: the GPU landing ring with
#      a stand-in for the NIC ("gpu-roce: PASS" lines and a figure: the
#      step per frame against a bare copy; BENCHMARKS.md has the H200
#      host's), so that a failure in 4 is the NIC's part
#   4. the same as 2 with MEMORY=cuda when a GPU is there: the landing ring in
#      GPU memory, registered with ibv_reg_dmabuf_mr on its
#      cuMemGetHandleForAddressRange dma-buf, each frame copied device to
#      device into its GPU slot, mode gpudirect; run-roce.sh checks that
#      stats, status and topo say "landing: gpu (dma-buf MR)" (a host
#      landing ring there says why: the provider's refusal, or the GPU's)
#   5. bench_roce_rx: the copy's cost on this host (README, RoCE path)
#
# Exit status: 0 when every step passed.
set -u
BUILD=${BUILD:-build}
ADDR=${ADDR:-}
ALT_ADDR=${ALT_ADDR:-}
RDMA_DEV=${RDMA_DEV:-}
say() { echo "bringup: $*"; }
die() { say "STOP: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (fpgad registers memory; ALT_ADDR may be added)"
[ -n "$ADDR" ] && [ -n "$ALT_ADDR" ] || die "set ADDR (the NIC port's address) and ALT_ADDR (a free one on its subnet)"
grep -qa ibv_create_qp "$BUILD/fpgad" || die "$BUILD/fpgad has no RoCE (built with ROCE=0): make ROCE=1 (or STATIC=1: ROCE=dlopen)"

# The RoCE v2 GID of IPv4 address $1 on any device: "DEV PORT INDEX".
gid_of() {
	want=$(echo "$1" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
	for g in /sys/class/infiniband/*/ports/*/gids/*; do
		[ "$(cat "$g" 2>/dev/null)" = "$want" ] || continue
		i=${g##*/} p=${g%/gids/*} && d=${p%/ports/*}
		[ "$(cat "$p/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
		echo "${d##*/} ${p##*/} $i"
		return 0
	done
	return 1
}

set -- $(gid_of "$ADDR") || true
[ $# = 3 ] || die "no RoCE v2 GID for $ADDR (ibv_devinfo -v; is the NIC's port up, mlx5_ib loaded, the address on its netdev?)"
[ -z "$RDMA_DEV" ] || [ "$RDMA_DEV" = "$1" ] || die "$ADDR's GID is on $1, not $RDMA_DEV"
RDMA_DEV=$1
say "ok $ADDR: $RDMA_DEV port $2, RoCE v2 GID index $3"
state=$(cat "/sys/class/infiniband/$RDMA_DEV/ports/$2/state" 2>/dev/null)
case $state in *ACTIVE*) say "ok $RDMA_DEV port $2: $state" ;; *) die "$RDMA_DEV port $2 is $state" ;; esac
netdev=$(ls "/sys/class/infiniband/$RDMA_DEV/ports/$2/gid_attrs/ndevs/$3" >/dev/null 2>&1 &&
	cat "/sys/class/infiniband/$RDMA_DEV/ports/$2/gid_attrs/ndevs/$3")
added=
if ! gid_of "$ALT_ADDR" >/dev/null; then
	[ -n "$netdev" ] || die "cannot tell $ADDR's interface to add $ALT_ADDR"
	ip addr add "$ALT_ADDR/32" dev "$netdev" || die "ip addr add $ALT_ADDR/32 dev $netdev failed"
	added=1
	trap 'ip addr del "$ALT_ADDR/32" dev "$netdev"' EXIT
	for _ in $(seq 50); do gid_of "$ALT_ADDR" >/dev/null && break; sleep 0.1; done
fi
gid_of "$ALT_ADDR" >/dev/null || die "no RoCE v2 GID for $ALT_ADDR on $RDMA_DEV"
say "ok $ALT_ADDR: $(gid_of "$ALT_ADDR")${added:+ (added to $netdev for the test)}"

rc=0
say "run-roce.sh, host rings:"
BUILD=$BUILD RDMA_DEV=$RDMA_DEV ADDR=$ADDR ALT_ADDR=$ALT_ADDR tests/net/run-roce.sh || rc=1
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	if [ -x "$BUILD/gpu/gpu_roce_landing" ]; then
		say "the GPU landing ring with a stand-in for the NIC:"
		"$BUILD/gpu/gpu_roce_landing" -n 256 -s 1048576 -m 4096 || rc=1
	else
		say "no $BUILD/gpu/gpu_roce_landing (make gpu): the stand-in is left out"
	fi
	say "run-roce.sh, a GPU ring (its landing ring in GPU memory):"
	MEMORY=cuda BUILD=$BUILD RDMA_DEV=$RDMA_DEV ADDR=$ADDR ALT_ADDR=$ALT_ADDR \
		tests/net/run-roce.sh || rc=1
else
	say "no GPU: the GPU ring run is left out"
fi
if [ -x "$BUILD/bench/bench_roce_rx" ]; then
	say "the landing ring's copy against memcpy (README, RoCE path):"
	"$BUILD/bench/bench_roce_rx"
fi
[ $rc = 0 ] && say "PASS" || say "FAIL (above)"
exit $rc
