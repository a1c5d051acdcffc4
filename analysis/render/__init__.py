# SPDX-License-Identifier: GPL-2.0
"""Rendering: the texts a user reads (answer.txt, summary.md,
commit-msg.txt, legend.txt: texts.py makes the four from one set of
facts) from the comparisons table, and how each writes a number
(formatting.py).  No statistics and no file access here."""
