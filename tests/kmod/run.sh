#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/kmod/run.sh - boot Debian's kernel in QEMU with a busybox initramfs
# and QEMU's edu device, load fpgad_dma.ko, run the guest test program, unload
# the module and scan the kernel log.  Three boots:
#
#   main          the default pc machine, edu on the root bus: the whole
#                 guest suite (DMA, dma-buf from vgem, timeouts, reset, the
#                 daemon's backend, unbind), then unload, load, unbind, bind
#   p2p-switch    q35: edu and an e1000e (the stand-in GPU) under two
#                 downstream ports of one x3130 switch behind a root port
#   p2p-rootport  q35: edu on a root port, an e1000e on another root port
#                 and one under a second host bridge (pxb-pcie)
#
# The q35 boots check the P2P_PATH ioctl against the topology QEMU built.
#
#   run.sh MODULE.ko GUEST_TEST_BINARY [WORKDIR [BOOT...]]
#
# Environment: KVER (kernel release, default: the one MODULE.ko was built
# for), BRINGUP_GUEST (a static bring-up program: the main boot then runs
# tests/kmod/bringup.sh --edu with it, which must pass), QEMU (default
# qemu-system-x86_64), KMOD_TIMEOUT (seconds per boot,
# default 300: TCG beside the other tiers), ACCEL (kvm or tcg; default kvm when /dev/kvm is usable and
# the CPU has vmx or svm).
#
# Exit status: 0 passed, 1 failed, 77 skipped (the reason is printed).

set -u

SKIP=77
ko=${1:?usage: run.sh MODULE.ko GUEST_TEST_BINARY [WORKDIR]}
guest_bin=${2:?usage: run.sh MODULE.ko GUEST_TEST_BINARY [WORKDIR]}
work=${3:-$(mktemp -d)}
[ $# -gt 3 ] && shift 3 && boots="$*"
boots=${boots:-main p2p-switch p2p-rootport}
QEMU=${QEMU:-qemu-system-x86_64}
KMOD_TIMEOUT=${KMOD_TIMEOUT:-300}

skip() { echo "kmod-test: SKIP: $*"; exit $SKIP; }
fail() { echo "kmod-test: FAIL: $*"; exit 1; }

[ -f "$ko" ] || fail "no module $ko"
[ -x "$guest_bin" ] || fail "no guest test program $guest_bin"
if [ -z "${KVER:-}" ]; then
	KVER=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
fi
[ -n "$KVER" ] || fail "cannot tell which kernel $ko is for (modinfo, or set KVER)"

kernel=/boot/vmlinuz-$KVER
command -v "$QEMU" >/dev/null 2>&1 || skip "$QEMU not installed (apt-get install qemu-system-x86)"
[ -r "$kernel" ] || skip "$kernel not installed or not readable (apt-get install linux-image-amd64)"
busybox=$(command -v busybox 2>/dev/null)
[ -n "$busybox" ] || skip "busybox not installed (apt-get install busybox-static)"
if ! file -L "$busybox" 2>/dev/null | grep -q 'statically linked' &&
   ! ldd "$busybox" 2>&1 | grep -q 'not a dynamic'; then
	skip "$busybox is not static (apt-get install busybox-static)"
fi
# vgem and what it needs, in load order (modules.dep lists the needs of a
# module last-loaded first); compressed modules are unpacked on the host.
vgem_mods=$(sed -n 's|^\(kernel/drivers/gpu/drm/vgem/vgem\.ko[.a-z]*\):\(.*\)|\2 \1|p' \
	"/lib/modules/$KVER/modules.dep" 2>/dev/null)
[ -n "$vgem_mods" ] || skip "no vgem module in /lib/modules/$KVER/modules.dep (the vgem test needs Debian's linux-image-$KVER)"
vgem_order=$(echo $vgem_mods | tr ' ' '\n' | sed '$d' | tac | tr '\n' ' ')"${vgem_mods##* }"
command -v cpio >/dev/null 2>&1 || skip "cpio not installed"

# --- initramfs -----------------------------------------------------------------

mkdir -p "$work" || fail "cannot create $work"
root=$work/root
rm -rf "$root"
mkdir -p "$root/bin" "$root/modules" "$root/proc" "$root/sys" "$root/dev" \
	"$root/tmp" || fail "cannot populate $root"
cp "$busybox" "$root/bin/busybox" &&
cp "$ko" "$root/fpgad_dma.ko" &&
cp "$guest_bin" "$root/kmod_test" || fail "cannot copy files into the initramfs"
if [ -n "${BRINGUP_GUEST:-}" ]; then
	cp "$BRINGUP_GUEST" "$root/bringup" &&
	cp "$(dirname "$0")/bringup.sh" "$root/bringup.sh" ||
		fail "cannot copy the bring-up program and script into the initramfs"
fi
: > "$root/modules/order"
for m in $vgem_order; do
	name=$(basename "$m" | sed 's/\.ko\..*$/.ko/')
	case "$m" in
	*.ko) cp "/lib/modules/$KVER/$m" "$root/modules/$name" ;;
	*.ko.xz) xz -dc "/lib/modules/$KVER/$m" > "$root/modules/$name" ;;
	*.ko.zst) zstd -qdc "/lib/modules/$KVER/$m" > "$root/modules/$name" ;;
	*.ko.gz) gzip -dc "/lib/modules/$KVER/$m" > "$root/modules/$name" ;;
	*) false ;;
	esac || fail "cannot unpack /lib/modules/$KVER/$m into the initramfs"
	echo "$name" >> "$root/modules/order"
