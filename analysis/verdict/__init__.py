# SPDX-License-Identifier: GPL-2.0
"""Verdicts: which pairs are compared (compare.py), the comparisons
table with Holm and the primary cells (verdicts.py), the guards that keep
a normalisation, the host or a lost boot from hiding a harm (guards.py),
lockdep safety (safety.py), the verdict table every text renders
(table.py) and the observer effect of lock statistics (observer.py)."""
