#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/kmod/backport.sh KVER DEST BACKPORT - an installed Debian kernel's
# headers (linux-headers-KVER, with its -common) as a distribution that
# backported a newer interface would ship them, for `make kmod-conftest`.
# DEST gets a tree of symbolic links to the real headers, but for the one
# header the backport edits, a copy; prints the directory to build in.
#
#   CLASS_CREATE_FN     class_create(name) a function, the two-argument
#                       macro gone (as RHEL 9.4's 5.14 has it)
#   CLASS_CREATE_MACRO  class_create(name) a one-argument macro (as
#                       between the two commits of 6.4 that changed it)
#   PCI_IRQ_INTX        PCI_IRQ_INTX defined as 6.8 defines it
#
# A test of the kernel's version picks the old spelling on each: a compile
# error (too many arguments; a redefined macro, with -Werror).
set -eu
[ $# = 3 ] || { echo "usage: $0 KVER DEST BACKPORT" >&2; exit 2; }
kver=$1 dest=$2 backport=$3
obj=/usr/src/linux-headers-$kver
common=$(sed -n 's|^include \(/.*\)/Makefile$|\1|p' "$obj/Makefile")
[ -n "$common" ] && [ -d "$common/include" ] ||
	{ echo "backport: $obj is not a Debian headers package (its Makefile includes no -common)" >&2; exit 1; }

rm -rf "$dest" && mkdir -p "$dest"
cp -as "$common" "$dest/common"
cp -as "$obj" "$dest/obj"
# The top Makefile finds the source tree by its own real path: a copy.
rm "$dest/common/Makefile" && cp "$common/Makefile" "$dest/common/Makefile"
echo "include $dest/common/Makefile" > "$dest/obj/Makefile.tmp"
rm "$dest/obj/Makefile" && mv "$dest/obj/Makefile.tmp" "$dest/obj/Makefile"

# $1: the header under include/, replaced by a copy with the lines of stdin
# before its last line (the include guard's #endif).
patch_header() {
	f=$dest/common/include/$1
	real=$common/include/$1
	[ -L "$f" ] && [ -f "$real" ] || { echo "backport: no $real" >&2; exit 1; }
	# The link goes first: writing through it would edit the real header.
	rm "$f"
	{ sed '$d' "$real"; cat; tail -n 1 "$real"; } > "$f"
}

class_create_name() {
	cat <<-'EOT'
	/* Backported (tests/kmod/backport.sh): class_create() without owner. */
	#undef class_create
	static inline struct class *__backport_class_create(const char *name)
	{
		static struct lock_class_key key;

		return __class_create(NULL, name, &key);
	}
	EOT
}

case $backport in
CLASS_CREATE_FN)
	{ class_create_name; cat <<-'EOT'
	static inline struct class * __must_check class_create(const char *name)
	{
		return __backport_class_create(name);
	}
	EOT
	} | patch_header linux/device/class.h ;;
CLASS_CREATE_MACRO)
	{ class_create_name; echo '#define class_create(name) __backport_class_create(name)'; } |
		patch_header linux/device/class.h ;;
PCI_IRQ_INTX)
	grep -q 'define PCI_IRQ_INTX' "$common/include/linux/pci.h" &&
		{ echo "backport: $kver has PCI_IRQ_INTX already" >&2; exit 1; }
	printf '%s\n' '/* Backported (tests/kmod/backport.sh). */' \
		'#define PCI_IRQ_INTX		(1 << 0) /* INTx# IRQ */' |
		patch_header linux/pci.h ;;
*)
	echo "backport: unknown backport $backport" >&2; exit 2 ;;
esac
echo "$dest/obj"
