# SPDX-License-Identifier: GPL-2.0
"""Compare two run directories of the same campaign (before and
after a rebase, two hosts, two days), as benchstat and mmtests'
compare-kernels do across runs: per primary cell, both runs' ratio with
its interval and verdict, and their ratio (run 2's over run 1's) with a
confidence interval: 1 = the two runs reach the same answer.

Usage: /usr/bin/python3 -m analysis.across DIR1 DIR2 [--confidence C]
       (./run.sh compare DIR1 DIR2)

Each directory must have been reported (tidy/comparisons.csv, `./run.sh
report DIR`).  Two campaigns that differ in what they ask (variants,
pairs, vCPU counts, clocks, points and their parameters, primary
metrics, lock class) are refused in one line naming the first
difference; the number of boots, the seed, the host may differ (that is
what the comparison is for).

The interval of the ratio of ratios: each run's interval read as a
normal interval of the log ratio at its own level (its half-width / z),
the two independent, so log(r2 / r1) +- z * sqrt(se1^2 + se2^2).  A Moses
interval is not exactly normal and an icount interval is the boots'
range, not a confidence interval, so this is approximate; its coverage
on simulated pairs of runs is in analysis/README.md ("Across runs") and
tests/unit/test_across.py.  Never prints but through main().
"""

import math
import sys

from scipy import stats as sps

from analysis.parse import rundir as rundir_mod
from analysis.parse.common import ParseError
from analysis.render.formatting import pct_s
from analysis.parse.tidy_table import read_table
from lockbench.cli import EXIT_OK, OneLineParser, UsageError, run_cli
from lockbench.defaults import ICOUNT

PROG = "compare"
#: what two campaigns must share to be compared (manifest campaign keys)
SAME = ("variants", "baseline", "compare", "cpus", "clock",
        "primary_metric", "primary_points", "lock_class", "controls")
POINT_SAME = ("id", "read_pct", "mailboxes", "miss_pct", "duration_ms",
              "think_ns", "primary_metric", "workload")
COLUMNS = ("baseline", "variant", "cpus", "point", "metric", "clock",
           "ratio1", "lo1", "hi1", "verdict1", "ratio2", "lo2", "hi2",
           "verdict2", "rr", "rr_lo", "rr_hi")


def _points(campaign):
    return [{k: p.get(k) for k in POINT_SAME if p.get(k) not in (None, "", 0)}
            for p in campaign.get("points") or [] if isinstance(p, dict)]


def difference(c1, c2):
    """The first thing two manifests' campaigns ask differently, in words,
    or None when they are the same campaign."""
    for k in SAME:
        a, b = c1.get(k), c2.get(k)
        if a != b:
            return f"{k} {a!r} vs {b!r}"
    p1, p2 = _points(c1), _points(c2)
    if [p.get("id") for p in p1] != [p.get("id") for p in p2]:
        return (f"points {[p.get('id') for p in p1]} vs "
                f"{[p.get('id') for p in p2]}")
    for a, b in zip(p1, p2):
        if a != b:
            k = next(k for k in POINT_SAME if a.get(k) != b.get(k))
            return f"point {a['id']}: {k} {a.get(k)!r} vs {b.get(k)!r}"
    return None


def _primary(path):
    """The primary rows of DIR/tidy/comparisons.csv, as dicts."""
    try:
        t = read_table(path, "comparisons.csv")
    except ParseError as e:
        raise ParseError(path, None, f"no comparisons ({e.message}): run "
                         f"./run.sh report {path} first") from None
    if "role" not in t or not len(t):
        raise ParseError(path, None, "tidy/comparisons.csv has no role "
                         "column or no row: run ./run.sh report again")
    return [r for r in t.to_dict("records") if r["role"] == "primary"]


def rr_interval(r1, lo1, hi1, c1, r2, lo2, hi2, c2, confidence):
    """(rr, lo, hi): r2 / r1 with its interval (module docstring): c1,
    c2 the levels of the two runs' intervals."""
    vals = (r1, lo1, hi1, r2, lo2, hi2)
    if any(not isinstance(x, (int, float)) or not x > 0 or math.isinf(x)
           for x in vals):
        return math.nan, math.nan, math.nan
    z1 = sps.norm.ppf(1 - (1 - c1) / 2)
    z2 = sps.norm.ppf(1 - (1 - c2) / 2)
    se1 = (math.log(hi1) - math.log(lo1)) / (2 * z1)
    se2 = (math.log(hi2) - math.log(lo2)) / (2 * z2)
    d = math.log(r2) - math.log(r1)
    h = sps.norm.ppf(1 - (1 - confidence) / 2) * math.hypot(se1, se2)
    return math.exp(d), math.exp(d - h), math.exp(d + h)


