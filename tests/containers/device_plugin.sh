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
# kubelet ARGS...: fake_kubelet.py's scenario, its lines counted here.
kubelet() {
	"$PYTHON" "$HERE/fake_kubelet.py" --build "$BUILD" --dir "$1" \
		--proto "$TOP/k8s/deviceplugin/v1beta1/api.proto" --consumer "$CONSUMER" \
		--plugin "$2" --prefix "$3" >"$1/kubelet.out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"PASS "*) PASSED=$((PASSED + 1)); echo "$line" ;;
		"FAIL "*) FAILED=$((FAILED + 1)); echo "$line" ;;
		*) echo "     $line" ;;
		esac
	done <"$1/kubelet.out"
	[ $rc = 0 ] || [ "$FAILED" -gt 0 ] || fail fake-kubelet "exit status $rc"
}

mkdir -p "$T/host"
kubelet "$T/host" "$TOP/k8s/fpgad-device-plugin" ""

# The same scenario with the plugin in a container shaped as the
# DaemonSet's pod (plugin_in_podman.sh).
if [ "$(id -u)" != 0 ] || ! have podman; then
	skip pod-shaped "the plugin in a container needs root and podman"
elif ! podman_detect --rootfs /:O /bin/true; then
	skip pod-shaped "no container runs on this host: $PODMAN_WHY"
else
	FPGAD_TEST_RUN=dp$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
	export PODMAN RUNARGS FPGAD_TEST_RUN
	pod_cleanup() {
		podman ps -aq --filter "label=fpgad-test=$FPGAD_TEST_RUN" | xargs -r podman rm -f >/dev/null 2>&1
	}
	CLEANUPS="$CLEANUPS pod_cleanup"
	mkdir -p "$T/pod"
	kubelet "$T/pod" "$HERE/plugin_in_podman.sh" "pod "
fi
summary
