# SPDX-License-Identifier: GPL-2.0
"""The comparisons table: one verdict per compared pair, vCPU count,
workload point and metric, with the rules that keep a table of them
honest (analysis/README.md, "Verdicts"):

- the campaign's primary metric (and primary points) are the answer, named
  before the run; every other row is exploration, Holm-corrected across
  the table;
- a difference in failed or starved points between the two sides
  withholds a favourable verdict;
- with an A/A control in the campaign (the baseline booted twice), a
  verdict stands only where the A/A pair itself claims no difference at
  that vCPU count, point and metric, else `uncalibrated`;
- a `_ref` verdict (read against the host-speed probe) stands only where
  the probe itself did not move between the kernels, and a `_ref` verdict
  that contradicts its raw twin makes both `conflict`;
- a favourable `throughput_run` verdict (host steal divided out) stands
  only where the variant's own QEMU threads did not run measurably more
  than the baseline's (they are all a kernel could have taken from its
  own vCPUs), and one that contradicts raw throughput makes both
  `conflict`;
- a variant with a lockdep report in any boot is `unsafe` in every row it
  takes part in, whatever the numbers (analysis/safety.py).

Pure functions of data frames; never prints.
"""

import math

import numpy as np
import pandas as pd

from analysis import (holm, mann_whitney, medians, metrics, paired, safety,
                      stats)

#: a raw metric and the same read against the host's speed (TIDY.md)
REF_TWIN = {"throughput_ops_s": "throughput_ref",
            "lookup_lat_median_ns": "lookup_lat_median_ref",
            "write_lat_median_ns": "write_lat_median_ref"}
#: a raw metric and the same per second the vCPUs ran (TIDY.md)
RUN_TWIN = {"throughput_ops_s": "throughput_run"}
PROBE = "ref_probe_ns"
#: QEMU's own other threads' run time (TIDY.md, "throughput_run"), and how
#: many points of a core more the variant's may have used than the
#: baseline's before a favourable throughput_run verdict is withheld: the
#: most its division can credit the variant with (1% of the run, a fifth
#: of the 5% margin)
OWN = "qemu_other_pct"
OWN_TOLERANCE_PCT = 1.0
HOLM = stats.INCONCLUSIVE + " (Holm)"
UNCALIBRATED = "uncalibrated"
WITHHELD = "withheld (probe)"
WITHHELD_STEAL = "withheld (steal)"
CONFLICT = "conflict"

COMPARISONS_COLUMNS = (
    "campaign", "baseline", "variant", "cpus", "point", "read_pct",
    "mailboxes", "miss_pct", "duration_ms", "metric", "unit", "direction",
    "role", "n_base", "n_var", "failed_base", "failed_var", "starved_base",
    "starved_var", "median_base", "ci_lo_base", "ci_hi_base", "median_var",
    "ci_lo_var", "ci_hi_var", "ratio", "ratio_ci_lo", "ratio_ci_hi",
    "ci_level", "p_value", "significant", "p_claim", "margin", "verdict",
    "n_needed", "calibration", "probe_ratio", "probe_ci_lo", "probe_ci_hi",
    "warnings", "n_pairs", "paired_ratio", "paired_ci_lo", "paired_ci_hi",
    "paired_ci_level")


def failed_label(fb, fv):
    return f"{stats.INCONCLUSIVE} (failed {fb} vs {fv})"


def _row(base_key, c, th, level):
    d = dict(base_key)
    d.update(n_base=c.n_base, n_var=c.n_var, median_base=c.base.median,
             ci_lo_base=c.base.ci_lo, ci_hi_base=c.base.ci_hi,
             median_var=c.var.median, ci_lo_var=c.var.ci_lo,
             ci_hi_var=c.var.ci_hi, ratio=c.ratio,
             ratio_ci_lo=c.ratio_ci_lo, ratio_ci_hi=c.ratio_ci_hi,
             ci_level=level, p_value=c.p_value,
             significant=int(c.significant), p_claim=c.p_claim,
             margin=th.margin, verdict=c.verdict, n_needed=c.n_needed,
             warnings="; ".join(c.warnings))
    return d


