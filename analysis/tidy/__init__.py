# SPDX-License-Identifier: GPL-2.0
"""The tidy tables: parsed files -> rows of DIR/tidy/*.csv
(analysis/TIDY.md): samples, lock_stat rows, histograms, boots, the
cross-check, the medians; and writing them (tidy_csv.py)."""
