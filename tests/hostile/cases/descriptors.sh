# Descriptors: fpgad's limit raised at start, and idle tcp peers beyond
# the exporter's RLIMIT_NOFILE (from another user: that case needs root).

# 400 idle tcp connections (never a byte sent) from another user at the
# exporter, under RLIMIT_NOFILE 256: fpgad's local socket still answers,
# neither spins, and everything works again when they leave.
case_fd_exhaustion() {
	local port out t0 t1 hz fds
	hz=$(getconf CLK_TCK)
	fpgad_start "[control]
group = $HOSTILE_GROUP
max_clients = 8"
	prlimit --nofile=256:256 "$EXPORTER" -v -u "$FPGAD_URL" --remote tcp://127.0.0.1:0 \
		>> "$FPGAD_LOG" 2>&1 &
	EXPORTER_PID=$!
	echo "$EXPORTER_PID" >> "$CASE_DIR/pids"
	wait_for "$FPGAD_LOG" "serving fpgad at"
	port=$(remote_port)
	background as_outsider "$H1" "$PEER" flood 127.0.0.1 "$port" 400
	wait_for "$CASE_DIR/bg.$BG.out" "open=" 30
	# Before nng drops the idle peers (10 s without their header): the
	# local socket answers while they hold every tcp descriptor.  9 s,
	# not libfpgad's 5 s reply timeout: a loaded host (make check beside
	# other builds) can take seconds to start fpgactl, and the bound only
	# has to tell "answered under the flood" from "answered after it".
	out=$(timeout 9 "$FPGACTL" --url "$FPGAD_URL" status) ||
		fail "local status under the flood: $out"
	out=$(as "$H2" timeout 9 "$FPGACTL" --url "$FPGAD_URL" status) ||
		fail "a group member's status under the flood: $out"
	# Connections past the listen backlog complete as their SYNs are
	# retransmitted (1 s, 3 s, 7 s): on a loaded host the first refusal
	# can take that long.
	wait_for "$FPGAD_LOG" "refusing tcp 127.0.0.1:" 15
	fds=$(ls "/proc/$EXPORTER_PID/fd" | wc -l)
	[ "$fds" -lt 256 ] || fail "the exporter holds $fds descriptors of 256"
	t0=$(cpu_ticks "$EXPORTER_PID")
	sleep 1
	t1=$(cpu_ticks "$EXPORTER_PID")
	say "the exporter used $((t1 - t0)) of $hz clock ticks in 1 s under the flood ($fds descriptors)"
	[ $((t1 - t0)) -lt $((hz * 3 / 10)) ] || fail "the exporter spins: $((t1 - t0)) ticks of $hz in 1 s"
	release_background "$BG"
	say "flood: $(tr '\n' ' ' < "$CASE_DIR/bg.$BG.out")"
	out=$(as "$H1" timeout 10 "$FPGACTL" --url "tcp://127.0.0.1:$port" status) ||
		fail "remote status after the flood: $out"
	out=$(timeout 10 "$FPGACTL" --url "$FPGAD_URL" status) ||
		fail "local status after the flood: $out"
	exporter_stop
	fpgad_stop
}
hostile_case fd_exhaustion root "400 idle tcp peers under RLIMIT_NOFILE 256: local socket answers, no spin"

# fpgad's descriptors at start: the soft limit raised to the hard one.
case_descriptor_budget() {
	FPGAD_RT=$CASE_DIR/rt
	mkdir -p "$FPGAD_RT"
	printf '[control]\nmax_clients = 8\n' \
		> "$CASE_DIR/fpgad.conf"
	prlimit --nofile=128:256 "$FPGAD" -c "$CASE_DIR/fpgad.conf" --runtime-dir "$FPGAD_RT" \
		> "$CASE_DIR/fpgad.log" 2>&1 &
	FPGAD_PID=$!
	echo "$FPGAD_PID" >> "$CASE_DIR/pids"
	FPGAD_LOG=$CASE_DIR/fpgad.log
	wait_for "$FPGAD_LOG" "listening on"
	expect_in "$FPGAD_LOG" "descriptors: RLIMIT_NOFILE raised from 128 to 256"
	grep -q "Max open files *256 *256" "/proc/$FPGAD_PID/limits" ||
		fail "fpgad's limits: $(grep 'open files' "/proc/$FPGAD_PID/limits")"
	fpgad_stop
}
hostile_case descriptor_budget any "RLIMIT_NOFILE raised to the hard limit"
