# The local listener against peers that leave while connecting.

# leave_while_stopped PID PYTHON ARG: the peers PYTHON makes (given ARG)
# connect and leave while PID is stopped, so that PID accepts every one
# of them after it left.
leave_while_stopped() {
	kill -STOP "$1"
	python3 -c "$2" "$3" || { kill -CONT "$1"; fail "the leaving peers could not connect"; }
	kill -CONT "$1"
}

# Peers that connect to fpgad's socket and close before fpgad has sent
# its SP header (fpgad stopped meanwhile, so every one of them is
# accepted after it left): nng 1.5 ends the listener for good on such a
# peer.  A capture leased before goes on over its connection; fpgad
# notices the stopped listener, listens anew on the same path, and a new
# client gets in within its connect timeout, with the same group and mode
# on the socket.
case_leave_while_connecting() {
	local out cons mode
	fpgad_start "$RING_CHANNEL"
	mode=$(stat -c %a:%g "$FPGAD_RT/fpgad.sock")
	"$FPGACTL" --url "$FPGAD_URL" capture c2h0 -n 3000 --verify --timeout 15000 \
		> "$CASE_DIR/cons.out" 2>&1 &
	cons=$!
	echo "$cons" >> "$CASE_DIR/pids"
	wait_for "$FPGAD_LOG" "channel c2h0: leased" 10
	leave_while_stopped "$FPGAD_PID" '
import socket, sys
for i in range(40):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.close()
' "$FPGAD_RT/fpgad.sock"
	out=$("$FPGACTL" --url "$FPGAD_URL" status 2>&1) ||
		{ say "$out"; tail -5 "$FPGAD_LOG"; fail "a new client was not let in after peers left while connecting"; }
	expect_out "$out" "pid $FPGAD_PID"
	expect_in "$FPGAD_LOG" "stopped accepting connections; listening anew"
	[ "$(stat -c %a:%g "$FPGAD_RT/fpgad.sock")" = "$mode" ] ||
		fail "the socket made anew is $(stat -c %a:%g "$FPGAD_RT/fpgad.sock"), was $mode"
	wait "$cons" || { cat "$CASE_DIR/cons.out"; fail "the capture leased before did not finish"; }
	expect_out "$(cat "$CASE_DIR/cons.out")" "verified   3000, errors 0"
	# Its connection gone, the replaced listener is closed: the path stays.
	sleep 0.5
	[ -S "$FPGAD_RT/fpgad.sock" ] || fail "the socket path went with the replaced listener"
	"$FPGACTL" --url "$FPGAD_URL" status >/dev/null 2>&1 || fail "no answer after the replaced listener closed"
	fpgad_stop
	[ ! -e "$FPGAD_RT/fpgad.sock" ] || fail "the socket outlived fpgad"
}
hostile_case leave_while_connecting any "peers that leave while connecting do not stop fpgad from taking new clients"

# The same against fpgad-exporter's remote listener, from the network's
# side: peers that half-close and then reset before the exporter sent its
# SP header (the exporter stopped meanwhile).  The exporter listens anew
# on the same port, and a remote status gets through within its timeout.
case_remote_leave_while_connecting() {
	local port out
	fpgad_start "$RING_CHANNEL"
	exporter_start --remote tcp://127.0.0.1:0
	port=$(remote_port)
	leave_while_stopped "$EXPORTER_PID" '
import socket, struct, sys
for i in range(60):
    s = socket.socket()
    s.connect(("127.0.0.1", int(sys.argv[1])))
    s.shutdown(socket.SHUT_WR)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
' "$port"
	out=$("$FPGACTL" --url "tcp://127.0.0.1:$port" status 2>&1) ||
		{ say "$out"; tail -5 "$FPGAD_LOG"; fail "no remote status after peers left while connecting"; }
	expect_out "$out" "pid $FPGAD_PID"
	expect_in "$FPGAD_LOG" "remote: the listener on tcp://127.0.0.1:$port stopped accepting connections; listening anew"
	exporter_stop
	fpgad_stop
}
hostile_case remote_leave_while_connecting any "peers that leave while connecting do not stop fpgad-exporter's remote listener"
