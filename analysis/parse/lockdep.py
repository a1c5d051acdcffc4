# SPDX-License-Identifier: GPL-2.0
"""The lockdep reports of a run: which boots' consoles had one (guest/
run_guest.py records each as a "lockdep: LINE" problem of the boot's
try, whatever state the boot ended in), and the splat quoted from the
boot's console.log.  What a report decides (the variant is `unsafe`)
is analysis/verdict/safety.py's.

Pure functions of a loaded run directory (analysis/parse/rundir.py),
reading only under it."""

import os
import re

from lockbench import safeio

PREFIX = "lockdep: "
#: the splat: the report's first line and what follows, at most this much
SPLAT_LINES = 60
#: a console.log is read up to this many bytes (a guest writes the log)
CONSOLE_BYTES = 16 << 20
# "[   12.345678] " before each console line
STAMP_RE = re.compile(r"^\[ *[0-9]+\.[0-9]+\] ")


def lockdep_reports(rundir):
    """{variant: {"boot": id, "line": the report's line, "boots": n,
    "log": the console.log's path in the run, "splat": [lines], "refused":
    why the log was not read, or ""}} for every variant with a lockdep
    report in any boot; the first such boot (manifest order) gives the
    boot and splat.
    An A/A control boots its baseline's kernel (rundir.controls): its
    reports count for the baseline."""
    booted = {c: b for b, c in rundir.controls}
    out = {}
    # Every try of a boot (rundir.Boot.tries): a report seen once is never
    # erased by a later, clean try of it (--resume).
    for b in rundir.boots:
        for t in b.tries:
            lines = [p[len(PREFIX):] for p in t["problems"]
                     if p.startswith(PREFIX)]
            if not lines:
                continue
            variant = booted.get(b.variant, b.variant)
            if variant in out:
                out[variant]["boots"] += 1
                continue
            log = os.path.join("cells", os.path.basename(t["kept"] or b.id),
                               "console.log")
            quoted, refused = splat(rundir.path, log, lines[0])
            out[variant] = {"boot": b.id, "line": lines[0], "boots": 1,
                            "log": log, "splat": quoted, "refused": refused}
    return out


def _clean(line):
    """A console line for markdown: no fences, no control characters, at
    most 200 characters (the guest wrote it)."""
    return "".join(ch if ch.isprintable() and ch != "`" else "?"
                   for ch in line[:200])


def splat(path, log, line):
    """(lines, refused): the lockdep report in the console.log at log
    under the run directory path: from the line that was flagged (or the
    ==== rule above it) for SPLAT_LINES lines; [] when the log is missing
    (the flagged line is still in the problems).  A log that is not a
    regular file under path (a link, anywhere on the way, is never
    followed: a run directory may come from anywhere, and the report must
    not quote a file outside it) is not read: refused is then the one
    line that says so, also the splat after the flagged line."""
    if not os.path.lexists(os.path.join(path, log)):
        return [], ""
    try:
        text = safeio.read_text(log, CONSOLE_BYTES, root=path)
    except safeio.Unsafe as e:
        full = os.path.join(path, log)
        why = f"{log}: {safeio.refusal_words(full, e, path, log)}: not quoted"
        return [_clean(line), _clean(why)], why
    lines = [STAMP_RE.sub("", x).rstrip() for x in text.splitlines()]
    want = STAMP_RE.sub("", line).strip()
    for i, x in enumerate(lines):
        if want and want in x:
            start = i - 1 if i > 0 and set(lines[i - 1].strip()) == {"="} else i
            return [_clean(x) for x in lines[start:start + SPLAT_LINES]], ""
    return [], ""
