# SPDX-License-Identifier: GPL-2.0
"""Statistics of benchmark samples: medians with confidence intervals,
the variant/baseline ratio, and the verdict. Never prints; warnings are
returned as data (benchstat's benchmath, in spirit).

- Median CI: distribution-free, from order statistics (binomial): the
  narrowest symmetric pair (x_(l), x_(n+1-l)) covering the median with
  probability >= 95%. With n < 6 no pair reaches 95%: [min, max] is
  returned with its actual (lower) level.
- Ratio: the Hodges-Lehmann estimate of the shift of log(value) between
  the groups, ratio = exp(shift), with the distribution-free (Moses) CI
  from the Mann-Whitney statistic: the k-th smallest and largest of the
  n*m pairwise differences log(v_j) - log(b_i), k from U's exact null
  distribution (normal approximation beyond n + m = 60). The p-value is
  the same test's, so p and CI always agree. Why not the ratio of
  medians: on this host boots run at one of two speeds, and the median of
  8 boots jumps between them; HL uses every pair (Hollander & Wolfe,
  Nonparametric Statistical Methods, 3rd ed., 4.2-4.3; Lehmann 1963).
  U's distribution, the shift and its CI are analysis.estimate.mann_whitney.
- Verdict against the margin m, for the metric's direction (verdict()).

Holm across a table is analysis.estimate.holm; medians.csv is analysis.estimate.medians;
the thresholds every verdict is judged by are analysis.estimate.thresholds.
"""

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from analysis.estimate import mann_whitney
from analysis.estimate.thresholds import Thresholds

NO_HARM, BETTER, WORSE, HARM = "no harm", "better", "worse", "harm"
INCONCLUSIVE = "inconclusive"
TOO_FEW = "inconclusive (n<6)"
#: the typical boot is favourable, the mean over boots is not: some
#: boots did worse than the typical one (mean_ratio_ci)
TAIL = "inconclusive (tail)"
#: the verdicts that decide something, favourable first
DECIDED = (BETTER, NO_HARM, WORSE, HARM)
FAVOURABLE = (BETTER, NO_HARM)
UNFAVOURABLE = (WORSE, HARM)


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
    ratio: float  # exp(Hodges-Lehmann shift of log values)
    ratio_ci_lo: float
    ratio_ci_hi: float
    p_value: float  # two-sided Mann-Whitney
    significant: bool
    verdict: str  # the whole label; "" when the metric has no direction
    n_needed: object  # int, "unreachable" or None
    p_claim: float = math.nan  # the p of the claim the verdict makes
    warnings: list = field(default_factory=list)
    # the ratio of the means over boots (every boot counts) and its CI
    mean_ratio: float = math.nan
    mean_ci_lo: float = math.nan
    mean_ci_hi: float = math.nan
    typical: str = ""  # the Hodges-Lehmann verdict alone (the typical boot)


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
    lo, hi, level = _median_ranks(n, confidence)
    return med, float(x[lo - 1]), float(x[hi - 1]), level


@functools.lru_cache(maxsize=1024)
def _median_ranks(n, confidence):
    """(lo, hi, level): the 1-based ranks of median_ci's bounds for n
    values, and their coverage; (1, n, its level) where no pair reaches
    the confidence.  Depends on n alone: computed once (the simulations
    call it millions of times)."""
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
    return best or (1, n, float(1 - 2 * 0.5 ** n))


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



def mann_whitney_p(base, var):
    """Two-sided Mann-Whitney p (the same test the CI inverts)."""
    b, v = _clean(base), _clean(var)
    if len(b) == 0 or len(v) == 0:
        return math.nan
    d = np.sort((v[None, :] - b[:, None]).ravel())
    n, m = len(b), len(v)
    return min(1.0, 2 * min(mann_whitney.p_shift(d, n, m, 0.0, 1),
                            mann_whitney.p_shift(d, n, m, 0.0, -1)))


# --- the verdict -------------------------------------------------------------

def _goodness(direction):
    """+1 when a ratio above 1 is good (higher is better), -1 otherwise."""
    return 1 if direction == "higher" else -1


def margin_shift(direction, margin):
    """The margin as a log shift on the harmful side: log(1 - m) for
    higher-is-better metrics, log(1 + m) for lower-is-better ones."""
    return math.log(1 - margin) if direction == "higher" else \
        math.log(1 + margin)


