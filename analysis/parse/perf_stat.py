# SPDX-License-Identifier: GPL-2.0
"""Parser for `perf stat -x, -e ...` output (perf 6.1).

Each counter is one CSV line (tools/perf/util/stat-display.c):

    value,unit,event,run_time,pct_enabled[,metric_value,metric_unit]

value is "<not supported>" (the counter does not exist, e.g. cycles and
instructions under QEMU TCG) or "<not counted>" (it never ran); both are
kept with value None, never read as 0. Blank lines and '#' comment lines
are skipped; anything else is a ParseError with the line number.

Numbers are ASCII: value and pct_enabled an optional '-', at most 20
digits before and after the '.', an optional exponent of at most 3 digits,
finite; run_time at most 20 digits; an empty run_time or pct_enabled is
None. A line over MAX_LINE_CHARS (analysis/parse/common.py) is a ParseError, so
no CSV field reaches the csv module's field size limit (131072).
"""

import csv
import math
import re
from dataclasses import dataclass

from analysis.parse.common import (full_path, MAX_DIGITS, ParseError, clip, parse_uint,
                                   read_text, split_lines)

NOT_SUPPORTED = "<not supported>"
NOT_COUNTED = "<not counted>"
# Bounded repeats, one way to match each digit: linear on any input.
_NUM_RE = re.compile(r"-?(?:[0-9]{1,%d}(?:\.[0-9]{0,%d})?|\.[0-9]{1,%d})"
                     r"(?:[eE][-+]?[0-9]{1,3})?"
                     % (MAX_DIGITS, MAX_DIGITS, MAX_DIGITS))


def _number(text):
    """text as a finite float, or None if it is not a number like perf
    prints (1e999 is not: it would be inf)."""
    if not _NUM_RE.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Counter:
    event: str
    value: object  # float, or None when not supported / not counted
    unit: str
    status: str  # "ok", "not supported" or "not counted"
    run_time: object = None  # int (ns) or None
    pct_enabled: object = None  # float or None
    line: int = 0


def parse_text(text, path="<string>"):
    """Return {event name: Counter} in file order."""
    counters = {}
    for lineno, line in enumerate(split_lines(text, path), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        try:
            fields = next(csv.reader([s]))
        except csv.Error as e:
            raise ParseError(path, lineno, f"not a perf stat -x, counter "
                             f"line ({e}): {clip(s)!r}") from None
        if len(fields) < 3:
            raise ParseError(path, lineno, f"not a perf stat -x, counter "
                             f"line: {clip(s)!r}")
        raw, unit, event = fields[0].strip(), fields[1].strip(), \
            fields[2].strip()
        if not event:
            raise ParseError(path, lineno, "counter line without an event "
                             "name")
        if raw == NOT_SUPPORTED:
            value, status = None, "not supported"
        elif raw == NOT_COUNTED:
            value, status = None, "not counted"
        elif _number(raw) is not None:
            value, status = _number(raw), "ok"
        else:
            raise ParseError(path, lineno, f"bad counter value {clip(raw)!r} "
                             f"for {clip(event)}")
        run_time = pct = None
        raw = fields[3].strip() if len(fields) > 3 else ""
        if raw:
            run_time = parse_uint(raw)
            if run_time is None:
                raise ParseError(path, lineno, f"bad run time {clip(raw)!r} "
                                 f"for {clip(event)} (want an integer of at "
                                 f"most {MAX_DIGITS} digits)")
        raw = fields[4].strip() if len(fields) > 4 else ""
        if raw:
            pct = _number(raw)
            if pct is None:
                raise ParseError(path, lineno, f"bad percentage enabled "
                                 f"{clip(raw)!r} for {clip(event)}")
        if event in counters:
            raise ParseError(path, lineno, f"event {clip(event)} appears "
                             f"twice "
                             f"(per-CPU output is not supported)")
        counters[event] = Counter(event, value, unit, status, run_time, pct,
                                  lineno)
    if not counters:
        raise ParseError(path, None, "no perf stat counters in the file")
    return counters


def parse_file(path, root=None):
    # root: the run directory PATH is read under, no link followed
    return parse_text(read_text(path, root=root), full_path(path, root))
