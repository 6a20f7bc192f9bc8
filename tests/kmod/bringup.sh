#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/kmod/bringup.sh - first light of fpgad_dma.ko on a real XDMA card,
# in the order an engineer on a new card needs it: what would stop the
# module before it loads (another driver on the card, Secure Boot), one
# transfer each way and whether its interrupt came, then every channel
# through card memory, all at once, an AXI decode error and RESET, a
# forced timeout, the PCI path to a GPU and 256 MiB of GPU memory as one
# dma-buf, with interrupt and with poll-mode completion, and rmmod.  One
# PASS/FAIL/SKIP line per check; every FAIL says what to look at next.
# After each step the kernel's new messages about the card, PCIe AER and
# IOMMU faults are shown (a fault fails the step), and after a failure
# the engine's registers (debugfs).
#
#   sudo tests/kmod/bringup.sh [options]
#     --ids 0x9038[,0x9034]  device ids to load fpgad_dma.ko with (when it
#                            is not loaded yet)
#     --dev /dev/fpgad0      the card's node (default /dev/fpgad0)
#     --card-addr ADDR       card (AXI) address of memory the test may
#                            overwrite (default 0: see the NOTE it prints)
#     --card-size BYTES      how much of it (default: the module's
#                            card_memory, else 1 MiB)
#     --bad-addr ADDR        an AXI address no slave decodes, for the
#                            decode error (skipped without)
#     --gpu DDDD:BB:DD.F     a GPU: the PCI path and the dma-buf check
#     --edu                  dry run against QEMU's edu device (make
#                            kmod-check runs it in its guest)
#
# Environment: BRINGUP (the program, default build/tests/kmod/bringup,
# made by "make kmod-bringup"), KO (default kmod/fpgad_dma.ko).
# Exit status: 0 all passed, 1 something failed, 77 cannot run here.

set -u

BRINGUP=${BRINGUP:-build/tests/kmod/bringup}
KO=${KO:-kmod/fpgad_dma.ko}
PARAM=/sys/module/fpgad_dma/parameters
ids="" dev=/dev/fpgad0 args="" edu=0 card_addr_given=0
failed=0 loaded=0 old_poll="" bdf="" klog=0 marker="" node=""

skip() { echo "SKIP bringup: $*"; exit 77; }
line() { echo "$1 $2: $3"; }
fail() { line FAIL "$1" "$2"; failed=1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--ids) ids=$2; shift 2 ;;
	--dev) dev=$2; shift 2 ;;
	--card-addr) args="$args -a $2"; card_addr_given=1; shift 2 ;;
	--card-size) args="$args -s $2"; shift 2 ;;
	--bad-addr) args="$args -b $2"; shift 2 ;;
	--gpu) args="$args -g $2"; shift 2 ;;
	--edu) edu=1; args="$args -E edu"; shift ;;
	-h|--help) sed -n '3,31s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "bringup: unknown option $1 (--help)"; exit 2 ;;
	esac
done

[ "$(id -u)" = 0 ] || skip "needs root (loads the module, switches poll_mode)"
[ -x "$BRINGUP" ] || skip "no $BRINGUP: run make kmod-bringup"

# poll_mode goes back to what it was however the script ends (Ctrl-C too).
restore() {
	[ -n "$old_poll" ] && [ -w "$PARAM/poll_mode" ] &&
		echo "$old_poll" > "$PARAM/poll_mode"
	old_poll=""
}
trap 'restore' EXIT
trap 'restore; echo "bringup: interrupted"; exit 130' INT TERM

# --- the kernel's own word: per step ---------------------------------------------------

# Each step's messages are those after a marker it writes to the kernel
# log (a line count goes wrong once the ring buffer wraps); a marker that
# has wrapped out of the buffer leaves all of it, with a note.
mark() {
	klog=$((klog + 1))
	marker="fpgad-bringup: mark $$.$klog"
	echo "$marker" > /dev/kmsg 2>/dev/null || marker=""
}

since_mark() {
	if [ -z "$marker" ]; then
		dmesg
	elif dmesg | grep -q -F "$marker"; then
		dmesg | sed -n "\|$marker|,\$p" | sed 1d
	else
		echo "(the kernel log wrapped since the step began: all of it)"
		dmesg
	fi
}

