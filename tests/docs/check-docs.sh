#!/bin/bash
# check-docs.sh - every configuration example of the documentation, run
# through `fpgad --check-config`, as a reader would paste it.
#
# The blocks: README.md's fenced ```ini blocks and any other fenced block
# holding a [daemon], [control], [device], [sim], [transfer], [metrics] or
# [channel NAME] header; the .EX/.EE and .nf/.fi blocks of man/*.5 and
# man/*.8 holding such a header (roff escapes undone); systemd/fpgad.conf
# whole.  Each is written to a file of its own and checked; one line per
# block, "ok" or "not ok", with the file:line where the block starts; exit
# 1 when any is not ok.
#
# An example of an error: the config block is followed, after blank lines
# at most, by a block whose first line is "$ fpgad --check-config FILE"
# (any path to fpgad, any FILE), the checker's output as the reader would
# see it.  Such a block must FAIL, and print each line shown: a
# "FILE:LINE: message" line is matched by LINE and the start of its
# message (FILE is the reader's name for it), "fpgad: FILE: N errors" by
# its count.
#
# What belongs to the host, not to the example:
# - IPv4 addresses of listen, sender and sender_control (other than
#   0.0.0.0 and 127.x) are not this machine's: listen's become 127.0.0.1,
#   the others 127.0.0.2, ports kept, and the line says so;
# - an error only about hardware this machine lacks (a GPU a channel
#   needs, the card's device node, an RDMA device) leaves the block ok,
#   the line saying what was not checked: the checker looks at the host
#   only once the whole file parses, so the rest of the block was checked.
#
#   tests/docs/check-docs.sh [FILE...]   BUILD=build by default; FILEs:
#                                        the documents to read (default:
#                                        all of the above)
set -u
BUILD=${BUILD:-build}
fpgad=$BUILD/fpgad
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 1
if [ ! -x "$fpgad" ]; then
	echo "check-docs: $fpgad not built (make all, or BUILD=DIR)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/fpgad-check-docs.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ $# -gt 0 ]; then
	docs=("$@")
else
	docs=(README.md man/*.5 man/*.8 systemd/fpgad.conf)
fi

# extract DOC: each block as $tmp/N.conf, and "N DOC LINE EXPECT" in
# $tmp/blocks, EXPECT being "-" or the file of the error output shown.
SECTION='^[[:space:]]*\[(daemon|control|device|sim|transfer|metrics|channel [^]]+)\][[:space:]]*$'
extract() {
	local doc=$1 kind
	case $doc in
	*.md) kind="md" ;;
	*.[0-9]) kind="man" ;;
	*) kind="whole" ;;
	esac
	awk -v kind="$kind" -v doc="$doc" -v dir="$tmp" -v section="$SECTION" '
	function unroff(s) {
		gsub(/\\-/, "-", s); gsub(/\\e/, "\\", s); gsub(/\\\(aq/, "\047", s)
		gsub(/\\\(dq/, "\"", s); gsub(/\\&/, "", s); gsub(/\\f[BIRP]/, "", s)
		gsub(/\\\(em/, "--", s); gsub(/\\ /, " ", s)
		return s
	}
	# A block ends: a config block is kept; an output block shown right
	# after one is its expected output.
	function close_block(   f, i, n) {
		if (nlines == 0) { pending = 0; return }
		if (lines[1] ~ /^\$ .*fpgad --check-config/ && pending) {
			f = dir "/" pending ".expect"
			for (i = 2; i <= nlines; i++) print lines[i] > f
			close(f)
			expect[pending] = f
			pending = 0
			return
		}
		pending = 0
		if (!(lang ~ /^ini/ || has_section)) return
		n = ++count
		f = dir "/" n ".conf"
		for (i = 1; i <= nlines; i++) print lines[i] > f
		close(f)
		start[n] = first
		expect[n] = "-"
		pending = n
	}
	function begin(line) { inb = 1; nlines = 0; has_section = 0; first = line + 1 }
	function add(s) {
		lines[++nlines] = s
		if (s ~ section) has_section = 1
	}
	BEGIN { count = 0; inb = 0; pending = 0 }
	kind == "whole" { lang = "ini"; if (NR == 1) begin(0); add($0); next }
	kind == "md" && /^[[:space:]]*```/ {
		if (!inb) { lang = $0; sub(/^[[:space:]]*```/, "", lang); begin(NR) }
		else { inb = 0; close_block() }
		next
	}
	kind == "man" && /^\.(nf|EX)([[:space:]]|$)/ { lang = ""; begin(NR); next }
	kind == "man" && /^\.(fi|EE)([[:space:]]|$)/ { if (inb) { inb = 0; close_block() } next }
	inb && kind == "man" { if ($0 ~ /^\./) next; add(unroff($0)); next }
	inb { add($0); next }
	# Between blocks: blank lines (and roff spacing) keep an output
	# block attached to the config block before it; anything else ends it.
	kind == "md" && /^[[:space:]]*$/ { next }
	kind == "man" && /^\.(PP|RS|RE|IP|P|sp)([[:space:]]|$)/ { next }
	kind == "man" && /^[[:space:]]*$/ { next }
	{ pending = 0 }
	END {
		if (kind == "whole") close_block()
		for (i = 1; i <= count; i++) print i, doc, start[i], expect[i]
	}' "$doc" > "$tmp/list" || return 1
	while read -r n d line exp; do
		mv "$tmp/$n.conf" "$tmp/b$((nblocks + n)).conf"
		[ "$exp" = - ] || { mv "$exp" "$tmp/b$((nblocks + n)).expect"; exp=$tmp/b$((nblocks + n)).expect; }
		echo "$((nblocks + n)) $d $line $exp" >> "$tmp/blocks"
	done < "$tmp/list"
	nblocks=$((nblocks + $(wc -l < "$tmp/list")))
}

nblocks=0
: > "$tmp/blocks"
for d in "${docs[@]}"; do
	extract "$d" || { echo "check-docs: cannot read $d" >&2; exit 1; }
done

# localize FILE: the example's foreign addresses become loopback ones;
# what was replaced, on stdout.
localize() {
	local f=$1
	awk '
	function swap(key, val,   addr, to) {
		if (!match(val, /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/)) return val
		addr = substr(val, 1, RLENGTH)
		if (addr == "0.0.0.0" || addr ~ /^127\./) return val
		to = key == "listen" ? "127.0.0.1" : "127.0.0.2"
		if (!(addr in seen)) { seen[addr] = to; said = said (said ? ", " : "") addr " -> " to }
		return to substr(val, RLENGTH + 1)
	}
	match($0, /^[[:space:]]*(listen|sender|sender_control)[[:space:]]*=[[:space:]]*/) {
		pre = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1)
		key = pre; gsub(/[[:space:]=]/, "", key)
		print pre swap(key, rest) > FILENAME ".new"
		next
	}
	{ print > FILENAME ".new" }
	END { if (said) print said }' "$f" && mv "$f.new" "$f"
}

