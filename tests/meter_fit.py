# SPDX-License-Identifier: GPL-2.0
"""What the host speed meter explains (tests/meter-measure.sh): for each
point and metric of a merged campaign with the meter on, over the boots
of each variant, the fit of log(metric) on log(host_meter_ns) with one
intercept per variant and a common slope:

- R2: the share of the within-variant spread of log(metric) the meter
  explains (1 - residual SS / within-variant SS);
- the slope with its 95% CI (t);
- for each A/A pair (BASE, BASE~aa) the ratio's 95% CI width, unadjusted
  (Welch t on log values) and adjusted (the variant coefficient of the
  same model fitted to the pair alone, t with n - 3 df);
- whether the meter itself differs between the kernels (before against
  after): a guest that moved it would show here;
- the meter's own CPU time over each boot (meta.json host_meter.cpu_s);
- with a merged campaign with the meter off as well: the ratio of median
  throughput_ops_s (on / off) per point, Mann-Whitney p.

Usage: meter_fit.py ON_DIR [OFF_DIR]   (each with tidy/samples.csv)"""
import json
import os
import sys

import numpy as np
import pandas as pd
from scipy import stats

METRICS = ("throughput_ops_s", "throughput_run", "lookup_lat_median_ns")
COVARIATE = "host_meter_ns"


def wide(path):
    s = pd.read_csv(os.path.join(path, "tidy", "samples.csv"))
    s = s[s.metric.isin(METRICS + (COVARIATE, "steal_pct"))]
    return s.pivot_table(index=["variant", "point", "rep"], columns="metric",
                         values="value").reset_index()


def fit(df, metric):
    """OLS of log(metric) on variant dummies + log(meter): (R2 within,
    slope, slope CI half-width, n)."""
    d = df.dropna(subset=[metric, COVARIATE])
    y, x = np.log(d[metric].to_numpy()), np.log(d[COVARIATE].to_numpy())
    g = pd.get_dummies(d.variant).to_numpy(dtype=float)
    X = np.column_stack([g, x])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    res = y - X @ beta
    within = y - g @ np.linalg.lstsq(g, y, rcond=None)[0]
    dof = len(y) - X.shape[1]
    s2 = res @ res / dof
    cov = s2 * np.linalg.inv(X.T @ X)
    half = stats.t.ppf(0.975, dof) * np.sqrt(cov[-1, -1])
    return 1 - (res @ res) / (within @ within), beta[-1], half, len(y)


def aa_widths(df, metric, base):
    """The A/A ratio's 95% CI width (BASE~aa / BASE), unadjusted and
    adjusted by the meter."""
    d = df[df.variant.isin([base, base + "~aa"])].dropna(subset=[metric, COVARIATE])
    a = np.log(d[d.variant == base][metric])
    b = np.log(d[d.variant == base + "~aa"][metric])
    # Welch's t on the log values (Debian's scipy has no
    # confidence_interval() on its result)
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    dof_w = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    diff, hw = np.mean(b) - np.mean(a), stats.t.ppf(0.975, dof_w) * np.sqrt(va + vb)
    raw = np.exp(diff + hw) - np.exp(diff - hw)
    y = np.log(d[metric].to_numpy())
    X = np.column_stack([np.ones(len(d)), (d.variant != base).to_numpy(float),
                         np.log(d[COVARIATE].to_numpy())])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    res = y - X @ beta
    dof = len(y) - 3
    se = np.sqrt(res @ res / dof * np.linalg.inv(X.T @ X)[1, 1])
    h = stats.t.ppf(0.975, dof) * se
    adj = np.exp(beta[1] + h) - np.exp(beta[1] - h)
    return raw, adj, np.exp(np.mean(b) - np.mean(a)), np.exp(beta[1])


def main(argv):
    on = wide(argv[1])
    print(f"== {argv[1]}: {on.variant.nunique()} variants, "
          f"{on.groupby('variant').rep.nunique().to_dict()} boots")
    for point, p in on.groupby("point"):
        print(f"-- {point}")
        m = p.groupby("variant")[COVARIATE]
        print("   host_meter_ns per variant: " + "; ".join(
            f"{v} median {x.median():.0f} (IQR {x.quantile(.25):.0f}-{x.quantile(.75):.0f})"
            for v, x in m))
        if {"before", "after"} <= set(p.variant):
            a, b = (p[p.variant == v][COVARIATE].dropna() for v in ("before", "after"))
            print(f"   meter after/before: median ratio {b.median() / a.median():.4f}, "
                  f"Mann-Whitney p {stats.mannwhitneyu(a, b).pvalue:.3f}")
        for metric in METRICS:
            if p[metric].notna().sum() < 6:
                continue
            r2, slope, half, n = fit(p, metric)
            line = (f"   {metric}: R2 {r2:.2f} (n {n}), slope {slope:+.2f} "
                    f"[{slope - half:+.2f}, {slope + half:+.2f}]")
            for base in sorted(v for v in p.variant.unique() if v + "~aa" in set(p.variant)):
                raw, adj, r_raw, r_adj = aa_widths(p, metric, base)
                line += (f"; A/A {base}: ratio {r_raw:.3f} CI width {raw:.3f}, "
                         f"adjusted {r_adj:.3f} width {adj:.3f}")
            print(line)
    cost = []
    for cell in sorted(os.listdir(os.path.join(argv[1], "cells"))):
        try:
            with open(os.path.join(argv[1], "cells", cell, "meta.json")) as f:
                meta = json.load(f)
            cost.append(meta["host_meter"]["cpu_s"] / meta["wall_s"])
        except (OSError, KeyError, ValueError, TypeError):
            continue
    if cost:
        print(f"== the meter's CPU time: {100 * np.mean(cost):.3f}% of one core over a boot "
              f"(all its threads; max {100 * max(cost):.3f}%, {len(cost)} boots)")
    if len(argv) > 2:
        off = wide(argv[2])
        print(f"== the meter's cost: {argv[1]} against {argv[2]} (throughput_ops_s)")
        for point in sorted(on.point.unique()):
            a = on[on.point == point].throughput_ops_s.dropna()
            b = off[off.point == point].throughput_ops_s.dropna()
            print(f"   {point}: on/off median ratio {a.median() / b.median():.4f} "
                  f"(n {len(a)}, {len(b)}), Mann-Whitney p {stats.mannwhitneyu(a, b).pvalue:.3f}")


if __name__ == "__main__":
    main(sys.argv)