# New kernel messages about the card, AER and the IOMMU; a fault fails @1.
capture() {
	new=$(since_mark)
	echo "$new" | grep -E 'fpgad|AER|DMAR|IOMMU|AMD-Vi|pcieport' |
		sed 's/^/   dmesg: /'
	if echo "$new" | grep -q -E 'AER: .*(error|Error)|DMAR: .*[Ff]ault|IO_PAGE_FAULT|iommu.*fault'; then
		fail "$1/kernel-log" "a PCIe AER error or an IOMMU fault (above): the card used a bus address it was not given (IOMMU) or the link is marginal (AER: reseat, lower the link speed)"
	fi
	mark
}

# The engine's registers, from the module's debugfs.
regs() {
	d=/sys/kernel/debug
	[ -d "$d/fpgad_dma" ] || mount -t debugfs debugfs "$d" 2>/dev/null
	[ -n "$bdf" ] && [ -r "$d/fpgad_dma/$bdf/regs" ] &&
		sed 's/^/   regs: /' "$d/fpgad_dma/$bdf/regs"
}

# Interrupts the card's handler took: the module's own count (a shared
# INTx line's count in /proc/interrupts has other devices' in it too).
irqs() {
	if [ -r "/sys/class/fpgad/$node/interrupts" ]; then
		cat "/sys/class/fpgad/$node/interrupts"
		return
	fi
	awk '/fpgad-/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) n += $i }
	     END { print n + 0 }' /proc/interrupts
}

# --- before the module loads ------------------------------------------------------------

