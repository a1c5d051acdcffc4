# SPDX-License-Identifier: GPL-2.0
"""The bottom line of a run in words (answer.txt, and the first
paragraphs of summary.md and commit-msg.txt): per compared pair and vCPU
count what the primary verdicts say, the regime the points load the lock
with, and the setup.  Generated from the comparisons table's primary
rows, never written by hand."""

from analysis import metrics, safety, stats, verdicts
from analysis.formatting import (looks_s, pct_s, ratio_s, row_point_label,
                                 verdict_s, vcpus_s)


def comparison_pairs(comps):
    """[(baseline, variant), ...] in the order of the comparisons table."""
    if not len(comps):
        return []
    return list(dict.fromkeys(zip(comps["baseline"], comps["variant"])))


def _ci(r):
    return ratio_s(r["ratio"], r["ratio_ci_lo"], r["ratio_ci_hi"])


def _label(v):
    return v.split(" (")[0] if v.startswith(("inconclusive (n≈",)) \
        else v


def _cpus_clause(cpus, block, over):
    """'1 vCPU: no harm at all 3 points (p1 0.990 [...]; ...)', or each
    point's verdict with its ratio."""
    head = f"{cpus} vCPU{'s' if cpus > 1 else ''}" + (
        " (oversubscribed)" if cpus in over else "")
    labels = [verdict_s(r) for _, r in block.iterrows()]
    fails = [f"{r['point']}: {int(r['failed_var'])} failed point(s) in "
             f"{r['variant']} ({int(r['starved_var'])} starved), "
             f"{int(r['failed_base'])} in {r['baseline']}"
             for _, r in block.iterrows()
             if r["failed_var"] or r["failed_base"]]
    if len(set(map(_label, labels))) == 1 and len(block) > 1:
        cis = [_ci(r) for _, r in block.iterrows()]
        text = (f"{head}: {_label(labels[0])} at all {len(block)} points "
                f"({'; '.join(f'{r.point} {c}' for (_, r), c in zip(block.iterrows(), cis))})")
    else:
        text = f"{head}: " + ", ".join(
            f"{v} at {r['point']} ({_ci(r)})"
            for (_, r), v in zip(block.iterrows(), labels))
    stolen = [r["point"] for _, r in block.iterrows()
              if "host steal above" in str(r["warnings"])]
    if stolen:
        fails.append(f"host steal above {metrics.STEAL_FLAG_PCT:g}% in some "
                     f"boots at {', '.join(stolen)}")
    if fails:
        text += " [" + "; ".join(fails) + "]"
    return text


def regime(labels, think):
    """What the points load the lock with: each point's parameters, and
    whether its threads loop on the lock or pause between operations."""
    tight = [p for p in labels if not think.get(p)]
    out = []
    for p, label in labels.items():
        t = think.get(p)
        out.append(label if not t else
                   f"{label}, a {t / 1000:g} us pause between operations")
    text = "; ".join(out)
    if tight:
        text += (f"; {'every' if len(tight) == len(labels) else 'at ' + ', '.join(tight) + ' every'}"
                 f" thread loops on the lock with no pause (a tight loop)")
    return text


def metric_words(metric):
    """A metric's name and the separator before the ratio, with what it
    is in words where the name does not say it (metrics.PLAIN)."""
    plain = metrics.PLAIN.get(metric)
    return f"{metric} = {plain}; " if plain and metric != "throughput_ops_s" \
        else f"{metric}, "


def answer_text(comps, f, th, primary):
    """The bottom line, generated from the primary rows: per compared pair,
    per vCPU count, what the verdicts say, the regime (the points), and the
    setup. One paragraph per pair, ready to paste."""
    prim = comps[comps["role"] == "primary"] if len(comps) else comps
    paras = []
    # Unsafe first, whether or not the unsafe side has any samples (a
    # kernel that deadlocked in every boot has none).
    rowpairs = comparison_pairs(prim) if len(prim) else []
    for b, v in dict.fromkeys(list(f["pairs"]) + rowpairs):
        bad = [x for x in (v, b) if x in f["unsafe"]]
        if bad:
            rep = f["unsafe"][bad[0]]
            paras.append(
                f"Answer for {v} against {b}: {safety.UNSAFE}. {bad[0]} "
                f"had a lockdep report (\"{rep['line'][:120]}\") in "
                f"{rep['boots']} boot{'s' if rep['boots'] > 1 else ''}, "
                f"first in {rep['cell']}: that kernel can deadlock, so no "
                f"performance verdict is given.")
    control_only = False
    if prim.empty and not paras and len(comps):
        # A campaign of the baseline and its A/A control alone (a
        # calibration run): the control's primary rows are its answer.
        prim = comps[(comps["role"] == "control")
                     & (comps["metric"] == primary)]
        control_only = not prim.empty
    if prim.empty:
        return paras or [f"No answer: no comparison of the primary metric "
                         f"{primary} has samples on both sides."]
    over = set(f["over_cpus"])
    for (b, v), rows in prim.groupby(["baseline", "variant"], sort=False):
        if b in f["unsafe"] or v in f["unsafe"]:
            continue
        ns = sorted(set(rows["n_base"]) | set(rows["n_var"]))
        n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
        clauses = [_cpus_clause(int(c), blk, over) for c, blk in
                   rows.groupby("cpus", sort=True)]
        pts = {r["point"]: row_point_label(r) for _, r in rows.iterrows()}
        cal = rows[rows["calibration"].fillna("") != ""]
        if len(cal):
            claims = {f"A/A {v}" for v in (stats.BETTER, stats.WORSE,
                                           stats.HARM, verdicts.CONFLICT)}
            bad = int(cal["calibration"].isin(claims).sum())
            nh = int((cal["calibration"] == "A/A no harm").sum())
            clauses.append(f"the A/A control ({b} booted twice) is no harm "
                           f"in {nh} of {len(cal)} cells and claims a "
                           f"difference in {bad}"
                           + (" (uncalibrated there)" if bad else ""))
        head = (f"A/A calibration only, {v} ({b} booted a second time) "
                f"against {b}" if control_only else f"Answer for {v} against {b}")
        paras.append(
            f"{head} ({metric_words(primary)}ratio "
            f"{v}/{b} [{pct_s(th.confidence)}% CI], margin "
            f"{100 * th.margin:g}%): " + "; ".join(clauses) + ". "
            f"Regime: {regime(pts, f['think_ns'])}. Setup: QEMU "
            f"{f['accel']}, {vcpus_s(f['cpus'])} on "
            f"{f['cores']} host cores, n = {n} boots a side, interleaved"
            + (f"; {looks_s(f, th.confidence)}" if looks_s(f, th.confidence)
               else "") + ".")
    return paras
