# SPDX-License-Identifier: GPL-2.0
"""The tidy tables: parsed files -> rows of DIR/tidy/*.csv
(analysis/TIDY.md): samples, lock_stat rows, histograms, boots, the
cross-check; and a table just built as the data frame the judging steps
read (tidy_csv.py).  The medians are estimate/'s, the writing
analysis/outputs.py's."""
