# SPDX-License-Identifier: MIT
"""fake_kubelet.py - the kubelet's side of the device-plugin API (v1beta1),
written from the published api.proto alone, to test fpgad-device-plugin
with no kubelet: a Registration server on a unix socket in a temporary
device-plugin directory, and a client of each registered plugin calling
GetDevicePluginOptions, ListAndWatch, GetPreferredAllocation (when the
plugin says it has it) and Allocate, as the kubelet's device manager does.

It runs the whole scenario against real fpgad processes on the simulated
card: registration, the device lists and their topology, preferred
allocation, Allocate's CDI names and environment (and a consumer that
verifies frames with that environment alone), a channel FAILED and reset,
fpgad going away and coming back, a kubelet restart (its socket made
again, the plugins' sockets removed), and the plugin's clean stop.

Prints PASS/FAIL lines; exit 1 when a check failed.
"""

import argparse
import glob
import importlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import grpc
from concurrent import futures

FAILED = 0


PREFIX = ""


def check(name, ok, detail=""):
    global FAILED
    if not ok:
        FAILED += 1
    print(f"{'PASS' if ok else 'FAIL'} {PREFIX}{name}{': ' + detail if detail else ''}", flush=True)
    return ok


def stubs(proto, out):
    from grpc_tools import protoc
    inc = os.path.dirname(os.path.abspath(proto))
    if protoc.main(["protoc", f"-I{inc}", f"--python_out={out}", f"--grpc_python_out={out}",
                    os.path.basename(proto)]) != 0:
        raise SystemExit(f"protoc {proto} failed")
    sys.path.insert(0, out)
    return importlib.import_module("api_pb2"), importlib.import_module("api_pb2_grpc")


class Kubelet:
    """The Registration service, as the kubelet serves it on kubelet.sock."""

    def __init__(self, plugin_dir, pb2, pb2_grpc):
        self.dir, self.pb2, self.pb2_grpc = plugin_dir, pb2, pb2_grpc
        self.sock = os.path.join(plugin_dir, "kubelet.sock")
        self.registrations = queue.Queue()
        self.server = None

    def start(self):
        kubelet, pb2 = self, self.pb2

        class Registration(self.pb2_grpc.RegistrationServicer):
            def Register(self, request, context):
                if request.version != "v1beta1":
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                  f"version {request.version} not supported")
                kubelet.registrations.put(request)
                return pb2.Empty()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.pb2_grpc.add_RegistrationServicer_to_server(Registration(), self.server)
        self.server.add_insecure_port(f"unix://{self.sock}")
        self.server.start()

    def stop(self):
        """A kubelet going down; at its next start it removes every socket
        of the directory but its own (the device manager's start)."""
        self.server.stop(0).wait()
        for p in glob.glob(os.path.join(self.dir, "*")):
            if os.path.basename(p) != "kubelet.sock":
                os.unlink(p)
        if os.path.exists(self.sock):
            os.unlink(self.sock)

    def wait_registrations(self, n, timeout):
        got, end = {}, time.monotonic() + timeout
        while len(got) < n and time.monotonic() < end:
            try:
                r = self.registrations.get(timeout=max(0.01, end - time.monotonic()))
                got[r.resource_name] = r
            except queue.Empty:
                break
        return got


class Endpoint:
    """The kubelet's client of one registered plugin."""

    def __init__(self, plugin_dir, reg, pb2, pb2_grpc):
        self.pb2 = pb2
        self.resource = reg.resource_name
        self.channel = grpc.insecure_channel(f"unix://{os.path.join(plugin_dir, reg.endpoint)}")
        self.stub = pb2_grpc.DevicePluginStub(self.channel)
        self.lists = []
        self.cond = threading.Condition()
        self.error = None
        self.options = self.stub.GetDevicePluginOptions(pb2.Empty(), timeout=5)
        self.stream = self.stub.ListAndWatch(pb2.Empty())
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self):
        try:
            for resp in self.stream:
                with self.cond:
                    self.lists.append({d.ID: (d.health, [n.ID for n in d.topology.nodes])
                                       for d in resp.devices})
                    self.cond.notify_all()
        except grpc.RpcError as e:
            with self.cond:
                self.error = e
                self.cond.notify_all()

    def wait_list(self, pred, timeout=10):
        end = time.monotonic() + timeout
        with self.cond:
            while not (self.lists and pred(self.lists[-1])):
                left = end - time.monotonic()
                if left <= 0:
                    return self.lists[-1] if self.lists else None, False
                self.cond.wait(left)
            return self.lists[-1], True

    def close(self):
        self.stream.cancel()
        self.channel.close()


