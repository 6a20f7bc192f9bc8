#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/arch/names_json.py [ROOT] - one concept, one name: the keys of
fpgactl's --json objects (read from the json_pack() and
json_object_set_new() calls of client/fpgactl), the fields of the Python
dataclasses (python/fpgad/__init__.py), the keys listed in fpgactl(1) and
the Prometheus families of daemon/metrics.c, checked against each other:

  - status --json's channel objects, stats --json and status --json's card
    have the fields of ChannelSummary, ChannelStats and Card, and fpgactl(1)
    lists each of their keys;
  - every family fpgad_channel_NAME (a gauge) or fpgad_channel_NAME_total
    (a counter) has NAME as a key of status's channels or of stats, and
    fpgad_card_aer_errors_total a card key per severity;
  - a name retired for another (lessees, card_verified, ...) is used as a
    key, field or listed name nowhere.

Exit 1 naming each miss."""
import glob
import os
import re
import sys

os.chdir(sys.argv[1] if len(sys.argv) > 1 else ".")
bad = 0
checks = 0


def fail(msg):
    global bad
    print("names_json: FAIL: " + msg)
    bad += 1


def function(path, name):
    """The body of C function @name in @path."""
    s = open(path).read()
    m = re.search(r"^[\w \*]*\b%s\([^;{]*\)\s*\{" % re.escape(name), s, re.M)
    if not m:
        sys.exit("names_json: no function %s in %s" % (name, path))
    depth, i = 0, m.end() - 1
    for j in range(i, len(s)):
        depth += {"{": 1, "}": -1}.get(s[j], 0)
        if depth == 0:
            return s[i:j + 1]
    return s[i:]


def split_args(text):
    """Top-level comma-separated arguments of a call's text (after '(')."""
    args, depth, cur, i = [], 0, "", 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur += text[i:j + 1]
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append(cur.strip())
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            i += 1
            continue
        cur += c
        i += 1
    return args


def literal(arg):
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', arg)
    return "".join(parts) if parts and re.fullmatch(r'(\s*"(?:[^"\\]|\\.)*"\s*)+', arg) else None


def pack_keys(call_args):
    """{top-level key: 'object' or 'value'} of one json_pack()'s arguments."""
    fmt = literal(call_args[0])
    args = call_args[1:]
    keys, stack, expect_key = {}, [], False
    n = 0
    for c in fmt:
        if c in " \t,:":
            continue
        if c == "{":
            if stack and not expect_key:
                if len(stack) == 1:
                    keys[last] = "object"
            stack.append("{")
            expect_key = True
            continue
        if c == "}":
            stack.pop()
            expect_key = bool(stack)
            continue
        if c in "?*#%":
            continue
        if expect_key and c == "s":
            key = literal(args[n]) if n < len(args) else None
            if len(stack) == 1 and key:
                keys.setdefault(key, "value")
                last = key
            n += 1
            expect_key = False
            continue
        n += 1          # a value: s, i, I, b, f, o, O, n consumes one
        expect_key = bool(stack)
    return keys


def json_keys(path, func):
    """{key: kind} of the JSON object function @func of @path builds."""
    body = function(path, func)
    keys = {}
    for m in re.finditer(r"\bjson_pack\(", body):
        for k, v in pack_keys(split_args(body[m.end():])).items():
            keys.setdefault(k, v)
    for m in re.finditer(r'\bjson_object_set_new\(\s*\w+,\s*"(\w+)"', body):
        keys.setdefault(m.group(1), "value")
    if "CHANNEL_COUNTERS(COUNTER_JSON)" in body:
        for c in counters:
            keys.setdefault(c, "value")
    return keys


def dataclass_fields(cls):
    s = open("python/fpgad/__init__.py").read()
    m = re.search(r"^class %s\b.*?:\n(.*?)(?=^\S|\Z)" % cls, s, re.M | re.S)
    if not m:
        sys.exit("names_json: no class %s in python/fpgad/__init__.py" % cls)
    return re.findall(r"^    (\w+): ", m.group(1), re.M)


def man_keys(page, start, stop=".TP"):
    """Names set in bold (.B/.BR/.RB) from @start up to the next @stop."""
    s = open(page).read()
    i = s.index(start)
    text = s[i:s.index(stop, i + len(start))]
    words = set()
    for line in text.splitlines():
        m = re.match(r"^\.(B|BR|RB|BI)\s+(.*)$", line)
        if not m:
            continue
        for w in re.findall(r"[A-Za-z_][\w]*", m.group(2).replace("\\-", "-")):
            words.add(w)
    return words


table = open("common/channel_counters.h").read()
counters = re.findall(r"\bX\((\w+),", table[table.index("#define CHANNEL_COUNTERS(X)"):])

summary = json_keys("client/fpgactl/cmd_status.c", "channel_json")
stats = json_keys("client/fpgactl/cmd_stats.c", "fpgactl_stats")
card = json_keys("client/fpgactl/cmd_status.c", "card_json")

# JSON against Python.  stats' net object has no dataclass (yet).
for what, keys, cls, extra in [
        ("status --json channels", summary, "ChannelSummary", set()),
        ("stats --json", stats, "ChannelStats", {"net"}),
        ("status --json card", card, "Card", set())]:
    fields = set(dataclass_fields(cls))
    checks += 1
    for k in sorted(set(keys) - fields - extra):
        fail("fpgactl %s has %s, python/fpgad/__init__.py's %s does not" % (what, k, cls))
    for f in sorted(fields - set(keys)):
        fail("python/fpgad/__init__.py's %s has %s, fpgactl %s does not" % (cls, f, what))

# JSON against fpgactl(1).
for what, keys, start in [
        ("status --json channels", summary, ".B channels\n"),
        ("stats --json", stats, ".BI stats \" channel\"\n")]:
    listed = man_keys("man/fpgactl.1", start)
    checks += 1
    for k in sorted(keys):
        if k not in listed:
            fail("man/fpgactl.1 does not list %s's key %s" % (what, k))

# Metrics against JSON.
metrics = open("daemon/metrics.c").read()
families = set(re.findall(r'"(fpgad_channel_\w+)"', metrics))
families |= {"fpgad_channel_%s_total" % c for c in counters}
skip = {"mode", "state"}          # labels of one gauge, status's own keys
for fam in sorted(families):
    name = fam[len("fpgad_channel_"):]
    if name.startswith("net_") or name in skip or "latency" in name or \
       "duration" in name:
        continue
    name = re.sub(r"_total$", "", name)
    checks += 1
    if name not in summary and name not in stats:
        fail("daemon/metrics.c's %s: no key %s in fpgactl status --json's "
             "channels or stats --json" % (fam, name))
if "fpgad_card_aer_errors_total" in metrics:
    for sev in ("correctable", "nonfatal", "fatal"):
        checks += 1
        if "aer_%s" % sev not in card:
            fail("daemon/metrics.c's fpgad_card_aer_errors_total{severity=\"%s\"}: "
                 "no key aer_%s in fpgactl status --json's card" % (sev, sev))

# A name retired for another is used nowhere.
retired = {
    "lessees": "leases",
    "card_verified": "card_good",
    "card_rejected": "card_bad",
    "card_verified_frames": "card_good",
}
places = sorted(glob.glob("client/fpgactl/*.c") + glob.glob("python/src/*.c"))
for old, new in sorted(retired.items()):
    checks += 1
    for path in places:
        if '"%s"' % old in open(path).read():
            fail("%s: JSON or dict key \"%s\" (the name is %s)" % (path, old, new))
    if re.search(r"^\s+%s: " % old, open("python/fpgad/__init__.py").read(), re.M):
        fail("python/fpgad/__init__.py: field %s (the name is %s)" % (old, new))
    for page in sorted(glob.glob("man/*.[1-8]")):
        notes = False   # NOTES tells the renames: the old names are due there
        for n, line in enumerate(open(page), 1):
            if line.startswith(".SH"):
                notes = line.startswith(".SH NOTES")
            if not notes and re.match(r"^\.(B|BR|RB|I|IR)\s+%s\b" % old, line):
                fail("%s:%d: %s (the name is %s)" % (page, n, old, new))
    for path in ("proto/fpgad.proto", "include/fpgad.h"):
        if re.search(r"\b(uint32|uint64|uint32_t|uint64_t|string) %s\b" % old,
                     open(path).read()):
            fail("%s: field %s (the name is %s)" % (path, old, new))

# A key is a number or an object, the same in every object that has it.
kinds = {}
for path in sorted(glob.glob("client/fpgactl/*.c")):
    s = open(path).read()
    for m in re.finditer(r"\bjson_pack\(", s):
        try:
            ks = pack_keys(split_args(s[m.end():]))
        except (IndexError, TypeError):
            continue
        for k, v in ks.items():
            kinds.setdefault(k, {}).setdefault(v, path)
for k, v in sorted(kinds.items()):
    checks += 1
    if len(v) > 1:
        fail("JSON key %s is an object in %s and a value in %s" % (k, v["object"], v["value"]))

print("names_json: %d checks of fpgactl's JSON, Python, fpgactl(1) and the metrics" % checks)
print("names_json: %d passed, %d failed" % (0 if bad else 1, 1 if bad else 0))
sys.exit(1 if bad else 0)
