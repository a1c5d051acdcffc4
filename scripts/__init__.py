# SPDX-License-Identifier: GPL-2.0
"""The harness's commands that drive the guests: campaigns (campaign/),
the overhead measurement, variants (variant.py) and lock targets
(lock_target.py: the lock a campaign measures; guest/variant_name.py names
the kernels built and booted, VARIANT@ARCH).  Run as `python3 -m
scripts.campaign`, `-m scripts.overhead` and `-m scripts.variant` with
the repository root on PYTHONPATH (./run.sh campaign, ./run.sh overhead,
scripts/lib.sh)."""
