# SPDX-License-Identifier: MIT
"""The frame format of fpgad's simulated card (include/fpgad_simframe.h),
in NumPy: make and check frames without a card, e.g. to test a pipeline.

A frame of L bytes is a 64-byte header (magic, header size, source,
sequence number N, length L, payload CRC-32C, flags, a checksum) and a
payload: the bytes of an endless pattern of little-endian splitmix64 words
starting at byte (N mod 4093) * 8.  Needs numpy.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

MAGIC = 0x4D52465344475046
HDR_SIZE = 64
OFFSET_WORDS = 4093
F_CRC = 0x1

# Header layout, as uint64 words: magic, hdr_size | source << 32, seq,
# length, payload_crc | flags << 32, reserved[2], check.
_M64 = (1 << 64) - 1


def _mix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def pattern_words(n: int) -> np.ndarray:
    """Words 0..n-1 of the pattern, as uint64."""
    with np.errstate(over="ignore"):
        x = np.arange(n, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def pattern_bytes(max_frame: int) -> np.ndarray:
    """Enough pattern (uint8) to check any frame of up to max_frame bytes by
    slicing: payload_offset(seq) onwards."""
    payload = max(max_frame - HDR_SIZE, 0)
    words = (payload + 7) // 8 + OFFSET_WORDS
    return pattern_words(words).view(np.uint8)


def payload_offset(seq: int) -> int:
    """Where frame seq's payload starts in the pattern, in bytes."""
    return (seq % OFFSET_WORDS) * 8


def header_check(words: np.ndarray) -> int:
    """The checksum of a header given as its 8 uint64 words."""
    c = MAGIC
    for w in words[:7]:
        c = _mix(c ^ int(w))
    return c


def header(seq: int, length: int, source: int = 0) -> np.ndarray:
    """The 64-byte header (uint8) of frame seq, without a CRC."""
    w = np.zeros(8, dtype=np.uint64)
    w[0] = MAGIC
    w[1] = HDR_SIZE | (source << 32)
    w[2] = seq
    w[3] = length
    w[7] = header_check(w)
    return w.view(np.uint8)


def make(seq: int, length: int, source: int = 0) -> np.ndarray:
    """Frame seq, length bytes, as the sim card writes it (without a CRC:
    the card's h2c sink checks the pattern)."""
    if length < HDR_SIZE:
        raise ValueError("a sim frame is at least %d bytes" % HDR_SIZE)
    out = np.empty(length, dtype=np.uint8)
    out[:HDR_SIZE] = header(seq, length, source)
    off = payload_offset(seq)
    out[HDR_SIZE:] = pattern_bytes(length)[off:off + length - HDR_SIZE]
    return out


class CheckError(ValueError):
    """A frame that is not what the sim card sent."""


def check(buf, seq: Optional[int] = None, pattern: Optional[np.ndarray] = None) -> int:
    """Check a frame in host memory (anything with the buffer protocol, a
    Frame included) against the format; returns its sequence number.
    Raises CheckError naming the first problem.  pattern: pattern_bytes()
    of at least the frame's length, to save making it each time."""
    b = np.frombuffer(buf, dtype=np.uint8)
    if b.size < HDR_SIZE:
        raise CheckError("%d bytes: shorter than a header" % b.size)
    w = b[:HDR_SIZE].view(np.uint64)
    if int(w[0]) != MAGIC:
        raise CheckError("bad magic %#x" % int(w[0]))
    if int(w[1]) & 0xFFFFFFFF != HDR_SIZE:
        raise CheckError("bad header size %d" % (int(w[1]) & 0xFFFFFFFF))
    if int(w[7]) != header_check(w):
        raise CheckError("bad header checksum")
    if int(w[3]) != b.size:
        raise CheckError("header says %d bytes, the frame has %d" % (int(w[3]), b.size))
    got = int(w[2])
    if seq is not None and got != seq:
        raise CheckError("sequence number %d, expected %d" % (got, seq))
    if pattern is None or pattern.size < b.size - HDR_SIZE + OFFSET_WORDS * 8:
        pattern = pattern_bytes(b.size)
    off = payload_offset(got)
    want = pattern[off:off + b.size - HDR_SIZE]
    if not np.array_equal(b[HDR_SIZE:], want):
        bad = int(np.argmax(b[HDR_SIZE:] != want))
        raise CheckError("frame %d: payload differs at byte %d" % (got, HDR_SIZE + bad))
    return got