# PCI functions of the card(s): Xilinx with one of the ids (any Xilinx
# function without --ids), or QEMU's edu.
functions() {
	for f in /sys/bus/pci/devices/*; do
		v=$(cat "$f/vendor") d=$(cat "$f/device")
		if [ "$edu" = 1 ]; then
			[ "$v" = 0x1234 ] && [ "$d" = 0x11e8 ] && basename "$f"
			continue
		fi
		[ "$v" = 0x10ee ] || continue
		[ -z "$ids" ] && { basename "$f"; continue; }
		for id in $(echo "$ids" | tr ',' ' '); do
			[ "$((d))" = "$((id))" ] && basename "$f"
		done
	done
}

# The functions another driver (xdma.ko, vfio-pci, ...) holds: each a FAIL.
# Loaded or not: fpgad_dma cannot bind a card another driver has.
other_drivers() {
	for f in $found; do
		drv=$(basename "$(readlink "/sys/bus/pci/devices/$f/driver" 2>/dev/null)")
		if [ -n "$drv" ] && [ "$drv" != fpgad_dma ] && [ "$drv" != . ]; then
			fail driver "$f is bound to $drv: unbind it first (echo $f > /sys/bus/pci/drivers/$drv/unbind) and keep $drv from loading (blacklist it)"
		fi
	done
}

if [ ! -d /sys/module/fpgad_dma ]; then
	[ -n "$ids" ] || [ "$edu" = 1 ] ||
		skip "fpgad_dma is not loaded: give --ids (the card's device id)"
	[ -f "$KO" ] || skip "no $KO: run make kmod"
	found=$(functions)
	[ -n "$found" ] || fail pci "no PCI function with those ids (lspci -nn -d 10ee:): is the bitstream loaded, and was the host rebooted or the bus rescanned after (echo 1 > /sys/bus/pci/rescan)?"
	other_drivers
	# Only a module about to be loaded can be refused for its signature.
	lockdown=$(cat /sys/kernel/security/lockdown 2>/dev/null)
	sb=$(mokutil --sb-state 2>/dev/null)
	signer=$(modinfo -F signer "$KO" 2>/dev/null)
	case "$sb $lockdown" in
	*"SecureBoot enabled"*|*"[integrity]"*|*"[confidentiality]"*)
		if [ -z "$signer" ]; then
			fail signing "Secure Boot or lockdown is on and $KO is unsigned: sign it with an enrolled MOK (scripts/sign-file sha256 MOK.priv MOK.der $KO) or install it through DKMS, which signs with its own MOK"
		fi ;;
	esac
	[ "$failed" = 0 ] || { echo "bringup: FAIL (before loading the module)"; exit 1; }
	mark
	if [ "$edu" = 1 ]; then
		insmod "$KO" || { fail load "insmod $KO: dmesg says why"; capture load; exit 1; }
	else
		insmod "$KO" ids="$ids" || { fail load "insmod $KO ids=$ids: dmesg says why"; capture load; exit 1; }
	fi
	loaded=1
	line PASS load "insmod $KO${ids:+ ids=$ids}"
	capture load
else
	found=$(functions)
	other_drivers
	mark
fi
if command -v lspci >/dev/null 2>&1; then
	echo "== Xilinx functions:"
	lspci -nn -d 10ee: | sed 's/^/   /'
fi
node=$(basename "$dev")
if [ ! -c "$dev" ] || [ ! -e "/sys/class/fpgad/$node/device" ]; then
	if [ "$failed" = 1 ]; then
		echo "bringup: FAIL (no $dev: another driver has the card, above)"
	elif [ -z "$found" ]; then
		fail bind "no $dev and no PCI function it could bind (lspci -nn -d 10ee:): is the bitstream loaded?"
	else
		fail bind "no $dev: $(echo $found) unbound: is the card's id in ids= (or new_id)? Did probe fail (dmesg | grep fpgad)?"
	fi
	exit 1
fi
bdf=$(basename "$(readlink "/sys/class/fpgad/$node/device")")
line PASS bind "$dev is $bdf, engine $(cat "/sys/class/fpgad/$node/engine")"
if command -v lspci >/dev/null 2>&1; then
	lspci -vv -s "$bdf" 2>/dev/null | grep -E 'LnkCap:|LnkSta:|MSI-X:|MSI:|Kernel driver' |
		sed 's/^[[:space:]]*/   /'
fi
if [ "$card_addr_given" = 0 ]; then
	echo "NOTE window: the checks use card address 0 and card_memory (else 1 MiB) bytes; if first-light fails with EIO, find the card's memory in the design's AXI address map (Vivado address editor) and give --card-addr/--card-size"
fi

# --- the checks, with interrupts and with write-back polling ---------------------------

old_poll=$(cat "$PARAM/poll_mode")
modes="interrupt poll"
[ "$edu" = 1 ] && modes=interrupt	# edu has no write-back to poll
for mode in $modes; do
	if [ "$mode" = poll ]; then echo 1 > "$PARAM/poll_mode"; else echo 0 > "$PARAM/poll_mode"; fi
	echo "== completion by $mode"
	# One transfer first: a missing interrupt shows now, not as timeouts.
	before=$(irqs)
	# shellcheck disable=SC2086
	if ! "$BRINGUP" -d "$dev" -m "$mode" -o first-light $args; then
		failed=1
		capture "$mode/first-light"
		regs
		line SKIP "$mode/*" "the other checks: first light failed, so they would run against a window or an engine that does not work (fix the first, see its FAIL)"
		continue
	fi
	after=$(irqs)
	capture "$mode/first-light"
	if [ "$mode" = interrupt ] && [ "$after" -le "$before" ]; then
		fail "$mode/interrupts" "the first transfer raised no interrupt (/proc/interrupts): is MSI-X/MSI enabled (lspci -vv: Enable+)? Does the design route the channel's usr_irq/interrupt out? Try poll_mode=1; the interrupt-mode checks are skipped"
		regs
		continue
	fi
	if [ "$mode" = poll ] && [ "$after" -ne "$before" ]; then
		fail "$mode/interrupts" "$((after - before)) interrupts in poll mode: the engine's interrupt enables are not what the driver set (register dump below)"
		regs
	else
		line PASS "$mode/interrupts" "$((after - before)) interrupts for the first transfer"
	fi
	# shellcheck disable=SC2086
	if ! "$BRINGUP" -d "$dev" -m "$mode" $args; then
		failed=1
		regs
	fi
	capture "$mode"
done
restore

for c in transfers timeouts errors resets wedged; do
	printf '%s=%s ' "$c" "$(cat "/sys/class/fpgad/$node/$c")"
done
echo
if [ "$(cat "/sys/class/fpgad/$node/wedged")" != 0 ]; then
	fail wedged "a channel is still wedged: its engine did not stop (a hung AXI slave); RESET resets the function, else reload the bitstream"
	regs
fi

# --- unload ------------------------------------------------------------------------------

if [ "$loaded" = 1 ]; then
	if rmmod fpgad_dma; then
		line PASS rmmod "unloaded"
	else
		fail rmmod "something holds $dev open (fuser -v $dev), or the module is stuck (dmesg)"
	fi
	capture rmmod
fi
[ "$failed" = 0 ] && echo "bringup: PASS" || echo "bringup: FAIL"
exit "$failed"
