# SPDX-License-Identifier: GPL-2.0
"""Presentation: the comparisons table -> summary.md text (the setup
facts of its header, the observer-effect section, one table per metric,
the legend). Pure functions of data frames and the manifest; no
statistics here (analysis.estimate.stats), no file access (analysis.report). The
answer paragraphs are analysis.render.answer, the commit-message block
analysis.render.commit_msg, the number formats analysis.render.formatting."""

from analysis.verdict import guards
from analysis import metrics
from analysis.estimate import position
from analysis.render import position_section
from analysis.render.answer import answer_text, clock_sentence, parse_cell_line
from analysis.render.formatting import (delta_s, median_ci_s, missing,
                                        number_s, p_value_s, pct_s, ratio_s,
                                        row_point_label, row_ratio,
                                        split_warnings, verdict_s)
from lockbench.defaults import ICOUNT


def pinned_s(rundir):
    """How the done boots' vCPU threads sat on the host's cores (campaign
    pin = true: the manifest names each boot's cores, one per vCPU)."""
    # manifest "cells": the boots (the format's name)
    done = [b for b in rundir.manifest.get("cells", []) if b.get("state") == "done"]
    pinned = sum(len(b.get("pin") or ()) >= b.get("cpus", 1) for b in done)
    if not done or not pinned:
        return "vCPU threads not pinned"
    return ("vCPU threads pinned, one per host core" if pinned == len(done) else
            f"vCPU threads pinned, one per host core, in {pinned} of {len(done)} boots")


def boots_range(samples, primary):
    """(fewest, most) boots per variant, vCPU count and point: the
    primary metric's samples where it has them; elsewhere (a regime
    whose primary is another metric: insn_per_op under icount,
    throughput_run on the wall clock) the boots with any sample there.
    (0, 0) without samples."""
    if not len(samples):
        return 0, 0
    keys = ["variant", "cpus", "point"]
    ns = samples.groupby(keys)["cell"].nunique()  # column cell: the boot
    ns.update(samples[samples["metric"] == primary].groupby(keys)["value"].count())
    return int(ns.min()), int(ns.max())


def contexts_s(campaign):
    """The contexts the campaign's points took its lock in, in one
    sentence, for a target whose lock the kernel also takes in interrupt
    context (its "interrupt" key, the campaign's lock_interrupt): which
    points reached it (a writer: fs_writer.ko from a hard interrupt and a
    softirq) and, where none did, that lockdep has not seen that use.
    "" for any other target."""
    where = campaign.get("lock_interrupt")
    if not where:
        return ""
    lock = campaign.get("lock_class", "the lock")
    irq = [str(p.get("id")) for p in campaign.get("points", [])
           if p.get("writer_hz")]
    if irq:
        return (f"Contexts: process (every point), hard interrupt and softirq "
                f"(at {', '.join(irq)}: {where}).")
    return (f"Contexts: process only. The kernel also takes {lock} in interrupt "
            f"context ({where}), which no point drove: lockdep has not seen that "
            f"use, so no verdict here says the conversion is safe there.")


def look_open(stopped):
    """[(reps, {(cpus, point) still open})] of the looks the manifest
    recorded with their open cells (scripts/campaign/run.py narrow), in
    order; [] for a campaign without them."""
    return sorted(((x["reps"], {(int(c), str(p)) for c, p in x["open"]})
                   for x in stopped.get("looks") or []
                   if isinstance(x, dict) and isinstance(x.get("reps"), int)
                   and isinstance(x.get("open"), list)), key=lambda x: x[0])


