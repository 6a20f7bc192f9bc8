#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/system/guest.sh - the system tier's checks, run inside the QEMU
# guest by fpgad-system-test.service with systemd as PID 1: install the
# packages, then drive fpgad.service as an operator and its users would.
#
# Prints "SYSTEM: ok|not ok N - what" per check and a last line
# "SYSTEM-RESULT: PASS|FAIL ..." for tests/system/run.sh, on the serial
# console (through tests/system/guest-lib.sh).  Everything it needs is
# under /root/system (packages, and fpgad_dma.ko when the host built one).
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
dir=/root/system
conf=/etc/fpgad/fpgad.conf
# shellcheck disable=SC2034 # guest-lib.sh reads it
TAG=SYSTEM
# shellcheck source=tests/system/guest-lib.sh
. "$dir/guest-lib.sh"
prop() { systemctl show -p "$1" --value fpgad; }
mainpid() { prop MainPID; }
# journal_has PRIORITY TEXT: a journal entry of fpgad.service at PRIORITY
# whose message contains TEXT (journald may take a moment to store it).
journal_has() {
	journalctl -u fpgad -o json --no-pager 2>/dev/null | grep -F -- "$2" |
		grep -q "\"PRIORITY\":\"$1\""
}
set_key() {	# set_key KEY VALUE: a key of one section only (not max_clients)
	sed -i "s|^$1 *=.*|$1 = $2|" "$conf"
}

note "guest up $t0 s after boot: $(uname -r), systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'), $(systemctl is-system-running)"

# --- install ----------------------------------------------------------------
check "dpkg -i libfpgad0 fpgad fpgactl" \
	dpkg -i "$dir"/libfpgad0_*.deb "$dir"/fpgad_*.deb "$dir"/fpgactl_*.deb
check "sysusers made user fpgad and group fpga" sh -c 'getent passwd fpgad && getent group fpga'
check "the package enabled fpgad.service" sh -c '[ "$(systemctl is-enabled fpgad)" = enabled ]'
check "the package started fpgad.service" sh -c '[ "$(systemctl is-active fpgad)" = active ]'
systemctl stop fpgad

# --- the card: fpgad_dma.ko on QEMU's edu device, node owned by group fpgad --
card=no
if [ -f "$dir/fpgad_dma.ko" ]; then
	if insmod "$dir/fpgad_dma.ko" >/tmp/check.out 2>&1 &&
	   wait_for 10 test -c /dev/fpgad0 && udevadm settle -t 10; then
		card=yes
		check "udev gives /dev/fpgad0 to group fpgad, mode 0660" \
			sh -c '[ "$(stat -c "%U %G %a" /dev/fpgad0)" = "root fpgad 660" ] || { stat -c "%U %G %a" /dev/fpgad0; exit 1; }'
	else
		notok "insmod fpgad_dma.ko (the DKMS-built module)"
		show /tmp/check.out
	fi
else
	note "no fpgad_dma.ko from the host: the card checks are skipped"
fi

# --- start -----------------------------------------------------------------
if systemctl start fpgad >/tmp/check.out 2>&1 && [ -S /run/fpgad/fpgad.sock ]; then
	ok "systemctl start fpgad returns (Type=notify: after READY=1) with the socket bound"
else
	notok "systemctl start fpgad"
	show /tmp/check.out
	journalctl -u fpgad --no-pager | show /dev/stdin
fi
check "fpgad.service is active (running)" \
	sh -c '[ "$(systemctl show -p ActiveState,SubState --value fpgad | tr "\n" " ")" = "active running " ]'
check "systemctl status shows fpgad's STATUS= line" \
	sh -c 'systemctl status fpgad --no-pager | grep -E "Status: \"sim: 1 channel, 0 streaming, 0 clients\""'
pid=$(mainpid)
check "fpgad runs as user fpgad, group fpgad, supplementary group fpga" \
	sh -c "[ \"\$(ps -o user=,group=,supgrp= -p $pid | tr -s ' ')\" = 'fpgad fpgad fpgad,fpga' ] || { ps -o user=,group=,supgrp= -p $pid; exit 1; }"
