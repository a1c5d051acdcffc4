# SPDX-License-Identifier: GPL-2.0
"""The campaign runner (`./run.sh campaign`, `python3 -m scripts.campaign`):
main.py (the entry point), file.py (the campaign file and its schema),
manifest.py (manifest.json and --resume's checks), run.py (the boots on
this host or, through hosts.py, on others), boot.py (one boot's
lifecycle) and estimate.py (--dry-run's time)."""
