#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/system/deb-check.sh - the Debian packages made by `make deb`:
# lintian (any error fails; the count of each severity is printed), what
# each package holds, the order of fpgad's installation steps, and the
# module of fpgad-dkms built by DKMS for Debian's kernel.
#
#   deb-check.sh DEBDIR
#
# With DEB_ARCH another architecture than this machine's (make
# deb-arm64-check: DEB_ARCH=arm64), DEBDIR holds a cross build's
# architecture-dependent packages, without python3-fpgad and fpgad-dkms
# (make deb's); every ELF file is checked to be that architecture's, and
# the packages' fpgad and fpgactl are run through qemu-user in place of
# the DKMS build.
#
# The DKMS build runs in a private mount namespace with a scratch DKMS
# tree, so that nothing on this machine changes (DKMS writes its signing
# key under /var/lib/dkms); it needs root and kernel headers, and is
# skipped, saying why, without them.  The module is left in
# DEBDIR/dkms/fpgad_dma.ko for the QEMU tier.
#
# Environment: KVER (kernel, default: the newest installed headers).
# Exit status: 0 passed, 1 failed.
set -u
debdir=${1:?usage: deb-check.sh DEBDIR}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "deb: ok: $*"; }
bad() { fail=$((fail + 1)); echo "deb: FAIL: $*"; }