def _failures(outcomes):
    """(variant, cpus, point) -> (failed, starved): points that gave no
    sample because the module reported FAILURE (starved: a thread did no
    op) or the point's results are missing."""
    out = {}
    if outcomes is None or outcomes.empty:
        return out
    bad = outcomes[outcomes["outcome"] != "ok"]
    for (v, c, p), g in bad.groupby(["variant", "cpus", "point"]):
        out[(v, int(c), str(p))] = (len(g), int((g["outcome"]
                                                 == "starved").sum()))
    return out


def comparisons_table(samples, pairs, thresholds=stats.Thresholds(),
                      primary="throughput_ops_s", primary_points=None,
                      outcomes=None, controls=(), unsafe=()):
    """One row per (baseline, variant) pair x cpus x point x metric
    (COMPARISONS_COLUMNS), in samples order; `controls`: (baseline,
    control) A/A pairs, judged alike with role `control`; `unsafe`: the
    variants with a lockdep report (safety.lockdep_reports). A metric that
    one side of a pair never measured gets no row for that pair."""
    th = thresholds
    if samples.empty:
        return pd.DataFrame([], columns=COMPARISONS_COLUMNS)
    measured = set(zip(samples["variant"], samples["metric"]))
    campaign = samples["campaign"].iloc[0]
    fails = _failures(outcomes)
    rows, groups = [], []
    for k, g in samples.groupby(list(medians.GROUP), sort=False, dropna=False):
        d0 = dict(zip(medians.GROUP, k))
        metric = d0["metric"]
        direction = metrics.direction(metric)
        role = ("primary" if metric == primary and (
            not primary_points or d0["point"] in primary_points)
            else "exploratory")
        for b, v in list(pairs) + list(controls):
            if (b, metric) not in measured or (v, metric) not in measured:
                continue
            base = g.loc[g["variant"] == b, "value"].to_numpy()
            var = g.loc[g["variant"] == v, "value"].to_numpy()
            c = stats.compare(base, var, direction, th)
            fb, sb = fails.get((b, int(d0["cpus"]), str(d0["point"])), (0, 0))
            fv, sv = fails.get((v, int(d0["cpus"]), str(d0["point"])), (0, 0))
            key = dict(campaign=campaign, baseline=b, variant=v, **d0,
                       direction=direction or "none",
                       role="control" if (b, v) in controls else role,
                       failed_base=fb, failed_var=fv, starved_base=sb,
                       starved_var=sv)
            rows.append(_row(key, c, th, _level(c, th.confidence)))
            rows[-1].update(_paired(g, b, v, th.confidence))
            groups.append((base, var, direction))
    _holm(rows, groups, th)
    for r in rows:
        if (r["failed_base"] != r["failed_var"] and r["direction"] != "none"
                and r["verdict"] in stats.FAVOURABLE + (stats.TOO_FEW, "")):
            r["verdict"] = failed_label(r["failed_base"], r["failed_var"])
    _calibrate(rows, controls)
    _probe(rows, samples, th)
    _own_threads(rows, samples, th)
    _conflicts(rows)
    _flag_steal(rows, samples)
    safety.mark(rows, unsafe, controls)
    return pd.DataFrame(rows, columns=COMPARISONS_COLUMNS)


def _paired(g, b, v, confidence):
    """The paired ratio's columns: the two sides' boots matched by
    repetition (analysis/paired.py), beside the unpaired verdict."""
    if "rep" not in g.columns:  # samples without repetitions: no pairs
        r = paired.NONE
        return dict(n_pairs=0, paired_ratio=r.ratio, paired_ci_lo=r.ci_lo,
                    paired_ci_hi=r.ci_hi, paired_ci_level=r.level)

    def by_rep(variant):
        sel = g[g["variant"] == variant]
        return dict(zip(sel["rep"].astype(int), sel["value"].astype(float)))
    r = paired.paired(by_rep(b), by_rep(v), confidence)
    return dict(n_pairs=r.n, paired_ratio=r.ratio, paired_ci_lo=r.ci_lo,
                paired_ci_hi=r.ci_hi, paired_ci_level=r.level)


def steal_note(nb, kb, nv, kv):
    return (f"host steal above {metrics.STEAL_FLAG_PCT:g}% in {kb} of {nb} "
            f"baseline and {kv} of {nv} variant boots")


