# SPDX-License-Identifier: GPL-2.0
"""Parser for `perf lock report` output (perf 6.1, tools/perf/builtin-lock.c
print_result()).

    "%20s " "Name", then "%*s " per key header (widths 10 for counts, 12 for
    times), a blank line, then one row per lock: the name "%20s " (names of
    20 characters or more are cut to 16 + "..."), counts "%10llu ", times
    "%9.2f <unit> " with unit h, m, s, ms, us or "%9llu ns ".

The default keys are: acquired, contended, avg wait, total wait, max wait,
min wait; `-F` may choose others: the header says which, and rows are read
from the right following it. Lines before the header (perf warnings) are
skipped; the "=== output for debug===" tail ends the table. Times are
returned in ns (the printed precision: 2 decimals of the unit shown).

Numbers are ASCII digits, at most 20 before and after the '.'; a line
over MAX_LINE_CHARS (analysis/parse/common.py) is a ParseError naming it. The
header and rows are split into words, not matched with patterns that
backtrack.
"""

from dataclasses import dataclass

from analysis.parse.common import (full_path, MAX_DIGITS, ParseError, clip, parse_decimal,
                                   parse_uint, read_text, split_lines)

#: header text -> (field name, kind)
KEYS = {
    "acquired": ("acquired", "count"),
    "contended": ("contended", "count"),
    "avg wait": ("avg_wait_ns", "time"),
    "total wait": ("total_wait_ns", "time"),
    "max wait": ("max_wait_ns", "time"),
    "min wait": ("min_wait_ns", "time"),
}
FIELDS = ("acquired", "contended", "avg_wait_ns", "total_wait_ns",
          "max_wait_ns", "min_wait_ns")
UNIT_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}



def _header_keys(line):
    """The keys of a "Name <key> <key> ..." header line, in order, or None
    when the line is not one."""
    words = line.split()
    if len(words) < 2 or words[0] != "Name":
        return None
    keys = []
    i = 1
    while i < len(words):
        if words[i] in KEYS:
            keys.append(words[i])
            i += 1
        elif " ".join(words[i:i + 2]) in KEYS:
            keys.append(" ".join(words[i:i + 2]))
            i += 2
        else:
            return None
    return keys


@dataclass(frozen=True)
class LockRow:
    name: str
    acquired: object = None
    contended: object = None
    avg_wait_ns: object = None
    total_wait_ns: object = None
    max_wait_ns: object = None
    min_wait_ns: object = None
    line: int = 0


def _parse_row(path, lineno, line, keys):
    tokens = line.split()
    values = {}
    for key in reversed(keys):
        name, kind = KEYS[key]
        if kind == "count":
            count = parse_uint(tokens[-1]) if tokens else None
            if count is None:
                raise ParseError(path, lineno, f"bad {key!r} field (want an "
                                 f"integer of at most {MAX_DIGITS} digits) "
                                 f"in {clip(line.strip())!r}")
            values[name] = count
            tokens.pop()
        else:
            time = parse_decimal(tokens[-2]) if len(tokens) >= 2 else None
            if time is None or tokens[-1] not in UNIT_NS:
                raise ParseError(path, lineno, f"bad {key!r} time in "
                                 f"{clip(line.strip())!r}")
            values[name] = int(round(time * UNIT_NS[tokens.pop()]))
            tokens.pop()
    if not tokens:
        raise ParseError(path, lineno, "lock row without a name")
    return LockRow(name=" ".join(tokens), line=lineno, **values)


def parse_text(text, path="<string>"):
    """Return the list of LockRow in file order."""
    lines = split_lines(text, path)
    keys = None
    rows = []
    for lineno, line in enumerate(lines, start=1):
        s = line.strip()
        if keys is None:
            keys = _header_keys(line)
            continue
        if not s:
            continue
        if s.startswith("=== output for debug"):
            break
        rows.append(_parse_row(path, lineno, line, keys))
    if keys is None:
        raise ParseError(path, None, "no 'Name acquired contended ...' "
                         "header: not perf lock report output")
    return rows


def parse_file(path, root=None):
    # root: the run directory PATH is read under, no link followed
    return parse_text(read_text(path, root=root), full_path(path, root))
