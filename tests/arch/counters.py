#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/arch/counters.py [ROOT] - the channel counters of
common/channel_counters.h, checked where they are written by hand: the
protocol's ChannelStatsReply, fpgad.h's struct fpgad_channel_stats, the
Python binding's ChannelStats, libfpgad(3), fpgactl(1) and (the ones that
are Prometheus families) fpgad(8).  fpgad's reply, libfpgad's copy,
fpgactl's JSON, the Python dict and the metrics are generated from the
table, so the compiler holds those.  Exit 1 naming each miss."""
import os
import re
import sys

os.chdir(sys.argv[1] if len(sys.argv) > 1 else ".")
table = open("common/channel_counters.h").read()
table = table[table.index("#define CHANNEL_COUNTERS(X)"):]
counters = re.findall(r"\bX\((\w+),\s*(NULL|\")", table)
if not counters:
    sys.exit("counters: no X(name, help) in common/channel_counters.h")


def block(path, start):
    s = open(path).read()
    i = s.index(start)
    return s[i:s.index("}", i)]


places = [
    ("proto/fpgad.proto", block("proto/fpgad.proto", "message ChannelStatsReply {"),
     r"\buint64 %s = \d+;"),
    ("include/fpgad.h", block("include/fpgad.h", "struct fpgad_channel_stats {"),
     r"\buint64_t %s;"),
    ("python/fpgad/__init__.py", open("python/fpgad/__init__.py").read().split(
        "class ChannelStats:", 1)[1].split("\n\n", 1)[0], r"^\s+%s: int$"),
    ("man/libfpgad.3", open("man/libfpgad.3").read(), r"\b%s\b"),
    ("man/fpgactl.1", open("man/fpgactl.1").read(), r"\b%s\b"),
]
bad = 0
for name, help_ in counters:
    for path, text, pat in places:
        if not re.search(pat % re.escape(name), text, re.M):
            print("counters: FAIL: %s: no %s (common/channel_counters.h names it)" % (path, name))
            bad += 1
    if help_ != "NULL" and "fpgad_channel_%s_total" % name not in open("man/fpgad.8").read():
        print("counters: FAIL: man/fpgad.8: no fpgad_channel_%s_total" % name)
        bad += 1
print("counters: %d channel counters checked in %d places each" % (len(counters), len(places)))
print("counters: %d passed, %d failed" % (0 if bad else 1, 1 if bad else 0))
sys.exit(1 if bad else 0)
