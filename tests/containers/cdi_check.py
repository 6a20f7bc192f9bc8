# SPDX-License-Identifier: MIT
"""cdi_check.py SCHEMA_DIR SPEC.json RUNTIME_DIR CHANNEL... - check a CDI
spec that fpgad-cdi wrote: against CDI's JSON schema (the vendored
k8s/cdi-schema, with python3-jsonschema), against the rules of CDI's
SPEC.md that the schema does not hold (kind and device names, the minimum
cdiVersion of the fields used), and against what fpgad's devices must be
(one per channel and one for the card, the runtime directory and nothing
else mounted, FPGAD_URL and FPGAD_CHANNEL set, no device nodes).

Prints one 'PASS name' or 'FAIL name: why' per check; exit 1 on a failure.
"""

import json
import os
import re
import sys

import jsonschema

FEATURE_VERSIONS = [  # SPEC.md, "Released versions" and the field notes
    ("annotations", (0, 6, 0)),
    ("additionalGids", (0, 7, 0)),
    ("intelRdt", (0, 7, 0)),
]


def validator(schema_dir):
    with open(os.path.join(schema_dir, "schema.json")) as f:
        schema = json.load(f)
    with open(os.path.join(schema_dir, "defs.json")) as f:
        defs = json.load(f)
    base = "file://" + os.path.abspath(schema_dir) + "/"
    resolver = jsonschema.RefResolver(base + "schema.json", schema,
                                      store={base + "defs.json": defs, "defs.json": defs})
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, resolver=resolver)


def used_fields(obj, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(k)
            used_fields(v, out)
    elif isinstance(obj, list):
        for v in obj:
            used_fields(v, out)
    return out


def rule_errors(spec, runtime_dir, channels):
    errs = []
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)$", spec.get("cdiVersion", ""))
    if not m:
        return ["cdiVersion is not MAJOR.MINOR.PATCH"]
    version = tuple(int(x) for x in m.groups())
    for field, need in FEATURE_VERSIONS:
        if field in used_fields(spec, set()) and version < need:
            errs.append(f"{field} needs cdiVersion {'.'.join(map(str, need))}, spec says {spec['cdiVersion']}")
    vendor, _, cls = spec.get("kind", "").partition("/")
    if not re.match(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$", vendor) \
            or not re.match(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$", cls):
        errs.append(f"bad kind {spec.get('kind')!r}")
    names = [d["name"] for d in spec["devices"]]
    for n in names:
        if not re.match(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$", n):
            errs.append(f"bad device name {n!r}")
    if len(set(names)) != len(names):
        errs.append("device names repeat")
    if sorted(names) != sorted(channels + ["card"]):
        errs.append(f"devices {names}, expected {channels} and card")
    edits = [spec.get("containerEdits", {})] + [d["containerEdits"] for d in spec["devices"]]
    mounts = [m for e in edits for m in e.get("mounts", [])]
    if len(mounts) != 1 or mounts[0]["hostPath"] != runtime_dir \
            or mounts[0]["containerPath"] != runtime_dir:
        errs.append(f"mounts {mounts}: expected the runtime directory {runtime_dir} alone, at its path")
    elif "ro" not in mounts[0].get("options", []) or "bind" not in mounts[0].get("options", []):
        errs.append(f"the runtime directory is not bound read-only: {mounts[0]}")
    for e in edits:
        for k in ("deviceNodes", "hooks", "netDevices"):
            if e.get(k):
                errs.append(f"{k} in the edits: fpgad's devices need none")
    url = f"FPGAD_URL=ipc://{runtime_dir}/fpgad.sock"
    for d in spec["devices"]:
        env = d["containerEdits"].get("env", [])
        if url not in env:
            errs.append(f"{d['name']}: no {url}")
        if d["name"] != "card" and f"FPGAD_CHANNEL={d['name']}" not in env:
            errs.append(f"{d['name']}: no FPGAD_CHANNEL={d['name']}")
        if d["name"] == "card" and f"FPGAD_CHANNELS={','.join(channels)}" not in env:
            errs.append(f"card: FPGAD_CHANNELS is not {','.join(channels)}")
    return errs


def main():
    schema_dir, path, runtime_dir = sys.argv[1:4]
    channels = sys.argv[4:]
    v = validator(schema_dir)
    with open(path) as f:
        spec = json.load(f)
    failed = 0
    errs = sorted(v.iter_errors(spec), key=lambda e: list(e.path))
    if errs:
        print(f"FAIL cdi-schema: {os.path.basename(path)}: " +
              "; ".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errs))
        failed += 1
    else:
        print(f"PASS cdi-schema: {os.path.basename(path)} (cdiVersion {spec['cdiVersion']}) "
              f"validates against CDI's schema.json")
    errs = rule_errors(spec, runtime_dir, channels)
    if errs:
        print(f"FAIL cdi-rules: {os.path.basename(path)}: " + "; ".join(errs))
        failed += 1
    else:
        print(f"PASS cdi-rules: {os.path.basename(path)}: names, minimum version, "
              f"{len(spec['devices'])} devices, one read-only mount, env")
    # The validator must refuse what CDI refuses, or the PASS above is empty.
    bad = [dict(spec, devices=[{"name": "x"}]),  # no containerEdits
           {k: spec[k] for k in spec if k != "kind"},
           dict(spec, devices=[dict(spec["devices"][0], containerEdits={"mounts": [{"hostPath": "/x"}]})])]
    caught = sum(1 for b in bad if list(v.iter_errors(b)))
    if caught != len(bad):
        print(f"FAIL cdi-schema-refuses: only {caught} of {len(bad)} broken specs refused")
        failed += 1
    else:
        print(f"PASS cdi-schema-refuses: {len(bad)} broken specs refused by the schema")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
