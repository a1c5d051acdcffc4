# SPDX-License-Identifier: GPL-2.0
"""The plots of medians over boots (medians.csv) with their 95% CIs:
latency and throughput against vCPUs (with the verdicts beside the
points), the writer's tail against the share of reads (starvation), and
the fairness between threads.
"""

import math

from analysis import metrics
from plots.common import PlotsError, to_int
from plots.select import (MED_COLS, VERDICT_COLS, Plot, Skip, answer_entry,
                          answer_rows, compared_rows, log_note, log_panels,
                          plain, spans_decade, verdict_labels, verdict_rows,
                          wide)


#: raw throughput (results.txt total ops_per_sec), and its twins read
#: against the host (throughput_run, throughput_ref)
THROUGHPUT = metrics.find(metrics.RESULTS, "total", "ops_per_sec")
THROUGHPUT_TWINS = metrics.twins(THROUGHPUT)
#: the metrics whose cells the throughput figure answers for: its
#: throughputs, and what a throughput is under icount
THROUGHPUTS = (THROUGHPUT,) + THROUGHPUT_TWINS + (
    metrics.ICOUNT_EQUIV[THROUGHPUT],)
#: the latency statistics the latency figure draws, by the regime of a
#: cell's answer (analysis/primary.py)
LATENCY_STATS = ("median", "mean")
#: the writers' figure: a bar and a marker per variant
STARVATION = (metrics.latency("write", "p99"), metrics.latency("write", "max"))
FAIRNESS = metrics.find(metrics.RESULTS, "fairness", "spread")


def _answers(sel, warn):
    """The answer's rows (select.answer_rows), [] with a warning when
    comparisons.csv cannot give them."""
    try:
        return answer_rows(sel.run)
    except PlotsError as e:
        warn(f"no verdict labels: {e}")
        return []


def _stat_at(answers, default):
    """(cpus, point) -> 'median' or 'mean': the latency statistic the
    answer judges there, where a cell's answer is a latency (the median
    on the wall clock, the mean under icount: analysis/primary.py);
    elsewhere the figure's default."""
    out = {}
    for r in answers:
        st = metrics.statistic(r["metric"])
        if st in LATENCY_STATS:
            out[(str(r["cpus"]), r["point"])] = st
    return lambda c, p: out.get((str(c), p), default)


def latency(sel, warn):
    run = sel.run
    answers = _answers(sel, warn)
    default = ("median" if run.rd.primary_metric in [
        metrics.latency(op, "median") for op in metrics.OPS] else "mean")
    stat = _stat_at(answers, default)
    every = [metrics.latency(op, s) for op in metrics.OPS
             for s in LATENCY_STATS]
    op = lambda r: metrics.op_of(r["metric"])  # noqa: E731
    # each cell's latency as the answer judges it where its answer is a
    # latency (a paced point: the median on the wall clock, the mean
    # under icount), the figure's default elsewhere; a panel whose
    # statistic differs by vCPU count says so in its title
    rows = [r for r in sel.medians(every)
            if metrics.statistic(r["metric"]) == stat(r["cpus"], r["point"])]
    if not rows:
        raise Skip(f"medians.csv has no {' or '.join(every)} rows "
                   "(points run with timing=0?)")
    rows.sort(key=lambda r: (op(r),) + sel.key(
        "point", "variant", "cpus")(r))
    v, points, cpus = sel.common(rows)
    used = sorted({stat(c, p) for c in cpus for p in points})
    v["stat"] = " or ".join(used)
    for i, p in enumerate(points, 1):
        at = {c: stat(c, p) for c in cpus}
        if len(set(at.values())) > 1 or set(at.values()) != {default}:
            # the short label and the statistics: a title a panel wide
            v[f"plabel{i}"] = v[f"pshort{i}"] + ", " + ", ".join(
                (f"{c} vCPU{'s' if c > 1 else ''}: " if j == 0 else f"{c}: ")
                + st for j, (c, st) in enumerate(at.items()))
    # each panel row's metrics (latency.gp knows no metric's name)
    for i, o in enumerate(metrics.OPS, 1):
        v[f"opmetrics{i}"] = " ".join(m for m in every if metrics.op_of(m) == o)
    v["empty"] = " ".join(f"{o}:{p}" for o in metrics.OPS for p in points
                          if not any(r["point"] == p and op(r) == o
                                     for r in rows))
    panel = lambda r: f"{op(r)}:{r['point']}"  # noqa: E731
    v["logpanels"] = log_panels(rows, panel)
    data = [sel.write("latency", rows, MED_COLS)]
    verdicts = verdict_rows(
        sel, lambda r: metrics.latency(op(r), stat(r["cpus"], r["point"])),
        PRIMARY_LATENCIES, set(cpus), rows)
    if verdicts:
        v.update(verdict_labels(sel, verdicts, panel))
        data.append(sel.write("latency-verdicts", verdicts, VERDICT_COLS))
    how = (f"the median over boots of each boot's {used[0]}" if len(used) == 1
           else "the median over boots of each boot's mean or median: where "
           "a cell's answer is a latency, the statistic the answer judges "
           "(the median on the wall clock, the mean under icount, whose "
           "times are instructions), each panel's title naming its own")
    return Plot("latency", (wide(len(points), 600)[0], 600),
                "Cost per operation vs vCPUs",
                f"Latency of one lookup (top) and one register/unregister "
                f"write (bottom) per workload point: {how} (medians.csv "
                f"{', '.join(sorted({r['metric'] for r in rows}))}), bars: its "
                f"95% CI{log_note(v)}; beside each compared variant's point "
                "whose answer is a latency, the answer's verdict (its "
                "metric named where it is not the one drawn). Lower is "
                "better.",
                v, data, [answer_entry(r) for r in verdicts])


