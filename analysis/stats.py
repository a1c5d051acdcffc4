# SPDX-License-Identifier: GPL-2.0
"""Statistics of benchmark samples: medians with confidence intervals,
variant/baseline ratios, Mann-Whitney U, and the verdict. Never prints;
warnings are returned as data (benchstat's benchmath, in spirit).

- Median CI: distribution-free, from order statistics (binomial): the
  narrowest symmetric pair (x_(l), x_(n+1-l)) covering the median with
  probability >= 95%. With n < 6 no pair reaches 95%: [min, max] is
  returned with its actual (lower) level.
- Ratio = median(variant) / median(baseline), 95% CI by a seeded
  percentile bootstrap: each group resampled with replacement,
  `resamples` times (default 10000, seed 1).
- p: Mann-Whitney U, two-sided (scipy.stats.mannwhitneyu); "~" when
  p >= alpha (0.05).
- Verdict against the margin m, for the metric's direction (see verdict()).
"""

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats as sps

from analysis import metrics

NO_HARM, BETTER, HARM, INCONCLUSIVE = "no harm", "better", "harm", \
    "inconclusive"
TOO_FEW = "n<6: too few samples"


@dataclass(frozen=True)
class Thresholds:
    """Every number the verdict depends on, in one place (data, not
    arguments scattered through calls)."""
    confidence: float = 0.95  # of the median CIs and the ratio CI
    alpha: float = 0.05  # significance of the Mann-Whitney U test
    margin: float = 0.05  # non-inferiority margin, relative
    min_n: int = 6  # fewer samples in a group: warning
    resamples: int = 10000  # bootstrap resamples
    seed: int = 1  # bootstrap seed

    def with_(self, **kw):
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    ci_lo: float
    ci_hi: float
    ci_level: float
    min: float
    q25: float
    q75: float
    max: float


@dataclass(frozen=True)
class Comparison:
    n_base: int
    n_var: int
    base: Summary
    var: Summary
    ratio: float
    ratio_ci_lo: float
    ratio_ci_hi: float
    p_value: float
    significant: bool
    verdict: str  # "" when the metric has no direction or no ratio
    n_needed: object  # int, "unreachable" or None
    warnings: list = field(default_factory=list)


def _clean(values):
    a = np.asarray([v for v in values if v is not None], dtype=float)
    return a[~np.isnan(a)]


def median_ci(values, confidence=0.95):
    """(median, lo, hi, level): order-statistic CI of the median."""
    x = np.sort(_clean(values))
    n = len(x)
    if n == 0:
        return (math.nan,) * 4
    med = float(np.median(x))
    if n == 1:
        return med, med, med, 0.0
    best = None
    for lo in range(1, n // 2 + 1):  # 1-based rank of the lower bound
        hi = n + 1 - lo
        # P(lo <= B <= hi - 1), B ~ Bin(n, 1/2)
        level = float(sps.binom.cdf(hi - 1, n, 0.5)
                      - sps.binom.cdf(lo - 1, n, 0.5))
        if level >= confidence:
            best = (lo, hi, level)
        else:
            break
    if best is None:
        level = float(1 - 2 * 0.5 ** n)
        return med, float(x[0]), float(x[-1]), level
    lo, hi, level = best
    return med, float(x[lo - 1]), float(x[hi - 1]), level


def describe(values, confidence=0.95):
    x = _clean(values)
    if len(x) == 0:
        nan = math.nan
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan)
    med, lo, hi, level = median_ci(x, confidence)
    q25, q75 = np.percentile(x, [25, 75])
    return Summary(n=len(x), median=med, ci_lo=lo, ci_hi=hi, ci_level=level,
                   min=float(x.min()), q25=float(q25), q75=float(q75),
                   max=float(x.max()))