done

cat > "$root/init" <<'EOT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug

result() {
	echo "KMOD-TEST-RESULT: $*"
	poweroff -f
	sleep 10
}

# The kernel log since the marker must not show any trouble.
scan_log() {
	dmesg | sed -n '/fpgad-kmod-test: start/,$p' > /tmp/klog
	echo "== kernel log since insmod:"
	cat /tmp/klog
	bad=$(grep -E 'WARNING|BUG|Oops|general protection|Call Trace|refcount_t|list_del corruption|leak|UBSAN|DMA-API|Poison overwritten|Object already free|Redzone|slab error|hung_task|blocked for more than|overflow' /tmp/klog)
	[ -n "$bad" ] && result "FAIL kernel log: $bad"
}

boot=main
for arg in $(cat /proc/cmdline); do
	case "$arg" in fpgadtest=*) boot=${arg#fpgadtest=} ;; esac
done
echo "== guest: $(uname -r), $(nproc) cpus, boot $boot"

if [ "$boot" != main ]; then
	echo "fpgad-kmod-test: start" > /dev/kmsg
	insmod /fpgad_dma.ko || result "FAIL insmod fpgad_dma.ko"
	[ -c /dev/fpgad0 ] || result "FAIL no /dev/fpgad0"
	timeout -s KILL 60 /kmod_test "$boot"
	rc=$?
	rmmod fpgad_dma || result "FAIL rmmod fpgad_dma"
	scan_log
	[ "$rc" = 0 ] || result "FAIL kmod_test $boot exited $rc"
	result "PASS"
fi

for m in $(cat /modules/order); do
	insmod /modules/$m || result "FAIL insmod $m"
done
echo "fpgad-kmod-test: start" > /dev/kmsg

insmod /fpgad_dma.ko max_inflight=8 || result "FAIL insmod fpgad_dma.ko"
[ -c /dev/fpgad0 ] || result "FAIL no /dev/fpgad0"
[ -c /dev/dri/card0 ] || result "FAIL no /dev/dri/card0 (vgem)"
echo "== /sys/class/fpgad: $(ls /sys/class/fpgad) engine $(cat /sys/class/fpgad/fpgad0/engine)"

timeout -s KILL 100 /kmod_test
rc=$?

# Unload with nothing open, load again, unbind through sysfs, unload.
rmmod fpgad_dma || result "FAIL rmmod fpgad_dma"
[ -e /sys/class/fpgad/fpgad0 ] && result "FAIL fpgad0 still present after rmmod"
insmod /fpgad_dma.ko || result "FAIL second insmod"
[ -c /dev/fpgad0 ] || result "FAIL no /dev/fpgad0 after the second insmod"
bdf=$(basename "$(readlink /sys/class/fpgad/fpgad0/device)")
echo "$bdf" > /sys/bus/pci/drivers/fpgad_dma/unbind || result "FAIL unbind $bdf"
[ -e /dev/fpgad0 ] && result "FAIL /dev/fpgad0 still present after unbind"
echo "$bdf" > /sys/bus/pci/drivers/fpgad_dma/bind || result "FAIL bind $bdf"
[ -c /dev/fpgad0 ] || result "FAIL no /dev/fpgad0 after bind"
rmmod fpgad_dma || result "FAIL second rmmod"
grep -q '^fpgad_dma ' /proc/modules && result "FAIL fpgad_dma still loaded"

# bringup.sh as on a card's host, against edu: it must pass here.
if [ -x /bringup ]; then
	echo "== bringup.sh --edu (dry run)"
	BRINGUP=/bringup KO=/fpgad_dma.ko sh /bringup.sh --edu
	brc=$?
	[ "$brc" = 0 ] || result "FAIL bringup.sh dry run exited $brc"
fi

scan_log
[ "$rc" = 0 ] || result "FAIL kmod_test exited $rc"
result "PASS"
EOT
chmod 0755 "$root/init" || fail "chmod init"

initrd=$work/initramfs.cpio.gz
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd" ||
	fail "cannot build $initrd"

# --- boot ----------------------------------------------------------------------------

accel=${ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	# /dev/kvm without vmx/svm in the CPU flags (some nested setups)
	# hangs the guest; TCG is slower but works everywhere.
	[ -r /dev/kvm ] && [ -w /dev/kvm ] &&
		grep -q -w -E 'vmx|svm' /proc/cpuinfo && accel=kvm
fi
cpu=max
[ "$accel" = kvm ] && cpu=host

# Boot @1 with the QEMU arguments that follow; 0 when the guest said PASS.
run_boot() {
	name=$1
	shift
	log=$work/console-$name.log
	echo "kmod-test: $name: booting $kernel ($accel) with fpgad_dma.ko; console in $log"
	timeout "$KMOD_TIMEOUT" "$QEMU" -accel "$accel" -cpu "$cpu" -m 512M \
		-nographic -no-reboot -monitor none -serial stdio -net none \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 slub_debug=FZPU fpgadtest=$name" \
		"$@" </dev/null >"$log" 2>&1
	qrc=$?
	if [ "$accel" = kvm ] && [ -z "${ACCEL:-}" ] &&
	   grep -a -q -i -E 'failed to initialize kvm|Could not access KVM' "$log"; then
		echo "kmod-test: KVM not usable here, falling back to TCG"
		# shellcheck disable=SC2086 # one argument per boot
		ACCEL=tcg exec "$0" "$ko" "$guest_bin" "$work" $boots
	fi

	tr -d '\r' < "$log" | grep -a -E '^(ok|not ok|kmod_test|counters|==|KMOD-TEST-RESULT|PASS |FAIL |SKIP |NOTE |bringup)'
	result=$(tr -d '\r' < "$log" | sed -n 's/^KMOD-TEST-RESULT: //p' | tail -n 1)
	case "$result" in
	PASS)
		echo "kmod-test: $name: PASS"
		return 0 ;;
	"")
		tail -n 40 "$log"
		if [ "$qrc" = 124 ]; then
			echo "kmod-test: $name: FAIL: guest did not finish within ${KMOD_TIMEOUT}s"
		else
			echo "kmod-test: $name: FAIL: guest ended without a result (qemu exit $qrc)"
		fi
		return 1 ;;
	*)
		echo "kmod-test: $name: FAIL: $result"
		return 1 ;;
	esac
}