def header_facts(rundir, setup, boots, samples, baseline, primary, unsafe,
                 tally=None, overrides=None, twins=()):
    """Facts for the headers: a dict of short strings; setup:
    run_setup.setup_facts() of the analysed boots (the plots' footer's
    too), to which this adds the counts of samples and boots; boots:
    tidy/cells.csv (one row per boot) as a data frame; unsafe: the run's
    lockdep.lockdep_reports(); twins: rundir.observer_pairs()."""
    nmin, nmax = boots_range(samples, primary)
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
        # {variant: its kernel_version}: a run of several versions names
        # each pair's (analysis/render/answer.py)
        "kernel_of": setup["kernels"],
        "preempt_of": setup["preempt"],
        "commits": setup["commits"],
        "arch": ", ".join(archs) or "unknown",
        # what booted each arch ("qemu-system-aarch64 -M virt, cortex-a57")
        "guests": "; ".join(f"{a} guests: {qg[a]}" if a in qg else f"{a} guests"
                            for a in archs) or "unknown guests",
        "over_cpus": setup["over_cpus"],
        # {cpus: {kind of machine: {variant: boots}}} (--hosts): more than
        # one kind at a vCPU count is said in the answer
        "host_kinds": setup["host_kinds"],
        "over_boots": setup["over_boots"],
        "not_done": int(((boots["analyzed"] == 0)
                         & (boots["state"] != "unneeded")).sum())
        if len(boots) else 0,
        "unneeded": int((boots["state"] == "unneeded").sum())
        if len(boots) else 0,
        "looks": list(rundir.looks),
        "pinned": pinned_s(rundir),
        "stopped_at": rundir.stopped.get("stopped_at"),
        "stopped_by": rundir.stopped.get("stopped_by"),
        "look_open": look_open(rundir.stopped),
        "think_ns": {p.id: p.think_ns for p in rundir.points},
        # What drove the lock: the module, or lockload (its workloads).
        "driver": setup["driver"],
        # the contexts it was taken in, where the kernel takes it in more
        "contexts": contexts_s(rundir.campaign),
        "done": sum(setup["boots"].values()),
        "unsafe": unsafe,
        "pairs": list(rundir.comparisons),
        # {(base, var): (base_plain, var_plain)}: a compared pair's twin
        # without lockdep and lock_stat (rundir.observer_pairs: the same
        # patches), the production kernels' answer beside it
        "twins": {a: b for a, b in twins},
        "clock": {c: rundir.clock(c) for c in setup["cpus"]},
        "tally": tally or {},
        "overrides": overrides or {},
        "primary_default": rundir.primary_default,
        # {variant: (lockdep, lock_stat)}: what its kernel was built with
        # (build-meta.json; every lock_stat kernel has PROVE_LOCKING)
        "debug_of": {v: (bool(b.get("lockdep", b.get("lock_stat", True))),
                         bool(b.get("lock_stat", True)))
                     for v, b in rundir.builds.items() if isinstance(b, dict)},
    }


def answer_markdown(block):
    """summary.md's lines of one block of answer.txt: its opening lines
    (lost boots, the head) in bold, its cells as a table (one row per
    vCPU count and point), and the setup below them."""
    out, cells = [], []
    for line in block.split("\n"):
        cell = parse_cell_line(line)
        if cell:
            cells.append(cell)
            continue
        if cells:  # the paragraph after the cells: the setup
            out += ["| cell | verdict | metric, ratio [CI] |",
                    "|---|---|---|"]
            out += [f"| {w} | **{v}** | {x} |" for w, v, x in cells] + [""]
            cells = []
            out += [line, ""]
        else:
            out += [f"**{line}**", ""]
    if cells:
        out += ["| cell | verdict | metric, ratio [CI] |", "|---|---|---|"]
        out += [f"| {w} | **{v}** | {x} |" for w, v, x in cells] + [""]
    return out


def pairs_title(pairs, baseline):
    """"after, rcu vs before", or "after vs before, rcu vs after"."""
    if not pairs:
        return f"- vs {baseline}"
    bases = list(dict.fromkeys(b for b, _ in pairs))
    if len(bases) == 1:
        return f"{', '.join(v for _, v in pairs)} vs {bases[0]}"
    return ", ".join(f"{v} vs {b}" for b, v in pairs)


def _times(x):
    return "-" if missing(x) else f"×{x:.2f}"


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


