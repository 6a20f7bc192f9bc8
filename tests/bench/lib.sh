# SPDX-License-Identifier: MIT
#
# tests/bench/lib.sh - what the benchmark scripts share, sourced by run.sh,
# xfer.sh and release.sh (not run): messages, reading their programs' JSON
# lines, ratios, fpgad started and stopped, an MPS control daemon.  The
# caller sets BENCH_WHO (its name in messages), BUILD and RUNDIR; these
# functions keep fpgad's pid in FPGAD_PID, its control URL in URL, and
# MPS_UP while an MPS daemon of theirs runs.  Sourcing it sets the traps
# that clean up on exit.

MPS_UP=

# What an exit leaves behind: fpgad, an MPS daemon of this run, RUNDIR.
bench_cleanup() {
	[ -z "$FPGAD_PID" ] || kill -9 "$FPGAD_PID" 2>/dev/null || true
	[ -z "$MPS_UP" ] || echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
	rm -rf "$RUNDIR"
}
trap bench_cleanup EXIT
trap 'exit 1' INT TERM HUP

log() { echo "$BENCH_WHO: $*" >&2; }
die() { log "FAIL: $*"; exit 1; }
# jget JSON KEY: the value of a flat key of one JSON line.
jget() { printf '%s\n' "$1" | sed -n 's/.*"'"$2"'":"\{0,1\}\([^,"}]*\).*/\1/p'; }
# ratio A B [DIGITS]: A / B, "-" when B is not above 0.
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-2}" \
	'BEGIN { if (b + 0 > 0) printf "%.*f", d, a / b; else printf "-" }'; }

# fpgad_start CONF DIR LOG: fpgad with CONF and the runtime directory DIR,
# its stderr to LOG, until it answers on DIR's socket.
fpgad_start() {
	mkdir -p "$2"
	"$BUILD/fpgad" -c "$1" --runtime-dir "$2" 2> "$3" &
	FPGAD_PID=$!
	URL=ipc://$2/fpgad.sock
	i=0
	until "$BUILD/fpgactl" --url "$URL" status > /dev/null 2>&1; do
		kill -0 "$FPGAD_PID" 2>/dev/null || die "fpgad exited at start (see $3)"
		i=$((i + 1))
		[ $i -lt 600 ] || die "fpgad not answering after 30 s (see $3)"
		sleep 0.05
	done
}

# fpgad_stop: SIGTERM; fpgad must exit with status 0.
fpgad_stop() {
	kill -TERM "$FPGAD_PID"
	rc=0
	wait "$FPGAD_PID" || rc=$?
	FPGAD_PID=
	[ $rc = 0 ] || die "fpgad exited with status $rc"
}

# mps_start / mps_stop: an MPS control daemon of this run's own, its pipe
# and logs under RUNDIR; mps_start fails where there is none.

mps_start() {
	command -v nvidia-cuda-mps-control >/dev/null 2>&1 || return 1
	export CUDA_MPS_PIPE_DIRECTORY=$RUNDIR/mps-pipe
	export CUDA_MPS_LOG_DIRECTORY=$RUNDIR/mps-log
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
	nvidia-cuda-mps-control -d || return 1
	MPS_UP=1
}
mps_stop() {
	[ -n "$MPS_UP" ] || return 0
	echo quit | nvidia-cuda-mps-control || true
	MPS_UP=
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
