# SPDX-License-Identifier: GPL-2.0
"""Presentation: the comparisons table -> summary.md text and the
commit-message block. Pure functions of data frames and the manifest; no
statistics here (analysis.stats), no file access (analysis.report)."""

import math
import textwrap

from analysis import metrics, run_setup, safety, stats, verdicts
from analysis.rundir import point_label

WIDTH = 72  # commit message columns


def pct_s(confidence):
    """95 for 0.95, 98.33 for a campaign's per-look 1 - 0.05/3."""
    return f"{100 * confidence:.4g}"


def looks_s(f, confidence):
    """How a campaign that may stop early stopped, or ''."""
    looks, at = f["looks"], f["stopped_at"]
    if len(looks) < 2:
        return ""
    return (f"repetitions up to {looks[-1]} with looks at "
            f"{', '.join(map(str, looks))}, each at {pct_s(confidence)}% "
            f"(Bonferroni over the looks); "
            + (f"stopped at {at}: every primary cell decided" if at else
               "no early stop"))


def vcpus_s(cpus):
    """'1 vCPU', '1/2 vCPUs'."""
    text = "/".join(map(str, cpus))
    return f"{text} vCPU{'' if text == '1' else 's'}"


def si(x):
    """3-4 significant digits with an SI suffix: 99.71k, 1.234M, 305.2."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if math.isinf(x):
        return "inf"
    ax = abs(x)
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if ax >= div:
            return f"{x / div:.4g}{suf}"
    return f"{x:.4g}"


def pm(med, lo, hi):
    """benchstat's "median ± x%": the larger distance to a CI bound."""
    if any(isinstance(v, float) and math.isnan(v) for v in (med, lo, hi)):
        return si(med)
    if med == 0:
        return f"{si(med)} [{si(lo)}, {si(hi)}]"
    pct = 100 * max(hi - med, med - lo) / abs(med)
    pct_s = f"{pct:.1f}" if pct < 10 else f"{pct:.0f}"
    return f"{si(med)} ± {pct_s}%"


def ratio_s(r, lo, hi):
    if isinstance(r, float) and math.isnan(r):
        return "-"
    return f"{r:.3f} [{lo:.3f}, {hi:.3f}]"


def row_ratio(row):
    return ratio_s(row["ratio"], row["ratio_ci_lo"], row["ratio_ci_hi"])


def p_s(p):
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    return f"{p:.3f}" if p >= 0.001 else "<0.001"


def delta_s(row):
    if not row["significant"] or (isinstance(row["ratio"], float)
                                  and math.isnan(row["ratio"])):
        return "~"
    return f"{100 * (row['ratio'] - 1):+.1f}%"


def verdict_s(row):
    """The verdict label as the comparisons table carries it (one string,
    the same in every output); "n/a" for a metric without a direction."""
    v = row["verdict"]
    return "n/a" if _nan(v) or not v else str(v)


def row_point_label(row):
    """rundir.point_label() of a table row (point, read_pct, mailboxes,
    miss_pct columns)."""
    return point_label(row["point"], row.get("read_pct"),
                       row.get("mailboxes"), row.get("miss_pct"))


def split_warnings(text):
    """The "; "-separated warnings column as a list (NaN/None: none)."""
    if _nan(text) or not text:
        return []
    return [w for w in str(text).split("; ") if w]


