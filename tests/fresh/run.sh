#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/fresh/run.sh - README's two set-up commands on a fresh Debian 12:
# a minimal root made by mmdebstrap, a clone of this tree's HEAD in it, and
# `make GOAL` run there in a chroot as root (with /proc, /sys, /dev and
# /tmp mounted, the root a mount point, and this machine's /usr/local/cuda when it has one, as a
# fresh host of this project has).  Prints how long GOAL took and how many
# megabytes of Debian packages it installed.
#
#   tests/fresh/run.sh demo|check [ROOT]      (as root; ROOT default a new
#                                            directory under /var/tmp)
#
# Environment: SYSTEM_MIRROR (default http://deb.debian.org/debian),
# SYSTEM_SECURITY_MIRROR (default http://deb.debian.org/debian-security).
set -eu
goal=${1:?usage: run.sh demo|check [ROOT]}
root=${2:-$(mktemp -d /var/tmp/fpgad-fresh.XXXXXX)}
mirror=${SYSTEM_MIRROR:-http://deb.debian.org/debian}
tree=$(git rev-parse --show-toplevel)
[ "$(id -u)" = 0 ] || { echo "fresh: run as root (mmdebstrap, chroot)"; exit 77; }
command -v mmdebstrap >/dev/null || { echo "fresh: SKIP: mmdebstrap not installed"; exit 77; }

echo "fresh: a minimal Debian 12 root in $root"
# The sources of an installed Debian 12: the release, its updates and its
# security archive (where the 6.12 kernel of bookworm comes from).
security=${SYSTEM_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
mmdebstrap --variant=minbase --include=git,ca-certificates,make bookworm "$root" \
	"deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
	"deb $security bookworm-security main" \
	>"$root.mmdebstrap.log" 2>&1 || { tail -5 "$root.mmdebstrap.log"; exit 1; }
git clone -q "$tree" "$root/root/fpgad"
cleanup() {
	for m in tmp dev/pts dev sys proc usr/local/cuda; do
		mountpoint -q "$root/$m" && umount -l "$root/$m"
	done
	mountpoint -q "$root" && umount -l "$root"
}
trap cleanup EXIT
# The root a mount point of its own, as a booted system's is: unshare(1)
# --mount inside makes / private, which a plain directory cannot be.
mount --bind "$root" "$root"
mount --make-private "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
if [ -d /usr/local/cuda ]; then
	mkdir -p "$root/usr/local/cuda"
	mount --bind "$(readlink -f /usr/local/cuda)" "$root/usr/local/cuda"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
size() { chroot "$root" dpkg-query -W -f='${Installed-Size}\n' | awk '{ s += $1 } END { printf "%d", s / 1024 }'; }
before=$(size)
t0=$(date +%s)
rc=0
chroot "$root" sh -c "cd /root/fpgad && make $goal" > "$root.$goal.log" 2>&1 || rc=$?
t=$(($(date +%s) - t0))
after=$(size)
tail -n 15 "$root.$goal.log"
echo "fresh: make $goal exit $rc in $((t / 60)) min $((t % 60)) s; it installed $((after - before)) MB of Debian packages ($before MB before); log $root.$goal.log"
exit $rc
