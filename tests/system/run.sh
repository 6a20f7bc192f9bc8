#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/system/run.sh - boot Debian's kernel in QEMU with a minimal Debian
# root file system (systemd as PID 1), install the fpgad packages in it and
# run one or more guest scripts there, one after another in the same boot
# (or, with SYSTEM_BOOTS=each, each in a boot of its own, all at once):
# tests/system/guest.sh (the system tier) unless told otherwise.
#
#   run.sh [-g|-G NAME=SCRIPT]... [-f SRC=DEST]... [-m MODULE]... DEBDIR [WORKDIR]
#
#   -g NAME=SCRIPT  run SCRIPT in the guest as suite NAME (default
#                   system=tests/system/guest.sh); it prints "TAG: ..." lines
#                   and a last "TAG-RESULT: PASS|FAIL|SKIP ..." line, TAG
#                   being NAME in capitals, and finds its files under
#                   /root/system
#   -G NAME=SCRIPT  the same, for another tier to report: its lines and
#                   verdict are only written to WORKDIR (below), and leave
#                   this run's exit status alone
#   -f SRC=DEST     carry the file SRC into the guest as /root/system/DEST
#   -m MODULE       carry the kernel module MODULE of KVER and the modules it
#                   depends on (modprobe --show-depends on this machine's
#                   /lib/modules/KVER) into /root/system/modules, with
#                   /root/system/modules/load: one file a line in load order
#                   (decompressed here)
#
# The root file system is built by mmdebstrap from Debian's archive, as an
# initramfs (no disk image, no kernel modules needed to mount it), and
# cached as $SYSTEM_CACHE/rootfs-KEY.cpio, KEY being a hash of the suite,
# the mirror and the package list (a base list plus the run-time
# dependencies of the packages under test): a changed list builds a new
# one, and older ones are removed.  Every suite shares it.  The packages
# under test, the guest scripts and their files travel in a second archive
# appended to the first.
#
# Each suite's lines are printed with the prefix "NAME: " and kept in
# WORKDIR/NAME.log, its verdict in WORKDIR/NAME.result ("PASS ...",
# "FAIL ..." or "SKIP ..."); a suite that printed no verdict FAILs.
#
# Environment:
#   SYSTEM_CACHE    where the root file system is kept (default build/system-cache)
#   SYSTEM_MIRROR   Debian archive (default http://deb.debian.org/debian)
#   SYSTEM_SUITE    Debian release (default: this machine's, from /etc/os-release)
#   KVER            kernel release to boot (default: the newest /boot/vmlinuz-*-amd64)
#   QEMU            default qemu-system-x86_64
#   ACCEL           kvm or tcg (default kvm when usable, else tcg)
#   SYSTEM_BOOTS    one (default: the suites one after another in one boot)
#                   or each (a boot per suite, the boots at the same time:
#                   the suites' waits overlap, for one more boot's CPU)
#   SYSTEM_TIMEOUT  seconds for the guest (default 600)
#
# Exit status (of the suites given with -g): 0 each passed or skipped, not
# all skipped; 1 one failed; 77 the boot was skipped or every one skipped
# (the reason is printed).
set -u

SKIP=77
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: run.sh [-g|-G NAME=SCRIPT]... [-f SRC=DEST]... [-m MODULE]... DEBDIR [WORKDIR]"
suites='' quiet='' files='' modules=''
nl='
'
while getopts g:G:f:m: opt; do
	case $opt in
	g) suites="$suites$OPTARG$nl" ;;
	G) suites="$suites$OPTARG$nl" quiet="$quiet ${OPTARG%%=*}" ;;
	f) files="$files$OPTARG$nl" ;;
	m) modules="$modules $OPTARG" ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
debdir=${1:?$usage}
work=${2:-$(mktemp -d /tmp/fpgad-system.XXXXXX)}
[ -n "$suites" ] || suites="system=$here/guest.sh$nl"
names=
for s in $suites; do
	name=${s%%=*}
	case $name in
	'' | *[!a-z0-9]*) echo "run.sh: suite name '$name': lower-case letters and digits only" >&2; exit 2 ;;
	esac
	names="$names $name"