def render_markdown(rundir, table, f, problems, baseline, thresholds,
                    notes=(), observer=None, samples=None):
    """summary.md; table: the verdict table (verdict.table.VerdictTable),
    whose order its tables keep; f: header_facts().  In its order: the
    answer, the setup, the observer effect, a table per metric and pair,
    the position effect, the numbered notes of the tables' rows."""
    pairs = table.pairs() or f["pairs"]
    pct = pct_s(thresholds.confidence)
    footnotes = {}
    out = _answer_lines(rundir, table, f, pairs, baseline, thresholds)
    out += _setup_lines(f, table, problems, thresholds, notes)
    if observer is not None and len(observer):
        out += render_observer(observer, table.primary_metric, pct)
    for metric, pair, block in table.blocks():
        out += _metric_table(metric, pair, block, table.primary_metric,
                             len(pairs) > 1, set(f["over_cpus"]), thresholds,
                             footnotes)
    out += _position_lines(rundir, samples)
    if footnotes:
        out += ["Notes:", ""] + [f"{i}. {text}" for text, i in footnotes.items()] + [""]
    return "\n".join(out)


def _answer_lines(rundir, table, f, pairs, baseline, thresholds):
    """summary.md's title, the answer's paragraphs and each unsafe
    variant's lockdep report."""
    out = [f"# {rundir.name}: {pairs_title(pairs, baseline)}", ""]
    for para in answer_text(table, f, thresholds):
        out += answer_markdown(para)
    for v, rep in f["unsafe"].items():
        out += [f"Lockdep's report in boot {rep['boot']} of {v} "
                f"({rep['boots']} of its boots had one; the whole console: "
                f"{rep['log']}):", "", "```"]
        out += rep["splat"] or [rep["line"]]
        out += ["```", ""]
    return out


def _setup_lines(f, table, problems, thresholds, notes):
    """summary.md's list of what was run and how to read it: the machine,
    the boots, the clocks, oversubscription, the legend, the cross-check
    and the kernel notes."""
    vcpus = "/".join(str(c) for c in f["cpus"])
    out = [f"- **QEMU {f['accel']} emulation** ({f['guests']}): "
           f"{vcpus} vCPU{'' if vcpus == '1' else 's'} on {f['cores']} host cores "
           f"({f['cpu_model']}; {f['pinned']}), QEMU {f['qemu']}; kernel "
           f"{f['kernels']}."]
    lost = sum(t["lost"] for t in f["tally"].values())
    out.append(f"- n = {f['n']} boots per variant, vCPU count and point "
               f"({f['done']} done boots"
               + (f", {f['not_done']} not done" if f["not_done"] else "")
               + (f", {f['unneeded']} unneeded after the early stop"
                  if f["unneeded"] else "") + ")"
               + (f"; **{lost} boot{'s' if lost != 1 else ''} lost by "
                  f"{'their kernels' if lost != 1 else 'its kernel'}, "
                  f"counted against them** (tidy/boots.csv)" if lost else "")
               + ".")
    out.append("- **Absolute times are emulation times; the ratio is the "
               "result.**")
    cs = clock_sentence(f)
    if cs:
        out.append(f"- **{cs}**")
    if f.get("contexts"):
        out.append(f"- **{f['contexts']}**")
    if f["over_boots"]:
        out.append(f"- Oversubscribed (more vCPUs than host cores, marked "
                   f"`*`): {f['over_boots']} boots with "
                   f"{'/'.join(map(str, f['over_cpus']))} vCPUs; lock-holder "
                   f"preemption dominates there.")
    else:
        out.append("- No boot is oversubscribed (vCPUs <= host cores).")
    out += [f"- {line}" for line in legend(thresholds, table)]
    xc = problems[problems["file"] == "crosscheck"] if len(problems) else \
        problems
    if len(xc):
        out.append(f"- **Cross-check: {len(xc)} boot x point(s) where the "
                   f"module's lock operations and lock_stat's acquisitions "
                   f"disagree by more than 1%** (tidy/problems.csv).")
    for text in notes:
        out.append(f"- Kernel note: {text}.")
    out.append("")
    return out


