# SPDX-License-Identifier: MIT
"""bench_python.py - a Python consumer of one fpgad channel, the Python
counterpart of bench_stream's consumer: each frame is taken, wrapped as a
tensor through DLPack and released; prints one JSON line.

    bench_python.py [--seconds S] [--warmup N] [--wrap KIND] URL CHANNEL

--wrap: numpy (numpy.from_dlpack), torch (torch.from_dlpack), cupy
(cupy.from_dlpack), capsule (frame.__dlpack__() only, no framework), or
auto (default: torch for GPU memory when it imports, else cupy, else
capsule; numpy for host memory).  The loop is the idiom of the README:

    with ch.wait() as f:
        t = from_dlpack(f)

so the tensor outlives the with block until the next frame's rebinds it,
and each release runs deferred, from the DLPack deleter.  CPU time is this
process's (getrusage) over the measured window.  Needs PYTHONPATH to hold
the built package (BUILD/python).
"""

import argparse
import json
import platform
import resource
import sys
import time

import fpgad


def wrapper(kind, ch):
    if kind == "auto":
        if ch.memory == "host":
            kind = "numpy"
        else:
            for k in ("torch", "cupy"):
                try:
                    __import__(k)
                    kind = k
                    break
                except ImportError:
                    pass
            else:
                kind = "capsule"
    if kind == "numpy":
        import numpy
        return kind, numpy.from_dlpack
    if kind == "torch":
        import torch
        return kind, torch.from_dlpack
    if kind == "cupy":
        import cupy
        return kind, cupy.from_dlpack
    return "capsule", lambda f: f.__dlpack__()


def cpu_s():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def main():
    ap = argparse.ArgumentParser(description="a Python consumer of an fpgad channel")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--warmup", type=int, default=32)
    ap.add_argument("--wrap", default="auto",
                    choices=["auto", "numpy", "torch", "cupy", "capsule"])
    ap.add_argument("url")
    ap.add_argument("channel")
    a = ap.parse_args()

    with fpgad.connect(a.url) as c, c.open(a.channel) as ch:
        kind, wrap = wrapper(a.wrap, ch)
        for _ in range(a.warmup):
            with ch.wait(timeout=10) as f:
                t = wrap(f)
        frames = nbytes = gaps = 0
        prev = None
        c0 = cpu_s()
        t0 = time.monotonic()
        end = t0 + a.seconds
        while True:
            with ch.wait(timeout=10) as f:
                t = wrap(f)
                frames += 1
                nbytes += f.length
                if prev is not None and f.seq != prev + 1:
                    gaps += 1
                prev = f.seq
            if frames % 64 == 0 and time.monotonic() >= end:
                break
        dt = time.monotonic() - t0
        cpu = cpu_s() - c0
        del t
        out = {
            "bench": "python", "wrap": kind, "memory": ch.memory, "mode": ch.mode,
            "frame_size": ch.frame_size, "seconds": round(dt, 3), "frames": frames,
            "fps": round(frames / dt, 1), "gbps": round(nbytes / dt / 1e9, 3),
            "gaps": gaps, "client_cpu_us_per_frame": round(cpu * 1e6 / frames, 2),
            "python": platform.python_version(),
        }
    print(json.dumps(out, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