def verdict(ratio, lo, hi, direction, margin, n, min_n=6):
    """(label, n_needed) for a ratio variant/baseline and its CI.

    higher-better (throughput):       lower-better (latency, waits...):
      better:  lo > 1                   better:  hi < 1
      no harm: lo >= 1 - m              no harm: hi <= 1 + m
      harm:    hi < 1 - m               harm:    lo > 1 + m
      worse:   hi < 1                   worse:   lo > 1
      else inconclusive (n≈N)           else inconclusive (n≈N)
    checked in that order: `no harm` is non-inferiority (even when
    significantly worse within the margin), `harm` means the whole CI lies
    beyond the margin, `worse` that it lies on the harmful side of 1 but
    reaches into the margin. Fewer than min_n boots in a group: no
    verdict, TOO_FEW. For inconclusive, n_needed estimates the boots per
    variant that would decide (no harm, or worse), assuming the CI's
    half-width shrinks like 1/sqrt(n). No direction or no ratio: ("",
    None)."""
    if direction not in ("higher", "lower") or any(
            isinstance(x, float) and math.isnan(x) for x in (ratio, lo, hi)):
        return "", None
    if n < min_n:
        return TOO_FEW, None
    g = _goodness(direction)
    # log space, oriented so that positive is good
    est = g * math.log(ratio)
    glo, ghi = sorted((g * _log(lo), g * _log(hi)))
    bound = g * margin_shift(direction, margin)  # < 0
    if glo > 0:
        return BETTER, None
    if glo >= bound:
        return NO_HARM, None
    if ghi < bound:
        return HARM, None
    if ghi < 0:
        return WORSE, None
    factors = []
    if est > bound and math.isfinite(glo):  # towards no harm
        factors.append(((est - glo) / (est - bound)) ** 2)
    if est < 0 and math.isfinite(ghi):  # towards worse
        factors.append(((ghi - est) / -est) ** 2)
    if not factors:
        return INCONCLUSIVE, "unreachable"
    need = int(math.ceil(n * min(factors)))
    return f"{INCONCLUSIVE} (n≈{need})", need


def _log(x):
    if x <= 0:
        return -math.inf
    return math.inf if math.isinf(x) else math.log(x)


def claims(direction, margin):
    """label -> (log-shift bound, side) of the one-sided claim it makes:
    side +1 "shift > bound", -1 "shift < bound"."""
    g, ms = _goodness(direction), margin_shift(direction, margin)
    return {BETTER: (0.0, g), NO_HARM: (ms, g), WORSE: (0.0, -g),
            HARM: (ms, -g)}


def p_claim(d, n, m, label, direction, margin):
    """The two-sided-equivalent p of the claim a label makes (compare it
    with alpha: the 95% CI decides at one-sided 2.5%); for an undecided
    label the smallest over the four claims."""
    cl = claims(direction, margin)
    want = [cl[label]] if label in cl else cl.values()
    return min(min(1.0, 2 * mann_whitney.p_shift(d, n, m, b, s))
               for b, s in want)


def mean_ratio_ci(b, v, confidence):
    """(ratio, lo, hi) of mean(v) / mean(b), every boot counting: the CI
    is Welch's t on the log of the ratio of means, its variance by the
    delta method (var_b / (n mean_b^2) + var_v / (m mean_v^2)) with
    Welch-Satterthwaite's degrees of freedom.  One boot collapsed to a
    twentieth drags the mean down by 1/n of the whole and widens the CI
    by its spread: a favourable claim cannot stand on it (analysis/
    README.md, "Every boot counts")."""
    n, m = len(b), len(v)
    mb, mv = float(np.mean(b)), float(np.mean(v))
    if n < 2 or m < 2 or mb <= 0 or mv <= 0:
        return math.nan, math.nan, math.nan
    est = math.log(mv / mb)
    vb = float(np.var(b, ddof=1)) / n / mb ** 2
    vv = float(np.var(v, ddof=1)) / m / mv ** 2
    se2 = vb + vv
    if se2 == 0:
        return math.exp(est), math.exp(est), math.exp(est)
    df = se2 ** 2 / ((vb ** 2 / (n - 1) if vb else 0)
                     + (vv ** 2 / (m - 1) if vv else 0))
    h = float(sps.t.ppf(1 - (1 - confidence) / 2, df)) * math.sqrt(se2)
    return math.exp(est), math.exp(est - h), math.exp(est + h)