changes=$(ls "$debdir"/*.changes 2>/dev/null | head -n 1)
[ -n "$changes" ] || { echo "deb: FAIL: no .changes in $debdir (make deb)"; exit 1; }
deb() { ls "$debdir/$1"_*.deb 2>/dev/null | head -n 1; }
native=$(dpkg --print-architecture)
arch=${DEB_ARCH:-$native}

# --- lintian ----------------------------------------------------------------
if command -v lintian >/dev/null 2>&1; then
	lintian --pedantic -I --fail-on error --no-tag-display-limit "$changes" \
		>"$debdir/lintian.txt" 2>&1
	rc=$?
	counts=$(for s in E W I P; do
		printf '%s %s, ' "$(grep -c "^$s: " "$debdir/lintian.txt")" \
			"$(case $s in E) echo errors;; W) echo warnings;;
			   I) echo info;; P) echo pedantic;; esac)"; done)
	echo "deb: lintian: ${counts%, }"
	grep '^[EW]: ' "$debdir/lintian.txt" | sed 's/^/deb:   /'
	if [ "$rc" = 0 ]; then ok "lintian: no errors"; else bad "lintian: errors (exit $rc)"; fi
else
	bad "lintian not installed (apt-get install lintian)"
fi

# --- contents -----------------------------------------------------------------
# has PACKAGE PATH...: the package holds every PATH.
has() {
	pkg=$1
	shift
	f=$(deb "$pkg")
	[ -n "$f" ] || { bad "$pkg: no package built"; return; }
	list=$(dpkg-deb -c "$f" | awk '{print $6}' | sed 's|^\./|/|')
	for p in "$@"; do
		echo "$list" | grep -q -x -- "$p" || { bad "$pkg: $p missing"; return; }
	done
	ok "$pkg: $# files in place"
}
ma=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH 2>/dev/null)
has fpgad /usr/sbin/fpgad /usr/sbin/fpgad-exporter /etc/fpgad/fpgad.conf /usr/lib/sysusers.d/fpgad.conf \
	/usr/lib/tmpfiles.d/fpgad.conf /usr/share/fpgad/fpgad-remote.conf \
	/usr/share/man/man8/fpgad.8.gz /usr/share/man/man5/fpgad.conf.5.gz
fpgad_list=$(dpkg-deb -c "$(deb fpgad)")
for p in /lib/systemd/system/fpgad.service /usr/lib/systemd/system/fpgad.service; do
	echo "$fpgad_list" | grep -q "\.$p\$" && unit=$p
done
[ -n "${unit:-}" ] && ok "fpgad: unit at $unit" || bad "fpgad: no fpgad.service"
echo "$fpgad_list" | grep -q "/fpgad-exporter\.service\$" && ok "fpgad: fpgad-exporter.service in place" ||
	bad "fpgad: no fpgad-exporter.service"
has fpgactl /usr/bin/fpgactl /usr/share/man/man1/fpgactl.1.gz \
	/usr/share/bash-completion/completions/fpgactl
has libfpgad0 "/usr/lib/$ma/libfpgad.so.0"
[ "$arch" != "$native" ] || has python3-fpgad /usr/lib/python3/dist-packages/fpgad/__init__.py \
	/usr/lib/python3/dist-packages/fpgad/_fpgad.abi3.so
has libfpgad-dev /usr/include/fpgad.h /usr/include/fpgad_frames.h /usr/include/fpgad_xfer.h \
	/usr/include/fpgad_simframe.h /usr/include/fpgad_abi.h "/usr/lib/$ma/libfpgad.a" \
	"/usr/lib/$ma/libfpgad.so" "/usr/lib/$ma/pkgconfig/fpgad.pc" /usr/share/man/man3/libfpgad.3.gz
# The packaged fpgad.pc: every library a static link needs is found in a
# folder it names (the CUDA runtime included, where the package has it).
pcdir=$(mktemp -d /tmp/fpgad-debpc.XXXXXX)
dpkg-deb -x "$(deb libfpgad-dev)" "$pcdir"
pcf=$(find "$pcdir" -name fpgad.pc | head -n 1)
pclibs=$(PKG_CONFIG_LIBDIR=$(dirname "$pcf") pkg-config --static --libs fpgad 2>&1)
if echo "$pclibs" | grep -q -- -lcudart_static; then
	found=
	for d in $(echo "$pclibs" | tr ' ' '\n' | sed -n 's/^-L//p'); do
		[ -f "$d/libcudart_static.a" ] && found=$d
	done
	[ -n "$found" ] && ok "libfpgad-dev: fpgad.pc finds libcudart_static.a in $found" ||
		bad "libfpgad-dev: fpgad.pc names -lcudart_static but no -L folder holding it: $pclibs"
else
	ok "libfpgad-dev: fpgad.pc needs no CUDA runtime (a build without CUDA)"
fi
rm -rf "$pcdir"
dkms_name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' kmod/dkms.conf)
dkms_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' kmod/dkms.conf)
[ "$arch" != "$native" ] || has fpgad-dkms "/usr/src/$dkms_name-$dkms_ver/dkms.conf" "/usr/src/$dkms_name-$dkms_ver/Kbuild" \
	"/usr/src/$dkms_name-$dkms_ver/uapi/fpgad_dma.h"

# fpgad's postinst makes its users before it enables and starts the unit.
post=$(dpkg-deb -I "$(deb fpgad)" postinst 2>/dev/null)
users=$(echo "$post" | grep -n 'systemd-sysusers' | head -n 1 | cut -d: -f1)
start=$(echo "$post" | grep -n 'deb-systemd-invoke' | head -n 1 | cut -d: -f1)
if [ -n "$users" ] && [ -n "$start" ] && [ "$users" -lt "$start" ]; then
	ok "fpgad: postinst runs systemd-sysusers (line $users) before starting fpgad (line $start)"
else
	bad "fpgad: postinst does not create the users before starting the unit"
fi
if [ "$arch" = "$native" ]; then
	dpkg-deb -f "$(deb fpgad-dkms)" Depends | grep -q dkms &&
		ok "fpgad-dkms: depends on dkms" || bad "fpgad-dkms: no dependency on dkms"
fi

# --- the architecture ------------------------------------------------------------
# Every package is $arch's (or all), every ELF file in it for $arch's CPU
# (file(1) names x86_64 x86-64), the objects of a static library too.
cpu=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_CPU 2>/dev/null)
xdir=$(mktemp -d /tmp/fpgad-debx.XXXXXX)
for f in "$debdir"/*.deb; do
	p=$(basename "$f")
	a=$(dpkg-deb -f "$f" Architecture)
	[ "$a" = all ] && continue
	[ "$a" = "$arch" ] || { bad "$p: Architecture: $a, not $arch"; continue; }
	rm -rf "$xdir/one" && dpkg-deb -x "$f" "$xdir/one" && dpkg-deb -x "$f" "$xdir/root"
	find "$xdir/one" -name '*.a' -type f | while read -r lib; do
		mkdir "$lib.o" && (cd "$lib.o" && ar x "$lib"); done
	elf=$(find "$xdir/one" -type f -exec file -F '|' {} + | grep '| *ELF')
	wrong=$(echo "$elf" | awk -F'|' -v c="$(echo "$cpu" | tr _ -)" 'index($2, c) == 0 { print $1 }' |
		sed "s|$xdir/one||")
	if [ -z "$elf" ]; then ok "$p: Architecture: $arch, no ELF file"
	elif [ -z "$wrong" ]; then ok "$p: Architecture: $arch, $(echo "$elf" | wc -l) ELF files for $cpu"
	else bad "$p: ELF files not for $cpu: $wrong"; fi
done
# Another architecture's programs run here through qemu-user, on the
# libraries of its -dev packages (make deps-$arch) and with its ld.so, as
# tests/arm64/run.sh runs them; libfpgad.so.0 finds all it links.
if [ "$arch" != "$native" ]; then
	qemu=$(command -v "qemu-$cpu-static" || command -v "qemu-$cpu")
	ldso=$(ls /lib/ld-linux-"$cpu"*.so.? 2>/dev/null | head -n 1)
	version=$(sed -n 's/^#define FPGAD_VERSION_STRING "\(.*\)"/\1/p' include/fpgad.h)
	if [ -z "$qemu" ] || [ -z "$ldso" ]; then
		echo "deb: SKIP: running the $arch programs: no qemu-$cpu-static or no $ldso (make deps-$arch)"
	else
		for b in /usr/sbin/fpgad /usr/bin/fpgactl; do
			v=$("$qemu" "$xdir/root$b" --version 2>&1 | head -n 1)
			case $v in
			*"$version"*) ok "$b --version under $(basename "$qemu"): $v" ;;
			*) bad "$b --version under $(basename "$qemu"): $v" ;;
			esac
		done
		if l=$("$qemu" "$ldso" --list "$xdir/root/usr/lib/$ma/libfpgad.so.0" 2>&1) &&
		   ! echo "$l" | grep -q 'not found'; then
			ok "libfpgad0: libfpgad.so.0 finds the $(echo "$l" | grep -c '=>') libraries it links"
		else
			bad "libfpgad0: libfpgad.so.0 does not load: $l"
		fi
	fi
fi
rm -rf "$xdir"

# --- DKMS ----------------------------------------------------------------------
if [ -z "${KVER:-}" ]; then
	KVER=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
	KVER=${KVER#/usr/src/linux-headers-}
fi
if [ "$arch" != "$native" ]; then
	echo "deb: SKIP: DKMS build: fpgad-dkms (Architecture: all) is make deb's"
elif ! command -v dkms >/dev/null 2>&1; then
	echo "deb: SKIP: DKMS build: dkms not installed (apt-get install dkms)"
elif [ "$(id -u)" != 0 ]; then
	echo "deb: SKIP: DKMS build: needs root (a private mount namespace over /var/lib/dkms)"
elif [ -z "$KVER" ] || [ ! -d "/lib/modules/$KVER/build" ]; then
	echo "deb: SKIP: DKMS build: no kernel headers (apt-get install linux-headers-amd64)"
else
	rm -rf "$debdir/dkms" && mkdir -p "$debdir/dkms"
	dpkg-deb -x "$(deb fpgad-dkms)" "$debdir/dkms/root"
	src=$(cd "$debdir/dkms/root/usr/src" && pwd)
	out=$(cd "$debdir/dkms" && pwd)
	# DKMS compresses the module as the kernel does (6.12: .ko.xz).
	# shellcheck disable=SC2016
	unshare -m sh -c 'mount -t tmpfs tmpfs /var/lib/dkms &&
		dkms build -m "$1" -v "$2" -k "$3" --sourcetree "$4" --dkmstree /var/lib/dkms &&
		m="/var/lib/dkms/$1/$2/$3/$(uname -m)/module/fpgad_dma.ko" &&
		if [ -f "$m.xz" ]; then xz -dc "$m.xz" > "$5/fpgad_dma.ko"; else cp "$m" "$5/"; fi' \
		sh "$dkms_name" "$dkms_ver" "$KVER" "$src" "$out" >"$out/dkms.log" 2>&1
	if [ -f "$out/fpgad_dma.ko" ] &&
	   [ "$(modinfo -F vermagic "$out/fpgad_dma.ko" | cut -d' ' -f1)" = "$KVER" ]; then
		ok "fpgad-dkms: DKMS builds fpgad_dma.ko for $KVER"
	else
		tail -n 20 "$out/dkms.log"
		bad "fpgad-dkms: DKMS build for $KVER failed (log: $out/dkms.log)"
	fi
fi

echo "deb: $pass passed, $fail failed"
[ "$fail" = 0 ]