#: the latency metrics a cell's answer can be (analysis/metrics.py)
PRIMARY_LATENCIES = tuple(m for m in metrics.PRIMARY_CHOICES
                          if metrics.op_of(m))


def throughput(sel, warn):
    # the throughput most of the answer's cells are judged on
    # (throughput_run in the default campaign), raw throughput otherwise
    answers = _answers(sel, warn)
    got = [r["metric"] for r in answers
           if r["metric"] in (THROUGHPUT,) + THROUGHPUT_TWINS]
    metric = max(dict.fromkeys(got), key=got.count) if got else THROUGHPUT
    if metric not in metrics.PLAIN or not sel.medians([metric]):
        metric = THROUGHPUT
    rows = sel.medians([metric])
    # a vCPU count without it (throughput_run under icount, where the
    # host's steal does not reach the guest's clock): raw throughput
    # there, said on its tick
    have = {r["cpus"] for r in rows}
    rows += [r for r in sel.medians([THROUGHPUT])
             if r["cpus"] not in have and metric != THROUGHPUT]
    if not rows:
        raise Skip(f"medians.csv has no {THROUGHPUT} rows")
    rows.sort(key=sel.key("point", "variant", "cpus"))
    v, points, cpus = sel.common(rows)
    v["logpanels"] = log_panels(rows, lambda r: r["point"])
    v["metric"] = metric
    drawn = {r["cpus"]: r["metric"] for r in rows}
    v["metrics"] = " ".join(sorted(set(drawn.values())))
    if len(set(drawn.values())) > 1:
        v["cpustat"] = " ".join(
            f"{c}:{'run' if drawn[str(c)] == metrics.RUN_TWIN[THROUGHPUT] else 'ops/s'}"
            for c in cpus)
    data = [sel.write("throughput", rows, MED_COLS)]
    verdicts = verdict_rows(sel, lambda r: drawn.get(str(r["cpus"]), metric),
                            THROUGHPUTS, set(cpus), rows)
    if verdicts:
        v.update(verdict_labels(sel, verdicts, lambda r: r["point"]))
        data.append(sel.write("throughput-verdicts", verdicts, VERDICT_COLS))
    answered = any(r["metric"] == metric for r in answers)
    return Plot("throughput", wide(len(points), 450),
                "Throughput vs vCPUs" + ("" if answered or not answers
                                         else " (not the answer's metric)"),
                f"{metrics.PLAIN[metric][:1].upper()}{metrics.PLAIN[metric][1:]}, all benchmark "
                f"threads together, per workload point: the median "
                f"over boots (medians.csv {metric}"
                + (f", {THROUGHPUT} at the vCPU counts without it, marked "
                   "ops/s on the axis" if v.get("cpustat") else "")
                + "), bars: its 95% CI"
                + f"{log_note(v)}; beside each compared variant's point whose "
                f"answer is a throughput or an instruction count, the "
                f"answer's verdict (its metric named where it is not the "
                f"one drawn: {metrics.ICOUNT_EQUIV[THROUGHPUT]} under icount); a paced point's "
                f"answer is a latency (the latency figure). Higher is better.",
                v, data, [answer_entry(r) for r in verdicts])