def _flag_steal(rows, samples):
    """Every row of a cell where the host kept a vCPU thread waiting
    (steal_max_pct above metrics.STEAL_FLAG_PCT) in some boot says so in
    its warnings, so that the flag follows the cell into every table."""
    st = samples[samples["metric"] == "steal_max_pct"]
    if st.empty:
        return
    hot = {}
    for (v, c, p), g in st.groupby(["variant", "cpus", "point"]):
        hot[(v, int(c), str(p))] = (len(g), int(
            (g["value"] > metrics.STEAL_FLAG_PCT).sum()))
    for r in rows:
        key = (int(r["cpus"]), str(r["point"]))
        nb, kb = hot.get((r["baseline"],) + key, (0, 0))
        nv, kv = hot.get((r["variant"],) + key, (0, 0))
        if kb or kv:
            note = steal_note(nb, kb, nv, kv)
            r["warnings"] = "; ".join(w for w in (r["warnings"], note) if w)


def _level(c, confidence):
    if c.n_base == 0 or c.n_var == 0 or math.isnan(c.ratio):
        return math.nan
    return mann_whitney.ci_level(c.n_base, c.n_var, confidence)


def _holm(rows, groups, th):
    """Holm's step-down over the exploratory rows that claim something:
    ranked by the p of the claim their verdict makes, each is re-judged on
    its CI at its Holm level (1 - alpha / (K - rank)); a row still decided
    there, before the step-down stopped, keeps that judgement (CI at that
    level, `ci_level`); the first row left undecided stops it, and it and
    every row after it say `inconclusive (Holm)` (with their 95% CIs).
    Rows that claimed nothing keep their 95% `inconclusive (n≈N)`: they
    count in K all the same, as hypotheses tested. Rows change in place."""
    idx = [i for i, r in enumerate(rows)
           if r["role"] == "exploratory" and r["direction"] != "none"
           and r["verdict"] not in ("", stats.TOO_FEW)
           and not math.isnan(r["p_claim"])]
    if not idx:
        return
    levels = holm.holm_levels([rows[i]["p_claim"] for i in idx], th.alpha)
    stopped = False
    for i, level in sorted(zip(idx, levels), key=lambda x: -x[1]):
        r = rows[i]
        if r["verdict"] not in stats.DECIDED:
            continue
        base, var, direction = groups[i]
        c = stats.compare(base, var, direction, th.with_(confidence=level))
        if stopped or c.verdict not in stats.DECIDED:
            stopped = True
            r["verdict"] = HOLM
            continue
        keep = {k: r[k] for k in ("campaign", "baseline", "variant", "role",
                                  "direction", "failed_base", "failed_var",
                                  "starved_base", "starved_var")}
        keep.update({k: r[k] for k in medians.GROUP})
        new = _row(keep, c, th, _level(c, level))
        for k in ("median_base", "ci_lo_base", "ci_hi_base", "median_var",
                  "ci_lo_var", "ci_hi_var", "n_pairs", "paired_ratio",
                  "paired_ci_lo", "paired_ci_hi", "paired_ci_level"):
            # the medians and the paired ratio keep their 95%
            new[k] = r[k]
        rows[i] = new


def _calibrate(rows, controls):
    """Each row whose baseline has an A/A control gets the control's verdict
    at the same vCPU count, point and metric (`calibration`). Where the A/A
    pair itself claims a difference (better, worse, harm) or a conflict,
    the boots there are not exchangeable, the host alone makes
    differences, and a verdict becomes `uncalibrated`. An A/A pair that is
    only inconclusive leaves the verdict as it is: its CI already carries
    the noise, and calling a clear harm `uncalibrated` because 8 A/A boots
    could not prove non-inferiority would hide it. Re-splits of the pooled
    A/A boots would add nothing: the Mann-Whitney CI is a rank procedure,
    so over all re-splits of any sample its false-alarm rate is exactly
    its nominal level."""
    ctl = dict(controls)
    aa = {(r["baseline"], r["cpus"], r["point"], r["metric"]): r["verdict"]
          for r in rows if r["role"] == "control"}
    for r in rows:
        if r["role"] == "control" or r["baseline"] not in ctl:
            r["calibration"] = ""
            continue
        v = aa.get((r["baseline"], r["cpus"], r["point"], r["metric"]))
        r["calibration"] = "" if v is None else f"A/A {v or 'n/a'}"
        if (v in (stats.BETTER, stats.WORSE, stats.HARM, CONFLICT)
                and r["verdict"] and r["verdict"] != stats.TOO_FEW):
            r["verdict"] = UNCALIBRATED