def _metric_table(metric, pair, block, primary, named, over, thresholds, footnotes):
    """One metric's table of one pair (named: its title names the pair),
    with the columns its rows need: the failed points, the probe's
    ratio, the paired ratio (the primary metric's), the A/A control.
    over: the oversubscribed vCPU counts; footnotes: {warning: its
    number}, which the rows' marks add to."""
    baseline, variant = pair
    pct = pct_s(thresholds.confidence)
    dtext = {"higher": "higher is better",
             "lower": "lower is better"}.get(metrics.direction(metric), "no verdict")
    title = f"## {metric} ({metrics.unit(metric)}, {dtext})"
    if named:
        title += f": {variant} vs {baseline}"
    cols = {"failed": bool((block["failed_base"] + block["failed_var"]).any()),
            "ref": metric in metrics.REF_TWIN.values(),
            # the paired ratio beside the primary metric's verdict
            "pair": metric == primary and bool(
                (block["n_pairs"].fillna(0) >= thresholds.min_n).any()),
            "cal": bool((block["calibration"].fillna("") != "").any())}
    extra = ((" failed (starved) |" if cols["failed"] else "")
             + (" probe ratio |" if cols["ref"] else "")
             + (f" paired [{pct}% CI] |" if cols["pair"] else "")
             + (" A/A |" if cols["cal"] else ""))
    out = [title, "",
           f"| vCPUs | point | {baseline} | {variant} | "
           f"{variant}/{baseline} [{pct}% CI] | Δ | p |{extra} "
           f"verdict |",
           "|---:|---|---:|---:|---|---:|---:|" + "---|" * sum(cols.values()) + "---|"]

    def note(text):
        if text not in footnotes:
            footnotes[text] = len(footnotes) + 1
        return f"[{footnotes[text]}]"
    for _, row in block.iterrows():
        marks = "".join(note(w) for w in split_warnings(row["warnings"]))
        out.append(_metric_row(row, cols, over, marks))
    out.append("")
    return out


def _metric_row(row, cols, over, marks):
    """One row of a metric's table: its vCPUs (`*` oversubscribed), point,
    both sides (icount: the means the ratio is of, exact.py; else the
    medians with their CIs), ratio, Δ, p, the extra columns, the verdict
    and its notes' marks."""
    extra = ""
    if cols["failed"]:
        extra += (f" {int(row['failed_base'])} "
                  f"({int(row['starved_base'])}), "
                  f"{int(row['failed_var'])} "
                  f"({int(row['starved_var'])}) |")
    if cols["ref"]:
        extra += (f" {ratio_s(row['probe_ratio'], row['probe_ci_lo'], row['probe_ci_hi'])} |")
    if cols["pair"]:
        extra += (f" {ratio_s(row['paired_ratio'], row['paired_ci_lo'], row['paired_ci_hi'])}"
                  f" (n={int(row['n_pairs'])}) |")
    if cols["cal"]:
        c = row["calibration"]
        extra += f" {'-' if missing(c) or not c else c} |"
    cpus = f"{int(row['cpus'])}" + ("*" if int(row["cpus"]) in over else "")
    if row.get("clock") == ICOUNT:
        base = f"{number_s(row['mean_base'])} (mean)"
        var = f"{number_s(row['mean_var'])} (mean)"
    else:
        base = median_ci_s(row["median_base"], row["ci_lo_base"], row["ci_hi_base"])
        var = median_ci_s(row["median_var"], row["ci_lo_var"], row["ci_hi_var"])
    return (f"| {cpus} | {row_point_label(row)} | {base} | {var} | "
            f"{row_ratio(row)} | {delta_s(row)} | "
            f"{p_value_s(row['p_value'])} |{extra} "
            f"{verdict_s(row)}{(' ' + marks) if marks else ''} |")


def _position_lines(rundir, samples):
    """summary.md's section on whether a boot's place in its repetition
    moved its numbers (position_section); none without samples."""
    pos = position.position_table(
        samples, rundir.boots,
        lambda c, p: rundir.primary_for(c, p)[0]) if samples is not None \
        else None
    if pos is None or not len(pos):
        return []
    return position_section.position_lines(
        pos, lambda c: ", ".join(dict.fromkeys(
            rundir.primary_for(c, p.id)[0] for p in rundir.points))) + [""]


