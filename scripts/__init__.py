# SPDX-License-Identifier: GPL-2.0
"""The harness's commands that drive the guests: campaigns (campaign*.py),
the overhead measurement, variants and lock targets (variant.py,
target.py).  Run as `python3 -m scripts.campaign`, `-m scripts.overhead`
and `-m scripts.variant` with the repository root on PYTHONPATH
(./run.sh campaign, ./run.sh overhead, scripts/lib.sh)."""
