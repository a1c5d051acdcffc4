# SPDX-License-Identifier: GPL-2.0
"""The Mann-Whitney U statistic behind every ratio and its CI: U's exact
null distribution (normal approximation beyond n + m = EXACT_MAX), the
Hodges-Lehmann shift of log values with its Moses CI, the one-sided p of
a shift, and the CI's actual coverage.  Pure numpy on clean arrays of
values > 0; analysis.estimate.stats.compare() builds the Comparison from these,
and the simulations in tests/unit call them directly (Hollander & Wolfe,
Nonparametric Statistical Methods, 3rd ed., 4.2-4.3; Lehmann 1963)."""

import functools
import math

import numpy as np
from scipy import stats as sps

EXACT_MAX = 60  # n + m up to which U's null distribution is exact


@functools.lru_cache(maxsize=256)
def _u_cdf(n, m):
    """P(U <= u) for u = 0..n*m under H0 (no ties), as a numpy array: the
    counts are the coefficients of the Gaussian binomial [n+m choose n]_q,
    built as prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i) in integers."""
    size = n * m + 1
    c = np.zeros(size, dtype=object)
    c[0] = 1
    for i in range(1, n + 1):
        s = m + i
        c[s:] = c[s:] - c[:size - s]  # times (1 - q^s)
        for k in range(i, size):  # divided by (1 - q^i)
            c[k] += c[k - i]
    total = sum(c)
    return np.cumsum(c).astype(float) / float(total)


def _cdf(u, n, m):
    """P(U0 <= u) under H0 (no ties), exact up to n + m = EXACT_MAX, then
    the normal approximation with continuity correction."""
    if u < 0:
        return 0.0
    if u >= n * m:
        return 1.0
    if n + m <= EXACT_MAX:
        return float(_u_cdf(n, m)[int(u)])
    mu, sd = n * m / 2, math.sqrt(n * m * (n + m + 1) / 12)
    return float(sps.norm.cdf((u + 0.5 - mu) / sd))


def _p_at_least(u, n, m):
    """P(U0 >= u) under H0; a half-integer u (ties) is rounded down, which
    makes the p-value conservative."""
    return 1.0 - _cdf(math.floor(u + 1e-9) - 1, n, m)


def _k_crit(n, m, tail):
    """The largest k with P(U0 <= k - 1) <= tail (0 when none): the Moses
    CI is [d_(k), d_(nm+1-k)] of the sorted pairwise differences."""
    if n + m <= EXACT_MAX:
        cdf = _u_cdf(n, m)
        return int(np.searchsorted(cdf, tail * (1 + 1e-12), side="right"))
    mu, sd = n * m / 2, math.sqrt(n * m * (n + m + 1) / 12)
    k = int(math.floor(mu - sps.norm.isf(tail) * sd + 0.5))
    while k > 0 and _cdf(k - 1, n, m) > tail:
        k -= 1
    return max(0, k)


def log_diffs(base, var):
    """Sorted pairwise differences log(v_j) - log(b_i) (all values > 0)."""
    return np.sort((np.log(var)[None, :] - np.log(base)[:, None]).ravel())


def shift_ci_many(base, var, confidence=0.95):
    """Hodges-Lehmann shifts of log values with their Moses CIs, for many
    comparisons at once: base (S x n) and var (S x m) arrays of values
    > 0. Returns (shift, lo, hi) arrays of length S (infinite bounds when
    n, m are too small for the level). stats.compare() and the
    simulations in tests/unit/test_verdict_sim.py both go through here."""
    base, var = np.atleast_2d(base), np.atleast_2d(var)
    n, m = base.shape[1], var.shape[1]
    d = np.sort((np.log(var)[:, None, :] - np.log(base)[:, :, None])
                .reshape(len(base), n * m), axis=1)
    shift = np.median(d, axis=1)
    k = _k_crit(n, m, (1 - confidence) / 2)
    if k == 0:
        inf = np.full(len(d), np.inf)
        return shift, -inf, inf
    return shift, d[:, k - 1], d[:, n * m - k]


def p_shift(d, n, m, delta, side):
    """One-sided p of the claim "shift > delta" (side +1) or "shift <
    delta" (side -1): the Mann-Whitney test of the data with the variant
    moved by -delta. Differences equal to delta count half."""
    above = np.count_nonzero(d > delta + 1e-12)
    below = np.count_nonzero(d < delta - 1e-12)
    ties = d.size - above - below
    u = (above if side > 0 else below) + ties / 2
    return _p_at_least(u, n, m)


def ci_level(n, m, confidence):
    """The Moses CI's actual coverage for groups of n and m (>= the
    nominal confidence; 1.0 when the groups are too small for any)."""
    k = _k_crit(n, m, (1 - confidence) / 2)
    return 1.0 if k == 0 else 1 - 2 * _cdf(k - 1, n, m)
