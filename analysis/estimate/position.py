# SPDX-License-Identifier: GPL-2.0
"""The position effect: does a boot's place in its repetition's order
move its numbers?

The boots of a repetition run one after the other (two side by side at 1
vCPU), so the first may meet a host still warming up, or a neighbour's
tail (page cache, frequency, another guest's exit), that the later ones
do not. A comparison is fair only if each variant holds each place
equally often (order = "balanced" in the campaign file); this table says
whether the place mattered at all, so that a campaign run in another
order (alternate: with 3 variants the middle one is always in the middle)
can be trusted or not.

Each boot's primary-metric value at a point is divided by the median of
its own (variant, vCPU count, point) group, so that variants and points
pool around 1 (inverted for a lower-is-better metric: above 1 is better
everywhere); a boot's normalised value is the median of its points'
(the unit of replication is a boot: the points of one boot share its
host and are not independent). Per vCPU count and position: the number
of boots, the median of their normalised values with its 95% CI
(analysis.estimate.stats.median_ci), which variants held the position how often,
and a Kruskal-Wallis test across positions (Kruskal and Wallis, JASA 47,
1952). Boots whose position is unknown (pos 0: manifests from before
positions were recorded) are left out.

Pure functions; never prints.
"""

import math

import numpy as np
from scipy import stats as sps

from analysis import metrics
from analysis.estimate.stats import median_ci

COLUMNS = ("cpus", "pos", "n", "median", "ci_lo", "ci_hi", "p_kruskal",
           "variants")
ALPHA = 0.05


def _kruskal(groups):
    """Kruskal-Wallis p across the non-empty groups; NaN with fewer than
    two of them or when every value is the same."""
    groups = [g for g in groups if len(g)]
    if len(groups) < 2:
        return math.nan
    if len({float(v) for g in groups for v in g}) < 2:
        return math.nan
    try:
        return float(sps.kruskal(*groups).pvalue)
    except ValueError:
        return math.nan


def _boot_values(samples, boots, metric_for):
    """{cpus: [(pos, variant, normalised value), ...]}, one entry per boot
    with a position and a usable value."""
    by_id = {}
    for b in boots:
        try:
            pos = int(b.pos)
        except (TypeError, ValueError):
            continue
        if pos > 0:
            by_id[b.id] = (b.variant, int(b.cpus), pos)
    if samples is None or samples.empty or not by_id:
        return {}
    s = samples[samples["cell"].isin(by_id)]  # column cell: the boot's id
    if s.empty:
        return {}
    want = {}
    for cpus, point in s[["cpus", "point"]].drop_duplicates().itertuples(
            index=False):
        want[(int(cpus), point)] = metric_for(int(cpus), point)
    keep = [want.get((int(cp), pt)) == m for cp, pt, m in
            zip(s["cpus"], s["point"], s["metric"])]
    s = s[keep]
    s = s[np.isfinite(s["value"].astype(float))]
    per_boot = {}
    for (variant, cpus, point), g in s.groupby(["variant", "cpus", "point"],
                                                 sort=False):
        med = float(np.median(g["value"].astype(float)))
        if not math.isfinite(med) or med <= 0:
            continue
        # Oriented so that above 1 is better whatever the metric: a slow
        # place lowers a throughput and raises a latency, and the points of
        # one boot must not cancel each other out.
        lower = metrics.direction(g["metric"].iloc[0]) == "lower"
        for boot, v in zip(g["cell"], g["value"].astype(float)):
            if v > 0:
                per_boot.setdefault(boot, []).append(med / v if lower
                                                     else v / med)
    out = {}
    for boot, vals in per_boot.items():
        variant, cpus, pos = by_id[boot]
        out.setdefault(cpus, []).append((pos, variant, float(np.median(vals))))
    return out


def position_table(samples, boots, metric_for, confidence=0.95):
    """samples: DataFrame of samples.csv rows; boots: rundir.Boot (or
    anything with .id, .variant, .cpus, .pos); metric_for(cpus, point) ->
    the metric to look at. One row per vCPU count x position (COLUMNS);
    n counts boots; p_kruskal is the vCPU count's, on every row of it."""
    import pandas as pd
    order = []  # variants in the order the boots name them
    for b in boots:
        if b.variant not in order:
            order.append(b.variant)
    rows = []
    for cpus, values in sorted(_boot_values(samples, boots, metric_for).items()):
        positions = sorted({p for p, _v, _x in values})
        groups = {p: [x for q, _v, x in values if q == p] for p in positions}
        p = _kruskal(list(groups.values()))
        for pos in positions:
            med, lo, hi, _level = median_ci(groups[pos], confidence)
            held = {}
            for q, v, _x in values:
                if q == pos:
                    held[v] = held.get(v, 0) + 1
            text = ", ".join(f"{v} {held[v]}" for v in order if v in held)
            rows.append({"cpus": cpus, "pos": pos, "n": len(groups[pos]),
                         "median": med, "ci_lo": lo, "ci_hi": hi,
                         "p_kruskal": p, "variants": text})
    return pd.DataFrame(rows, columns=list(COLUMNS))
