# SPDX-License-Identifier: MIT
"""fpgad for Python: frames from an FPGA card, zero-copy into PyTorch, CuPy
and NumPy.

fpgad owns the card and streams frames into a ring of buffers in GPU (or
host) memory; this package leases a channel and hands each frame to your
framework in place, through DLPack (GPU and host memory) or the buffer
protocol (host memory)::

    import fpgad, torch

    with fpgad.connect() as client, client.open("c2h0") as ch:
        for frame in ch:
            with frame:
                x = torch.from_dlpack(frame)          # uint8, the slot itself
                y = (x.float() - 128.0) / 64.0        # runs on the GPU
                ...

Lifetime rules (the slot is fpgad's ring memory, reused for later frames):

* A frame is held until ``release()`` (or the end of its ``with``).  A frame
  garbage collected while held is released.
* ``release()`` with DLPack tensors or buffer views of the frame still alive
  is deferred: the slot goes back to fpgad when the last of them is gone
  (``frame.state == "pending"`` meanwhile), so a live view never sees the
  slot reused.  A view kept for long holds a slot for long: a ring of N
  slots stalls (policy block) once N frames are held that way.
* ``release(stream=s)`` gives the slot back when the GPU reaches that point
  of CUDA stream ``s``, without the CPU waiting.  Tensors still alive then
  point at memory that fpgad refills: queue nothing that reads them after
  the release, on any stream.
* After release, ``memoryview(frame)``, ``frame.view()`` and
  ``__dlpack__`` raise ``ReleasedError``; views made before stay readable
  (their memory stays mapped) and cannot be invalidated.
* Closing a channel (or the client) with views of its frames alive ends
  the lease when the last view goes: the ring stays mapped until then, so
  no view is ever left pointing at unmapped memory.
"""

from __future__ import annotations

import builtins
import dataclasses
import errno as _errno
from typing import Any, List, Optional

from . import _fpgad
from ._fpgad import Channel, Frame, FrameView

__all__ = [
    "connect", "version", "default_url", "Client", "Channel", "Frame", "FrameView",
    "Status", "Card", "ChannelSummary", "ClientInfo", "ChannelStats", "Topology", "TopoEnd",
    "TopoGpu", "TopoChannel",
    "Error", "BusyError", "NotFoundError", "AccessError", "TimeoutError",
    "ConnectError", "LeaseLostError", "ReconnectedError", "ProtocolError",
    "NoDeviceError", "NotSupportedError", "InvalidError", "NoDataError",
    "ReleasedError", "ClosedError",
    "FRAME_F_ERROR", "FRAME_F_TRUNCATED", "FRAME_F_DROPPED_BEFORE", "DEFAULT_URL",
]

FRAME_F_ERROR: int = _fpgad.FRAME_F_ERROR
FRAME_F_TRUNCATED: int = _fpgad.FRAME_F_TRUNCATED
FRAME_F_DROPPED_BEFORE: int = _fpgad.FRAME_F_DROPPED_BEFORE
DEFAULT_URL: str = _fpgad.DEFAULT_URL


# --- errors --------------------------------------------------------------------


class Error(OSError):
    """Base of every fpgad error: ``errno`` is the error number, ``strerror``
    says what failed, with fpgad's own message where fpgad refused."""


class BusyError(Error):
    """EBUSY: another process leases the channel (the message says who)."""


class NotFoundError(Error):
    """ENOENT: no such channel."""


class AccessError(Error, builtins.PermissionError):
    """EACCES/EPERM: fpgad does not allow this (socket group, remote listener)."""


class TimeoutError(Error, builtins.TimeoutError):
    """ETIMEDOUT: no frame, or no reply, within the timeout."""


class ConnectError(Error, builtins.ConnectionRefusedError):
    """ECONNREFUSED: fpgad is not running at that URL; EUSERS: fpgad is at
    its connection limit (max_clients) and closed the connection."""


