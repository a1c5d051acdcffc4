# SPDX-License-Identifier: GPL-2.0
"""Parsing: each raw file of a point (results.txt, lock_stat.txt,
perf-stat.csv, perf-lock.txt, host-steal.txt) into plain objects, with
the limits and the one error every parser shares (common.py).  Reads
files; knows nothing of tables, statistics or verdicts."""
