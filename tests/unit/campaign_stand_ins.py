# SPDX-License-Identifier: GPL-2.0
"""Helpers of tests/unit/test_campaign_hostile.py and the other campaign
tests: stand-ins put first on PATH (tests/hosts/), a stand-in build tree,
a process that holds a directory's lock, and a snapshot of a folder to
show that a run left it as it was."""
import hashlib
import json
import os
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"

# Takes the lock of argv[1] (lockbench/dirlock.py, as a runner or a campaign
# does), says so, holds it for argv[2] seconds.
HOLDER = r"""
import sys, time
sys.path.insert(0, sys.argv[3])
from lockbench import dirlock
fd = dirlock.hold(sys.argv[1])
print("held" if fd is not None else "busy", flush=True)
time.sleep(float(sys.argv[2]))
"""


def build_tree(top, variants):
    """TOP/build, a stand-in of build/ (LOCKBENCH_BUILD) where VARIANTS are
    built: each with its build-meta.json, module and kernel, and the guest
    root fs.  Return its path."""
    build = os.path.join(top, "build")
    for v in variants:
        os.makedirs(os.path.join(build, v))
        for f, text in (("build-meta.json", json.dumps({"kernel_version": "6.1", "variant": v})),
                        ("mbox_bench.ko", v), ("uImage", v)):
            with open(os.path.join(build, v, f), "w") as fh:
                fh.write(text)
    os.makedirs(os.path.join(build, "rootfs"))
    with open(os.path.join(build, "rootfs", "rootfs.cpio"), "w") as fh:
        fh.write("rootfs")
    return build


def bin_dir(top, name, target):
    """A folder holding only NAME, a link to TARGET: put first on PATH,
    TARGET runs as NAME."""
    d = os.path.join(top, f"bin-{name}")
    os.makedirs(d, exist_ok=True)
    if not os.path.lexists(os.path.join(d, name)):
        os.symlink(target, os.path.join(d, name))
    return d


def qemu_path(top, env):
    """ENV's PATH with tests/hosts/standin-qemu.sh, the one stand-in QEMU
    (its modes by LB_QEMU), as qemu-system-arm."""
    qemu = os.path.join(ROOT, "tests", "hosts", "standin-qemu.sh")
    return bin_dir(top, "qemu-system-arm", qemu) + os.pathsep + env.get("PATH", os.defpath)


def hold(path, seconds):
    """A process that holds PATH's lock for SECONDS (started once it does)."""
    p = subprocess.Popen([PY, "-c", HOLDER, path, str(seconds), ROOT], stdout=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline().strip()
    if line != "held":
        p.kill()
        p.wait()
        raise AssertionError(f"{path}: the holder got {line!r}")
    return p


def release(p):
    if p.poll() is None:
        p.kill()
    p.wait()
    p.stdout.close()


def snapshot(top):
    """Every path under TOP, TOP itself included, not following links:
    its kind and mode, the SHA-256 of a file's bytes or a link's target,
    and its mtime: what a write, a truncation, a chmod or a new file
    changes."""
    out = {}

    def one(p):
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            with open(p, "rb") as f:
                what = hashlib.sha256(f.read()).hexdigest()
        elif stat.S_ISLNK(st.st_mode):
            what = os.readlink(p)
        else:
            what = None
        out[os.path.relpath(p, top)] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), what,
                                        st.st_mtime_ns)

    one(top)
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            one(os.path.join(dirpath, n))
    return out


if __name__ == "__main__":
    sys.exit("a helper of tests/unit/test_campaign_hostile.py")
