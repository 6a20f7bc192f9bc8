# lib.sh - what the hostile tier's cases share: the registry of cases, the
# users and group, fpgad start and stop, peers as other users, checks.
# Sourced by run.sh; a case is a function case_NAME that returns 0 (pass),
# 77 (skip, after saying why) or anything else (fail, after saying why).

HOSTILE_CASE_LIMIT=60		# seconds one case may take
# The users and group are this run's own (a random tag in their names), so
# that two runs of the tier on one machine neither share nor delete them.
HOSTILE_TAG=${HOSTILE_TAG:-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')}
export HOSTILE_TAG
H1=fpgad-h1-$HOSTILE_TAG	# another uid, not in the socket's group
H2=fpgad-h2-$HOSTILE_TAG	# a member of the socket's group
HOSTILE_USERS="$H1 $H2"
HOSTILE_GROUP=fpgad-hg-$HOSTILE_TAG	# the local socket's group
HOSTILE_NAMES=()
declare -A HOSTILE_NEEDS HOSTILE_WHAT

# hostile_case NAME root|any "what it checks"
hostile_case() {
	HOSTILE_NAMES+=("$1")
	HOSTILE_NEEDS[$1]=$2
	HOSTILE_WHAT[$1]=$3
}

say() { printf '%s\n' "$*"; }
fail() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }

now_ms() { date +%s%3N; }

# --- users ---------------------------------------------------------------------

hostile_users_remove() {
	for u in $HOSTILE_USERS; do
		id "$u" >/dev/null 2>&1 && userdel "$u" >/dev/null 2>&1
	done
	getent group "$HOSTILE_GROUP" >/dev/null && groupdel "$HOSTILE_GROUP" >/dev/null 2>&1
	return 0
}

hostile_users_create() {
	hostile_users_remove
	groupadd --system "$HOSTILE_GROUP" &&
	useradd --system --no-create-home --shell /usr/sbin/nologin \
		--user-group "$H1" &&
	useradd --system --no-create-home --shell /usr/sbin/nologin \
		--user-group --groups "$HOSTILE_GROUP" "$H2"
}

# as USER CMD...: run as USER with its own groups.
as() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --init-groups -- "$@"
}

# as_outsider USER CMD...: as USER with no supplementary group at all.
as_outsider() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --clear-groups -- "$@"
}

# --- fpgad ---------------------------------------------------------------------

# fpgad_start CONFIG [nofile]: fpgad on $CASE_DIR/rt with CONFIG, under
# RLIMIT_NOFILE nofile when given; waits until the local socket answers.
# Sets FPGAD_PID, FPGAD_URL, FPGAD_LOG, FPGAD_CONF, FPGAD_RT.
fpgad_start() {
	local conf=$1 nofile=${2:-}
	FPGAD_RT=$CASE_DIR/rt
	FPGAD_CONF=$CASE_DIR/fpgad.conf
	FPGAD_LOG=$CASE_DIR/fpgad.log
	FPGAD_URL=ipc://$FPGAD_RT/fpgad.sock
	mkdir -p "$FPGAD_RT" && chmod 0755 "$FPGAD_RT"
	printf '%s\n' "$conf" > "$FPGAD_CONF"
	if [ -n "$nofile" ]; then
		prlimit --nofile="$nofile:$nofile" "$FPGAD" -v -c "$FPGAD_CONF" \
			--runtime-dir "$FPGAD_RT" > "$FPGAD_LOG" 2>&1 &
	else
		"$FPGAD" -v -c "$FPGAD_CONF" --runtime-dir "$FPGAD_RT" > "$FPGAD_LOG" 2>&1 &
	fi
	FPGAD_PID=$!
	echo "$FPGAD_PID" >> "$CASE_DIR/pids"
	fpgad_wait_up
}

# exporter_start ARGS...: fpgad-exporter serving fpgad $FPGAD_URL with
# ARGS, logging into $FPGAD_LOG; waits until it serves.  Sets EXPORTER_PID.
exporter_start() {
	"$EXPORTER" -v -u "$FPGAD_URL" "$@" >> "$FPGAD_LOG" 2>&1 &
	EXPORTER_PID=$!
	echo "$EXPORTER_PID" >> "$CASE_DIR/pids"
	wait_for "$FPGAD_LOG" "serving fpgad at"
}

# exporter_stop: SIGTERM it; it must exit 0.
exporter_stop() {
	local st
	kill -TERM "$EXPORTER_PID" 2>/dev/null
	wait "$EXPORTER_PID"
	st=$?
	[ "$st" = 0 ] || fail "fpgad-exporter exited with $st at SIGTERM"
}

