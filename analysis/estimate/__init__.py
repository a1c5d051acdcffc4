# SPDX-License-Identifier: GPL-2.0
"""Estimators: the thresholds they are judged by (thresholds.py),
ratios with their CIs (stats.py), the medians table (medians.py), the
exact rule for icount (exact.py), the paired ratio, the rank test, Holm,
and the position effect (position.py).  Pure functions of values; they
never print and never read files."""