def across(rows1, rows2, c1, c2, confidence=0.95):
    """The rows (COLUMNS) of the primary cells both runs judged, in run
    1's order; c1, c2: the runs' levels."""
    two = {(r["baseline"], r["variant"], int(r["cpus"]), str(r["point"])): r
           for r in rows2}
    out = []
    for a in rows1:
        k = (a["baseline"], a["variant"], int(a["cpus"]), str(a["point"]))
        b = two.get(k)
        if b is None or b["metric"] != a["metric"]:
            continue
        rr = rr_interval(a["ratio"], a["ratio_ci_lo"], a["ratio_ci_hi"], c1,
                         b["ratio"], b["ratio_ci_lo"], b["ratio_ci_hi"], c2,
                         confidence)
        out.append(dict(zip(COLUMNS, k + (a["metric"], a.get("clock") or "",
                                          a["ratio"], a["ratio_ci_lo"],
                                          a["ratio_ci_hi"], a["verdict"],
                                          b["ratio"], b["ratio_ci_lo"],
                                          b["ratio_ci_hi"], b["verdict"])
                            + rr)))
    return out


def _ri(x, lo, hi, d):
    if not isinstance(x, float) or math.isnan(x):
        return "-"
    return f"{x:.{d}f} [{lo:.{d}f}, {hi:.{d}f}]"


def render(rows, name1, name2, rd, confidence):
    """The table as text: one line per primary cell."""
    pct = pct_s(confidence)
    head = (f"Across runs: {rd.name}, run 1 = {name1}, run 2 = {name2}; "
            f"each run's ratio variant/baseline with its interval and "
            f"verdict, and run 2's ratio over run 1's [{pct}% CI, "
            f"approximate: analysis/across.py]; ~ where it holds 1.")
    lines = [head, "",
             "| pair | vCPUs | point | metric | run 1 | verdict 1 | run 2 | "
             f"verdict 2 | run 2 / run 1 [{pct}% CI] |",
             "|---|--:|---|---|---|---|---|---|---|"]
    for r in rows:
        d = 4 if r["clock"] == ICOUNT else 3
        rr = _ri(r["rr"], r["rr_lo"], r["rr_hi"], 4 if d == 4 else 3)
        if rr != "-" and r["rr_lo"] <= 1 <= r["rr_hi"]:
            rr += " ~"
        lines.append(
            f"| {r['variant']} vs {r['baseline']} | {r['cpus']}"
            f"{' (icount)' if r['clock'] == ICOUNT else ''} | {r['point']} | "
            f"{r['metric']} | {_ri(r['ratio1'], r['lo1'], r['hi1'], d)} | "
            f"{r['verdict1'] or 'n/a'} | "
            f"{_ri(r['ratio2'], r['lo2'], r['hi2'], d)} | "
            f"{r['verdict2'] or 'n/a'} | {rr} |")
    moved = [r for r in rows if isinstance(r["rr"], float)
             and not math.isnan(r["rr"]) and not r["rr_lo"] <= 1 <= r["rr_hi"]]
    same = sum(r["verdict1"] == r["verdict2"] for r in rows)
    lines += ["", f"{same} of {len(rows)} cells have the same verdict in both "
              f"runs; the ratio moved (its CI excludes 1) in {len(moved)}"
              + (": " + ", ".join(f"{r['cpus']} vCPUs {r['point']} "
                                  f"{r['rr']:.3f}" for r in moved) if moved
                 else "") + "."]
    return "\n".join(lines) + "\n"


def compare(dir1, dir2, confidence=0.95):
    """(text, rows) of two reported runs of one campaign; ParseError for
    a directory that is not one, or two campaigns that differ."""
    rd1, rd2 = rundir_mod.load(dir1), rundir_mod.load(dir2)
    why = difference(rd1.campaign, rd2.campaign)
    if why:
        raise ParseError(dir2, None, f"not the campaign of {dir1}: {why}")
    rows = across(_primary(dir1), _primary(dir2), rd1.confidence,
                  rd2.confidence, confidence)
    if not rows:
        raise ParseError(dir2, None, "no primary cell judged in both runs")
    return render(rows, dir1, dir2, rd1, confidence), rows


def make_parser():
    ap = OneLineParser(
        prog=PROG, description="Compare two reported runs of one campaign: "
        "per primary cell both ratios and their ratio with a CI.")
    ap.add_argument("dir1", metavar="DIR1", help="a run directory (reported)")
    ap.add_argument("dir2", metavar="DIR2", help="another run of the same campaign")
    ap.add_argument("--confidence", type=float, default=0.95,
                    help="the level of the ratio of ratios' CI (default 0.95)")
    return ap


def main(argv=None):
    def body(args):
        if not 0.5 <= args.confidence < 1:
            raise UsageError(f"--confidence {args.confidence:g}: want a "
                             f"level in [0.5, 1)")
        text, _rows = compare(args.dir1, args.dir2, args.confidence)
        sys.stdout.write(text)
        return EXIT_OK
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
