# SPDX-License-Identifier: MIT
"""manifest_check.py DAEMONSET.yaml PLUGIN - the DaemonSet manifest parses
and says what the plugin needs: the kubelet's device-plugin directory, the
runtime directory (read-only, the directory), the CDI directory, a
writable /tmp for the stubs, and only options the plugin knows."""
import subprocess
import sys

import yaml

path, plugin = sys.argv[1:3]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
errs = []
ds = [d for d in docs if d.get("kind") == "DaemonSet"]
if len(ds) != 1 or ds[0].get("apiVersion") != "apps/v1":
    print("FAIL daemonset: no apps/v1 DaemonSet")
    sys.exit(1)
spec = ds[0]["spec"]
pod = spec["template"]["spec"]
if spec["selector"]["matchLabels"].items() - spec["template"]["metadata"]["labels"].items():
    errs.append("the selector does not match the template's labels")
c = pod["containers"][0]
vols = {v["name"]: v for v in pod["volumes"]}
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
want = {"/var/lib/kubelet/device-plugins": "/var/lib/kubelet/device-plugins",
        "/run/fpgad": "/run/fpgad", "/var/run/cdi": "/var/run/cdi"}
for mp, hp in want.items():
    m = mounts.get(mp)
    if not m or vols[m["name"]].get("hostPath", {}).get("path") != hp:
        errs.append(f"{mp}: not the host's {hp}")
if not mounts.get("/run/fpgad", {}).get("readOnly"):
    errs.append("/run/fpgad is not read-only")
if "/tmp" not in mounts and c.get("securityContext", {}).get("readOnlyRootFilesystem"):
    errs.append("read-only root and no /tmp for the stubs")
# Every option in args is one the plugin accepts.
help_text = subprocess.run([sys.executable, plugin, "--help"], capture_output=True, text=True).stdout
for a in c.get("args", []):
    opt = a.split("=", 1)[0]
    if opt.startswith("--") and opt not in help_text:
        errs.append(f"{opt}: not an option of the plugin")
if errs:
    print("FAIL daemonset: " + "; ".join(errs))
    sys.exit(1)
print(f"PASS daemonset: {path.rsplit('/', 1)[-1]} parses; host paths, read-only runtime "
      f"directory, /tmp and {len(c.get('args', []))} plugin options check out")
