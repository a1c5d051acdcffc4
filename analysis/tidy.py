# SPDX-License-Identifier: GPL-2.0
"""Raw run directory -> tidy tables (lists of row dicts, see TIDY.md).

build(rundir) reads every done cell x point, never prints, and returns a
Tidy: one list of rows per tidy file, plus `problems` (rows for
problems.csv), `warnings` (strings) and `notes` (strings: facts about a
variant's kernel that change what is measured, e.g. no lock_stat; not
problems). A missing or unreadable file is a problem and its numbers are
absent, never zeros.
"""

import csv
import math
import os
import re
from dataclasses import dataclass, field

from analysis import bench_results, lockstat, perf_lock, perf_stat
from analysis.metrics import METRICS, STEAL_FLAG_PCT
from analysis.common import (MAX_DIGITS, ParseError, clip, parse_decimal,
                             parse_uint, read_text, split_lines)

CROSSCHECK_TOLERANCE = 0.01  # relative; more is a disagreement

KEYS = ("campaign", "variant", "arch", "cpus", "rep", "cell", "point")
POINT_PARAMS = ("read_pct", "mailboxes", "miss_pct", "duration_ms")

COLUMNS = {
    "cells": ("campaign", "variant", "arch", "cpus", "rep", "cell", "state",
              "oversubscribed", "analyzed"),
    "samples": KEYS + POINT_PARAMS + ("metric", "value", "unit"),
    "lockstat": KEYS + ("class", "kind") + lockstat.FIELDS,
    "hist": KEYS + ("op", "bucket", "bucket_lo_ns", "bucket_hi_ns", "count",
                    "cum_fraction"),
    "threads": KEYS + ("cpu", "ops", "lookups", "hits", "misses", "writes",
                       "errors"),
    "crosscheck": KEYS + ("lockops_read", "lockops_write", "lockstat_r_acq",
                          "lockstat_w_acq", "lockstat_plain_acq", "relation",
                          "expected", "observed", "rel_diff", "ok"),
    "problems": ("cell", "point", "file", "problem"),
    "notes": ("variant", "note"),
    "perf_lock": KEYS + ("name",) + perf_lock.FIELDS,
    "outcomes": KEYS + POINT_PARAMS + ("outcome", "detail"),
}

PERF_EVENTS = {"task-clock": "task_clock_ms",
               "context-switches": "context_switches",
               "cpu-migrations": "cpu_migrations"}

#: rate -> (total, factor, work): factor * total / work.  A total scales
#: with the work a run did (a kernel that collapses to a few ops has few
#: contentions), a rate does not.  work: "acq" = lock_stat acquisitions of
#: the class, "ops" = results.txt `total ops`, "lockops" = `lockops read +
#: write` (the module's calls that take the lock on a locking kernel).
RATES = {
    "lock_contentions_per_kacq": ("lock_contentions", 1e3, "acq"),
    "lock_waittime_per_acq_ns": ("lock_waittime_total_us", 1e3, "acq"),
    "context_switches_per_mop": ("context_switches", 1e6, "ops"),
    "cpu_migrations_per_mop": ("cpu_migrations", 1e6, "ops"),
    "perf_lock_contended_per_kop": ("perf_lock_contended", 1e3, "lockops"),
    "perf_lock_wait_per_op_ns": ("perf_lock_wait_total_ns", 1, "lockops"),
}


@dataclass
class Tidy:
    tables: dict = field(default_factory=lambda: {k: [] for k in COLUMNS})
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def note(self, variant, text):
        self.tables["notes"].append({"variant": variant, "note": text})
        self.notes.append(f"{variant}: {text}")

    def problem(self, cell, point, file, text):
        self.tables["problems"].append(
            {"cell": cell, "point": point, "file": file, "problem": text})
        where = "/".join(x for x in (cell, point, file) if x)
        self.warnings.append(f"{where}: {text}" if where else text)


def _lock_metrics(rows):
    """Sample metrics from the lock_stat rows (R, W, plain) of one class."""
    cont = sum(r.contentions for r in rows)
    wait_total = sum(r.waittime_total_us for r in rows)
    acq = sum(r.acquisitions for r in rows)
    hold_total = sum(r.holdtime_total_us for r in rows)
    out = {
        "lock_contentions": cont,
        "lock_waittime_total_us": wait_total,
        "lock_waittime_avg_us": wait_total / cont if cont else 0.0,
        "lock_waittime_max_us": max(r.waittime_max_us for r in rows),
        "lock_acquisitions": acq,
    }
    if acq:
        out["lock_holdtime_avg_us"] = hold_total / acq
    return out


