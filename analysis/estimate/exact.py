# SPDX-License-Identifier: GPL-2.0
"""The verdict for exact data: cells whose clock is QEMU's instruction
count (icount, analysis/primary.py), where boots of one kernel agree to a
few parts per million and a rank test would waste that (its CI at n = 3
a side is [min, max] of the 9 pairwise ratios at 90%, whatever the
spread).

The rule (analysis/README.md, "Exact data"):

- the estimate is the ratio of the two sides' means (every boot counts);
- its interval is the estimate times exp(+-w), where w is the widest
  spread of log values the campaign shows for the cell: the range of the
  baseline's boots pooled with its A/A control's (the same image booted
  again), and the range of the variant's own boots; never below
  FLOOR (a part per million: the counters' resolution);
- the verdict is stats.verdict on that interval, against the margin.

Why it cannot call an A/A pair different: judged against each other,
the baseline and its control pool into one range, and the difference of
two means of values inside a range is inside that range: |log ratio| <=
w, so the interval always holds 1, and better, worse and harm are out of
reach whatever the data.  Coverage for a real pair is simulated
(tests/unit/test_exact_sim.py prints the table).

Pure functions; never prints."""

import math

import numpy as np

from analysis.estimate import stats

#: the interval's least half-width, relative: counts of about 10^5 to
#: 10^9 resolve a few parts per million at best
FLOOR = 1e-6
#: the fewest boots a side (and in the A/A pool) for a verdict
MIN_N = 3
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


def half_width(base, var, aa=None, pooled=False):
    """w: the widest log spread of the cell (module docstring).  aa: the
    baseline's A/A control's values (pooled with the baseline's);
    pooled: var is that control itself (pooled with the baseline);
    neither: each side's own range."""
    if pooled:
        spreads = [log_range(base, var)]
    elif aa is not None and len(aa):
        spreads = [log_range(base, aa), log_range(var)]
    else:
        spreads = [log_range(base), log_range(var)]
    return max(spreads + [FLOOR]) + EPS


def compare(base, var, direction, thresholds=stats.Thresholds(), aa=None,
            min_n=MIN_N, pooled=False):
    """A stats.Comparison of two groups of exact values (module
    docstring): ratio = mean(var) / mean(base), CI = ratio * exp(+-w),
    no p-value (it is a bound from the measured spread, not a test).
    aa: the baseline's A/A control's values; pooled=True: var is that
    control (the A/A pair judged against the baseline)."""
    b, v = stats._clean(base), stats._clean(var)
    sb = stats.describe(b, thresholds.confidence)
    sv = stats.describe(v, thresholds.confidence)
    nan = math.nan
    if len(b) == 0 or len(v) == 0:
        return stats.Comparison(len(b), len(v), sb, sv, nan, nan, nan, nan,
                                False, "", None, nan,
                                ["no samples in one group"])
    if np.any(b <= 0) or np.any(v <= 0):
        return stats.Comparison(len(b), len(v), sb, sv, nan, nan, nan, nan,
                                False, "", None, nan,
                                ["a value is 0 or negative: no ratio"])
    a = stats._clean(aa) if aa is not None else np.array([])
    # In logs: the ratio and the ranges from the same log values, so that
    # |log ratio| <= w holds to the last bit where it holds at all.
    d = float(np.log(v.mean()) - np.log(b.mean()))
    w = half_width(b, v, a, pooled)
    ratio, lo, hi = math.exp(d), math.exp(d - w), math.exp(d + w)
    label, _ = stats.verdict(ratio, lo, hi, direction, thresholds.margin,
                             min(len(b), len(v)), min_n)
    if label == stats.TOO_FEW:
        label = f"{stats.INCONCLUSIVE} (n<{min_n})"
    warnings = [f"exact (icount): spread +-{ppm_s(w)} from "
                f"{len(b) + len(v) + len(a)} boots"]
    if not pooled and not len(a):
        warnings.append("no A/A control boots: the spread is each side's "
                        "own range")
    return stats.Comparison(len(b), len(v), sb, sv, ratio, lo, hi, nan,
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
