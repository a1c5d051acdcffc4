# SPDX-License-Identifier: GPL-2.0
"""Parser for `perf stat -x, -e ...` output (perf 6.1).

Each counter is one CSV line (tools/perf/util/stat-display.c):

    value,unit,event,run_time,pct_enabled[,metric_value,metric_unit]

value is "<not supported>" (the counter does not exist, e.g. cycles and
instructions under QEMU TCG) or "<not counted>" (it never ran); both are
kept with value None, never read as 0. Blank lines and '#' comment lines
are skipped; anything else is a ParseError with the line number.
"""

import csv
import re
from dataclasses import dataclass

from analysis.common import ParseError, read_text

NOT_SUPPORTED = "<not supported>"
NOT_COUNTED = "<not counted>"
_NUM_RE = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


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
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        fields = next(csv.reader([s]))
        if len(fields) < 3:
            raise ParseError(path, lineno, f"not a perf stat -x, counter "
                             f"line: {s[:60]!r}")
        raw, unit, event = fields[0].strip(), fields[1].strip(), \
            fields[2].strip()
        if not event:
            raise ParseError(path, lineno, "counter line without an event "
                             "name")
        if raw == NOT_SUPPORTED:
            value, status = None, "not supported"
        elif raw == NOT_COUNTED:
            value, status = None, "not counted"
        elif _NUM_RE.match(raw):
            value, status = float(raw), "ok"
        else:
            raise ParseError(path, lineno, f"bad counter value {raw!r} for "
                             f"{event}")
        run_time = pct = None
        if len(fields) > 3 and re.match(r"^\d+$", fields[3].strip()):
            run_time = int(fields[3])
        if len(fields) > 4 and _NUM_RE.match(fields[4].strip()):
            pct = float(fields[4])
        if event in counters:
            raise ParseError(path, lineno, f"event {event} appears twice "
                             f"(per-CPU output is not supported)")
        counters[event] = Counter(event, value, unit, status, run_time, pct,
                                  lineno)
    if not counters:
        raise ParseError(path, None, "no perf stat counters in the file")
    return counters


def parse_file(path):
    return parse_text(read_text(path), path)