def starvation(sel, warn):
    """The writers' answer drawn: write latency p99 (bars) and maximum
    (markers) per point that mixes reads and writes, a bar per variant,
    a panel per vCPU count above 1, the writers' verdict on p99 (role
    `writers`) above each compared variant's bar."""
    run = sel.run
    bar, mark = STARVATION
    rows = _writer_rows(sel)
    v, points, cpus = sel.common(rows)
    for i, pid in enumerate(points, 1):
        p = run.point(pid)
        # a tick label is a format: its % doubled
        v[f"plabel{i}"] = (f"{pid} ({p['read_pct']}%% reads)" if "read_pct" in p
                           else pid.replace("%", "%%"))
    # where the bars start: below every value drawn, per panel (a choice
    # of axis, as log_ticks)
    base = []
    for c in cpus:
        vals = _panel_values(rows, c, ("median", "ci_lo"))
        if vals:
            base += [str(c), plain(10 ** math.floor(math.log10(min(vals) / 1.5)))]
    v["ybase"] = " ".join(base)
    data = [sel.write("starvation", rows, MED_COLS)]
    labels, placed, highest = _writers_labels(sel, rows, points, cpus, warn)
    v.update(placed)
    v["nsl"] = len(labels)
    v["bar"], v["mark"] = bar, mark
    # where the axis ends: a decade above every value and verdict label
    # drawn, per panel (autoscale stops at the values, and a label above
    # the tallest marker landed in the key: t-campaign's layout check)
    ends = []
    for c in cpus:
        vals = _panel_values(rows, c, ("median", "ci_hi")) + (
            [highest[str(c)]] if str(c) in highest else [])
        if vals:
            ends += [str(c), plain(10 ** math.ceil(math.log10(max(vals) * 1.3)))]
    v["ytop"] = " ".join(ends)
    if labels:
        data.append(sel.write("starvation-verdicts", labels, VERDICT_COLS))
    return Plot("starvation", wide(len(cpus), 450),
                "Writers: can readers starve a writer?",
                "The write latency p99 (bars) and maximum (open markers) at "
                "each point that mixes reads and writes, a bar per kernel "
                "variant, one panel per vCPU count above 1 (one vCPU runs one "
                "benchmark thread, which nothing can starve): median over "
                f"boots (medians.csv {bar}, {mark}), "
                "bars: 95% CI, log scale. A reader-preferring rwlock (32-bit "
                "ARM's) lets readers keep a writer waiting: its bar stands "
                "above the spinlock's where reads dominate. Above each "
                "compared variant's bar, the writers' answer on p99 (its "
                "verdict and ratio, comparisons.csv role writers).",
                v, data, [answer_entry(r) for r in labels])


def _writer_rows(sel):
    """The medians the writers' figure draws (STARVATION), above 1 vCPU,
    at the points that mix reads and writes where any does, in the
    campaign's order; Skip where none is left."""
    bar, mark = STARVATION
    rows = sel.medians(STARVATION)
    for r in rows:
        to_int(r.get("read_pct"), "medians.csv read_pct")
    if not rows:
        raise Skip(f"medians.csv has no {bar}/{mark} rows")
    # one vCPU runs one benchmark thread: no reader can keep a writer waiting
    rows = [r for r in rows if int(r["cpus"]) > 1]
    if not rows:
        raise Skip(f"only 1-vCPU {bar}/{mark} rows "
                   "(one benchmark thread: nothing to starve)")
    # the points that mix reads and writes, in the campaign's order
    rows = [r for r in rows if 0 < int(r["read_pct"]) < 100] or rows
    rows.sort(key=sel.key("point", "variant", "metric", "cpus"))
    return rows


