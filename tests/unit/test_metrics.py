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


class RulesCompute(unittest.TestCase):
    """Each metric carries its rule, and tidy computes by it: a metric is
    added with one registry line (and its doc line in TIDY.md)."""

    def test_every_rule_has_its_statistic(self):
        from analysis.tidy import point_metrics
        for m, x in metrics.METRICS.items():
            self.assertIn((x.rule.source, x.rule.stat), point_metrics.STATS, m)
            for d in x.rule.derived_from:
                self.assertIn(d, metrics.METRICS, m)
                self.assertNotEqual(d, m)

    def test_sources_are_the_parsers_files(self):
        from analysis.parse import host_meter, host_steal
        self.assertEqual(metrics.HOST_STEAL, host_steal.STEAL_FILE)
        self.assertEqual(metrics.HOST_METER, host_meter.METER_FILE)

    def test_a_new_metric_is_one_registry_line(self):
        """lookup p99.9, from the latency histogram as p99 is, added to a
        patched copy of METRICS and nothing else: tidy computes it for
        every sample of a synthetic run that has lookup p99."""
        import os
        import shutil
        import tempfile
        from unittest import mock
        from analysis.parse import bench_results, rundir
        from analysis.tidy import tables
        from tests.unit import synth
        tmp = tempfile.mkdtemp(prefix="lockbench-registry-")
        self.addCleanup(shutil.rmtree, tmp)
        synth.make_run(tmp)
        line = {"lookup_lat_p999_ns": metrics.Metric(
            "ns", "lower", metrics.Rule(metrics.RESULTS, "quantile", "lookup",
                                        q=0.999))}
        with mock.patch.dict(metrics.METRICS, line):
            got = tables.build(rundir.load(tmp)).tables["samples"]
        p99 = {(r["cell"], r["point"]): r for r in got
               if r["metric"] == "lookup_lat_p99_ns"}
        p999 = {(r["cell"], r["point"]): r for r in got
                if r["metric"] == "lookup_lat_p999_ns"}
        self.assertTrue(p99)
        self.assertEqual(set(p999), set(p99))
        for (boot, point), r in p999.items():
            self.assertEqual(r["unit"], "ns")
            res = bench_results.parse_file(os.path.join(
                tmp, "cells", boot, "points", point, "results.txt"))
            self.assertEqual(r["value"], res.lat["lookup"].quantile(0.999))
            self.assertGreaterEqual(r["value"], p99[(boot, point)]["value"])
        # and the registry is as it was
        self.assertNotIn("lookup_lat_p999_ns", metrics.METRICS)
