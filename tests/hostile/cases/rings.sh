# What a lessee can do to the rings it was handed, and kill -9 of each
# party while frames flow.

RING_CHANNEL='[channel c2h0]
memory = host
frame_size = 64K
slots = 8
integrity = crc32c'

# capture_ok [ARGS...]: a verified capture of c2h0 that must succeed.
capture_ok() {
	local out
	out=$("$FPGACTL" --url "$FPGAD_URL" capture c2h0 -n 200 --verify --timeout 5000 "$@" 2>&1) ||
		{ say "$out"; fail "a verified capture after the attack failed"; }
}

# A lessee truncates, grows and reseals its rings, maps the c2h data ring
# writable and scribbles its descriptor ring for two seconds: the kernel
# refuses what would fault fpgad, fpgad keeps serving, and the next
# lessee of the same channel gets clean, verified frames.
case_ring_scribbler() {
	# As root: another uid, let in by the socket group.
	fpgad_start_shared "$RING_CHANNEL"
	member "$RING_PEER" "$FPGAD_URL" c2h0 2 > "$CASE_DIR/ring.out" 2>&1 ||
		{ cat "$CASE_DIR/ring.out"; fail "a refusal the rings promise did not happen"; }
	kill -0 "$FPGAD_PID" || fail "fpgad died"
	capture_ok
	fpgad_stop
}
hostile_case ring_scribbler any "a lessee that truncates, reseals and scribbles its rings harms only itself"

# A lessee killed with SIGKILL mid-stream: its exclusive lease ends with
# its connection and the next process gets the channel at once.
case_lessee_kill9() {
	local pid i
	fpgad_start "$RING_CHANNEL"
	"$FPGACTL" --url "$FPGAD_URL" capture c2h0 -n 100000000 > "$CASE_DIR/cap.out" 2>&1 &
	pid=$!
	echo "$pid" >> "$CASE_DIR/pids"
	for i in $(seq 100); do
		"$FPGACTL" --url "$FPGAD_URL" clients 2>/dev/null | awk -v p="$pid" '$1 == p { f = 1 } END { exit !f }' && break
		sleep 0.05
	done
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	capture_ok
	expect_not_in "$FPGAD_LOG" "Assertion"
	fpgad_stop
}
hostile_case lessee_kill9 any "a lessee killed mid-stream frees its channel for the next one"

# fpgad killed with SIGKILL under a waiting client: the client stops
# waiting within a second and says fpgad is gone; a new fpgad on the
# same runtime directory starts over the old one's leftovers and serves.
case_daemon_kill9() {
	local pid t0 st
	fpgad_start "$RING_CHANNEL"
	"$FPGACTL" --url "$FPGAD_URL" capture c2h0 -n 100000000 --timeout 60000 \
		> "$CASE_DIR/cap.out" 2>&1 &
	pid=$!
	echo "$pid" >> "$CASE_DIR/pids"
	sleep 0.5
	kill -0 "$pid" || { cat "$CASE_DIR/cap.out"; fail "the capture ended early"; }
	t0=$(now_ms)
	kill -KILL "$FPGAD_PID"
	wait "$pid"
	st=$?
	[ "$st" != 0 ] || fail "the capture claimed success with fpgad dead"
	[ $(( $(now_ms) - t0 )) -lt 2000 ] ||
		fail "the capture took $(( $(now_ms) - t0 )) ms to notice fpgad was gone"
	expect_in "$CASE_DIR/cap.out" "fpgad"
	fpgad_start "$RING_CHANNEL"
	capture_ok
	fpgad_stop
}
hostile_case daemon_kill9 any "a client waiting on a SIGKILLed fpgad is told within a second; a new fpgad serves"

# Every fault the sim injects, under a verifying consumer: no bad frame
# gets through unflagged, no frame comes twice or out of order, and a
# hung engine is seen and reset within 2 x dma_timeout_ms.
case_faults_verified() {
	local fault out ms worst=0
	for fault in timeout=53 error=41 corrupt=29 hang=97; do
		FPGAD_SIM_FAULTS=$fault fpgad_start "[device]
dma_timeout_ms = 150
$RING_CHANNEL
policy = block"
		out=$("$FPGACTL" --url "$FPGAD_URL" capture c2h0 -n 600 --verify --timeout 5000 2>&1) ||
			{ say "$out"; fail "$fault: the capture failed"; }
		expect_out "$out" "frames     600 "
		expect_out "$out" ", errors 0, "
		case $fault in
		corrupt*)
			case $out in *"flagged by fpgad 0"*) say "$out"; fail "$fault: no frame flagged" ;; esac ;;
		hang*)
			expect_in "$FPGAD_LOG" "none back for"
			for ms in $(sed -n 's/.*none back for \([0-9]*\) ms.*/\1/p' "$FPGAD_LOG"); do
				[ "$ms" -gt "$worst" ] && worst=$ms
			done
			[ "$worst" -lt 300 ] || fail "a hang was seen after $worst ms, not within 2 x 150 ms" ;;
		esac
		say "$fault: $(printf '%s\n' "$out" | grep '^verified')"
		fpgad_stop
	done
}
hostile_case faults_verified any "every sim fault under a verifying consumer: 0 unflagged bad, 0 reordered, hangs caught < 2 x timeout"

# Names in /dev/shm squatted by another user before fpgad starts: fpgad
# names nothing there (its rings are memfds), so leases work regardless
# and fpgad leaves /dev/shm as it found it.
case_squat_shm() {
	local before after
	[ "$HOSTILE_ROOT" = 1 ] || skip "needs root to squat as another user"
	for n in c2h0desc.0 c2h0data.0 c2h0 h2c0; do
		for p in $(seq 1 64) $$; do
			as "$H1" touch "/dev/shm/fpgad.$p.$n" 2>/dev/null
		done
	done
	as "$H1" touch /dev/shm/fpgad.c2h0 /dev/shm/fpgad-c2h0
	before=$(ls /dev/shm | sort)
	fpgad_start "$RING_CHANNEL"
	capture_ok
	after=$(ls /dev/shm | sort)
	rm -f /dev/shm/fpgad.*.c2h0* /dev/shm/fpgad.*.h2c0 /dev/shm/fpgad.c2h0 /dev/shm/fpgad-c2h0
	[ "$before" = "$after" ] || fail "fpgad changed /dev/shm: $(diff <(echo "$before") <(echo "$after"))"
	fpgad_stop
}
hostile_case squat_shm root "squatted /dev/shm names change nothing: rings are memfds"
