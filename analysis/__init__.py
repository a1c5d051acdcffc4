# SPDX-License-Identifier: GPL-2.0
"""Analysis of lock-benchmark run directories: parsers, tidy tables,
statistics and reports (see README.md and TIDY.md)."""