def rate_metrics(metrics, res):
    """The RATES of one point from its other metrics and its results.

    Only from an ok results.txt (also the lock_stat rates, whose totals
    alone do not need one): the work of a failed run is not the work its
    counters saw.  A zero amount of work gives no rate, not inf."""
    if res is None or not res.ok:
        return {}
    work = {"acq": metrics.get("lock_acquisitions") or 0,
            "ops": res.total["ops"],
            "lockops": res.lockops["read"] + res.lockops["write"]}
    return {rate: factor * metrics[total] / work[per]
            for rate, (total, factor, per) in RATES.items()
            if total in metrics and work[per] > 0}


def ref_ns(res, key="trim_mean_ns"):
    """Time of the module's reference probe over the run, ns: the host
    speed the threads saw while they ran.  trim_mean_ns: the mean without
    the probes an interrupt stretched, the host's average speed over the
    run; median_ns: its typical speed.  None in results without a "ref"
    record.  bench-module/FORMAT.md, "ref"."""
    ref = next((kv for word, kv in res.extra if word == "ref"), None)
    if not ref or not isinstance(ref.get("loops"), int) or ref["loops"] <= 0:
        return None
    val = ref.get(key)
    if not isinstance(val, int) or val <= 0:
        return None
    return float(val)


def bench_metrics(res):
    out = {"throughput_ops_s": res.total["ops_per_sec"],
           "fairness_spread": res.fairness["spread"]}
    for op, lat in sorted(res.lat.items()):
        if op not in ("lookup", "write") or lat.count == 0:
            continue
        out[f"{op}_lat_median_ns"] = lat.quantile(0.5)
        out[f"{op}_lat_p99_ns"] = lat.quantile(0.99)
        out[f"{op}_lat_max_ns"] = lat.max_ns
        out[f"{op}_lat_mean_ns"] = lat.mean_ns
    # The same, in units of the host's speed during the run: a host core
    # that slows down slows the workload and the probe alike.
    # An average (throughput) against the probe's average, a median (an
    # op's typical latency) against its median: when the host changed
    # speed during the run, both medians come from the same, longer phase.
    ref, ref_med = ref_ns(res), ref_ns(res, "median_ns")
    if ref is not None:
        out["ref_probe_ns"] = ref
        out["throughput_ref"] = res.total["ops_per_sec"] * ref / 1e6
    if ref_med is not None:
        for op in ("lookup", "write"):
            if out.get(f"{op}_lat_median_ns") is not None:
                out[f"{op}_lat_median_ref"] = out[f"{op}_lat_median_ns"] / ref_med
    return {k: v for k, v in out.items() if v is not None}


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


def parse_host_steal(path):
    """The rows of a point's host-steal.txt (guest/JOB.md): one dict per
    QEMU vCPU thread, keys STEAL_COLUMNS.  ParseError if malformed or
    without a row (the runner writes none without a vCPU thread)."""
    lines = split_lines(read_text(path), path, sep="\n")
    if lines[0] != STEAL_MAGIC:
        raise ParseError(path, 1, f"not {STEAL_MAGIC!r}")
    body = [(n, ln) for n, ln in enumerate(lines[1:], 2)
            if ln and not ln.startswith("#")]
    if not body or body[0][1] != "\t".join(STEAL_COLUMNS):
        raise ParseError(path, body[0][0] if body else None,
                         "no header line " + " ".join(STEAL_COLUMNS))
    rows = [_steal_row(path, n, ln) for n, ln in body[1:]]
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


NO_LOCK_STAT = "no lock_stat (kernel built without CONFIG_LOCK_STAT)"
NO_LOOKUP_LOCK = ("lookups take no lock (lookup_lock = \"none\"): lock_stat "
                  "counts the writes only; the cross-check expects "
                  "acquisitions == lockops write")


def variant_notes(rundir):
    """[(variant, note), ...]: what a variant's kernel changes in what is
    measured (from manifest.builds): no lock_stat, lookups without a
    lock. Notes, not problems."""
    out = []
    for v in rundir.variants:
        if not rundir.has_lock_stat(v):
            out.append((v, NO_LOCK_STAT + ": no lock_* metrics, cross-check "
                        "skipped"))
        elif rundir.lookup_lock(v) == "none":
            out.append((v, NO_LOOKUP_LOCK))
    return out


