# SPDX-License-Identifier: GPL-2.0
"""Raw run directory -> tidy tables (lists of row dicts, see TIDY.md).

build(rundir) reads every done boot x point, never prints, and returns a
Tidy: one list of rows per tidy file, plus `problems` (rows for
problems.csv), `warnings` (strings) and `notes` (strings: facts about a
variant's kernel that change what is measured, e.g. no lock_stat; not
problems). A missing or unreadable file is a problem and its numbers are
absent, never zeros.

What a point's files give is computed elsewhere: its metrics, each by
its rule in the registry (analysis/metrics.py), in
analysis.tidy.point_metrics, the cross-check in analysis.tidy.crosscheck;
writing the tables is analysis.outputs (their text: lockbench.csvw).
"""

import functools
import math
import os
from dataclasses import dataclass, field

from analysis.parse import bench_results, lockstat, perf_lock, perf_stat
from analysis.tidy import boots
from analysis.parse.common import ParseError, clip, dir_refusal
from analysis.tidy.crosscheck import CROSSCHECK_TOLERANCE, crosscheck_row
from analysis.parse.host_meter import parse_host_meter
from analysis.parse.host_steal import parse_host_steal
from analysis.metrics import (HOST_METER, HOST_STEAL, LOCK_STAT, METRICS,
                              PERF_LOCK, PERF_STAT, RESULTS, STEAL_FLAG_PCT,
                              unit_of)
from analysis.tidy.point_metrics import compute
from lockbench import defaults


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
    "boots": boots.BOOTS_COLUMNS,
}


@dataclass
class Tidy:
    tables: dict = field(default_factory=lambda: {k: [] for k in COLUMNS})
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def note(self, variant, text):
        self.tables["notes"].append({"variant": variant, "note": text})
        self.notes.append(f"{variant}: {text}")

    def problem(self, boot, point, file, text):
        self.tables["problems"].append(
            {"cell": boot, "point": point, "file": file, "problem": text})
        where = "/".join(x for x in (boot, point, file) if x)
        self.warnings.append(f"{where}: {text}" if where else text)


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


def _folder(root, rel):
    """None when root/rel is a folder to read a point's files from, else
    why not ("missing", or what is there instead).  Every folder on the
    way from root is a directory and no link (common.dir_refusal): a
    run directory may come from anywhere, and a link in it must not
    make the report read, and quote, files outside it.  The files
    themselves are opened without following a link (common.read_text)."""
    parts = rel.split(os.sep)
    if any(p in ("", ".", "..") for p in parts):
        return f"{rel!r}: not a name inside the run directory"
    for i in range(1, len(parts) + 1):
        here = os.path.join(root, *parts[:i])
        if not os.path.lexists(here):
            return "missing"
        why = dir_refusal(here)
        if why:
            return f"{os.path.join(*parts[:i])}: {why}"
    return None


def _parse(tidy, boot, point, rundir, name, parser, optional=False):
    """(the parsed file, None), or (None, why) after a problem row saying
    why (why is None for an optional file that is absent).  The file is
    read under the run directory with every component opened without
    following a link (parser(rel, root=)): a point folder swapped for a
    link after _folder checked it is refused, never read (issue #43)."""
    rel = os.path.join(rundir.point_rel(boot, point), name)
    if not os.path.lexists(os.path.join(rundir.path, rel)):
        if optional:
            return None, None
        tidy.problem(boot.id, point.id, name, "missing")
        return None, f"{name} missing"
    try:
        return parser(rel, root=rundir.path), None
    except ParseError as e:
        where = f"line {e.line}: " if e.line is not None else ""
        tidy.problem(boot.id, point.id, name, where + e.message)
        return None, f"{name}: {where}{e.message}"
    except Exception as e:
        # A bug of a parser on one file must not lose every other point's
        # tables: the point is recorded as unreadable, naming the bug
        # (ANALYSIS_DEBUG=1 gives the traceback, as in lockbench.cli.run_cli).
        if os.environ.get("ANALYSIS_DEBUG"):
            raise
        why = f"internal parser error (a bug): {type(e).__name__}: " \
            f"{clip(str(e), 200)}"
        tidy.problem(boot.id, point.id, name, why)
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


def _check_params(tidy, boot, point, res):
    for k in POINT_PARAMS:
        want, got = getattr(point, k), res.param.get(k)
        if want is not None and got is not None and want != got:
            tidy.problem(boot.id, point.id, "results.txt",
                         f"param {k}={got} but the manifest says {want}")


def build_some(rundir):
    """build(); ParseError when the run has no sample at all (nothing to
    analyze), with the first problem that says why."""
    t = build(rundir)
    if not t.tables["samples"]:
        done = sum(1 for b in rundir.boots if b.state == "done")
        why = ("no boot is in state 'done'" if not done else
               f"no usable samples in the {done} done boot(s)"
               + (f" (first problem: {t.warnings[-1]})" if t.warnings else ""))
        raise ParseError(rundir.path, None, why)
    return t