# fpgad_wait_up: until fpgad $FPGAD_PID answers on $FPGAD_URL.
fpgad_wait_up() {
	local i
	for i in $(seq 250); do
		"$FPGACTL" --url "$FPGAD_URL" status >/dev/null 2>&1 && return 0
		kill -0 "$FPGAD_PID" 2>/dev/null || break
		sleep 0.02
	done
	cat "$FPGAD_LOG"
	fail "fpgad did not start"
}

# fpgad_start_shared CONFIG: fpgad_start, and as root the socket group let
# in, so that its member $H2 (see member) is another uid than root.
fpgad_start_shared() {
	local conf=$1
	[ "$HOSTILE_ROOT" = 1 ] && conf="[control]
group = $HOSTILE_GROUP
$conf"
	fpgad_start "$conf"
}

# member CMD...: as the socket group's member $H2 when root, else as
# this user.
member() {
	if [ "$HOSTILE_ROOT" = 1 ]; then as "$H2" "$@"; else "$@"; fi
}

# fpgad_stop: SIGTERM, and its exit status must be 0.
fpgad_stop() {
	local st
	kill -TERM "$FPGAD_PID" 2>/dev/null
	wait "$FPGAD_PID"
	st=$?
	[ "$st" = 0 ] || fail "fpgad exited with $st at SIGTERM"
}

# fpgad_run ARGS...: an fpgad that must not start: its exit status, its
# stderr in $CASE_DIR/refused.log.
fpgad_refused() {
	timeout 10 "$FPGAD" "$@" > "$CASE_DIR/refused.log" 2>&1
}

# --- peers and checks ----------------------------------------------------------

peer() { "$PEER" "$@"; }

# background PEER ARGS...: a peer holding until release_background; its
# output in $CASE_DIR/bg.N.out; sets BG (the N).
BG_N=0
background() {
	BG_N=$((BG_N + 1))
	BG=$BG_N
	mkfifo "$CASE_DIR/bg.$BG.in"
	"$@" < "$CASE_DIR/bg.$BG.in" > "$CASE_DIR/bg.$BG.out" 2>&1 &
	echo $! > "$CASE_DIR/bg.$BG.pid"
	echo $! >> "$CASE_DIR/pids"
	# Hold the fifo open for writing, or the peer sees its stdin end.
	eval "exec {fd_$BG}>\"$CASE_DIR/bg.$BG.in\""
}

# release_background N: end its stdin and wait for it.
release_background() {
	eval "exec {fd_$1}>&-"
	wait "$(cat "$CASE_DIR/bg.$1.pid")" 2>/dev/null
}

# wait_for FILE TEXT [seconds]: until FILE contains TEXT.
wait_for() {
	local i n=$((${3:-5} * 20))
	for i in $(seq "$n"); do
		grep -qF -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	say "--- $1:"
	cat "$1" 2>/dev/null
	fail "no '$2' in $1 within ${3:-5} s"
}

# wait_count FILE TEXT N [seconds]: until TEXT is on N lines of FILE.
wait_count() {
	local i n=$((${4:-5} * 20))
	for i in $(seq "$n"); do
		[ "$(grep -cF -- "$2" "$1")" -ge "$3" ] && return 0
		sleep 0.05
	done
	fail "'$2' on fewer than $3 lines of $1 within ${4:-5} s"
}

expect_in() {
	grep -qF -- "$2" "$1" || { say "--- $1:"; cat "$1"; fail "no '$2' in $1"; }
}

expect_not_in() {
	! grep -qF -- "$2" "$1" || { say "--- $1:"; cat "$1"; fail "'$2' in $1"; }
}

# expect_line OUTPUT TEXT: OUTPUT (a string) has TEXT.
expect_out() {
	case $1 in *"$2"*) return 0 ;; esac
	say "--- output:"
	say "$1"
	fail "no '$2' in the output"
}

# remote_port: the port of the exporter's remote listener, which the case
# asks for as --remote tcp://127.0.0.1:0 (the exporter logs the port
# bound), so that no case picks a port another run could hold.
remote_port() {
	wait_for "$FPGAD_LOG" "remote status on" >&2
	sed -n 's/.*remote status on tcp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$FPGAD_LOG" | tail -n 1
}

# cpu_ticks PID: utime + stime, in clock ticks.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# --- the runner ----------------------------------------------------------------

hostile_run_one() {
	local name=$1
	CASE_DIR=$(mktemp -d "/tmp/fpgad-hostile-$name.XXXXXX") || exit 1
	chmod 0755 "$CASE_DIR"
	export CASE_DIR
	trap 'hostile_case_cleanup' EXIT
	trap 'exit 143' INT TERM
	"case_$name"
}

