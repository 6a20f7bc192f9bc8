#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/containers/build_consumer.sh BUILD_DIR OUT - the verifying consumer
# (consumer.c) linked statically over BUILD_DIR/libfpgad.a and the
# libraries its pkg-config file names (CUDA's runtime where the build has
# it), so that it runs in a namespace or a container root file system with
# nothing else.  Exit 1, saying why, when it cannot be built.
set -u
BUILD=$1
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
if [ ! -f "$BUILD/libfpgad.a" ] || [ ! -f "$BUILD/fpgad.pc" ]; then
	echo "no $BUILD/libfpgad.a: build first (make BUILD=$BUILD all)" >&2
	exit 1
fi
cudalib=$(sed -n 's/^cudalibdir=//p' "$BUILD/fpgad.pc")
libs=$(sed -n 's/^Libs.private: *//p' "$BUILD/fpgad.pc" | sed "s|\${cudalibdir}|$cudalib|g")
# shellcheck disable=SC2086
if ! ${CC:-cc} -static -std=c11 -O2 -D_GNU_SOURCE -I"$TOP/include" -o "$OUT" \
	"$HERE/consumer.c" "$BUILD/libfpgad.a" $libs >"$OUT.log" 2>&1; then
	echo "building the consumer failed:" >&2
	grep -v 'statically linked' "$OUT.log" | sed 's/^/  /' >&2
	rm -f "$OUT.log"
	exit 1
fi
rm -f "$OUT.log"
chmod 0755 "$OUT"