def _nan(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def metric_order(names, primary):
    known = [m for m in metrics.METRICS if m in names]
    rest = sorted(m for m in names if m not in metrics.METRICS)
    order = known + rest
    if primary in order:
        order.remove(primary)
        order.insert(0, primary)
    return order


def pinned_s(rundir):
    """How the done cells' vCPU threads sat on the host's cores (campaign
    pin = true: the manifest names each cell's cores, one per vCPU)."""
    done = [c for c in rundir.manifest.get("cells", []) if c.get("state") == "done"]
    pinned = sum(len(c.get("pin") or ()) >= c.get("cpus", 1) for c in done)
    if not done or not pinned:
        return "vCPU threads not pinned"
    return ("vCPU threads pinned, one per host core" if pinned == len(done) else
            f"vCPU threads pinned, one per host core, in {pinned} of {len(done)} cells")


def setup_facts(rundir, cells, samples, baseline, primary, unsafe):
    """Facts for the headers: a dict of short strings; unsafe: the run's
    safety.lockdep_reports(). The setup itself is run_setup.setup_facts(),
    the plots' footer's too; this adds the counts of samples and cells."""
    done = cells[cells["analyzed"] == 1] if len(cells) else cells
    over = done[done["oversubscribed"] == 1] if len(done) else done
    setup = run_setup.setup_facts(rundir, list(zip(
        done["variant"], (int(c) for c in done["cpus"]),
        done["oversubscribed"] == 1)) if len(done) else [])
    prim = samples[samples["metric"] == primary]
    if prim.empty:
        prim = samples
    ns = prim.groupby(["variant", "cpus", "point"])["value"].count()
    nmin, nmax = (int(ns.min()), int(ns.max())) if len(ns) else (0, 0)
    kernels = sorted({k for k in setup["kernels"].values() if k})
    archs, qg = setup["archs"], setup["guests"]
    return {
        "accel": setup["accel"],
        "cores": setup["cores"],
        "cpu_model": setup["cpu_model"],
        "qemu": setup["qemu"],
        "cpus": setup["cpus"],
        "n": f"{nmin}" if nmin == nmax else f"{nmin}-{nmax}",
        "kernels": ", ".join(kernels) or "unknown",
        "arch": ", ".join(archs) or "unknown",
        # what booted each arch ("qemu-system-aarch64 -M virt, cortex-a57")
        "guests": "; ".join(f"{a} guests: {qg[a]}" if a in qg else f"{a} guests"
                            for a in archs) or "unknown guests",
        "over_cpus": setup["over_cpus"],
        "over_cells": len(over),
        "not_done": int(((cells["analyzed"] == 0)
                         & (cells["state"] != "unneeded")).sum())
        if len(cells) else 0,
        "unneeded": int((cells["state"] == "unneeded").sum())
        if len(cells) else 0,
        "looks": list(rundir.looks),
        "pinned": pinned_s(rundir),
        "stopped_at": rundir.stopped.get("stopped_at"),
        "think_ns": {p.id: p.think_ns for p in rundir.points},
        "done": len(done),
        "unsafe": unsafe,
        "pairs": list(rundir.comparisons),
    }


def comparison_pairs(comps):
    """[(baseline, variant), ...] in the order of the comparisons table."""
    if not len(comps):
        return []
    return list(dict.fromkeys(zip(comps["baseline"], comps["variant"])))


def pairs_title(pairs, baseline):
    """"after, rcu vs before", or "after vs before, rcu vs after"."""
    if not pairs:
        return f"- vs {baseline}"
    bases = list(dict.fromkeys(b for b, _ in pairs))
    if len(bases) == 1:
        return f"{', '.join(v for _, v in pairs)} vs {bases[0]}"
    return ", ".join(f"{v} vs {b}" for b, v in pairs)


def _times(x):
    return "-" if _nan(x) else f"×{x:.2f}"


def render_observer(obs, metric, pct):
    """The observer-effect section: a comparison measured with and without
    lock statistics, side by side (rows of observer.observer_table)."""
    out = []
    for (b1, v1, b2, v2), block in obs.groupby(
            ["baseline", "variant", "baseline_plain", "variant_plain"],
            sort=False):
        out += [f"## Observer effect: {v1}/{b1} with LOCK_STAT vs "
                f"{v2}/{b2} without ({metric})", ""]
        out.append(f"{v1} and {b1} are built with lock statistics and "
                   f"lockdep; {v2} and {b2} apply the same patches without "
                   f"them (no LOCK_STAT, LOCKDEP, PROVE_LOCKING, "
                   f"DEBUG_SPINLOCK). Ratio of ratios = ({v2}/{b2}) / "
                   f"({v1}/{b1}) with a bootstrap {pct}% CI: 1 means "
                   f"lockdep leaves the comparison as it is. LOCK_STAT cost "
                   f"= median with / median without, for {b1} and {v1}.")
        out += ["",
                f"| vCPUs | point | {v1}/{b1} with LOCK_STAT | verdict | "
                f"{v2}/{b2} without | verdict | ratio of ratios "
                f"[{pct}% CI] | LOCK_STAT cost {b1}, {v1} |",
                "|---:|---|---|---|---|---|---|---|"]
        for _, r in block.iterrows():
            out.append(
                f"| {int(r['cpus'])} | {row_point_label(r)} | "
                f"{ratio_s(r['ratio'], r['ratio_ci_lo'], r['ratio_ci_hi'])}"
                f" | {r['verdict'] or 'n/a'} | "
                f"{ratio_s(r['ratio_plain'], r['ratio_plain_ci_lo'], r['ratio_plain_ci_hi'])}"
                f" | {r['verdict_plain'] or 'n/a'} | "
                f"{ratio_s(r['ratio_of_ratios'], r['rr_ci_lo'], r['rr_ci_hi'])}"
                f" | {_times(r['lockstat_cost_base'])}, "
                f"{_times(r['lockstat_cost_var'])} |")
        out.append("")
        n = len(block)
        differ = block[block["same_verdict"] == 0]
        shifted = block[(block["rr_ci_lo"] > 1) | (block["rr_ci_hi"] < 1)]
        rr = block["ratio_of_ratios"].dropna()
        text = (f"**How far lockdep changes the conclusion:** the verdict "
                f"differs in {len(differ)} of {n} cell(s)")
        if len(differ):
            text += " (" + "; ".join(
                f"{int(r['cpus'])} vCPUs {r['point']}: {r['verdict'] or 'n/a'}"
                f" with, {r['verdict_plain'] or 'n/a'} without"
                for _, r in differ.iterrows()) + ")"
        text += "; the ratio of ratios is "
        text += (f"{rr.min():.3f}" if rr.min() == rr.max()
                 else f"{rr.min():.3f} to {rr.max():.3f}") if len(rr) else "-"
        text += (f", and its {pct}% CI excludes 1 in {len(shifted)} of {n}"
                 f" cell(s)")
        text += (": lock statistics change the ratio itself, not only the "
                 "absolute numbers." if len(shifted) else
                 ": no change of the ratio is measurable at this n (which "
                 "is not the same as no change: see the CI's width).")
        out += [text, ""]
    return out


def render_markdown(rundir, comps, f, problems, baseline, thresholds,
                    primary, notes=(), observer=None):
    """summary.md; f: setup_facts()."""
    pairs = comparison_pairs(comps) or f["pairs"]
    out = [f"# {rundir.name}: {pairs_title(pairs, baseline)}", ""]
    for para in answer_text(comps, f, thresholds, primary):
        out += [f"**{para}**", ""]
    for v, rep in f["unsafe"].items():
        out += [f"Lockdep's report in boot {rep['cell']} of {v} "
                f"({rep['boots']} of its boots had one; the whole console: "
                f"{rep['log']}):", "", "```"]
        out += rep["splat"] or [rep["line"]]
        out += ["```", ""]
    vcpus = "/".join(str(c) for c in f["cpus"])
    out.append(f"- **QEMU {f['accel']} emulation** ({f['guests']}): "
               f"{vcpus} vCPU{'' if vcpus == '1' else 's'} on {f['cores']} host cores "
               f"({f['cpu_model']}; {f['pinned']}), QEMU {f['qemu']}; kernel "
               f"{f['kernels']}.")
    out.append(f"- n = {f['n']} boots per variant, vCPU count and point "
               f"({f['done']} done cells"
               + (f", {f['not_done']} not done and skipped" if f["not_done"]
                  else "")
               + (f", {f['unneeded']} unneeded after the early stop"
                  if f["unneeded"] else "") + ").")
    out.append("- **Absolute times are emulation times; the ratio is the "
               "result.**")
    if f["over_cells"]:
        out.append(f"- Oversubscribed (more vCPUs than host cores, marked "
                   f"`*`): {f['over_cells']} cells with "
                   f"{'/'.join(map(str, f['over_cpus']))} vCPUs; lock-holder "
                   f"preemption dominates there.")
    else:
        out.append("- No cell is oversubscribed (vCPUs <= host cores).")
    pct = pct_s(thresholds.confidence)
    out += [f"- {line}" for line in legend(thresholds, primary, comps)]
    xc = problems[problems["file"] == "crosscheck"] if len(problems) else \
        problems
    if len(xc):
        out.append(f"- **Cross-check: {len(xc)} cell x point(s) where the "
                   f"module's lock operations and lock_stat's acquisitions "
                   f"disagree by more than 1%** (tidy/problems.csv).")
    for text in notes:
        out.append(f"- Kernel note: {text}.")
    out.append("")
    if observer is not None and len(observer):
        out += render_observer(observer, primary, pct)
    notes = {}

    def note(text):
        if text not in notes:
            notes[text] = len(notes) + 1
        return f"[{notes[text]}]"

    over = set(f["over_cpus"])
    for metric in metric_order(set(comps["metric"]) if len(comps) else set(),
                               primary):
        unit = metrics.unit(metric)
        direction = metrics.direction(metric)
        dtext = {"higher": "higher is better",
                 "lower": "lower is better"}.get(direction, "no verdict")
        for baseline, variant in pairs:
            block = comps[(comps["metric"] == metric)
                          & (comps["baseline"] == baseline)
                          & (comps["variant"] == variant)]
            if block.empty:
                continue
            title = f"## {metric} ({unit}, {dtext})"
            if len(pairs) > 1:
                title += f": {variant} vs {baseline}"
            ref = metric in verdicts.REF_TWIN.values()
            failed = bool((block["failed_base"] + block["failed_var"]).any())
            cal = bool((block["calibration"].fillna("") != "").any())
            # the paired ratio beside the primary metric's verdict
            pair = metric == primary and bool(
                (block["n_pairs"].fillna(0) >= thresholds.min_n).any())
            extra = ((" failed (starved) |" if failed else "")
                     + (" probe ratio |" if ref else "")
                     + (f" paired [{pct}% CI] |" if pair else "")
                     + (" A/A |" if cal else ""))
            out += [title, "",
                    f"| vCPUs | point | {baseline} | {variant} | "
                    f"{variant}/{baseline} [{pct}% CI] | Δ | p |{extra} "
                    f"verdict |",
                    "|---:|---|---:|---:|---|---:|---:|"
                    + "---|" * (failed + ref + pair + cal) + "---|"]
            for _, row in block.iterrows():
                cols = ""
                if failed:
                    cols += (f" {int(row['failed_base'])} "
                             f"({int(row['starved_base'])}), "
                             f"{int(row['failed_var'])} "
                             f"({int(row['starved_var'])}) |")
                if ref:
                    cols += (f" {ratio_s(row['probe_ratio'], row['probe_ci_lo'], row['probe_ci_hi'])} |")
                if pair:
                    cols += (f" {ratio_s(row['paired_ratio'], row['paired_ci_lo'], row['paired_ci_hi'])}"
                             f" (n={int(row['n_pairs'])}) |")
                if cal:
                    c = row["calibration"]
                    cols += f" {'-' if _nan(c) or not c else c} |"
                cpus = f"{int(row['cpus'])}" + ("*" if int(row["cpus"]) in
                                                 over else "")
                marks = "".join(note(w) for w in
                                split_warnings(row["warnings"]))
                base = pm(row["median_base"], row["ci_lo_base"],
                          row["ci_hi_base"])
                var = pm(row["median_var"], row["ci_lo_var"],
                         row["ci_hi_var"])
                out.append(
                    f"| {cpus} | {row_point_label(row)} | {base} | {var} | "
                    f"{row_ratio(row)} | {delta_s(row)} | "
                    f"{p_s(row['p_value'])} |{cols} "
                    f"{verdict_s(row)}{(' ' + marks) if marks else ''} |")
            out.append("")
    if notes:
        out.append("Notes:")
        out.append("")
        for text, i in notes.items():
            out.append(f"{i}. {text}")
        out.append("")
    return "\n".join(out)


def legend(th, primary, comps):
    """What the numbers and the labels mean: lines of summary.md, also
    shown by report.html."""
    pct = pct_s(th.confidence)
    m = f"{100 * th.margin:g}%"
    k = int((comps["role"] == "exploratory").sum()) if len(comps) else 0
    return [
        f"Medians with {pct}% CIs from order statistics (`±`: the farther "
        f"bound). Ratio = exp(Hodges-Lehmann shift of log values), variant "
        f"over baseline, with its Mann-Whitney (Moses) {pct}% CI; p: the "
        f"same test, two-sided; Δ `~` when p >= {th.alpha}.",
        f"Verdicts at a {m} margin: `better` (CI on the good side of 1), "
        f"`no harm` (the CI's harmful bound within {m}), `worse` (CI on the "
        f"harmful side of 1, reaching into the margin), `harm` (the whole "
        f"CI beyond {m}), `inconclusive (n<{th.min_n})` (too few boots for "
        f"any verdict), `inconclusive (n≈N)` (about N boots a side would "
        f"decide), `inconclusive (failed B vs V)` (the sides lost different "
        f"numbers of points to failures), `withheld (probe)` (a `_ref` "
        f"verdict whose host-speed probe moved by more than "
        f"{100 * th.probe_tolerance:g}% between the kernels), "
        f"`withheld (steal)` (a favourable `throughput_run` verdict where "
        f"the variant's own QEMU threads ran more than "
        f"{verdicts.OWN_TOLERANCE_PCT:g} point of a core more than the "
        f"baseline's, or were not measured), `conflict` "
        f"(the raw metric and its `_ref` or `_run` twin point opposite "
        f"ways), "
        f"`uncalibrated` (the campaign's A/A control, its baseline booted "
        f"twice, claims a difference at that vCPU count and point: the "
        f"host alone makes differences there), `unsafe` (lockdep reported "
        "a locking bug in a boot of either side: no number is judged).",
        "`paired`: the same ratio from the boots matched by repetition "
        "(Hodges-Lehmann of the pairs' log ratios, signed-rank CI): "
        "narrower where the two boots of a pair shared a slow host, wider "
        "where the host was steady; shown beside the verdict, never "
        "instead of it (choosing the narrower CI afterwards would be "
        "choosing the answer).",
        f"The answer is `{primary}`, named before the run; the other {k} "
        f"verdicts are exploratory, Holm-corrected across the table (CIs at "
        f"their Holm levels, `inconclusive (Holm)` past the step-down's "
        f"stop)."]


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


def render_commit_msg(comps, f, thresholds, primary, campaign_file,
                      run_dir):
    """The block for a commit message: lines of at most 72 columns, the
    answer first; f: setup_facts()."""
    w = textwrap.TextWrapper(width=WIDTH, break_on_hyphens=False)
    out = []
    for para in answer_text(comps, f, thresholds, primary):
        out += w.wrap(para) + [""]
    out += w.wrap(f"Measured with the mbox_bench module in QEMU "
                  f"{f['accel']} emulation ({f['guests']}; "
                  f"{vcpus_s(f['cpus'])} on {f['cores']} "
                  f"host cores), Linux {f['kernels']}. Absolute times are "
                  f"emulation times; the ratio is the result.")
    pct = pct_s(thresholds.confidence)
    shown = [primary]
    # the primary metric's twin beside it: raw throughput beside the one
    # with the host's steal divided out, the _ref one beside the raw
    raw = {t: r for r, t in verdicts.RUN_TWIN.items()}
    twin = verdicts.REF_TWIN.get(primary) or raw.get(primary)
    if twin and len(comps) and (comps["metric"] == twin).any():
        shown.append(twin)
    for metric in shown:
        out += _commit_msg_metric(w, comps, metric, thresholds, pct)
    out += ["", "Reproduce:", f"  ./run.sh campaign {campaign_file}",
            f"  ./run.sh report {run_dir}"]
    return "\n".join(out) + "\n"


def _commit_msg_metric(w, comps, metric, thresholds, pct):
    out = []
    rows = comps[comps["metric"] == metric] if len(comps) else comps
    ref = metric in verdicts.REF_TWIN.values()
    for baseline, variant in comparison_pairs(rows):
        out.append("")
        what = (" (divided by the host speed the module measured during "
                "each run; probe = the probe's own ratio)" if ref else
                f" ({metrics.PLAIN[metric]})"
                if metric in verdicts.RUN_TWIN.values() else "")
        out += w.wrap(f"{metric}{what}, {variant}/{baseline}: ratio "
                      f"[{pct}% CI], p, verdict at a "
                      f"{100 * thresholds.margin:g}% margin:")
        out.append("")
        mine = rows[(rows["variant"] == variant)
                    & (rows["baseline"] == baseline)]
        for _, row in mine.iterrows():
            probe = (f", probe {ratio_s(row['probe_ratio'], row['probe_ci_lo'], row['probe_ci_hi'])}"
                     if ref else "")
            line = (f"  {int(row['cpus'])} vCPUs, {row['point']}: "
                    f"{row_ratio(row)}, p={p_s(row['p_value'])}{probe}, "
                    f"{verdict_s(row)}")
            out += textwrap.wrap(line, WIDTH, subsequent_indent="      ",
                                 break_on_hyphens=False)
        notes = dict.fromkeys(
            w for ws in mine["warnings"] for w in split_warnings(ws))
        for note in notes:
            out += w.wrap(f"Warning: {note}.")
    return out
