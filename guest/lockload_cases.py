# SPDX-License-Identifier: GPL-2.0
"""The lockload cases the shipped lock targets name, and each one's writer.

A target (kernel-patches/targets/NAME.toml) lists what drives its lock
in workloads: "module", generic workloads ("read /proc/iomem"), and the
names of guest/inside/lockload cases, each of which belongs to one
target; its writer key is the fs_writer.ko lock= mode that drives the
lock's other side.  guest/job.py takes its WORKLOADS and a point's
writer= from here, so that a lock with a case of its own is added in
its target file (and lockload.c), not restated in the runner.

The runner reads the target files itself, on every host it runs on
(scripts/campaign/hosts.py ships them with it), as it reads
kernel-patches/kernels.toml: a table generated from them would be one
more file to regenerate for each new lock.  Only these two keys are
read, and only names a guest's shell may see are taken;
scripts/lock_target.py checks the rest of a target.  Only the shipped
folder counts: lockload is built from this repository, so a target of
DIR/targets/ (./run.sh convert --out) may use a shipped case, never add
one.
"""
import os
import re

from lockbench import safeio, workloads
from lockbench.paths import ROOT

TARGET_DIR = os.path.join(ROOT, "kernel-patches", "targets")
# lockload's generic cases, which take their target as arguments
# ("read /proc/iomem"): no target owns them (lockbench/workloads.py).
GENERIC = workloads.GENERIC
# A case's name and a writer mode reach the guest's shell as words.
CASE_RE = re.compile(r"[a-z][a-z0-9_]{0,31}")
WRITER_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")


def target_files(folder=TARGET_DIR):
    """The target files of FOLDER, as paths relative to the repository
    (the payload's names), sorted."""
    return sorted(os.path.relpath(os.path.join(folder, f), ROOT)
                  for f in os.listdir(folder) if f.endswith(".toml"))


def load(folder=TARGET_DIR):
    """{case: (target file, writer mode or None)}, in the files' order;
    one line and exit for a file that names a case badly, twice, or a
    bad writer (as guest/variant_name.py does for its tables)."""
    cases = {}
    for rel in target_files(folder):
        path = os.path.join(ROOT, rel)
        try:
            data = safeio.read_toml(path)
        except safeio.Unsafe as e:
            raise SystemExit(f"targets: {e}") from None
        writer = data.get("writer")
        if writer is not None and not (isinstance(writer, str) and WRITER_RE.fullmatch(writer)):
            raise SystemExit(f"targets: {path}: writer: must be an fs_writer.ko lock= mode")
        workloads = data.get("workloads")
        if not isinstance(workloads, list):
            raise SystemExit(f"targets: {path}: workloads: must be a list of workload names")
        for w in workloads:
            if not isinstance(w, str) or w == "module" or re.split("[ :]", w)[0] in GENERIC:
                continue
            if not CASE_RE.fullmatch(w):
                raise SystemExit(f"targets: {path}: workloads: {w[:40]!r} is not a lockload "
                                 f"case's name ({CASE_RE.pattern})")
            if w in cases:
                raise SystemExit(f"targets: {path}: workloads: {w} is {cases[w][0]}'s already")
            cases[w] = (rel, writer)
    return cases


CASES = load()


def writer(case):
    """The fs_writer.ko mode of CASE's target; None for one with none,
    or for what is not a named case (the module, a generic workload)."""
    return CASES[case][1] if case in CASES else None
