# SPDX-License-Identifier: MIT
"""fpgad_device_plugin - a Kubernetes device plugin for fpgad's channels.

It advertises fpgad's channels to the kubelet as extended resources, one
resource name per channel direction (PREFIX/c2h, PREFIX/h2c; a channel is
one device, its ID the channel's name), over the kubelet's published
device-plugin API (deviceplugin/v1beta1/api.proto, its Python stubs made
with grpc_tools at start).  For each resource it serves the DevicePlugin
service on its own unix socket in the kubelet's device-plugin directory
and registers it on the kubelet's socket there.

- ListAndWatch: the channels, Healthy, or Unhealthy when fpgad reports the
  channel failed or fpgad stops answering; the card's NUMA node as the
  devices' topology.  A new list is sent whenever that changes (fpgad is
  asked every --interval seconds).
- Allocate: the CDI device names (KIND=CHANNEL, in cdi_devices), the
  environment (FPGAD_URL, FPGAD_CHANNEL, FPGAD_CHANNELS) and the channels'
  attributes as annotations; the CDI spec itself is written by this
  program (fpgad_cdi) into --cdi-dir whenever the channels change.  With
  --edits mounts (runtimes without CDI) the runtime directory is returned
  as a read-only mount instead, and with both, both.
- GetPreferredAllocation: healthy, idle channels first, those on the NUMA
  node of the ones that must be included, then by name.
- The kubelet restarting (its socket re-created, or this plugin's sockets
  removed, as a starting kubelet removes them): the servers start again on
  new sockets and register again.

The v1beta1 API carries a device's ID, health and NUMA nodes only; the
direction is in the resource name, frame size, slots, memory and GPU are
in the annotations and environment of Allocate and in the CDI spec.
"""

import argparse
import importlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc

import fpgad_cdi

API_VERSION = "v1beta1"
HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"
DEFAULT_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"
HERE = os.path.dirname(os.path.realpath(__file__))

log = logging.getLogger("fpgad-device-plugin")


def load_api(proto, stub_dir):
    """Generate the v1beta1 stubs from PROTO into STUB_DIR; (pb2, pb2_grpc)."""
    from grpc_tools import protoc
    inc = os.path.dirname(os.path.abspath(proto))
    import grpc_tools
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    rc = protoc.main(["protoc", f"-I{inc}", f"-I{well_known}", f"--python_out={stub_dir}",
                      f"--grpc_python_out={stub_dir}", os.path.basename(proto)])
    if rc != 0:
        raise RuntimeError(f"protoc {proto}: exit status {rc}")
    sys.path.insert(0, stub_dir)
    name = os.path.splitext(os.path.basename(proto))[0]
    return importlib.import_module(f"{name}_pb2"), importlib.import_module(f"{name}_pb2_grpc")


class Inventory:
    """What fpgad says, asked every interval: channels by name, health."""

    def __init__(self, fpgactl, url):
        self.fpgactl, self.url = fpgactl, url
        self.lock = threading.Condition()
        self.channels = {}      # name -> fpgad_cdi channel dict
        self.health = {}        # name -> HEALTHY / UNHEALTHY
        self.reachable = False
        self.generation = 0     # bumped at every change
        self.why = ""

    def refresh(self):
        try:
            status, chans = fpgad_cdi.query(self.fpgactl, self.url)
            reachable, why = True, ""
        except fpgad_cdi.CdiError as e:
            status, chans, reachable, why = None, None, False, str(e)
        with self.lock:
            if reachable:
                channels = {c["name"]: c for c in chans}
                health = {n: UNHEALTHY if c["state"] == "failed" else HEALTHY
                          for n, c in channels.items()}
            else:
                # fpgad went away: keep the devices, none usable.
                channels = self.channels
                health = {n: UNHEALTHY for n in channels}
            changed = _view(channels, health) != _view(self.channels, self.health)
            if reachable != self.reachable:
                if reachable:
                    log.info("fpgad at %s answers: %d channels", self.url, len(channels))
                else:
                    log.warning("fpgad at %s does not answer (%s): every channel Unhealthy",
                                self.url, why)
            for n in health:
                if health[n] != self.health.get(n) and self.health.get(n) is not None:
                    log.info("channel %s: %s (state %s)", n, health[n],
                             channels[n]["state"] if reachable else "fpgad unreachable")
            self.channels, self.health = channels, health
            self.reachable, self.why = reachable, why
            return changed, status

    def publish(self):
        """Send the lists again (after the CDI spec that names them is written)."""
        with self.lock:
            self.generation += 1
            self.lock.notify_all()

    def snapshot(self, direction=None):
        with self.lock:
            return {n: (dict(c), self.health[n]) for n, c in self.channels.items()
                    if direction is None or c["direction"] == direction}