def _ratio(num, den):
    """num/den for arrays, with 0/0 = 1 (both medians zero: no change)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num / den
    r = np.where((num == 0) & (den == 0), 1.0, r)
    return r


def ratio_ci(base, var, confidence=0.95, resamples=10000, seed=1):
    """(ratio, lo, hi) of median(var)/median(base), seeded bootstrap."""
    b, v = _clean(base), _clean(var)
    ratio = float(_ratio(np.median(v), np.median(b)))
    rng = np.random.default_rng(seed)
    mb = np.median(b[rng.integers(0, len(b), (resamples, len(b)))], axis=1)
    mv = np.median(v[rng.integers(0, len(v), (resamples, len(v)))], axis=1)
    r = np.sort(_ratio(mv, mb))
    a = (1 - confidence) / 2
    lo = r[int(math.floor(a * resamples))]
    hi = r[min(resamples - 1, int(math.ceil((1 - a) * resamples)) - 1)]
    return ratio, float(lo), float(hi)


def mann_whitney_p(base, var):
    b, v = _clean(base), _clean(var)
    allv = np.concatenate([b, v])
    if len(b) == 0 or len(v) == 0:
        return math.nan
    if np.all(allv == allv[0]):
        return 1.0
    return float(sps.mannwhitneyu(v, b, alternative="two-sided").pvalue)


def verdict(ratio, lo, hi, direction, margin, n):
    """(verdict, n_needed) for a ratio variant/baseline and its CI.

    higher-better (throughput):       lower-better (latency, waits...):
      better:  lo > 1                   better:  hi < 1
      no harm: lo >= 1 - m              no harm: hi <= 1 + m
      harm:    hi < 1 (and lo < 1 - m)  harm:    lo > 1 (and hi > 1 + m)
      else inconclusive                 else inconclusive
    checked in that order. For inconclusive, n_needed estimates the
    repetitions per variant that would make the CI's harmful side reach
    the margin, assuming the half-width shrinks like 1/sqrt(n):
    ceil(n * (halfwidth / distance)^2), halfwidth = |estimate - harmful
    CI bound|, distance = |estimate - margin bound|; "unreachable" when the
    estimate itself is beyond the margin. No direction or no ratio: ("",
    None)."""
    if direction not in ("higher", "lower") or any(
            isinstance(x, float) and math.isnan(x) for x in (ratio, lo, hi)):
        return "", None
    if direction == "higher":
        if lo > 1:
            return BETTER, None
        if lo >= 1 - margin:
            return NO_HARM, None
        if hi < 1:
            return HARM, None
        half, dist = ratio - lo, ratio - (1 - margin)
    else:
        if hi < 1:
            return BETTER, None
        if hi <= 1 + margin:
            return NO_HARM, None
        if lo > 1:
            return HARM, None
        half, dist = hi - ratio, (1 + margin) - ratio
    if dist <= 0 or math.isinf(half):
        return INCONCLUSIVE, "unreachable"
    return INCONCLUSIVE, int(math.ceil(n * (half / dist) ** 2))


def compare(base, var, direction, thresholds=Thresholds()):
    """Compare two groups of samples; returns a Comparison."""
    t = thresholds
    b, v = _clean(base), _clean(var)
    sb, sv = describe(b, t.confidence), describe(v, t.confidence)
    warnings = []
    if len(b) == 0 or len(v) == 0:
        warnings.append("no samples in one group")
        return Comparison(len(b), len(v), sb, sv, math.nan, math.nan,
                          math.nan, math.nan, False, "", None, warnings)
    if min(len(b), len(v)) < t.min_n:
        warnings.append(TOO_FEW if t.min_n == 6
                        else f"n<{t.min_n}: too few samples")
    ratio, lo, hi = ratio_ci(b, v, t.confidence, t.resamples, t.seed)
    if sb.median == 0:
        warnings.append("baseline median is 0: ratio undefined"
                        if sv.median != 0 else "both medians are 0")
        if sv.median != 0:
            ratio, lo, hi = math.nan, math.nan, math.nan
    p = mann_whitney_p(b, v)
    verd, needed = verdict(ratio, lo, hi, direction, t.margin,
                           min(len(b), len(v)))
    return Comparison(len(b), len(v), sb, sv, ratio, lo, hi, p,
                      bool(p < t.alpha), verd, needed, warnings)


def aa_false_alarm_rate(values, direction="higher", thresholds=Thresholds(),
                        splits=500, group_size=None, seed=12345):
    """A/A test of the verdict procedure on one variant's samples.

    Splits the samples at random into two pseudo-variants (group_size each,
    default half; without replacement), `splits` times (seeded), and judges
    each split with compare(). A split is a false alarm unless it is judged
    "no harm" or "~" (p >= alpha): the rate is the share of false alarms.
    Returns a dict: rate, splits, group_size, significant_rate (p < alpha),
    verdicts (count per verdict)."""
    x = _clean(values)
    k = group_size or len(x) // 2
    if k < 2 or 2 * k > len(x):
        raise ValueError(f"need at least {2 * max(k, 2)} samples for two "
                         f"groups of {max(k, 2)}, have {len(x)}")
    rng = np.random.default_rng(seed)
    alarms = significant = 0
    verdicts = {}
    for _ in range(splits):
        perm = rng.permutation(len(x))
        c = compare(x[perm[:k]], x[perm[k:2 * k]], direction, thresholds)
        verdicts[c.verdict] = verdicts.get(c.verdict, 0) + 1
        significant += c.significant
        if not (c.verdict == NO_HARM or not c.significant):
            alarms += 1
    return {"rate": alarms / splits, "splits": splits, "group_size": k,
            "significant_rate": significant / splits, "verdicts": verdicts}


# --- tables (pandas), for analyze and report --------------------------------

GROUP = ("cpus", "point", "read_pct", "mailboxes", "miss_pct", "duration_ms",
         "metric", "unit")


def medians_table(samples, thresholds=Thresholds()):
    """samples: DataFrame of samples.csv rows. One row per campaign x
    variant x cpus x point x metric (medians.csv)."""
    import pandas as pd
    rows = []
    if samples.empty:
        return pd.DataFrame(rows)
    keys = ["campaign", "variant"] + list(GROUP)
    for k, g in samples.groupby(keys, sort=False, dropna=False):
        s = describe(g["value"].tolist(), thresholds.confidence)
        d = dict(zip(keys, k))
        d["direction"] = metrics.direction(d["metric"]) or "none"
        d.update(n=s.n, median=s.median, ci_lo=s.ci_lo, ci_hi=s.ci_hi,
                 ci_level=s.ci_level, min=s.min, q25=s.q25, q75=s.q75,
                 max=s.max)
        rows.append(d)
    return pd.DataFrame(rows)


def comparisons_table(samples, baseline, thresholds=Thresholds(),
                      variants=None, pairs=None):
    """One row per comparison x cpus x point x metric (comparisons.csv /
    summary.csv), in samples order. A comparison is a (baseline, variant)
    pair: `pairs` when given, else every variant but `baseline` against
    it. A metric that one side of a pair never measured (lock_stat's on a
    kernel without it) gets no row for that pair."""
    import pandas as pd
    rows = []
    if samples.empty:
        return pd.DataFrame(rows)
    if pairs is None:
        variants = variants or list(dict.fromkeys(samples["variant"]))
        pairs = [(baseline, v) for v in variants if v != baseline]
    measured = set(zip(samples["variant"], samples["metric"]))
    campaign = samples["campaign"].iloc[0]
    for k, g in samples.groupby(list(GROUP), sort=False, dropna=False):
        d0 = dict(zip(GROUP, k))
        for baseline, v in pairs:
            if ((baseline, d0["metric"]) not in measured
                    or (v, d0["metric"]) not in measured):
                continue
            base = g.loc[g["variant"] == baseline, "value"].tolist()
            var = g.loc[g["variant"] == v, "value"].tolist()
            if not var and not base:
                continue
            direction = metrics.direction(d0["metric"])
            c = compare(base, var, direction, thresholds)
            d = {"campaign": campaign, "baseline": baseline, "variant": v}
            d.update(d0)
            d.update(direction=direction or "none", n_base=c.n_base,
                     n_var=c.n_var, median_base=c.base.median,
                     ci_lo_base=c.base.ci_lo, ci_hi_base=c.base.ci_hi,
                     median_var=c.var.median, ci_lo_var=c.var.ci_lo,
                     ci_hi_var=c.var.ci_hi, ratio=c.ratio,
                     ratio_ci_lo=c.ratio_ci_lo, ratio_ci_hi=c.ratio_ci_hi,
                     p_value=c.p_value,
                     significant=int(c.significant),
                     margin=thresholds.margin, verdict=c.verdict,
                     n_needed=c.n_needed, warnings="; ".join(c.warnings))
            rows.append(d)
    return pd.DataFrame(rows)


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


def observer_table(comps, samples, twins, metric, thresholds=Thresholds()):
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
MEDIANS_COLUMNS = ("campaign", "variant", "cpus", "point", "read_pct",
                   "mailboxes", "miss_pct", "duration_ms", "metric", "unit",
                   "direction", "n", "median", "ci_lo", "ci_hi", "ci_level",
                   "min", "q25", "q75", "max")
COMPARISONS_COLUMNS = (
    "campaign", "baseline", "variant", "cpus", "point", "read_pct",
    "mailboxes", "miss_pct", "duration_ms", "metric", "unit", "direction",
    "n_base", "n_var", "median_base", "ci_lo_base", "ci_hi_base",
    "median_var", "ci_lo_var", "ci_hi_var", "ratio", "ratio_ci_lo",
    "ratio_ci_hi", "p_value", "significant", "margin", "verdict",
    "n_needed", "warnings")