class LeaseLostError(Error, builtins.ConnectionError):
    """EPIPE/ECONNRESET: the lease ended: fpgad stopped or died."""


class ReconnectedError(Error):
    """ESTALE (reconnect=True): fpgad came back and the channel was leased
    again; every frame held before is gone.  The next wait() goes on."""


class ProtocolError(Error):
    """EPROTO: fpgad speaks a protocol version this library does not."""


class NoDeviceError(Error):
    """ENODEV: no CUDA in this process (GPU memory, stream-ordered calls)."""


class NotSupportedError(Error):
    """EOPNOTSUPP: the driver cannot do it (stream memory operations)."""


class InvalidError(Error, builtins.ValueError):
    """EINVAL: fpgad or libfpgad rejected an argument or a state."""


class NoDataError(Error):
    """ENODATA: nothing to check (no CRC in the frame)."""


class ReleasedError(Error, builtins.ValueError):
    """A view of a frame that was released (or whose ring is gone)."""


class ClosedError(Error, builtins.ValueError):
    """A call on a channel or client that is closed."""


_ERRNO_CLASSES = {
    _errno.EBUSY: BusyError,
    _errno.ENOENT: NotFoundError,
    _errno.EACCES: AccessError,
    _errno.EPERM: AccessError,
    _errno.ETIMEDOUT: TimeoutError,
    _errno.ECONNREFUSED: ConnectError,
    _errno.EUSERS: ConnectError,
    _errno.EPIPE: LeaseLostError,
    _errno.ECONNRESET: LeaseLostError,
    _errno.ESTALE: ReconnectedError,
    _errno.EPROTO: ProtocolError,
    _errno.ENODEV: NoDeviceError,
    _errno.EOPNOTSUPP: NotSupportedError,
    _errno.EINVAL: InvalidError,
    _errno.ENODATA: NoDataError,
}

_fpgad._init(Error, _ERRNO_CLASSES, ReleasedError, ClosedError)


# --- plain data ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChannelSummary:
    """One channel in ``Client.status()``."""
    name: str
    direction: str
    source: str        # "card", or "udp" or "roce" (a network sender)
    state: str
    memory: str
    integrated: bool   # cuda memory of an integrated GPU: host memory
    mode: str
    slots: int
    slot_size: int
    frame_size: int
    frames: int
    drops: int
    leases: int


@dataclasses.dataclass(frozen=True)
class Card:
    """The card fpgad drives, in ``Client.status().card``, as ``lspci -vv``
    and ``modinfo`` tell it; None where fpgad could not read it.  The names
    and values are those of ``fpgactl status --json``'s ``card``."""
    pci_address: Optional[str]           # "0000:01:00.0"; None for the sim
    vendor_id: Optional[int]             # 0x10ee
    device_id: Optional[int]
    subsystem_vendor_id: Optional[int]
    subsystem_device_id: Optional[int]
    link_gen: Optional[int]              # PCIe generation negotiated now
    link_width: Optional[int]            # lanes negotiated now
    max_link_gen: Optional[int]          # what the card and its slot can do
    max_link_width: Optional[int]
    numa_node: Optional[int]             # None: no node, or unknown
    driver: Optional[str]                # the kernel driver bound to it
    module_version: Optional[str]
    simulates: Optional[str]             # the simulated card: what it models
    # PCIe AER errors since boot (the kernel's TOTAL_ERR_ counts, read at
    # the request); None when not available (the simulated card, no AER).
    aer_correctable: Optional[int]
    aer_nonfatal: Optional[int]
    aer_fatal: Optional[int]


