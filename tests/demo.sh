#!/bin/sh
# make demo: start fpgad on the simulated card in a temporary runtime
# directory, show its status, stream and verify frames, stop it cleanly.
set -eu
BUILD=${BUILD:-build}
FRAMES=${FRAMES:-10000}
dir=$(mktemp -d /tmp/fpgad-demo.XXXXXX)
url="ipc://$dir/fpgad.sock"
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

echo "== fpgad --runtime-dir $dir"
"$BUILD/fpgad" --runtime-dir "$dir" 2>"$dir/fpgad.log" &
pid=$!
for _ in $(seq 100); do
	[ -S "$dir/fpgad.sock" ] && break
	sleep 0.05
done
"$BUILD/fpgactl" --url "$url" status

if "$BUILD/fpgactl" --help | grep -q '^  capture'; then
	echo
	echo "== fpgactl capture c2h0 -n $FRAMES --verify"
	"$BUILD/fpgactl" --url "$url" capture c2h0 -n "$FRAMES" --verify
	echo "(drops are expected here: c2h0 is drop-oldest, so the card overwrites"
	echo " the oldest unread frames while the verifier, slower than the card, checks)"
	echo
	"$BUILD/fpgactl" --url "$url" status
fi

echo
echo "== stopping fpgad"
kill -TERM "$pid"
wait "$pid"
pid=
sed 's/^<[0-9]>/  /' "$dir/fpgad.log"
