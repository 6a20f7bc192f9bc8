# SPDX-License-Identifier: MIT
"""The control plane from Python: connect, status, clients, stats, reset,
topology, leases and their refusals, errors as fpgad.Error subclasses."""

import dataclasses
import errno
import json
import os
import subprocess

import pytest

import fpgad
from conftest import BUILD, CONFIG, Fpgad, wait_until


def test_connect_refused_names_the_url(tmp_path):
    url = "ipc://%s/none.sock" % tmp_path
    with pytest.raises(fpgad.ConnectError) as e:
        fpgad.connect(url)
    assert e.value.errno == errno.ECONNREFUSED
    assert isinstance(e.value, fpgad.Error)
    assert isinstance(e.value, ConnectionRefusedError)
    assert url in str(e.value)
    # libfpgad's words, saying what to do.
    assert "is fpgad running? (systemctl status fpgad)" in str(e.value)


def test_connect_errors_say_what_to_do():
    with pytest.raises(fpgad.InvalidError) as e:
        fpgad.connect("/tmp/x.sock")
    assert "use ipc:///tmp/x.sock" in str(e.value)
    with pytest.raises(fpgad.InvalidError) as e:
        fpgad.connect("tcp://127.0.0.1")
    assert "missing :PORT" in str(e.value)


def test_connect_bad_timeout():
    with pytest.raises(ValueError):
        fpgad.connect("ipc:///nowhere", timeout=-1)


def test_default_url_follows_environment(monkeypatch):
    monkeypatch.setenv("FPGAD_URL", "ipc:///tmp/elsewhere.sock")
    assert fpgad.default_url() == "ipc:///tmp/elsewhere.sock"


def test_connect_by_card_name(daemon, monkeypatch):
    root, name = os.path.split(daemon.dir)
    monkeypatch.setenv("FPGAD_RUNTIME_ROOT", root)
    monkeypatch.delenv("FPGAD_URL", raising=False)
    with fpgad.connect(card=name) as c:
        assert c.status().pid == daemon.proc.pid
        assert c.url == daemon.url
    monkeypatch.setenv("FPGAD_CARD", name)
    assert fpgad.default_url() == daemon.url
    with fpgad.connect() as c:
        assert c.status().pid == daemon.proc.pid


def test_connect_unknown_or_bad_card(tmp_path, monkeypatch):
    monkeypatch.setenv("FPGAD_RUNTIME_ROOT", str(tmp_path))
    with pytest.raises(fpgad.NotFoundError) as e:
        fpgad.connect(card="nosuchcard")
    assert "nosuchcard" in str(e.value)
    with pytest.raises(fpgad.Error) as e:
        fpgad.connect(card="../etc")
    assert e.value.errno == errno.EINVAL
    assert "not a card name" in str(e.value)
    with pytest.raises(ValueError):
        fpgad.connect("ipc:///nowhere", card="a")


def test_status_is_a_dataclass(client, daemon):
    s = client.status()
    assert isinstance(s, fpgad.Status)
    assert s.pid == daemon.proc.pid
    assert s.backend.startswith("sim")
    names = {c.name: c for c in s.channels}
    assert set(names) == {"c2h0", "small", "slow", "h2c0"}
    c = names["c2h0"]
    assert isinstance(c, fpgad.ChannelSummary)
    assert (c.direction, c.memory, c.mode, c.slots, c.slot_size) == \
        ("c2h", "host", "host", 8, 65536)
    assert names["h2c0"].direction == "h2c"
    assert client.server_software.startswith("fpgad")
    assert client.url == daemon.url
    assert fpgad.version() == fpgad.__version__


