#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/system/man-check.sh - lint the manual pages with mandoc, check that
# each covers what the code offers (commands, options, configuration keys,
# functions), then build the EXAMPLES programs of libfpgad(3) against the
# tree and run them against a real fpgad on the simulated card.
#
#   man-check.sh PAGE...
#
# Environment: BUILD (default build).  Exit status: 0 passed, 1 failed.
set -u
BUILD=${BUILD:-build}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "man: ok: $*"; }
bad() { fail=$((fail + 1)); echo "man: FAIL: $*"; }

command -v mandoc >/dev/null 2>&1 || { echo "man: FAIL: mandoc not installed (apt-get install mandoc)"; exit 1; }
for p in "$@"; do
	if out=$(mandoc -T lint -W warning "$p" 2>&1) && [ -z "$out" ]; then
		ok "$p: mandoc -T lint clean"
	else
		bad "$p: mandoc -T lint: $out"
	fi
done

# Each page covers what the code offers: fpgactl's commands and options,
# fpgad's options and Prometheus metrics, every section and key of the
# reference fpgad.conf, every function of fpgad.h.
text() { mandoc -T ascii "$1" 2>/dev/null | sed 's/.\x08//g'; }
# covers PAGE WHAT WORD...: the page's text holds every WORD.
covers() {
	page=$1 what=$2
	shift 2
	t=$(text "$page")
	missing=
	for w in "$@"; do
		echo "$t" | grep -q -F -w -e "$w" || missing="$missing $w"
	done
	if [ -z "$missing" ]; then
		ok "$page: covers the $# $what"
	else
		bad "$page: does not cover$missing ($what)"
	fi
}
help=$("$BUILD/fpgactl" --help)
# shellcheck disable=SC2046
covers man/fpgactl.1 "commands and options of fpgactl --help" \
	$(echo "$help" | sed -n '/^Commands:/,$p' | awk 'NR > 1 && NF { print $1 }') \
	$(echo "$help" | grep -o -e '--[a-z][a-z-]*' | sort -u)
# shellcheck disable=SC2046
covers man/fpgad.8 "options of fpgad --help" \
	$("$BUILD/fpgad" --help | grep -o -e '--[a-z][a-z-]*' | sort -u)
# A heading of its own for each section.
missing=
sections=$(sed -n 's/^\(\[[a-z]*\]\)$/\1/p' systemd/fpgad.conf)
for sec in $sections; do
	grep -q -x -F ".SH $sec" man/fpgad.conf.5 || missing="$missing $sec"
done
if [ -z "$missing" ]; then
	ok "man/fpgad.conf.5: a section for each of the $(echo "$sections" | wc -l) sections of systemd/fpgad.conf"
else
	bad "man/fpgad.conf.5: no section for$missing (sections of systemd/fpgad.conf)"
fi
# shellcheck disable=SC2046
covers man/fpgad.conf.5 "keys of systemd/fpgad.conf" \
	$(sed -n 's/^\([a-z_]*\) *=.*/\1/p' systemd/fpgad.conf | sort -u)
# shellcheck disable=SC2046
covers man/libfpgad.3 "functions of fpgad.h" \
	$(grep -o 'fpgad_[a-z_]*(' include/fpgad.h | tr -d '(' | sort -u)
# shellcheck disable=SC2046
# (the channel counters' families are named in common/channel_counters.h:
# fpgad_channel_NAME_total for each X(NAME, "help"))
covers man/fpgad.8 "metrics of daemon/metrics.c" \
	$( (grep -o '"fpgad_[a-z_]*' daemon/metrics.c | tr -d '"' | grep -v '_$';
	   sed -n 's/.*X(\([a-z_]*\), "[A-Z].*/fpgad_channel_\1_total/p' \
		common/channel_counters.h) | sort -u)

# Every "within N ms" the documents promise for noticing fpgad's death is
# fpgad.h's FPGAD_GONE_NOTICE_MS, the bound frames.c is built to meet.
gone=$(sed -n 's/^#define FPGAD_GONE_NOTICE_MS \([0-9]*\)$/\1/p' include/fpgad.h)
other=$(cat README.md SECURITY.md man/libfpgad.3 include/fpgad.h | tr '\n' ' ' |
	grep -o 'within [0-9]* ms' | grep -v "within $gone ms" | sort -u | tr '\n' ' ')
if [ -n "$gone" ] && [ -z "$other" ]; then
	ok "README.md, SECURITY.md, libfpgad(3), fpgad.h: fpgad's death noticed within FPGAD_GONE_NOTICE_MS ($gone ms)"
else
	bad "the death-notice bound: FPGAD_GONE_NOTICE_MS is '$gone', the documents also say: $other"
fi

work=$(mktemp -d /tmp/fpgad-man.XXXXXX)
fpid=
cleanup() {
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$BUILD/fpgad" --runtime-dir "$work/run" >"$work/fpgad.log" 2>&1 &
fpid=$!
for _ in $(seq 50); do [ -S "$work/run/fpgad.sock" ] && break; sleep 0.1; done

# example NAME INTRO LINE COUNT: the program of libfpgad(3)'s EXAMPLES
# after the line starting with INTRO (between ".nf" and ".fi", the roff
# escapes \e and \- undone) builds against the tree and, run against
# fpgad, prints COUNT lines matching LINE.
example() {
	name=$1 intro=$2 line=$3 count=$4
	sed -n "/^$intro/,/^\\.fi/p" man/libfpgad.3 | sed -n '/^\.nf/,/^\.fi/p' |
		sed -e '/^\.nf/d' -e '/^\.fi/d' -e 's/\\e/\\/g' -e 's/\\-/-/g' > "$work/$name.c"
	# shellcheck disable=SC2046
	if ! grep -q 'int main' "$work/$name.c"; then
		bad "libfpgad.3: no EXAMPLES program after '$intro'"
	elif ! PKG_CONFIG_PATH=$BUILD cc -std=c11 -Wall -Wextra -Werror -o "$work/$name" \
			"$work/$name.c" $(PKG_CONFIG_PATH=$BUILD pkg-config --static --cflags --libs fpgad-uninstalled) \
			>"$work/$name.log" 2>&1; then
		bad "libfpgad.3: the $name example does not build: $(cat "$work/$name.log")"
	elif FPGAD_URL="ipc://$work/run/fpgad.sock" "$work/$name" >"$work/$name.out" 2>&1 &&
	     [ "$(grep -c "$line" "$work/$name.out")" = "$count" ]; then
		ok "libfpgad.3: the $name example builds and prints $count x '$line'"
	else
		bad "libfpgad.3: the $name example: $(tail -n 3 "$work/$name.out")"
	fi
}
example frames "Take 100 frames" '^frame [0-9]*: 1048576 bytes$' 100
example transfer "Write 64 KiB" '^65536 bytes at card address 0x100000: 0 differ$' 1

echo "man: $pass passed, $fail failed"
[ "$fail" = 0 ]
