# Reconnecting consumers through a storm of fpgad restarts.

STORM_CHANNELS='[channel c2h0]
memory = host
frame_size = 4K
slots = 8
frame_rate = 400

[channel c2h1]
engine = 1
memory = host
frame_size = 4K
slots = 8
frame_rate = 400'

# fpgad_restart: a new fpgad on the same runtime directory and config.
fpgad_restart() {
	"$FPGAD" -v -c "$FPGAD_CONF" --runtime-dir "$FPGAD_RT" >> "$FPGAD_LOG" 2>&1 &
	FPGAD_PID=$!
	echo "$FPGAD_PID" >> "$CASE_DIR/pids"
}

# Six `fpgactl capture --reconnect --verify` (one exclusive lessee of c2h0,
# five shared lessees of c2h1) while fpgad is killed with SIGKILL and
# started again 25 times (as many as fit in 25 s), up 0-0.4 s each, some
# cycles back to back: every consumer ends with all its frames verified,
# having ridden through restarts, and no lease outlives them: nobody is
# listed holding a channel, and another process leases each one
# exclusively.
case_restart_storm() {
	local i n=6 frames=3000 pids=() st out ch t0
	fpgad_start "$STORM_CHANNELS"
	for i in $(seq "$n"); do
		if [ "$i" = 1 ]; then
			set -- c2h0
		else
			set -- c2h1 --shared
		fi
		"$FPGACTL" --url "$FPGAD_URL" capture "$@" -n "$frames" --verify \
			--reconnect --timeout 15000 > "$CASE_DIR/cons.$i.out" 2>&1 &
		pids+=($!)
		echo $! >> "$CASE_DIR/pids"
	done
	t0=$(now_ms)
	# 25 cycles, or fewer on a loaded machine: the case stays in its limit.
	for i in $(seq 25); do
		[ $(( $(now_ms) - t0 )) -lt 25000 ] || break
		# Every fifth cycle back to back: killed as soon as it answers.
		if [ $((i % 5)) != 0 ]; then
			sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
		fi
		kill -KILL "$FPGAD_PID"
		wait "$FPGAD_PID" 2>/dev/null
		fpgad_restart
		fpgad_wait_up
	done
	for i in $(seq "$n"); do
		wait "${pids[$((i - 1))]}"
		st=$?
		out=$(cat "$CASE_DIR/cons.$i.out")
		[ "$st" = 0 ] || { say "$out"; tail -20 "$FPGAD_LOG"; fail "consumer $i exited with $st"; }
		expect_out "$out" "verified   $frames, errors 0"
		expect_out "$out" "restarts   "
	done
	# Nobody holds a lease any more (the listing's own client holds none).
	out=$("$FPGACTL" --url "$FPGAD_URL" clients 2>&1) || { say "$out"; fail "fpgactl clients failed"; }
	case $out in *c2h0*|*c2h1*)
		say "$out"; fail "a lease outlived the consumers" ;;
	esac
	for ch in c2h0 c2h1; do
		out=$("$FPGACTL" --url "$FPGAD_URL" capture "$ch" -n 20 --verify --timeout 5000 2>&1) ||
			{ say "$out"; fail "after the storm, $ch cannot be leased exclusively"; }
	done
	fpgad_stop
}
hostile_case restart_storm any "6 reconnecting consumers through 25 SIGKILL restarts: all frames verified, no lease left"

# More idle connections on fpgad.handoff than fpgad serves at once: a
# lessee's handoff is reset, and libfpgad presents its token again within
# its timeout (fpgad closes the idle ones after 2 s) instead of failing.
case_handoff_reset_retried() {
	fpgad_start "$RING_CHANNEL"
	background python3 -c '
import socket, sys, time
held = []
for i in range(80):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    held.append(s)
time.sleep(0.3)
print("holding", len(held), flush=True)
sys.stdin.read()
' "$FPGAD_RT/fpgad.handoff"
	wait_for "$CASE_DIR/bg.$BG.out" "holding 80"
	out=$("$FPGACTL" --url "$FPGAD_URL" capture c2h0 -n 20 --verify --timeout 5000 2>&1) ||
		{ say "$out"; fail "a handoff reset by fpgad was not tried again"; }
	release_background "$BG"
	fpgad_stop
}
hostile_case handoff_reset_retried any "a handoff reset while fpgad's pending handoffs are full is tried again"

# While fpgad is down, something else answers on its socket path, takes
# the client's connection and never speaks; then fpgad comes back.  nng
# keeps that connection (and its dialer) waiting for ever: libfpgad makes
# a new socket when no answer comes, and the capture rides through.
case_dialer_stuck() {
	local out st cons fake
	fpgad_start "$STORM_CHANNELS"
	"$FPGACTL" --url "$FPGAD_URL" capture c2h0 -n 1200 --verify --reconnect \
		--timeout 7000 > "$CASE_DIR/cons.out" 2>&1 &
	cons=$!
	echo "$cons" >> "$CASE_DIR/pids"
	sleep 0.5
	kill -KILL "$FPGAD_PID"
	wait "$FPGAD_PID" 2>/dev/null
	# Not `background`: the fpgad started later would hold its stdin open.
	python3 -c '
import os, socket, sys, time
path = sys.argv[1]
try:
    os.unlink(path)
except FileNotFoundError:
    pass
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
l.bind(path)
l.listen(64)
l.settimeout(0.1)
held = []
end = time.time() + 1.5
while time.time() < end:
    try:
        held.append(l.accept()[0])
    except socket.timeout:
        pass
os.unlink(path)
l.close()
print("holding", len(held), flush=True)
time.sleep(60)
' "$FPGAD_RT/fpgad.sock" > "$CASE_DIR/fake.out" 2>&1 &
	fake=$!
	echo "$fake" >> "$CASE_DIR/pids"
	wait_for "$CASE_DIR/fake.out" "holding" 10
	expect_not_in "$CASE_DIR/fake.out" "holding 0"
	fpgad_restart
	fpgad_wait_up
	wait "$cons"
	st=$?
	out=$(cat "$CASE_DIR/cons.out")
	[ "$st" = 0 ] || { say "$out"; fail "the capture did not come back to fpgad (exit $st)"; }
	expect_out "$out" "verified   1200, errors 0"
	kill "$fake"
	fpgad_stop
}
hostile_case dialer_stuck any "a connection that never answers does not hold a reconnecting client for ever"