check "fpgad has no capabilities, no_new_privs and a seccomp filter" \
	sh -c "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/$pid/status | grep -v -q ':	0000000000000000\$' && exit 1;
	       grep -q '^NoNewPrivs:	1' /proc/$pid/status && grep -q '^Seccomp:	2' /proc/$pid/status"
check "its socket belongs to group fpga, mode 0660" \
	sh -c '[ "$(stat -c "%U %G %a" /run/fpgad/fpgad.sock)" = "fpgad fpga 660" ] || { stat -c "%U %G %a" /run/fpgad/fpgad.sock; exit 1; }'

# --- users -------------------------------------------------------------------
useradd -m -G fpga alice && useradd -m bob
check "alice (in group fpga) runs fpgactl status" \
	sh -c 'runuser -u alice -- fpgactl status | grep -q "^c2h0 "'
if runuser -u bob -- fpgactl status >/tmp/check.out 2>&1; then
	notok "bob (not in group fpga) is refused"
elif grep -q "permission denied: add bob to group fpga" /tmp/check.out; then
	ok "bob (not in group fpga) is refused, told which group: $(head -n 1 /tmp/check.out)"
else
	notok "bob is refused, but not told to join the socket's group"
	show /tmp/check.out
fi
check "bash completion offers alice fpgad's c2h channels for capture" \
	runuser -u alice -- bash -c '. /usr/share/bash-completion/completions/fpgactl &&
		COMP_LINE="fpgactl capture " COMP_POINT=16 _fpgactl && [ "${COMPREPLY[*]}" = c2h0 ]'
# A lessee of another uid than fpgad's: its rings reach it as file
# descriptors, whatever fpgad's user.
check "alice captures 200 verified frames from a fpgad that is not root" \
	sh -c 'runuser -u alice -- fpgactl capture c2h0 -n 200 --verify | grep -q "^verified   200, errors 0"'
check "the hardened unit streams on the sim: root captures 500 verified frames" \
	sh -c 'fpgactl --json capture c2h0 -n 500 --verify | tee /dev/stderr | grep -q "\"verified\": 500"'
check "fpgactl stats counts the frames" \
	sh -c '[ "$(fpgactl --json stats c2h0 | sed -n "s/.*\"frames\": \([0-9]*\).*/\1/p")" -ge 500 ]'

# --- reload -----------------------------------------------------------------
journal_has 7 "control: connection" && notok "debug lines at log_level = info"
set_key log_level debug
check "systemctl reload fpgad (log_level = debug)" systemctl reload fpgad
fpgactl status >/dev/null
check "the reload applied the new log level: debug lines in the journal" \
	wait_for 5 journal_has 7 "control: connection"
check "the reload kept the process" sh -c "[ \"\$(systemctl show -p MainPID --value fpgad)\" = $pid ]"
set_key log_level err
printf 'bogus_key = 1\n' >> "$conf"
check "systemctl reload with a bad file" systemctl reload fpgad
check "the bad file is reported at priority err, naming file:line" \
	wait_for 5 journal_has 3 "reload: $conf:"
before=$(journalctl -u fpgad -p 7..7 -o cat --no-pager | grep -c "control: connection")
fpgactl status >/dev/null
check "the old configuration is kept: still logging debug lines, same process" \
	sh -c "[ \"\$(systemctl show -p MainPID --value fpgad)\" = $pid ] &&
	       for i in \$(seq 50); do [ \$(journalctl -u fpgad -p 7..7 -o cat --no-pager | grep -c 'control: connection') -gt $before ] && exit 0; sleep 0.1; done; exit 1"
sed -i '/^bogus_key/d' "$conf"
set_key log_level info
systemctl reload fpgad

# --- the journal ---------------------------------------------------------------
check "journalctl -u fpgad: info lines at priority 6" journal_has 6 "listening on ipc:///run/fpgad/fpgad.sock"
check "journalctl -u fpgad: the <N> prefix is gone from the text" \
	sh -c '! journalctl -u fpgad -o cat --no-pager | grep -q "^<[0-7]>"'
check "journalctl -u fpgad -p err shows only errors" \
	sh -c 'out=$(journalctl -u fpgad -p err -o cat --no-pager); echo "$out" | grep -q "keeping the running configuration" && ! echo "$out" | grep -q "listening on"'

