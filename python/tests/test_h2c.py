# SPDX-License-Identifier: MIT
"""h2c from Python: empty buffers filled in place (buffer protocol, DLPack
through NumPy, write()) and handed to the card, which checks every frame."""

import pytest

import fpgad
from conftest import wait_until

np = pytest.importorskip("numpy")
simframe = pytest.importorskip("fpgad.simframe")

SIZE = 65536


def card_counts(client):
    s = client.stats("h2c0")
    return s.card_good, s.card_bad


def test_buffers_filled_in_place_reach_the_card(client):
    good0, bad0 = card_counts(client)
    n = 0
    with client.open("h2c0") as ch:
        assert ch.direction == "h2c"
        for seq in range(60):
            buf = ch.buffer(timeout=5)
            assert buf.length == 0 and buf.nbytes == ch.slot_size == SIZE
            frame = simframe.make(seq, SIZE)
            if seq % 3 == 0:
                a = np.frombuffer(buf, dtype=np.uint8)      # writable, in place
                assert a.flags.writeable and a.ctypes.data == buf.ptr
                a[:] = frame
                del a
            elif seq % 3 == 1:
                a = np.from_dlpack(buf.view("uint64"))
                assert a.ctypes.data == buf.ptr
                if not a.flags.writeable:
                    # NumPy before 2.1 makes every DLPack array read-only.
                    a = np.frombuffer(buf.view("uint64"), dtype=np.uint64)
                a[:] = frame.view(np.uint64)
                del a
            else:
                assert buf.write(frame) == SIZE
            ch.submit(buf, SIZE)
            assert buf.state == "released"
            with pytest.raises(fpgad.ReleasedError):
                memoryview(buf)
            n += 1
    wait_until(lambda: card_counts(client)[0] >= good0 + n, what="the card to check them")
    assert card_counts(client) == (good0 + n, bad0)


def test_a_bad_frame_is_rejected_by_the_card(client):
    good0, bad0 = card_counts(client)
    with client.open("h2c0") as ch:
        buf = ch.buffer(timeout=5)
        frame = simframe.make(7, SIZE)
        frame[1000] ^= 0xFF
        buf.write(frame)
        ch.submit(buf, SIZE)
    wait_until(lambda: card_counts(client)[1] > bad0, what="the card to reject it")
    assert card_counts(client)[0] == good0


def test_submit_errors(client):
    with client.open("h2c0") as ch, client.open("small") as c2h:
        with pytest.raises(ValueError, match="c2h"):
            c2h.buffer(timeout=0)
        f = c2h.wait(timeout=5)
        with pytest.raises(ValueError):
            ch.submit(f, 64)              # another channel's frame
        with pytest.raises(ValueError, match="read-only"):
            f.write(b"x")
        f.release()
        buf = ch.buffer(timeout=5)
        with pytest.raises(ValueError, match="length"):
            ch.submit(buf, 0)
        with pytest.raises(ValueError, match="length"):
            ch.submit(buf, SIZE + 1)
        with pytest.raises(ValueError, match="do not fit"):
            buf.write(bytes(SIZE + 1))
        with pytest.raises(TypeError):
            ch.submit(b"bytes", 64)
        buf.release()                     # given back unused
        with pytest.raises(fpgad.ReleasedError):
            ch.submit(buf, 64)
        with pytest.raises(fpgad.ReleasedError):
            buf.write(b"x")


def test_a_buffer_submitted_with_a_live_view_goes_at_once(client):
    good0, _ = card_counts(client)
    with client.open("h2c0") as ch:
        buf = ch.buffer(timeout=5)
        a = np.frombuffer(buf, dtype=np.uint8)
        a[:] = simframe.make(0, SIZE)
        ch.submit(buf, SIZE)
        # Submitted, not deferred: the card has it although a is alive.
        wait_until(lambda: card_counts(client)[0] > good0, what="the card to take it")
        assert buf.state == "released" and buf.exports == 1
        del a
        assert ch.exported == 0
