# SPDX-License-Identifier: MIT
"""fpgad_cdi - a Container Device Interface spec for fpgad's channels.

One CDI device per channel (KIND=CHANNEL) and one for the whole card
(KIND=card).  Every device's edits bind-mount fpgad's runtime directory
(the control socket fpgad.sock and the handoff socket fpgad.handoff; the
directory, not the two files, so that a restarted fpgad's new sockets
reach the container) read-only at its host path (fpgad names the handoff
socket by that path), and set FPGAD_URL and FPGAD_CHANNEL (the
card device: FPGAD_CHANNELS, comma-separated).  GPU device nodes are not
fpgad's to give: NVIDIA's CDI spec (nvidia.com/gpu=...) adds those.

The channels come from `fpgactl --json status` (and `fpgactl --json topo`
for the GPU each channel runs on), or from a saved status document.
Used by the fpgad-cdi command and by the device plugin.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

DEFAULT_KIND = "fpgad.io/channel"
DEFAULT_URL = "ipc:///run/fpgad/fpgad.sock"
DEFAULT_CDI_VERSION = "0.6.0"
CARD_DEVICE = "card"
SOCKETS = ("fpgad.sock", "fpgad.handoff")

# CDI's own rules (SPEC.md, "Kind" and "CDI Devices").
_KIND_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
_DEVICE_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")


class CdiError(Exception):
    pass


def version_tuple(v):
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)$", v)
    if not m:
        raise CdiError(f"cdiVersion {v!r}: not MAJOR.MINOR.PATCH")
    return tuple(int(x) for x in m.groups())


def check_kind(kind):
    vendor, sep, cls = kind.partition("/")
    if not sep or not cls or "/" in cls:
        raise CdiError(f"kind {kind!r}: must be VENDOR/CLASS")
    if len(vendor) > 253 or not all(_DNS_LABEL.match(p) for p in vendor.split(".")):
        raise CdiError(f"kind {kind!r}: the vendor must be a DNS subdomain")
    if not _KIND_NAME.match(cls):
        raise CdiError(f"kind {kind!r}: bad class name")


def runtime_dir_of(url):
    """fpgad's runtime directory from an ipc:// URL of its control socket."""
    if not url.startswith("ipc://"):
        raise CdiError(f"{url}: only a local ipc:// socket can be given to a container")
    path = url[len("ipc://"):]
    if not path.startswith("/") or os.path.basename(path) != "fpgad.sock":
        raise CdiError(f"{url}: expected ipc:///DIR/fpgad.sock")
    return os.path.dirname(path)


