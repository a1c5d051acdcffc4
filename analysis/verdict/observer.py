# SPDX-License-Identifier: GPL-2.0
"""The observer effect: a comparison measured with lock statistics beside
its twin measured without (the same patches; analysis/README.md). The
ratio of ratios is a ratio of medians with a seeded bootstrap CI: it asks
whether lockdep changes the conclusion, an exploratory question beside
the verdicts (analysis/verdict/verdicts.py)."""

import math

import numpy as np

from analysis.estimate.stats import _clean


def _ratio(num, den):
    """num/den for arrays, with 0/0 = 1 (both medians zero: no change)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num / den
    return np.where((num == 0) & (den == 0), 1.0, r)


def ratio_of_ratios(b1, v1, b2, v2, confidence=0.95, resamples=10000,
                    seed=1):
    """(rr, lo, hi): how much a second comparison's ratio differs from a
    first's, rr = (median(v2)/median(b2)) / (median(v1)/median(b1)), with
    a seeded percentile bootstrap CI (the four groups resampled
    independently). rr = 1: the two set-ups reach the same ratio."""
    groups = [_clean(x) for x in (b1, v1, b2, v2)]
    if any(len(g) == 0 for g in groups):
        return math.nan, math.nan, math.nan
    med = [np.median(g) for g in groups]
    rr = float(_ratio(_ratio(med[3], med[2]), _ratio(med[1], med[0])))
    rng = np.random.default_rng(seed)
    boot = [np.median(g[rng.integers(0, len(g), (resamples, len(g)))], axis=1)
            for g in groups]
    r = np.sort(_ratio(_ratio(boot[3], boot[2]), _ratio(boot[1], boot[0])))
    r = r[~np.isnan(r)]
    if len(r) == 0:
        return rr, math.nan, math.nan
    a = (1 - confidence) / 2
    lo = r[int(math.floor(a * len(r)))]
    hi = r[min(len(r) - 1, int(math.ceil((1 - a) * len(r))) - 1)]
    return rr, float(lo), float(hi)


def observer_table(comps, samples, twins, metric, thresholds=None):
    """The observer effect: for each (with, without) twin of comparisons
    (rundir.observer_pairs(): the same patches with and without lock
    statistics), per cpus x point of `metric`, both ratios with their CIs
    and verdicts from `comps`, and the ratio of ratios without/with with
    its bootstrap CI (OBSERVER_COLUMNS). Empty when there is no twin."""
    import pandas as pd
    rows = []
    if comps.empty or samples.empty:
        return pd.DataFrame(rows, columns=OBSERVER_COLUMNS)
    c = comps[comps["metric"] == metric]
    s = samples[samples["metric"] == metric]
    for (b1, v1), (b2, v2) in twins:
        with_ = c[(c["baseline"] == b1) & (c["variant"] == v1)]
        without = c[(c["baseline"] == b2) & (c["variant"] == v2)]
        for _, r1 in with_.iterrows():
            m = without[(without["cpus"] == r1["cpus"])
                        & (without["point"] == r1["point"])]
            if m.empty:
                continue
            r2 = m.iloc[0]
            sel = s[(s["cpus"] == r1["cpus"]) & (s["point"] == r1["point"])]
            vals = [sel.loc[sel["variant"] == x, "value"].tolist()
                    for x in (b1, v1, b2, v2)]
            rr, lo, hi = ratio_of_ratios(*vals, thresholds.confidence,
                                         thresholds.resamples, thresholds.seed)
            rows.append({
                "metric": metric, "cpus": r1["cpus"], "point": r1["point"],
                "read_pct": r1["read_pct"], "mailboxes": r1["mailboxes"],
                "miss_pct": r1["miss_pct"],
                "baseline": b1, "variant": v1,
                "ratio": r1["ratio"], "ratio_ci_lo": r1["ratio_ci_lo"],
                "ratio_ci_hi": r1["ratio_ci_hi"], "verdict": r1["verdict"],
                "baseline_plain": b2, "variant_plain": v2,
                "ratio_plain": r2["ratio"],
                "ratio_plain_ci_lo": r2["ratio_ci_lo"],
                "ratio_plain_ci_hi": r2["ratio_ci_hi"],
                "verdict_plain": r2["verdict"],
                "same_verdict": int(r1["verdict"] == r2["verdict"]),
                "ratio_of_ratios": rr, "rr_ci_lo": lo, "rr_ci_hi": hi,
                "lockstat_cost_base": _ratio(np.median(vals[0]),
                                             np.median(vals[2])).item()
                if vals[0] and vals[2] else math.nan,
                "lockstat_cost_var": _ratio(np.median(vals[1]),
                                            np.median(vals[3])).item()
                if vals[1] and vals[3] else math.nan})
    return pd.DataFrame(rows, columns=OBSERVER_COLUMNS)


OBSERVER_COLUMNS = (
    "metric", "cpus", "point", "read_pct", "mailboxes", "miss_pct",
    "baseline", "variant", "ratio", "ratio_ci_lo", "ratio_ci_hi", "verdict",
    "baseline_plain", "variant_plain", "ratio_plain", "ratio_plain_ci_lo",
    "ratio_plain_ci_hi", "verdict_plain", "same_verdict", "ratio_of_ratios",
    "rr_ci_lo", "rr_ci_hi", "lockstat_cost_base", "lockstat_cost_var")
