# SPDX-License-Identifier: MIT
#
# tests/net/lib.sh - what the network tiers' scripts share (run.sh,
# run-roce.sh and run-roce-pair.sh source it): verdicts, the sender's and
# consumer's one-line summaries, counters before and after a case, a
# consumer holding a lease, the RoCE scripts' start and end.
# The sourcing script sets tag (its output prefix), BUILD, channel, and
# dir (its scratch folder) and url, or has scratch() set those two.
pass=0
fail=0
# roce_require: the RoCE scripts' preconditions (run-roce.sh,
# run-roce-pair.sh): RDMA_DEV, ADDR and ALT_ADDR name an RDMA device here
# with RoCE v2 GIDs for both addresses, jq and timeout are installed, and
# $BUILD's fpgad and hsb_sender have RoCE; else "roce: SKIP: why", exit 0.
roce_require() {
	if [ -z "$RDMA_DEV" ] || [ -z "$ADDR" ] || [ -z "$ALT_ADDR" ]; then
		echo "roce: SKIP: set RDMA_DEV, ADDR and ALT_ADDR (an RDMA device with RoCE v2 GIDs for both addresses; the rxe tier does in QEMU)"
		exit 0
	fi
	if [ ! -d "/sys/class/infiniband/$RDMA_DEV" ]; then
		echo "roce: SKIP: no RDMA device $RDMA_DEV here (this kernel: $(uname -r); rdma_rxe loaded? rdma link add $RDMA_DEV type rxe netdev IF)"
		exit 0
	fi
	for t in jq timeout; do
		command -v $t >/dev/null 2>&1 || { echo "roce: SKIP: $t is not installed"; exit 0; }
	done
	grep -qa ibv_create_qp "$BUILD/fpgad" "$BUILD/net/hsb_sender" ||
		{ echo "roce: SKIP: $BUILD was built without RoCE (ROCE=0)"; exit 0; }
}
# scratch NAME: $dir, a new scratch folder /tmp/NAME.XXXXXX, and $url,
# fpgad's socket in it; at exit fpgad ($pid, once set) is stopped and
# $dir removed.
scratch() {
	dir=$(mktemp -d "/tmp/$1.XXXXXX")
	url="ipc://$dir/fpgad.sock"
	pid=
	trap scratch_cleanup EXIT
	trap 'exit 1' INT TERM
}
scratch_cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
# finish LINES: the script's end: fpgad ($pid) stopped by SIGTERM and its
# exit status checked; on any failure the last LINES of its log; the
# totals, and the exit status (0: all passed).
finish() {
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	pid=
	check fpgad "exit status after SIGTERM" $rc 0
	[ "$fail" = 0 ] || sed "s/^/$tag: fpgad: /" "$dir/fpgad.log" | tail -n "$1"
	echo "$tag: $pass passed, $fail failed"
	[ "$fail" = 0 ]
}
ok() { pass=$((pass + 1)); echo "$tag: PASS: $*"; }
bad() { fail=$((fail + 1)); echo "$tag: FAIL: $*"; }
# check CASE WHAT GOT WANT
check() {
	if [ "$3" = "$4" ]; then ok "$1: $2 = $3"; else bad "$1: $2 = $3, want $4"; fi
}
# field FILE KEY: KEY=N from the one-line summary in FILE.
field() { sed -n "s/.*\b$2=\([0-9.]*\).*/\1/p" "$1" | tail -1; }
# deltas: after setting $after, the growth since $before of every number
# in it, worked out by one jq for the delta calls that follow (each process
# is slow in the rxe tier's TCG guest; two a key added up to minutes).
deltas() {
	_deltas=$(jq -rn --argjson a "$before" --argjson b "$after" '
		$b | paths(numbers) as $p |
		"." + ($p | map(tostring) | join(".")) + " " +
		((($b | getpath($p)) - (($a | getpath($p)) // 0)) | tostring)')
	_deltas_of=$before$after
}
# delta KEY: how much .net.KEY (or .KEY) grew between $before and $after.
delta() {
	if [ "${_deltas_of:-}" = "$before$after" ]; then
		while read -r k v; do
			[ "$k" = "$1" ] && { echo "$v"; return 0; }
		done <<-EOF
		$_deltas
		EOF
	fi
	a=$(echo "$before" | jq -r "$1")
	b=$(echo "$after" | jq -r "$1")
	echo $((b - a))
}
stats() { "$BUILD/fpgactl" --url "$url" --json stats "$channel"; }
# consume FILE [WAIT_MS]: start a verifying consumer ($cpid) and wait until
# it holds the lease; its output in FILE; WAIT_MS: how long it waits for a
# first frame; it stops after IDLE_MS without one.  $consumer_args: more
# of its options (--stamp).
consume() {
	timeout 60 "$BUILD/net/net_consumer" "$url" "$channel" --idle-ms "${IDLE_MS:-500}" \
		--max-wait-ms "${2:-20000}" ${consumer_args:-} >"$1" 2>&1 &
	cpid=$!
	for _ in $(seq 200); do
		grep -q '^leased' "$1" && return 0
		sleep 0.05
	done
	return 1
}
# stale_rkey_leases WAIT_MS: a lease that ends, then a second one (its
# consumer waits WAIT_MS for a first frame); $old is the first ring's
# R_Key, which the second ring must not have.
stale_rkey_leases() {
	consume "$dir/first.out" 300 || bad "stale-rkey: no lease"
	old=$(stats | jq -r '.net.rkey')
	wait $cpid
	consume "$dir/second.out" "$1" || bad "stale-rkey: no second lease"
	new=$(stats | jq -r '.net.rkey')
	[ "$old" != "$new" ] && ok "stale-rkey: a new lease has a new R_Key" ||
		bad "stale-rkey: R_Key $old kept across leases"
	before=$(stats)
}
# stale_rkey_refused: once a sender wrote with $old, nothing of it reached
# the second lessee ($after: the counters then).
stale_rkey_refused() {
	wait $cpid
	after=$(stats)
	deltas
	check stale-rkey "frames delivered" "$(delta .frames)" 0
	check stale-rkey "frames the consumer got" "$(field "$dir/second.out" frames)" 0
}
