#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/integration/cards.sh - two fpgad instances side by side, one per
# simulated card, as fpgad@a.service and fpgad@b.service run them: each
# found by its name (fpgactl --card, $FPGAD_CARD), both by fpgactl --all
# (status and topo), and no cross-talk: each serves its own channels, and
# frames taken from one leave the other's counters alone.
set -eu

BUILD=${BUILD:-build}
root=$(mktemp -d)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || :; done
	for p in $pids; do wait "$p" 2>/dev/null || :; done
	rm -rf "$root"
}
trap cleanup EXIT

fail() {
	echo "cards: FAIL: $*"
	for n in a b; do [ -f "$root/$n.log" ] && sed "s/^/  $n: /" "$root/$n.log"; done
	exit 1
}

export FPGAD_RUNTIME_ROOT="$root"
unset FPGAD_URL FPGAD_CARD || :
ctl() { "$BUILD/fpgactl" "$@"; }

# start NAME: fpgad for card NAME with one host channel cam_NAME.
start() {
	mkdir "$root/$1"
	printf '[sim]\nnuma_node = %s\n[channel cam_%s]\nmemory = host\nslots = 4\nslot_size = 4K\nframe_size = 4K\nframe_rate = 2000\n' \
		"$2" "$1" >"$root/$1.conf"
	"$BUILD/fpgad" -c "$root/$1.conf" --runtime-dir "$root/$1" >"$root/$1.log" 2>&1 &
	pids="$pids $!"
}
# Card a modelled on node 0 where the host has one, b on none.
node=none
[ -r /sys/devices/system/node/node0/cpulist ] && node=0
start a $node
start b none
for n in a b; do
	i=0
	until [ -S "$root/$n/fpgad.sock" ] && ctl --card "$n" version >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "fpgad for card $n did not start"
		sleep 0.05
	done
done

# NUMA: a's threads on node 0's CPUs; b not placed.
if [ $node = 0 ]; then
	grep -q "numa: node 0: threads on CPUs $(cat /sys/devices/system/node/node0/cpulist)" "$root/a.log" ||
		fail "card a: no placement on node 0 in its log"
fi
grep -q "numa:" "$root/b.log" && fail "card b (numa_node = none) was placed"

# Names: each card's own fpgad, by option and by environment.
ctl --card a channels | grep -q '^cam_a ' || fail "--card a does not show cam_a"
ctl --card a channels | grep -q '^cam_b ' && fail "--card a shows b's channel"
FPGAD_CARD=b ctl channels | grep -q '^cam_b ' || fail "FPGAD_CARD=b does not show cam_b"
FPGAD_CARD=b FPGAD_URL="ipc://$root/a/fpgad.sock" ctl channels | grep -q '^cam_a ' ||
	fail "FPGAD_URL does not win over FPGAD_CARD"

# Bad and unknown names: a clear error, exit 1.
out=$(ctl --card c status 2>&1) && fail "--card c (not running) succeeded"
echo "$out" | grep -q "card 'c': no fpgad runs for it.*cards under $root: a, b" ||
	fail "--card c: unclear error: $out"
out=$(ctl --card ../a status 2>&1) && fail "--card ../a succeeded"
echo "$out" | grep -q "not a card name" || fail "--card ../a: unclear error: $out"
out=$(ctl --card a --url "ipc://$root/a/fpgad.sock" status 2>&1) && fail "--card with --url succeeded"
echo "$out" | grep -q "give one" || fail "--card with --url: unclear error: $out"

# --all: one row per card, and topo for each.
out=$(ctl --all status) || fail "status --all failed: $out"
echo "$out" | grep -q '^CARD ' || fail "status --all: no CARD column: $out"
[ "$(echo "$out" | grep -c '^[ab] ')" = 2 ] || fail "status --all: not one row per card: $out"
n=$(ctl --all --json status | python3 -c 'import json,sys; print(" ".join(h["instance"] + ":" + h["channels"][0]["name"] for h in json.load(sys.stdin)))')
[ "$n" = "a:cam_a b:cam_b" ] || fail "status --all --json: $n"
# The instance's name is a field of its own: each status keeps its card.
n=$(ctl --all --json status | python3 -c 'import json,sys; print(" ".join(h["card"]["simulates"] and "card" or "none" for h in json.load(sys.stdin)))')
[ "$n" = "card card" ] || fail "status --all --json: a card's inventory was replaced: $n"
n=$(ctl --all --json topo | python3 -c 'import json,sys; print(" ".join(t["instance"] for t in json.load(sys.stdin)))')
[ "$n" = "a b" ] || fail "topo --all --json: cards $n"
[ "$(ctl --all topo | grep -c '^card [ab] (ipc://')" = 2 ] || fail "topo --all: not one heading per card"

# No cross-talk: frames taken from a's channel, none from b's.
ctl --card b stats cam_a >/dev/null 2>&1 && fail "card b serves a's channel"
frames() { ctl --card "$1" --json stats "cam_$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["frames"])'; }
before=$(frames b) || fail "stats cam_b: no frames"
ctl --card a -n 200 --verify capture cam_a >"$root/cap.txt" 2>&1 || fail "capture on card a: $(cat "$root/cap.txt")"
[ "$(frames a)" -ge 200 ] || fail "card a's channel did not count the frames taken"
[ "$(frames b)" = "$before" ] || fail "capture on card a moved card b's channel"

# A card whose fpgad stopped leaves --all.
kill $(echo $pids | cut -d' ' -f1)
i=0
while [ -S "$root/a/fpgad.sock" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "a's socket stays after fpgad exits"; sleep 0.05
done
[ "$(ctl --all --json status | python3 -c 'import json,sys; print(" ".join(h["instance"] for h in json.load(sys.stdin)))')" = b ] ||
	fail "status --all lists a stopped card"
out=$(FPGAD_RUNTIME_ROOT="$root/none" ctl --all status 2>&1) && fail "--all with no card succeeded"
echo "$out" | grep -q "no card's fpgad runs (no NAME/fpgad.sock under $root/none)" ||
	fail "--all with no card: unclear error: $out"
out=$(ctl --all capture cam_b 2>&1) && fail "--all capture succeeded"
echo "$out" | grep -q "capture takes one card" || fail "--all capture: unclear error: $out"
echo "cards: two instances by name, --all, no cross-talk: PASS"
