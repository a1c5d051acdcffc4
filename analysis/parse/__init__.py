# SPDX-License-Identifier: GPL-2.0
"""Parsing: the manifest (rundir.py), each raw file of a point
(results.txt, lock_stat.txt, perf-stat.csv, perf-lock.txt,
host-steal.txt, host-meter.txt) into plain objects, the lockdep reports
in the boots' consoles (lockdep.py) and a tidy table read back
(tidy_table.py), with the limits and the one error every parser shares
(common.py).  Reads files; knows nothing of statistics or verdicts."""
