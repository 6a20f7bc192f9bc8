# A configuration fpgad must refuse, at start and on SIGHUP, by file:line.

# config_refused TEXT WANT: fpgad with TEXT as its config exits 1 saying WANT.
config_refused() {
	local st
	printf '%s\n' "$1" > "$CASE_DIR/bad.conf"
	fpgad_refused -c "$CASE_DIR/bad.conf" --runtime-dir "$CASE_DIR/rt"
	st=$?
	[ "$st" = 1 ] || { cat "$CASE_DIR/refused.log"; fail "exit status $st, not 1"; }
	expect_in "$CASE_DIR/refused.log" "$2"
}

case_config_directory() {
	local st
	mkdir "$CASE_DIR/conf.d"
	fpgad_refused -c "$CASE_DIR/conf.d" --runtime-dir "$CASE_DIR/rt"
	st=$?
	[ "$st" = 1 ] || { cat "$CASE_DIR/refused.log"; fail "exit status $st, not 1"; }
	expect_in "$CASE_DIR/refused.log" "$CASE_DIR/conf.d: is a directory, not a configuration file"
}
hostile_case config_directory any "a directory as the config file stops the start"

# On SIGHUP a directory in the file's place is refused, and the running
# configuration (log_level = debug here) stays.
case_config_directory_on_reload() {
	local n
	fpgad_start '[daemon]
log_level = debug'
	rm "$FPGAD_CONF"
	mkdir "$FPGAD_CONF"
	kill -HUP "$FPGAD_PID"
	wait_for "$FPGAD_LOG" "reload: $FPGAD_CONF: is a directory, not a configuration file; keeping the running configuration"
	expect_not_in "$FPGAD_LOG" "applied"
	# Still at debug: a connection is logged at debug level when it closes.
	n=$(grep -c '<7>control: connection' "$FPGAD_LOG")
	peer req "$FPGAD_URL" status:1 > /dev/null
	wait_count "$FPGAD_LOG" '<7>control: connection' $((n + 1))
	fpgad_stop
}
hostile_case config_directory_on_reload any "a directory on SIGHUP keeps the running config"

case_config_duplicate_channel() {
	config_refused '[channel c2h0]
slots = 4
[channel c2h1]
engine = 1
[channel c2h0]
slots = 16' "bad.conf:5: [channel c2h0] is declared twice: first at line 1, again here"
}
hostile_case config_duplicate_channel any "a channel declared twice names both lines"

case_config_duplicate_key() {
	config_refused '[daemon]
log_level = info
runtime_dir = /run/fpgad
log_level = debug' "bad.conf:4: [daemon] log_level is set twice: first at line 2, again here"
}
hostile_case config_duplicate_key any "a key set twice names both lines"

# Checks made after parsing name the line of their key.
case_config_lines() {
	config_refused '[channel c2h0]
engine = 40' "bad.conf:2: [channel c2h0] engine 40: the card (sim) has 16 c2h engines (0-15)"
	config_refused '[channel a]
slots = 4
slot_size = 64K
frame_size = 1M' "bad.conf:4: [channel a] frame_size 1048576 must be from 64 bytes to slot_size (65536)"
	config_refused '[control]
group =
remote = tls+tcp://127.0.0.1:7710' "bad.conf:3: [control] remote moved to fpgad-exporter --remote URL"
}
hostile_case config_lines any "every check after parsing names its key's file:line"