def crosscheck_row(lockops, rows, tolerance=CROSSCHECK_TOLERANCE,
                   lookup_lock="lock"):
    """Compare the module's lockops with the lock_stat rows of the class.

    The module counts calls that would take the lock; which of them do is
    a property of the kernel (lookup_lock, from the variant file):
    lookups take no lock ("none", e.g. RCU): R + W + plain == write;
    else rwlock-style (an -R row exists): R == read and W + plain == write;
    else (one plain row, a spinlock): plain + W == read + write."""
    read, write = int(lockops["read"]), int(lockops["write"])
    r = sum(x.acquisitions for x in rows if x.kind == "R")
    w = sum(x.acquisitions for x in rows if x.kind == "W")
    p = sum(x.acquisitions for x in rows if x.kind == "")
    expected = read + write
    if lookup_lock == "none":
        relation = "writes"
        expected = write
        rel = abs(r + w + p - write) / max(write, 1)
    elif any(x.kind == "R" for x in rows):
        relation = "rw"
        rel = max(abs(r - read) / max(read, 1),
                  abs(w + p - write) / max(write, 1))
    else:
        relation = "total"
        rel = abs(w + p - (read + write)) / max(read + write, 1)
    return {"lockops_read": read, "lockops_write": write,
            "lockstat_r_acq": r, "lockstat_w_acq": w, "lockstat_plain_acq": p,
            "relation": relation, "expected": expected,
            "observed": r + w + p, "rel_diff": rel,
            "ok": 1 if rel <= tolerance else 0}


def _parse(tidy, cell, point, pdir, name, parser, optional=False):
    """(the parsed file, None), or (None, why) after a problem row saying
    why (why is None for an optional file that is absent)."""
    path = os.path.join(pdir, name)
    if not os.path.exists(path):
        if optional:
            return None, None
        tidy.problem(cell.id, point.id, name, "missing")
        return None, f"{name} missing"
    try:
        return parser(path), None
    except ParseError as e:
        where = f"line {e.line}: " if e.line is not None else ""
        tidy.problem(cell.id, point.id, name, where + e.message)
        return None, f"{name}: {where}{e.message}"
    except Exception as e:
        # A bug of a parser on one file must not lose every other point's
        # tables: the point is recorded as unreadable, naming the bug
        # (ANALYSIS_DEBUG=1 gives the traceback, as in common.run_cli).
        if os.environ.get("ANALYSIS_DEBUG"):
            raise
        why = f"internal parser error (a bug): {type(e).__name__}: " \
            f"{clip(str(e), 200)}"
        tidy.problem(cell.id, point.id, name, why)
        return None, f"{name}: {why}"


def failed_checks(res):
    """The module's checks that did not pass, as (check, "k=v ...")."""
    return [(c, " ".join(f"{k}={v}" for k, v in c.items()))
            for c in res.checks
            if any(v != "ok" for v in c.values() if isinstance(v, str))]


def outcome(res, why):
    """(outcome, detail) of a point for outcomes.csv: its parsed
    results.txt, or None and why there is none.  A starved point (a
    thread that made no op) is its own outcome: it is the worst a lock
    can do, and counting it is the only way it shows (it has no samples)."""
    if res is None:
        return "missing", why
    if res.ok:
        return "ok", ""
    failed = failed_checks(res)
    starved = [c for c, _ in failed if "progress" in c]
    if starved:
        n = starved[0].get("threads_without_ops")
        rest = [text for c, text in failed if "progress" not in c]
        return "starved", "; ".join(
            [f"threads_without_ops={n}" if n is not None
             else f"progress={starved[0]['progress']}"] + rest)
    return "failed", "; ".join(text for _, text in failed) or \
        "end status=FAILURE"


def _check_params(tidy, cell, point, res):
    for k in POINT_PARAMS:
        want, got = getattr(point, k), res.param.get(k)
        if want is not None and got is not None and want != got:
            tidy.problem(cell.id, point.id, "results.txt",
                         f"param {k}={got} but the manifest says {want}")


