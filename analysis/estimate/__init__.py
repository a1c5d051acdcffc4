# SPDX-License-Identifier: GPL-2.0
"""Estimators: ratios with their CIs (stats.py), the exact rule
for icount (exact.py), the paired ratio, the rank test, Holm, and the
exploratory effects (observer.py, position.py).  Pure functions of
values; they never print and never read files."""
