# SPDX-License-Identifier: GPL-2.0
"""Parser for /proc/lock_stat dumps, versions 0.3 and 0.4.

The layout is the one kernel/locking/lockdep_proc.c prints (Linux 6.1:
seq_header(), seq_stats(), seq_lock_time(), seq_time()):

    lock_stat version 0.4
    [*WARNING* lock debugging disabled!! - possibly due to a lockdep warning]
    ----------...
                  class name    con-bounces    contentions   waittime-min ...
    ----------...
    <blank>
    <class row>       "%40s:" (or "%38s-W:" / "%38s-R:") + the numeric fields
    [ -------           contention points, then contending points:
      <name> <count> [<addr>] <symbol+0x../0x..> ]
    [ <blank> ......... <blank> ]

Version 0.4 has 12 numeric fields per row; 0.3 (kernels up to 4.x) has 10,
without waittime-avg and holdtime-avg: for 0.3 the averages are computed
here as total/count, rounded to 2 decimals like the kernel, and None when
the count is 0. Times are microseconds.

A class row is split from the right: the numeric fields are the tokens after
the last ':' that is followed only by them; the class name is what precedes
it (it may contain spaces, ':', parentheses, braces, '#N' and '/N' suffixes,
and is cut at 37 characters by the kernel). A trailing "-R" or "-W" is the
kind of an rwlock-style row (a plain row is a class with write acquisitions
only, e.g. a spinlock). Anything else is a ParseError naming the line.

Hostile input is a ParseError too, found in time linear in the file: a
file that is not a regular file or is over MAX_FILE_BYTES, a line over
MAX_LINE_CHARS, a count that is not 1 to 20 ASCII digits (at most 2^64 - 1),
a time that is not such digits and 2 decimals (analysis/parse/common.py).  Rows
and contention points are split with string operations, not patterns
that backtrack.
"""

import re
from dataclasses import dataclass, field

from analysis.parse.common import (full_path, MAX_DIGITS, ParseError, clip, parse_uint,
                                   read_text, split_lines)

SUPPORTED_VERSIONS = ("0.3", "0.4")

#: Numeric columns, in file order, per version (tidy names).
COLUMNS = {
    "0.4": ("con_bounces", "contentions", "waittime_min_us", "waittime_max_us",
            "waittime_total_us", "waittime_avg_us", "acq_bounces",
            "acquisitions", "holdtime_min_us", "holdtime_max_us",
            "holdtime_total_us", "holdtime_avg_us"),
    "0.3": ("con_bounces", "contentions", "waittime_min_us", "waittime_max_us",
            "waittime_total_us", "acq_bounces", "acquisitions",
            "holdtime_min_us", "holdtime_max_us", "holdtime_total_us"),
}

#: The header words seq_header() prints, per version.
HEADERS = {
    "0.4": ["class name", "con-bounces", "contentions", "waittime-min",
            "waittime-max", "waittime-total", "waittime-avg", "acq-bounces",
            "acquisitions", "holdtime-min", "holdtime-max", "holdtime-total",
            "holdtime-avg"],
    "0.3": ["class name", "con-bounces", "contentions", "waittime-min",
            "waittime-max", "waittime-total", "acq-bounces", "acquisitions",
            "holdtime-min", "holdtime-max", "holdtime-total"],
}

#: All fields of a row in tidy order (the CSV columns after class, kind).
FIELDS = COLUMNS["0.4"]
COUNT_FIELDS = ("con_bounces", "contentions", "acq_bounces", "acquisitions")

WARNING_LINE = ("*WARNING* lock debugging disabled!! - possibly due to a "
                "lockdep warning")

_VERSION_RE = re.compile(r"^lock_stat version (\S+)\s*$")
# seq_time(): "%lld.%02d"; the integer part as long as a u64's
_TIME_RE = re.compile(r"[0-9]{1,%d}\.[0-9]{2}" % MAX_DIGITS)
_NAME_LIMIT = 37  # char name[39], snprintf(name, 38, ...)


@dataclass(frozen=True)
class LockStatRow:
    """One class row. Times in microseconds; avg None when undefined."""
    name: str
    kind: str  # "R", "W" or "" (plain row)
    con_bounces: int
    contentions: int
    waittime_min_us: float
    waittime_max_us: float
    waittime_total_us: float
    waittime_avg_us: object  # float or None
    acq_bounces: int
    acquisitions: int
    holdtime_min_us: float
    holdtime_max_us: float
    holdtime_total_us: float
    holdtime_avg_us: object  # float or None
    line: int = 0

    @property
    def maybe_cut(self):
        """True when the name has the longest length the kernel prints, so
        the real class name may be longer."""
        base = self.name
        limit = _NAME_LIMIT
        for suffix in (r"/[0-9]$", r"#[0-9]$"):
            if re.search(suffix, base):
                base = base[:-2]
                limit -= 2
        return len(base) >= limit


@dataclass(frozen=True)
class ContentionPoint:
    """A contention point (where waiters were) or contending point (where
    the holder was) line under a class."""
    name: str
    role: str  # "contention" or "contending"
    count: int
    addr: str
    symbol: str
    line: int = 0


@dataclass
class LockStat:
    version: str
    debug_disabled: bool
    rows: list = field(default_factory=list)
    points: list = field(default_factory=list)
    computed_avg: bool = False  # True for 0.3: the avgs were computed here

    def select(self, name_regex=None, exact=None):
        """Rows whose name matches (re.search) name_regex, or equals exact."""
        out = []
        for r in self.rows:
            if exact is not None and r.name != exact:
                continue
            if name_regex is not None and not re.search(name_regex, r.name):
                continue
            out.append(r)
        return out