def build(rundir, tolerance=CROSSCHECK_TOLERANCE):
    """Read the run directory; return a Tidy (never prints)."""
    tidy = Tidy()
    t = tidy.tables
    lock_class = rundir.lock_class
    not_done = []
    for cell in rundir.cells:
        t["cells"].append({
            "campaign": rundir.name, "variant": cell.variant,
            "arch": cell.arch, "cpus": cell.cpus, "rep": cell.rep,
            "cell": cell.id, "state": cell.state,
            "oversubscribed": int(cell.oversubscribed),
            "analyzed": int(cell.state == "done")})
        # "unneeded": planned past the look where the campaign stopped
        if cell.state not in ("done", "unneeded"):
            not_done.append(f"{cell.id} ({cell.state or 'no state'})")
    if not_done:
        for cid in not_done:
            t["problems"].append({"cell": cid.split(" ")[0], "point": "",
                                  "file": "manifest.json",
                                  "problem": "cell not done: skipped"})
        tidy.warnings.append(f"{len(not_done)} cell(s) not done, skipped: "
                             + ", ".join(not_done))
    for v, text in variant_notes(rundir):
        tidy.note(v, text)
    order_v = {v: i for i, v in enumerate(rundir.variants)}
    order_p = {p.id: i for i, p in enumerate(rundir.points)}
    cells = sorted((c for c in rundir.cells if c.state == "done"),
                   key=lambda c: (order_v.get(c.variant, 99), c.cpus, c.rep,
                                  c.id))
    points = sorted(rundir.points, key=lambda p: order_p[p.id])
    for cell in cells:
        cdir = os.path.join(rundir.path, "cells", cell.id)
        if not os.path.isdir(cdir):
            tidy.problem(cell.id, "", "", "cell directory missing")
            for point in points:
                t["outcomes"].append(dict(
                    _point_key(rundir, cell, point), outcome="missing",
                    detail="cell directory missing"))
            continue
        for point in points:
            _one_point(tidy, rundir, cell, point, lock_class, tolerance)
    _flag_steal(tidy)
    return tidy


def _flag_steal(tidy):
    """One warning naming the points whose steal_max_pct is above
    STEAL_FLAG_PCT.  Not a problems.csv row: a busy host is a fact about
    the run, its files are fine and its numbers stay."""
    steal = [r for r in tidy.tables["samples"]
             if r["metric"] == "steal_max_pct"]
    flagged = [f"{r['cell']}/{r['point']}" for r in steal
               if r["value"] > STEAL_FLAG_PCT]
    if flagged:
        tidy.warnings.append(steal_warning(flagged, len(steal)))


def _point_key(rundir, cell, point):
    """The key columns and the point's parameters (samples, outcomes)."""
    return {"campaign": rundir.name, "variant": cell.variant,
            "arch": cell.arch, "cpus": cell.cpus, "rep": cell.rep,
            "cell": cell.id, "point": point.id,
            **{k: getattr(point, k) for k in POINT_PARAMS}}


