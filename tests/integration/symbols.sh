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
