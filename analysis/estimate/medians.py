# SPDX-License-Identifier: GPL-2.0
"""medians.csv: samples.csv rows -> one row per campaign x variant x
vCPU count x point x metric, the median with its CI
(analysis.estimate.stats.describe) and the spread.  The table, not the
statistics, so it is apart from analysis.estimate.stats; GROUP, the columns that
make one cell of a comparison, is shared with the comparisons table
(analysis.verdict.verdicts)."""

from analysis import metrics
from analysis.estimate.stats import describe
from analysis.estimate.thresholds import Thresholds

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


MEDIANS_COLUMNS = ("campaign", "variant", "cpus", "point", "read_pct",
                   "mailboxes", "miss_pct", "duration_ms", "metric", "unit",
                   "direction", "n", "median", "ci_lo", "ci_hi", "ci_level",
                   "min", "q25", "q75", "max")