def _view(channels, health):
    """What the device lists and the CDI spec show of the channels: a change
    of it is sent to the kubelet (not a change of frame counts or leases)."""
    return {n: (c["direction"], c["frame_size"], c["slots"], c["slot_size"], c["memory"],
                c.get("gpu"), c.get("numa"), health[n]) for n, c in channels.items()}


class Plugin:
    """The DevicePlugin service of one resource (one channel direction)."""

    def __init__(self, args, pb2, pb2_grpc, inv, direction, stop):
        self.a, self.pb2, self.pb2_grpc, self.inv = args, pb2, pb2_grpc, inv
        self.direction = direction
        self.resource = f"{args.resource_prefix}/{direction}"
        self.endpoint = f"fpgad-{direction}.sock"
        self.path = os.path.join(args.plugin_dir, self.endpoint)
        self.stop = stop
        self.server = None
        self.socket_ino = None
        self.servicer = self._servicer()

    # --- the DevicePlugin service ---
    def _servicer(self):
        plugin, pb2 = self, self.pb2

        class Servicer(self.pb2_grpc.DevicePluginServicer):
            def GetDevicePluginOptions(self, request, context):
                return pb2.DevicePluginOptions(pre_start_required=False,
                                               get_preferred_allocation_available=True)

            def ListAndWatch(self, request, context):
                return plugin.list_and_watch(context)

            def GetPreferredAllocation(self, request, context):
                return plugin.preferred(request)

            def Allocate(self, request, context):
                return plugin.allocate(request, context)

            def PreStartContainer(self, request, context):
                return pb2.PreStartContainerResponse()
        return Servicer()

    def devices(self):
        out = []
        for name, (c, health) in sorted(self.inv.snapshot(self.direction).items()):
            d = self.pb2.Device(ID=name, health=health)
            if c.get("numa") is not None:
                d.topology.nodes.add(ID=int(c["numa"]))
            out.append(d)
        return out

    def list_and_watch(self, context):
        gen = None
        while not self.stop.is_set() and context.is_active():
            with self.inv.lock:
                if gen == self.inv.generation:
                    self.inv.lock.wait(0.5)
                if gen == self.inv.generation:
                    continue
                gen = self.inv.generation
            devs = self.devices()
            log.info("%s: ListAndWatch: %s", self.resource,
                     ", ".join(f"{d.ID} {d.health}" for d in devs) or "no devices")
            yield self.pb2.ListAndWatchResponse(devices=devs)

    def preferred(self, request):
        snap = self.inv.snapshot(self.direction)
        resp = self.pb2.PreferredAllocationResponse()
        for req in request.container_requests:
            must = list(req.must_include_deviceIDs)
            numas = {snap[n][0].get("numa") for n in must if n in snap}

            def rank(n):
                c, h = snap.get(n, ({}, UNHEALTHY))
                return (h != HEALTHY, c.get("leases", 0) > 0,
                        bool(numas) and c.get("numa") not in numas, n)
            rest = sorted((n for n in req.available_deviceIDs if n not in must), key=rank)
            pick = must + rest[:max(0, req.allocation_size - len(must))]
            resp.container_responses.add(deviceIDs=pick)
        return resp

    def allocate(self, request, context):
        snap = self.inv.snapshot(self.direction)
        resp = self.pb2.AllocateResponse()
        url = f"ipc://{fpgad_cdi.runtime_dir_of(self.a.url)}/fpgad.sock"
        for req in request.container_requests:
            ids = list(req.devices_ids)
            unknown = [i for i in ids if i not in snap]
            if unknown or not ids:
                log.warning("%s: Allocate of unknown channels %s", self.resource, unknown)
                context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              f"{self.resource}: no such channel: {', '.join(unknown) or '(none)'}")
            r = resp.container_responses.add()
            r.envs["FPGAD_URL"] = url
            r.envs["FPGAD_CHANNELS"] = ",".join(ids)
            r.envs["FPGAD_CHANNEL"] = ids[0]
            for i in ids:
                c = snap[i][0]
                key = f"fpgad.io/{i}."
                r.annotations[key + "direction"] = c["direction"]
                r.annotations[key + "frame-size"] = str(c["frame_size"])
                r.annotations[key + "slots"] = str(c["slots"])
                r.annotations[key + "memory"] = c["memory"]
                if c.get("gpu"):
                    r.annotations[key + "gpu"] = str(c["gpu"])
                if c.get("numa") is not None:
                    r.annotations[key + "numa-node"] = str(c["numa"])
            if self.a.edits in ("cdi", "both"):
                for i in ids:
                    r.cdi_devices.add(name=fpgad_cdi.qualified(self.a.kind, i))
            if self.a.edits in ("mounts", "both"):
                d = fpgad_cdi.runtime_dir_of(self.a.url)
                r.mounts.add(container_path=d, host_path=d, read_only=True)
            log.info("%s: Allocate %s", self.resource, ", ".join(ids))
        return resp

    # --- serving and registering ---
    def start(self):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.pb2_grpc.add_DevicePluginServicer_to_server(self.servicer, self.server)
        self.server.add_insecure_port(f"unix://{self.path}")
        self.server.start()
        self.socket_ino = os.stat(self.path).st_ino

    def stop_serving(self):
        if self.server:
            self.server.stop(grace=0.5).wait()
            self.server = None
        try:
            if os.stat(self.path).st_ino == self.socket_ino:
                os.unlink(self.path)
        except FileNotFoundError:
            pass

    def socket_gone(self):
        try:
            return os.stat(self.path).st_ino != self.socket_ino
        except FileNotFoundError:
            return True

    def register(self):
        with grpc.insecure_channel(f"unix://{self.a.kubelet_socket}") as ch:
            stub = self.pb2_grpc.RegistrationStub(ch)
            stub.Register(self.pb2.RegisterRequest(
                version=API_VERSION, endpoint=self.endpoint, resource_name=self.resource,
                options=self.pb2.DevicePluginOptions(get_preferred_allocation_available=True)),
                timeout=5)
        log.info("%s: registered with the kubelet (%s, endpoint %s)", self.resource,
                 self.a.kubelet_socket, self.endpoint)


