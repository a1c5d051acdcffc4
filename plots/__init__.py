# SPDX-License-Identifier: GPL-2.0
"""Plots and report of one run directory: see plots/README.md."""
