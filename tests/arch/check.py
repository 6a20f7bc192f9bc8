#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/arch/check.py [ROOT] - every include and every call between the
project's C files against the order written in tests/arch/layers.

An include is resolved as the compiler does (the including file's folder,
then the tree's -I folders); a call is a use of NAME( where NAME is a
function that ctags finds defined, not static, in another file.  Each
arrow that climbs or crosses a layer is printed with the two files (and
the function, for a call); the exit status is 1 if there is any, 0 if
none, 77 (skip) without ctags.
"""
import fnmatch
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
os.chdir(ROOT)
IDIRS = ["daemon", "include", "common", "client", "kmod/uapi", "kmod"]
SRC_DIRS = ["daemon", "client", "common", "include", "kmod", "python/src", "tests"]


def read_layers(path):
    sections, cur = {}, None
    for raw in open(path):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            cur = sections.setdefault(m.group(1), [])
            continue
        if cur is None:
            sys.exit("%s: a layer before any [section]" % path)
        cur.append(line.split())
    return sections


def unit_of(path, units):
    """The longest unit naming @path: the file itself, a folder above it,
    or a pattern (fnmatch) that matches it."""
    best = None
    for u in units:
        hit = fnmatch.fnmatchcase(path, u) if any(c in u for c in "*?[") else \
            path == u or path.startswith(u + "/")
        if hit and (best is None or len(u) > len(best)):
            best = u
    return best


def sources():
    out = []
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split()
    files = tracked or [os.path.relpath(os.path.join(d, f), ROOT)
                        for top in SRC_DIRS for d, _, fs in os.walk(top) for f in fs]
    for f in files:
        if f.endswith((".c", ".h", ".cu")) and f.split("/")[0] in {d.split("/")[0] for d in SRC_DIRS} \
                and os.path.isfile(f):
            out.append(f)
    return sorted(set(out))


def strip_c(s):
    # comments and string/char literals out, line count kept
    pat = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pat.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), s)


def includes(f, text, known):
    arrows = []
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r'\s*#\s*include\s*["<]([^">]+)[">]', line)
        if not m:
            continue
        name = m.group(1)
        cands = [os.path.normpath(os.path.join(os.path.dirname(f), name))] if '"' in line else []
        cands += [os.path.normpath(os.path.join(d, name)) for d in IDIRS]
        for c in cands:
            if c in known:
                arrows.append((n, c, None))
                break
    return arrows


def definitions(files):
    if not shutil.which("ctags"):
        return None
    out = subprocess.run(["ctags", "-x", "--c-kinds=f", "--language-force=C"] + files,
                         capture_output=True, text=True).stdout
    defs, local = {}, {}
    for line in out.splitlines():
        m = re.match(r"(\S+)\s+function\s+(\d+)\s+(\S+)\s+(.*)", line)
        if not m:
            continue
        name, path, src = m.group(1), m.group(3), m.group(4)
        if re.search(r"\bstatic\b", src.split(name)[0]):
            local.setdefault(path, set()).add(name)
        else:
            defs.setdefault(name, set()).add(path)
    return defs, local


def main():
    sections = read_layers("tests/arch/layers")
    files = sources()
    known = set(files)
    found = definitions([f for f in files if not f.startswith("tests/")])
    if found is None:
        print("arch: SKIP: no ctags (apt-get install universal-ctags)")
        return 77
    defs, local = found
    arrows = []  # (src, line, dst, function)
    for f in files:
        text = open(f, errors="replace").read()
        for n, dst, _ in includes(f, text, known):
            arrows.append((f, n, dst, None))
        if f.endswith(".h"):
            continue
        own = {name for name, paths in defs.items() if f in paths} | local.get(f, set())
        body = strip_c(text)
        for n, line in enumerate(body.splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", line):
                name = m.group(1)
                if name in own or name not in defs:
                    continue
                for dst in defs[name]:
                    arrows.append((f, n, dst, name))
    bad = 0
    seen = set()
    for sec, layers in sections.items():
        level = {u: i for i, layer in enumerate(layers) for u in layer}
        units = list(level)
        for src, n, dst, fn in arrows:
            us, ud = unit_of(src, units), unit_of(dst, units)
            if us is None or ud is None or us == ud or level[us] < level[ud]:
                continue
            key = (src, dst, fn)
            if key in seen:
                continue
            seen.add(key)
            bad += 1
            how = "calls %s() in" % fn if fn else "includes"
            where = "beside it" if level[us] == level[ud] else "above it"
            print("arch: FAIL [%s] %s:%d %s %s (%s is %s)" % (sec, src, n, how, dst, ud, where))
    n_inc = sum(1 for a in arrows if a[3] is None)
    print("arch: %d includes and %d calls between %d files checked against tests/arch/layers"
          % (n_inc, len(arrows) - n_inc, len(files)))
    print("arch: %d passed, %d failed" % (1 if bad == 0 else 0, 1 if bad else 0))
    return 1 if bad else 0


sys.exit(main())
