#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/system/man-check.sh - lint the manual pages with mandoc, check that
# each covers what the code offers (commands, options, configuration keys,
# functions), then build the EXAMPLES program of libfpgad(3) against the
# tree and run it against a real fpgad on the simulated card.
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
# fpgad's options, every key of the reference fpgad.conf, every function
# of fpgad.h.
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
# shellcheck disable=SC2046
covers man/fpgad.conf.5 "keys of systemd/fpgad.conf" \
	$(sed -n 's/^\([a-z_]*\) *=.*/\1/p' systemd/fpgad.conf | sort -u)
# shellcheck disable=SC2046
covers man/libfpgad.3 "functions of fpgad.h" \
	$(grep -o 'fpgad_[a-z_]*(' client/include/fpgad.h | tr -d '(' | sort -u)

work=$(mktemp -d /tmp/fpgad-man.XXXXXX)
fpid=
cleanup() {
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The example: the lines between ".nf" after "Take 100 frames" and ".fi",
# with the roff escapes \e and \- undone.
sed -n '/^Take 100 frames/,/^\.fi/p' man/libfpgad.3 | sed -n '/^\.nf/,/^\.fi/p' |
	sed -e '/^\.nf/d' -e '/^\.fi/d' -e 's/\\e/\\/g' -e 's/\\-/-/g' > "$work/example.c"
if ! grep -q 'fpgad_frame_wait' "$work/example.c"; then
	bad "libfpgad.3: no EXAMPLES program found"
elif ! PKG_CONFIG_PATH=$BUILD cc -std=c11 -Wall -Wextra -Werror -o "$work/example" \
		"$work/example.c" $(PKG_CONFIG_PATH=$BUILD pkg-config --static --cflags --libs fpgad-uninstalled) \
		>"$work/cc.log" 2>&1; then
	bad "libfpgad.3: the example does not build: $(cat "$work/cc.log")"
else
	"$BUILD/fpgad" --runtime-dir "$work/run" >"$work/fpgad.log" 2>&1 &
	fpid=$!
	for _ in $(seq 50); do [ -S "$work/run/fpgad.sock" ] && break; sleep 0.1; done
	if FPGAD_URL="ipc://$work/run/fpgad.sock" "$work/example" >"$work/out" 2>&1 &&
	   [ "$(grep -c '^frame [0-9]*: 1048576 bytes$' "$work/out")" = 100 ]; then
		ok "libfpgad.3: the example builds and takes 100 frames"
	else
		bad "libfpgad.3: the example: $(tail -n 3 "$work/out")"
	fi
fi

echo "man: $pass passed, $fail failed"
[ "$fail" = 0 ]
