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
# minus A B: A - B with its sign, one decimal.
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", a - b }'; }
# met A OP B: "met" when A OP B (>= or <=) holds, else "not met".
met() { awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
	ok = op == ">=" ? a + 0 >= b + 0 : a + 0 <= b + 0
	print ok ? "met" : "not met" }'; }

# run NAME CMD...: one program; its stdout in $RUNDIR/NAME.out, both
# streams in OUTD/NAME.log, its last JSON line in $LINE and every JSON line
# in $RAW tagged {"step":NAME}.  A failure or no JSON line ends the script.
run() {
	name=$1
	shift
	log "$name: $*"
	echo "\$ $*" >> "$OUTD/$name.log"
	rc=0
	"$@" > "$RUNDIR/$name.out" 2>> "$OUTD/$name.log" || rc=$?
	cat "$RUNDIR/$name.out" >> "$OUTD/$name.log"
	[ $rc = 0 ] || die "$name: exit $rc (see $OUTD/$name.log)"
	LINE=$(grep '^{' "$RUNDIR/$name.out" | tail -1 || true)
	[ -n "$LINE" ] || die "$name printed no result (see $OUTD/$name.log)"
	grep '^{' "$RUNDIR/$name.out" | while read -r l; do
		printf '{"step":"%s",%s\n' "$name" "${l#\{}" >> "$RAW"
	done
}

# cpu_split LINE: "OWN CARD", fpgad's own threads' CPU us/frame and the
# simulated card's (sim-* engines, and the cuda-* runtime threads serving
# their copies), from bench_stream's daemon_threads.
cpu_split() {
	for t in $(jget "$1" daemon_threads); do
		echo "${t%%(*} ${t#*=}"
	done | awk '$1 ~ /^(sim|cuda)-/ { card += $2; next } { own += $2 }
		    END { printf "%.2f %.2f", own, card }'
}

# stream NAME CHANNEL VERIFY [ARG]: one bench_stream consumer for
# BENCH_SECONDS [1.5] after 2 x BENCH_SLOTS warm-up frames, verifying
# none, cpu or gpu with VERIFY_DEPTH [8] in flight, fpgad's CPU reported.
stream() {
	run "$1" "$BUILD/bench/bench_stream" --seconds "${BENCH_SECONDS:-1.5}" \
		--warmup $((${BENCH_SLOTS:-16} * 2)) --verify "$3" \
		--depth "${VERIFY_DEPTH:-8}" ${4:-} --daemon-pid "$FPGAD_PID" "$URL" "$2"
}

# --- fpgad's configs (on stdout) -------------------------------------------------

# header: the daemon, control and sim sections every benchmark config opens with.
header() {
	printf '[daemon]\nlog_level = info\n\n[control]\nmax_clients = 128\n'
	printf '\n[sim]\nlink = unlimited\n'
}

# channel NAME ENGINE SIZE MEMORY MODE RATE [SLOTS]: a C2H channel, policy
# block, BENCH_SLOTS [16] slots, BENCH_QDEPTH [8] in flight, PACING [hybrid].
channel() {
	cat <<EOT

[channel $1]
direction = c2h
engine = $2
slots = ${7:-${BENCH_SLOTS:-16}}
slot_size = $3
frame_size = $3
frame_rate = $6
queue_depth = ${BENCH_QDEPTH:-8}
memory = $4
mode = $5
policy = block
pacing = ${PACING:-hybrid}
EOT
}

# xfer_config [POLL_US]: the sim card with transfers; [transfer] poll_us
# when given, else fpgad's default.
xfer_config() {
	header
	printf '\n[transfer]\nmax_registered = 8G\n'
	[ -z "${1:-}" ] || printf 'poll_us = %s\n' "$1"
}

# fpgad_start NAME: fpgad with the config $RUNDIR/NAME.conf (copied to
# OUTD/fpgad-NAME.conf) and the runtime directory $RUNDIR/NAME, its stderr
# to OUTD/fpgad-NAME.log, until it answers on that directory's socket.
fpgad_start() {
	cp "$RUNDIR/$1.conf" "$OUTD/fpgad-$1.conf"
	mkdir -p "$RUNDIR/$1"
	"$BUILD/fpgad" -c "$RUNDIR/$1.conf" --runtime-dir "$RUNDIR/$1" \
		2> "$OUTD/fpgad-$1.log" &
	FPGAD_PID=$!
	URL=ipc://$RUNDIR/$1/fpgad.sock
	i=0
	until "$BUILD/fpgactl" --url "$URL" status > /dev/null 2>&1; do
		kill -0 "$FPGAD_PID" 2>/dev/null ||
			die "fpgad exited at start (see $OUTD/fpgad-$1.log)"
		i=$((i + 1))
		[ $i -lt 600 ] || die "fpgad not answering after 30 s (see $OUTD/fpgad-$1.log)"
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
