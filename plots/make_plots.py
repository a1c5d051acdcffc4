#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Draw the plots of one run directory into DIR/plots/ (PNG and SVG).

Usage: make_plots.py DIR [--only NAME[,NAME...]]

For each plot, selects rows and columns of DIR/tidy/*.csv (analysis/TIDY.md)
into DIR/plots/data/NAME*.csv, the rows of one line next to each other as
gnuplot wants them, and runs plots/NAME.gp on it.  Nothing is computed
here: every number drawn is in a tidy file.  The setup footer comes from
DIR/manifest.json.  Also writes DIR/plots/plots.json (titles and captions,
for report_html.py) and DIR/plots/gnuplot-commands.txt (to redraw by hand).

Exit status: 0 done, 2 bad input (one line on stderr), 3 gnuplot missing.
"""

import json
import math
import os
import shlex
import shutil
import subprocess
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from analysis.metrics import STEAL_FLAG_PCT, direction  # noqa: E402
from plots.common import (EXIT_OK, MissingTool, OneLineParser, PlotsError,  # noqa: E402
                          Run, gp_quote, run_cli, to_int)

PROG = "make_plots"
HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("latency", "throughput", "crossover", "steal", "lockstat", "starvation",
         "cdf", "fairness")
GNUPLOT_TIMEOUT_S = 120


class Skip(Exception):
    """This plot has no data in this run: a warning, not an error."""


class NotApplicable(Skip):
    """This plot does not apply to this run (a campaign that sweeps no
    grid, a run from before host steal was measured): left out without a
    warning, unless asked for by name."""


class Plot:
    """One gnuplot run: the script, its variables, and what the report says."""

    def __init__(self, name, size, title, caption, variables, data):
        self.name, self.size, self.title, self.caption = name, size, title, caption
        self.variables, self.data = variables, data


def wide(n, height):
    """Image size for n panels side by side."""
    return (max(1000, 330 * n + 80), height)


class Selector:
    """Rows of the tidy files, filtered and ordered for one plot each."""

    def __init__(self, run, datadir):
        self.run, self.datadir = run, datadir
        self.vorder = {v: i for i, v in enumerate(run.variants)}
        self.porder = {p["id"]: i for i, p in enumerate(run.points)}

    def known(self, r):
        return r.get("variant") in self.vorder and r.get("point") in self.porder

    def medians(self, metrics):
        cols = ("variant", "cpus", "point", "metric", "median", "ci_lo", "ci_hi")
        rows = [r for r in self.run.tidy("medians.csv", cols)
                if r["metric"] in metrics and self.known(r) and r["median"] != ""]
        for r in rows:
            r["cpus"] = str(to_int(r["cpus"], "medians.csv cpus"))
        return rows

    def write(self, name, rows, columns):
        """DIR/plots/data/NAME.csv with these columns (in their tidy order)."""
        path = os.path.join(self.datadir, name + ".csv")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(",".join(columns) + "\n")
            for r in rows:
                f.write(",".join(_csv_field(r.get(c, "")) for c in columns) + "\n")
        return path

    def common(self, rows):
        """Variables every category-axis plot takes, from the rows shown."""
        cpus = sorted({int(r["cpus"]) for r in rows})
        points = [p["id"] for p in self.run.points
                  if any(r["point"] == p["id"] for r in rows)]
        over = [c for c in self.run.oversubscribed() if c in cpus]
        v = {"variants": " ".join(self.run.variants),
             "cpuslist": " ".join(map(str, cpus)),
             "points": " ".join(points),
             "oversub": " ".join(map(str, over)),
             "footer": self.run.setup_line(set(cpus)),
             "lockname": self.run.lock_class}
        for i, pid in enumerate(points, 1):
            v[f"plabel{i}"] = self.run.point_label(pid)
            p = self.run.point(pid)
            v[f"pshort{i}"] = (f"{pid} ({p['read_pct']}% reads)" if "read_pct" in p
                               else pid)
        return v, points, cpus

    def key(self, *cols):
        def k(r):
            out = []
            for c in cols:
                if c == "variant":
                    out.append(self.vorder[r[c]])
                elif c == "point":
                    out.append(self.porder[r[c]])
                elif c in ("cpus", "rep", "read_pct", "bucket"):
                    out.append(to_int(r[c], f"{c}"))
                else:
                    out.append(r[c])
            return tuple(out)
        return k


def spans_decade(values):
    """Whether a panel drawing these values (medians, CI ends, boots) wants
    a log y axis: all positive (a log axis cannot draw 0) and the largest
    more than 10 times the smallest.  A choice of axis, not a drawn number."""
    vals = []
    for x in values:
        try:
            vals.append(float(x))
        except (TypeError, ValueError):
            continue
    return bool(vals) and min(vals) > 0 and max(vals) > 10 * min(vals)


def log_panels(rows, panel, cols=("median", "ci_lo", "ci_hi")):
    """The panels (panel(row) -> name) whose rows' values span a decade,
    in first-seen order: the plot scripts' logpanels variable."""
    by = {}
    for r in rows:
        by.setdefault(panel(r), []).extend(r.get(c, "") for c in cols)
    return " ".join(p for p, vals in by.items() if spans_decade(vals))


VERDICT_COLS = ["baseline", "variant", "cpus", "point", "metric", "median_var",
                "verdict"]


def compared_rows(run, cols):
    """The rows of tidy/comparisons.csv, as the last analyze or report
    judged them ([] when it is not there); PlotsError when the file lacks
    one of cols."""
    if not run.has("comparisons.csv"):
        return []
    rows = run.tidy("comparisons.csv", cols)
    missing = [c for c in cols if rows and c not in rows[0]]
    if missing:   # read before with other columns required
        raise PlotsError(f"{os.path.join(run.tidy_dir, 'comparisons.csv')}: "
                         f"no column {', '.join(missing)} (see analysis/TIDY.md)")
    return rows


def verdict_rows(sel, metrics, cpus, warn):
    """The verdict of each compared pair (baseline, variant) per vCPU count
    and point for these metrics, from tidy/comparisons.csv; only pairs of known variants, points and vCPU
    counts drawn, with a verdict and the variant's median (where its point
    is), and not the A/A control (role `control`: the baseline against
    itself booted again, which calibrates the others; a file without the
    role column has all its rows drawn).  The verdict is a display string,
    shown whole."""
    try:
        rows = compared_rows(sel.run, VERDICT_COLS)
    except PlotsError as e:
        warn(f"no verdict labels: {e}")
        return []
    out = []
    for r in rows:
        if (r["metric"] in metrics and sel.known(r) and r["baseline"] in sel.vorder
                and r["verdict"].strip() and r["median_var"] != ""
                and (r.get("role") or "").strip() != "control"):
            try:
                c = int(r["cpus"])
                float(r["median_var"])
            except ValueError:
                continue
            if c in cpus:
                out.append(dict(r, cpus=str(c)))
    out.sort(key=lambda r: (metrics.index(r["metric"]),) +
             sel.key("point", "cpus", "variant")(r) + (sel.vorder[r["baseline"]],))
    return out


def verdict_labels(sel, rows, panel):
    """The scripts' label variables (plots/style.gp: nvl, vl<i>, vt<i>):
    'after: no harm' (or 'rcu vs after: ...' for a pair whose baseline is
    not the campaign's) right of the variant's point; the labels of more
    than one pair at a vCPU count form a list centred on the first one's
    point (plots/style.gp moves it inside the panel), so that they never
    overlap however close the medians are."""
    count, first, v = {}, {}, {"nvl": len(rows)}
    for r in rows:
        at = (panel(r), r["cpus"])
        count[at] = count.get(at, 0) + 1
    for i, r in enumerate(rows, 1):
        k = sel.vorder[r["variant"]] + 1
        at = (panel(r), r["cpus"])
        if at not in first:
            first[at] = [k, r["median_var"], 0]
        else:
            first[at][2] += 1
        ak, y, n = first[at]
        who = (r["variant"] if r["baseline"] == sel.run.baseline
               else f"{r['variant']} vs {r['baseline']}")
        v[f"vl{i}"] = f"{at[0]} {r['cpus']} {k} {n} {count[at]} {y}"
        v[f"vt{i}"] = f"{who}: {r['verdict'].strip()}"
    return v


def _csv_field(x):
    x = str(x)
    if any(ch in x for ch in ',"\n'):
        return '"' + x.replace('"', '""') + '"'
    return x


MED_COLS = ["variant", "cpus", "point", "read_pct", "metric", "unit", "n",
            "median", "ci_lo", "ci_hi", "ci_level"]


def log_note(v):
    """The caption's word on log axes."""
    return "; log y axis where a panel spans more than 10x" if v.get("logpanels") else ""


def latency(sel, warn):
    run = sel.run
    stat = "median" if run.primary_metric.endswith("_lat_median_ns") else "mean"
    metrics = [f"lookup_lat_{stat}_ns", f"write_lat_{stat}_ns"]
    rows = sel.medians(metrics)
    if not rows:
        raise Skip(f"medians.csv has no {' or '.join(metrics)} rows "
                   "(points run with timing=0?)")
    rows.sort(key=sel.key("metric", "point", "variant", "cpus"))
    v, points, cpus = sel.common(rows)
    v["stat"] = stat
    v["empty"] = " ".join(f"{op}:{p}" for op in ("lookup", "write") for p in points
                          if not any(r["point"] == p and r["metric"].startswith(op)
                                     for r in rows))
    panel = lambda r: f"{r['metric'].split('_')[0]}:{r['point']}"  # noqa: E731
    v["logpanels"] = log_panels(rows, panel)
    data = [sel.write("latency", rows, MED_COLS)]
    verdicts = verdict_rows(sel, metrics, set(cpus), warn)
    if verdicts:
        v.update(verdict_labels(sel, verdicts, panel))
        data.append(sel.write("latency-verdicts", verdicts, VERDICT_COLS))
    return Plot("latency", (wide(len(points), 600)[0], 600),
                "Cost per operation vs vCPUs",
                f"{stat.capitalize()} latency of one lookup (top) and one "
                f"register/unregister write (bottom) per workload point: the "
                f"median over boots of each boot's {stat} "
                f"(medians.csv {metrics[0]}, {metrics[1]}), bars: its 95% CI"
                f"{log_note(v)}; beside each compared variant's point, its "
                "verdict on that metric. Lower is better.",
                v, data)


def throughput(sel, warn):
    rows = sel.medians(["throughput_ops_s"])
    if not rows:
        raise Skip("medians.csv has no throughput_ops_s rows")
    rows.sort(key=sel.key("point", "variant", "cpus"))
    v, points, cpus = sel.common(rows)
    v["logpanels"] = log_panels(rows, lambda r: r["point"])
    data = [sel.write("throughput", rows, MED_COLS)]
    verdicts = verdict_rows(sel, ["throughput_ops_s"], set(cpus), warn)
    if verdicts:
        v.update(verdict_labels(sel, verdicts, lambda r: r["point"]))
        data.append(sel.write("throughput-verdicts", verdicts, VERDICT_COLS))
    return Plot("throughput", wide(len(points), 450),
                "Throughput vs vCPUs",
                "Operations per second of all benchmark threads together per "
                "workload point: the median over boots (medians.csv "
                "throughput_ops_s), bars: its 95% CI"
                f"{log_note(v)}; beside each compared variant's point, its "
                "verdict on throughput_ops_s. Higher is better.",
                v, data)


NICE = {1: (1, 1.5, 2, 3, 5, 7), 2: (1, 2, 5), 3: (1, 3), 99: (1,)}


def log_ticks(values):
    """(low, high, ticks) of a log axis showing these positive values: the
    ticks at 1, 1.5, 2, 3, 5, 7 times a power of ten when the values span
    less than a decade (so that the narrow range of a steady cell still has
    labelled ticks), fewer a decade when they span more; the range from the
    tick below the smallest value to the tick above the largest, with 8%
    to spare.  A choice of axis, not a drawn number."""
    lo, hi = min(values) / 1.08, max(values) * 1.08
    span = math.log10(hi / lo)
    mant = next(m for d, m in sorted(NICE.items()) if span <= d)
    ticks = [m * 10.0 ** e
             for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
             for m in mant]
    low = max(t for t in ticks if t <= lo * (1 + 1e-9))
    high = min(t for t in ticks if t >= hi * (1 - 1e-9))
    return low, high, [t for t in ticks if low <= t <= high]


def plain(x):
    """A number for a gnuplot word list, which reads no exponent: 1e6 ->
    '1000000', 1.5 -> '1.5'."""
    return f"{x:.6f}".rstrip("0").rstrip(".")


STEAL_KEY = ["variant", "cpus", "rep", "cell", "point", "read_pct", "mailboxes"]
STEAL_METRICS = ["steal_pct", "steal_max_pct", "throughput_ops_s"]


def cpus_text(c, over):
    """'1 vCPU', '4 vCPUs*' (* = oversubscribed)."""
    return f"{c} vCPU{'s' if c != 1 else ''}{'*' if c in over else ''}"


def steal(sel, warn):
    """Throughput against host steal, per boot: for each boot and point,
    its samples.csv values of steal_max_pct and throughput_ops_s side by
    side (one row of data/steal.csv; steal_pct, the mean over the vCPU
    threads, beside them for a reader of the file), a panel per point and
    vCPU count."""
    run = sel.run
    cols = ("variant", "cpus", "rep", "cell", "point", "metric", "value")
    boots = {}
    for r in run.tidy("samples.csv", cols):
        if r["metric"] in STEAL_METRICS and sel.known(r) and r["value"] != "":
            b = boots.setdefault((r["cell"], r["point"]),
                                 {k: r.get(k, "") for k in STEAL_KEY})
            b[r["metric"]] = r["value"]
    rows = [b for b in boots.values()
            if b.get("steal_max_pct", "") != "" and b.get("throughput_ops_s", "") != ""]
    if not rows:
        # as analyze has it: a run from before host-steal.txt (or a guest
        # without the point markers) is not a problem
        raise NotApplicable("samples.csv has no steal_max_pct beside throughput_ops_s "
                            "(runs from before host-steal.txt, guest/JOB.md)")
    for r in rows:
        r["cpus"] = str(to_int(r["cpus"], "samples.csv cpus"))
        try:
            float(r["steal_max_pct"]), float(r["throughput_ops_s"])
        except ValueError:
            raise PlotsError(f"samples.csv: cell {r['cell']} point {r['point']}: "
                             "steal_max_pct or throughput_ops_s is not a number") from None
    rows.sort(key=sel.key("point", "variant", "cpus", "rep"))
    v, points, cpus = sel.common(rows)
    over = set(run.oversubscribed())
    # a panel per point and vCPU count, a point's panels side by side,
    # about four panels a row
    per_row = max(1, 4 // len(cpus)) if len(cpus) < 4 else 1
    ncols = len(cpus) * min(per_row, len(points))
    panels = [(p, c) for p in points for c in cpus]
    nrows = -(-len(panels) // ncols)
    have = {(r["point"], int(r["cpus"])) for r in rows}
    v.update(panels=" ".join(f"{p}:{c}" for p, c in panels), ncols=ncols, nrows=nrows,
             empty=" ".join(f"{p}:{c}" for p, c in panels if (p, c) not in have),
             flag=f"{STEAL_FLAG_PCT:g}",
             xmax=f"{max([100.0] + [float(r['steal_max_pct']) for r in rows]):g}")
    for i, (p, c) in enumerate(panels, 1):
        v[f"ptitle{i}"] = f"{v[f'pshort{points.index(p) + 1}']}, {cpus_text(c, over)}"
        vals = [float(r["throughput_ops_s"]) for r in rows
                if (r["point"], int(r["cpus"])) == (p, c)
                and float(r["throughput_ops_s"]) > 0]
        if vals:
            lo, hi, ticks = log_ticks(vals)
            v[f"yr{i}"] = f"{plain(lo)} {plain(hi)}"
            v[f"yt{i}"] = " ".join(plain(t) for t in ticks)
    return Plot("steal", (max(1000, 300 * ncols + 100), 130 + 270 * nrows),
                "Host steal vs throughput",
                "Each boot's throughput at each workload point and vCPU count "
                "(samples.csv throughput_ops_s, log scale) against the share "
                "of that point's run during which the worst of QEMU's vCPU "
                "threads waited on a host run queue (samples.csv "
                "steal_max_pct, measured from the host); dashed: the "
                f"{STEAL_FLAG_PCT:g}% above which analyze flags a point. "
                "Look at the low markers: right of the line, the host "
                "took the vCPUs' time (lock-waiter preemption), left of it "
                "the collapse is the guest's own.",
                v, [sel.write("steal", rows, STEAL_KEY + STEAL_METRICS)])


GRID_KEYS = ("mailboxes", "read_pct", "think_ns")
CROSS_COLS = ["baseline", "variant", "cpus", "point", "read_pct", "mailboxes",
              "metric", "ratio", "ratio_ci_lo", "ratio_ci_hi", "verdict"]
CB_STEPS = (1.1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100)


def grid_value(point, key):
    """A point's mailboxes, read_pct or think_ns (0 when the manifest,
    from before think_ns, has none)."""
    v = point.get(key)
    if key == "think_ns" and v in (None, ""):
        return 0
    return to_int(v, f"manifest.json point {point['id']} {key}")


def think_text(ns):
    return ("tight loop (think_ns 0)" if not ns
            else f"{ns / 1000:g} us pause between ops (think_ns {ns})")


def tile_lines(ratio, verdict):
    """A tile's text: the ratio (3 decimals, as report.html's table), the
    verdict, and the verdict's detail on a line of its own ('inconclusive',
    '(n≈23)')."""
    lines = [f"{float(ratio):.3f}" if ratio != "" else "no ratio"]
    verdict = verdict.strip() or "no verdict"
    cut = verdict.find(" (")
    lines += [verdict] if cut < 0 else [verdict[:cut], verdict[cut + 1:]]
    return lines


def crossover(sel, warn):
    """The crossover heat map: the primary metric's ratio and verdict of
    each compared pair (tidy/comparisons.csv), a tile per
    mailboxes x read_pct, a panel per pair x vCPU count x think_ns (x
    miss_pct when the campaign varies it).  Only for a campaign whose
    points vary over at least two of mailboxes, read_pct and think_ns."""
    run = sel.run
    if any(p.get("workload") for p in run.points):
        # guest/lockload's points (guest/JOB.md) have no mailboxes or read_pct
        raise NotApplicable("the campaign's points run a lockload workload: "
                            "no mailboxes x read_pct grid")
    vary = [k for k in GRID_KEYS if len({grid_value(p, k) for p in run.points}) > 1]
    if len(vary) < 2:
        raise NotApplicable("the campaign's points vary over "
                            f"{' and '.join(vary) or 'none'} of {', '.join(GRID_KEYS)}, "
                            "not two")
    metric = run.primary_metric
    rows = [r for r in compared_rows(run, CROSS_COLS)
            if r["metric"] == metric and sel.known(r) and r["baseline"] in sel.vorder
            and (r.get("role") or "").strip() != "control"]
    if not rows:
        raise Skip(f"no comparison of {metric} in tidy/comparisons.csv")
    for r in rows:
        r["cpus"] = str(to_int(r["cpus"], "comparisons.csv cpus"))
        if r["ratio"] != "":
            try:
                if float(r["ratio"]) <= 0:
                    raise ValueError
            except ValueError:
                raise PlotsError(f"comparisons.csv: ratio {r['ratio']!r} is not a "
                                 "positive number") from None
    rows.sort(key=sel.key("variant", "baseline", "cpus", "point"))
    over = set(run.oversubscribed())
    pts = {p["id"]: p for p in run.points}
    misses = sorted({int(pts[r["point"]].get("miss_pct") or 0) for r in rows})
    pairs = list(dict.fromkeys((r["baseline"], r["variant"]) for r in rows))
    cpus = sorted({int(r["cpus"]) for r in rows})
    thinks = sorted({grid_value(pts[r["point"]], "think_ns") for r in rows})
    mbs = sorted({grid_value(pts[r["point"]], "mailboxes") for r in rows})
    rps = sorted({grid_value(pts[r["point"]], "read_pct") for r in rows})
    panels = [(b, v, c, m, t) for b, v in pairs for c in cpus for m in misses
              for t in thinks]
    var = {"variants": " ".join(run.variants),
           "oversub": " ".join(str(c) for c in cpus if c in over),
           "footer": run.setup_line(set(cpus)),
           "npan": len(panels), "ncols": len(thinks),
           "nrows": len(panels) // len(thinks),
           "mblist": " ".join(map(str, mbs)), "rplist": " ".join(map(str, rps))}
    where, empty = {}, []
    for j, (b, v, c, m, t) in enumerate(panels, 1):
        ids = [p["id"] for p in run.points if grid_value(p, "think_ns") == t
               and int(p.get("miss_pct") or 0) == m]
        var[f"pp{j}"], var[f"pc{j}"] = " ".join(ids), str(c)
        var[f"pb{j}"], var[f"pv{j}"] = b, v
        title = f"{cpus_text(c, over)}, {think_text(t)}"
        if len(misses) > 1:
            title += f", {m}% misses"
        if len(pairs) > 1:
            title = f"{v} vs {b}: {title}"
        var[f"ptitle{j}"] = title
        have = False
        for pid in ids:
            where[(b, v, str(c), pid)] = j
        for r in rows:
            have |= where.get((r["baseline"], r["variant"], r["cpus"], r["point"])) == j
        if not have:
            empty.append(str(j))
    var["empty"] = " ".join(empty)
    # the tiles' text; two points on one tile (the same mailboxes, read_pct,
    # think_ns and miss_pct) would lie on each other: the first is drawn
    seen, drawn, tlen = set(), [], 1
    for r in rows:
        p = pts[r["point"]]
        j = where[(r["baseline"], r["variant"], r["cpus"], r["point"])]
        xi = mbs.index(grid_value(p, "mailboxes")) + 1
        yi = rps.index(grid_value(p, "read_pct")) + 1
        if (j, xi, yi) in seen:
            warn(f"crossover plot: {r['point']} is on the tile of another point "
                 "(same mailboxes, read_pct, think_ns, miss_pct): left out")
            continue
        seen.add((j, xi, yi))
        drawn.append(r)
        i = len(drawn)
        lines = tile_lines(r["ratio"], r["verdict"])
        var[f"tl{i}"] = f"{j} {xi} {yi}"
        for k, text in zip("abc", lines):
            var[f"t{k}{i}"] = text
        tlen = max([tlen] + [len(x) for x in lines])
    var["ntl"], var["tlen"] = len(drawn), tlen
    # the colour scale: symmetric about 1 on a log scale, to the next step
    # past the largest ratio either way (a choice of axis)
    far = max([1.0] + [max(float(r["ratio"]), 1 / float(r["ratio"]))
                       for r in drawn if r["ratio"] != ""])
    cbmax = next((x for x in CB_STEPS if x >= far), CB_STEPS[-1])
    steps = [x for x in CB_STEPS if x <= cbmax]
    steps = steps[-2:] if len(steps) > 2 else steps
    var["cbmax"] = plain(cbmax)
    var["cbtics"] = " ".join([f"{1 / x:.3g}" for x in reversed(steps)] + ["1"] +
                             [f"{x:g}" for x in steps])
    var["better"] = "lower" if direction(metric) == "lower" else "higher"
    b0, v0 = pairs[0]
    var["cblab"] = (f"{v0} / {b0} (log scale)" if len(pairs) == 1
                    else "variant / baseline (log scale)")
    pw = max(260, 110 * len(mbs))
    ph = max(200, 62 * len(rps))
    who = (f"{v0}/{b0}" if len(pairs) == 1 else "variant/baseline")
    return Plot("crossover",
                (max(1000, len(thinks) * (pw + 100) + 220), 170 + var["nrows"] * (ph + 100)),
                "Crossover: where each lock pays",
                f"The ratio {who} of {metric} (the primary metric; "
                f"tidy/comparisons.csv ratio and verdict, written in each tile) for each list "
                "length (mailboxes) and share of reads, a panel per vCPU count "
                "and pause between operations (think_ns), coloured on a log "
                "scale centred on 1: teal where the variant is better, brown "
                "where it is worse, white where they match. Look for the "
                "border between teal and brown: on one side the spinlock's "
                "cheaper acquisition pays, on the other the rwlock's readers "
                "sharing the lock do, and a pause between operations moves it.",
                var, [sel.write("crossover", drawn, CROSS_COLS)])


LOCK_COLS = ["variant", "cpus", "rep", "cell", "point", "class", "kind",
             "contentions", "waittime_avg_us", "waittime_max_us",
             "holdtime_avg_us", "acquisitions"]
LOCK_MEDS = ["lock_contentions", "lock_waittime_avg_us", "lock_waittime_max_us",
             "lock_holdtime_avg_us"]


def lockstat(sel, warn):
    run = sel.run
    cls = run.lock_class
    rows = [r for r in run.tidy("lockstat.csv", LOCK_COLS) if sel.known(r)]
    if any(r["class"] == cls for r in rows):
        rows = [r for r in rows if r["class"] == cls]
    if not rows:
        raise Skip(f"lockstat.csv has no {cls} rows")
    korder = {"R": 0, "W": 1, "": 2}
    for r in rows:
        if r["kind"] not in korder:
            raise PlotsError(f"lockstat.csv: kind {r['kind']!r} is not R, W or empty")
    rows.sort(key=lambda r: sel.key("point", "variant")(r) + (korder[r["kind"]],)
              + sel.key("cpus", "rep")(r))
    series = sorted({(sel.vorder[r["variant"]], korder[r["kind"]], r["kind"])
                     for r in rows})
    v, points, cpus = sel.common(rows)
    v["svar"] = " ".join(str(s[0] + 1) for s in series)
    v["skind"] = " ".join(s[2] or "-" for s in series)
    data = [sel.write("lockstat", rows, LOCK_COLS)]
    meds = sel.medians(LOCK_MEDS)
    if meds:
        meds.sort(key=sel.key("metric", "point", "variant", "cpus"))
        v["medfile"] = sel.write("lockstat-medians", meds, MED_COLS)
        data.append(v["medfile"])
    # panels POINT:M (M: 1 contentions .. 4 hold time, as in lockstat.gp):
    # the boots' values and the median lines drawn there
    drawn = {}
    for r in rows:
        for m, c in enumerate(("contentions", "waittime_avg_us",
                               "waittime_max_us", "holdtime_avg_us"), 1):
            drawn.setdefault(f"{r['point']}:{m}", []).append(r[c])
    for r in meds:
        drawn.setdefault(f"{r['point']}:{LOCK_MEDS.index(r['metric']) + 1}",
                         []).append(r["median"])
    v["logpanels"] = " ".join(k for k, vals in drawn.items() if spans_decade(vals))
    return Plot("lockstat", (1250, max(450, 270 * len(points) + 130)),
                f"{cls} in /proc/lock_stat",
                "Contentions, wait time (average and maximum) and hold time "
                f"(average) of {cls} per workload point (rows). Markers: "
                "one per boot and lock_stat row (lockstat.csv): the rwlock's "
                "read side (-R, triangle up) and write side (-W, triangle "
                "down) beside the spinlock's single row (circle); no "
                "per-row median exists, so the boots are shown. Dashed lines: "
                "median over boots of all rows together (medians.csv lock_*).",
                v, data)


def starvation(sel, warn):
    run = sel.run
    metrics = ["write_lat_p99_ns", "write_lat_max_ns"]
    rows = sel.medians(metrics)
    for r in rows:
        to_int(r.get("read_pct"), "medians.csv read_pct")
    if not rows:
        raise Skip("medians.csv has no write_lat_p99_ns/write_lat_max_ns rows")
    # one vCPU runs one benchmark thread: no reader can keep a writer waiting
    rows = [r for r in rows if int(r["cpus"]) > 1]
    if not rows:
        raise Skip("only 1-vCPU write_lat_p99_ns/write_lat_max_ns rows "
                   "(one benchmark thread: nothing to starve)")
    # points that differ only in read_pct form one line
    groups = {}
    for p in run.points:
        k = tuple((n, p.get(n)) for n in ("mailboxes", "miss_pct", "duration_ms"))
        groups.setdefault(k, []).append(p["id"])
    gindex = {pid: i for i, ids in enumerate(groups.values()) for pid in ids}
    rows.sort(key=lambda r: (gindex[r["point"]],) + sel.key("variant", "metric",
                                                           "cpus", "read_pct")(r))
    v, _, cpus = sel.common(rows)
    used = [ids for ids in groups.values() if any(r["point"] in ids for r in rows)]
    for i, ids in enumerate(used, 1):
        v[f"group{i}"] = " ".join(ids)
        if len(used) > 1:
            p = run.point(ids[0])
            v[f"glabel{i}"] = (f"({p.get('mailboxes')} mailboxes, "
                               f"{p.get('miss_pct')}% misses)")
    reads = sorted({int(r["read_pct"]) for r in rows})
    return Plot("starvation", wide(len(cpus), 450),
                "Writer starvation: write latency tail vs share of reads",
                "The 99th percentile (solid) and the maximum (dashed) of the "
                "write latency against the share of reads "
                f"({', '.join(map(str, reads))}%), one panel per vCPU count "
                "above 1 (one vCPU runs one benchmark thread, which nothing "
                "can starve): "
                "median over boots (medians.csv write_lat_p99_ns, "
                "write_lat_max_ns), bars: 95% CI, log scale. A "
                "reader-preferring rwlock lets readers keep a writer waiting, "
                "so its tail grows with the share of reads.",
                v, [sel.write("starvation", rows, MED_COLS)])


HIST_COLS = ["variant", "cpus", "rep", "cell", "point", "op", "bucket",
             "bucket_lo_ns", "bucket_hi_ns", "count", "cum_fraction"]


def most_contended(sel, hist):
    """(cpus, point id, why): the highest vCPU count with histograms, and
    there the point whose baseline median of lock_contentions is highest
    (medians.csv); without it, the point with the fewest reads."""
    run = sel.run
    cpus = max(int(r["cpus"]) for r in hist)
    have = {r["point"] for r in hist if int(r["cpus"]) == cpus}
    cont = {}
    if run.has("medians.csv"):
        for r in sel.medians(["lock_contentions"]):
            if (r["variant"] == run.baseline and int(r["cpus"]) == cpus
                    and r["point"] in have):
                cont[r["point"]] = float(r["median"])
    if cont:
        pid = max(cont, key=lambda p: (cont[p], -sel.porder[p]))
        why = (f"the most vCPUs, and the point with the most {run.lock_class} "
               f"contentions there ({run.baseline}: median {cont[pid]:g})")
    else:
        pid = min(have, key=lambda p: (run.point(p).get("read_pct", 100),
                                       sel.porder[p]))
        why = "the most vCPUs, and the point with the fewest reads"
    return cpus, pid, why


def cdf(sel, warn):
    run = sel.run
    hist = [r for r in run.tidy("hist.csv", HIST_COLS)
            if sel.known(r) and r["bucket_hi_ns"] != "" and r["cum_fraction"] != ""]
    if not hist:
        raise Skip("hist.csv has no non-empty histograms")
    cpus, pid, why = most_contended(sel, hist)
    rows = [r for r in hist if int(r["cpus"]) == cpus and r["point"] == pid]
    rows.sort(key=sel.key("variant", "rep", "cell", "op", "bucket"))
    # drop the flat ends: keep from the last bucket at 0 to the first at 1
    kept, by = [], {}
    for r in rows:
        by.setdefault((r["cell"], r["op"]), []).append(r)
    for series in by.values():
        fr = [float(r["cum_fraction"]) for r in series]
        lo = max([i for i, f in enumerate(fr) if f <= 0] or [0])
        hi = min([i for i, f in enumerate(fr) if f >= 1] or [len(fr) - 1])
        kept.extend(series[lo:hi + 1])
    cells = []
    for r in kept:
        if r["cell"] not in [c for c, _ in cells]:
            cells.append((r["cell"], sel.vorder[r["variant"]] + 1))
    ops = [op for op in ("lookup", "write") if any(r["op"] == op for r in kept)]
    what = f"{run.point_label(pid)}, {cpus} vCPUs"
    if cpus in run.oversubscribed():
        what += " (oversubscribed)"
    v = {"variants": " ".join(run.variants),
         "cells": " ".join(c for c, _ in cells),
         "cellvar": " ".join(str(k) for _, k in cells),
         "what": what,
         "empty": " ".join(op for op in ("lookup", "write") if op not in ops),
         "footer": run.setup_line({cpus})}
    return Plot("cdf", (1000, 450),
                f"Latency distribution, {pid} at {cpus} vCPUs",
                f"Cumulative share of lookups (left) and writes (right) done "
                f"within each latency, one line per boot (hist.csv "
                f"cum_fraction at the upper edge of each log2 bucket, log "
                f"scale), for {what}: chosen as {why}. Further left and "
                "steeper is better; a long flat top is a tail.",
                v, [sel.write("cdf", kept, HIST_COLS)])


def fairness(sel, warn):
    run = sel.run
    cols = ("variant", "cpus", "rep", "cell", "point", "metric", "value")
    samples = [r for r in run.tidy("samples.csv", cols)
               if r["metric"] == "fairness_spread" and sel.known(r) and r["value"] != ""]
    meds = sel.medians(["fairness_spread"])
    if not samples or not meds:
        raise Skip("samples.csv/medians.csv have no fairness_spread rows")
    samples.sort(key=sel.key("point", "variant", "cpus", "rep"))
    meds.sort(key=sel.key("point", "variant", "cpus"))
    v, points, cpus = sel.common(meds)
    drawn = {}
    for r in samples:
        drawn.setdefault(r["point"], []).append(r["value"])
    for r in meds:
        drawn.setdefault(r["point"], []).extend((r["median"], r["ci_lo"], r["ci_hi"]))
    v["logpanels"] = " ".join(p for p, vals in drawn.items() if spans_decade(vals))
    v["medfile"] = sel.write("fairness-medians", meds, MED_COLS)
    data = [sel.write("fairness", samples, list(cols) + ["unit"]), v["medfile"]]
    return Plot("fairness", wide(len(points), 450),
                "Fairness between benchmark threads",
                "Operations of the busiest thread divided by the idlest "
                "thread's (samples.csv fairness_spread; 1 = fair), per "
                "workload point: open markers one per boot, line the median "
                "over boots (medians.csv), bars: 95% CI. Dashed: "
                "locktorture's '???' mark (max/2 > min). Lower is better.",
                v, data)


BUILDERS = {"latency": latency, "throughput": throughput, "crossover": crossover,
            "steal": steal, "lockstat": lockstat,
            "starvation": starvation, "cdf": cdf, "fairness": fairness}


def find_gnuplot():
    path = shutil.which("gnuplot")
    if not path:
        raise MissingTool("gnuplot not found: run ./run.sh setup")
    return path


def command(gnuplot, plot, outbase):
    v = dict(plot.variables)
    v["infile"] = plot.data[0]
    v["outbase"] = outbase
    v["width"], v["height"] = plot.size
    sets = "; ".join(f"{k}={val}" if isinstance(val, int) else f"{k}={gp_quote(val)}"
                     for k, val in v.items())
    return [gnuplot, "-e", sets, os.path.join(HERE, plot.name + ".gp")]


def make_plots(run_dir, only=None, warn=None):
    """Draw the plots of run_dir into run_dir/plots; returns the paths
    written (PNG and SVG of each plot that has data).  A plot without data
    is left out with a warning (warn(str), default: stderr).  Raises
    PlotsError on bad input, MissingTool without gnuplot."""
    warn = warn or (lambda m: print(f"{PROG}: warning: {m}", file=sys.stderr))
    gnuplot = find_gnuplot()
    run = Run(run_dir)
    outdir = os.path.join(run.dir, "plots")
    datadir = os.path.join(outdir, "data")
    try:
        os.makedirs(datadir, exist_ok=True)
    except OSError as e:
        raise PlotsError(f"{outdir}: cannot create: {e.strerror}") from None
    sel = Selector(run, datadir)
    written, index, cmds = [], [], []
    for name in only or NAMES:
        try:
            plot = BUILDERS[name](sel, warn)
        except NotApplicable as e:
            if only:
                warn(f"no {name} plot: {e}")
            continue
        except Skip as e:
            warn(f"no {name} plot: {e}")
            continue
        outbase = os.path.join(outdir, name)
        cmd = command(gnuplot, plot, outbase)
        cmds.append(shlex.join(cmd))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               errors="replace", timeout=GNUPLOT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise PlotsError(f"gnuplot {name}.gp: no result after "
                             f"{GNUPLOT_TIMEOUT_S} s") from None
        errs = [ln for ln in p.stderr.splitlines() if ln.strip()]
        files = [f"{outbase}.{ext}" for ext in ("png", "svg")]
        if p.returncode != 0 or not all(os.path.isfile(f) for f in files):
            raise PlotsError(f"gnuplot {name}.gp failed: "
                             f"{errs[-1] if errs else 'exit %d' % p.returncode}")
        written += files
        index.append({"name": name, "png": f"plots/{name}.png",
                      "svg": f"plots/{name}.svg", "title": plot.title,
                      "caption": plot.caption, "footer": plot.variables["footer"],
                      "width": plot.size[0], "height": plot.size[1],
                      "data": [os.path.relpath(d, run.dir) for d in plot.data]})
    with open(os.path.join(outdir, "plots.json"), "w", encoding="utf-8") as f:
        json.dump({"plots": index}, f, indent=1)
        f.write("\n")
    with open(os.path.join(outdir, "gnuplot-commands.txt"), "w", encoding="utf-8") as f:
        f.write("# the gnuplot runs that drew these plots (make_plots.py)\n")
        f.write("".join(c + "\n" for c in cmds))
    return written


def make_parser():
    ap = OneLineParser(
        prog=PROG, description="Draw DIR/plots/*.png and *.svg from DIR/tidy/*.csv.")
    ap.add_argument("dir", metavar="DIR", help="a results directory (with tidy/)")
    ap.add_argument("--only", metavar="NAME[,NAME...]",
                    help=f"only these plots (of: {', '.join(NAMES)})")
    return ap


def main(argv=None):
    def body(args):
        only = None
        if args.only:
            only = [n.strip() for n in args.only.split(",") if n.strip()]
            bad = [n for n in only if n not in NAMES]
            if bad:
                raise PlotsError(f"--only: no plot {bad[0]!r} (of: {', '.join(NAMES)})")
        for path in make_plots(args.dir, only):
            print(path)
        return EXIT_OK
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
