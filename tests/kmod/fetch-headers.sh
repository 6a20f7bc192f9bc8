#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/kmod/fetch-headers.sh ARCH ABI DEST - a Debian kernel's headers for
# another architecture (arm64), for cross-compiling fpgad_dma.ko, without
# multiarch and without installing anything: the package is downloaded from
# the Debian archive with apt-get under a private list and cache directory
# in DEST, unpacked in DEST/root, and the headers directory is printed.
#
#   ABI   the kernel ABI of an installed amd64 header package, e.g.
#         6.1.0-57 or 6.12.117+deb12: the architecture-independent
#         linux-headers-ABI-common and the (host) linux-kbuild it needs are
#         the ones installed with linux-headers-ABI-amd64, and the package
#         fetched is of the same Debian version.
#
# Nothing is fetched again once DEST/root holds the headers.
set -eu
[ $# = 3 ] || { echo "usage: $0 ARCH ABI DEST" >&2; exit 2; }
arch=$1 abi=$2 dest=$3
pkg=linux-headers-$abi-$arch
tree=$dest/root/usr/src/$pkg

if [ ! -f "$tree/Makefile" ]; then
	ver=$(dpkg-query -W -f='${Version}' "linux-headers-$abi-common" 2>/dev/null) || {
		echo "fetch-headers: linux-headers-$abi-common is not installed (install linux-headers-$abi-amd64)" >&2
		exit 1
	}
	mkdir -p "$dest/lists/partial" "$dest/cache/archives/partial" "$dest/debs"
	apt_opts="-o APT::Architecture=$arch -o APT::Architectures=$arch \
		-o Dir::State::Lists=$dest/lists -o Dir::Cache=$dest/cache \
		-o APT::Sandbox::User=root -qq"
	# shellcheck disable=SC2086
	apt-get $apt_opts update >&2
	# shellcheck disable=SC2086
	(cd "$dest/debs" && apt-get $apt_opts download "$pkg=$ver" >&2)
	# Another kernel's headers may share DEST/root: unpack beside them.
	rm -rf "$dest/unpack-$pkg"
	dpkg-deb -x "$dest/debs/${pkg}_"*"_$arch.deb" "$dest/unpack-$pkg"
	mkdir -p "$dest/root"
	cp -a "$dest/unpack-$pkg/." "$dest/root/"
	rm -rf "$dest/unpack-$pkg"
fi

# scripts/ and tools/ point at ../../lib/linux-kbuild-*: the host's.
kbuild=$(readlink "$tree/scripts" | sed -n 's|^\.\./\.\./lib/\(linux-kbuild-[^/]*\)/scripts$|\1|p')
if [ -z "$kbuild" ] || [ ! -d "/usr/lib/$kbuild" ]; then
	echo "fetch-headers: $pkg needs /usr/lib/${kbuild:-linux-kbuild-?} (install linux-headers-$abi-amd64)" >&2
	exit 1
fi
mkdir -p "$dest/root/usr/lib"
ln -sfn "/usr/lib/$kbuild" "$dest/root/usr/lib/$kbuild"
echo "$tree"
