#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/system/pc-check.sh - fpgad.pc and fpgad-uninstalled.pc as a user of
# libfpgad meets them: a program built with nothing but what pkg-config
# says, linked shared and fully static (which fails unless Libs.private
# names every library libfpgad.a needs, mbedtls included), and run.
#
# Environment: BUILD (default build).  Exit status: 0 passed, 1 failed.
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) build=$BUILD ;; *) build=$(pwd)/$BUILD ;; esac
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "pc: ok: $*"; }
bad() { fail=$((fail + 1)); echo "pc: FAIL: $*"; }

work=$(mktemp -d /tmp/fpgad-pc.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
cat >"$work/hello.c" <<'EOC'
#include <errno.h>
#include <fpgad.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	fpgad_client *c;
	/* Nothing listens there: a clean error, not a crash. */
	int r = fpgad_connect("ipc:///nonexistent/fpgad.sock", &c);

	printf("%s %d\n", fpgad_version(), r);
	return strcmp(fpgad_version(), FPGAD_VERSION_STRING) || r != -ECONNREFUSED;
}
EOC

# build NAME "CFLAGS AND LIBS" EXTRA...: compile hello into $work/NAME.
build() {
	name=$1 flags=$2
	shift 2
	# shellcheck disable=SC2086
	cc -o "$work/$name" "$work/hello.c" "$@" $flags >"$work/$name.log" 2>&1
}
# check NAME WHAT [env...]: the program runs and prints the version.
check() {
	name=$1 what=$2
	shift 2
	if out=$(env "$@" "$work/$name" 2>&1); then
		ok "$what: $out"
	else
		bad "$what: ran: $out"
	fi
}

# --- the installed fpgad.pc ----------------------------------------------
make --no-print-directory -s install DESTDIR="$work/root" PREFIX=/usr BUILD="$BUILD" \
	>"$work/install.log" 2>&1 || { cat "$work/install.log"; bad "make install"; }
pc="$work/root/usr/lib/pkgconfig/fpgad.pc"
for lib in -lnng -lmbedtls -lmbedx509 -lmbedcrypto -lprotobuf-c -lpthread; do
	grep -q -- "^Libs.private:.* $lib\( \|$\)" "$pc" || bad "fpgad.pc: Libs.private lacks $lib"
done
inst() { PKG_CONFIG_LIBDIR="$work/root/usr/lib/pkgconfig" \
	pkg-config --define-variable=prefix="$work/root/usr" "$@" fpgad; }
if build shared "$(inst --cflags --libs)"; then
	check shared "fpgad.pc, shared" LD_LIBRARY_PATH="$work/root/usr/lib"
else
	bad "fpgad.pc, shared: $(cat "$work/shared.log")"
fi
if build static "$(inst --static --cflags --libs)" -static; then
	check static "fpgad.pc, fully static"
else
	bad "fpgad.pc, fully static: $(grep -m 3 -e 'undefined' -e 'error' "$work/static.log")"
fi

# --- build/fpgad-uninstalled.pc: preferred by pkg-config in PKG_CONFIG_PATH --
tree() { PKG_CONFIG_PATH="$build" PKG_CONFIG_LIBDIR=/nonexistent pkg-config "$@" fpgad; }
if ! tree --libs | grep -q -- "-L$build "; then
	bad "PKG_CONFIG_PATH=$BUILD pkg-config fpgad does not pick fpgad-uninstalled.pc: $(tree --libs 2>&1)"
elif build tree "$(tree --cflags --libs)"; then
	# No LD_LIBRARY_PATH: the run path in the .pc finds build/libfpgad.so.0.
	if ldd "$work/tree" | grep -q "libfpgad.so.0 => $build/libfpgad.so.0"; then
		check tree "fpgad-uninstalled.pc, shared, run from the tree"
	else
		bad "fpgad-uninstalled.pc: libfpgad.so.0 not taken from $build: $(ldd "$work/tree" | grep fpgad)"
	fi
else
	bad "fpgad-uninstalled.pc, shared: $(cat "$work/tree.log")"
fi
if build tree-static "$(tree --static --cflags --libs)" -static; then
	check tree-static "fpgad-uninstalled.pc, fully static"
else
	bad "fpgad-uninstalled.pc, fully static: $(grep -m 3 -e 'undefined' -e 'error' "$work/tree-static.log")"
fi

echo "pc: $pass passed, $fail failed"
[ "$fail" = 0 ]