def build(rundir, tolerance=CROSSCHECK_TOLERANCE):
    """Read the run directory; return a Tidy (never prints)."""
    tidy = Tidy()
    t = tidy.tables
    lock_class = rundir.lock_class
    not_done = []
    for boot in rundir.boots:
        # tidy/cells.csv: one row per boot (the format's name)
        t["cells"].append({
            "campaign": rundir.name, "variant": boot.variant,
            "arch": boot.arch, "cpus": boot.cpus, "rep": boot.rep,
            "cell": boot.id, "state": boot.state,
            "oversubscribed": int(boot.oversubscribed),
            "analyzed": int(boot.state == "done")})
        # "unneeded": planned past the look where the campaign stopped
        if boot.state not in ("done", "unneeded"):
            not_done.append(f"{boot.id} ({boot.state or 'no state'})")
    if not_done:
        for cid in not_done:
            t["problems"].append({"cell": cid.split(" ")[0], "point": "",
                                  "file": "manifest.json",
                                  "problem": "boot not done: no samples "
                                  "(its tries are in boots.csv)"})
        tidy.warnings.append(f"{len(not_done)} boot(s) not done, no samples "
                             f"(a lost boot counts against its kernel: "
                             f"boots.csv): " + ", ".join(not_done))
    # Every try of every boot, lost ones too (analysis/tidy/boots.py).
    t["boots"] = boots.boot_rows(rundir)
    for v, text in variant_notes(rundir):
        tidy.note(v, text)
    order_v = {v: i for i, v in enumerate(rundir.variants)}
    order_p = {p.id: i for i, p in enumerate(rundir.points)}
    done = sorted((b for b in rundir.boots if b.state == "done"),
                  key=lambda b: (order_v.get(b.variant, 99), b.cpus, b.rep,
                                 b.id))
    points = sorted(rundir.points, key=lambda p: order_p[p.id])
    for boot in done:
        # A boot a look left the undecided points only ran those.
        mine = [p for p in points if not boot.points or p.id in boot.points]
        why = _folder(rundir.path, os.path.join("cells", boot.id))
        if why:
            why = f"boot directory {why}"
            tidy.problem(boot.id, "", "", why)
            for point in mine:
                t["outcomes"].append(dict(
                    _point_key(rundir, boot, point), outcome="missing",
                    detail=why))
            continue
        for point in mine:
            _one_point(tidy, rundir, boot, point, lock_class, tolerance)
    _warn_steal(tidy)
    return tidy


def _warn_steal(tidy):
    """One warning naming the points whose steal_max_pct is above
    STEAL_FLAG_PCT (analyze prints it).  Not a problems.csv row: a busy
    host is a fact about the run, its files are fine and its numbers
    stay."""
    steal = [r for r in tidy.tables["samples"]
             if r["metric"] == "steal_max_pct"]
    flagged = [f"{r['cell']}/{r['point']}" for r in steal
               if r["value"] > STEAL_FLAG_PCT]
    if not flagged:
        return
    shown = ", ".join(flagged[:8]) + (" ..." if len(flagged) > 8 else "")
    tidy.warnings.append(
        f"host steal above {STEAL_FLAG_PCT:g}% (steal_max_pct) at "
        f"{len(flagged)} of {len(steal)} measured points: {shown}: the "
        f"host kept a vCPU waiting, so the host, not the kernel, may "
        f"have set their numbers (TIDY.md, host steal)")


def _point_key(rundir, boot, point):
    """The key columns and the point's parameters (samples, outcomes)."""
    return {"campaign": rundir.name, "variant": boot.variant,
            "arch": boot.arch, "cpus": boot.cpus, "rep": boot.rep,
            "cell": boot.id, "point": point.id,
            **{k: getattr(point, k) for k in POINT_PARAMS}}


def _one_point(tidy, rundir, boot, point, lock_class, tolerance):
    """The rows of one boot x point: its raw files read in turn (each
    one's rows and problems), then its samples from what they gave."""
    pkey = _point_key(rundir, boot, point)
    key = {k: pkey[k] for k in KEYS}
    why = _folder(rundir.path, rundir.point_rel(boot, point))
    if why:
        why = f"point directory {why}"
        tidy.problem(boot.id, point.id, "", why)
        tidy.tables["outcomes"].append(dict(pkey, outcome="missing",
                                            detail=why))
        return
    read = functools.partial(_parse, tidy, boot, point, rundir)
    res = _results(tidy, boot, point, pkey, read)
    rows = _lock_stat(tidy, rundir, boot, point, key, lock_class, read)
    _crosscheck(tidy, rundir, boot, point, key, res, rows, tolerance)
    ps, mine = _perf(tidy, rundir, key, lock_class, read)
    # The host's side of the point, written by the runner (optional: runs
    # before it, and runs without the guest's run markers, have none).
    steal, _ = read(HOST_STEAL, parse_host_steal, optional=True)
    meter, _ = read(HOST_METER, parse_host_meter, optional=True)
    # A failed run has no samples: its other files are not the work its
    # results counted.
    sources = {} if res is not None and not res.ok else {
        RESULTS: res, LOCK_STAT: rows or None, PERF_STAT: ps,
        PERF_LOCK: mine[0] if mine else None,
        HOST_STEAL: steal or None, HOST_METER: meter or None}
    _samples(tidy, boot, point, pkey, compute(sources, boot.clock))


