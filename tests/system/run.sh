#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/system/run.sh - the system tier: boot Debian's kernel in QEMU with a
# minimal Debian root file system (systemd as PID 1), install the fpgad
# packages in it and run tests/system/guest.sh there.
#
#   run.sh DEBDIR [WORKDIR]
#
# The root file system is built by mmdebstrap from Debian's archive, as an
# initramfs (no disk image, no kernel modules needed to mount it), and
# cached as $SYSTEM_CACHE/rootfs-KEY.cpio, KEY being a hash of the suite,
# the mirror and the package list (a base list plus the run-time
# dependencies of the packages under test): a changed list builds a new
# one, and older ones are removed.  The packages under test and the guest
# script travel in a second archive appended to the first.
#
# Environment:
#   SYSTEM_CACHE    where the root file system is kept (default build/system-cache)
#   SYSTEM_MIRROR   Debian archive (default http://deb.debian.org/debian)
#   SYSTEM_SUITE    Debian release (default: this machine's, from /etc/os-release)
#   KVER            kernel release to boot (default: the newest /boot/vmlinuz-*-amd64)
#   QEMU            default qemu-system-x86_64
#   ACCEL           kvm or tcg (default kvm when usable, else tcg)
#   SYSTEM_TIMEOUT  seconds for the guest (default 600)
#
# Exit status: 0 passed, 1 failed, 77 skipped (the reason is printed).
set -u

