# SPDX-License-Identifier: GPL-2.0
"""Read and check a lock target (kernel-patches/targets/NAME.toml).

A target is the lock a campaign measures, as data: the source file and
the lock's name there, the class name /proc/lock_stat prints for it, the
rwlock kernel and its conversion (variants), the workloads that drive it
(guest/job.py WORKLOADS: "module" for mbox_bench, a guest/lockload case
otherwise) and how the workload's counts relate to lock_stat's
acquisitions (cross_check, the relation the analysis and
tests/check_lockload.py check).  A campaign names it with
`target = "NAME"` (scripts/campaign_file.py; default mboxes_lock), which
gives the analysis and the plots their lock class and refuses points no
workload of the target's drives.  Adding a target is adding a file
(docs/targets.md).
"""
import os
import re
import tomllib

from analysis.common import CliError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_DIR = os.path.join(ROOT, "kernel-patches", "targets")
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_]{0,63}")
# A lock_stat class: "file_systems_lock", "&sb->s_type->i_lock_key".
LOCK_CLASS_RE = re.compile(r"[^\s\"'\\]{1,128}")
KEYS = {
    "description": (str, lambda v: 0 < len(v) <= 200, "text of 1-200 characters"),
    "file": (str, lambda v: re.fullmatch(r"[a-z0-9_/.-]+\.c", v) is not None,
             "a .c file of the kernel tree"),
    "lock": (str, lambda v: re.fullmatch(r"[a-z_][a-z0-9_]*", v) is not None,
             "a C identifier"),
    "lock_class": (str, LOCK_CLASS_RE.fullmatch, "a lock_stat class name (no spaces, "
                   "quotes or backslashes)"),
    "variants": (list, lambda v: len(v) == 2 and all(isinstance(x, str) for x in v),
                 "[rwlock variant, spinlock variant]"),
    "workloads": (list, lambda v: v and all(isinstance(x, str) for x in v),
                  "a non-empty list of workload names"),
    "cross_check": (str, lambda v: 0 < len(v) <= 400, "text of 1-400 characters"),
}


class TargetError(CliError):
    pass


def names():
    if not os.path.isdir(TARGET_DIR):
        return []
    return sorted(f[:-5] for f in os.listdir(TARGET_DIR) if f.endswith(".toml"))


def load(name):
    """The target NAME as a dict (its keys, plus "name"); TargetError with
    one line naming the file and key otherwise."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or name not in names():
        raise TargetError(f"unknown target {name!r} (known: {', '.join(names())})")
    path = os.path.join(TARGET_DIR, name + ".toml")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise TargetError(f"{path}: {e}") from None
    for key in data:
        if key not in KEYS:
            raise TargetError(f"{path}: unknown key {key!r} (allowed: {', '.join(KEYS)})")
    for key, (typ, check, allowed) in KEYS.items():
        val = data.get(key)
        if not isinstance(val, typ) or not check(val):
            raise TargetError(f"{path}: {key}: must be {allowed}")
    return {"name": name, **data}
