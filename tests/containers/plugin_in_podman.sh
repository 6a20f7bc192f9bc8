#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/containers/plugin_in_podman.sh PLUGIN-ARGS... - run
# fpgad-device-plugin in a container shaped as k8s/daemonset.yaml's pod:
# read-only root file system (the host's, as an overlay: no image to
# build), an empty tmpfs on /tmp, uid 0 with DAC_OVERRIDE its only
# capability, no network, and bound from the host only the kubelet's
# device-plugin directory, fpgad's runtime directory (read-only) and the
# CDI directory, each at the path the plugin's options give, and the
# plugin itself at /opt/fpgad-k8s (the tree may be under the host's /tmp,
# which the pod's empty /tmp hides).  PODMAN and
# RUNARGS come from lib.sh's podman_detect; FPGAD_TEST_RUN labels the
# container for the caller's cleanup.  The plugin is exec'd so that
# podman passes it the caller's signals.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
mounts=
prev=
n=$#
# The arguments again, fpgactl's path made the container's: the binary
# is bound at /opt/fpgad-bin (the host's may be under /tmp too).
for a in "$@"; do
	case $prev in
	--plugin-dir) mounts="$mounts -v $a:$a" ;;
	--cdi-dir) [ -n "$a" ] && mkdir -p "$a" && mounts="$mounts -v $a:$a" ;;
	--url)
		d=${a#ipc://}
		d=${d%/fpgad.sock}
		mounts="$mounts -v $d:$d:ro"
		;;
	--fpgactl)
		mounts="$mounts -v $a:/opt/fpgad-bin/fpgactl:ro"
		a=/opt/fpgad-bin/fpgactl
		;;
	esac
	set -- "$@" "$a"
	prev=$a
done
shift "$n"
# shellcheck disable=SC2086
exec $PODMAN run --rm $RUNARGS --label "fpgad-test=${FPGAD_TEST_RUN:-none}" \
	--read-only --read-only-tmpfs=false --tmpfs /tmp:rw,notmpcopyup,size=16m \
	--cap-drop ALL --cap-add DAC_OVERRIDE --user 0 $mounts \
	-v "$TOP/k8s:/opt/fpgad-k8s:ro" \
	--rootfs /:O /opt/fpgad-k8s/fpgad-device-plugin "$@"
