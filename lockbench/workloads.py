# SPDX-License-Identifier: GPL-2.0
"""How a generic workload is spelled: lockload's generic cases, which
take their target as arguments, a path (read: open + read to EOF +
close; stat; open: open + close) or a system call's number and up to 6
integer arguments.  A campaign or target file spells one
"read /proc/iomem", the job and lockload's param line "read:/proc/iomem"
(one token: a job line is split on white space).  Here, at the bottom
of the house, because the job (guest/job.py) checks them and the report
(analysis/render/summary.py) names them; it imports nothing of the
project."""
import re

# No target owns these cases: the target files name the others.
GENERIC = ("read", "stat", "open", "syscall")
# An absolute path of safe characters (no ':', no white space, no quotes):
# it reaches the guest's shell as lockload's argument.
GENERIC_PATH_RE = re.compile(r"/[A-Za-z0-9_.,+@=/-]{0,199}")
GENERIC_INT_RE = re.compile(r"-?[0-9]{1,10}")
GENERIC_SPELLING = ("read PATH, stat PATH, open PATH (PATH absolute, of [A-Za-z0-9_.,+@=/-]), "
                    "syscall NR [ARG...] (NR 0..4095, up to 6 32-bit integer arguments)")


def generic_words(workload):
    """The words of a generic workload (["read", "/proc/iomem"]), spelled
    "read /proc/iomem" or "read:/proc/iomem"; None for anything else."""
    if not isinstance(workload, str) or len(workload) > 240:
        return None
    words = workload.split(":") if ":" in workload else workload.split(" ")
    if not words or words[0] not in GENERIC:
        return None
    args = words[1:]
    if words[0] == "syscall":
        if not 1 <= len(args) <= 7 or not all(GENERIC_INT_RE.fullmatch(a) for a in args):
            return None
        if not 0 <= int(args[0]) <= 4095 or not all(-2**31 <= int(a) < 2**31 for a in args[1:]):
            return None
    elif len(args) != 1 or not GENERIC_PATH_RE.fullmatch(args[0]) or "/../" in args[0] + "/":
        return None
    return words


def workload_spelled(workload):
    """A workload as a campaign or target file spells it ("read /proc/iomem")."""
    words = generic_words(workload)
    return " ".join(words) if words else workload
