# One fpgad per runtime directory.

# A second fpgad on a live runtime directory is refused, names the first
# one's pid, and leaves the first one reachable.
case_second_instance() {
	local out st
	fpgad_start ''
	fpgad_refused -c "$FPGAD_CONF" --runtime-dir "$FPGAD_RT"
	st=$?
	[ "$st" = 1 ] || { cat "$CASE_DIR/refused.log"; fail "the second fpgad exited with $st, not 1"; }
	expect_in "$CASE_DIR/refused.log" "runtime directory $FPGAD_RT is in use by another fpgad (pid $FPGAD_PID holds $FPGAD_RT/fpgad.lock)"
	# The first one keeps its socket and answers on it.
	[ -S "$FPGAD_RT/fpgad.sock" ] || fail "the socket is gone"
	out=$(peer req "$FPGAD_URL" status:1)
	expect_out "$out" "status:1: OK"
	expect_out "$out" "pid=$FPGAD_PID "
	# A third try, with the default configuration, is refused the same way.
	fpgad_refused --runtime-dir "$FPGAD_RT"
	[ $? = 1 ] || fail "the third fpgad was not refused"
	out=$(peer req "$FPGAD_URL" status:2)
	expect_out "$out" "pid=$FPGAD_PID "
	fpgad_stop
	# A clean stop lets go of the directory: the lock file is gone.
	[ ! -e "$FPGAD_RT/fpgad.lock" ] || fail "the lock file outlived fpgad"
	fpgad_start ''
	fpgad_stop
}
hostile_case second_instance any "a second fpgad on a live runtime dir exits 1 naming the first"

# A start refused after the runtime directory was made leaves nothing.
case_refused_start_cleans_up() {
	local rt=$CASE_DIR/new/rt st
	mkdir -p "$CASE_DIR/new"
	printf '[channel c2h0]\nengine = 40\n' > "$CASE_DIR/engine.conf"
	fpgad_refused -c "$CASE_DIR/engine.conf" --runtime-dir "$rt"
	st=$?
	[ "$st" = 1 ] || { cat "$CASE_DIR/refused.log"; fail "exit status $st, not 1"; }
	expect_in "$CASE_DIR/refused.log" "$CASE_DIR/engine.conf:2: [channel c2h0] engine 40: the card (sim) has 16 c2h engines (0-15)"
	[ ! -e "$rt" ] || { ls -la "$rt"; fail "the refused start left $rt behind"; }
	# The same for a device that cannot be opened.
	printf '[device]\nbackend = xdma\npath = /nonexistent/fpgad9\n' > "$CASE_DIR/xdma.conf"
	fpgad_refused -c "$CASE_DIR/xdma.conf" --runtime-dir "$rt"
	[ $? = 1 ] || fail "a missing card did not stop the start"
	[ ! -e "$rt" ] || { ls -la "$rt"; fail "the refused start left $rt behind"; }
	# A directory that was there stays, without a lock file or socket.
	mkdir "$rt"
	fpgad_refused -c "$CASE_DIR/engine.conf" --runtime-dir "$rt"
	[ -d "$rt" ] || fail "fpgad removed a directory it did not make"
	[ -z "$(ls -A "$rt")" ] || { ls -la "$rt"; fail "the refused start left files in $rt"; }
}
hostile_case refused_start_cleans_up any "a refused start leaves no runtime dir, lock file or socket"