def _panel_values(rows, c, cols):
    """The positive values of COLS drawn in the panel of C vCPUs."""
    return [float(r[k]) for r in rows if r["cpus"] == str(c)
            for k in cols if r[k] not in ("", None) and float(r[k]) > 0]


def _writers_labels(sel, rows, points, cpus, warn):
    """The writers' verdicts on p99 (comparisons.csv role writers) of the
    bars drawn, each placed above its variant's bar: (the verdict rows,
    the figure's slI/stI values, the highest label per panel)."""
    run = sel.run
    top = {}
    for r in rows:
        if r["ci_hi"] not in ("", None):
            k = (r["variant"], r["cpus"], r["point"])
            top[k] = max(top.get(k, 0.0), float(r["ci_hi"]), float(r["median"]))
    try:
        comps = compared_rows(run, VERDICT_COLS + ["role"])
    except PlotsError as e:
        warn(f"no writers' labels: {e}")
        comps = []
    labels = [r for r in comps if r.get("role") == "writers"
              and r["metric"] == STARVATION[0] and sel.known(r)
              and r["point"] in points and r["cpus"] in {str(c) for c in cpus}
              and (r["variant"], r["cpus"], r["point"]) in top]
    nv = len(run.variants)
    placed = {}
    highest = {}  # per panel, the highest label
    for i, r in enumerate(labels, 1):
        k = sel.vorder[r["variant"]] + 1
        x = points.index(r["point"]) + 1 + (k - (nv + 1) / 2.0) * 0.7 / nv
        ratio = f" {float(r['ratio']):.3f}" if r["ratio"] not in ("", None) else ""
        y = top[(r["variant"], r["cpus"], r["point"])] * 1.6
        highest[r["cpus"]] = max(highest.get(r["cpus"], 0.0), y)
        placed[f"sl{i}"] = f"{r['cpus']} {x:.4f} {y:.6g} {k}"
        placed[f"st{i}"] = f"{r['verdict'].split(' (n')[0]}{ratio}"
    return labels, placed, highest


def fairness(sel, warn):
    run = sel.run
    cols = ("variant", "cpus", "rep", "cell", "point", "metric", "value")
    samples = [r for r in run.tidy("samples.csv", cols)
               if r["metric"] == FAIRNESS and sel.known(r) and r["value"] != ""]
    meds = sel.medians([FAIRNESS])
    if not samples or not meds:
        raise Skip(f"samples.csv/medians.csv have no {FAIRNESS} rows")
    samples.sort(key=sel.key("point", "variant", "cpus", "rep"))
    meds.sort(key=sel.key("point", "variant", "cpus"))
    v, points, cpus = sel.common(meds)
    drawn = {}
    for r in samples:
        drawn.setdefault(r["point"], []).append(r["value"])
    for r in meds:
        drawn.setdefault(r["point"], []).extend((r["median"], r["ci_lo"], r["ci_hi"]))
    v["logpanels"] = " ".join(p for p, vals in drawn.items() if spans_decade(vals))
    v["metric"] = FAIRNESS
    v["medfile"] = sel.write("fairness-medians", meds, MED_COLS)
    data = [sel.write("fairness", samples, list(cols) + ["unit"]), v["medfile"]]
    return Plot("fairness", wide(len(points), 450),
                "Fairness between benchmark threads",
                "Operations of the busiest thread divided by the idlest "
                f"thread's (samples.csv {FAIRNESS}; 1 = fair), per "
                "workload point: open markers one per boot, line the median "
                "over boots (medians.csv), bars: 95% CI. Dashed, at 2: "
                "starved, the idlest thread did under half the busiest's "
                "operations (locktorture's '???' mark: max/2 > min). Lower "
                "is better.",
                v, data)
