# SPDX-License-Identifier: GPL-2.0
"""Is a variant safe at all?  Before any number: a conversion from rwlock
to spinlock is also a lockdep question (readers may nest, or run in
interrupt context, where a spinlock deadlocks), and every lock_stat
kernel runs with PROVE_LOCKING (kernel-patches/configs/lockstat.config).

A boot whose console had a lockdep report (guest/run_guest.py records it
as a "lockdep: LINE" problem of the cell, whatever state the boot ended
in: lockdep, or hung when the deadlock then happened) makes its variant
unsafe: every comparison the variant takes part in is `unsafe`, and the
report shows the splat before the numbers.  A variant with no such boot
is not thereby proven safe: lockdep sees only the paths the workload
took.

Pure functions of a loaded run directory (analysis/rundir.py)."""

import os
import re

from analysis.common import ParseError, read_bytes

UNSAFE = "unsafe"
PREFIX = "lockdep: "
#: the splat: the report's first line and what follows, at most this much
SPLAT_LINES = 60
#: a console.log is read up to this many bytes (a guest writes the log)
CONSOLE_BYTES = 16 << 20
# "[   12.345678] " before each console line
STAMP_RE = re.compile(r"^\[ *[0-9]+\.[0-9]+\] ")


def lockdep_reports(rundir):
    """{variant: {"cell": id, "line": the report's line, "boots": n,
    "log": the console.log's path in the run, "splat": [lines]}} for every
    variant with a lockdep report in any
    boot; the first such boot (manifest order) gives the cell and splat.
    An A/A control boots its baseline's image (rundir.controls): its
    reports count for the baseline."""
    image = {c: b for b, c in rundir.controls}
    out = {}
    # Every try of a cell (rundir.Cell.tries): a report seen once is never
    # erased by a later, clean try of it (--resume).
    for c in rundir.cells:
        for t in c.tries:
            lines = [p[len(PREFIX):] for p in t["problems"]
                     if p.startswith(PREFIX)]
            if not lines:
                continue
            variant = image.get(c.variant, c.variant)
            if variant in out:
                out[variant]["boots"] += 1
                continue
            log = os.path.join("cells", os.path.basename(t["kept"] or c.id),
                               "console.log")
            out[variant] = {"cell": c.id, "line": lines[0], "boots": 1,
                            "log": log,
                            "splat": splat(os.path.join(rundir.path, log), lines[0])}
    return out


def splat(console, line):
    """The lockdep report in console.log: from the line that was flagged
    (or the ==== rule above it) for SPLAT_LINES lines; [] when the log is
    missing or unreadable (the flagged line is still in the problems)."""
    try:
        text = read_bytes(console, CONSOLE_BYTES).decode("utf-8", "replace")
    except ParseError:
        return []
    lines = [STAMP_RE.sub("", x).rstrip() for x in text.splitlines()]
    want = STAMP_RE.sub("", line).strip()
    for i, x in enumerate(lines):
        if want and want in x:
            start = i - 1 if i > 0 and set(lines[i - 1].strip()) == {"="} else i
            # the guest's text goes into markdown: no fences, no controls
            return ["".join(ch if ch.isprintable() and ch != "`" else "?"
                            for ch in x[:200])
                    for x in lines[start:start + SPLAT_LINES]]
    return []


def mark(rows, unsafe, controls=()):
    """Every comparison row (a dict) whose baseline or variant is unsafe
    (a control: its baseline's image, from controls' (baseline, control)
    pairs) gets the verdict `unsafe`, whatever its numbers say."""
    image = {c: b for b, c in controls}
    for r in rows:
        if image.get(r["baseline"], r["baseline"]) in unsafe or \
                image.get(r["variant"], r["variant"]) in unsafe:
            r["verdict"] = UNSAFE