def test_status_card_is_fpgactls():
    """status().card says of the simulated card what fpgactl status --json
    does, field by field: its link model, what it simulates, and None for
    what a simulated card has not (PCI address and ids, driver, AER
    counts)."""
    d = Fpgad(CONFIG + "[sim]\nlink = gen4x16\n")
    try:
        with fpgad.connect(d.url) as c:
            card = c.status().card
        out = subprocess.run([os.path.join(BUILD, "fpgactl"), "--url", d.url,
                              "--json", "status"], capture_output=True,
                             text=True, check=True).stdout
    finally:
        assert d.stop() == 0, d.log_text()
    assert isinstance(card, fpgad.Card)
    assert dataclasses.asdict(card) == json.loads(out)["card"]
    assert (card.link_gen, card.link_width, card.max_link_gen,
            card.max_link_width) == (4, 16, 4, 16)
    assert card.simulates.startswith("a DMA card with 16 C2H and 16 H2C engines")
    assert card.simulates.endswith("link PCIe Gen4 x16")
    assert card.pci_address is None and card.vendor_id is None
    assert card.numa_node is None and card.driver is None
    assert (card.aer_correctable, card.aer_nonfatal, card.aer_fatal) == \
        (None, None, None)


def test_status_transfers_are_fpgactls(tmp_path):
    """status() carries the transfer plane's counters as fpgactl status
    --json does, and they move with transfers made by another process."""
    d = Fpgad(CONFIG)
    fpgactl = os.path.join(BUILD, "fpgactl")
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * 256)
    try:
        with fpgad.connect(d.url) as c:
            before = c.status()
            subprocess.run([fpgactl, "--url", d.url, "write", "0", str(data)],
                           capture_output=True, check=True)
            subprocess.run([fpgactl, "--url", d.url, "read", "0", "64K",
                            str(tmp_path / "back.bin")],
                           capture_output=True, check=True)
            after = c.status()
        out = subprocess.run([fpgactl, "--url", d.url, "--json", "status"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        assert d.stop() == 0, d.log_text()
    assert after.transfers >= before.transfers + 2
    assert after.transfer_bytes >= before.transfer_bytes + 2 * 65536
    assert after.card_memory > 0 and after.transfer_engines
    j = json.loads(out)
    for key in ("card_memory", "transfer_engines", "transfers",
                "transfer_bytes", "transfer_errors", "transfer_refused"):
        assert getattr(after, key) == j[key], key


def test_clients_lists_this_process_and_its_lease(client):
    mine = [c for c in client.clients() if c.pid == os.getpid()]
    assert mine and all(isinstance(c, fpgad.ClientInfo) for c in mine)
    assert all(c.uid == os.getuid() for c in mine)
    with client.open("small"):
        leases = [lease for c in client.clients() if c.pid == os.getpid()
                  for lease in c.leases]
        assert "small" in leases
    leases = [lease for c in client.clients() if c.pid == os.getpid()
              for lease in c.leases]
    assert "small" not in leases


def test_stats(client):
    with client.open("c2h0") as ch:
        for _ in range(20):
            ch.wait(timeout=5).release()
    s = client.stats("c2h0")
    assert isinstance(s, fpgad.ChannelStats)
    assert s.frames >= 20 and s.bytes >= 20 * 65536
    assert s.mode == "host"


def test_stats_name_the_channel_and_its_latency(client):
    with client.open("c2h0") as ch:
        for _ in range(20):
            ch.wait(timeout=5).release()
    s = client.stats("c2h0")
    assert s.channel == "c2h0"
    assert s.latency_frames >= 20
    assert s.latency_ns_total > 0
    assert s.publish_latency_us == s.latency_ns_total / s.latency_frames / 1e3
    assert s.integrity == "none"
    assert s.last_error is None


def test_stats_latency_unknown_before_a_frame(client):
    s = client.stats("h2c0")
    assert s.channel == "h2c0"
    assert s.latency_frames == 0 and s.publish_latency_us is None


def test_status_counts_a_channels_leases(client):
    with client.open("small"):
        small = [c for c in client.status().channels if c.name == "small"][0]
        assert small.leases == 1
    small = [c for c in client.status().channels if c.name == "small"][0]
    assert small.leases == 0


def test_stats_of_unknown_channel_is_not_found(client):
    with pytest.raises(fpgad.NotFoundError) as e:
        client.stats("nope")
    assert e.value.errno == errno.ENOENT
    assert "stats nope" in str(e.value)


def test_reset_of_a_healthy_channel_is_invalid(client):
    with pytest.raises(fpgad.InvalidError) as e:
        client.reset("c2h0")
    assert e.value.errno == errno.EINVAL
    assert isinstance(e.value, ValueError)


def test_topology_of_the_sim_card(client):
    t = client.topology()
    assert isinstance(t, fpgad.Topology)
    assert t.simulated
    assert {c.name for c in t.channels} >= {"c2h0", "h2c0"}
    assert all(isinstance(c, fpgad.TopoChannel) for c in t.channels)
    assert isinstance(t.card_end, fpgad.TopoEnd)


def test_open_unknown_channel(client):
    with pytest.raises(fpgad.NotFoundError) as e:
        client.open("nope")
    assert "open nope" in str(e.value)
    # The channels there are, so that the fix is one of them.
    assert "channels: c2h0 small slow h2c0" in str(e.value)


def test_second_lessee_is_busy_with_fpgads_message(daemon):
    with fpgad.connect(daemon.url) as a, fpgad.connect(daemon.url) as b:
        with a.open("small") as ch:
            with pytest.raises(fpgad.BusyError) as e:
                b.open("small")
            assert e.value.errno == errno.EBUSY
            # fpgad's own message says who holds it.
            assert str(os.getpid()) in str(e.value)
            assert ch.name == "small"
        # Ended with the with block: b may lease it now.
        b.open("small").close()


def test_shared_readers_both_see_frames(daemon):
    with fpgad.connect(daemon.url) as a, fpgad.connect(daemon.url) as b:
        with a.open("c2h0", shared=True) as x, b.open("c2h0", shared=True) as y:
            # A slot is free again once both have released it: take in turns.
            seen_x, seen_y = [], []
            for _ in range(24):
                with x.wait(timeout=5) as f:
                    seen_x.append(f.seq)
                with y.wait(timeout=5) as f:
                    seen_y.append(f.seq)
            assert seen_y == sorted(seen_y)
            assert set(seen_y[:8]) <= set(seen_x)


def test_channel_attributes(client):
    with client.open("c2h0") as ch:
        assert (ch.name, ch.direction, ch.memory, ch.mode) == ("c2h0", "c2h", "host", "host")
        assert (ch.slots, ch.slot_size, ch.frame_size) == (8, 65536, 65536)
        assert ch.gpu == -1
        assert ch.device == (1, 0)
        assert not ch.closed
        assert "c2h0" in repr(ch)
    assert ch.closed


def test_closed_client_refuses_calls(daemon):
    c = fpgad.connect(daemon.url)
    c.close()
    assert c.closed
    with pytest.raises(fpgad.ClosedError):
        c.status()
    with pytest.raises(fpgad.ClosedError):
        c.open("c2h0")
    c.close()   # twice is fine


def test_closed_channel_refuses_wait(client):
    ch = client.open("small")
    ch.close()
    with pytest.raises(fpgad.ClosedError):
        ch.wait(timeout=0)
    assert list(ch) == []


def test_leases_end_with_the_client(daemon):
    c = fpgad.connect(daemon.url)
    c.open("small")
    c.close()
    with fpgad.connect(daemon.url) as other:
        wait_until(lambda: not any("small" in x.leases for x in other.clients()),
                   what="the lease to end")
        other.open("small").close()


def test_help_shows_docstrings():
    assert "when the last of them" in fpgad.Frame.release.__doc__
    assert "timeout" in fpgad.Channel.wait.__doc__
    assert "Lease channel" in fpgad.Client.open.__doc__
    assert fpgad.Frame.__doc__ and fpgad.FrameView.__doc__
