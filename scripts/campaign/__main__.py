# SPDX-License-Identifier: GPL-2.0
"""python3 -m scripts.campaign: scripts/campaign/main.py."""

import sys

from scripts.campaign.main import main

sys.exit(main(sys.argv[1:]))