def legend(th, table):
    """What the numbers and the labels mean: lines of summary.md, also
    shown by report.html."""
    pct = pct_s(th.confidence)
    m = f"{100 * th.margin:g}%"
    comps = table.rows
    k = int((comps["role"] == "exploratory").sum()) if len(comps) else 0
    icount = bool(len(comps) and (comps["clock"] == ICOUNT).any())
    prim = list(dict.fromkeys(table.primary["metric"])) or [table.primary_metric]
    out = [
        f"Medians with {pct}% CIs from order statistics (`±`: the farther "
        f"bound). Ratio = exp(Hodges-Lehmann shift of log values), variant "
        f"over baseline, with its Mann-Whitney (Moses) {pct}% CI: the "
        f"typical boot; p: the same test, two-sided; Δ `~` when p >= "
        f"{th.alpha}. Every confidence level printed is the one the "
        f"verdicts used.",
        f"Every boot counts: a favourable verdict also needs the ratio of "
        f"the means over all boots (Welch's {pct}% CI) to be favourable, "
        f"else `inconclusive (tail)` (the typical boot is fine, some boots "
        f"did worse); a boot its kernel lost (hung, panic, oops, lockdep, "
        f"warning, incomplete) counts against that side at its vCPU count: "
        f"`harm (failures)` where the variant lost significantly more "
        f"boots (Fisher's exact test, one-sided at "
        f"{100 * (1 - th.confidence) / 2:.3g}%), `inconclusive (lost B vs V "
        f"boots)` where the sides lost different numbers.",
        f"Verdicts at a {m} margin: `better` (CI on the good side of 1), "
        f"`no harm` (the CI's harmful bound within {m}), `worse` (CI on the "
        f"harmful side of 1, reaching into the margin), `harm` (the whole "
        f"CI beyond {m}), `inconclusive (n<{th.min_n})` (too few boots for "
        f"any verdict), `inconclusive (n≈N)` (about N boots a side would "
        f"decide), `inconclusive (failed B vs V)` (the sides lost different "
        f"numbers of points to failures), `withheld (probe)` (a `_ref` "
        f"verdict whose host-speed probe moved by more than "
        f"{100 * th.probe_tolerance:g}% between the kernels), "
        f"`withheld (steal)` (a `throughput_run` verdict in unpinned, "
        f"oversubscribed or --hosts boots, or a favourable one where the "
        f"variant's own QEMU threads ran more than "
        f"{guards.OWN_TOLERANCE_PCT:g} point of a core x (1 - steal) more "
        f"than the baseline's, or were not measured), `conflict` "
        f"(the raw metric and its `_ref` or `_run` twin point opposite "
        f"ways, judged before Holm), `unsafe` (lockdep reported a locking "
        "bug in a boot of either side: no number is judged).",
        "The A/A control (the baseline booted twice) calibrates every row "
        "of its baseline: where its CI lies away from 1 by d, the row's CI "
        "is widened by d on both sides before it is judged (`CI widened "
        "by`); where its CI holds 1, nothing changes.",
        "`paired`: the same ratio from the boots matched by repetition "
        "(Hodges-Lehmann of the pairs' log ratios, signed-rank CI): "
        "narrower where the two boots of a pair shared a slow host, wider "
        "where the host was steady; shown beside the verdict, never "
        "instead of it (choosing the narrower CI afterwards would be "
        "choosing the answer).",
        f"The answer is {', '.join(f'`{x}`' for x in prim)} at the primary "
        f"points, named before the run; the other {k} "
        f"verdicts are exploratory, Holm-corrected across the table (CIs at "
        f"their Holm levels, `inconclusive (Holm)` past the step-down's "
        f"stop)."]
    if len(comps) and (comps["role"] == "writers").any():
        out.append(
            f"The writers' answer (`role` writers: write latency p99 and "
            f"maximum at the points that mix reads and writes, 2 vCPUs or "
            f"more on the wall clock, where readers could keep a writer "
            f"waiting) is a second answer named by the harness, each cell "
            f"judged at {pct}%, not in Holm's table.")
    if icount:
        out.append(
            "Rows of icount cells (QEMU's instruction count as the guest's "
            "clock: times are instructions) are exact data: the ratio is "
            "of the means (the baseline's boots pooled with its A/A "
            "control's, shown as `(mean)`), and its interval is not a "
            "confidence interval but the ratio times exp(±w), w the larger "
            "of the baseline's log range and 1.5 times the variant's own "
            "(simulated coverage 96-100%); the A/A control is judged on "
            "each side's own range, so it can differ (and then widens the "
            "rows of its baseline); no p-value, not in Holm's table "
            "(analysis/estimate/exact.py).")
    return out