def fpgad_conf(run, faults):
    # The second fpgad (faults) has no h2c channel: a channel gone.
    h2c = "" if faults else """[channel h2c0]
direction = h2c
engine = 2
memory = host
slots = 4
slot_size = 64K
frame_size = 64K
"""
    return f"""[daemon]
runtime_dir = {run}
[sim]
numa_node = 0
[channel c2h0]
direction = c2h
engine = 0
memory = host
slots = 8
slot_size = 64K
frame_size = 64K
[channel c2h1]
direction = c2h
engine = 1
memory = host
slots = 8
slot_size = 64K
frame_size = 64K
{h2c}"""


class Fpgad:
    def __init__(self, build, run):
        self.build, self.run, self.proc = build, run, None
        self.url = f"ipc://{run}/fpgad.sock"

    def start(self, faults=False):
        conf = self.run + (".faults.conf" if faults else ".conf")
        with open(conf, "w") as f:
            f.write(fpgad_conf(self.run, faults))
        self.log = open(self.run + ".log", "a")
        # The second fpgad fails every transfer (the sim's test knob).
        env = dict(os.environ, FPGAD_SIM_FAULTS="error=1" if faults else "")
        self.proc = subprocess.Popen([os.path.join(self.build, "fpgad"), "-c", conf],
                                     stderr=self.log, env=env)
        for _ in range(200):
            if self.ctl("version").returncode == 0:
                return True
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        return False

    def ctl(self, *args):
        return subprocess.run([os.path.join(self.build, "fpgactl"), "--url", self.url] + list(args),
                              capture_output=True, text=True, timeout=30)

    def state(self, channel):
        r = self.ctl("--json", "status")
        if r.returncode:
            return None
        return {c["name"]: c["state"] for c in json.loads(r.stdout)["channels"]}.get(channel)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)
        self.proc = None


