# SPDX-License-Identifier: MIT
"""Frames in host memory: every one verified in place through the buffer
protocol and DLPack (NumPy), with no copy; metadata, typed views, the
DLPack keywords, iteration, timeouts, newest mode."""

import errno
import re

import pytest

import fpgad

np = pytest.importorskip("numpy")
simframe = pytest.importorskip("fpgad.simframe")

PATTERN = simframe.pattern_bytes(65536)


def test_every_frame_verified_in_place_through_the_buffer_protocol(client):
    with client.open("c2h0") as ch:
        prev = None
        for _ in range(300):
            with ch.wait(timeout=5) as f:
                a = np.frombuffer(f, dtype=np.uint8)
                # The slot itself: no copy, and not writable (c2h).
                assert a.ctypes.data == f.ptr
                assert not a.flags.writeable
                assert a.size == f.length == f.nbytes == 65536
                assert simframe.check(a, seq=f.seq, pattern=PATTERN) == f.seq
                assert f.verify()
                if prev is not None:
                    assert f.seq == prev + 1          # policy block: no gap
                    assert not f.dropped_before and f.lost == 0
                prev = f.seq
                assert f.t_dma_start_ns <= f.t_dma_end_ns <= f.t_publish_ns
                assert not f.error and not f.truncated
                del a


def test_every_frame_verified_in_place_through_dlpack(client):
    with client.open("c2h0") as ch:
        for f in ch:
            with f:
                assert f.__dlpack_device__() == (1, 0)
                a = np.from_dlpack(f)
                assert a.dtype == np.uint8 and a.shape == (65536,)
                assert a.ctypes.data == f.ptr
                assert f.exports == 1
                simframe.check(a, seq=f.seq, pattern=PATTERN)
                del a
                assert f.exports == 0
                if f.seq % 200 == 199:
                    break


def test_memoryview_is_zero_copy_and_read_only(client):
    with client.open("c2h0") as ch, ch.wait(timeout=5) as f:
        m = memoryview(f)
        assert m.readonly and m.nbytes == 65536 and m.format == "B"
        assert bytes(m[:8]) == simframe.MAGIC.to_bytes(8, "little")
        with pytest.raises(TypeError):
            m[0] = 1
        m.release()
        assert f.exports == 0


def test_typed_views(client):
    with client.open("c2h0") as ch, ch.wait(timeout=5) as f:
        hdr = np.asarray(f.view("uint64", 8))
        assert hdr.ctypes.data == f.ptr
        assert int(hdr[0]) == simframe.MAGIC and int(hdr[2]) == f.seq
        assert int(hdr[3]) == f.length
        payload = f.view(np.uint64, (-1, 8), offset=64)
        assert payload.shape == ((65536 - 64) // 64, 8)
        assert payload.dtype == "uint64" and payload.offset == 64
        p = np.from_dlpack(payload)
        assert p.shape == payload.shape and p.ctypes.data == f.ptr + 64
        off = simframe.payload_offset(f.seq)
        assert bytes(p.tobytes()[:64]) == PATTERN[off:off + 64].tobytes()
        v = f.view("float32", (128, 128))
        assert np.asarray(v).shape == (128, 128) and v.nbytes == 65536
        assert memoryview(v).format == "f"
        assert f.view(np.float32).shape == (16384,)
        del hdr, p


def test_view_errors(client):
    with client.open("c2h0") as ch, ch.wait(timeout=5) as f:
        with pytest.raises(TypeError, match="unknown dtype"):
            f.view("float8")
        with pytest.raises(ValueError, match="more than"):
            f.view("uint8", 65537)
        with pytest.raises(ValueError, match="more than"):
            f.view("uint32", (128, 129))
        with pytest.raises(ValueError, match="multiple"):
            f.view("uint32", offset=2)
        with pytest.raises(ValueError, match="divide"):
            f.view("uint8", (-1, 3))
        with pytest.raises(ValueError):
            f.view("uint8", (-1, -1))
        with pytest.raises(ValueError, match="dimensions"):
            f.view("uint8", (1,) * 9)
        with pytest.raises(BufferError, match="bfloat16"):
            memoryview(f.view("bfloat16"))


def test_dlpack_keywords(client):
    with client.open("c2h0") as ch, ch.wait(timeout=5) as f:
        plain = f.__dlpack__()
        assert re.search(r'capsule object "dltensor"', repr(plain))
        versioned = f.__dlpack__(max_version=(1, 0))
        assert re.search(r'capsule object "dltensor_versioned"', repr(versioned))
        old = f.__dlpack__(max_version=(0, 8))
        assert re.search(r'capsule object "dltensor"', repr(old))
        assert f.exports == 3
        # An unconsumed capsule lets go of the frame when it dies.
        del plain, versioned, old
        assert f.exports == 0
        assert f.__dlpack__(stream=None, dl_device=(1, 0), copy=False) is not None
        assert f.exports == 0
        with pytest.raises(BufferError, match="in place"):
            f.__dlpack__(copy=True)
        with pytest.raises(BufferError, match="device"):
            f.__dlpack__(dl_device=(2, 0))
        with pytest.raises(TypeError):
            f.__dlpack__(max_version=1)
        with pytest.raises(TypeError):
            f.__dlpack__(stream="s")
        with pytest.raises(TypeError):
            f.__dlpack__(1)


def test_iteration_yields_frames_in_order(client):
    with client.open("c2h0") as ch:
        seqs = []
        for f in ch:
            seqs.append(f.seq)
            f.release()
            if len(seqs) == 50:
                break
        assert seqs == list(range(seqs[0], seqs[0] + 50))


def test_wait_timeout(client):
    with client.open("slow") as ch:
        # frame_rate 2: drain what is there, then take one as it lands;
        # the next is ~0.5 s away.
        for _ in range(8):
            try:
                ch.wait(timeout=0).release()
            except fpgad.TimeoutError:
                break
        with ch.wait(timeout=5) as f:
            assert f.length == 4096
        with pytest.raises(fpgad.TimeoutError) as e:
            ch.wait(timeout=0)
        assert e.value.errno == errno.ETIMEDOUT
        assert isinstance(e.value, TimeoutError)
        with pytest.raises(fpgad.TimeoutError):
            ch.wait(timeout=0.05)
        with pytest.raises(ValueError):
            ch.wait(timeout=-1)
        with pytest.raises(TypeError):
            ch.wait(timeout="1")


def test_newest_skips_older_frames(client):
    with client.open("c2h0", newest=True) as ch:
        f = ch.wait(timeout=5)
        f.release()
        import time
        time.sleep(0.05)
        g = ch.wait(timeout=5)
        assert g.skipped > 0
        assert g.dropped_before and g.lost >= g.skipped
        g.release()


def test_frame_repr_and_channel(client):
    with client.open("c2h0") as ch:
        f = ch.wait(timeout=5)
        assert f.channel is ch
        assert "seq %d" % f.seq in repr(f) and "held" in repr(f)
        f.release()
        assert "released" in repr(f)
