# Requests a client can send at will: reused ids and id 0, NUL bytes in
# names, requests of exactly max_message bytes and one above.

TWO_CHANNELS='[channel c2h0]
[channel c2h1]
engine = 1'

# proto3's default id 0 means "no id": never answered from the cache.
case_id_zero() {
	local out
	fpgad_start "$TWO_CHANNELS"
	out=$(peer req "$FPGAD_URL" open:0:c2h0 close:0:c2h0 status:0)
	expect_out "$out" "open:0:c2h0: OK id=0 body=open_channel"
	expect_out "$out" "close:0:c2h0: OK id=0 body=close_channel"
	# The close was applied: nobody leases c2h0 any more.
	expect_out "$out" "channels=c2h0:0:"
	fpgad_stop
}
hostile_case id_zero any "CloseChannel with id 0 after OpenChannel with id 0 closes"

# The same id for two different requests: both are applied.
case_id_reuse() {
	local out
	fpgad_start "$TWO_CHANNELS"
	out=$(peer req "$FPGAD_URL" open:5:c2h0 open:5:c2h1 status:6)
	expect_out "$out" "open:5:c2h0: OK id=5 body=open_channel"
	expect_out "$out" "open:5:c2h1: OK id=5 body=open_channel"
	expect_out "$out" "name=c2h1"
	expect_out "$out" "channels=c2h0:1:streaming,c2h1:1:streaming"
	fpgad_stop
}
hostile_case id_reuse any "two OpenChannel with one id for two channels both apply"

# A real resend (same id, same bytes) is answered again, applied once.
case_resend() {
	local out first second
	fpgad_start "$TWO_CHANNELS"
	out=$(peer req "$FPGAD_URL" open:7:c2h0 open:7:c2h0 status:8)
	first=$(printf '%s\n' "$out" | sed -n '1s/.*reply=\([0-9a-f]*\).*/\1/p')
	second=$(printf '%s\n' "$out" | sed -n '2s/.*reply=\([0-9a-f]*\).*/\1/p')
	expect_out "$out" "open:7:c2h0: OK id=7 body=open_channel"
	[ -n "$first" ] && [ "$first" = "$second" ] ||
		fail "the resend got another reply: $out"
	# Applied once: one lease, and no "already leased" refusal.
	expect_out "$out" "channels=c2h0:1:streaming,c2h1:0:idle"
	[ "$(grep -c 'leased exclusively' "$FPGAD_LOG")" = 1 ] ||
		fail "the lease was granted $(grep -c 'leased exclusively' "$FPGAD_LOG") times"
	fpgad_stop
}
hostile_case resend any "a resend (same id, same bytes) is answered from the cache, applied once"

# "c2h0\0x" must not open c2h0: protobuf-c would cut the name at the NUL.
case_nul_names() {
	local out
	fpgad_start "$TWO_CHANNELS"
	out=$(peer req "$FPGAD_URL" 'open:1:c2h0\0x' 'stats:2:c2h0\0' 'reset:3:\0c2h0' \
		'close:4:c2h1\0' status:5)
	expect_out "$out" 'open:1:c2h0\0x: BAD_REQUEST id=1 body=none'
	expect_out "$out" "msg=OpenChannel: string field open_channel.name contains a NUL byte"
	expect_out "$out" "msg=ChannelStats: string field channel_stats.name contains a NUL byte"
	expect_out "$out" "msg=ResetChannel: string field reset_channel.name contains a NUL byte"
	expect_out "$out" "msg=CloseChannel: string field close_channel.name contains a NUL byte"
	expect_out "$out" "channels=c2h0:0:idle,c2h1:0:idle"
	# Logged with the peer named by pid and uid.
	expect_in "$FPGAD_LOG" "uid $(id -u): OpenChannel: string field open_channel.name contains a NUL byte"
	fpgad_stop
}
hostile_case nul_names any "a NUL byte in any name is refused by name, nothing opened"

# max_message is the request body: exactly max_message is served, one
# byte more is refused with LIMIT, far more makes nng drop the connection.
case_max_message() {
	local out
	fpgad_start '[control]
max_message = 4K'
	out=$(peer req "$FPGAD_URL" size:1:4096 size:2:4097 size:3:4124 status:4)
	expect_out "$out" "size:1:4096: OK id=1 body=hello"
	expect_out "$out" "size:2:4097: LIMIT id=2 body=none"
	expect_out "$out" "msg=request of 4097 bytes is above max_message (4096 bytes)"
	# The most nng lets through (its REQ header has its own room).
	expect_out "$out" "size:3:4124: LIMIT id=3"
	expect_out "$out" "status:4: OK"
	out=$(peer req "$FPGAD_URL" size:5:4125 status:6)
	expect_out "$out" "size:5:4125: dropped"
	out=$(peer req "$FPGAD_URL" size:7:65536)
	expect_out "$out" "size:7:65536: dropped"
	# fpgad goes on serving.
	out=$(peer req "$FPGAD_URL" size:8:4096)
	expect_out "$out" "size:8:4096: OK"
	expect_in "$FPGAD_LOG" "uid $(id -u): request of 4097 bytes is above max_message (4096 bytes)"
	fpgad_stop
}
hostile_case max_message any "a body of exactly max_message is served, max_message+1 refused"

# 20,000 bad requests make a handful of log lines, not 20,000, and the
# next line says how many were held back.
case_junk_logs() {
	local args=() i n t0 secs
	for i in $(seq 1000); do args+=("open:$i:bad/name"); done
	fpgad_start ''
	t0=$(now_ms)
	for i in $(seq 20); do
		peer req "$FPGAD_URL" "${args[@]}" > "$CASE_DIR/junk.out" || fail "peer failed"
	done
	# The bucket: a burst of 10, then one line a second.
	secs=$(( ($(now_ms) - t0) / 1000 + 1 ))
	expect_in "$CASE_DIR/junk.out" "open:1000:bad/name: BAD_REQUEST"
	n=$(grep -c 'invalid channel name' "$FPGAD_LOG")
	say "$n log lines for 20,000 bad requests in about $secs s"
	[ "$n" -ge 1 ] && [ "$n" -le $((10 + secs)) ] ||
		fail "$n log lines for 20,000 bad requests in $secs s"
	# A bucket refills in a second; the count comes with the next line.
	sleep 1.1
	peer req "$FPGAD_URL" open:1:bad/name > /dev/null
	expect_in "$FPGAD_LOG" "control: bad requests: "
	expect_in "$FPGAD_LOG" " similar messages suppressed"
	fpgad_stop
}
hostile_case junk_logs any "20,000 bad requests are logged rate-limited, with a count"

# A remote peer is refused by the exporter, logged by its address, never
# as "pid 0", and what it may not ask never reaches fpgad.
case_remote_named() {
	local port out
	fpgad_start "[control]
max_clients = 8"
	exporter_start --remote tcp://127.0.0.1:0
	port=$(remote_port)
	out=$(peer req "tcp://127.0.0.1:$port" open:1:c2h0 status:3)
	expect_out "$out" "open:1:c2h0: DENIED id=1"
	expect_out "$out" "msg=OpenChannel is not allowed on the remote (read-only) listener"
	expect_out "$out" "status:3: OK"
	expect_in "$FPGAD_LOG" "remote: tcp 127.0.0.1:"
	expect_in "$FPGAD_LOG" ": OpenChannel is not allowed on the remote (read-only) listener"
	expect_not_in "$FPGAD_LOG" "pid 0"
	exporter_stop
	fpgad_stop
}
hostile_case remote_named any "a remote peer is logged by address, never as pid 0"