def healthy(lst, names):
    return lst is not None and set(lst) == set(names) and all(h == "Healthy" for h, _ in lst.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--proto", required=True)
    ap.add_argument("--consumer", required=True)
    ap.add_argument("--prefix", default="", help="put before each check's name")
    a = ap.parse_args()
    global PREFIX
    PREFIX = a.prefix
    os.makedirs(os.path.join(a.dir, "kubelet-stubs"), exist_ok=True)
    pb2, pb2_grpc = stubs(a.proto, os.path.join(a.dir, "kubelet-stubs"))
    plugin_dir = os.path.join(a.dir, "device-plugins")
    cdi_dir = os.path.join(a.dir, "cdi")
    run = os.path.join(a.dir, "run")
    for d in (plugin_dir, run):
        os.makedirs(d, exist_ok=True)
    kind = "fpgad.io/channel"

    fp = Fpgad(a.build, run)
    if not check("fpgad", fp.start(), "started on the sim"):
        return 1
    kubelet = Kubelet(plugin_dir, pb2, pb2_grpc)
    kubelet.start()
    plog = open(os.path.join(a.dir, "plugin.log"), "w")
    plugin = subprocess.Popen([a.plugin, "--url", fp.url, "--fpgactl", os.path.join(a.build, "fpgactl"),
                               "--plugin-dir", plugin_dir, "--cdi-dir", cdi_dir, "--kind", kind,
                               "--interval", "0.2"], stderr=plog)
    try:
        return scenario(a, pb2, pb2_grpc, kubelet, plugin, fp, plugin_dir, cdi_dir, kind)
    finally:
        if plugin.poll() is None:
            plugin.kill()
            plugin.wait()
        fp.stop()
        plog.close()
        if FAILED:
            print("--- the plugin's log:")
            with open(os.path.join(a.dir, "plugin.log")) as f:
                sys.stdout.write("".join("  " + line for line in f.readlines()[-40:]))


def scenario(a, pb2, pb2_grpc, kubelet, plugin, fp, plugin_dir, cdi_dir, kind):
    # --- registration -------------------------------------------------------
    regs = kubelet.wait_registrations(2, 15)
    want = {"fpgad.io/c2h", "fpgad.io/h2c"}
    if not check("register", set(regs) == want and all(
            r.version == "v1beta1" and os.path.exists(os.path.join(plugin_dir, r.endpoint))
            for r in regs.values()),
            f"{', '.join(f'{n} at {r.endpoint}' for n, r in sorted(regs.items()))}"):
        return 1
    ep = {n: Endpoint(plugin_dir, r, pb2, pb2_grpc) for n, r in regs.items()}
    c2h, h2c = ep["fpgad.io/c2h"], ep["fpgad.io/h2c"]
    check("options", c2h.options.get_preferred_allocation_available and
          not c2h.options.pre_start_required and
          regs["fpgad.io/c2h"].options.get_preferred_allocation_available,
          "GetDevicePluginOptions: preferred allocation, no PreStartContainer")

    # --- the device lists -----------------------------------------------------
    lst, ok = c2h.wait_list(lambda l: healthy(l, ["c2h0", "c2h1"]))
    check("list-c2h", ok and all(t == [0] for _, t in lst.values()),
          f"ListAndWatch {lst} (NUMA node 0 as topology)")
    lst, ok = h2c.wait_list(lambda l: healthy(l, ["h2c0"]))
    check("list-h2c", ok, f"ListAndWatch {lst}")

    # --- preferred allocation --------------------------------------------------
    if c2h.options.get_preferred_allocation_available:
        def pref(avail, must, size):
            r = c2h.stub.GetPreferredAllocation(pb2.PreferredAllocationRequest(
                container_requests=[pb2.ContainerPreferredAllocationRequest(
                    available_deviceIDs=avail, must_include_deviceIDs=must,
                    allocation_size=size)]), timeout=5)
            return list(r.container_responses[0].deviceIDs)
        p1, p2, p3 = pref(["c2h0", "c2h1"], ["c2h1"], 1), pref(["c2h0", "c2h1"], [], 2), \
            pref(["c2h0", "c2h1"], [], 1)
        check("preferred", p1 == ["c2h1"] and sorted(p2) == ["c2h0", "c2h1"] and len(p3) == 1
              and p3[0] in ("c2h0", "c2h1"), f"must c2h1 size 1: {p1}; size 2: {p2}; size 1: {p3}")

    # --- Allocate -------------------------------------------------------------------
    r = c2h.stub.Allocate(pb2.AllocateRequest(container_requests=[
        pb2.ContainerAllocateRequest(devices_ids=["c2h0"])]), timeout=5)
    cr = r.container_responses[0] if len(r.container_responses) == 1 else None
    envs = dict(cr.envs) if cr else {}
    names = [d.name for d in cr.cdi_devices] if cr else []
    check("allocate", cr is not None and names == [f"{kind}=c2h0"] and
          envs.get("FPGAD_URL") == fp.url and envs.get("FPGAD_CHANNEL") == "c2h0" and
          cr.annotations.get("fpgad.io/c2h0.frame-size") == "65536" and not cr.mounts,
          f"cdi_devices {names}, envs {envs}")
    # The names must resolve in the CDI spec the plugin wrote.
    specs = []
    for p in glob.glob(os.path.join(cdi_dir, "*.json")):
        with open(p) as f:
            specs.append(json.load(f))
    have = {f"{s['kind']}={d['name']}" for s in specs for d in s["devices"]}
    check("allocate-cdi-spec", names and set(names) <= have and
          {f"{kind}={n}" for n in ("c2h0", "c2h1", "h2c0", "card")} == have,
          f"{len(specs)} spec(s) in {cdi_dir}: {sorted(have)}")
    # A consumer given only Allocate's environment verifies frames.
    env = dict(os.environ)
    env.pop("FPGAD_CARD", None)
    env.update(envs)
    c = subprocess.run([a.consumer, "100"], env=env, capture_output=True, text=True, timeout=30)
    check("allocate-consume", c.returncode == 0 and "100 frames verified" in c.stdout,
          (c.stdout + c.stderr).strip())
    r = c2h.stub.Allocate(pb2.AllocateRequest(container_requests=[
        pb2.ContainerAllocateRequest(devices_ids=["c2h0"]),
        pb2.ContainerAllocateRequest(devices_ids=["c2h1", "c2h0"])]), timeout=5)
    check("allocate-two-containers", len(r.container_responses) == 2 and
          [d.name for d in r.container_responses[1].cdi_devices] == [f"{kind}=c2h1", f"{kind}=c2h0"]
          and r.container_responses[1].envs["FPGAD_CHANNELS"] == "c2h1,c2h0",
          "one response per container, in order")
    try:
        c2h.stub.Allocate(pb2.AllocateRequest(container_requests=[
            pb2.ContainerAllocateRequest(devices_ids=["nope"])]), timeout=5)
        check("allocate-unknown", False, "a channel that does not exist was allocated")
    except grpc.RpcError as e:
        check("allocate-unknown", e.code() == grpc.StatusCode.INVALID_ARGUMENT,
              f"{e.code().name}: {e.details()}")
    try:
        h2c.stub.Allocate(pb2.AllocateRequest(container_requests=[
            pb2.ContainerAllocateRequest(devices_ids=["c2h0"])]), timeout=5)
        check("allocate-wrong-resource", False, "fpgad.io/h2c allocated a c2h channel")
    except grpc.RpcError as e:
        check("allocate-wrong-resource", e.code() == grpc.StatusCode.INVALID_ARGUMENT,
              f"fpgad.io/h2c refuses c2h0: {e.details()}")

    # --- fpgad goes away, comes back, a channel fails -------------------------------------
    fp.stop()
    lst, ok = c2h.wait_list(lambda l: set(l) == {"c2h0", "c2h1"} and
                            all(h == "Unhealthy" for h, _ in l.values()))
    lst2, ok2 = h2c.wait_list(lambda l: all(h == "Unhealthy" for h, _ in l.values()))
    check("fpgad-gone", ok and ok2, f"fpgad stopped: {lst} {lst2}")
    if not check("fpgad-back", fp.start(faults=True) and
                 c2h.wait_list(lambda l: healthy(l, ["c2h0", "c2h1"]))[1],
                 "fpgad started again (every DMA fails now): the channels Healthy again"):
        return 1
    lst, ok = h2c.wait_list(lambda l: l == {})
    specs = []
    for p in glob.glob(os.path.join(cdi_dir, "*.json")):
        with open(p) as f:
            specs.append(json.load(f))
    names = sorted(d["name"] for s in specs for d in s["devices"])
    check("channel-gone", ok and names == ["c2h0", "c2h1", "card"],
          f"fpgad came back without h2c0: fpgad.io/h2c lists {lst}, the CDI spec has {names}")
    # Leased, c2h1 streams into failing DMA and goes FAILED after 5 in a row.
    c = subprocess.run([a.consumer, "10"], env=dict(env, FPGAD_CHANNEL="c2h1"),
                       capture_output=True, text=True, timeout=30)
    for _ in range(100):
        if fp.state("c2h1") == "failed":
            break
        time.sleep(0.05)
    st = fp.state("c2h1")
    lst, ok = c2h.wait_list(lambda l: l.get("c2h1", ("",))[0] == "Unhealthy" and
                            l.get("c2h0", ("",))[0] == "Healthy")
    check("channel-failed", st == "failed" and ok, f"fpgad says c2h1 {st}: {lst}")
    r = c2h.stub.GetPreferredAllocation(pb2.PreferredAllocationRequest(container_requests=[
        pb2.ContainerPreferredAllocationRequest(available_deviceIDs=["c2h1", "c2h0"],
                                                allocation_size=1)]), timeout=5)
    check("preferred-healthy", list(r.container_responses[0].deviceIDs) == ["c2h0"],
          f"{list(r.container_responses[0].deviceIDs)} preferred over the failed c2h1")
    rr = fp.ctl("reset", "c2h1")
    lst, ok = c2h.wait_list(lambda l: healthy(l, ["c2h0", "c2h1"]))
    check("channel-reset", rr.returncode == 0 and ok, f"fpgactl reset c2h1: {lst}")

    # --- the kubelet restarts ----------------------------------------------------------
    for e in ep.values():
        e.close()
    kubelet.stop()
    time.sleep(0.3)
    kubelet.registrations = queue.Queue()
    kubelet.start()
    regs = kubelet.wait_registrations(2, 15)
    ok = set(regs) == want and all(os.path.exists(os.path.join(plugin_dir, r.endpoint))
                                   for r in regs.values())
    lst = None
    if ok:
        ep = {n: Endpoint(plugin_dir, r, pb2, pb2_grpc) for n, r in regs.items()}
        lst, ok = ep["fpgad.io/c2h"].wait_list(lambda l: healthy(l, ["c2h0", "c2h1"]))
        r = ep["fpgad.io/c2h"].stub.Allocate(pb2.AllocateRequest(container_requests=[
            pb2.ContainerAllocateRequest(devices_ids=["c2h1"])]), timeout=5)
        ok = ok and r.container_responses[0].envs["FPGAD_CHANNEL"] == "c2h1"
    check("kubelet-restart", ok, f"registered again: {sorted(regs)}; ListAndWatch {lst}; Allocate")

    # --- the plugin stops ------------------------------------------------------------
    plugin.send_signal(signal.SIGTERM)
    try:
        rc = plugin.wait(10)
    except subprocess.TimeoutExpired:
        rc = None
    left = [p for p in os.listdir(plugin_dir) if p != "kubelet.sock"]
    check("plugin-stop", rc == 0 and not left, f"exit {rc}; sockets left: {left}")

    # --- a runtime without CDI: --edits mounts -------------------------------------
    for e in ep.values():
        e.close()
    kubelet.registrations = queue.Queue()
    with open(os.path.join(a.dir, "plugin-mounts.log"), "w") as plog:
        p2 = subprocess.Popen([a.plugin, "--url", fp.url, "--fpgactl", os.path.join(a.build, "fpgactl"),
                               "--plugin-dir", plugin_dir, "--cdi-dir", "", "--edits", "mounts",
                               "--interval", "0.2"], stderr=plog)
        try:
            regs = kubelet.wait_registrations(1, 15)
            ok, detail = False, f"registered: {sorted(regs)}"
            if "fpgad.io/c2h" in regs:
                e = Endpoint(plugin_dir, regs["fpgad.io/c2h"], pb2, pb2_grpc)
                e.wait_list(lambda l: "c2h0" in l)
                r = e.stub.Allocate(pb2.AllocateRequest(container_requests=[
                    pb2.ContainerAllocateRequest(devices_ids=["c2h0"])]), timeout=5)
                cr = r.container_responses[0]
                m = [(x.container_path, x.host_path, x.read_only) for x in cr.mounts]
                ok = not cr.cdi_devices and m == [(fp.run, fp.run, True)] and \
                    cr.envs["FPGAD_CHANNEL"] == "c2h0"
                detail = f"no CDI names, mounts {m}"
                e.close()
            check("allocate-mounts", ok, detail)
        finally:
            p2.terminate()
            p2.wait(10)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