# --- watchdog ----------------------------------------------------------------
wd=$(prop WatchdogUSec)
kill -STOP "$pid"
if wait_for 60 sh -c "p=\$(systemctl show -p MainPID --value fpgad); [ -n \"\$p\" ] && [ \"\$p\" != 0 ] && [ \"\$p\" != $pid ] && [ \"\$(systemctl is-active fpgad)\" = active ]"; then
	ok "the watchdog ($wd) restarts a fpgad stopped with SIGSTOP (NRestarts=$(prop NRestarts))"
else
	notok "the watchdog restarts a stopped fpgad"
	systemctl status fpgad --no-pager | show /dev/stdin
fi
check "systemd logged the watchdog timeout" \
	sh -c 'journalctl -u fpgad -o cat --no-pager | grep -q -i "watchdog timeout"'
check "the restarted fpgad answers" fpgactl status
pid=$(mainpid)

# --- remote status and metrics: fpgad-exporter.service -------------------------
printf '[control]\nremote = tcp://127.0.0.1:7710\n' > /tmp/old.conf
check "fpgad refuses [control] remote, naming the exporter option that replaces it" \
	sh -c '! fpgad --check-config /tmp/old.conf > /tmp/old.out 2>&1 &&
	       grep -q "remote moved to fpgad-exporter --remote URL" /tmp/old.out'
check "fpgad-exporter.service is installed, not enabled" \
	sh -c '[ "$(systemctl is-enabled fpgad-exporter 2>/dev/null)" = disabled ]'
echo 'FPGAD_EXPORTER_OPTS="--remote tcp://127.0.0.1:7710 --metrics http://127.0.0.1:9110/metrics"' \
	> /etc/default/fpgad-exporter
check "systemctl start fpgad-exporter" systemctl start fpgad-exporter
epid=$(systemctl show -p MainPID --value fpgad-exporter)
check "fpgad-exporter runs as a user of its own, not root" \
	sh -c "[ \"\$(stat -c %u /proc/$epid)\" != 0 ]"
check "fpgactl --url tcp://127.0.0.1:7710 status, through the exporter" \
	wait_for 5 sh -c 'runuser -u bob -- fpgactl --url tcp://127.0.0.1:7710 status | grep -q "^c2h0 "'
# No HTTP client in the guest: bash's /dev/tcp speaks the request.
cat > /tmp/scrape <<'EOS'
#!/bin/bash
exec 3<>/dev/tcp/127.0.0.1/9110 &&
	printf "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" >&3 &&
	timeout 5 cat <&3 | tr -d "\r"
EOS
chmod 0755 /tmp/scrape
check "GET http://127.0.0.1:9110/metrics answers with the exposition and fpgad_up 1" \
	sh -c 's=$(runuser -u bob -- /tmp/scrape); echo "$s" | grep -q "^fpgad_channel_frames_total{channel=\"c2h0\",direction=\"c2h\"} " && echo "$s" | grep -q "^fpgad_up 1"'
systemctl stop fpgad
check "fpgad stopped: the exporter serves fpgad_up 0 and no fpgad series" \
	sh -c 's=$(/tmp/scrape); echo "$s" | grep -q "^fpgad_up 0" && ! echo "$s" | grep -q "^fpgad_channel_"'
systemctl start fpgad
check "fpgad back: fpgad_up 1 again, the same exporter process" \
	wait_for 10 sh -c "/tmp/scrape | grep -q '^fpgad_up 1' && [ \"\$(systemctl show -p MainPID --value fpgad-exporter)\" = $epid ]"
systemctl stop fpgad-exporter
rm -f /etc/default/fpgad-exporter
pid=$(mainpid)

