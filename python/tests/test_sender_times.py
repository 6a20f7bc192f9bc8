# SPDX-License-Identifier: MIT
"""The sender's frame start and end times on Frame: what an HSB-style
sender (tests/net/hsb_sender, over loopback UDP) put in its metadata,
exactly; 0 from the simulated card, which has none."""

import json
import os
import subprocess

import pytest

import fpgad
from conftest import BUILD, Fpgad

SENDER = os.path.join(BUILD, "net", "hsb_sender")
FRAME = 60000
SLOTS = 8
QPN = 0x4D2
RKEY = 0x5EED0001
BASE = 1733200000000000000  # hsb_sender --stamp: seq starts at BASE + seq * 1000

UDP_CONFIG = """\
[daemon]
log_level = debug

[channel net0]
source = udp
listen = 127.0.0.1:0
sender = 127.0.0.1
mtu = 1500
qpn = %d
rkey = %d
slots = %d
slot_size = 64K
frame_size = %d
queue_depth = 4
memory = host
sender_control = none
""" % (QPN, RKEY, SLOTS, FRAME)


def test_sim_frames_have_no_sender_times(client):
    with client.open("c2h0") as ch:
        for _ in range(3):
            with ch.wait(timeout=5) as f:
                assert f.t_sender_start_ns == 0
                assert f.t_sender_end_ns == 0


def test_sender_times_are_what_the_sender_sent():
    if not os.access(SENDER, os.X_OK):
        pytest.skip("%s not built (make net-bin)" % SENDER)
    d = Fpgad(UDP_CONFIG)
    try:
        out = subprocess.run([os.path.join(BUILD, "fpgactl"), "--url", d.url, "--json",
                              "stats", "net0"], check=True, capture_output=True,
                             text=True).stdout
        port = json.loads(out)["net"]["listen"].rsplit(":", 1)[1]
        with fpgad.connect(d.url) as c, c.open("net0") as ch:
            sender = subprocess.Popen(
                [SENDER, "--to", "127.0.0.1:" + port, "--from", "127.0.0.1",
                 "--qpn", str(QPN), "--rkey", str(RKEY), "--frame", str(FRAME),
                 "--slots", str(SLOTS), "--count", "20", "--rate", "100",
                 "--stamp", str(BASE)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            got = 0
            # Every frame until the sender is done and none came for 1 s.
            while True:
                try:
                    f = ch.wait(timeout=1)
                except fpgad.TimeoutError:
                    if sender.poll() is not None:
                        break
                    continue
                with f:
                    assert f.t_sender_start_ns == BASE + f.seq * 1000
                    assert f.t_sender_end_ns == f.t_sender_start_ns + 500
                    got += 1
            assert sender.wait(60) == 0, sender.stdout.read()
            sender.stdout.close()
            assert got > 0, d.log_text()
    finally:
        assert d.stop() == 0, d.log_text()