done
mkdir -p "$work" || { echo "run.sh: cannot create $work" >&2; exit 1; }
for name in $names; do rm -f "$work/$name.log" "$work/$name.result"; done
QEMU=${QEMU:-qemu-system-x86_64}
SYSTEM_CACHE=${SYSTEM_CACHE:-build/system-cache}
SYSTEM_MIRROR=${SYSTEM_MIRROR:-http://deb.debian.org/debian}
SYSTEM_TIMEOUT=${SYSTEM_TIMEOUT:-600}
# Bump when the way the root file system is made changes.
RECIPE=1
# What the guest needs besides the packages' own dependencies: systemd for
# the system tier; iproute2, rdma-core, the verbs library, its providers
# (rxe's among them), ibverbs-utils and jq for the soft-RoCE suite
# (tests/net/rxe-guest.sh).  One list for every suite, so that they share
# one cached root file system.
BASE_PACKAGES="systemd systemd-sysv udev dbus passwd procps kmod
	iproute2 rdma-core libibverbs1 ibverbs-providers ibverbs-utils jq"

# Before the boot, a skip or a failure is every suite's verdict.
verdict() {
	for name in $names; do
		echo "$name: $1: $2" > "$work/$name.log"
		echo "$1 $2" > "$work/$name.result"
	done
}
skip() { echo "system: SKIP: $*"; verdict SKIP "$*"; exit $SKIP; }
fail() { echo "system: FAIL: $*"; verdict FAIL "$*"; exit 1; }
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
mkdir -p "$SYSTEM_CACHE" || fail "cannot create $SYSTEM_CACHE or $work"
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

# --- what this run adds: packages, modules, the guest scripts and their unit ---
over=$work/overlay
rm -rf "$over"
mkdir -p "$over/root/system" "$over/etc/systemd/system/multi-user.target.wants" ||
	fail "cannot populate $over"
mkdir -p "$over/root/system/tree/tests/system" "$over/root/system/tree/systemd" &&
cp "$(deb fpgad)" "$(deb fpgactl)" "$(deb libfpgad0)" "$over/root/system/" &&
cp "$here/guest-lib.sh" "$over/root/system/" &&
cp "$here/gpu-sandbox.sh" "$over/root/system/tree/tests/system/" &&
cp "$here/../../systemd/fpgad.service.in" "$over/root/system/tree/systemd/" ||
	fail "cannot copy into $over"
# The suites, in order: /root/system/suites names them, each one's script
# is /root/system/suite-NAME.sh.
for s in $suites; do
	name=${s%%=*} script=${s#*=}
	[ -r "$script" ] || fail "no guest script $script for suite $name"
	cp "$script" "$over/root/system/suite-$name.sh" || fail "cannot copy $script"
done
old_ifs=$IFS
IFS=$nl
for f in $files; do
	src=${f%%=*} dest=${f#*=}
	case $dest in
	'' | /* | *..*) fail "-f $f: DEST must be a relative path inside /root/system" ;;
	esac
	mkdir -p "$over/root/system/$(dirname "$dest")" &&
	cp "$src" "$over/root/system/$dest" || fail "cannot carry $src into the guest"
done
IFS=$old_ifs
# Modules and what they depend on, from this machine's modules.dep for KVER
# (modprobe prints "builtin NAME" for what the kernel has built in).  One
# that cannot be found is named in /root/system/modules/missing for the
# suite that wanted it to report; the other suites run all the same.
if [ -n "$modules" ]; then
	mods=$over/root/system/modules
	mkdir -p "$mods" && : > "$work/modules.list" || fail "cannot populate $over"
	for m in $modules; do
		if ! command -v modprobe >/dev/null 2>&1; then
			echo "modprobe not installed here (apt-get install kmod)" > "$mods/missing"
		elif modprobe -S "$KVER" --show-depends "$m" >"$work/modules.out" 2>&1; then
			sed -n 's/^insmod \([^ ]*\).*/\1/p' "$work/modules.out" >> "$work/modules.list"
		else
			echo "no kernel module $m for $KVER on this machine: $(head -n 1 "$work/modules.out")" > "$mods/missing"
		fi
	done
	# Uncompressed: decompressing in an emulated guest takes seconds.
	for ko in $(awk '!seen[$0]++' "$work/modules.list"); do
		out=$(basename "$ko")
		out=${out%.xz} out=${out%.zst} out=${out%.gz}
		case $ko in
		*.xz) xz -dc "$ko" ;;
		*.zst) zstd -q -dc "$ko" ;;
		*.gz) gzip -dc "$ko" ;;
		*) cat "$ko" ;;
		esac > "$mods/$out" && echo "$out" >> "$mods/load" ||
			fail "cannot carry $ko into the guest (xz, zstd or gzip missing?)"
	done
fi
ko=$debdir/dkms/fpgad_dma.ko
if [ -f "$ko" ] && [ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$KVER" ]; then
	cp "$ko" "$over/root/system/" || fail "cannot copy $ko"
	edu="-device edu,dma_mask=0xffffffffffffffff"
else
	case " $names " in
	*" system "*) echo "system: no fpgad_dma.ko for $KVER in $debdir/dkms (make deb-check builds it): the card checks are skipped" ;;
	esac
	edu=
fi
echo 'for s in $(cat /root/system/suites); do /bin/sh "/root/system/suite-$s.sh"; done' \
	> "$over/root/system/suites.sh"
cat > "$over/etc/systemd/system/fpgad-system-test.service" <<'EOF'
[Unit]
Description=fpgad system tier checks
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=/bin/sh /root/system/suites.sh
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
common=$work/overlay.cpio
bsdtar --format newc --uid 0 --gid 0 -cf "$common" -C "$over" . ||
	fail "cannot write $common"
