#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/gpu/mdwe.sh BUILD - CUDA in fpgad under MemoryDenyWriteExecute=,
# where systemd is not PID 1 (gpu-sandbox.sh needs it): the kernel's own
# PR_SET_MDWE (Linux 6.3 and later; inherited by execve) refuses every
# mapping that is or becomes both writable and executable, as the unit's
# seccomp rule does.  fpgad starts under it with two channels in GPU
# memory (gpudirect and bounce), and fpgactl captures and verifies frames
# from each.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no GPU, no python3, or a
# kernel without PR_SET_MDWE; the reason is printed).
set -u
BUILD=${1:?usage: tests/gpu/mdwe.sh BUILD}
skip() { echo "mdwe: SKIP: $*"; exit 77; }
[ -c /dev/nvidiactl ] || skip "no NVIDIA GPU (/dev/nvidiactl)"
command -v python3 >/dev/null || skip "no python3 to call prctl"
T=$(mktemp -d /tmp/fpgad-mdwe.XXXXXX)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$T"' EXIT
pid=
printf '[channel gd]\nmemory = cuda\nmode = gpudirect\n[channel bn]\nengine = 1\nmemory = cuda\nmode = bounce\n' > "$T/fpgad.conf"
# PR_SET_MDWE = 65, PR_MDWE_REFUSE_EXEC_GAIN = 1.
python3 - "$BUILD/fpgad" "$T" > "$T/fpgad.log" 2>&1 <<'PY' &
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(65, 1, 0, 0, 0) != 0:
    print("PR_SET_MDWE: %s" % os.strerror(ctypes.get_errno()))
    sys.exit(77)
os.execv(sys.argv[1], [sys.argv[1], "-c", sys.argv[2] + "/fpgad.conf",
                       "--runtime-dir", sys.argv[2] + "/rt"])
PY
pid=$!
i=0
until "$BUILD/fpgactl" --url "ipc://$T/rt/fpgad.sock" status > "$T/status.txt" 2>&1; do
	i=$((i + 1))
	if ! kill -0 $pid 2>/dev/null; then
		wait $pid
		st=$?
		[ $st = 77 ] && skip "$(cat "$T/fpgad.log")"
		echo "mdwe: FAIL: fpgad under PR_SET_MDWE exited $st:"
		tail -5 "$T/fpgad.log"
		exit 1
	fi
	[ $i -lt 600 ] || { echo "mdwe: FAIL: fpgad did not answer"; exit 1; }
	sleep 0.05
done
fail=0
for ch in gd bn; do
	if out=$("$BUILD/fpgactl" --url "ipc://$T/rt/fpgad.sock" capture $ch -n 2000 --verify 2>&1); then
		echo "mdwe: PASS: $ch: $(echo "$out" | grep -E '^channel|^verified' | tr '\n' ' ')"
	else
		echo "mdwe: FAIL: $ch: $out"
		fail=1
	fi
done
exit $fail