def _probe(rows, samples, th):
    """The host-speed probe's own ratio beside every _ref row; a _ref
    verdict only where the probe's CI lies within +-probe_tolerance."""
    probe = samples[samples["metric"] == PROBE]
    for r in rows:
        if r["metric"] not in REF_TWIN.values():
            continue
        sel = probe[(probe["cpus"] == r["cpus"])
                    & (probe["point"] == r["point"])]
        c = stats.compare(sel.loc[sel["variant"] == r["baseline"], "value"],
                          sel.loc[sel["variant"] == r["variant"], "value"],
                          None, th)
        r.update(probe_ratio=c.ratio, probe_ci_lo=c.ratio_ci_lo,
                 probe_ci_hi=c.ratio_ci_hi)
        tol = th.probe_tolerance
        steady = (c.ratio_ci_lo >= 1 - tol and c.ratio_ci_hi <= 1 + tol)
        if r["verdict"] in stats.DECIDED and not steady:
            r["verdict"] = WITHHELD


def _own_threads(rows, samples, th):
    """throughput_run divides each boot by the share of the run its vCPUs
    were on a host core (1 - steal_pct/100), crediting the kernel with
    the time the host took.  The one part of that time a kernel could
    cause itself is its own QEMU's other threads (main loop, RCU,
    workers) running on its vCPUs' cores, and they cannot take more than
    they ran (qemu_other_pct, % of a core).  A favourable verdict stands
    only where that is measured on both sides and the variant's own
    threads ran at most OWN_TOLERANCE_PCT points more than the
    baseline's (the upper bound of the Hodges-Lehmann CI of the
    difference); else `withheld (steal)`.  Worse and harm stand: the
    raw loss is larger still."""
    own = samples[samples["metric"] == OWN]
    for r in rows:
        if r["metric"] not in RUN_TWIN.values() or \
                r["verdict"] not in stats.FAVOURABLE:
            continue
        sel = own[(own["cpus"] == r["cpus"]) & (own["point"] == r["point"])]
        b = sel.loc[sel["variant"] == r["baseline"], "value"].to_numpy()
        v = sel.loc[sel["variant"] == r["variant"], "value"].to_numpy()
        if len(b) < th.min_n or len(v) < th.min_n:
            note = (f"{OWN} not measured on both sides ({len(b)} and "
                    f"{len(v)} boots): the variant may have kept its own "
                    f"vCPUs off the host")
        else:
            # log(exp(x - c)) = x - c: the shift and its CI are
            # differences in points of a core (c keeps exp finite; a
            # file's absurd values give inf or nan, and nan withholds)
            c = float(np.median(np.concatenate([b, v])))
            with np.errstate(over="ignore", divide="ignore",
                             invalid="ignore"):
                d, lo, hi = (float(x[0]) for x in mann_whitney.shift_ci_many(
                    np.exp(b - c)[None], np.exp(v - c)[None],
                    th.confidence))
            if hi <= OWN_TOLERANCE_PCT:
                continue
            note = (f"the variant's own QEMU threads ran {d:+.2f} "
                    f"[{lo:+.2f}, {hi:+.2f}] points of a core more than the "
                    f"baseline's (tolerance {OWN_TOLERANCE_PCT:g})")
        r["verdict"] = WITHHELD_STEAL
        r["warnings"] = "; ".join(w for w in (r["warnings"], note) if w)


def _conflicts(rows):
    """A raw metric and its `_ref` or `_run` twin on opposite sides
    (favourable against unfavourable): both `conflict`, so that no
    normalisation turns a harm into no harm."""
    by_key = {(r["baseline"], r["variant"], r["cpus"], r["point"],
               r["metric"]): r for r in rows}
    for raw, twin in list(REF_TWIN.items()) + list(RUN_TWIN.items()):
        for r in rows:
            if r["metric"] != raw:
                continue
            t = by_key.get((r["baseline"], r["variant"], r["cpus"],
                            r["point"], twin))
            if t is None:
                continue
            pair = {r["verdict"], t["verdict"]}
            if (pair & set(stats.FAVOURABLE)
                    and pair & set(stats.UNFAVOURABLE)):
                r["verdict"] = t["verdict"] = CONFLICT


def primary_rows(comps):
    """The rows that are the campaign's answer."""
    if comps.empty:
        return comps
    return comps[comps["role"] == "primary"]