hostile_case_cleanup() {
	local p
	exec 2>/dev/null
	if [ -f "$CASE_DIR/pids" ]; then
		while read -r p; do
			kill -KILL "$p" 2>/dev/null
		done < "$CASE_DIR/pids"
	fi
	[ -n "${KEEP_LOGS:-}" ] || rm -rf "$CASE_DIR"
}

hostile_main() {
	local start=$(now_ms) t0 dt rc name out pass=0 failed=0 skipped=0 list=("$@")
	HOSTILE_CHILD=

	[ ${#list[@]} -gt 0 ] || list=("${HOSTILE_NAMES[@]}")
	if [ ! -x "$BUILD/fpgad" ] || [ ! -x "$BUILD/hostile/hostile_peer" ] ||
	   [ ! -x "$BUILD/hostile/ring_peer" ] || [ ! -x "$BUILD/hostile/object_peer" ]; then
		say "hostile: build $BUILD/fpgad and the peers in $BUILD/hostile first (make hostile)"
		return 1
	fi
	# Binaries every test user can run.
	HOSTILE_BIN=$(mktemp -d /tmp/fpgad-hostile-bin.XXXXXX) || return 1
	chmod 0755 "$HOSTILE_BIN"
	cp "$BUILD/fpgad" "$BUILD/fpgad-exporter" "$BUILD/fpgactl" "$BUILD/hostile/hostile_peer" \
		"$BUILD/hostile/ring_peer" "$BUILD/hostile/object_peer" "$HOSTILE_BIN/"
	export FPGAD=$HOSTILE_BIN/fpgad FPGACTL=$HOSTILE_BIN/fpgactl PEER=$HOSTILE_BIN/hostile_peer
	export EXPORTER=$HOSTILE_BIN/fpgad-exporter
	export RING_PEER=$HOSTILE_BIN/ring_peer OBJECT_PEER=$HOSTILE_BIN/object_peer
	export HOSTILE_ROOT=0
	if [ "$(id -u)" = 0 ]; then
		if hostile_users_create; then
			HOSTILE_ROOT=1
		else
			say "hostile: cannot create the test users; cases that need them skip"
		fi
	fi
	trap 'hostile_users_cleanup' EXIT
	# Interrupted: the running case stops (and cleans up) first.
	trap '[ -n "$HOSTILE_CHILD" ] && kill -TERM "$HOSTILE_CHILD" 2>/dev/null && wait "$HOSTILE_CHILD"; exit 130' INT TERM
	for name in "${list[@]}"; do
		if [ -z "${HOSTILE_NEEDS[$name]:-}" ]; then
			say "FAIL $name: no such case"
			failed=$((failed + 1))
			continue
		fi
		if [ "${HOSTILE_NEEDS[$name]}" = root ] && [ "$HOSTILE_ROOT" != 1 ]; then
			say "SKIP $name: needs root to create the test users and switch to them"
			skipped=$((skipped + 1))
			continue
		fi
		t0=$(now_ms)
		timeout --kill-after=5 "$HOSTILE_CASE_LIMIT" "$HOSTILE_HERE/run.sh" \
			--case "$name" > "$HOSTILE_BIN/case.out" 2>&1 &
		HOSTILE_CHILD=$!
		wait "$HOSTILE_CHILD"
		rc=$?
		HOSTILE_CHILD=
		out=$(cat "$HOSTILE_BIN/case.out")
		dt=$(( $(now_ms) - t0 ))
		case $rc in
		0)	say "PASS $name (${HOSTILE_WHAT[$name]}) $((dt / 1000)).$(( dt % 1000 / 100 )) s"
			pass=$((pass + 1)) ;;
		77)	say "SKIP $name: $(printf '%s\n' "$out" | sed -n 's/^SKIP: //p' | tail -1)"
			skipped=$((skipped + 1)) ;;
		*)	[ $rc = 124 ] && out="$out
FAIL: did not finish within $HOSTILE_CASE_LIMIT s"
			say "FAIL $name (${HOSTILE_WHAT[$name]}) $((dt / 1000)).$(( dt % 1000 / 100 )) s"
			printf '%s\n' "$out" | sed 's/^/    /'
			failed=$((failed + 1)) ;;
		esac
	done
	dt=$(( $(now_ms) - start ))
	say "hostile: $pass passed, $failed failed, $skipped skipped in $((dt / 1000)).$(( dt % 1000 / 100 )) s"
	[ "$failed" = 0 ]
}

hostile_users_cleanup() {
	[ "$HOSTILE_ROOT" = 1 ] && hostile_users_remove
	rm -rf "$HOSTILE_BIN"
}
