#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/arm64/run.sh - make arm64-check: fpgad's aarch64 build (make arm64)
# put through the tiers named (unit, integration, hostile; default unit),
# each test binary under qemu-user on another machine, natively on aarch64.
#
#   tests/arm64/run.sh [unit] [integration] [hostile]   BUILD=build-arm64
#
# How an aarch64 binary runs here, the first that holds:
#   native   this is an aarch64 machine
#   binfmt   the kernel hands aarch64 ELF files to qemu-aarch64
#            (/proc/sys/fs/binfmt_misc/qemu-aarch64 enabled): exec works
#            as it does natively
#   qemu     qemu-aarch64-static (or qemu-aarch64) started by hand; what
#            the tests exec (fpgad, fpgactl, fpgad-exporter, the peers) is
#            reached through $BUILD/qemu/, a folder of scripts named like
#            the binaries that start qemu on them, given to the suites as
#            their BUILD
# and when none does, every tier skips saying why.
#
# Never qemu's -L /usr/aarch64-linux-gnu: that is the cross toolchain's
# glibc (libc6-arm64-cross), and its ld.so loads the other libraries from
# the multiarch folders, libc.so.6 of libc6:arm64 among them; two builds of
# glibc in one process, and pthread_create walks a list it does not know
# the layout of, for ever.  /lib/ld-linux-aarch64.so.1 (libc6:arm64, which
# the -dev:arm64 packages bring) matches the libraries beside it.
set -u
BUILD=${BUILD:-build-arm64}
tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(unit)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac

skip() {
	echo "arm64-check: SKIP: $*"
	exit 0
}

qemu=
if [ "$(uname -m)" = aarch64 ]; then
	how=native
elif grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
	how=binfmt
else
	qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64) ||
		skip "no way to run aarch64 binaries here: no binfmt_misc entry" \
		     "qemu-aarch64 and no qemu-aarch64-static (make deps-arm64)"
	how=qemu
fi
[ -e /lib/ld-linux-aarch64.so.1 ] || [ "$how" = native ] ||
	skip "no /lib/ld-linux-aarch64.so.1: libc6:arm64 is not installed (make deps-arm64)"
[ -x "$BUILD/fpgad" ] || { echo "arm64-check: no $BUILD/fpgad (make arm64)"; exit 1; }
run=()
[ "$how" = qemu ] && run=("$qemu")
"${run[@]}" "$BUILD/fpgad" --version >/dev/null 2>&1 ||
	skip "$BUILD/fpgad --version does not run here ($how)"

# What the suites exec, where they look for it (BUILD).
exec_build=$BUILD
if [ "$how" = qemu ]; then
	exec_build=$BUILD/qemu
	mkdir -p "$exec_build/itests" "$exec_build/hostile" || exit 1
	for b in fpgad fpgad-exporter fpgactl itests/hold_frame \
		 hostile/hostile_peer hostile/ring_peer hostile/object_peer; do
		printf '#!/bin/sh\nexec %s %s "$@"\n' "$qemu" "$BUILD/$b" \
			> "$exec_build/$b" && chmod 0755 "$exec_build/$b" || exit 1
	done
fi
echo "arm64-check: aarch64 binaries run $how${qemu:+ ($qemu)}"

rc=0 n=0 failed=()
# suite NAME BINARY: run one CMocka suite, its output in $BUILD/arm64/NAME.log.
suite() {
	local log=$BUILD/arm64/$1.log t0=$SECONDS r
	BUILD=$exec_build timeout 600 "${run[@]}" "$2" > "$log" 2>&1
	r=$?
	n=$((n + 1))
	if [ $r = 0 ]; then
		printf '  ok    %-28s %3ds\n' "$1" $((SECONDS - t0))
	else
		printf '  FAIL  %-28s %3ds (rc %d; %s)\n' "$1" $((SECONDS - t0)) $r "$log"
		tail -n 20 "$log" | sed 's/^/        /'
		failed+=("$1") rc=1
	fi
}

mkdir -p "$BUILD/arm64" || exit 1
for tier in "${tiers[@]}"; do
	t0=$SECONDS
	echo "== arm64 $tier"
	case $tier in
	unit)
		for t in "$BUILD"/tests/test_*; do suite "$(basename "$t")" "$t"; done ;;
	integration)
		for t in "$BUILD"/itests/test_*; do
			suite "itest-$(basename "$t")" "$t"
		done ;;
	hostile)
		BUILD=$exec_build "$root/tests/hostile/run.sh" || { failed+=(hostile) rc=1; } ;;
	*)
		echo "arm64-check: no tier '$tier' (unit, integration, hostile)" >&2
		exit 2 ;;
	esac
	echo "== arm64 $tier: $((SECONDS - t0))s"
done
if [ $rc = 0 ]; then
	echo "arm64-check: ${tiers[*]}: all passed ($how, ${SECONDS}s)"
else
	echo "arm64-check: failed: ${failed[*]}"
fi
exit $rc