def _results(tidy, boot, point, pkey, read):
    """results.txt: the point's outcome, its threads and histograms, its
    problems; the parsed Results or None."""
    t = tidy.tables
    key = {k: pkey[k] for k in KEYS}
    res, why = read("results.txt", bench_results.parse_file)
    got, detail = outcome(res, why)
    t["outcomes"].append(dict(pkey, outcome=got, detail=detail))
    if res is None:
        return None
    for w in res.warnings:
        tidy.problem(boot.id, point.id, "results.txt", w)
    _check_params(tidy, boot, point, res)
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
        tidy.problem(boot.id, point.id, "results.txt",
                     "timing is on but there are no lat lines")
    if not res.ok:
        failed = [text for _, text in failed_checks(res)]
        tidy.problem(boot.id, point.id, "results.txt",
                     "end status=FAILURE, point not used"
                     + (f" ({'; '.join(failed)})" if failed else ""))
    return res


def _lock_stat(tidy, rundir, boot, point, key, lock_class, read):
    """lock_stat.txt (a kernel built with lock_stat): its rows of the
    lock class, in lockstat.csv and returned ([] without them)."""
    if not rundir.has_lock_stat(boot.variant):
        return []
    ls, _ = read("lock_stat.txt", lockstat.parse_file)
    if ls is None:
        return []
    rows = ls.select(exact=lock_class)
    if ls.debug_disabled:
        tidy.problem(boot.id, point.id, "lock_stat.txt",
                     "lock debugging disabled (a lockdep warning): "
                     "lock_stat may be incomplete")
    if not rows:
        tidy.problem(boot.id, point.id, "lock_stat.txt",
                     f"class {lock_class} not in the dump")
    for r in rows:
        tidy.tables["lockstat"].append(
            dict(key, **{"class": r.name, "kind": r.kind},
                 **{f: getattr(r, f) for f in lockstat.FIELDS}))
    return rows


def _crosscheck(tidy, rundir, boot, point, key, res, rows, tolerance):
    """The point's crosscheck.csv row, a problem where it is off."""
    t = tidy.tables
    if not rundir.has_lock_stat(boot.variant):
        row = dict(key, **{c: None for c in COLUMNS["crosscheck"][len(KEYS):]})
        row["relation"] = "no_lock_stat"
        if res is not None:
            row.update(lockops_read=res.lockops.get("read"),
                       lockops_write=res.lockops.get("write"))
        t["crosscheck"].append(row)
    elif res is not None and rows:
        cc = crosscheck_row(res.lockops, rows, tolerance,
                            rundir.lookup_lock(boot.variant))
        t["crosscheck"].append(dict(key, **cc))
        if not cc["ok"]:
            tidy.problem(boot.id, point.id, "crosscheck",
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


def _perf(tidy, rundir, key, lock_class, read):
    """perf-stat.csv and perf-lock.txt (each optional where the campaign
    turned it off): (the parsed perf stat or None, perf lock's rows of
    the lock class), all of perf lock's rows in perf_lock.csv."""
    perf = defaults.campaign_value(rundir.campaign, "perf") or {}
    ps, _ = read("perf-stat.csv", perf_stat.parse_file,
                 optional=perf.get("stat", defaults.PERF["stat"]) is False)
    pl, _ = read("perf-lock.txt", perf_lock.parse_file,
                 optional=not perf.get("lock", False))
    if pl is None:
        return ps, []
    for r in pl:
        tidy.tables["perf_lock"].append(dict(key, name=r.name, **{
            f: getattr(r, f) for f in perf_lock.FIELDS}))
    return ps, [r for r in pl if r.name == lock_class]


def _samples(tidy, boot, point, pkey, metrics):
    """The point's samples.csv rows, in the registry's order; a value
    that is not a finite number is a problem, not a sample."""
    for metric in METRICS:
        if metric in metrics and not math.isfinite(metrics[metric]):
            tidy.problem(boot.id, point.id, "", f"{metric} is "
                         f"{metrics[metric]}: left out of samples")
        elif metric in metrics:
            tidy.tables["samples"].append(dict(
                pkey, metric=metric, value=metrics[metric],
                unit=unit_of(metric, boot.clock)))
