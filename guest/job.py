# SPDX-License-Identifier: GPL-2.0
"""The job a guest runs: workload points and options, checked on the host.

The guest's init reads it as plain "option KEY VALUE" and
"point ID KEY=VALUE..." lines (guest/JOB.md), so every value is checked here
against a whitelist of keys and integer ranges: nothing from a job or
campaign file reaches the guest's shell unchecked.
"""
import re

from guest import lockload_cases
from lockbench.cli import CliError
# Generic lockload cases ("read /proc/iomem"): how they are spelled is
# lockbench/workloads.py's, which the report and scripts/ use too.
from lockbench.workloads import GENERIC, GENERIC_SPELLING, generic_words

MAGIC = "lockbench-job v1"
# Module parameters a point may set, with their allowed ranges (the module
# checks them again).
POINT_KEYS = {
    "read_pct": (0, 100),
    "mailboxes": (1, 4096),
    "miss_pct": (0, 100),
    "duration_ms": (1, 600000),
    "seed": (0, 2**32 - 1),
    "timing": (0, 1024),
    "think_ns": (0, 1000000),
    # The fs_writer module's register + unregister pairs per second during
    # a lockload point (0: no writer); only with a workload.
    "writer_hz": (0, 100000),
    # A generic workload's acquisitions of its lock per op (lockload
    # --locks-per-op; ./run.sh calibrate measures it); only with one.
    "locks_per_op": (1, 1000),
}
# workload=NAME: what runs the point.  "module" (the default) is the
# benchmark module; the others are guest/inside/lockload's test cases, which take
# only the keys in WORKLOAD_KEYS.  Not carried to the next point.  The
# cases are those the lock targets name (guest/lockload_cases.py), so
# that a new case is named once, in its target file.
WORKLOADS = ("module", *lockload_cases.CASES)
WORKLOAD_KEYS = ("workload", "duration_ms", "seed", "timing", "writer_hz", "locks_per_op")
OPTIONS = {
    "perf_stat": ("0", "1"),
    "perf_lock": ("0", "1"),
    "trace": ("0", "1"),
    "inject": ("none", "panic", "hang", "lockdep", "warn", "garble", "truncate",
               "refuse"),
    "selftest": ("0", "1"),
}
ID_PATTERN = "[A-Za-z0-9][A-Za-z0-9_-]{0,31}"
# \Z, not $: "$" also matches before a trailing newline.
ID_RE = re.compile(rf"^{ID_PATTERN}\Z")


class JobError(CliError):
    pass


def is_generic(workload):
    return generic_words(workload) is not None


def workload_token(workload):
    """A workload as the job and lockload's param line spell it: a name of
    WORKLOADS, or a generic one as one token ("read:/proc/iomem");
    JobError naming what is allowed otherwise."""
    if isinstance(workload, str) and workload in WORKLOADS:
        return workload
    words = generic_words(workload)
    if words is None:
        shown = str(workload) if len(str(workload)) <= 40 else str(workload)[:37] + "..."
        raise JobError(f"workload={shown!r} is not one of {', '.join(WORKLOADS)}, "
                       f"nor {GENERIC_SPELLING}")
    return ":".join(words)


def writer(workload):
    """The fs_writer.ko lock= mode of WORKLOAD's target, which a point's
    writer_hz loads; None where there is none (the module, a generic
    workload, a target without one)."""
    return lockload_cases.writer(workload)


def writer_word(params):
    """The rendered line's writer=MODE for a point that runs the writer:
    the guest's init loads fs_writer.ko with it, so that which writer
    drives a case is said once, in its target, not in the guest."""
    mode = writer(params.get("workload", "module")) if params.get("writer_hz") else None
    return f" writer={mode}" if mode else ""


