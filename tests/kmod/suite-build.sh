#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/kmod/suite-build.sh SUITE CACHE OUT [NVP2P_STUB] - build fpgad_dma.ko
# against the kernel headers of a Debian suite (trixie, sid, ...) in that
# suite's own chroot: its kernel may need a newer gcc than this host's.
#
# The chroot (gcc, make, perl, linux-headers-amd64 of SUITE, made by mmdebstrap
# from $KMOD_MIRROR) is kept in CACHE/SUITE/root and reused; remove it to
# follow the suite.  The module's sources (kmod/, from the current
# directory) are built in the chroot with warnings as errors and W=1, also
# with PIN_NVP2P against NVP2P_STUB (a directory with nv-p2p.h and a
# Module.symvers, see kmod.mk) when given; each module is copied to
# OUT/<kernel release>/ (and OUT/nvp2p/<kernel release>/) and must import
# the DMA_BUF namespace.  Prints the kernel and the gcc it was built with.
# Exits 77 (skip) when the archive cannot be reached or mmdebstrap is
# missing.
set -eu
[ $# = 3 ] || [ $# = 4 ] || { echo "usage: $0 SUITE CACHE OUT [NVP2P_STUB]" >&2; exit 2; }
suite=$1 cache=$2 out=$3 stub=${4:-}
mirror=${KMOD_MIRROR:-http://deb.debian.org/debian}
root=$cache/$suite/root
SKIP=77
# perl: W=1 runs scripts/kernel-doc, which needs more than perl-base.
pkgs="gcc make libc6-dev perl linux-headers-amd64"

skip() { echo "kmod-suites: $suite: SKIP: $*"; exit $SKIP; }
fail() { echo "kmod-suites: $suite: FAIL: $*"; exit 1; }

[ -f kmod/Kbuild ] || fail "run from the top of the source tree"
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap's root mode, chroot)"

if [ ! -d "$root" ]; then
	command -v mmdebstrap >/dev/null || skip "no mmdebstrap (apt-get install mmdebstrap)"
	mkdir -p "$cache/$suite"
	/usr/lib/apt/apt-helper download-file "$mirror/dists/$suite/InRelease" \
		"$cache/$suite/InRelease" >/dev/null 2>&1 ||
		skip "$mirror/dists/$suite is unreachable"
	rm -rf "$root.tmp"
	echo "kmod-suites: $suite: making its chroot in $root (once)"
	# A snapshot of the archive may carry a Release file past its
	# Valid-Until: the headers are what is wanted, not security updates.
	mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
		--include="$(echo "$pkgs" | tr " " ,)" \
		"$suite" "$root.tmp" "$mirror" >"$cache/$suite/mmdebstrap.log" 2>&1 ||
		fail "mmdebstrap failed, see $cache/$suite/mmdebstrap.log"
	mv "$root.tmp" "$root"
fi
# A chroot kept from before a package was added to the list gets it.
# shellcheck disable=SC2086
if ! chroot "$root" /usr/bin/dpkg -s $pkgs >/dev/null 2>&1; then
	echo "kmod-suites: $suite: installing $pkgs in $root"
	# shellcheck disable=SC2086
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -c \
		"apt-get -qq -o Acquire::Check-Valid-Until=false update &&
		 apt-get -qq install -y $pkgs" >"$cache/$suite/apt.log" 2>&1 ||
		fail "cannot install $pkgs in $root, see $cache/$suite/apt.log"
fi

kdir=$(ls -d "$root"/usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
[ -n "$kdir" ] && [ -f "$kdir/Makefile" ] || fail "no linux-headers-*-amd64 in $root"
krel=${kdir##*/linux-headers-}
gcc=$(chroot "$root" /usr/bin/gcc -dumpfullversion)

# $1: the directory under OUT, $2: NVIDIA_SRC inside the chroot.
build() {
	src=$root/src/$1
	rm -rf "$src" && mkdir -p "$src/uapi"
	cp -p kmod/*.c kmod/*.h kmod/Kbuild "$src/" && cp -p kmod/uapi/*.h "$src/uapi/"
	rm -f "$src/fpgad_conftest.h"
	# objtool reads /proc: a proc of our own, in a mount namespace that
	# goes with the build.
	rc=0
	# shellcheck disable=SC2016
	unshare -m sh -c 'mount -t proc proc "$1/proc" && shift && exec chroot "$@"' sh \
		"$root" "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/ \
		make -s -C "/usr/src/linux-headers-$krel" M="/src/$1" \
		KCFLAGS=-Werror W=1 NVIDIA_SRC="$2" modules >"$out/$1.log" 2>&1 || rc=$?
	grep -v -e 'Skipping BTF generation' "$out/$1.log" || true
	[ "$rc" = 0 ] || fail "$1 did not build against $krel (log: $out/$1.log)"
	ns=$(modinfo -F import_ns "$src/fpgad_dma.ko")
	[ "$ns" = DMA_BUF ] || fail "$1: import_ns is '$ns', not DMA_BUF"
	mkdir -p "$out/$1"
	cp "$src/fpgad_dma.ko" "$src/fpgad_conftest.h" "$out/$1/"
}

mkdir -p "$out/nvp2p"
build "$krel" ""
what="$krel"
if [ -n "$stub" ]; then
	rm -rf "$root/src/nvp2p-stub" && mkdir -p "$root/src"
	cp -r "$stub" "$root/src/nvp2p-stub"
	build "nvp2p/$krel" /src/nvp2p-stub
	what="$krel, also with PIN_NVP2P"
fi
echo "kmod-suites: $suite: built against $what with gcc $gcc ($(grep -c '^#define' "$out/$krel/fpgad_conftest.h") of the conftest's probes found)"