# Root ports have ACS; x3130 switch ports do not (QEMU 7.2).
RP="pcie-root-port,chassis"
boot() {
	case "$1" in
	main)
		run_boot main -smp 2 -device edu,dma_mask=0xffffffffffffffff ;;
	p2p-switch)
		run_boot p2p-switch -machine q35 -smp 1 \
			-device $RP=1,slot=1,id=rp1,bus=pcie.0,addr=0x2 \
			-device x3130-upstream,id=up1,bus=rp1 \
			-device xio3130-downstream,id=dn1,bus=up1,chassis=2,slot=0 \
			-device xio3130-downstream,id=dn2,bus=up1,chassis=3,slot=1 \
			-device edu,bus=dn1,dma_mask=0xffffffffffffffff \
			-device e1000e,bus=dn2 ;;
	p2p-rootport)
		run_boot p2p-rootport -machine q35 -smp 1 \
			-device $RP=1,slot=1,id=rp1,bus=pcie.0,addr=0x2 \
			-device $RP=2,slot=2,id=rp2,bus=pcie.0,addr=0x3 \
			-device pxb-pcie,id=pxb1,bus_nr=128,bus=pcie.0,addr=0x4 \
			-device $RP=3,slot=0,id=rp3,bus=pxb1 \
			-device edu,bus=rp1,dma_mask=0xffffffffffffffff \
			-device e1000e,bus=rp2 -device e1000e,bus=rp3 ;;
	*)
		echo "kmod-test: FAIL: unknown boot $1"
		return 1 ;;
	esac
}

# Under TCG each boot is a CPU-bound emulator: the boots run side by side,
# each one's report printed whole, in order, once all are done.  Under KVM
# they are quick, and one after another (a KVM that fails falls back to
# TCG by starting this script over).
failed=""
if [ "$accel" = tcg ]; then
	for b in $boots; do
		{ boot "$b" > "$work/report-$b.txt" 2>&1; echo $? > "$work/rc-$b"; } &
	done
	wait
	for b in $boots; do
		cat "$work/report-$b.txt"
		[ "$(cat "$work/rc-$b" 2>/dev/null)" = 0 ] || failed="$failed $b"
	done
else
	for b in $boots; do
		boot "$b" || failed="$failed $b"
	done
fi
[ -z "$failed" ] || fail "boots failed:$failed"
echo "kmod-test: PASS ($boots)"
exit 0
