#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/arch/names.py [ROOT] - every file a comment or README.md names
exists in the tree.

A name is a word that ends in a source extension (net_frame.c,
client_internal.h, tests/arch/check.py, cmd_*.c) or a path under one of
the tree's top folders (tests/arch/layers, daemon/control/).  It is found
when a tracked file (or folder) is at that path, from the tree's root,
from the folder of the file that names it, or at the end of a tracked
path (device/net/roce_rx.c, uapi/fpgad_dma.h); a bare file name when any
tracked file has it; a pattern when one matches.  Comments are read in C
(.c .h .cu), Python, shell and make files, and README.md whole.  Names of
other projects' files and of generated ones are in EXCEPT below.  Each
stale name is printed with its file and line; the exit status is 1 if
there is any.
"""
import fnmatch
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
os.chdir(ROOT)

EXT = ("c", "h", "cu", "py", "sh", "mk", "proto", "md")
# Not files of this tree: other projects' sources, files the build makes,
# and names that only look like paths.
EXCEPT = {
    "libxdma.c", "xdma_cdev.c", "cdev_ctrl.c",	# Xilinx's XDMA driver
    "drivers/pci/p2pdma.c", "mm/util.c",	# Linux
    "cuda.h",					# CUDA's driver API
    "fpgad.pb-c.h", "fpgad.pb-c.c",		# protoc-c, at build time
    "kmod/fpgad_dma.ko",			# make kmod
    "TARGETS.md",				# written by tests/bench/run.sh
    "DESIGN.md",				# the design, kept outside the tree
    "SPEC.md",					# the Container Device Interface's specification
}

# Stale names in files whose owners have yet to fix them: (file, name).
# Each is reported, without failing, until it is fixed; an entry that no
# longer matches fails the check, so that it is taken out.
PENDING = set()

C_COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
HASH_COMMENT = re.compile(r'(?:^|(?<=\s))#[^\n]*')
WORD = re.compile(r'[A-Za-z0-9_.*?/\[\]-]+')


def tracked():
    out = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split()
    return [f for f in out if os.path.exists(f)]


def comments(path, text):
    """(line, text) of each comment of @path; README.md is all comment."""
    if path == "README.md":
        return [(1, text)]
    if path.endswith((".c", ".h", ".cu")):
        return [(text.count("\n", 0, m.start()) + 1, m.group(0))
                for m in C_COMMENT.finditer(text) if m.group(0)[0] == "/"]
    if path.endswith((".py", ".sh", ".mk")) or os.path.basename(path) == "Makefile":
        return [(text.count("\n", 0, m.start()) + 1, m.group(0))
                for m in HASH_COMMENT.finditer(text)]
    return []


def main():
    files = tracked()
    have = set(files)
    dirs = {os.path.dirname(f) for f in files}
    dirs |= {d.rsplit("/", i)[0] for d in list(dirs) for i in range(1, d.count("/") + 1)}
    base = {os.path.basename(f) for f in files}
    tops = {f.split("/")[0] for f in files if "/" in f}

    def exists(name, where):
        name = name.rstrip("/")
        if any(c in name for c in "*?["):
            return any(fnmatch.fnmatchcase(f, name) or fnmatch.fnmatchcase(f, "*/" + name)
                       for f in files)
        if "/" not in name:
            return name in base or name in dirs
        for p in (name, os.path.normpath(os.path.join(os.path.dirname(where), name))):
            # a program is named for its source
            if p in have or p in dirs or p + ".c" in have:
                return True
        return any(f.endswith("/" + name) for f in have | dirs)

    def is_name(w):
        if "://" in w or w.startswith("."):
            return False
        if re.search(r"\.(%s)$" % "|".join(EXT), w):
            # a word, not a member access: some letters before the dot
            return re.search(r"[A-Za-z_*]", w.rsplit(".", 1)[0]) is not None
        return "/" in w and w.split("/")[0] in tops and w.split("/")[1:] != [""] * (w.count("/"))

    bad = 0
    pending = set()
    for f in files:
        if not (f == "README.md" or f.endswith((".c", ".h", ".cu", ".py", ".sh", ".mk"))
                or os.path.basename(f) == "Makefile"):
            continue
        text = open(f, errors="replace").read()
        for line, c in comments(f, text):
            for k, row in enumerate(c.split("\n")):
                for m in WORD.finditer(row):
                    w = m.group(0)
                    # absolute paths and <system.h> are not the tree's
                    if w.startswith("/") or row[m.start() - 1:m.start()] == "<":
                        continue
                    w = w.strip(".,;:-").rstrip("/")
                    if w.count("[") < w.count("]"):
                        w = w[:w.rindex("]")].rstrip("/")
                    if w.startswith("_"):
                        w = "*" + w	# "files ending in _cuda.c"
                    if not w or not is_name(w) or w in EXCEPT or os.path.basename(w) in EXCEPT:
                        continue
                    if exists(w, f):
                        continue
                    if (f, w) in PENDING:
                        print("names: %s:%d: %s does not exist (pending)" % (f, line + k, w))
                        pending.add((f, w))
                        continue
                    print("names: %s:%d: %s does not exist" % (f, line + k, w))
                    bad += 1
    for f, w in sorted(PENDING - pending):
        print("names: %s names %s no more: take it out of PENDING" % (f, w))
        bad += 1
    print("names: %d stale file names, %d pending" % (bad, len(pending)))
    return 1 if bad else 0


sys.exit(main())