def fpgactl_json(fpgactl, url, command, timeout=10):
    """Run `fpgactl --url URL --json COMMAND`; its parsed output."""
    try:
        p = subprocess.run([fpgactl, "--url", url, "--json", command],
                           capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CdiError(f"{fpgactl} {command}: {e}") from None
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise CdiError(f"{fpgactl} --url {url} {command}: " +
                       (msg[-1] if msg else f"exit status {p.returncode}"))
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        raise CdiError(f"{fpgactl} {command}: not JSON: {e}") from None


def _numa_node(status):
    """The card's NUMA node: card.numa_node, else "node N" of the numa line."""
    node = (status.get("card") or {}).get("numa_node")
    if isinstance(node, int) and node >= 0:
        return node
    m = re.match(r"^node (\d+)\b", status.get("numa") or "")
    return int(m.group(1)) if m else None


def channels_of(status, topo=None):
    """One dict per channel: name, direction, frame_size, slots, slot_size,
    memory, mode, state, gpu (or None), numa (or None)."""
    gpus = {}
    for c in (topo or {}).get("channels", []):
        if c.get("gpu"):
            gpus[c.get("name")] = c["gpu"]
    numa = _numa_node(status)
    out = []
    for c in status.get("channels", []):
        out.append({
            "name": c["name"],
            "direction": c.get("direction", ""),
            "source": c.get("source", ""),
            "state": c.get("state", ""),
            "memory": c.get("memory", ""),
            "mode": c.get("mode", ""),
            "frame_size": int(c.get("frame_size", 0)),
            "slot_size": int(c.get("slot_size", 0)),
            "slots": int(c.get("slots", 0)),
            "leases": int(c.get("leases", 0)),
            "gpu": gpus.get(c["name"]),
            "numa": numa,
        })
    return out


def query(fpgactl, url):
    """The channels of the fpgad at URL (raises CdiError when it does not answer)."""
    status = fpgactl_json(fpgactl, url, "status")
    try:
        topo = fpgactl_json(fpgactl, url, "topo")
    except CdiError:
        topo = None
    return status, channels_of(status, topo)


def channel_env(container_dir, channel):
    env = [f"FPGAD_URL=ipc://{container_dir}/fpgad.sock"]
    if channel is not None:
        env.append(f"FPGAD_CHANNEL={channel}")
    return env


def build_spec(channels, host_dir, container_dir=None, kind=DEFAULT_KIND,
               cdi_version=DEFAULT_CDI_VERSION, card_device=CARD_DEVICE,
               additional_gids=(), version=None, mount="dir", mps_pipe_dir=None):
    """The CDI spec (a dict) for CHANNELS served from HOST_DIR."""
    check_kind(kind)
    # fpgad names its handoff socket by its own path (OpenChannel's reply)
    # and libfpgad dials that path: the directory must appear in the
    # container where it is on the host.
    container_dir = container_dir or host_dir
    if container_dir != host_dir:
        raise CdiError(f"{container_dir}: the runtime directory must be mounted at its host path, "
                       f"{host_dir} (libfpgad dials the handoff socket fpgad names)")
    v = version_tuple(cdi_version)
    if v < (0, 4, 0):
        raise CdiError(f"cdiVersion {cdi_version}: the mounts' type needs 0.4.0 or later")
    # Annotations came with 0.6.0; runtimes that read only older specs (the
    # CDI library of Debian 12's podman 4.3 stops at 0.5.0, and refuses a
    # field it does not know) get the same edits without them.
    annotate = v >= (0, 6, 0)
    if additional_gids and v < (0, 7, 0):
        raise CdiError(f"cdiVersion {cdi_version}: additionalGids need 0.7.0 or later")
    if not os.path.isabs(host_dir) or not os.path.isabs(container_dir):
        raise CdiError("the runtime directories must be absolute paths")
    names = [c["name"] for c in channels]
    if card_device in names:
        raise CdiError(f"a channel is named {card_device!r}: give the card device another name")
    for n in names + [card_device]:
        if not _DEVICE_NAME.match(n):
            raise CdiError(f"{n!r}: not a valid CDI device name")
    opts = ["bind", "ro", "nosuid", "nodev", "noexec"]
    if mount == "dir":
        mounts = [{"hostPath": host_dir, "containerPath": container_dir,
                   "type": "bind", "options": opts}]
    elif mount == "sockets":
        # Only the two sockets; a restarted fpgad's new sockets do not
        # reach a container started before it (it keeps the old inodes).
        mounts = [{"hostPath": os.path.join(host_dir, s), "containerPath": os.path.join(container_dir, s),
                   "type": "bind", "options": opts} for s in SOCKETS]
    else:
        raise CdiError(f"mount {mount!r}: dir or sockets")
    env = []
    if mps_pipe_dir:
        # NVIDIA MPS: fpgad's and the container's CUDA contexts share one
        # server only when both reach its pipe directory (and its IPC
        # namespace, which a CDI spec cannot give: hostIPC, --ipc=host).
        if not os.path.isabs(mps_pipe_dir):
            raise CdiError(f"{mps_pipe_dir}: the MPS pipe directory must be an absolute path")
        mounts.append({"hostPath": mps_pipe_dir, "containerPath": mps_pipe_dir,
                       "type": "bind", "options": ["bind", "rw", "nosuid", "nodev", "noexec"]})
        env.append(f"CUDA_MPS_PIPE_DIRECTORY={mps_pipe_dir}")
    common = {"mounts": mounts}
    if env:
        common["env"] = env
    if additional_gids:
        common["additionalGids"] = sorted(set(int(g) for g in additional_gids))
    devices = []
    for c in channels:
        ann = {
            "fpgad.io/direction": c["direction"],
            "fpgad.io/frame-size": str(c["frame_size"]),
            "fpgad.io/slots": str(c["slots"]),
            "fpgad.io/slot-size": str(c["slot_size"]),
            "fpgad.io/memory": c["memory"],
        }
        if c.get("gpu"):
            ann["fpgad.io/gpu"] = str(c["gpu"])
        if c.get("numa") is not None:
            ann["fpgad.io/numa-node"] = str(c["numa"])
        devices.append({
            "name": c["name"],
            "annotations": ann,
            "containerEdits": {"env": channel_env(container_dir, c["name"])},
        })
    devices.append({
        "name": card_device,
        "annotations": {"fpgad.io/channels": ",".join(names)},
        "containerEdits": {"env": channel_env(container_dir, None) +
                           [f"FPGAD_CHANNELS={','.join(names)}"]},
    })
    ann = {"fpgad.io/runtime-dir": host_dir}
    if version:
        ann["fpgad.io/version"] = version
    spec = {
        "cdiVersion": cdi_version,
        "kind": kind,
        "annotations": ann,
        "devices": devices,
        "containerEdits": common,
    }
    if not annotate:
        del spec["annotations"]
        for d in devices:
            del d["annotations"]
    return spec


def qualified(kind, name):
    return f"{kind}={name}"


def write_atomic(path, spec):
    """Write SPEC to PATH (0644) by rename: a runtime never reads half of it."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".fpgad-cdi.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(spec, f, indent=2)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="fpgad-cdi",
        description="Write a CDI spec with one device per fpgad channel and one for the card.")
    ap.add_argument("--url", default=os.environ.get("FPGAD_URL") or DEFAULT_URL,
                    help="fpgad's control socket (default $FPGAD_URL, else %(default)s)")
    ap.add_argument("--fpgactl", default=os.environ.get("FPGACTL", "fpgactl"),
                    help="the fpgactl to ask (default $FPGACTL, else fpgactl in PATH)")
    ap.add_argument("--status", metavar="FILE",
                    help="read `fpgactl --json status` from FILE ('-': stdin) instead of asking fpgad")
    ap.add_argument("--kind", default=DEFAULT_KIND, help="CDI kind (default %(default)s)")
    ap.add_argument("--cdi-version", default=DEFAULT_CDI_VERSION,
                    help="cdiVersion written (default %(default)s; 0.7.0 or later for --gid; "
                         "0.5.0 or 0.4.0 for runtimes that read no later spec, "
                         "without the annotations)")
    ap.add_argument("--card-device", default=CARD_DEVICE,
                    help="name of the whole card's device (default %(default)s)")
    ap.add_argument("--gid", type=int, action="append", default=[],
                    help="a group id the container's processes get (the socket's group, "
                         "for consumers that do not run as root; needs --cdi-version 0.7.0)")
    ap.add_argument("--mount", choices=("dir", "sockets"), default="dir",
                    help="bind the runtime directory (default: the sockets fpgad re-creates "
                         "when it restarts reach running containers) or only its two sockets")
    ap.add_argument("--mps-pipe-dir", metavar="DIR",
                    help="also bind NVIDIA MPS's pipe directory (e.g. /run/nvidia-mps) and set "
                         "CUDA_MPS_PIPE_DIRECTORY, so that the container's CUDA work joins "
                         "fpgad's MPS server (the container needs the host's IPC namespace too)")
    ap.add_argument("-o", "--output", default="-",
                    help="file to write (by rename; e.g. /var/run/cdi/fpgad.json), '-': stdout")
    a = ap.parse_args(argv)
    try:
        host_dir = runtime_dir_of(a.url)
        if a.status:
            f = sys.stdin if a.status == "-" else open(a.status)
            with f:
                status = json.load(f)
            channels = channels_of(status)
        else:
            status, channels = query(a.fpgactl, a.url)
        spec = build_spec(channels, host_dir, host_dir, a.kind, a.cdi_version,
                          a.card_device, a.gid, status.get("version"), a.mount, a.mps_pipe_dir)
    except (CdiError, OSError, ValueError, KeyError) as e:
        print(f"fpgad-cdi: {e}", file=sys.stderr)
        return 1
    if a.output == "-":
        json.dump(spec, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        write_atomic(a.output, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
