# SPDX-License-Identifier: GPL-2.0
"""The wall-clock comparison adjusted by the host's speed: each boot's
value read at a common host speed, with the host speed meter
(host_meter_ns, guest/meter/README.md) as a covariate on the log scale.

The model, per point and metric: log(value) = side + slope *
log(host_meter_ns) + noise, one intercept per side (baseline, variant)
and one slope for both (the host slows every kernel alike; the meter is
the host's, which no kernel moves: guest/meter/README.md).

- slope: pooled within the sides (ordinary least squares on the values
  centred per side), with its standard error from the residuals (n + m -
  3 degrees of freedom) and the share of the within-side spread it
  explains (r2);
- where the slope's CI at the verdict's confidence excludes 0 (the meter
  explains the host here), each boot's log value is moved to the mean
  host speed of all boots, log(value) - slope * (log(meter) - mean), and
  stats.compare judges the moved values as it judges raw ones (Hodges-
  Lehmann ratio, Moses CI, the mean over boots);
- the slope's own uncertainty is carried into both CIs: the estimate
  moves by slope * (the sides' difference in mean log meter), so each
  half-width on the log scale becomes sqrt(h^2 + (q * se(slope) *
  |that difference|)^2), q the t quantile; then the verdict is taken
  again (stats.verdict, stats.combine).
- where it does not (or where a boot lacks the meter), stats.compare on
  the raw values, and `why` says so.

Simulated (tests/unit/test_adjusted_sim.py): false `no harm` at the
margin, A/A false claims and power, with the meter explaining none,
half or most of the spread.  Pure functions; never prints."""

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from analysis.estimate import stats

from analysis.estimate.thresholds import Thresholds

#: the covariate
METER = "host_meter_ns"


@dataclass(frozen=True)
class Fit:
    """The host-speed fit of one comparison."""
    used: bool  # the values were adjusted
    why: str  # what was done, in words (the answer's)
    slope: float = math.nan
    slope_se: float = math.nan
    r2: float = math.nan  # share of the within-side spread explained
    n: int = 0


NONE = Fit(False, "no host speed meter")


def fit_slope(groups):
    """(slope, se, r2, dof) of log y on log c pooled within groups, each
    group a pair of arrays (log y, log c)."""
    sxx = sxy = syy = 0.0
    n = 0
    for ly, lc in groups:
        dy, dc = ly - ly.mean(), lc - lc.mean()
        sxx += float(dc @ dc)
        sxy += float(dc @ dy)
        syy += float(dy @ dy)
        n += len(ly)
    dof = n - len(groups) - 1
    if sxx <= 0 or dof < 1:
        return math.nan, math.nan, math.nan, dof
    b = sxy / sxx
    res = max(syy - b * sxy, 0.0)
    se = math.sqrt(res / dof / sxx)
    return b, se, (1 - res / syy) if syy > 0 else math.nan, dof


def _widen(est, lo, hi, extra):
    """The CI (lo, hi) around est, each log half-width h made
    sqrt(h^2 + extra^2)."""
    if not all(map(math.isfinite, (est, lo, hi))) or min(est, lo, hi) <= 0:
        return lo, hi
    le = math.log(est)
    dlo, dhi = le - math.log(lo), math.log(hi) - le
    return (math.exp(le - math.hypot(dlo, extra)),
            math.exp(le + math.hypot(dhi, extra)))


def compare(base, cbase, var, cvar, direction, thresholds=Thresholds()):
    """(stats.Comparison, Fit): the comparison of base and var (one value
    per boot) adjusted by each boot's host meter reading (cbase, cvar,
    the same lengths; None or NaN where not measured) where the meter
    explains the host, else stats.compare's on the raw values."""
    t = thresholds
    b, v = np.asarray(base, dtype=float), np.asarray(var, dtype=float)
    cb = np.asarray([np.nan if x is None else x for x in cbase], dtype=float)
    cv = np.asarray([np.nan if x is None else x for x in cvar], dtype=float)
    def raw():
        return stats.compare(base, var, direction, t)
    if len(cb) != len(b) or len(cv) != len(v) or not len(b) or not len(v):
        return raw(), NONE
    if not (np.isfinite(cb).any() or np.isfinite(cv).any()):
        return raw(), NONE
    if not (np.isfinite(cb).all() and np.isfinite(cv).all()):
        missing = int((~np.isfinite(cb)).sum() + (~np.isfinite(cv)).sum())
        return raw(), Fit(False, f"the host speed meter is missing for {missing} of "
                               f"{len(cb) + len(cv)} boots")
    if (b <= 0).any() or (v <= 0).any() or (cb <= 0).any() or (cv <= 0).any() \
            or not (np.isfinite(b).all() and np.isfinite(v).all()):
        return raw(), Fit(False, "a value is 0, negative or not a number")
    lb, lv, lcb, lcv = np.log(b), np.log(v), np.log(cb), np.log(cv)
    slope, se, r2, dof = fit_slope([(lb, lcb), (lv, lcv)])
    n = len(b) + len(v)
    if not math.isfinite(slope) or not math.isfinite(se):
        return raw(), Fit(False, "the host's speed did not vary", n=n)
    q = float(sps.t.ppf(1 - (1 - t.confidence) / 2, dof))
    if se == 0 or abs(slope) <= q * se:
        return raw(), Fit(False, f"the host's speed does not explain the spread "
                               f"between boots here (slope {slope:+.2f} +- {q * se:.2f}, "
                               f"r2 {r2:.2f})", slope, se, r2, n)
    centre = np.concatenate([lcb, lcv]).mean()
    ab = np.exp(lb - slope * (lcb - centre))
    av = np.exp(lv - slope * (lcv - centre))
    c = stats.compare(ab, av, direction, t)
    extra = q * se * abs(lcv.mean() - lcb.mean())
    rlo, rhi = _widen(c.ratio, c.ratio_ci_lo, c.ratio_ci_hi, extra)
    mlo, mhi = _widen(c.mean_ratio, c.mean_ci_lo, c.mean_ci_hi, extra)
    typical, needed = stats.verdict(c.ratio, rlo, rhi, direction, t.margin,
                                    min(len(b), len(v)), t.min_n)
    mean_label, _ = stats.verdict(c.mean_ratio, mlo, mhi, direction, t.margin,
                                  min(len(b), len(v)), t.min_n)
    label = stats.combine(typical, mean_label) if direction in ("higher", "lower") else ""
    if label == stats.TAIL:
        needed = None
    c = replace(c, base=stats.describe(b, t.confidence),
                var=stats.describe(v, t.confidence), ratio_ci_lo=rlo, ratio_ci_hi=rhi,
                mean_ci_lo=mlo, mean_ci_hi=mhi, verdict=label, n_needed=needed,
                typical=typical)
    return c, Fit(True, f"adjusted to the mean host speed (slope {slope:+.2f} +- "
                        f"{q * se:.2f}, r2 {r2:.2f})", slope, se, r2, n)
