#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/kmod/bringup.sh - first light of fpgad_dma.ko on a real XDMA card:
# identify the card and its channels, loop data through every channel at
# card addresses, provoke an AXI decode error, force a timeout and recover,
# move 256 MiB of GPU memory as one dma-buf, and do it all with interrupt
# and with poll-mode completion.  One PASS/FAIL/SKIP line per check.
#
#   sudo tests/kmod/bringup.sh [options]
#     --ids 0x9038[,0x9034]  device ids to load fpgad_dma.ko with (when it
#                            is not loaded yet)
#     --dev /dev/fpgad0      the card's node (default /dev/fpgad0)
#     --card-addr ADDR       card (AXI) address of memory the test may
#                            overwrite (default 0)
#     --card-size BYTES      how much of it (default: the module's
#                            card_memory, else 1 MiB)
#     --bad-addr ADDR        an AXI address no slave decodes, for the
#                            decode error (skipped without)
#     --gpu DDDD:BB:DD.F     a GPU: the dma-buf check and the PCI path
#
# Environment: BRINGUP (the program, default build/tests/kmod/bringup,
# made by "make kmod-bringup"), KO (default kmod/fpgad_dma.ko).
# Exit status: 0 all passed, 1 something failed, 77 cannot run here.

set -u

BRINGUP=${BRINGUP:-build/tests/kmod/bringup}
KO=${KO:-kmod/fpgad_dma.ko}
PARAM=/sys/module/fpgad_dma/parameters
ids="" dev=/dev/fpgad0 args=""

skip() { echo "SKIP bringup: $*"; exit 77; }
line() { echo "$1 $2: $3"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--ids) ids=$2; shift 2 ;;
	--dev) dev=$2; shift 2 ;;
	--card-addr) args="$args -a $2"; shift 2 ;;
	--card-size) args="$args -s $2"; shift 2 ;;
	--bad-addr) args="$args -b $2"; shift 2 ;;
	--gpu) args="$args -g $2"; shift 2 ;;
	-h|--help) sed -n '3,26s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "bringup: unknown option $1 (--help)"; exit 2 ;;
	esac
done

[ "$(id -u)" = 0 ] || skip "needs root (loads the module, switches poll_mode)"
[ -x "$BRINGUP" ] || skip "no $BRINGUP: run make kmod-bringup"

# --- the module and the card -----------------------------------------------------

if [ ! -d /sys/module/fpgad_dma ]; then
	[ -n "$ids" ] || skip "fpgad_dma is not loaded: give --ids (the card's device id)"
	[ -f "$KO" ] || skip "no $KO: run make kmod"
	insmod "$KO" ids="$ids" || { line FAIL load "insmod $KO ids=$ids"; exit 1; }
	line PASS load "insmod $KO ids=$ids"
fi
if command -v lspci >/dev/null 2>&1; then
	echo "== Xilinx functions:"
	lspci -nn -d 10ee: | sed 's/^/   /'
fi
node=$(basename "$dev")
if [ ! -c "$dev" ] || [ ! -e "/sys/class/fpgad/$node/device" ]; then
	line FAIL bind "no $dev: is the card's id in ids= (or new_id)? dmesg | grep fpgad"
	exit 1
fi
bdf=$(basename "$(readlink "/sys/class/fpgad/$node/device")")
line PASS bind "$dev is $bdf, engine $(cat "/sys/class/fpgad/$node/engine")"
if command -v lspci >/dev/null 2>&1; then
	lspci -vv -s "$bdf" 2>/dev/null | grep -E 'LnkCap:|LnkSta:|MSI-X:|MSI:|Kernel driver' |
		sed 's/^[[:space:]]*/   /'
fi

# Interrupts the card's vectors took, all CPUs.
irqs() {
	awk '/fpgad-xdma/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) n += $i }
	     END { print n + 0 }' /proc/interrupts
}

# --- the checks, with interrupts and with write-back polling ------------------------

failed=0
old_poll=$(cat "$PARAM/poll_mode")
for mode in interrupt poll; do
	if [ "$mode" = poll ]; then echo 1 > "$PARAM/poll_mode"; else echo 0 > "$PARAM/poll_mode"; fi
	echo "== completion by $mode"
	before=$(irqs)
	# shellcheck disable=SC2086
	"$BRINGUP" -d "$dev" -m "$mode" $args || failed=1
	after=$(irqs)
	if [ "$mode" = interrupt ]; then
		if [ "$after" -gt "$before" ]; then
			line PASS "$mode/interrupts" "$((after - before)) interrupts on fpgad-xdma"
		else
			line FAIL "$mode/interrupts" "no interrupt arrived (/proc/interrupts)"
			failed=1
		fi
	elif [ "$after" -eq "$before" ]; then
		line PASS "$mode/interrupts" "none: completion came from the write-back"
	else
		line FAIL "$mode/interrupts" "$((after - before)) interrupts in poll mode"
		failed=1
	fi
done
echo "$old_poll" > "$PARAM/poll_mode"

for c in transfers timeouts errors resets wedged; do
	printf '%s=%s ' "$c" "$(cat "/sys/class/fpgad/$node/$c")"
done
echo
if [ "$(cat "/sys/class/fpgad/$node/wedged")" != 0 ]; then
	line FAIL wedged "a channel is still wedged: see dmesg"
	failed=1
fi
[ "$failed" = 0 ] && echo "bringup: PASS" || echo "bringup: FAIL"
exit "$failed"