# --- the card through the xdma backend ------------------------------------------
if [ "$card" = yes ]; then
	printf '[device]\nbackend = xdma\npath = /dev/fpgad0\n' > "$conf"
	check "fpgad opens /dev/fpgad0 (xdma backend) under DevicePolicy=closed" \
		sh -c 'systemctl restart fpgad && fpgactl status | grep -q "^backend:  .*1234:11e8"'
	journalctl -u fpgad -o cat --no-pager | grep "device:" | tail -n 1 | sed 's/^/SYSTEM: # /'
	# The unit names the NVIDIA nodes by a glob of their /proc/devices
	# names (char-nvidia*): the same rule for the card's "fpgad".
	check "DeviceAllow=char-fpga* (a glob) lets a service open /dev/fpgad0" \
		systemd-run --wait --quiet -p DevicePolicy=closed -p "DeviceAllow=char-fpga* rw" \
		sh -c 'exec 3<>/dev/fpgad0'
	if systemd-run --wait --quiet -p DevicePolicy=closed -p "DeviceAllow=char-nomatch* rw" \
		sh -c 'exec 3<>/dev/fpgad0' >/tmp/check.out 2>&1; then
		notok "DeviceAllow=char-nomatch* keeps /dev/fpgad0 closed"
	else
		ok "DeviceAllow=char-nomatch* keeps /dev/fpgad0 closed"
	fi
fi

# --- the sandbox check of the GPU batch, on host memory -------------------------
mkdir -p /usr/local/lib/fpgad-check
ln -sf /usr/sbin/fpgad /usr/bin/fpgactl /usr/local/lib/fpgad-check/
check "tests/system/gpu-sandbox.sh (GPU_SANDBOX_HOST=1) runs fpgad under the unit's sandbox" \
	env GPU_SANDBOX_HOST=1 sh "$dir/tree/tests/system/gpu-sandbox.sh" /usr/local/lib/fpgad-check
grep '^gpu-sandbox:' /tmp/check.out | sed 's/^/SYSTEM: # /'

# --- stop ---------------------------------------------------------------------
check "systemctl stop fpgad" systemctl stop fpgad
check "fpgad exited 0 on SIGTERM (Result=success)" \
	sh -c '[ "$(systemctl show -p Result,ExecMainStatus --value fpgad | tr "\n" " ")" = "success 0 " ]'
check "nothing left behind: no /run/fpgad, no fpgad objects in /dev/shm" \
	sh -c '[ ! -e /run/fpgad ] && ! ls /dev/shm | grep -q fpgad'
check "fpgad logged its stop" sh -c 'journalctl -u fpgad -o cat --no-pager | grep -q "^fpgad stopped$"'

# --- two cards: template instances fpgad@a and fpgad@b, side by side -----------
for c in a b; do
	printf '[channel cam_%s]\nmemory = host\nslots = 4\nslot_size = 4K\nframe_size = 4K\nframe_rate = 1000\n' \
		"$c" >/etc/fpgad/$c.conf
done
check "systemctl start fpgad@a fpgad@b" systemctl start fpgad@a fpgad@b
check "each instance has its own runtime directory and socket" \
	sh -c '[ -S /run/fpgad/a/fpgad.sock ] && [ -S /run/fpgad/b/fpgad.sock ]'
check "fpgactl --card a shows card a's channel only" \
	sh -c 'fpgactl --card a channels | grep -q "^cam_a " && ! fpgactl --card a channels | grep -q "^cam_b "'
check "FPGAD_CARD=b reaches card b" sh -c 'FPGAD_CARD=b fpgactl channels | grep -q "^cam_b "'
check "fpgactl --all status: one row per instance" \
	sh -c '[ "$(fpgactl --all status | grep -c "^[ab] ")" = 2 ]'
check "capture on card a" fpgactl --card a -n 50 --verify capture cam_a
check "systemctl stop fpgad@a leaves fpgad@b serving" \
	sh -c 'systemctl stop fpgad@a && [ ! -e /run/fpgad/a ] && fpgactl --card b version'
check "systemctl stop fpgad@b" systemctl stop fpgad@b
rm -f /etc/fpgad/a.conf /etc/fpgad/b.conf
rmdir /run/fpgad 2>/dev/null || :

note "checks took $(at) s"
if [ "$failed" = 0 ]; then
	echo "SYSTEM-RESULT: PASS $n checks"
else
	journalctl -u fpgad --no-pager | tail -n 40 | sed 's/^/SYSTEM: # /'
	echo "SYSTEM-RESULT: FAIL $failed of $n checks failed"
fi