SKIP=77
debdir=${1:?usage: run.sh DEBDIR [WORKDIR]}
work=${2:-$(mktemp -d /tmp/fpgad-system.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
QEMU=${QEMU:-qemu-system-x86_64}
SYSTEM_CACHE=${SYSTEM_CACHE:-build/system-cache}
SYSTEM_MIRROR=${SYSTEM_MIRROR:-http://deb.debian.org/debian}
SYSTEM_TIMEOUT=${SYSTEM_TIMEOUT:-600}
# Bump when the way the root file system is made changes.
RECIPE=1
# What the guest needs besides the packages' own dependencies.
BASE_PACKAGES="systemd systemd-sysv udev dbus passwd procps kmod"

skip() { echo "system: SKIP: $*"; exit $SKIP; }
fail() { echo "system: FAIL: $*"; exit 1; }
now() { date +%s; }
start=$(now)

# --- what is needed --------------------------------------------------------
command -v "$QEMU" >/dev/null 2>&1 || skip "$QEMU not installed (apt-get install qemu-system-x86)"
for t in mmdebstrap bsdtar dpkg-deb sha256sum; do
	command -v $t >/dev/null 2>&1 ||
		skip "$t not installed (apt-get install mmdebstrap libarchive-tools)"
done
if [ -z "${KVER:-}" ]; then
	KVER=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -n 1)
	KVER=${KVER#/boot/vmlinuz-}
fi
kernel=/boot/vmlinuz-$KVER
[ -n "$KVER" ] && [ -r "$kernel" ] ||
	skip "no readable Debian kernel in /boot (apt-get install linux-image-amd64)"
if [ -z "${SYSTEM_SUITE:-}" ]; then
	SYSTEM_SUITE=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
fi
[ -n "$SYSTEM_SUITE" ] || skip "cannot tell the Debian release (set SYSTEM_SUITE)"
deb() { ls "$debdir/$1"_*.deb 2>/dev/null | head -n 1; }
for p in fpgad fpgactl libfpgad0; do
	[ -n "$(deb $p)" ] || fail "no $p package in $debdir (make deb)"
done

# --- the root file system, cached -------------------------------------------
# Run-time dependencies of the packages, first alternative, no versions.
deps=$(for p in fpgad fpgactl libfpgad0; do dpkg-deb -f "$(deb $p)" Depends; echo ,; done |
	tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' |
	grep -v -x -e '' -e fpgad -e fpgactl -e libfpgad0)
packages=$(printf '%s\n' $BASE_PACKAGES $deps | sort -u | tr '\n' ' ')
packages=${packages% }
key=$(printf '%s\n' "$RECIPE" "$SYSTEM_SUITE" "$SYSTEM_MIRROR" "$packages" |
	sha256sum | cut -c1-16)
mkdir -p "$SYSTEM_CACHE" "$work" || fail "cannot create $SYSTEM_CACHE or $work"
rootfs=$SYSTEM_CACHE/rootfs-$key.cpio
if [ -s "$rootfs" ]; then
	echo "system: root file system $rootfs (cached)"
else
	echo "system: building the root file system ($SYSTEM_SUITE from $SYSTEM_MIRROR): $packages"
	t=$(now)
	include=$(echo "$packages" | tr ' ' ',')
	# No documentation, manual pages or translations: the guest runs
	# from RAM.
	mmdebstrap --variant=essential --include="$include" \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		--customize-hook='echo fpgad-guest > "$1/etc/hostname"' \
		--customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
		"$SYSTEM_SUITE" "$work/rootfs.tar" "$SYSTEM_MIRROR" \
		</dev/null >"$work/mmdebstrap.log" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		tail -n 15 "$work/mmdebstrap.log"
		if grep -q -E "Could not resolve|Failed to fetch|Temporary failure|Unable to connect|Network is unreachable|Connection refused|Release file .* is not valid|Cannot initiate the connection" \
			"$work/mmdebstrap.log"; then
			skip "cannot reach the Debian archive $SYSTEM_MIRROR to build the root file system (set SYSTEM_MIRROR to a reachable mirror)"
		fi
		if grep -q -E "unshare|newuidmap|subuid|user namespace|fakechroot|proot" "$work/mmdebstrap.log"; then
			skip "mmdebstrap cannot build a root file system as $(id -un) here (run as root, or allow user namespaces)"
		fi
		fail "mmdebstrap failed (log: $work/mmdebstrap.log)"
	fi
	bsdtar --format newc -cf "$rootfs.tmp" @"$work/rootfs.tar" ||
		fail "cannot turn the root file system into an initramfs"
	rm -f "$work/rootfs.tar"
	for old in "$SYSTEM_CACHE"/rootfs-*.cpio; do
		[ "$old" = "$rootfs" ] || rm -f "$old"
	done
	mv "$rootfs.tmp" "$rootfs" || fail "cannot write $rootfs"
	printf '%s\n' "$packages" > "$rootfs.packages"
	echo "system: root file system built in $(( $(now) - t )) s: $(du -m "$rootfs" | cut -f1) MiB"
fi

# --- what this run adds: packages, module, the guest script and its unit -----
over=$work/overlay
rm -rf "$over"
mkdir -p "$over/root/system" "$over/etc/systemd/system/multi-user.target.wants" ||
	fail "cannot populate $over"
mkdir -p "$over/root/system/tree/tests/system" "$over/root/system/tree/systemd" &&
cp "$(deb fpgad)" "$(deb fpgactl)" "$(deb libfpgad0)" "$over/root/system/" &&
cp "$here/guest.sh" "$over/root/system/guest.sh" &&
cp "$here/gpu-sandbox.sh" "$over/root/system/tree/tests/system/" &&
cp "$here/../../systemd/fpgad.service.in" "$over/root/system/tree/systemd/" ||
	fail "cannot copy into $over"
ko=$debdir/dkms/fpgad_dma.ko
if [ -f "$ko" ] && [ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$KVER" ]; then
	cp "$ko" "$over/root/system/" || fail "cannot copy $ko"
	edu="-device edu,dma_mask=0xffffffffffffffff"
else
	echo "system: no fpgad_dma.ko for $KVER in $debdir/dkms (make deb-check builds it): the card checks are skipped"
	edu=
fi
cat > "$over/etc/systemd/system/fpgad-system-test.service" <<'EOF'
[Unit]
Description=fpgad system tier checks
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=/bin/sh /root/system/guest.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
ln -s ../fpgad-system-test.service \
	"$over/etc/systemd/system/multi-user.target.wants/fpgad-system-test.service"
# No login prompt on the console: a getty there would hang up the checks'
# terminal.
ln -s /dev/null "$over/etc/systemd/system/serial-getty@.service"
ln -s /dev/null "$over/etc/systemd/system/getty@.service"
initrd=$work/initrd.cpio
{ cat "$rootfs" && bsdtar --format newc --uid 0 --gid 0 -cf - -C "$over" .; } > "$initrd" ||
	fail "cannot write $initrd"

# --- boot ------------------------------------------------------------------------
accel=${ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	[ -r /dev/kvm ] && [ -w /dev/kvm ] &&
		grep -q -w -E 'vmx|svm' /proc/cpuinfo && accel=kvm
fi
cpu=max
[ "$accel" = kvm ] && cpu=host
log=$work/console.log
echo "system: booting $kernel ($accel) with systemd; console in $log"
t=$(now)
# shellcheck disable=SC2086
timeout "$SYSTEM_TIMEOUT" "$QEMU" -accel "$accel" -cpu "$cpu" -m 1536M -smp 2 \
	-nographic -no-reboot -monitor none -serial stdio -nic none $edu \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 rdinit=/sbin/init panic=-1 quiet systemd.show_status=error" \
	</dev/null >"$log" 2>&1
qrc=$?
if [ "$accel" = kvm ] && [ -z "${ACCEL:-}" ] &&
   grep -a -q -i -E 'failed to initialize kvm|Could not access KVM' "$log"; then
	echo "system: KVM not usable here, falling back to TCG"
	ACCEL=tcg exec "$0" "$@"
fi
rm -f "$initrd"

tr -d '\r' < "$log" | sed -n 's/^SYSTEM: //p'
result=$(tr -d '\r' < "$log" | sed -n 's/^SYSTEM-RESULT: //p' | tail -n 1)
echo "system: guest ran $(( $(now) - t )) s, whole tier $(( $(now) - start )) s"
case "$result" in
PASS*)
	echo "system: PASS: $result"
	exit 0 ;;
"")
	tail -n 40 "$log"
	[ "$qrc" = 124 ] && fail "the guest did not finish within ${SYSTEM_TIMEOUT}s"
	fail "the guest ended without a result (qemu exit $qrc)" ;;
*)
	fail "$result" ;;
esac