# initrd BOOT SUITES...: the root file system, the overlay, and the list
# of the suites this boot runs (/root/system/suites), in $work/BOOT.cpio.
initrd() {
	b=$1
	shift
	rm -rf "$work/list-$b" && mkdir -p "$work/list-$b/root/system" &&
	printf '%s\n' "$@" > "$work/list-$b/root/system/suites" &&
	{ cat "$rootfs" "$common" &&
	  bsdtar --format newc --uid 0 --gid 0 -cf - -C "$work/list-$b" .; } > "$work/$b.cpio" ||
		fail "cannot write $work/$b.cpio"
}

# --- boot ------------------------------------------------------------------------
accel=${ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	[ -r /dev/kvm ] && [ -w /dev/kvm ] &&
		grep -q -w -E 'vmx|svm' /proc/cpuinfo && accel=kvm
fi
# boot BOOT: $work/BOOT.cpio booted, its console in $work/BOOT.console,
# QEMU's exit status in $work/BOOT.qrc.
boot() {
	cpu=max
	[ "$accel" = kvm ] && cpu=host
	# shellcheck disable=SC2086
	timeout "$SYSTEM_TIMEOUT" "$QEMU" -accel "$accel" -cpu "$cpu" -m 1536M -smp 2 \
		-nographic -no-reboot -monitor none -serial stdio -nic none $edu \
		-kernel "$kernel" -initrd "$work/$1.cpio" \
		-append "console=ttyS0 rdinit=/sbin/init panic=-1 quiet systemd.show_status=error" \
		</dev/null >"$work/$1.console" 2>&1
	echo $? > "$work/$1.qrc"
}
# The boots: "console" running every suite, or one per suite.
case ${SYSTEM_BOOTS:-one} in
one) boots=console
     initrd console $names ;;
each) boots=
      for name in $names; do boots="$boots $name-boot"; initrd "$name-boot" "$name"; done ;;
*) fail "SYSTEM_BOOTS=$SYSTEM_BOOTS: one or each" ;;
esac
t=$(now)
echo "system: booting $kernel ($accel) with systemd, suites:$names, $(echo $boots | wc -w) boot(s); console in $work/console.log"
pids=
for b in $boots; do boot "$b" & pids="$pids $!"; done
wait $pids
if [ "$accel" = kvm ] && [ -z "${ACCEL:-}" ] &&
   cat "$work"/*.console | grep -a -q -i -E 'failed to initialize kvm|Could not access KVM'; then
	echo "system: KVM not usable here, falling back to TCG"
	accel=tcg
	pids=
	for b in $boots; do boot "$b" & pids="$pids $!"; done
	wait $pids
fi
# One console log for the verdicts below (the boots' suites have their
# own prefixes); each boot's own stays beside it.
log=$work/console.log
qrc=0
: > "$log.tmp"
for b in $boots; do
	r=$(cat "$work/$b.qrc" 2>/dev/null || echo 1)
	[ "$r" = 0 ] || qrc=$r
	cat "$work/$b.console" >> "$log.tmp"
	rm -f "$work/$b.cpio" "$work/$b.qrc"
done
[ "$boots" != console ] || rm -f "$work/console.console"
mv "$log.tmp" "$log"
rm -f "$common"
echo "system: guest ran $(( $(now) - t )) s, whole run $(( $(now) - start )) s"

# --- each suite's verdict --------------------------------------------------------
failed=0 passed=0 reported=0
for name in $names; do
	tag=$(echo "$name" | tr a-z A-Z)
	tr -d '\r' < "$log" | sed -n "s/^$tag: /$name: /p" > "$work/$name.log"
	result=$(tr -d '\r' < "$log" | sed -n "s/^$tag-RESULT: //p" | tail -n 1)
	case "$result" in
	PASS* | SKIP*)
		echo "$name: ${result%% *}: ${result#* }" >> "$work/$name.log" ;;
	"")
		{
			tail -n 40 "$log"
			if [ "$qrc" = 124 ]; then
				echo "$name: FAIL: the guest did not finish within ${SYSTEM_TIMEOUT}s"
			else
				echo "$name: FAIL: the guest ended without its result (qemu exit $qrc)"
			fi
		} >> "$work/$name.log"
		result="FAIL no result" ;;
	*)
		result="FAIL ${result#* }"
		echo "$name: $result" | sed 's/FAIL /FAIL: /' >> "$work/$name.log" ;;
	esac
	echo "$result" > "$work/$name.result"
	# A suite run for another tier to report is only recorded.
	case " $quiet " in
	*" $name "*)
		echo "system: suite $name: ${result%% *} (its tier reports it: $work/$name.log)"
		continue ;;
	esac
	cat "$work/$name.log"
	reported=$((reported + 1))
	case $result in
	PASS*) passed=$((passed + 1)) ;;
	FAIL*) failed=$((failed + 1)) ;;
	esac
done
[ "$failed" = 0 ] || exit 1
[ "$passed" != 0 ] || [ "$reported" = 0 ] || exit $SKIP
exit 0
