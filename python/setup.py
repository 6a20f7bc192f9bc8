# SPDX-License-Identifier: MIT
"""Build of fpgad._fpgad, an abi3 extension (CPython >= 3.11), against one of:

* a build tree: $FPGAD_BUILD, else ../build beside this directory when it
  holds libfpgad.a.  libfpgad.a is linked in (with the CUDA runtime
  statically when that tree was built with CUDA); nng and protobuf-c are
  linked dynamically.
* the installed libfpgad: pkg-config fpgad, linked dynamically against
  libfpgad.so.
"""

import os
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def build_tree():
    b = os.environ.get("FPGAD_BUILD") or os.path.join(TOP, "build")
    b = os.path.abspath(b)
    if os.path.exists(os.path.join(b, "libfpgad.a")):
        return b
    if os.environ.get("FPGAD_BUILD"):
        raise SystemExit("FPGAD_BUILD=%s holds no libfpgad.a: run make there first" % b)
    return None


def private_libs(pc):
    """Libs.private of a build tree's fpgad.pc (the CUDA runtime, if any),
    its ${variables} expanded as pkg-config would."""
    out = subprocess.run(["pkg-config", "--print-variables", pc], capture_output=True,
                         text=True)
    env = {}
    for name in out.stdout.split():
        env[name] = subprocess.check_output(["pkg-config", "--variable=" + name, pc],
                                            text=True).strip()
    with open(pc) as f:
        for line in f:
            if line.startswith("Libs.private:"):
                libs = line.split(":", 1)[1]
                for name, value in env.items():
                    libs = libs.replace("${%s}" % name, value)
                return shlex.split(libs)
    return []


def config():
    b = build_tree()
    if b:
        return dict(include_dirs=[os.path.join(TOP, "include")],
                    extra_objects=[os.path.join(b, "libfpgad.a")],
                    extra_link_args=["-Wl,--exclude-libs,ALL"] +
                    private_libs(os.path.join(b, "fpgad.pc")) + ["-ldl"])
    try:
        cflags = subprocess.check_output(["pkg-config", "--cflags", "fpgad"], text=True)
        libs = subprocess.check_output(["pkg-config", "--libs", "fpgad"], text=True)
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit("libfpgad not found: build the tree (make) or install it "
                         "(make install; pkg-config fpgad)")
    return dict(extra_compile_args=shlex.split(cflags),
                extra_link_args=shlex.split(libs) + ["-ldl"])


cfg = config()
ext = Extension(
    "fpgad._fpgad",
    sources=sorted(os.path.join("src", f) for f in os.listdir(os.path.join(HERE, "src"))
                   if f.endswith(".c")),
    # common/: the channel counters' table (channel_counters.h)
    include_dirs=["src", os.path.join(TOP, "common")] + cfg.get("include_dirs", []),
    define_macros=[("Py_LIMITED_API", "0x030B0000"), ("_GNU_SOURCE", None)],
    extra_compile_args=["-std=c11", "-fvisibility=hidden"] + cfg.get("extra_compile_args", []),
    extra_objects=cfg.get("extra_objects", []),
    extra_link_args=cfg.get("extra_link_args", []),
    py_limited_api=True,
)

setup(ext_modules=[ext], options={"bdist_wheel": {"py_limited_api": "cp311"}})
