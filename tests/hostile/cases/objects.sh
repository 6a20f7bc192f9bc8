# Objects a client hands fpgad: memory fpgad touches with the CPU,
# descriptors fpgad ends up closing, and connections to the handoff
# socket.  None may kill fpgad, block its loop or shut out other users.

OBJ_CONF='[transfer]
queue_entries = 64
[channel c2h0]
memory = host
frame_size = 64K
slots = 8'

# fpgad alive, and its loop answering root's status within 3 s.
obj_alive() {
	local out
	kill -0 "$FPGAD_PID" 2>/dev/null || { tail -5 "$FPGAD_LOG"; fail "fpgad died: $1"; }
	out=$(timeout 3 "$FPGACTL" --url "$FPGAD_URL" status 2>&1) ||
		fail "status did not answer within 3 s after $1: $out"
}

# A hugetlb memfd, sealed against shrinking, registered as a transfer
# buffer, punched empty while every free huge page is taken, then read
# into: fpgad's copy would fault and fpgad die (SIGBUS).  fpgad refuses
# hugetlbfs memory at registration, saying why.  Without huge pages, two
# are made for the case and the setting restored.
case_hugetlb_buffer() {
	local knob=/proc/sys/vm/nr_hugepages old out
	old=$(cat "$knob")
	if [ "$old" -lt 2 ]; then
		echo 2 > "$knob" 2>/dev/null || skip "cannot set vm.nr_hugepages"
		# Expanded now: the locals are gone when the trap runs.
		trap "echo $old > $knob; hostile_case_cleanup" EXIT
	fi
	fpgad_start_shared "$OBJ_CONF"
	out=$(member "$OBJECT_PEER" memory "$FPGAD_URL" hugetlb 2>&1)
	say "$out"
	obj_alive "a hugetlb buffer punched and read into"
	expect_out "$out" "register: -22 "
	expect_out "$out" "hugetlbfs memory is refused"
	fpgad_stop
}
hostile_case hugetlb_buffer root "a hugetlb buffer is refused: fpgad never faults on it"

# A sparse memfd would make fpgad allocate (and be charged for) the
# client's pages: refused, saying so.  An allocated one punched empty
# after registration is still served (its pages come back as zeros).
case_sparse_buffer() {
	local out
	fpgad_start_shared "$OBJ_CONF"
	out=$(member "$OBJECT_PEER" memory "$FPGAD_URL" sparse 2>&1)
	say "$out"
	expect_out "$out" "register: -22 "
	expect_out "$out" "the memfd is sparse (0 of 2097152 bytes allocated)"
	out=$(member "$OBJECT_PEER" memory "$FPGAD_URL" punch 2>&1)
	say "$out"
	expect_out "$out" "read: 0 ok"
	obj_alive "a buffer punched after registration"
	fpgad_stop
}
hostile_case sparse_buffer any "a sparse buffer is refused; one punched later is served"

# obj_linger HOW [CHANNEL]: a TCP socket with unsent data and SO_LINGER
# {1, 30} handed to fpgad along HOW; fpgad closes the last reference and
# its loop must not sleep in that close.
obj_linger() {
	fpgad_start_shared "$OBJ_CONF"
	background member "$OBJECT_PEER" linger "$FPGAD_URL" "$FPGAD_RT/fpgad.handoff" "$@"
	wait_for "$CASE_DIR/bg.$BG.out" "sent: " 10
	expect_in "$CASE_DIR/bg.$BG.out" "sent: ok"
	# The close happens as fpgad ends the connection or the lease.
	sleep 0.5
	obj_alive "a lingering socket closed by fpgad ($1)"
	release_background "$BG"
	fpgad_stop
}

case_linger_handoff_fds() { obj_linger handoff-fds; }
hostile_case linger_handoff_fds any "a lingering socket sent with a bad handoff request does not block the loop"
case_linger_handoff_queued() { obj_linger handoff-queued; }
hostile_case linger_handoff_queued any "a lingering socket queued behind a bad handoff request does not block the loop"
case_linger_lease() { obj_linger lease c2h0; }
hostile_case linger_lease any "a lingering socket queued on a lease's link does not block the loop"
case_linger_xfer() { obj_linger xfer; }
hostile_case linger_xfer any "a lingering socket queued on a transfer queue's link does not block the loop"

# One member holds 80 idle connections on the handoff socket, reopening
# each as fpgad closes it; another user's leases still get their rings.
case_handoff_flood_uid() {
	local i out
	fpgad_start_shared "$OBJ_CONF"
	background as "$H2" "$OBJECT_PEER" flood "$FPGAD_RT/fpgad.handoff" 80
	wait_for "$CASE_DIR/bg.$BG.out" "open=" 10
	for i in $(seq 10); do
		out=$(timeout 10 "$FPGACTL" --url "$FPGAD_URL" capture c2h0 -n 2 --timeout 5000 2>&1) ||
			fail "root's lease $i under another uid's handoff flood: $out"
	done
	release_background "$BG"
	say "flood: $(tr '\n' ' ' < "$CASE_DIR/bg.$BG.out")"
	obj_alive "a handoff flood"
	fpgad_stop
}
hostile_case handoff_flood_uid root "one uid's idle handoff connections leave other uids' handoffs working"

# [transfer] card_regions: a queue's card addresses are its own region,
# scrubbed when the queue ends.  A member writes at card address 0 and
# leaves; the next queue (root's, given the same region) reads zeros
# there, and nothing past its region.  Two queues at once each have their
# own address 0.
case_card_regions() {
	local out
	fpgad_start_shared "[transfer]
card_regions = 4"
	expect_in "$FPGAD_LOG" "card memory in 4 regions of 536870912 bytes"
	head -c 65536 /dev/urandom > "$CASE_DIR/secret"
	chmod 0644 "$CASE_DIR/secret"
	out=$(member "$FPGACTL" --url "$FPGAD_URL" write 0 "$CASE_DIR/secret" 2>&1) ||
		fail "the member's write: $out"
	"$FPGACTL" --url "$FPGAD_URL" read 0 65536 "$CASE_DIR/read" > /dev/null 2>&1 ||
		fail "root's read of its region"
	cmp -s "$CASE_DIR/read" <(head -c 65536 /dev/zero) ||
		fail "root read something other than zeros where the member wrote"
	out=$("$FPGACTL" --url "$FPGAD_URL" read 536870912 4096 "$CASE_DIR/past" 2>&1) &&
		fail "a read past the region was served"
	expect_out "$out" "card"
	say "past the region: $out"
	# Two queues at once: each card address 0 is its own.
	out=$(member "$OBJECT_PEER" regions "$FPGAD_URL" 2>&1) ||
		fail "two queues at once: $out"
	expect_out "$out" "first queue at 0: its own"
	obj_alive "card regions"
	fpgad_stop
}
hostile_case card_regions any "card_regions: a queue sees only its region, scrubbed before the next queue gets it"