def kubelet_id(path):
    try:
        st = os.stat(path)
        return (st.st_ino, st.st_ctime_ns)
    except FileNotFoundError:
        return None


def write_spec(args, status, inv):
    if not args.cdi_dir or status is None:
        return
    chans = [c for c, _ in inv.snapshot().values()]
    try:
        spec = fpgad_cdi.build_spec(chans, fpgad_cdi.runtime_dir_of(args.url), kind=args.kind,
                                    cdi_version=args.cdi_version, version=status.get("version"),
                                    additional_gids=args.gid, mps_pipe_dir=args.mps_pipe_dir)
        path = os.path.join(args.cdi_dir, args.kind.replace("/", "-") + ".json")
        fpgad_cdi.write_atomic(path, spec)
        log.info("CDI spec %s: %s", path, ", ".join(d["name"] for d in spec["devices"]))
    except (fpgad_cdi.CdiError, OSError) as e:
        log.error("CDI spec: %s", e)


def run(args):
    stub_dir = tempfile.mkdtemp(prefix="fpgad-dp-stubs.")
    try:
        pb2, pb2_grpc = load_api(args.proto, stub_dir)
    finally:
        shutil.rmtree(stub_dir, ignore_errors=True)
    stop = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.set())
    inv = Inventory(args.fpgactl, args.url)
    plugins = {}            # direction -> Plugin
    registered = {}         # direction -> kubelet_id at registration
    while not stop.is_set():
        changed, status = inv.refresh()
        if changed:
            # The spec first: a device the kubelet hears of can be allocated
            # at once, and its CDI name must resolve by then.
            write_spec(args, status, inv)
            inv.publish()
        dirs = {c["direction"] for c, _ in inv.snapshot().values()}
        for d in sorted(dirs - plugins.keys()):
            plugins[d] = Plugin(args, pb2, pb2_grpc, inv, d, stop)
        kid = kubelet_id(args.kubelet_socket)
        for d, p in sorted(plugins.items()):
            if p.server is None or p.socket_gone() or (kid is not None and registered.get(d) != kid):
                if p.server is not None:
                    log.info("%s: the kubelet restarted (or removed %s): serving and registering again",
                             p.resource, p.path)
                    p.stop_serving()
                    registered.pop(d, None)
                if kid is None:
                    continue    # no kubelet yet: wait for its socket
                try:
                    p.start()
                    p.register()
                    registered[d] = kid
                except (grpc.RpcError, OSError, RuntimeError) as e:
                    msg = e.details() if isinstance(e, grpc.RpcError) else str(e)
                    log.warning("%s: cannot register: %s (again in %.1f s)", p.resource, msg,
                                args.interval)
                    p.stop_serving()
        stop.wait(args.interval)
    for p in plugins.values():
        p.stop_serving()
    log.info("stopped")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fpgad-device-plugin",
                                 description="Kubernetes device plugin for fpgad's channels.")
    ap.add_argument("--url", default=os.environ.get("FPGAD_URL") or fpgad_cdi.DEFAULT_URL,
                    help="fpgad's control socket (default $FPGAD_URL, else %(default)s)")
    ap.add_argument("--fpgactl", default=os.environ.get("FPGACTL", "fpgactl"))
    ap.add_argument("--plugin-dir", default=DEFAULT_PLUGIN_DIR,
                    help="the kubelet's device-plugin directory (default %(default)s)")
    ap.add_argument("--kubelet-socket", help="default: PLUGIN_DIR/kubelet.sock")
    ap.add_argument("--resource-prefix", default="fpgad.io",
                    help="resources are PREFIX/c2h and PREFIX/h2c (default %(default)s)")
    ap.add_argument("--kind", default=fpgad_cdi.DEFAULT_KIND,
                    help="CDI kind of the devices (default %(default)s)")
    ap.add_argument("--cdi-dir", default="/var/run/cdi",
                    help="where the CDI spec is written ('' = not written; default %(default)s)")
    ap.add_argument("--cdi-version", default=fpgad_cdi.DEFAULT_CDI_VERSION)
    ap.add_argument("--gid", type=int, action="append", default=[],
                    help="a group id the containers' processes get in the CDI spec (the "
                         "socket's group, for consumers not run as root; needs --cdi-version 0.7.0)")
    ap.add_argument("--mps-pipe-dir", metavar="DIR",
                    help="NVIDIA MPS's pipe directory, bound into the containers by the CDI spec")
    ap.add_argument("--edits", choices=("cdi", "mounts", "both"), default="cdi",
                    help="what Allocate returns: CDI device names (default), the runtime "
                         "directory as a mount (runtimes without CDI), or both")
    ap.add_argument("--interval", type=float, default=2.0,
                    help="seconds between two looks at fpgad and the kubelet (default %(default)s)")
    ap.add_argument("--proto", default=None,
                    help="the device-plugin API's api.proto (default: deviceplugin/v1beta1/"
                         "api.proto beside this program's modules)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    a.kubelet_socket = a.kubelet_socket or os.path.join(a.plugin_dir, "kubelet.sock")
    if a.proto is None:
        p = os.path.join(HERE, "deviceplugin", "v1beta1", "api.proto")
        if os.path.exists(p):
            a.proto = p
    logging.basicConfig(level=logging.DEBUG if a.verbose else logging.INFO,
                        format="%(levelname)s %(message)s", stream=sys.stderr)
    if not a.proto:
        log.error("no deviceplugin/v1beta1/api.proto: give --proto")
        return 1
    try:
        fpgad_cdi.runtime_dir_of(a.url)
        fpgad_cdi.check_kind(a.kind)
    except fpgad_cdi.CdiError as e:
        log.error("%s", e)
        return 1
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
