#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/integration/symbols.sh - libfpgad.so exports exactly the functions
# that include/fpgad.h declares: no internal symbol leaks out, and
# no declared function is missing.
set -eu

BUILD=${BUILD:-build}
so=$BUILD/libfpgad.so
header=include/fpgad.h
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -f "$so" ] || { echo "symbols: FAIL: no $so"; exit 1; }

# Every function declaration of the header, with or without FPGAD_EXPORT.
sed -n 's/^\(FPGAD_EXPORT \)\{0,1\}[a-z].*[ *]\(fpgad_[a-z0-9_]*\)(.*/\2/p' \
	"$header" | sort -u >"$tmp/header"
# Every symbol the library defines, version nodes aside.
nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$tmp/exported"

n=$(wc -l <"$tmp/header")
[ "$n" -gt 20 ] || { echo "symbols: FAIL: found only $n functions in $header"; exit 1; }
if ! diff -u "$tmp/header" "$tmp/exported" >"$tmp/diff"; then
	echo "symbols: FAIL: libfpgad.so and fpgad.h differ (- header only, + library only):"
	grep '^[-+][a-z_]' "$tmp/diff"
	exit 1
fi
echo "symbols: libfpgad.so exports exactly the $n functions of fpgad.h"

# fpgad defines no function of another library's for others to bind to
# (libc's accept() least of all): its dynamic symbol table defines nothing
# but what the toolchain puts there.  fpgad-exporter defines its accept
# guard's two, on purpose, and nothing else.
defined_functions() {
	nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" || $2 == "i" { sub(/@.*/, "", $3); print $3 }' |
		grep -v -x -e _init -e _fini | sort -u
}
[ -f "$BUILD/fpgad" ] && [ -f "$BUILD/fpgad-exporter" ] ||
	{ echo "symbols: FAIL: no $BUILD/fpgad or $BUILD/fpgad-exporter"; exit 1; }
got=$(defined_functions "$BUILD/fpgad" | tr '\n' ' ')
[ -z "$got" ] || { echo "symbols: FAIL: fpgad defines functions for others to bind to: $got"; exit 1; }
got=$(defined_functions "$BUILD/fpgad-exporter" | tr '\n' ' ')
[ "$got" = "accept accept4 " ] ||
	{ echo "symbols: FAIL: fpgad-exporter defines '$got', not its accept guard's 'accept accept4 '"; exit 1; }
echo "symbols: fpgad defines no function for others; fpgad-exporter only its accept guard"
