# SPDX-License-Identifier: GPL-2.0
"""The paired ratio: boots of two variants matched by repetition.

Within a repetition the two variants' boots run next to each other in
time (1-vCPU boots side by side, 2-vCPU boots one after the other), so a
host that is slow for a while is slow for both. The log ratio of each
pair, d_i = log(variant_i / baseline_i), has that shared speed divided
out; the estimate is the one-sample Hodges-Lehmann estimate, the median
of the Walsh averages (d_i + d_j) / 2 for i <= j, and its CI runs between
two order statistics of the Walsh averages picked from the exact null
distribution of the Wilcoxon signed-rank statistic (normal approximation
beyond EXACT_MAX pairs). Hollander, Wolfe and Chicken, *Nonparametric
Statistical Methods* (3rd ed., 2014), section 3.3; Lehmann,
*Nonparametrics* (1975), chapter 4. It assumes the d_i are symmetric
about their centre, and pairing pays only where the two sides of a pair
share their host: analysis/README.md, "Paired ratio".

Pure functions; never prints.
"""

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats as sps

EXACT_MAX = 50


@dataclass(frozen=True)
class Paired:
    n: int  # pairs
    ratio: float
    ci_lo: float
    ci_hi: float
    level: float  # the CI's actual coverage (>= the nominal one)
    p_value: float  # signed-rank test of ratio 1, two-sided


NONE = Paired(0, math.nan, math.nan, math.nan, math.nan, math.nan)


@lru_cache(maxsize=None)
def _counts(n):
    """Number of subsets of {1..n} with each rank sum: W+'s null
    distribution times 2^n."""
    c = np.zeros(n * (n + 1) // 2 + 1)
    c[0] = 1
    for k in range(1, n + 1):
        c[k:] = c[k:] + c[:-k].copy()
    return c


def _cdf(w, n):
    """P(W+ <= w) under the null, for n pairs."""
    if w < 0:
        return 0.0
    if n <= EXACT_MAX:
        c = _counts(n)
        return float(c[:int(w) + 1].sum() / c.sum())
    mu, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return float(sps.norm.cdf((w + 0.5 - mu) / sd))


def _k(n, confidence):
    """The largest k with P(W+ <= k - 1) <= (1 - confidence) / 2: the CI
    is [A_(k), A_(N+1-k)]; 0 when n pairs are too few for any."""
    tail, k = (1 - confidence) / 2, 0
    top = n * (n + 1) // 2
    while k < top and _cdf(k, n) <= tail:
        k += 1
    return k


def walsh(d):
    """The sorted Walsh averages (d_i + d_j) / 2, i <= j."""
    d = np.asarray(d, dtype=float)
    i, j = np.triu_indices(len(d))
    return np.sort((d[i] + d[j]) / 2)


def pairs(base, var):
    """{rep: value} x 2 -> the log ratios of the reps both sides have
    (positive values only), in rep order."""
    reps = sorted(set(base) & set(var))
    return np.array([math.log(var[r] / base[r]) for r in reps
                     if base[r] > 0 and var[r] > 0])


def paired(base, var, confidence=0.95):
    """The paired ratio of {rep: value} dicts; NONE without pairs."""
    d = pairs(base, var)
    n = len(d)
    if n == 0:
        return NONE
    a = walsh(d)
    est = float(np.median(a))
    k = _k(n, confidence)
    if k == 0:
        lo, hi, level = -math.inf, math.inf, 1.0
    else:
        lo, hi = a[k - 1], a[len(a) - k]
        level = 1 - 2 * _cdf(k - 1, n)
    # W+ is the number of positive Walsh averages (zeros count half).
    w = float((a > 0).sum() + 0.5 * (a == 0).sum())
    p = min(1.0, 2 * min(_cdf(math.floor(w), n),
                         1 - _cdf(math.ceil(w) - 1, n)))
    return Paired(n, math.exp(est), math.exp(lo), math.exp(hi), level, p)
