#!/bin/sh
# make install into a scratch DESTDIR, then build and run a program against
# the installed header, library and pkg-config file, as a user would.
set -eu
BUILD=${BUILD:-build}
root=$(mktemp -d /tmp/fpgad-install.XXXXXX)
trap 'rm -rf "$root"' EXIT INT TERM

make --no-print-directory -s install DESTDIR="$root" PREFIX=/usr >/dev/null
for f in usr/sbin/fpgad usr/bin/fpgactl usr/lib/libfpgad.so.0 usr/lib/libfpgad.a \
	 usr/include/fpgad.h usr/include/fpgad_frames.h usr/include/fpgad_xfer.h \
	 usr/include/fpgad_simframe.h usr/include/fpgad_abi.h usr/lib/pkgconfig/fpgad.pc \
	 usr/lib/systemd/system/fpgad.service usr/lib/systemd/system/fpgad@.service \
	 etc/fpgad/fpgad.conf.example \
	 usr/lib/sysusers.d/fpgad.conf usr/lib/tmpfiles.d/fpgad.conf \
	 usr/lib/udev/rules.d/60-fpgad.rules usr/share/fpgad/fpgad-remote.conf \
	 usr/share/man/man8/fpgad.8 usr/share/man/man1/fpgactl.1 \
	 usr/share/man/man5/fpgad.conf.5 usr/share/man/man3/libfpgad.3 \
	 usr/share/bash-completion/completions/fpgactl; do
	[ -e "$root/$f" ] || { echo "install: $f missing"; exit 1; }
done
grep -q '^ExecStart=/usr/sbin/fpgad ' "$root/usr/lib/systemd/system/fpgad.service"
# The template: one fpgad per card, its own configuration and runtime
# directory, the hardening of fpgad.service line for line.
tpl=$root/usr/lib/systemd/system/fpgad@.service
grep -qx 'ExecStart=/usr/sbin/fpgad -c /etc/fpgad/%i.conf --runtime-dir /run/fpgad/%i' "$tpl" ||
	{ echo "install: fpgad@.service: ExecStart does not name the instance's files"; exit 1; }
grep -qx 'RuntimeDirectory=fpgad/%i' "$tpl" ||
	{ echo "install: fpgad@.service: no RuntimeDirectory=fpgad/%i"; exit 1; }
if grep '/etc/fpgad/fpgad\.conf' "$tpl"; then echo "install: fpgad@.service names /etc/fpgad/fpgad.conf"; exit 1; fi
strip() { grep -Ev '^(Description|Conflicts|ExecStartPre|ExecStart|RuntimeDirectory)=|^	if grep' "$1"; }
strip "$root/usr/lib/systemd/system/fpgad.service" >"$root/plain.hardening"
strip "$tpl" >"$root/tpl.hardening"
diff -u "$root/plain.hardening" "$root/tpl.hardening" ||
	{ echo "install: fpgad@.service and fpgad.service differ beyond the instance's names"; exit 1; }
# The unit's directives, checked by systemd itself, with ExecStart and
# ExecStartPre pointed at the binary just built (verify wants it to exist).
if command -v systemd-analyze >/dev/null 2>&1; then
	case $BUILD in /*) bin=$BUILD/fpgad ;; *) bin=$(pwd)/$BUILD/fpgad ;; esac
	sed "s|^\(ExecStart[A-Za-z]*=\)/usr/sbin/fpgad|\1$bin|" \
		"$root/usr/lib/systemd/system/fpgad.service" > "$root/fpgad.service"
	# Documentation=man:... must name pages that make install put there.
	if command -v man >/dev/null 2>&1; then
		MANPATH="$root/usr/share/man" systemd-analyze verify "$root/fpgad.service"
	else
		echo "install: man not installed; the unit's man: links were not checked"
		systemd-analyze verify --man=no "$root/fpgad.service"
	fi
	# Least privilege, as systemd scores it: exposure 2.0 at most (the
	# threshold is in tenths), with and without the remote drop-in.
	SYSTEMD_EMOJI=0 systemd-analyze security --offline=true --root="$root" --threshold=20 \
		fpgad.service >"$root/security.txt" ||
		{ cat "$root/security.txt"; echo "install: unit exposure above 2.0"; exit 1; }
	echo "install: $(grep 'Overall exposure' "$root/security.txt" | sed 's/^[^O]*//')"
	sed "s|^\(ExecStart[A-Za-z]*=\)/usr/sbin/fpgad|\1$bin|" "$tpl" >"$root/fpgad@a.service"
	MANPATH="$root/usr/share/man" systemd-analyze verify --man=no "$root/fpgad@a.service"
	SYSTEMD_EMOJI=0 systemd-analyze security --offline=true --root="$root" --threshold=20 \
		fpgad@a.service >"$root/security-a.txt" ||
		{ cat "$root/security-a.txt"; echo "install: fpgad@a.service exposure above 2.0"; exit 1; }
	echo "install: fpgad@a.service: $(grep 'Overall exposure' "$root/security-a.txt" | sed 's/^[^O]*//')"
	install -D -m 0644 "$root/usr/share/fpgad/fpgad-remote.conf" \
		"$root/etc/systemd/system/fpgad.service.d/remote.conf"
	SYSTEMD_EMOJI=0 systemd-analyze security --offline=true --root="$root" fpgad.service |
		sed -n 's/^[^O]*\(Overall exposure.*\)/install: with fpgad-remote.conf: \1/p'
else
	echo "install: systemd-analyze not found; the unit file was not verified"
fi

cat >"$root/hello.c" <<'EOC'
#include <fpgad.h>
#include <fpgad_frames.h>
#include <fpgad_xfer.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	fpgad_client *c;
	/* Nothing listens there: a clean error, not a crash. */
	int r = fpgad_connect("ipc:///nonexistent/fpgad.sock", &c);
	printf("%s %d\n", fpgad_version(), r);
	return strcmp(fpgad_version(), FPGAD_VERSION_STRING) || r >= 0;
}
EOC
export PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_LIBDIR="$root/usr/lib/pkgconfig"
# shellcheck disable=SC2046
cc -o "$root/hello" "$root/hello.c" $(pkg-config --cflags --libs fpgad)
LD_LIBRARY_PATH="$root/usr/lib" "$root/hello"
echo "install: 1 passed, 0 failed"