@dataclasses.dataclass(frozen=True)
class Status:
    """``Client.status()``: fpgad's version, uptime, backend, the card, the
    channels and the card memory transfer plane (every process's
    transfers, as fpgactl status --json names them)."""
    version: str
    uptime_ms: int
    backend: str
    mode: str
    mode_reason: str
    clients: int
    pid: int
    gpu_sharing: str
    gpu_sharing_note: str
    numa: str          # numa = auto: the card's node, its CPUs; "" not placed
    gpu_choice: str    # gpu = nearest: which GPU and why; "" not asked
    channels: List[ChannelSummary]
    card: Card
    card_memory: int           # bytes of card address space
    transfer_engines: str      # "c2h 1, h2c 1", or "none (why)"
    transfer_queues: int       # connections with a transfer queue
    transfer_buffers: int      # buffers registered, all clients
    transfer_registered: int   # their bytes
    transfers: int             # completed, any status
    transfer_bytes: int
    transfer_errors: int       # failed on the card, or canceled
    transfer_refused: int      # broke a rule


@dataclasses.dataclass(frozen=True)
class ClientInfo:
    """One connected process in ``Client.clients()``."""
    pid: int
    uid: int
    gid: int
    connected_ms: int
    remote: bool
    leases: List[str]


@dataclasses.dataclass(frozen=True)
class ChannelStats:
    """``Client.stats(name)``: a channel's counters, under the names of
    ``fpgactl stats --json``."""
    channel: str                # the channel's name
    state: str
    mode: str
    frames: int
    bytes: int
    drops: int
    stalls: int
    errors: int
    recoveries: int
    copies: int
    dma_ns_total: int
    card_good: int
    card_bad: int
    integrity_errors: int
    queued_avg: float
    # c2h: DMA end to publication (fpgad_channel_publish_latency_seconds),
    # summed over latency_frames frames; 0 and 0 before the first.
    latency_ns_total: int
    latency_frames: int
    integrity: Optional[str]    # "none" or "crc32c"; None: an older fpgad
    last_error: Optional[str]   # the last DMA failure; None: none yet

    @property
    def publish_latency_us(self) -> Optional[float]:
        """The mean publish latency in microseconds; None before a frame."""
        if not self.latency_frames:
            return None
        return self.latency_ns_total / self.latency_frames / 1e3


@dataclasses.dataclass(frozen=True)
class TopoEnd:
    """One end (the card, or a GPU) of a peer-to-peer path."""
    address: str
    found: bool
    numa_node: int
    host_bridge: str
    root_port: str
    iommu_group: int
    iommu: str


@dataclasses.dataclass(frozen=True)
class TopoGpu:
    """The card and one GPU: path class, verdict and why."""
    gpu: TopoEnd
    path_class: str
    verdict: str
    reason: str
    common_bridge: str
    acs_bridge: str
    kernel: bool
    distance: int
    warning: str


@dataclasses.dataclass(frozen=True)
class TopoChannel:
    """A channel's transfer mode, why, and the rates measured at start."""
    name: str
    gpu: str
    mode: str
    mode_reason: str
    gpudirect_bps: float
    bounce_bps: float


@dataclasses.dataclass(frozen=True)
class Topology:
    """``Client.topology()``: the card against every GPU of fpgad's host."""
    card: str
    card_end: TopoEnd
    simulated: bool
    vm: bool
    vm_reason: str
    sysfs: str
    warning: str
    gpus: List[TopoGpu]
    channels: List[TopoChannel]


# --- the client ------------------------------------------------------------------


