# SPDX-License-Identifier: GPL-2.0
"""Which metric answers a cell (analysis/primary.py) and what the
campaign file resolves of it (scripts/campaign/file.py): named per point
or for the campaign, read as its instruction-count equivalent under
icount, the default of its regime when none is named, and never a rate
at a paced point."""

import os
import tempfile
import unittest

from analysis import primary
from scripts.campaign import file as campaign_file

CAMPAIGN = """
name = "p"
variants = ["before", "after"]
control = true
cpus = [1, 2]
clock = {{ 1 = "icount" }}
repetitions = 6
{extra}
[[points]]
id = "tight"
read_pct = 95
mailboxes = 16
{tight}
[[points]]
id = "paced"
read_pct = 95
mailboxes = 16
think_ns = 100000
{paced}
"""


def load(extra="", tight="", paced=""):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.toml")
        with open(path, "w") as f:
            f.write(CAMPAIGN.format(extra=extra, tight=tight, paced=paced))
        return campaign_file.load(path)


class Resolution(unittest.TestCase):
    def metrics(self, c):
        return {(cpus, p["id"]): primary.metric_for(c, cpus, p)
                for cpus in c["cpus"] for p in c["points"]}

    def test_the_default_of_each_regime(self):
        c = load()
        self.assertEqual(c["clock"], {"1": "icount", "2": "wall"})
        self.assertEqual(self.metrics(c), {
            (1, "tight"): ("insn_per_op", "default"),
            (1, "paced"): ("lookup_lat_mean_ns", "default"),
            (2, "tight"): ("throughput_run", "default"),
            (2, "paced"): ("lookup_lat_median_ns", "default")})

    def test_a_paced_point_of_one_wall_clock_vcpu_divides_the_probe(self):
        # one vCPU: the probe shares no host time with another vCPU
        c, paced = {"clock": "wall"}, {"id": "paced", "think_ns": 100000}
        self.assertEqual(primary.metric_for(c, 1, paced),
                         ("lookup_lat_median_ref", "default"))
        self.assertEqual(primary.metric_for(c, 2, paced),
                         ("lookup_lat_median_ns", "default"))
        self.assertEqual(primary.metric_for(dict(c, pin=False), 2, paced),
                         ("lookup_lat_median_ns", "default"))

    def test_unpinned_tight_loops_default_to_raw_throughput(self):
        c = load(extra="pin = false")
        self.assertEqual(primary.metric_for(c, 2, c["points"][0]),
                         ("throughput_ops_s", "default"))

    def test_named_per_point_and_read_under_icount(self):
        c = load(extra='primary_metric = "throughput_ops_s"',
                 paced='primary_metric = "lookup_lat_median_ns"')
        self.assertEqual(self.metrics(c), {
            (1, "tight"): ("insn_per_op", "named"),
            (1, "paced"): ("lookup_lat_mean_ns", "named"),
            (2, "tight"): ("throughput_ops_s", "named"),
            (2, "paced"): ("lookup_lat_median_ns", "named")})
        # a point's own metric is not part of its guest job
        self.assertNotIn("primary_metric", campaign_file.job_text(c))

    def test_a_rate_never_answers_a_paced_point(self):
        with self.assertRaises(campaign_file.CampaignError) as e:
            load(paced='primary_metric = "throughput_run"')
        self.assertIn("cannot move at a paced point", str(e.exception))
        self.assertIsNotNone(primary.paced_refusal("insn_per_op",
                                                   {"think_ns": 1}))
        self.assertIsNone(primary.paced_refusal("insn_per_op",
                                                {"think_ns": 0}))

    def test_icount_cells_stop_at_their_repetitions(self):
        from scripts.campaign import manifest as campaign_manifest
        c = load(extra="icount_repetitions = 3")
        cells = campaign_manifest.plan(c)
        one = [x for x in cells if x["cpus"] == 1]
        self.assertEqual({x["rep"] for x in one}, {1, 2, 3})
        self.assertTrue(all(x["clock"] == "icount" for x in one))
        self.assertEqual({x["rep"] for x in cells if x["cpus"] == 2},
                         set(range(1, 7)))


if __name__ == "__main__":
    unittest.main()
