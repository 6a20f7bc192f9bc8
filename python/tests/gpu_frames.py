# SPDX-License-Identifier: MIT
"""GPU tests of the Python package, run by tests/gpu/run.sh with plain
python3 (no pytest needed): every frame of a channel verified in place on
the GPU through torch.from_dlpack or cupy.from_dlpack, and a lease left by
a Python process killed with frames held.

    gpu_frames.py verify --lib torch|cupy|numpy [--release stream|sync]
                  [--frames N] [--timeout S] URL CHANNEL
    gpu_frames.py kill --lib torch|cupy|numpy [--timeout S] URL CHANNEL

verify: each frame is taken as a uint8 tensor of the framework, which must
be the slot itself (its data pointer is the frame's, on the channel's
device: no copy), then checked by GPU work queued on the current stream:
the header's magic, sequence number and length, and every payload word
against the sim card's pattern (uploaded once).  --release stream (the
default) releases each frame on that stream behind its checks, so the CPU
never waits; sync waits for the checks, drops the tensors and releases.
Results are read back once at the end.  numpy runs the same on host
memory (GPU_TEST_HOST=1 in tests/gpu/run.sh).

kill: a child process leases the channel, takes frames and holds tensors
of them; it is killed (SIGKILL); fpgad must end its lease, and this process
must then lease the channel and take frames.

Prints one JSON line; exit 0 passed, 1 failed, 77 skipped (the reason).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

SKIP = 77


def skip(why):
    print("gpu_frames: SKIP: " + why)
    sys.exit(SKIP)


def fail(why):
    print("gpu_frames: FAIL: " + why)
    sys.exit(1)


class Torch:
    def __init__(self, device):
        import torch
        if not torch.cuda.is_available():
            skip("torch sees no CUDA device")
        self.t = torch
        self.dev = torch.device("cuda", device)
        torch.cuda.set_device(self.dev)

    def stream(self):
        return self.t.cuda.current_stream()

    def sync(self):
        self.t.cuda.synchronize()

    def take(self, obj):
        return self.t.from_dlpack(obj)

    def ptr(self, x):
        return x.data_ptr()

    def device_of(self, x):
        return (2, x.device.index) if x.is_cuda else (1, 0)

    def upload(self, np_array):
        return self.t.from_numpy(np_array).to(self.dev)

    def zeros(self, n):
        return self.t.zeros(n, dtype=self.t.int64, device=self.dev)

    def bad(self, hdr, payload, pattern, seq, length, magic):
        h = (hdr[0] != magic) | (hdr[2] != seq) | (hdr[3] != length)
        return h | (payload != pattern).any()

    def host(self, x):
        return x.cpu().numpy()


class Cupy(Torch):
    def __init__(self, device):
        import cupy
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except cupy.cuda.runtime.CUDARuntimeError as e:
            skip("cupy sees no CUDA device: %s" % e)
        if n < 1:
            skip("cupy sees no CUDA device")
        self.c = cupy
        cupy.cuda.Device(device).use()

    def stream(self):
        return self.c.cuda.get_current_stream()

    def sync(self):
        self.c.cuda.Device().synchronize()

    def take(self, obj):
        return self.c.from_dlpack(obj)

    def ptr(self, x):
        return x.data.ptr

    def device_of(self, x):
        return (2, x.device.id)

    def upload(self, np_array):
        return self.c.asarray(np_array)

    def zeros(self, n):
        return self.c.zeros(n, dtype=self.c.int64)

    def host(self, x):
        return self.c.asnumpy(x)


class Numpy(Torch):
    """Host memory: the same checks on the CPU, for runs without a GPU."""

    def __init__(self, device):
        import numpy
        self.n = numpy

    def stream(self):
        return None

    def sync(self):
        pass

    def take(self, obj):
        return self.n.from_dlpack(obj)

    def ptr(self, x):
        return x.ctypes.data

    def device_of(self, x):
        return (1, 0)

    def upload(self, np_array):
        return np_array

    def zeros(self, n):
        return self.n.zeros(n, dtype=self.n.int64)

    def bad(self, hdr, payload, pattern, seq, length, magic):
        return bool(hdr[0] != magic or hdr[2] != seq or hdr[3] != length or
                    not self.n.array_equal(payload, pattern))

    def host(self, x):
        return x


LIBS = {"torch": Torch, "cupy": Cupy, "numpy": Numpy}


def load(args, ch):
    try:
        import numpy  # noqa: F401  (the pattern is made with it)
    except ImportError:
        skip("numpy is not installed")
    try:
        return LIBS[args.lib](ch.device[1])
    except ImportError as e:
        skip("%s is not installed (%s)" % (args.lib, e))


def verify(args):
    import fpgad

    c = fpgad.connect(args.url)
    ch = c.open(args.channel)
    lib = load(args, ch)
    from fpgad import simframe
    want = 1 if args.lib == "numpy" else 2
    if ch.device[0] != want:
        fail("channel %s is in %s memory: %s needs %s memory" %
             (ch.name, ch.memory, args.lib, "host" if want == 1 else "cuda"))
    size = ch.frame_size
    if (size - simframe.HDR_SIZE) % 8:
        fail("frame size %d: the payload is not whole words" % size)
    pattern = lib.upload(simframe.pattern_bytes(size).view("int64"))
    magic = simframe.MAGIC
    if magic >= 1 << 63:
        magic -= 1 << 64
    results = lib.zeros(args.frames)
    words = (size - simframe.HDR_SIZE) // 8
    bad_ptr = bad_dev = gaps = 0
    prev = None
    stream = lib.stream() if args.release == "stream" else None
    t0 = time.monotonic()
    for i in range(args.frames):
        f = ch.wait(timeout=args.timeout)
        whole = lib.take(f)
        hdr = lib.take(f.view("int64", 8))
        payload = lib.take(f.view("int64", offset=simframe.HDR_SIZE))
        # In place: the framework's tensor is the slot, on its device.
        if lib.ptr(whole) != f.ptr or lib.ptr(payload) != f.ptr + simframe.HDR_SIZE:
            bad_ptr += 1
        if lib.device_of(whole) != ch.device or tuple(whole.shape) != (f.length,):
            bad_dev += 1
        off = simframe.payload_offset(f.seq) // 8
        results[i] = lib.bad(hdr, payload, pattern[off:off + words], f.seq, f.length, magic)
        if prev is not None and f.seq != prev + 1:
            gaps += 1
        prev = f.seq
        if stream is not None:
            f.release(stream=stream)
        else:
            lib.sync()
            del whole, hdr, payload
            f.release()
            if f.state != "released":
                fail("frame %d still %s after its tensors went" % (f.seq, f.state))
    lib.sync()
    dt = time.monotonic() - t0
    if args.frames and stream is not None:
        # The last frame's tensors are the only exports that may be left.
        del whole, hdr, payload
    res = lib.host(results)
    errors = int((res != 0).sum())
    out = {"lib": args.lib, "channel": ch.name, "memory": ch.memory, "mode": ch.mode,
           "device": list(ch.device), "release": args.release, "frames": args.frames,
           "verified": args.frames - errors, "errors": errors, "not_in_place": bad_ptr,
           "wrong_device": bad_dev, "seq_gaps": gaps, "exported_after": ch.exported,
           "fps": round(args.frames / dt, 1)}
    ch.close()
    c.close()
    print(json.dumps(out))
    if errors or bad_ptr or bad_dev or gaps or out["exported_after"]:
        first = int(res.nonzero()[0][0]) if errors else -1
        fail("%d bad frames (first: #%d), %d not in place, %d on the wrong device, "
             "%d sequence gaps" % (errors, first, bad_ptr, bad_dev, gaps))


CHILD = """
import sys, time, fpgad
sys.path.insert(0, sys.argv[4])
import gpu_frames
c = fpgad.connect(sys.argv[1])
ch = c.open(sys.argv[2])
lib = gpu_frames.LIBS[sys.argv[3]](ch.device[1])
frames = [ch.wait(timeout=10) for _ in range(min(3, ch.slots - 1))]
tensors = [lib.take(f) for f in frames]
lib.sync()
print("holding %d" % len(frames), flush=True)
time.sleep(120)
"""


def leases(c, pid):
    return [lease for x in c.clients() if x.pid == pid for lease in x.leases]


def kill(args):
    import fpgad

    c = fpgad.connect(args.url)
    with c.open(args.channel) as ch:
        load(args, ch)            # skips without the framework or a GPU
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.Popen([sys.executable, "-c", CHILD, args.url, args.channel, args.lib, here],
                         stdout=subprocess.PIPE, env=env)
    try:
        line = p.stdout.readline().decode().strip()
        if not line.startswith("holding"):
            fail("the child did not take frames (exit %s): %r" % (p.poll(), line))
        if args.channel not in leases(c, p.pid):
            fail("the child's lease is not listed by fpgad")
        try:
            c.open(args.channel).close()
            fail("a second exclusive lease was granted while the child held one")
        except fpgad.BusyError:
            pass
        t_kill = time.monotonic()
        p.send_signal(signal.SIGKILL)
        p.wait()
        deadline = t_kill + args.timeout
        while args.channel in leases(c, p.pid):
            if time.monotonic() > deadline:
                fail("fpgad kept the killed process's lease for %.0f s" % args.timeout)
            time.sleep(0.02)
        freed_ms = (time.monotonic() - t_kill) * 1000
        with c.open(args.channel) as ch:
            for _ in range(2 * ch.slots):
                ch.wait(timeout=args.timeout).release()
        out = {"lib": args.lib, "channel": args.channel, "child_pid": p.pid,
               "held": int(line.split()[1]), "lease_freed_ms": round(freed_ms, 1),
               "frames_after": 2 * ch.slots}
        print(json.dumps(out))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["verify", "kill"])
    ap.add_argument("--lib", choices=sorted(LIBS), required=True)
    ap.add_argument("--release", choices=["stream", "sync"], default="stream")
    ap.add_argument("--frames", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("url")
    ap.add_argument("channel")
    args = ap.parse_args()
    if args.lib == "numpy" and args.release == "stream":
        args.release = "sync"
    try:
        import fpgad  # noqa: F401
    except ImportError as e:
        fail("cannot import fpgad (PYTHONPATH=BUILD/python): %s" % e)
    (verify if args.what == "verify" else kill)(args)


if __name__ == "__main__":
    main()
