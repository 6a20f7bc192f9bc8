#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/system/gpu-sandbox.sh - does CUDA work inside fpgad.service's
# sandbox?  On a GPU host with systemd as PID 1, run the built fpgad as a
# transient service with every sandboxing option of
# systemd/fpgad.service.in (as a dynamic user rather than fpgad, so that
# no system user is needed), a channel in GPU memory, and check that it
# chose cuda memory and streams verified frames.  When it does not, run it again with one
# option lifted at a time (the system call filter as one, the device rules
# as one), and say which one CUDA needs lifted.
#
#   gpu-sandbox.sh BUILD_DIR
#
# GPU_SANDBOX_HOST=1 runs the same steps with host memory on a machine
# without a GPU: a test of this script only (the system tier runs it).
#
# Exit status: 0 passed, 1 failed, 77 skipped (no GPU, or no systemd as
# PID 1; the reason is printed).
set -u
SKIP=77
build=$(cd "${1:?usage: gpu-sandbox.sh BUILD_DIR}" && pwd)
unit=$(cd "$(dirname "$0")/../.." && pwd)/systemd/fpgad.service.in
name=fpgad-sandbox-check

skip() { echo "gpu-sandbox: SKIP: $*"; exit $SKIP; }
[ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1 ||
	skip "systemd is not PID 1 here"
memory=cuda
mode=bounce
if [ "${GPU_SANDBOX_HOST:-0}" = 1 ]; then
	memory=host
	mode=host
else
	[ -c /dev/nvidiactl ] || skip "no NVIDIA GPU (/dev/nvidiactl)"
fi
[ "$(id -u)" = 0 ] || skip "needs root (systemd-run of a system service)"
[ -x "$build/fpgad" ] && [ -x "$build/fpgactl" ] || { echo "gpu-sandbox: FAIL: no fpgad, fpgactl in $build"; exit 1; }

# The unit's sandbox: its [Service] lines but identity, commands and life
# cycle, as systemd-run properties ("-p KEY=VALUE", one per line).
props() {
	sed -n '/^\[Service\]/,/^\[/p' "$unit" | grep -E '^[A-Za-z]+=' |
		grep -v -E '^(Type|NotifyAccess|Exec[A-Za-z]*|WatchdogSec|Restart[A-Za-z]*|User|Group|SupplementaryGroups|RuntimeDirectory[A-Za-z]*)=' |
		grep -v -E "^($1)="
}

work=$(mktemp -d /tmp/fpgad-gpu-sandbox.XXXXXX)
trap 'systemctl stop $name >/dev/null 2>&1; rm -rf "$work"' EXIT INT TERM
# No socket group: the transient service's user is in none.
printf '[control]\ngroup =\n[channel c2h0]\nmemory = %s\nmode = %s\n' \
	$memory $mode > "$work/fpgad.conf"
chmod 0755 "$work" && chmod 0644 "$work/fpgad.conf"

# run LABEL EXCLUDED: fpgad under the sandbox without the EXCLUDED options
# (a regular expression of keys, "" for none); 0 when CUDA works.  The
# binaries and the configuration are bound into the sandbox (the unit's
# ProtectHome= may hide where they are); systemd-run wants an executable
# it can see, hence the shell that execs fpgad.
run() {
	label=$1
	props "${2:-^$}" > "$work/props"
	set --
	while IFS= read -r p; do set -- "$@" -p "$p"; done < "$work/props"
	systemctl stop $name >/dev/null 2>&1
	systemctl reset-failed $name >/dev/null 2>&1
	# Libraries the build host linked dynamically, as run-gpu-host.sh finds them.
	if ldd "$build/fpgad" | grep -q 'not found' && [ -d "$build/lib" ]; then
		set -- "$@" -p "Environment=LD_LIBRARY_PATH=/run/$name-bin/lib"
	fi
	systemd-run --unit=$name -p Type=notify -p DynamicUser=yes -p RuntimeDirectory=$name \
		-p BindReadOnlyPaths="$build:/run/$name-bin $work:/run/$name-conf" "$@" \
		/bin/sh -c "exec /run/$name-bin/fpgad -c /run/$name-conf/fpgad.conf --runtime-dir /run/$name" \
		>"$work/run.log" 2>&1 ||
		{ echo "gpu-sandbox: $label: fpgad did not start:"; cat "$work/run.log"
		  journalctl -u $name -n 20 --no-pager -o cat; return 1; }
	url=ipc:///run/$name/fpgad.sock
	"$build/fpgactl" --url "$url" --json status > "$work/status.json" 2>&1
	if ! grep -q "\"memory\": \"$memory\"" "$work/status.json"; then
		echo "gpu-sandbox: $label: fpgad runs without $memory memory:"
		journalctl -u $name -n 20 --no-pager -o cat
		return 1
	fi
	if ! "$build/fpgactl" --url "$url" capture c2h0 -n 2000 --verify > "$work/capture.log" 2>&1; then
		echo "gpu-sandbox: $label: capture failed:"
		tail -n 5 "$work/capture.log"
		return 1
	fi
	echo "gpu-sandbox: $label: $memory memory, $(grep '^verified' "$work/capture.log")"
	return 0
}

if run "the unit's sandbox" ""; then
	echo "gpu-sandbox: PASS: $memory memory works under every option of fpgad.service"
	exit 0
fi
# Lift one option at a time (the system call filter as one, the device
# rules as one) until it works.
for key in $(props '^$' | cut -d= -f1 | grep -v -E '^(SystemCall|Device)' | sort -u) \
	   'SystemCallFilter|SystemCallErrorNumber|SystemCallArchitectures' \
	   'DevicePolicy|DeviceAllow'; do
	if run "without $key" "$key"; then
		echo "gpu-sandbox: FAIL: $memory memory needs $key lifted from fpgad.service"
		exit 1
	fi
done
echo "gpu-sandbox: FAIL: $memory memory does not work under the sandbox, whichever single option is lifted"
exit 1