def check_point(pid, params):
    if not ID_RE.match(str(pid)):
        raise JobError(f"point id {pid!r} must match {ID_PATTERN}")
    workload = params.get("workload", "module")
    try:
        token = workload_token(workload)
    except JobError as e:
        raise JobError(f"point {pid}: {e}") from None
    if token != workload:
        raise JobError(f"point {pid}: workload={workload!r}: a job spells it {token!r}")
    generic = is_generic(workload)
    for key, val in params.items():
        if key == "workload":
            continue
        if workload != "module" and key not in WORKLOAD_KEYS:
            raise JobError(f"point {pid}: {key} is a module parameter; workload={workload} "
                           f"takes only {', '.join(WORKLOAD_KEYS[1:])}")
        if workload == "module" and key == "writer_hz":
            raise JobError(f"point {pid}: writer_hz needs a lockload workload (workload=...)")
        if key == "locks_per_op" and not generic:
            raise JobError(f"point {pid}: locks_per_op is a generic workload's "
                           f"({', '.join(GENERIC)}); workload={workload} counts its own")
        if key == "writer_hz" and generic and val != 0:
            raise JobError(f"point {pid}: writer_hz: a generic workload has no writer "
                           "(fs_writer writes only the shipped targets' locks)")
        if key == "writer_hz" and val != 0 and writer(workload) is None:
            raise JobError(f"point {pid}: writer_hz: workload={workload} has no writer "
                           "(its target names none: kernel-patches/targets/)")
        if key not in POINT_KEYS:
            raise JobError(f"point {pid}: unknown parameter {key!r} "
                           f"(allowed: {', '.join(POINT_KEYS)})")
        lo, hi = POINT_KEYS[key]
        if isinstance(val, bool) or not isinstance(val, int) or not lo <= val <= hi:
            raise JobError(f"point {pid}: {key}={val!r} must be an integer in {lo}..{hi}")


def render(points, options):
    """points: list of (id, {param: int}); options: {key: str}."""
    lines = [MAGIC]
    for key, val in options.items():
        if key not in OPTIONS:
            raise JobError(f"unknown option {key!r} (allowed: {', '.join(OPTIONS)})")
        if str(val) not in OPTIONS[key]:
            raise JobError(f"option {key} {val!r} not allowed (allowed: {', '.join(OPTIONS[key])})")
        lines.append(f"option {key} {val}")
    if not points:
        raise JobError("a job needs at least one point")
    kinds = {params.get("workload", "module") == "module" for _, params in points}
    if len(kinds) > 1:
        # The host checks that each point's run id rises by one per point
        # (guest/run_guest.py collect()): the module counts its own runs,
        # lockload counts the job's points, so the two do not mix.
        raise JobError("a job's points are all module points or all lockload "
                       "points (workload=...), not both")
    seen = set()
    for pid, params in points:
        check_point(pid, params)
        if pid in seen:
            raise JobError(f"duplicate point id {pid!r}")
        seen.add(pid)
        kv = " ".join(f"{k}={v}" for k, v in params.items()) + writer_word(params)
        lines.append(f"point {pid} {kv}".rstrip())
    return "\n".join(lines) + "\n"


def parse(text, name="job"):
    """Parse and check a job file; return (points, options)."""
    # (line number in the file, line), blank lines and comments left out
    lines = [(n, ln) for n, ln in enumerate(text.splitlines(), 1)
             if ln.strip() and not ln.startswith("#")]
    if not lines or lines[0][1].strip() != MAGIC:
        raise JobError(f"{name}: first line must be {MAGIC!r}")
    points, options = [], {}
    for n, line in lines[1:]:
        if not re.fullmatch(r"[\x20-\x7e\t]*", line):
            raise JobError(f"{name}: line {n}: characters other than printable ASCII")
        words = line.split()
        if words[0] == "option" and len(words) == 3:
            options[words[1]] = words[2]
        elif words[0] == "point" and len(words) >= 2:
            params, said = {}, ""
            for kv in words[2:]:
                key, sep, val = kv.partition("=")
                if key == "workload" and sep and re.fullmatch(
                        r"[a-z_]{1,32}(:[A-Za-z0-9_.,+@=/-]{1,200}){0,7}", val):
                    params[key] = val
                    continue
                if key == "writer" and sep and not said:
                    # render() writes it from the workload's target: a
                    # rendered job reads back; another mode is refused.
                    said = kv
                    continue
                if not sep or not re.fullmatch(r"[0-9]{1,20}", val):
                    shown = kv if len(kv) <= 40 else kv[:37] + "..."
                    raise JobError(f"{name}: line {n}: {shown!r} is not KEY=INTEGER")
                params[key] = int(val)
            want = writer_word(params).lstrip()
            if said and said != want:
                shown = said if len(said) <= 40 else said[:37] + "..."
                raise JobError(f"{name}: line {n}: {shown!r}: the writer is the workload's "
                               f"target's, written by the host ({want or 'none for this point'})")
            points.append((words[1], params))
        else:
            raise JobError(f"{name}: line {n}: expected 'option KEY VALUE' or 'point ID KEY=VALUE...'")
    try:
        render(points, options)
    except JobError as e:
        raise JobError(f"{name}: {e}") from None
    return points, options
