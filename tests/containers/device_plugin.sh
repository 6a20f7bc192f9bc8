#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/containers/device_plugin.sh BUILD_DIR - fpgad-device-plugin against
# a fake kubelet written from the published v1beta1 API
# (fake_kubelet.py), with fpgad on the simulated card, in a temporary
# device-plugin directory.  The last line is 'N passed, N failed[, N skipped]'.
set -u
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
. "$(dirname "$0")/lib.sh"

if ! "$PYTHON" -c 'import grpc, grpc_tools.protoc' 2>/dev/null; then
	skip device-plugin "python3-grpcio or python3-grpc-tools is not installed"
	summary
	exit
fi
build_consumer || { fail consumer "cannot be built"; summary; exit 1; }
"$PYTHON" "$HERE/fake_kubelet.py" --build "$BUILD" --dir "$T" \
	--plugin "$TOP/k8s/fpgad-device-plugin" \
	--proto "$TOP/k8s/deviceplugin/v1beta1/api.proto" --consumer "$CONSUMER" >"$T/kubelet.out" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"PASS "*) PASSED=$((PASSED + 1)); echo "$line" ;;
	"FAIL "*) FAILED=$((FAILED + 1)); echo "$line" ;;
	*) echo "     $line" ;;
	esac
done <"$T/kubelet.out"
[ $rc = 0 ] || [ "$FAILED" -gt 0 ] || fail fake-kubelet "exit status $rc"
summary
