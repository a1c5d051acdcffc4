# SPDX-License-Identifier: GPL-2.0
"""host-meter.txt (guest/JOB.md), the host's speed over a point, written
by the runner from guest/meter/host_meter's samples: its parser and the
metric read from it (host_meter_ns).  Its own file, as host_steal.py is:
the host, not the guest, writes it.
"""

from analysis.parse.common import (full_path, MAX_DIGITS, ParseError, clip, parse_decimal,
                                   parse_uint, read_text, split_lines)

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
    text = read_text(path, root=root)
    path = full_path(path, root)
    lines = split_lines(text, path, sep="\n")
    if lines[0] != METER_MAGIC:
        raise ParseError(path, 1, f"not {METER_MAGIC!r}")
    body = [(n, ln) for n, ln in enumerate(lines[1:], 2) if ln and not ln.startswith("#")]
    if not body or body[0][1] != "\t".join(METER_COLUMNS):
        raise ParseError(path, body[0][0] if body else None,
                         "no header line " + " ".join(METER_COLUMNS))
    rows = [_meter_row(path, n, ln) for n, ln in body[1:]]
    if not rows:
        raise ParseError(path, None, "no host core rows")
    return rows


def meter_metrics(rows):
    """host_meter_ns: the fixed work's median time on the host cores the
    vCPUs ran on, averaged over the cores weighted by their samples (lower
    is a faster host)."""
    n = sum(r["samples"] for r in rows)
    return {"host_meter_ns": sum(r["median_ns"] * r["samples"] for r in rows) / n}
