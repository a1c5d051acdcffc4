# SPDX-License-Identifier: GPL-2.0
"""host-steal.txt (guest/JOB.md), the host's side of a point written by
the runner: its parser, and which of its rows are QEMU's vCPU threads.
A file of its own because it comes from the host, not the guest.  The
metrics read from it (steal_pct, steal_max_pct, qemu_other_pct,
throughput_run) are the registry's (analysis/metrics.py), computed by
analysis/tidy/point_metrics.py.
"""

import re

from analysis.parse.common import (MAX_DIGITS, ParseError, clip, host_table, parse_decimal,
                                   parse_uint)

STEAL_FILE = "host-steal.txt"
STEAL_MAGIC = "lockbench-host-steal v1"
STEAL_COLUMNS = ("thread", "tid", "wall_ns", "run_ns", "wait_ns",
                 "nonvoluntary_switches", "steal_pct")
#: QEMU's vCPU thread names (debug-threads=on); the file's other rows are
#: QEMU's other threads (the runner's guest/vcpu.py VCPU_COMM, the same)
VCPU_THREAD = re.compile(r"CPU \d+/TCG|ALL CPUs/TCG")


def _steal_row(path, n, line):
    """One QEMU thread's row of host-steal.txt as a dict; ParseError."""
    f = line.split("\t")
    if len(f) != len(STEAL_COLUMNS):
        raise ParseError(path, n, f"{len(f)} fields, want "
                         f"{len(STEAL_COLUMNS)} (tab-separated)")
    row = {"thread": f[0]}
    # ASCII digits only (int() and float() would also take ' 7', '1_0',
    # other scripts' digits and 'nan')
    for c, v in zip(STEAL_COLUMNS[1:-1], f[1:-1]):
        row[c] = parse_uint(v)
    row["steal_pct"] = parse_decimal(f[-1])
    if None in row.values():
        raise ParseError(path, n, f"not a number of at most {MAX_DIGITS} "
                         f"digits in {clip(line)!r}")
    if row["wall_ns"] <= 0 or min(row[c] for c in STEAL_COLUMNS[3:6]) < 0:
        raise ParseError(path, n, "wall_ns must be > 0, the counts >= 0")
    # The runner writes steal_pct with 3 decimals: a file whose percentage
    # disagrees with its own counts was edited, not measured.
    if abs(row["steal_pct"] - 100 * row["wait_ns"] / row["wall_ns"]) > 0.01:
        raise ParseError(path, n, "steal_pct is not 100 * wait_ns / wall_ns")
    return row


def parse_host_steal(path, root=None):
    """The rows of a point's host-steal.txt (guest/JOB.md): one dict per
    QEMU vCPU thread, keys STEAL_COLUMNS.  ParseError if malformed or
    without a row (the runner writes none without a vCPU thread).  root:
    the run directory PATH is read under, no link followed."""
    body, path = host_table(path, root, STEAL_MAGIC, STEAL_COLUMNS)
    rows = [_steal_row(path, n, ln) for n, ln in body]
    if not any(VCPU_THREAD.fullmatch(r["thread"]) for r in rows):
        raise ParseError(path, None, "no vCPU thread rows")
    return rows
