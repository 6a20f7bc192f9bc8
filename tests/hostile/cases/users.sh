# What other users can do: reset a channel they do not lease, flood the
# remote listener.  They need root (to create the users and switch to
# them).

# state_of CHANNEL: its state, from the local socket.
state_of() {
	"$FPGACTL" --url "$FPGAD_URL" --json stats "$1" |
		sed -n 's/.*"state": *"\([a-z]*\)".*/\1/p'
}

# wait_lessees CHANNEL N: until the channel has N lessees (10 s at most).
wait_lessees() {
	local i
	for i in $(seq 200); do
		peer req "$FPGAD_URL" status:1 | grep -q "[=,]$1:$2:" && return 0
		sleep 0.05
	done
	fail "channel $1 does not have $2 lessees"
}

# wait_state CHANNEL STATE: until the channel is in STATE (10 s at most).
wait_state() {
	local i
	for i in $(seq 200); do
		[ "$(state_of "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	fail "channel $1 is $(state_of "$1"), not $2"
}

# A FAILED channel leased by one uid: another uid may not reset it; the
# lessee's uid and root may; anyone may once nobody leases it.
case_reset_other_uid() {
	local out h1
	h1=$(id -u "$H1")
	usermod -aG "$HOSTILE_GROUP" "$H1" || fail "cannot add $H1 to $HOSTILE_GROUP"
	FPGAD_SIM_FAULTS=error=1 fpgad_start "[control]
group = $HOSTILE_GROUP"
	background as "$H1" "$PEER" req "$FPGAD_URL" open:1:c2h0 hold
	wait_for "$CASE_DIR/bg.$BG.out" "hold"
	expect_in "$CASE_DIR/bg.$BG.out" "open:1:c2h0: OK"
	wait_state c2h0 failed

	out=$(as "$H2" "$PEER" req "$FPGAD_URL" reset:1:c2h0)
	expect_out "$out" "reset:1:c2h0: DENIED"
	expect_out "$out" "msg=channel c2h0 is leased by uid $h1 (pid "
	expect_out "$out" "only that uid or root may reset it"
	[ "$(state_of c2h0)" = failed ] || fail "the denied reset changed the channel"

	# The lessee's uid, from another process: allowed.
	out=$(as "$H1" "$PEER" req "$FPGAD_URL" reset:2:c2h0)
	expect_out "$out" "reset:2:c2h0: OK"
	wait_state c2h0 failed
	# Root: allowed.
	"$FPGACTL" --url "$FPGAD_URL" reset c2h0 > /dev/null || fail "root may not reset"
	wait_state c2h0 failed

	# Nobody leases it: anyone in the group may reset it.
	release_background "$BG"
	wait_lessees c2h0 0
	[ "$(state_of c2h0)" = failed ] || fail "c2h0 did not stay failed without lessees"
	out=$(as "$H2" "$PEER" req "$FPGAD_URL" reset:3:c2h0)
	case $out in *DENIED*) fail "refused with nobody leasing: $out" ;; esac
	expect_out "$out" "reset:3:c2h0: OK"
	fpgad_stop
}
hostile_case reset_other_uid root "a FAILED channel leased by another uid: only that uid or root resets"

# 64 tcp connections speaking nng from a user outside the socket's group:
# they fill the exporter's remote listener only, the rest are closed at
# once, and fpgad's local clients (root, a group member) are served.
case_tcp_flood() {
	local port out n
	fpgad_start "[control]
group = $HOSTILE_GROUP
max_clients = 8"
	exporter_start --remote tcp://127.0.0.1:0 --remote-max-per-address 0
	port=$(remote_port)
	background as_outsider "$H1" "$PEER" flood 127.0.0.1 "$port" 64 sp
	wait_for "$CASE_DIR/bg.$BG.out" "open=64"
	# Local clients, root and a group member, are served all along.
	sleep 0.2
	out=$(peer req "$FPGAD_URL" status:1)
	expect_out "$out" "status:1: OK"
	out=$(as "$H2" "$FPGACTL" --url "$FPGAD_URL" status) ||
		fail "a group member is not served: $out"
	# Over the remote limit (16 by default): closed at once, 48 of them.
	wait_count "$FPGAD_LOG" "refusing tcp 127.0.0.1:" 10
	expect_in "$FPGAD_LOG" "16 connections on the remote listener already (--remote-max-clients 16)"
	# Rate-limited: a burst of lines for 48 refusals.
	n=$(grep -c "refusing tcp 127.0.0.1:" "$FPGAD_LOG")
	[ "$n" -le 12 ] || fail "$n log lines for 48 refusals"
	release_background "$BG"
	n=$(sed -n 's/^closed=//p' "$CASE_DIR/bg.$BG.out")
	[ "${n:-0}" -ge 48 ] || fail "the exporter closed ${n:-0} of the 48 connections over the limit"
	# When they leave, remote peers are served again.
	out=$(as "$H1" "$FPGACTL" --url "tcp://127.0.0.1:$port" status) ||
		fail "remote status after the flood: $out"
	exporter_stop
	fpgad_stop
}
hostile_case tcp_flood root "a tcp flood from another uid never takes a local client's place"
