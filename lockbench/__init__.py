# SPDX-License-Identifier: GPL-2.0
"""The core the rest of the house stands on (lockbench/cli.py: every
command's errors and parser; lockbench/defaults.py: the campaign
defaults the runner and the analysis share)."""
