# SPDX-License-Identifier: GPL-2.0
"""Presentation: the comparisons table -> summary.md text and the
commit-message block. Pure functions of data frames and the manifest; no
statistics here (analysis.stats), no file access (analysis.report)."""

import math
import textwrap

from analysis import metrics

WIDTH = 72  # commit message columns


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
    v = row["verdict"] or ""
    if v == "inconclusive":
        need = row["n_needed"]
        if need == "unreachable":
            v += " (unreachable)"
        elif need is not None and not (isinstance(need, float)
                                       and math.isnan(need)):
            v += f" (n≈{int(float(need))})"
    return v or "n/a"


def point_label(row):
    parts = []
    if not _nan(row.get("read_pct")):
        parts.append(f"read {int(row['read_pct'])}%")
    if not _nan(row.get("mailboxes")):
        parts.append(f"{int(row['mailboxes'])} mbox")
    if not _nan(row.get("miss_pct")):
        parts.append(f"miss {int(row['miss_pct'])}%")
    return f"{row['point']} ({', '.join(parts)})" if parts else \
        str(row["point"])


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


def setup_facts(rundir, cells, samples, baseline, primary):
    """Facts for the headers: a dict of short strings."""
    host = rundir.host
    done = cells[cells["analyzed"] == 1] if len(cells) else cells
    cpus = sorted(set(int(c) for c in done["cpus"])) if len(done) else []
    over = done[done["oversubscribed"] == 1] if len(done) else done
    prim = samples[samples["metric"] == primary]
    if prim.empty:
        prim = samples
    ns = prim.groupby(["variant", "cpus", "point"])["value"].count()
    nmin, nmax = (int(ns.min()), int(ns.max())) if len(ns) else (0, 0)
    kernels = sorted({str(b.get("kernel_version")) for b in
                      rundir.builds.values()
                      if isinstance(b, dict) and b.get("kernel_version")})
    archs = sorted(set(done["arch"])) if len(done) else []
    # What booted each arch ("qemu-system-aarch64 -M virt, cortex-a57"),
    # as the campaign recorded it.
    qg = host.get("qemu_guests") or {}
    return {
        "accel": str(host.get("accel", "tcg")).upper(),
        "cores": host.get("cores", "?"),
        "cpu_model": host.get("cpu_model", "unknown CPU"),
        "qemu": host.get("qemu_version", "?"),
        "cpus": cpus,
        "n": f"{nmin}" if nmin == nmax else f"{nmin}-{nmax}",
        "kernels": ", ".join(kernels) or "unknown",
        "arch": ", ".join(archs) or "unknown",
        "guests": "; ".join(f"{a} guests: {qg[a]}" if a in qg else f"{a} guests"
                            for a in archs) or "unknown guests",
        "over_cpus": sorted(set(int(c) for c in over["cpus"])),
        "over_cells": len(over),
        "not_done": int((cells["analyzed"] == 0).sum()) if len(cells) else 0,
        "done": len(done),
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
    lock statistics, side by side (rows of stats.observer_table)."""
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
                f"| {int(r['cpus'])} | {point_label(r)} | "
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


def render_markdown(rundir, comps, cells, samples, problems, baseline,
                    thresholds, primary, notes=(), observer=None):
    f = setup_facts(rundir, cells, samples, baseline, primary)
    pairs = comparison_pairs(comps)
    bases = set(b for b, _ in pairs)
    out = [f"# {rundir.name}: {pairs_title(pairs, baseline)}", ""]
    vcpus = "/".join(str(c) for c in f["cpus"])
    out.append(f"- **QEMU {f['accel']} emulation** ({f['guests']}): "
               f"{vcpus} vCPUs on {f['cores']} host cores "
               f"({f['cpu_model']}), QEMU {f['qemu']}; kernel "
               f"{f['kernels']}.")
    out.append(f"- n = {f['n']} boots per variant, vCPU count and point "
               f"({f['done']} done cells"
               + (f", {f['not_done']} not done and skipped" if f["not_done"]
                  else "") + ").")
    out.append("- **Absolute times are emulation times; the ratio is the "
               "result.**")
    if f["over_cells"]:
        out.append(f"- Oversubscribed (more vCPUs than host cores, marked "
                   f"`*`): {f['over_cells']} cells with "
                   f"{'/'.join(map(str, f['over_cpus']))} vCPUs; lock-holder "
                   f"preemption dominates there.")
    else:
        out.append("- No cell is oversubscribed (vCPUs <= host cores).")
    pct = round(100 * thresholds.confidence)
    out.append(f"- Medians with {pct}% CIs from order statistics (`±`: the "
               f"farther CI bound); ratio = median(variant) / median("
               f"{baseline if len(bases) <= 1 else 'its baseline'}) with a "
               f"seeded bootstrap {pct}% CI "
               f"({thresholds.resamples} resamples, seed {thresholds.seed}); "
               f"p: Mann-Whitney U, two-sided; Δ `~` when p >= "
               f"{thresholds.alpha}.")
    out.append(f"- Verdict against a margin of {100 * thresholds.margin:g}%: "
               f"`better` (CI on the good side of 1), `no harm` (the CI's "
               f"harmful bound within the margin), `harm` (CI on the harmful "
               f"side, beyond the margin), `inconclusive` (n≈: repetitions "
               f"per variant likely needed).")
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
            out += [title, "",
                    f"| vCPUs | point | {baseline} | {variant} | "
                    f"{variant}/{baseline} [{pct}% CI] | Δ | p | verdict |",
                    "|---:|---|---:|---:|---|---:|---:|---|"]
            for _, row in block.iterrows():
                cpus = f"{int(row['cpus'])}" + ("*" if int(row["cpus"]) in
                                                 over else "")
                marks = "".join(note(w) for w in
                                split_warnings(row["warnings"]))
                base = pm(row["median_base"], row["ci_lo_base"],
                          row["ci_hi_base"])
                var = pm(row["median_var"], row["ci_lo_var"],
                         row["ci_hi_var"])
                out.append(
                    f"| {cpus} | {point_label(row)} | {base} | {var} | "
                    f"{row_ratio(row)} | {delta_s(row)} | "
                    f"{p_s(row['p_value'])} | "
                    f"{verdict_s(row)}{(' ' + marks) if marks else ''} |")
            out.append("")
    if notes:
        out.append("Notes:")
        out.append("")
        for text, i in notes.items():
            out.append(f"{i}. {text}")
        out.append("")
    return "\n".join(out)


def render_commit_msg(rundir, comps, cells, samples, baseline, thresholds,
                      primary, campaign_file, run_dir):
    """The block for a commit message: lines of at most 72 columns."""
    f = setup_facts(rundir, cells, samples, baseline, primary)
    w = textwrap.TextWrapper(width=WIDTH, break_on_hyphens=False)
    out = []
    out += w.wrap(f"Measured with the mbox_bench module in QEMU "
                  f"{f['accel']} emulation ({f['guests']}; "
                  f"{'/'.join(map(str, f['cpus']))} vCPUs on {f['cores']} "
                  f"host cores), Linux {f['kernels']}, {f['n']} boots per "
                  f"variant, interleaved. Absolute times are emulation "
                  f"times; the ratio is the result.")
    if f["over_cells"]:
        out += w.wrap(f"{'/'.join(map(str, f['over_cpus']))} vCPUs is "
                      f"oversubscribed (more vCPUs than host cores).")
    pct = round(100 * thresholds.confidence)
    shown = [primary]
    twin = REF_TWIN.get(primary)
    if twin and len(comps) and (comps["metric"] == twin).any():
        shown.append(twin)
    for metric in shown:
        out += _commit_msg_metric(w, comps, metric, thresholds, pct)
    out += ["", "Reproduce:", f"  ./run.sh campaign {campaign_file}",
            f"  ./run.sh report {run_dir}"]
    return "\n".join(out) + "\n"


#: A raw metric and the same read against the host's speed (analysis/TIDY.md)
REF_TWIN = {"throughput_ops_s": "throughput_ref",
            "lookup_lat_median_ns": "lookup_lat_median_ref",
            "write_lat_median_ns": "write_lat_median_ref"}


def _commit_msg_metric(w, comps, primary, thresholds, pct):
    out = []
    rows = comps[comps["metric"] == primary] if len(comps) else comps
    for baseline, variant in comparison_pairs(rows):
        out.append("")
        what = (" (divided by the host speed the module measured during "
                "each run)" if primary in REF_TWIN.values() else "")
        out += w.wrap(f"{primary}{what}, {variant}/{baseline}: ratio of medians "
                      f"[{pct}% CI], Mann-Whitney p, verdict at a "
                      f"{100 * thresholds.margin:g}% margin:")
        out.append("")
        legend = {}
        mine = rows[(rows["variant"] == variant)
                    & (rows["baseline"] == baseline)]
        for _, row in mine.iterrows():
            legend[row["point"]] = point_label(row)
            line = (f"  {int(row['cpus'])} vCPUs, {row['point']}: "
                    f"{row_ratio(row)}, p={p_s(row['p_value'])}, "
                    f"{verdict_s(row)}")
            out += textwrap.wrap(line, WIDTH, subsequent_indent="      ",
                                 break_on_hyphens=False)
        out.append("")
        for label in legend.values():
            out += textwrap.wrap(label, WIDTH, initial_indent="  ",
                                 subsequent_indent="    ")
        notes = dict.fromkeys(
            w for ws in mine["warnings"] for w in split_warnings(ws))
        for note in notes:
            out += w.wrap(f"Warning: {note}.")
    return out
