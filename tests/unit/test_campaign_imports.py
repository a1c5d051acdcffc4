# SPDX-License-Identifier: GPL-2.0
"""A campaign runs its boots without the analysis' packages: the campaign
command imports neither pandas, scipy nor numpy until a look or the
report needs them (scripts/campaign/run.py judge_look, main.py report),
so that a campaign file is checked, and boots run, in a tenth of a
second's start (52 refused files in tests/t-campaign-file.sh) and on a
host without python3-scipy.

Run: /usr/bin/python3 -m unittest tests.unit.test_campaign_imports
"""

import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEAVY = ("numpy", "pandas", "scipy")


def heavy_after(module):
    """The packages of HEAVY a fresh Python has loaded after importing
    module, as a space-separated string."""
    code = (f"import sys\nimport {module}\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
    if p.returncode:
        raise AssertionError(f"import {module}: {p.stderr}")
    return p.stdout.strip()


class CampaignImports(unittest.TestCase):
    def test_no_analysis_packages_at_start(self):
        self.assertEqual(heavy_after("scripts.campaign.main"), "",
                         "imported at the campaign's start")

    def test_the_check_sees_an_import(self):
        # the same check, of a module that does import one: it fails
        self.assertIn("scipy", heavy_after("analysis.estimate.exact"))


if __name__ == "__main__":
    unittest.main()
