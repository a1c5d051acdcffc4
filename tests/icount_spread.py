#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""How far the boots of one kernel spread under icount, and what the guest
did differently in them (docs/icount.md, "What makes the clock exact").

For campaign run directories (or ./run.sh boot --job run directories),
per point: every icount boot's insn_per_op (elapsed_ns * threads / ops,
from its results.txt: the raw numbers, not the analysis' tables), each
variant's spread ((max - min) / min, in ppm), and the spread of a
baseline pooled with its A/A control (BASE~aa): boots of one kernel.
Then the leak's fingerprint: whatever was counted differently in those
boots' points: the acquisitions of each lock class in the point's
lock_stat.txt (cleared 0.1 s before the run), and with "option trace 1"
(guest/JOB.md) the interrupts, softirqs, timers, work items and task
switches of its trace.txt, with the boots' insn_per_op at each count.
Work that ran in some boots' windows and not in others' shows there (a
work item's lockdep map such as init_free_wq, a timer, an RCU grace
period); a spread with nothing there is the clock's own jitter.

Usage: tests/icount_spread.py DIR... [--max-ppm X] [--exclude REGEX]

--max-ppm X: exit 1 when a pooled spread is over X ppm (the line says
"leak" and names what differs); --exclude (default "mboxes_lock"): what
is left out of the fingerprint (the lock under test counts the ops).
Exit 2 on a directory that is neither.
"""
import argparse
import glob
import json
import os
import re
import sys

from analysis.parse import bench_results, lockstat
from lockbench.cli import CliError, OneLineParser, run_cli

CONTROL_SUFFIX = "~aa"


def ppm(values):
    return (max(values) - min(values)) / min(values) * 1e6


def boot_dirs(path):
    """[(boot dir, variant)] of a campaign run directory (its manifest's
    cells; a control's variant is BASE~aa) or of one ./run.sh boot
    --job directory (meta.json's variant)."""
    man = os.path.join(path, "manifest.json")
    if os.path.isfile(man):
        with open(man) as f:
            cells = json.load(f).get("cells", [])
        return [(os.path.join(path, "cells", c["id"]), c["variant"]) for c in cells
                if os.path.isfile(os.path.join(path, "cells", c["id"], "meta.json"))]
    with open(os.path.join(path, "meta.json")) as f:
        return [(path, json.load(f).get("variant", "?"))]


# A line of trace.txt ("option trace 1", guest/JOB.md): its event and
# the detail that names what ran.
TRACE_RE = re.compile(r"^\s*(\S.*?)-\d+\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
TRACE_WHAT = {"irq_handler_entry": r"name=(\S+)", "softirq_entry": r"action=(\w+)",
              "hrtimer_expire_entry": r"function=(\S+)", "timer_expire_entry": r"function=(\S+)",
              "workqueue_execute_start": r"function (\S+)", "sched_switch": r"next_comm=(\S+)",
              "console": None}


def trace_counts(path):
    """{"trace EVENT WHAT": count} of a point's trace.txt."""
    counts = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = TRACE_RE.match(line)
            if not m or m.group(3) not in TRACE_WHAT:
                continue
            pat = TRACE_WHAT[m.group(3)]
            what = re.search(pat, m.group(4)) if pat else None
            key = f"trace {m.group(3)} {what.group(1) if what else ''}".rstrip()
            counts[key] = counts.get(key, 0) + 1
    return counts


def boots(paths):
    """{point: {variant: [(boot, insn_per_op, {what: count})]}} of the
    icount boots under paths; what: "lock CLASS" (its acquisitions in
    the point's lock_stat.txt) and, with trace.txt, "trace EVENT WHAT"."""
    out = {}
    for path in paths:
        for bdir, variant in boot_dirs(path):
            with open(os.path.join(bdir, "meta.json")) as f:
                meta = json.load(f)
            if (meta.get("clock") or {}).get("kind") != "icount":
                continue
            for pdir in sorted(glob.glob(os.path.join(bdir, "points", "*"))):
                res_path = os.path.join(pdir, "results.txt")
                if not os.path.isfile(res_path):
                    continue
                res = bench_results.parse_file(res_path)
                ops = res.total.get("ops")
                if not ops:
                    continue
                ipo = res.run["elapsed_ns"] * res.run["threads"] / ops
                what = {}
                ls_path = os.path.join(pdir, "lock_stat.txt")
                if os.path.isfile(ls_path):
                    for row in lockstat.parse_file(ls_path).rows:
                        key = "lock " + row.name + (f"-{row.kind}" if row.kind else "")
                        what[key] = what.get(key, 0) + row.acquisitions
                tr_path = os.path.join(pdir, "trace.txt")
                if os.path.isfile(tr_path):
                    what.update(trace_counts(tr_path))
                out.setdefault(os.path.basename(pdir), {}).setdefault(variant, []).append(
                    (os.path.basename(bdir), ipo, what))
    return out


def fingerprint(rows, exclude):
    """[(class, {count: [insn_per_op...]})] of the classes whose
    acquisitions differ between rows (boots of one kernel)."""
    names = sorted(set().union(*(a for _, _, a in rows)))
    diff = []
    for name in names:
        if exclude and re.search(exclude, name):
            continue
        by = {}
        for _, ipo, acq in rows:
            by.setdefault(acq.get(name, 0), []).append(ipo)
        if len(by) > 1:
            diff.append((name, by))
    return diff


def report(paths, max_ppm=None, exclude="mboxes_lock", out=None):
    """Print the spreads and fingerprints (on out, default stdout); return
    the list of leaks (one line each) over max_ppm."""
    out = out or sys.stdout
    data = boots(paths)
    if not data:
        raise CliError(f"{' '.join(paths)}: no icount boot with results")
    leaks = []
    for point, by_var in sorted(data.items()):
        for variant, rows in sorted(by_var.items()):
            vals = [ipo for _, ipo, _ in rows]
            print(f"{point} {variant}: {len(vals)} boots, insn_per_op "
                  f"{min(vals):.3f}..{max(vals):.3f} (spread {ppm(vals):.0f} ppm)", file=out)
        for base in sorted(v for v in by_var if not v.endswith(CONTROL_SUFFIX)):
            rows = by_var[base] + by_var.get(base + CONTROL_SUFFIX, [])
            if len(rows) < 2:
                continue
            vals = [ipo for _, ipo, _ in rows]
            spread = ppm(vals)
            what = "A/A pooled" if base + CONTROL_SUFFIX in by_var else "pooled"
            print(f"{point} {base} {what}: {len(vals)} boots, spread {spread:.0f} ppm", file=out)
            diff = fingerprint(rows, exclude)
            for name, by in diff:
                parts = ", ".join(
                    f"{count} in {len(v)} boot{'s' * (len(v) != 1)} ({min(v):.2f}..{max(v):.2f})"
                    for count, v in sorted(by.items()))
                print(f"  differs: {name}: {parts}", file=out)
            if not diff:
                print("  differs: nothing counted (the same work in every boot's point)", file=out)
            if max_ppm is not None and spread > max_ppm:
                names = ", ".join(n for n, _ in diff) or "none"
                leaks.append(f"leak: {point} {base} boots spread {spread:.0f} ppm > {max_ppm:g} "
                             f"(what differs: {names})")
    for line in leaks:
        print(line, file=out)
    return leaks


PROG = "tests/icount_spread.py"


def make_parser():
    p = OneLineParser(prog=PROG, hint=f"{PROG} --help",
                      description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", metavar="DIR",
                   help="a campaign run directory, or ./run.sh boot --job run directories")
    p.add_argument("--max-ppm", type=float, help="exit 1 when a pooled spread is over this")
    p.add_argument("--exclude", default="mboxes_lock",
                   help="regex of lock classes left out of the fingerprint")
    return p


def body(a):
    for d in a.dirs:
        if not (os.path.isfile(os.path.join(d, "manifest.json"))
                or os.path.isfile(os.path.join(d, "meta.json"))):
            raise CliError(f"{d}: not a campaign or boot run directory "
                           "(no manifest.json or meta.json)")
    return 1 if report(a.dirs, a.max_ppm, a.exclude) else 0


def main(argv=None):
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
