# SPDX-License-Identifier: GPL-2.0
"""host-meter.txt (guest/JOB.md), the host's speed over a point, written
by the runner from guest/meter/host_meter's samples: its parser (the
metric read from it, host_meter_ns, is the registry's).  Its own file,
as host_steal.py is: the host, not the guest, writes it.
"""

from analysis.parse.common import (MAX_DIGITS, ParseError, clip, host_table, parse_decimal,
                                   parse_uint)

METER_FILE = "host-meter.txt"
METER_MAGIC = "lockbench-host-meter v1"
METER_COLUMNS = ("cpu", "samples", "median_ns", "mean_ns", "min_ns", "max_ns")


def _meter_row(path, n, line):
    """One host core's row as a dict; ParseError."""
    f = line.split("\t")
    if len(f) != len(METER_COLUMNS):
        raise ParseError(path, n, f"{len(f)} fields, want {len(METER_COLUMNS)} (tab-separated)")
    row = {"cpu": parse_uint(f[0]), "samples": parse_uint(f[1])}
    for c, v in zip(METER_COLUMNS[2:], f[2:]):
        row[c] = parse_decimal(v)
    if None in row.values():
        raise ParseError(path, n, f"not a number of at most {MAX_DIGITS} digits in {clip(line)!r}")
    if row["samples"] < 1 or not 0 < row["min_ns"] <= row["median_ns"] <= row["max_ns"] \
            or not row["min_ns"] <= row["mean_ns"] <= row["max_ns"]:
        raise ParseError(path, n, "want samples >= 1 and 0 < min <= median, mean <= max")
    return row


def parse_host_meter(path, root=None):
    """The rows of a point's host-meter.txt: one dict per host core, keys
    METER_COLUMNS.  ParseError if malformed or without a row."""
    body, path = host_table(path, root, METER_MAGIC, METER_COLUMNS)
    rows = [_meter_row(path, n, ln) for n, ln in body]
    if not rows:
        raise ParseError(path, None, "no host core rows")
    return rows
