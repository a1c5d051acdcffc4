# SPDX-License-Identifier: GPL-2.0
"""One home for a campaign's defaults (issue #28): the campaign file
fills in lockbench/defaults.py's CAMPAIGN, and the analysis reads a
manifest that lacks a key (an older one) as the file would have filled
it in."""

import os
import tempfile
import unittest

from analysis import primary
from analysis.parse import rundir
from lockbench import defaults
from scripts.campaign import file as campaign_file

MINIMAL = """
name = "d"
variants = ["before", "after"]
cpus = [2]
repetitions = 6
[[points]]
id = "p"
read_pct = 95
mailboxes = 16
"""


def load(text):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.toml")
        with open(path, "w") as f:
            f.write(text)
        return campaign_file.load(path)


class OneHome(unittest.TestCase):
    def test_the_file_fills_in_the_shared_defaults(self):
        c = load(MINIMAL)
        # perf and clock are resolved: perf's own keys, clock per vCPU count
        for key, want in defaults.CAMPAIGN.items():
            if key not in ("perf", "clock"):
                self.assertEqual(c[key], want, key)
        self.assertEqual(c["perf"], defaults.PERF)
        self.assertEqual(set(c["clock"].values()), {defaults.CAMPAIGN["clock"]})
        # every key with a value default is a key of the schema's
        for key in defaults.CAMPAIGN:
            self.assertIn(key, campaign_file.TOP)
            self.assertEqual(campaign_file.TOP[key].default, defaults.CAMPAIGN[key])

    def test_a_loaded_campaign_shares_no_default_object(self):
        c = load(MINIMAL)
        c["arches"].append("arm64")
        self.assertEqual(defaults.CAMPAIGN["arches"], ["arm"])
        self.assertEqual(load(MINIMAL)["arches"], ["arm"])

    def test_an_old_manifest_reads_as_the_file_would_fill_it(self):
        self.assertIs(defaults.campaign_value({}, "pin"), True)
        self.assertIs(defaults.campaign_value({"pin": False}, "pin"), False)
        self.assertTrue(primary.pinned({}, 2))
        self.assertFalse(primary.pinned({"pin": False}, 2))
        rd = rundir.RunDir.__new__(rundir.RunDir)
        rd.campaign = {}
        self.assertEqual(rd.margin, defaults.MARGIN)
        rd.campaign = {"margin": 0.1}
        self.assertEqual(rd.margin, 0.1)


if __name__ == "__main__":
    unittest.main()