def _avg(total, count):
    if count == 0:
        return None
    return round(total / count, 2)


def _parse_row(path, lineno, version, line):
    """A class row, or None when the line is not shaped like one: the
    numeric fields are what follows the last ':' (numbers hold none), each
    after a space or tab."""
    ncols = len(COLUMNS[version])
    name, colon, tail = line.rpartition(":")
    if not colon or tail[:1] not in (" ", "\t"):
        return None
    tokens = tail.split()
    if len(tokens) != ncols:
        return None
    name = name.strip()
    values = {}
    for col, tok in zip(COLUMNS[version], tokens):
        if col in COUNT_FIELDS:
            values[col] = parse_uint(tok)
            if values[col] is None:
                raise ParseError(path, lineno, f"bad {col} value "
                                 f"{clip(tok)!r} (want an integer of at "
                                 f"most {MAX_DIGITS} digits)")
        else:
            if not _TIME_RE.fullmatch(tok):
                raise ParseError(path, lineno,
                                 f"bad {col} value {clip(tok)!r} (want a "
                                 f"time like 12.34)")
            values[col] = float(tok)
    if not name:
        raise ParseError(path, lineno, "class row without a class name")
    kind = ""
    if name.endswith("-R") or name.endswith("-W"):
        kind = name[-1]
        name = name[:-2].rstrip()
    if version == "0.3":
        values["waittime_avg_us"] = _avg(values["waittime_total_us"],
                                         values["contentions"])
        values["holdtime_avg_us"] = _avg(values["holdtime_total_us"],
                                         values["acquisitions"])
    return LockStatRow(name=name, kind=kind, line=lineno, **values)


def _parse_point(path, lineno, line):
    """(name, count, addr, symbol) of a contention point line
    "<name> <count> [<addr>] <symbol>", or None: split at its last "[<"
    (seq_stats(): "%40s %14lu %29s %pS", the address "[<%p>]")."""
    start = line.rfind("[<")
    end = line.find(">", start + 2)
    if start < 0 or end < 0 or line[end:end + 2] != ">]":
        return None
    head = line[:start]
    words = head.split()
    if len(words) < 2 or not head[-1:].isspace():
        return None
    count = parse_uint(words[-1])
    if count is None:
        if words[-1].isascii() and words[-1].isdigit():
            raise ParseError(path, lineno, f"bad contention count "
                             f"{clip(words[-1])!r} (want an integer of at "
                             f"most {MAX_DIGITS} digits)")
        return None
    name = head.rstrip()[:-len(words[-1])].strip()
    return name, count, line[start + 2:end], line[end + 2:].strip()


def parse_text(text, path="<string>"):
    """Parse the text of a lock_stat dump; path only names it in errors."""
    lines = split_lines(text, path)
    if not lines or not text.strip():
        raise ParseError(path, None, "empty file, not a lock_stat dump")
    m = _VERSION_RE.match(lines[0])
    if not m:
        raise ParseError(path, 1, "not a lock_stat dump (first line is not "
                         "'lock_stat version N')")
    version = m.group(1)
    if version not in SUPPORTED_VERSIONS:
        raise ParseError(path, 1, f"unsupported lock_stat version {version} "
                         f"(supported: {', '.join(SUPPORTED_VERSIONS)})")
    result = LockStat(version=version, debug_disabled=False,
                      computed_avg=(version == "0.3"))
    i = 1
    if i < len(lines) and lines[i].strip() == WARNING_LINE:
        result.debug_disabled = True
        i += 1
    # dashes, header, dashes
    for what in ("dash", "header", "dash"):
        if i >= len(lines):
            raise ParseError(path, i, "truncated: the column header is "
                             "missing")
        s = lines[i].strip()
        if what == "dash":
            if not s or set(s) != {"-"}:
                raise ParseError(path, i + 1, "expected a line of dashes "
                                 "around the column header")
        else:
            words = s.split()
            got = words
            if words[:2] == ["class", "name"]:
                got = ["class name"] + words[2:]
            if got != HEADERS[version]:
                raise ParseError(path, i + 1, f"column header does not match "
                                 f"lock_stat version {version}")
        i += 1
    current = None  # the last class row, for its contention points
    dashes = 0
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        i += 1
        s = line.strip()
        if not s:
            continue
        if set(s) == {"."}:
            current = None
            continue
        if set(s) == {"-"}:
            if current is None:
                raise ParseError(path, lineno, "line of dashes outside a "
                                 "class")
            dashes += 1
            continue
        row = _parse_row(path, lineno, version, line)
        if row is not None:
            result.rows.append(row)
            current = row
            dashes = 0
            continue
        point = _parse_point(path, lineno, line) \
            if current is not None and dashes in (1, 2) else None
        if point:
            name, count, addr, symbol = point
            result.points.append(ContentionPoint(
                name=name, role="contention" if dashes == 1 else "contending",
                count=count, addr=addr, symbol=symbol, line=lineno))
            continue
        raise ParseError(path, lineno, f"garbled line (neither a class row "
                         f"with {len(COLUMNS[version])} numeric fields nor a "
                         f"contention point): {clip(s)!r}")
    return result


def parse_file(path, root=None):
    """Parse a lock_stat dump file; ParseError on any problem."""
    # root: the run directory PATH is read under, no link followed
    return parse_text(read_text(path, root=root), full_path(path, root))
