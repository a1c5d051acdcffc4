# SPDX-License-Identifier: GPL-2.0
"""The plots of medians over boots (medians.csv) with their 95% CIs:
latency and throughput against vCPUs (with the verdicts beside the
points), the writer's tail against the share of reads (starvation), and
the fairness between threads.
"""

from analysis import metrics
from plots.common import to_int
from plots.select import (MED_COLS, VERDICT_COLS, Plot, Skip, log_note,
                          log_panels, spans_decade, verdict_labels,
                          verdict_rows, wide)


def latency(sel, warn):
    run = sel.run
    stat = "median" if run.rd.primary_metric.endswith("_lat_median_ns") else "mean"
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
    # the campaign's answer where it is a throughput (throughput_run in
    # the default campaign), raw throughput otherwise
    metric = sel.run.rd.primary_metric
    if not metric.startswith("throughput_") or metric not in metrics.PLAIN \
            or not sel.medians([metric]):
        metric = "throughput_ops_s"
    rows = sel.medians([metric])
    if not rows:
        raise Skip("medians.csv has no throughput_ops_s rows")
    rows.sort(key=sel.key("point", "variant", "cpus"))
    v, points, cpus = sel.common(rows)
    v["logpanels"] = log_panels(rows, lambda r: r["point"])
    v["metric"] = metric
    data = [sel.write("throughput", rows, MED_COLS)]
    verdicts = verdict_rows(sel, [metric], set(cpus), warn)
    if verdicts:
        v.update(verdict_labels(sel, verdicts, lambda r: r["point"]))
        data.append(sel.write("throughput-verdicts", verdicts, VERDICT_COLS))
    return Plot("throughput", wide(len(points), 450),
                "Throughput vs vCPUs",
                f"{metrics.PLAIN[metric][:1].upper()}{metrics.PLAIN[metric][1:]}, all benchmark "
                f"threads together, per workload point: the median "
                f"over boots (medians.csv {metric}), bars: its 95% CI"
                f"{log_note(v)}; beside each compared variant's point, its "
                f"verdict on {metric}. Higher is better.",
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
                "over boots (medians.csv), bars: 95% CI. Dashed, at 2: "
                "starved, the idlest thread did under half the busiest's "
                "operations (locktorture's '???' mark: max/2 > min). Lower "
                "is better.",
                v, data)
