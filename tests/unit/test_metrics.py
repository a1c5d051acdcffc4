# SPDX-License-Identifier: GPL-2.0
"""analysis/metrics.py, the metric registry: what every other list of
metrics derives from holds together."""

import unittest

from analysis import metrics, primary
from scripts.campaign import file as campaign_file


class Registry(unittest.TestCase):
    def test_derived_names_are_registered(self):
        derived = (list(metrics.PRIMARY_CHOICES) + list(metrics.RATE_METRICS)
                   + list(metrics.ICOUNT_EQUIV) + list(metrics.ICOUNT_EQUIV.values())
                   + list(metrics.REF_TWIN) + list(metrics.REF_TWIN.values())
                   + list(metrics.RUN_TWIN) + list(metrics.RUN_TWIN.values()))
        for m in derived:
            self.assertIn(m, metrics.METRICS)

    def test_a_judged_metric_has_a_direction(self):
        for m in metrics.PRIMARY_CHOICES:
            self.assertIn(metrics.direction(m), ("higher", "lower"), m)

    def test_twins_point_the_way_their_raw_metric_does(self):
        for raw, twin in list(metrics.REF_TWIN.items()) + list(
                metrics.RUN_TWIN.items()):
            self.assertEqual(metrics.direction(raw), metrics.direction(twin),
                             twin)
            self.assertNotEqual(raw, twin)

    def test_icount_equivalents_are_judged_under_icount(self):
        """What a metric becomes under icount is itself a primary choice,
        and no chain: an equivalent has no equivalent of its own."""
        for m, eq in metrics.ICOUNT_EQUIV.items():
            self.assertIn(eq, metrics.PRIMARY_CHOICES, m)
            self.assertNotIn(eq, metrics.ICOUNT_EQUIV, m)

    def test_the_defaults_are_choices(self):
        for metric in list(primary.DEFAULTS.values()) + [
                primary.UNPINNED_DEFAULT]:
            self.assertIn(metric, metrics.PRIMARY_CHOICES)

    def test_campaign_file_takes_the_registry_choices(self):
        key = campaign_file.TOP["primary_metric"]
        for m in metrics.PRIMARY_CHOICES:
            self.assertTrue(key.check(m), m)
        self.assertFalse(key.check("steal_pct"))
        self.assertFalse(key.check("lock_contentions"))

    def test_metric_order(self):
        names = {"zz_unknown", "steal_pct", "throughput_ops_s",
                 "lookup_lat_median_ref", "aa_unknown"}
        self.assertEqual(metrics.metric_order(names, "lookup_lat_median_ref"),
                         ["lookup_lat_median_ref", "throughput_ops_s",
                          "steal_pct", "aa_unknown", "zz_unknown"])
        self.assertEqual(metrics.metric_order(names)[0], "throughput_ops_s")
        self.assertEqual(metrics.metric_order(set(), "throughput_ops_s"), [])


if __name__ == "__main__":
    unittest.main()