def _one_point(tidy, rundir, cell, point, lock_class, tolerance):
    t = tidy.tables
    pkey = _point_key(rundir, cell, point)
    key = {k: pkey[k] for k in KEYS}
    pdir = rundir.point_dir(cell, point)
    if not os.path.isdir(pdir):
        tidy.problem(cell.id, point.id, "", "point directory missing")
        t["outcomes"].append(dict(pkey, outcome="missing",
                                  detail="point directory missing"))
        return
    metrics = {}

    res, why = _parse(tidy, cell, point, pdir, "results.txt",
                      bench_results.parse_file)
    got, detail = outcome(res, why)
    t["outcomes"].append(dict(pkey, outcome=got, detail=detail))
    if res is not None:
        for w in res.warnings:
            tidy.problem(cell.id, point.id, "results.txt", w)
        _check_params(tidy, cell, point, res)
        for th in res.threads:
            t["threads"].append(dict(key, **{
                k: th.get(k, "") for k in COLUMNS["threads"][len(KEYS):]}))
        for op, lat in sorted(res.lat.items()):
            total = sum(lat.hist)
            cum = 0
            for b, count in enumerate(lat.hist):
                cum += count
                lo, hi = bench_results.bucket_bounds(b)
                t["hist"].append(dict(key, op=op, bucket=b, bucket_lo_ns=lo,
                                      bucket_hi_ns=hi, count=count,
                                      cum_fraction=cum / total if total
                                      else None))
        if res.param.get("timing", 1) != 0 and not res.lat:
            tidy.problem(cell.id, point.id, "results.txt",
                         "timing is on but there are no lat lines")
        if res.ok:
            metrics.update(bench_metrics(res))
        else:
            failed = [text for _, text in failed_checks(res)]
            tidy.problem(cell.id, point.id, "results.txt",
                         "end status=FAILURE, point not used"
                         + (f" ({'; '.join(failed)})" if failed else ""))

    ls, rows = None, []
    if rundir.has_lock_stat(cell.variant):
        ls, _ = _parse(tidy, cell, point, pdir, "lock_stat.txt",
                       lockstat.parse_file)
    if ls is not None:
        rows = ls.select(exact=lock_class)
        if ls.debug_disabled:
            tidy.problem(cell.id, point.id, "lock_stat.txt",
                         "lock debugging disabled (a lockdep warning): "
                         "lock_stat may be incomplete")
        if not rows:
            tidy.problem(cell.id, point.id, "lock_stat.txt",
                         f"class {lock_class} not in the dump")
        for r in rows:
            t["lockstat"].append(dict(key, **{"class": r.name, "kind": r.kind},
                                      **{f: getattr(r, f)
                                         for f in lockstat.FIELDS}))
        if rows and (res is None or res.ok):
            metrics.update(_lock_metrics(rows))

    if not rundir.has_lock_stat(cell.variant):
        row = dict(key, **{c: None for c in COLUMNS["crosscheck"][len(KEYS):]})
        row["relation"] = "no_lock_stat"
        if res is not None:
            row.update(lockops_read=res.lockops.get("read"),
                       lockops_write=res.lockops.get("write"))
        t["crosscheck"].append(row)
    elif res is not None and rows:
        cc = crosscheck_row(res.lockops, rows, tolerance,
                            rundir.lookup_lock(cell.variant))
        t["crosscheck"].append(dict(key, **cc))
        if not cc["ok"]:
            tidy.problem(cell.id, point.id, "crosscheck",
                         f"bench lockops read={cc['lockops_read']} write="
                         f"{cc['lockops_write']} vs lock_stat R="
                         f"{cc['lockstat_r_acq']} W={cc['lockstat_w_acq']} "
                         f"plain={cc['lockstat_plain_acq']} "
                         f"(relation {cc['relation']}, off by "
                         f"{100 * cc['rel_diff']:.1f}%)")
    else:
        row = dict(key, **{c: None for c in COLUMNS["crosscheck"][len(KEYS):]})
        row["relation"] = "missing"
        t["crosscheck"].append(row)

    perf = rundir.campaign.get("perf") or {}
    ps, _ = _parse(tidy, cell, point, pdir, "perf-stat.csv",
                   perf_stat.parse_file,
                   optional=perf.get("stat", True) is False)
    if ps is not None and (res is None or res.ok):
        for event, metric in PERF_EVENTS.items():
            c = ps.get(event)
            if c is not None and c.value is not None:
                metrics[metric] = c.value

    pl, _ = _parse(tidy, cell, point, pdir, "perf-lock.txt",
                   perf_lock.parse_file, optional=not perf.get("lock", False))
    if pl is not None:
        for r in pl:
            t["perf_lock"].append(dict(key, name=r.name, **{
                f: getattr(r, f) for f in perf_lock.FIELDS}))
        mine = [r for r in pl if r.name == lock_class]
        if mine and (res is None or res.ok):
            if mine[0].contended is not None:
                metrics["perf_lock_contended"] = mine[0].contended
            if mine[0].total_wait_ns is not None:
                metrics["perf_lock_wait_total_ns"] = mine[0].total_wait_ns

    # The host's side of the point, written by the runner (optional: runs
    # before it, and runs without the guest's run markers, have none).
    steal, _ = _parse(tidy, cell, point, pdir, STEAL_FILE, parse_host_steal,
                      optional=True)
    if steal and (res is None or res.ok):
        metrics.update(steal_metrics(steal))
        metrics.update(run_metrics(metrics))

    metrics.update(rate_metrics(metrics, res))
    for metric in METRICS:
        if metric in metrics and not math.isfinite(metrics[metric]):
            tidy.problem(cell.id, point.id, "", f"{metric} is "
                         f"{metrics[metric]}: left out of samples")
        elif metric in metrics:
            t["samples"].append(dict(pkey, metric=metric,
                                     value=metrics[metric],
                                     unit=METRICS[metric][0]))


def fmt(value):
    """CSV text of one value: empty for None/NaN, integers without '.0'."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return "%.10g" % value
    return str(value)


def write_csv(path, columns, rows):
    """Write rows (dicts) with the given columns; atomically (tmp+rename)."""
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([fmt(r.get(c)) for c in columns])
    os.replace(tmp, path)