# Errors about hardware this machine lacks: the block is not wrong.
HOST_ONLY='needs GPU |\[device\] path |is fpgad_dma\.ko loaded|RDMA device|RoCE v2 GID|built without RoCE'

pass=0
fail=0
while read -r n doc line exp; do
	conf=$tmp/b$n.conf
	where="$doc:$line"
	note=
	said=$(localize "$conf")
	[ -n "$said" ] && note=" (addresses not this host's: $said)"
	out=$("$fpgad" --check-config "$conf" 2>&1)
	rc=$?
	# The error lines, without the checker's verdict and warnings.
	errs=$(printf '%s\n' "$out" | grep -E "^$conf(:[0-9]+)?: " | grep -v ": warning: ")
	if [ "$exp" != - ]; then
		bad=
		[ $rc -ne 0 ] || bad="it passed the checker"
		while IFS= read -r want; do
			[ -n "$want" ] || continue
			if [[ $want =~ ^[^[:space:]:]+:([0-9]+):\ (.*)$ ]]; then
				l=${BASH_REMATCH[1]} msg=${BASH_REMATCH[2]}
				printf '%s\n' "$errs" | grep -qF -- "$conf:$l: $msg" ||
					bad="${bad:+$bad; }no error '$l: $msg'"
			elif [[ $want =~ ^fpgad:\ [^:]+:\ (.*)$ ]]; then
				printf '%s\n' "$out" | grep -qF -- ": ${BASH_REMATCH[1]}" ||
					bad="${bad:+$bad; }not '${BASH_REMATCH[1]}'"
			fi
		done < "$exp"
		if [ -z "$bad" ]; then
			echo "ok $where: fails as shown$note"
			pass=$((pass + 1))
		else
			echo "not ok $where: an example of an error: $bad$note"
			printf '%s\n' "$out" | sed "s|$conf|BLOCK|; s|^|  |"
			fail=$((fail + 1))
		fi
		continue
	fi
	if [ $rc -eq 0 ]; then
		echo "ok $where$note"
		pass=$((pass + 1))
	elif [ -n "$errs" ] && ! printf '%s\n' "$errs" | grep -Evq -- "$HOST_ONLY"; then
		echo "ok $where: the file checks; this host lacks what it needs:$note"
		printf '%s\n' "$errs" | sed "s|^${conf}[:0-9]*: |  # |"
		pass=$((pass + 1))
	else
		echo "not ok $where$note"
		# Each error at the document's line: the block starts at $line.
		printf '%s\n' "$out" | grep -v ": warning: " | awk -v f="$conf" -v doc="$doc" -v base="$line" '
			index($0, f ":") == 1 && match(substr($0, length(f) + 2), /^[0-9]+/) {
				l = substr($0, length(f) + 2, RLENGTH)
				print "  " doc ":" (base + l - 1) substr($0, length(f) + 2 + RLENGTH)
				next
			}
			{ i = index($0, f); if (i) $0 = substr($0, 1, i - 1) doc substr($0, i + length(f)); print "  " $0 }'
		fail=$((fail + 1))
	fi
done < "$tmp/blocks"
echo "check-docs: $pass ok, $fail not ok, of $((pass + fail)) configuration blocks"
[ $fail -eq 0 ] && [ $((pass + fail)) -gt 0 ]