class Client:
    """A connection to fpgad (``fpgad.connect()``); a context manager that
    closes it.  Closing ends every lease it holds (see the module's
    lifetime rules for views still alive)."""

    def __init__(self, c: Any) -> None:
        self._c = c

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<fpgad.Client %s%s>" % (self.url, ", closed" if self.closed else "")

    @property
    def url(self) -> str:
        """The URL connected to."""
        return self._c.url

    @property
    def server_software(self) -> str:
        """fpgad's software string, e.g. "fpgad 0.1.0"."""
        return self._c.server_software

    @property
    def closed(self) -> bool:
        """Whether close() was called."""
        return self._c.closed

    def close(self) -> None:
        """Close every channel of this client, then the connection."""
        self._c.close()

    def status(self) -> Status:
        """fpgad's status: version, pid, uptime, backend, transfer mode and
        why, GPU sharing, a summary of every channel, and the card (its PCI
        address and ids, PCIe link now and at most, NUMA node, driver and
        module version, PCIe AER error counts; for the simulated card, what
        it simulates)."""
        d = self._c.status()
        d["channels"] = [ChannelSummary(**c) for c in d["channels"]]
        d["card"] = Card(**d["card"])
        return Status(**d)

    def clients(self) -> List[ClientInfo]:
        """The processes connected to fpgad and what each leases."""
        return [ClientInfo(**c) for c in self._c.clients()]

    def stats(self, name: str) -> ChannelStats:
        """Channel ``name``'s counters (NotFoundError if there is none)."""
        return ChannelStats(**self._c.stats(name))

    def reset(self, name: str) -> None:
        """Clear channel ``name`` after it FAILED, so that it streams again
        (InvalidError when it has not failed)."""
        self._c.reset(name)

    def topology(self) -> Topology:
        """The card against every GPU of fpgad's host, and each channel's
        transfer mode with the reason."""
        d = self._c.topology()
        d["card_end"] = TopoEnd(**d["card_end"])
        gpus = []
        for g in d["gpus"]:
            g["gpu"] = TopoEnd(**g["gpu"])
            gpus.append(TopoGpu(**g))
        d["gpus"] = gpus
        d["channels"] = [TopoChannel(**c) for c in d["channels"]]
        return Topology(**d)

    def open(self, name: str, shared: bool = False, newest: bool = False,
             poll_us: int = 0) -> Channel:
        """Lease channel ``name`` and map its ring; returns a Channel (a
        context manager: leaving it ends the lease).

        shared: a shared-read lease (every reader sees every frame).
        newest: wait() skips to the newest ready frame, releasing older
        ones unread (frame.skipped counts them).
        poll_us: wait() busy-polls this long before sleeping.

        BusyError when another process holds it, NotFoundError for an
        unknown name, NoDeviceError for GPU memory without CUDA here.
        """
        return self._c.open(name, shared=shared, newest=newest, poll_us=poll_us)


def connect(url: Optional[str] = None, timeout: Optional[float] = 5.0,
            reconnect: bool = False, card: Optional[str] = None) -> Client:
    """Connect to fpgad at ``url`` (default: $FPGAD_URL, else the card
    named by $FPGAD_CARD, else ipc:///run/fpgad/fpgad.sock).

    card: the fpgad of the card of that name instead of an URL (the unit
    fpgad@NAME.service, its socket under $FPGAD_RUNTIME_ROOT or
    /run/fpgad); NotFoundError when no such card runs, ValueError for
    both url and card.

    timeout: seconds each request may take (None: no limit).
    reconnect: ride through a restart of fpgad: a wait() that finds fpgad
    gone leases the channel again and raises ReconnectedError once
    (iterating a channel goes on).  It does so only while no view of the
    channel's frames is alive, since the old ring is unmapped: with views
    alive, wait() raises LeaseLostError instead, and reconnects on the wait
    after the views are gone.

    ConnectError when nothing listens there, ProtocolError when fpgad's
    protocol version is not this library's.
    """
    if timeout is None:
        ms = -1
    elif timeout < 0:
        raise ValueError("timeout must be None or >= 0")
    else:
        ms = int(timeout * 1000)
    return Client(_fpgad.connect(url, ms, reconnect, card))


def version() -> str:
    """The version of libfpgad in this module, e.g. "0.1.0"."""
    return _fpgad.version()


def default_url() -> str:
    """The URL connect() uses without one: $FPGAD_URL, else $FPGAD_CARD's,
    else the default."""
    return _fpgad.default_url()


__version__: str = _fpgad.version()
