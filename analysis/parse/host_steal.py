# SPDX-License-Identifier: GPL-2.0
"""host-steal.txt (guest/JOB.md), the host's side of a point written by
the runner: its parser, the metrics read from it (steal_pct,
steal_max_pct, qemu_other_pct, and throughput_run, throughput with the
steal divided out), and the one warning naming the points whose steal
is above metrics.STEAL_FLAG_PCT.  A file of its own because it is the
one raw file that comes from the host, not the guest.
"""

import re

from analysis.parse.common import (MAX_DIGITS, ParseError, clip, host_table, parse_decimal,
                                   parse_uint)
from analysis.metrics import STEAL_FLAG_PCT

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


def steal_metrics(rows):
    """steal_pct (the mean over the vCPU threads) and steal_max_pct (the
    worst thread): how much of the run the host kept them waiting; and
    qemu_other_pct, the run time of QEMU's other threads (main loop, RCU,
    workers) in percent of one core over the run, where the file has them
    (files from before it list the vCPU threads only)."""
    vcpus = [r for r in rows if VCPU_THREAD.fullmatch(r["thread"])]
    pcts = [r["steal_pct"] for r in vcpus]
    out = {"steal_pct": sum(pcts) / len(pcts), "steal_max_pct": max(pcts)}
    others = [r for r in rows if not VCPU_THREAD.fullmatch(r["thread"])]
    if others:
        wall = max(r["wall_ns"] for r in vcpus)
        out["qemu_other_pct"] = 100 * sum(r["run_ns"] for r in others) / wall
    return out


def run_metrics(m):
    """throughput_run: the point's throughput per second that its vCPUs
    were on a host core, throughput_ops_s / (1 - steal_pct / 100).  The
    host, not the kernel, decides how much of a second a TCG guest gets
    (TIDY.md, "throughput_run"); none where either is missing or the
    vCPUs never ran."""
    thr, st = m.get("throughput_ops_s"), m.get("steal_pct")
    if thr is None or st is None or not 0 <= st < 100:
        return {}
    return {"throughput_run": thr / (1 - st / 100)}


def steal_warning(flagged, total):
    """The one line that names the points whose host steal is above
    STEAL_FLAG_PCT (analyze prints it; their numbers stay)."""
    shown = ", ".join(flagged[:8]) + (" ..." if len(flagged) > 8 else "")
    return (f"host steal above {STEAL_FLAG_PCT:g}% (steal_max_pct) at "
            f"{len(flagged)} of {total} measured points: {shown}: the host "
            f"kept a vCPU waiting, so the host, not the kernel, may have "
            f"set their numbers (TIDY.md, host steal)")
