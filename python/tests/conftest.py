# SPDX-License-Identifier: MIT
"""Real fpgad processes for the Python tests: each in a temporary runtime
directory, with a NOTIFY_SOCKET of the test's own to learn when it is ready
(as tests/integration/harness.c does).  FPGAD_BUILD names the build tree
(default: build)."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

import fpgad

BUILD = os.environ.get("FPGAD_BUILD", "build")
FRAME = 64 * 1024

# Host memory only: these tests run without a GPU.
CONFIG = """\
[daemon]
log_level = debug

[channel c2h0]
direction = c2h
engine = 0
slots = 8
slot_size = 64K
frame_size = 64K
frame_rate = 0
memory = host
mode = host
policy = block

[channel small]
direction = c2h
engine = 1
slots = 4
slot_size = 64K
frame_size = 64K
frame_rate = 0
memory = host
mode = host
policy = block

[channel slow]
direction = c2h
engine = 2
slots = 4
slot_size = 4K
frame_size = 4K
frame_rate = 2
memory = host
mode = host
policy = drop-oldest

[channel h2c0]
direction = h2c
engine = 0
slots = 4
slot_size = 64K
frame_size = 64K
memory = host
mode = host
"""


class Fpgad:
    """One fpgad process on the simulated card."""

    def __init__(self, config=CONFIG):
        self.dir = tempfile.mkdtemp(prefix="fpgad-py.")
        self.url = "ipc://%s/fpgad.sock" % self.dir
        self.conf = os.path.join(self.dir, "fpgad.conf")
        self.log = os.path.join(self.dir, "fpgad.log")
        with open(self.conf, "w") as f:
            f.write(config)
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify_path = os.path.join(self.dir, "notify.sock")
        self.notify.bind(self.notify_path)
        self.proc = None
        self.start()

    def start(self):
        env = dict(os.environ, NOTIFY_SOCKET=self.notify_path)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [os.path.join(BUILD, "fpgad"), "-v", "-c", self.conf,
                 "--runtime-dir", self.dir],
                stdout=log, stderr=log, env=env)
        deadline = time.monotonic() + 10
        self.notify.settimeout(0.2)
        while time.monotonic() < deadline:
            try:
                if b"READY=1" in self.notify.recv(4096):
                    return
            except socket.timeout:
                if self.proc.poll() is not None:
                    break
        raise RuntimeError("fpgad did not become ready:\n" + self.log_text())

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def restart(self, sig=signal.SIGKILL):
        self.kill(sig)
        self.start()

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        status = None
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                status = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.notify.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return status


@pytest.fixture(scope="module")
def daemon():
    """fpgad shared by the tests of a module."""
    d = Fpgad()
    yield d
    assert d.stop() == 0, d.log_text()


@pytest.fixture
def own_daemon():
    """fpgad of one test's own (restarts, kills)."""
    d = Fpgad()
    yield d
    d.stop()


@pytest.fixture
def client(daemon):
    with fpgad.connect(daemon.url) as c:
        yield c


def wait_until(cond, timeout=5.0, what="condition"):
    """Poll cond() until true; fail the test after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    pytest.fail("timed out waiting for " + what)
