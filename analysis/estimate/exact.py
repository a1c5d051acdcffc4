# SPDX-License-Identifier: GPL-2.0
"""The verdict for exact data: cells whose clock is QEMU's instruction
count (icount, analysis/primary.py), where boots of one kernel agree to a
few parts per million and a rank test would waste that (its CI at n = 3
a side is [min, max] of the 9 pairwise ratios at 90%, whatever the
spread).

The rule (analysis/README.md, "Exact data"):

- the estimate is the ratio of the two sides' means (every boot counts;
  the baseline's boots pooled with its A/A control's, the same kernel
  booted again);
- its interval is the estimate times exp(+-w): w is the larger of the
  range of the baseline's log values (pooled with its A/A control's)
  and VAR_WEIGHT times the range of the variant's own, never below
  FLOOR (a part per million: the counters' resolution).  The range of
  n boots is not a confidence interval: the variant's counts 1.5 times
  because its mean is judged on its own n boots, where a noisier kernel
  than the baseline would otherwise be held to the baseline's spread
  (simulated coverage: tests/unit/test_exact_sim.py);
- the A/A control against its baseline is judged on each side's own
  range (w = the larger of the two, not their pooled range), so that an
  offset between two boots of one kernel beyond both their spreads reads
  as a difference: a check that can fail (a pooled range holds the
  offset itself, and its interval always held 1);
- the verdict is stats.verdict on that interval, against the margin.

Pure functions; never prints."""

import math

import numpy as np

from analysis.estimate import stats

from analysis.estimate.thresholds import EXACT_MIN_N, Thresholds

#: the interval's least half-width, relative: counts of about 10^5 to
#: 10^9 resolve a few parts per million at best
FLOOR = 1e-6
#: the fewest boots a side (and in the A/A pool) for a verdict
MIN_N = EXACT_MIN_N
#: how much the variant's own range counts (module docstring)
VAR_WEIGHT = 1.5
#: added to w: two sides each constant at opposite ends of their range
#: give |log ratio| = w, which rounding must not push past the bound
EPS = 1e-12


def _logs(values):
    x = stats._clean(values)
    return np.log(x[x > 0]) if len(x) else x


def log_range(*groups):
    """max - min of the log values of the groups together (0 for fewer
    than two values)."""
    x = np.concatenate([_logs(g) for g in groups]) if groups else []
    return float(x.max() - x.min()) if len(x) > 1 else 0.0


def half_width(base, var, aa=None, control=False):
    """w: the interval's half-width in logs (module docstring).  aa: the
    baseline's A/A control's values (pooled with the baseline's);
    control: var is that control itself, judged against the baseline on
    each side's own range."""
    b = np.asarray(_logs(base))[None]
    v = np.asarray(_logs(var))[None]
    a = np.asarray(_logs(aa if aa is not None and not control else []))[None]
    return float(log_interval_many(b, v, a, control)[1][0])


def _ptp(x):
    return np.ptp(x, axis=1) if x.shape[1] > 1 else np.zeros(len(x))


def log_interval_many(lb, lv, la=None, control=False):
    """(d, w) per row of log values: lb, lv, la (k x n arrays of the
    baseline's, the variant's and the A/A control's log values; la may
    have 0 columns); d = log(mean(variant) / mean(baseline with A/A)),
    w the half-width (module docstring).  The one computation behind
    compare(), vectorised so that the simulations
    (tests/unit/test_exact_sim.py) run the rule itself."""
    if la is None or control:
        la = np.zeros((len(lb), 0))
    pooled = np.concatenate([lb, la], axis=1)
    d = (np.log(np.mean(np.exp(lv - lv[:, :1]), axis=1)) + lv[:, 0]
         - np.log(np.mean(np.exp(pooled - pooled[:, :1]), axis=1))
         - pooled[:, 0])
    if control:
        w = np.maximum(_ptp(lb), _ptp(lv))
    else:
        w = np.maximum(_ptp(pooled), VAR_WEIGHT * _ptp(lv))
    return d, np.maximum(w, FLOOR) + EPS


def compare(base, var, direction, thresholds=Thresholds(), aa=None,
            min_n=MIN_N, control=False):
    """A stats.Comparison of two groups of exact values (module
    docstring): ratio = mean(var) / mean(base, with aa's boots), CI =
    ratio * exp(+-w), no p-value (a bound from the measured ranges, not
    a test; `significant`: the interval excludes 1).  aa: the
    baseline's A/A control's values; control=True: var is that control,
    judged against the baseline alone on each side's own range."""
    b, v = stats._clean(base), stats._clean(var)
    a = stats._clean(aa) if aa is not None and not control else np.array([])
    sb = stats.describe(np.concatenate([b, a]), thresholds.confidence)
    sv = stats.describe(v, thresholds.confidence)
    nan = math.nan
    if len(b) == 0 or len(v) == 0:
        return stats.Comparison(len(b) + len(a), len(v), sb, sv, nan, nan, nan, nan,
                                False, "", None, nan,
                                ["no samples in one group"])
    if np.any(b <= 0) or np.any(v <= 0) or np.any(a <= 0):
        return stats.Comparison(len(b) + len(a), len(v), sb, sv, nan, nan, nan, nan,
                                False, "", None, nan,
                                ["a value is 0 or negative: no ratio"])
    pooled = np.concatenate([b, a])
    # In logs: the ratio and the ranges from the same log values, so that
    # |log ratio| <= w holds to the last bit where it holds at all.
    d, w = (float(x[0]) for x in log_interval_many(
        np.log(b)[None], np.log(v)[None], np.log(a)[None], control))
    ratio, lo, hi = math.exp(d), math.exp(d - w), math.exp(d + w)
    label, _ = stats.verdict(ratio, lo, hi, direction, thresholds.margin,
                             min(len(pooled), len(v)), min_n)
    if label == stats.TOO_FEW:
        label = f"{stats.INCONCLUSIVE} (n<{min_n})"
    warnings = []
    if not control and not len(a):
        warnings.append("no A/A control boots: the baseline's spread is "
                        "its own boots' range")
    return stats.Comparison(len(pooled), len(v), sb, sv, ratio, lo, hi, nan,
                            lo > 1 or hi < 1, label, None, nan, warnings,
                            ratio, lo, hi, label)


def ppm_s(w):
    """A relative half-width in words: '3.1 ppm', '0.12%'."""
    return f"{w * 1e6:.2g} ppm" if w < 1e-4 else f"{100 * w:.2g}%"


def difference_s(base_mean, var_mean, unit):
    """'+8.1 insn (+0.37%)': the variant's mean minus the baseline's, in
    the metric's unit and relative."""
    d = var_mean - base_mean
    rel = d / base_mean if base_mean else math.nan
    return f"{d:+.3g} {unit} ({100 * rel:+.2f}%)"
