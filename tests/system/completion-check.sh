#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/system/completion-check.sh - fpgactl's bash completion, as bash
# calls it, against a real fpgad with c2h and h2c channels: commands, the
# options of each command, channel names by direction (any number for
# watch), and file names for read and write.
#
# Environment: BUILD (default build).  Exit status: 0 passed, 1 failed.
set -u
# Words sort in byte order: "--count" before "-n".
export LC_ALL=C
BUILD=${BUILD:-build}
case $BUILD in /*) build=$BUILD ;; *) build=$(pwd)/$BUILD ;; esac
pass=0
fail=0

work=$(mktemp -d /tmp/fpgad-completion.XXXXXX)
fpid=
cleanup() {
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

cat > "$work/fpgad.conf" <<'EOC'
[channel c2h0]
memory = host
[channel c2h1]
engine = 1
memory = host
[channel h2c0]
direction = h2c
memory = host
EOC
"$build/fpgad" -c "$work/fpgad.conf" --runtime-dir "$work/run" >"$work/fpgad.log" 2>&1 &
fpid=$!
for _ in $(seq 50); do [ -S "$work/run/fpgad.sock" ] && break; sleep 0.1; done
url=ipc://$work/run/fpgad.sock
mkdir -p "$work/data" && touch "$work/data/a.bin" "$work/data/b.bin"
PATH=$build:$PATH
unset FPGAD_URL
# shellcheck source=../../client/fpgactl/fpgactl.bash
. client/fpgactl/fpgactl.bash

# expect "LINE" "WORDS...": completing LINE (the cursor at its end) offers
# exactly WORDS.
expect() {
	local line=$1 want=$2 got
	# What bash hands over: the line, the cursor, and the words split at
	# its COMP_WORDBREAKS (the function reads the line itself).
	COMP_LINE=$line
	COMP_POINT=${#line}
	read -r -a COMP_WORDS <<< "${line//[:=]/ : }"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_fpgactl
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
	got=${got% }
	if [[ $got == "$want" ]]; then
		pass=$((pass + 1)); echo "completion: ok: '$line' -> $want"
	else
		fail=$((fail + 1)); echo "completion: FAIL: '$line' -> '$got', expected '$want'"
	fi
}

# Every command and option that fpgactl --help lists (and --help), and no
# other, before a command is given.
help=$(fpgactl --help)
commands=$(echo "$help" | sed -n '/^Commands:/,$p' | awk 'NR > 1 && NF { print $1 }' | sort | tr '\n' ' ')
options=$( (echo "$help" | grep -o -e '--[a-z][a-z-]*'; echo --help) | sort -u | tr '\n' ' ')
expect "fpgactl " "${commands% }"
expect "fpgactl --" "${options% }"
expect "fpgactl " "bench capture channels clients help probe read reset send stats status topo validate version watch write"
expect "fpgactl st" "stats status"
expect "fpgactl --js" "--json"
expect "fpgactl -" "--all --card --count --help --interval --json --newest --poll-us --reconnect --shared --timeout --url --verify --version -n"
expect "fpgactl t" "topo"
expect "fpgactl c" "capture channels clients"
expect "fpgactl w" "watch write"
# help: the commands (help itself aside), one.
expect "fpgactl help " "bench capture channels clients probe read reset send stats status topo validate version watch write"
expect "fpgactl help st" "stats status"
expect "fpgactl help stats " ""
# Each command's options as 'fpgactl COMMAND --help' lists them (and no
# other), completed with no --url given.
for c in ${commands% }; do
	[[ $c == help ]] && continue
	copts=$( (fpgactl "$c" --help | grep -o -e '--[a-z][a-z-]*') | sort -u | tr '\n' ' ')
	expect "fpgactl $c --" "${copts% }"
done
# The options of each command; --url again for status only, which asks
# several hosts.
expect "fpgactl --url $url status --" "--help --json --timeout --url"
expect "fpgactl --url $url --url ipc:///nonexistent/fpgad.sock status --t" "--timeout"
expect "fpgactl --url $url status --url ipc:///nonexistent/fpgad.sock --u" "--url"
expect "fpgactl --url $url stats --" "--help --json"
expect "fpgactl stats --" "--card --help --json --url"
expect "fpgactl --url $url watch -" "--count --help --interval --json --timeout -n"
expect "fpgactl --url $url watch --interval " ""
expect "fpgactl --url $url watch --interval 250 c2h" "c2h0 c2h1"
expect "fpgactl --url $url capture c2h0 --" "--count --help --json --newest --poll-us --reconnect --shared --timeout --verify"
expect "fpgactl --url $url send h2c0 -" "--count --help --json --timeout -n"
expect "fpgactl --url $url read --" "--help --json --timeout"
expect "fpgactl write --" "--card --help --json --timeout --url"
expect "fpgactl channels --" "--all --card --help --json --url"
# Cards: those whose fpgad has ROOT/NAME/fpgad.sock, then their channels.
FPGAD_RUNTIME_ROOT=$work expect "fpgactl --card " "run"
FPGAD_RUNTIME_ROOT=$work expect "fpgactl --card run capture " "c2h0 c2h1"
# Channel names.
expect "fpgactl --url $url capture " "c2h0 c2h1"
expect "fpgactl --url $url probe " "c2h0 c2h1"
expect "fpgactl --url $url send " "h2c0"
expect "fpgactl --url $url stats " "c2h0 c2h1 h2c0"
expect "fpgactl --json --url=$url reset c2h" "c2h0 c2h1"
expect "fpgactl --url $url capture c2h0 " ""
expect "fpgactl --url $url capture -n " ""
expect "fpgactl --url $url -n 5 capture c2h1 --verify --tim" "--timeout"
FPGAD_URL=$url expect "fpgactl capture " "c2h0 c2h1"
expect "fpgactl --url ipc:///nonexistent/fpgad.sock capture " ""
expect "fpgactl --url ipc:///run/fp" ""
# watch: any number of channels, each once, among -n COUNT and --json.
expect "fpgactl --url $url watch " "c2h0 c2h1 h2c0"
expect "fpgactl --url $url watch c2h0 " "c2h1 h2c0"
expect "fpgactl --url $url watch c2h0 h2c0 c" "c2h1"
expect "fpgactl --url $url watch c2h0 c2h1 h2c0 " ""
expect "fpgactl --url $url watch -n " ""
expect "fpgactl --url $url watch -n 3 --json c2h1 " "c2h0 h2c0"
expect "fpgactl --url $url watch --count 3 c2h" "c2h0 c2h1"
FPGAD_URL=$url expect "fpgactl watch h" "h2c0"
# bench: any number of channels, c2h and h2c, each once.
expect "fpgactl --url $url bench " "c2h0 c2h1 h2c0"
expect "fpgactl --url $url bench c2h1 " "c2h0 h2c0"
expect "fpgactl --url $url bench -" "--count --help --json --timeout -n"
# validate: no argument; -n and --timeout.
expect "fpgactl --url $url validate -" "--count --help --json --timeout -n"
expect "fpgactl --url $url validate " ""
# read ADDR LEN FILE, write ADDR FILE: a file name for FILE only.
expect "fpgactl --url $url read " ""
expect "fpgactl --url $url read 0x1000 " ""
expect "fpgactl --url $url read 0x1000 4K $work/data/" "$work/data/a.bin $work/data/b.bin"
expect "fpgactl --url $url read 0x1000 4K $work/data/a" "$work/data/a.bin"
expect "fpgactl --url $url read 0x1000 4K $work/data/a.bin " ""
expect "fpgactl --url $url write " ""
expect "fpgactl --url $url write 0 $work/data/b" "$work/data/b.bin"
expect "fpgactl --url $url --timeout 100 write 1M $work/da" "$work/data"
expect "fpgactl --url $url write 0 $work/data/b.bin " ""

echo "completion: $pass passed, $fail failed"
[ "$fail" = 0 ]