def combine(typical, mean_label):
    """The verdict of the typical boot (Hodges-Lehmann) and of the mean
    over boots together: a favourable claim needs both (an intersection-
    union test: no extra error), `better` only when both say it; an
    unfavourable one stands on the typical boot, whose test is the more
    powerful; a favourable typical boot with a mean that is not is
    TAIL."""
    if typical in FAVOURABLE:
        if mean_label not in FAVOURABLE:
            return TAIL
        return BETTER if typical == mean_label == BETTER else NO_HARM
    return typical


def compare(base, var, direction, thresholds=Thresholds()):
    """Compare two groups of samples (one per boot); returns a
    Comparison. The ratio and its CI are exp() of the Hodges-Lehmann
    shift of log values and its Moses CI (the typical boot); the verdict
    also asks the ratio of means (every boot, mean_ratio_ci) before it
    says anything favourable (combine); values must be > 0 (both groups
    all 0: ratio 1, no change)."""
    t = thresholds
    b, v = _clean(base), _clean(var)
    sb, sv = describe(b, t.confidence), describe(v, t.confidence)
    warnings = []
    nan = math.nan
    if len(b) == 0 or len(v) == 0:
        warnings.append("no samples in one group")
        return Comparison(len(b), len(v), sb, sv, nan, nan, nan, nan, False,
                          "", None, nan, warnings)
    n, m = len(b), len(v)
    if np.all(b == 0) and np.all(v == 0):
        warnings.append("every value is 0 on both sides")
        b, v = np.ones(n), np.ones(m)
    elif np.any(b <= 0) or np.any(v <= 0):
        warnings.append("baseline is 0: ratio undefined" if np.all(b == 0)
                        else "a value is 0 or negative: no ratio")
        return Comparison(n, m, sb, sv, nan, nan, nan,
                          mann_whitney_p(b, v), False, "", None, nan,
                          warnings)
    d = mann_whitney.log_diffs(b, v)
    shift, lo, hi = (float(x[0]) for x in
                     mann_whitney.shift_ci_many(b, v, t.confidence))
    ratio, rlo, rhi = math.exp(shift), math.exp(lo), math.exp(hi)
    p = min(1.0, 2 * min(mann_whitney.p_shift(d, n, m, 0.0, 1),
                         mann_whitney.p_shift(d, n, m, 0.0, -1)))
    typical, needed = verdict(ratio, rlo, rhi, direction, t.margin,
                              min(n, m), t.min_n)
    mr, mlo, mhi = mean_ratio_ci(b, v, t.confidence)
    mean_label, _ = verdict(mr, mlo, mhi, direction, t.margin, min(n, m),
                            t.min_n)
    label = combine(typical, mean_label)
    if label == TAIL:
        needed = None
        warnings.append(f"the typical boot says {typical}, the mean over "
                        f"boots {mr:.3f} [{mlo:.3f}, {mhi:.3f}] does not: "
                        f"some boots did worse")
    pc = (p_claim(d, n, m, label, direction, t.margin)
          if direction in ("higher", "lower") else nan)
    return Comparison(n, m, sb, sv, ratio, rlo, rhi, p, bool(p < t.alpha),
                      label, needed, pc, warnings, mr, mlo, mhi, typical)



def aa_false_alarm_rate(values, direction="higher", thresholds=Thresholds(),
                        splits=500, group_size=None, seed=12345):
    """A/A test of the verdict procedure on one variant's samples.

    Splits the samples at random into two pseudo-variants (group_size each,
    default half; without replacement), `splits` times (seeded), and judges
    each split with compare(). A split is a false alarm when its verdict
    claims a difference (better, worse or harm). Returns a dict: rate,
    splits, group_size, significant_rate (p < alpha), verdicts (count per
    verdict)."""
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
        alarms += c.verdict in (BETTER, WORSE, HARM)
    return {"rate": alarms / splits, "splits": splits, "group_size": k,
            "significant_rate": significant / splits, "verdicts": verdicts}
