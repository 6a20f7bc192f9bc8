#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/containers/run.sh BUILD_DIR - every container test: consumers in
# other namespaces (namespaces.sh, and gpu_namespaces.sh for GPU rings where
# a GPU answers), the CDI spec against CDI's schema and
# in podman (cdi.sh), the device plugin against a fake kubelet
# (device_plugin.sh), and the DaemonSet manifest (manifest_check.py).
# Each prints PASS/FAIL/SKIP lines; the last line here adds them up:
# 'N passed, N failed[, N skipped]' (the parts' own totals are shown as
# 'part: N PASS, N FAIL, N SKIP', so that make check's tier runner, which
# adds up every 'N passed', counts each case once).  Exit 1 when a case
# failed.
set -u
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
# No bytecode left in the tree (k8s/, tests/containers/).
export PYTHONDONTWRITEBYTECODE=1
if [ ! -x "$BUILD/fpgad" ] || [ ! -x "$BUILD/fpgactl" ]; then
	echo "no $BUILD/fpgad or $BUILD/fpgactl: build first (make BUILD=$BUILD all)"
	echo "0 passed, 1 failed"
	exit 1
fi
p=0 f=0 s=0
add() {
	# The totals line of a part: 'N passed, N failed[, N skipped]'.
	line=$(tail -n 1 "$1")
	n=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\{0,1\}$/\1 \2 \4/p')
	if [ -z "$n" ]; then
		echo "FAIL $2: ended without its totals line (last: $line)"
		f=$((f + 1))
		return
	fi
	set -- $n
	p=$((p + $1)) f=$((f + $2)) s=$((s + ${3:-0}))
}
out=$(mktemp /tmp/fpgad-containers-run.XXXXXX)
cdir=$(mktemp -d /tmp/fpgad-containers-consumer.XXXXXX)
trap 'rm -rf "$out" "$cdir"' EXIT
trap 'exit 130' INT TERM HUP PIPE
# The verifying consumer, built once for every part (each builds its own
# when this fails, and says why).
chmod 0755 "$cdir"
"$HERE/build_consumer.sh" "$BUILD" "$cdir/consumer" 2>/dev/null &&
	export CONTAINERS_CONSUMER="$cdir/consumer"
for t in namespaces gpu_namespaces cdi device_plugin; do
	echo "== $t"
	"$HERE/$t.sh" "$BUILD" 2>&1 | tee "$out" |
		awk -v t="$t" '/^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$/ {
			split($0, a, /[^0-9]+/)
			printf "%s: %d PASS, %d FAIL, %d SKIP\n", t, a[1], a[2], a[3]
			next
		} { print; fflush() }'
	add "$out" "$t"
done
echo "== manifest"
if "$PYTHON" -c 'import yaml, grpc' 2>/dev/null; then
	if "$PYTHON" "$HERE/manifest_check.py" "$TOP/k8s/daemonset.yaml" "$TOP/k8s/fpgad-device-plugin"; then
		p=$((p + 1))
	else
		f=$((f + 1))
	fi
else
	echo "SKIP daemonset: python3-yaml or python3-grpcio is not installed"
	s=$((s + 1))
fi
echo "== all"
# Nothing ran (no root, no tools): a skipped tier for make check.
[ $p = 0 ] && [ $f = 0 ] && echo "containers: SKIP: every case skipped (see the reasons above)"
if [ $s -gt 0 ]; then
	echo "$p passed, $f failed, $s skipped"
else
	echo "$p passed, $f failed"
fi
[ $f = 0 ]
