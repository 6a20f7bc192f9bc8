# SPDX-License-Identifier: MIT
"""The lifetime rules: release, deferred release while views live, views
after release, channel and client closed under live views, frames
collected unreleased, stream-ordered release without a GPU, reconnect, a
killed process's lease, threads and signals."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import fpgad
from conftest import BUILD, wait_until

np = pytest.importorskip("numpy")
simframe = pytest.importorskip("fpgad.simframe")


def leases_of(client, pid=None):
    pid = pid or os.getpid()
    return [lease for c in client.clients() if c.pid == pid for lease in c.leases]


def take_until(ch, exc):
    """Frames published before fpgad went are still taken: then exc."""
    with pytest.raises(exc) as e:
        for _ in range(ch.slots + 1):
            ch.wait(timeout=10).release()
    return e


def test_views_after_release_raise(client):
    with client.open("c2h0") as ch:
        f = ch.wait(timeout=5)
        v = f.view("uint32")
        f.release()
        assert f.state == "released"
        for make in (lambda: memoryview(f), lambda: f.view("uint8"),
                     lambda: f.__dlpack__(), lambda: np.from_dlpack(f),
                     lambda: memoryview(v), lambda: v.__dlpack__(), lambda: f.verify()):
            with pytest.raises(fpgad.ReleasedError, match="released"):
                make()
        assert isinstance(fpgad.ReleasedError("x"), ValueError)
        f.release()            # twice: nothing happens
        assert f.state == "released"


def test_with_releases(client):
    with client.open("c2h0") as ch:
        with ch.wait(timeout=5) as f:
            assert f.state == "held"
        assert f.state == "released"
        with pytest.raises(KeyError):
            with ch.wait(timeout=5) as g:
                raise KeyError("the body's exception goes through")
        assert g.state == "released"


def test_release_with_a_live_view_is_deferred(client):
    # 4 slots, policy block: a held slot is one fpgad cannot write.
    with client.open("small") as ch:
        f = ch.wait(timeout=5)
        a = np.frombuffer(f, dtype=np.uint8)
        seq = f.seq
        f.release()
        assert f.state == "pending" and f.exports == 1
        # Many more frames pass through the other three slots...
        for _ in range(40):
            ch.wait(timeout=5).release()
        # ... and the view still holds its own frame, unchanged.
        assert simframe.check(a, seq=seq) == seq
        del a
        assert f.state == "released" and f.exports == 0
        assert ch.exported == 0


def test_deferred_release_through_dlpack(client):
    with client.open("small") as ch:
        f = ch.wait(timeout=5)
        t = np.from_dlpack(f.view("uint64", offset=64))
        f.release()
        assert f.state == "pending"
        assert ch.exported == 1
        del t                      # the DLPack deleter runs the release
        assert f.state == "released"
        assert ch.exported == 0


def test_views_hold_slots_until_they_go(client):
    # Every slot held by a view: the card has nowhere to write.
    with client.open("small") as ch:
        frames = [ch.wait(timeout=5) for _ in range(ch.slots)]
        views = [memoryview(f) for f in frames]
        for f in frames:
            f.release()
        assert all(f.state == "pending" for f in frames)
        with pytest.raises(fpgad.TimeoutError):
            ch.wait(timeout=0.3)
        for v in views:
            v.release()
        assert all(f.state == "released" for f in frames)
        ch.wait(timeout=5).release()


def test_frames_collected_unreleased_are_released(client):
    with client.open("small") as ch:
        for _ in range(3 * ch.slots):
            f = ch.wait(timeout=5)
            assert f.state == "held"
        # Each rebinding dropped the previous one: nothing stalled.
        del f
        ch.wait(timeout=5).release()


def test_a_released_frame_collected_later_leaves_the_slot_alone(client):
    """A Frame released, then collected after a newer frame took its slot,
    must not release that slot again: the newer frame stays held and its
    own release works."""
    import gc

    with client.open("small") as ch:
        old = ch.wait(timeout=5)
        slot = old.slot
        old.release()
        for _ in range(4 * ch.slots):
            new = ch.wait(timeout=5)
            if new.slot == slot:
                break
            new.release()
        assert new.slot == slot
        del old
        gc.collect()
        assert new.state == "held"
        new.release()
        ch.wait(timeout=5).release()


def test_close_with_a_live_view_keeps_the_lease_until_it_goes(client, daemon):
    ch = client.open("small")
    f = ch.wait(timeout=5)
    other = ch.wait(timeout=5)
    a = np.frombuffer(f, dtype=np.uint8)
    seq = f.seq
    ch.close()
    assert ch.closed and f.state == "pending"
    assert other.state == "released"         # no view: released at close
    with pytest.raises(fpgad.ClosedError):
        ch.wait(timeout=0)
    # The ring is still mapped and the slot still ours.
    assert "small" in leases_of(client)
    assert simframe.check(a, seq=seq) == seq
    del a
    assert f.state == "released"
    wait_until(lambda: "small" not in leases_of(client), what="the lease to end")


def test_client_close_with_a_live_view_disconnects_when_it_goes(daemon):
    with fpgad.connect(daemon.url) as watcher:
        c = fpgad.connect(daemon.url)
        ch = c.open("small")
        f = ch.wait(timeout=5)
        t = np.from_dlpack(f)
        c.close()
        assert c.closed and ch.closed
        assert "small" in leases_of(watcher)
        assert int(t[:64].view(np.uint64)[2]) == f.seq
        del t
        assert f.state == "released"
        wait_until(lambda: "small" not in leases_of(watcher), what="the lease to end")


def test_channel_dropped_with_frames_ends_the_lease(daemon):
    with fpgad.connect(daemon.url) as c:
        ch = c.open("small")
        frames = [ch.wait(timeout=5) for _ in range(2)]
        del ch, frames
        wait_until(lambda: "small" not in leases_of(c), what="the lease to end")


def test_stream_release_takes_every_kind_of_stream(client):
    class TorchLike:
        cuda_stream = 0

    class CupyLike:
        ptr = 0

    class Protocol:
        def __cuda_stream__(self):
            return (0, 0)

    with client.open("small") as ch:
        for s in (0, TorchLike(), CupyLike(), Protocol()):
            f = ch.wait(timeout=5)
            try:
                f.release(stream=s)
            except fpgad.Error as e:
                # No CUDA (or no driver) here: refused, and the frame is
                # still ours to release.
                assert e.errno is not None
                assert f.state == "held"
                f.release()
            # With CUDA, the legacy default stream gives the slot back.
            assert f.state == "released"
        f = ch.wait(timeout=5)
        with pytest.raises(TypeError):
            f.release(stream="default")
        with pytest.raises(TypeError):
            f.release(stream=object())
        with pytest.raises(ValueError):
            f.release(stream=-1)
        assert f.state == "held"
        f.release()
        assert f.state == "released"


def test_a_killed_process_frees_its_lease(daemon, client):
    script = textwrap.dedent("""
        import sys, time, numpy, fpgad
        c = fpgad.connect(sys.argv[1])
        ch = c.open("small")
        frames = [ch.wait(timeout=5) for _ in range(3)]
        views = [numpy.from_dlpack(f) for f in frames]
        print("holding", flush=True)
        time.sleep(60)
    """)
    env = dict(os.environ)
    p = subprocess.Popen([sys.executable, "-c", script, daemon.url],
                         stdout=subprocess.PIPE, env=env)
    try:
        assert p.stdout.readline().strip() == b"holding"
        assert "small" in leases_of(client, p.pid)
        with pytest.raises(fpgad.BusyError):
            client.open("small")
        p.kill()
        p.wait()
        wait_until(lambda: "small" not in leases_of(client, p.pid),
                   what="fpgad to end the dead process's lease")
        with client.open("small") as ch:
            for _ in range(2 * ch.slots):
                ch.wait(timeout=5).release()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_lease_lost_when_fpgad_dies(own_daemon):
    with fpgad.connect(own_daemon.url) as c, c.open("small") as ch:
        f = ch.wait(timeout=5)
        own_daemon.kill()
        e = take_until(ch, fpgad.LeaseLostError)
        assert isinstance(e.value, ConnectionError)
        f.release()            # the frame went with the lease: no error
        assert f.state == "released"


def test_reconnect_replaces_the_ring(own_daemon):
    with fpgad.connect(own_daemon.url, reconnect=True) as c, c.open("small") as ch:
        f = ch.wait(timeout=5)
        own_daemon.restart()
        take_until(ch, fpgad.ReconnectedError)
        assert f.state == "released"
        with pytest.raises(fpgad.ReleasedError, match="ring was replaced"):
            memoryview(f)
        f.release()
        with ch.wait(timeout=5) as g:
            simframe.check(np.frombuffer(g, np.uint8), seq=g.seq)


def test_reconnect_waits_for_views_of_the_old_ring(own_daemon):
    with fpgad.connect(own_daemon.url, reconnect=True) as c, c.open("small") as ch:
        f = ch.wait(timeout=5)
        a = np.frombuffer(f, dtype=np.uint8)
        seq = f.seq
        own_daemon.restart()
        e = take_until(ch, fpgad.LeaseLostError)
        assert "live views" in str(e.value)
        # The old ring is still mapped under the view.
        assert simframe.check(a, seq=seq) == seq
        del a
        f.release()
        with pytest.raises(fpgad.ReconnectedError):
            ch.wait(timeout=10)
        with ch.wait(timeout=5) as g:
            simframe.check(np.frombuffer(g, np.uint8), seq=g.seq)


def test_iteration_rides_through_a_restart(own_daemon):
    with fpgad.connect(own_daemon.url, reconnect=True) as c, c.open("small") as ch:
        n = 0
        for f in ch:
            with f:
                simframe.check(np.frombuffer(f, np.uint8), seq=f.seq)
            n += 1
            if n == 5:
                own_daemon.restart()
            if n == 10:
                break


def test_other_threads_run_while_one_waits(client):
    with client.open("slow") as ch:
        for _ in range(8):
            try:
                ch.wait(timeout=0).release()
            except fpgad.TimeoutError:
                break
        got = []
        t = threading.Thread(target=lambda: got.append(ch.wait(timeout=5)))
        t.start()
        # The waiting thread let the GIL and the connection go in turn.
        for _ in range(5):
            assert client.status().pid > 0
        t.join()
        assert got and got[0].length == 4096
        got[0].release()


def test_a_signal_interrupts_a_wait_forever(client):
    class Interrupted(Exception):
        pass

    def handler(sig, frame):
        raise Interrupted()

    with client.open("small") as ch:
        frames = [ch.wait(timeout=5) for _ in range(ch.slots)]   # ring stalled
        old = signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        t0 = time.monotonic()
        try:
            with pytest.raises(Interrupted):
                ch.wait()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        assert time.monotonic() - t0 < 5
        for f in frames:
            f.release()


def test_a_view_dropped_by_another_thread_releases_the_frame(client):
    with client.open("small") as ch:
        f = ch.wait(timeout=5)
        holder = [np.from_dlpack(f), memoryview(f)]
        f.release()
        assert f.state == "pending"
        t = threading.Thread(target=holder.clear)
        t.start()
        t.join()
        assert f.state == "released" and ch.exported == 0
