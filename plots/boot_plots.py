# SPDX-License-Identifier: GPL-2.0
"""The plots that draw each boot: throughput against host steal
(samples.csv), the lock's rows of /proc/lock_stat (lockstat.csv), and the
latency distributions of the most contended point (hist.csv).
"""

from analysis import metrics
from analysis.metrics import HOST_STEAL, LOCK_STAT, RESULTS, STEAL_FLAG_PCT
from plots.common import PlotsError, to_int
from plots.select import (MED_COLS, NotApplicable, Plot, Skip, cpus_text,
                          log_ticks, plain, spans_decade)


STEAL_KEY = ["variant", "cpus", "rep", "cell", "point", "read_pct", "mailboxes"]
#: the steal of the mean and of the worst vCPU thread, and throughput
STEAL_MEAN, STEAL_MAX, THROUGHPUT = (
    metrics.find(HOST_STEAL, "mean", "steal_pct"),
    metrics.find(HOST_STEAL, "max", "steal_pct"),
    metrics.find(RESULTS, "total", "ops_per_sec"))
STEAL_METRICS = [STEAL_MEAN, STEAL_MAX, THROUGHPUT]


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
            if b.get(STEAL_MAX, "") != "" and b.get(THROUGHPUT, "") != ""]
    if not rows:
        # as analyze has it: a run from before host-steal.txt (or a guest
        # without the point markers) is not a problem
        raise NotApplicable(f"samples.csv has no {STEAL_MAX} beside {THROUGHPUT} "
                            "(runs from before host-steal.txt, guest/JOB.md)")
    for r in rows:
        r["cpus"] = str(to_int(r["cpus"], "samples.csv cpus"))
        try:
            float(r[STEAL_MAX]), float(r[THROUGHPUT])
        except ValueError:
            raise PlotsError(f"samples.csv: boot {r['cell']} point {r['point']}: "
                             f"{STEAL_MAX} or {THROUGHPUT} is not a number") from None
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
             flag=f"{STEAL_FLAG_PCT:g}", xmetric=STEAL_MAX, ymetric=THROUGHPUT,
             xmax=f"{max([100.0] + [float(r[STEAL_MAX]) for r in rows]):g}")
    for i, (p, c) in enumerate(panels, 1):
        v[f"ptitle{i}"] = f"{v[f'pshort{points.index(p) + 1}']}, {cpus_text(c, over)}"
        vals = [float(r[THROUGHPUT]) for r in rows
                if (r["point"], int(r["cpus"])) == (p, c)
                and float(r[THROUGHPUT]) > 0]
        if vals:
            lo, hi, ticks = log_ticks(vals)
            v[f"yr{i}"] = f"{plain(lo)} {plain(hi)}"
            v[f"yt{i}"] = " ".join(plain(t) for t in ticks)
    return Plot("steal", (max(1000, 300 * ncols + 100), 130 + 270 * nrows),
                "Host steal vs throughput",
                "Each boot's throughput at each workload point and vCPU count "
                f"(samples.csv {THROUGHPUT}, log scale) against the share "
                "of that point's run during which the worst of QEMU's vCPU "
                "threads waited on a host run queue (samples.csv "
                f"{STEAL_MAX}, measured from the host); dashed: the "
                f"{STEAL_FLAG_PCT:g}% above which analyze flags a point. "
                "Look at the low markers: right of the line, the host "
                "took the vCPUs' time (lock-waiter preemption), left of it "
                "the collapse is the guest's own.",
                v, [sel.write("steal", rows, STEAL_KEY + STEAL_METRICS)])


LOCK_COLS = ["variant", "cpus", "rep", "cell", "point", "class", "kind",
             "contentions", "waittime_avg_us", "waittime_max_us",
             "holdtime_avg_us", "acquisitions"]
#: the medians drawn beside lock_stat's rows: the lock class's
#: contentions, its mean and worst wait, its mean hold
CONTENTIONS = metrics.find(LOCK_STAT, "sum", "contentions")
LOCK_MEDS = [CONTENTIONS, metrics.find(LOCK_STAT, "mean", "waittime_total_us"),
             metrics.find(LOCK_STAT, "max", "waittime_max_us"),
             metrics.find(LOCK_STAT, "mean", "holdtime_total_us")]


def lockstat(sel, warn):
    run = sel.run
    cls = run.rd.lock_class
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
        for r in sel.medians([CONTENTIONS]):
            if (r["variant"] == run.rd.baseline and int(r["cpus"]) == cpus
                    and r["point"] in have):
                cont[r["point"]] = float(r["median"])
    if cont:
        pid = max(cont, key=lambda p: (cont[p], -sel.porder[p]))
        why = (f"the most vCPUs, and the point with the most {run.rd.lock_class} "
               f"contentions there ({run.rd.baseline}: median {cont[pid]:g})")
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
    boots = []  # (boot id: hist.csv's column cell, variant index)
    for r in kept:
        if r["cell"] not in [b for b, _ in boots]:
            boots.append((r["cell"], sel.vorder[r["variant"]] + 1))
    ops = [op for op in ("lookup", "write") if any(r["op"] == op for r in kept)]
    what = f"{run.point_label(pid)}, {cpus} vCPUs"
    if cpus in run.oversubscribed():
        what += " (oversubscribed)"
    v = {"variants": " ".join(run.variants),
         "boots": " ".join(b for b, _ in boots),
         "bootvar": " ".join(str(k) for _, k in boots),
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
