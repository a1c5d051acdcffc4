# SPDX-License-Identifier: GPL-2.0
"""analysis.stats on synthetic data with known answers."""

import math
import unittest

import numpy as np
import pandas as pd

from analysis import stats

FAST = stats.Thresholds(resamples=2000)


def noisy(center, n, rel_sd, seed):
    rng = np.random.default_rng(seed)
    return center * (1 + rng.normal(0, rel_sd, n))


class MedianCI(unittest.TestCase):
    def test_order_statistics(self):
        med, lo, hi, level = stats.median_ci(range(1, 7))
        self.assertEqual((med, lo, hi), (3.5, 1, 6))
        self.assertAlmostEqual(level, 1 - 2 / 64)
        med, lo, hi, level = stats.median_ci(range(1, 11))
        self.assertEqual((lo, hi), (2, 9))
        self.assertAlmostEqual(level, 1 - 2 * 11 / 1024)
        _, lo, hi, level = stats.median_ci([5, 1, 4, 2, 3])  # n=5: < 95%
        self.assertEqual((lo, hi), (1, 5))
        self.assertAlmostEqual(level, 0.9375)

    def test_describe(self):
        s = stats.describe([4, 1, 3, 2, None, float("nan")])
        self.assertEqual((s.n, s.median, s.min, s.max), (4, 2.5, 1, 4))


class Verdict(unittest.TestCase):
    def test_rule_higher_is_better(self):
        v = stats.verdict
        self.assertEqual(v(1.08, 1.02, 1.12, "higher", 0.05, 6),
                         ("better", None))
        self.assertEqual(v(0.99, 0.97, 1.02, "higher", 0.05, 6),
                         ("no harm", None))
        # significantly slower but within the margin: still no harm
        self.assertEqual(v(0.97, 0.96, 0.98, "higher", 0.05, 6),
                         ("no harm", None))
        self.assertEqual(v(0.90, 0.88, 0.92, "higher", 0.05, 6),
                         ("harm", None))
        # straddles 1 and the margin: 6 * (0.1 / 0.05)^2 = 24
        self.assertEqual(v(1.0, 0.90, 1.10, "higher", 0.05, 6),
                         ("inconclusive", 24))
        # the estimate itself beyond the margin
        self.assertEqual(v(0.94, 0.85, 1.02, "higher", 0.05, 6),
                         ("inconclusive", "unreachable"))

    def test_rule_lower_is_better(self):
        v = stats.verdict
        self.assertEqual(v(0.9, 0.85, 0.95, "lower", 0.05, 6)[0], "better")
        self.assertEqual(v(1.03, 1.01, 1.05, "lower", 0.05, 6)[0], "no harm")
        self.assertEqual(v(1.10, 1.07, 1.12, "lower", 0.05, 6)[0], "harm")
        self.assertEqual(v(1.0, 0.9, 1.1, "lower", 0.05, 6),
                         ("inconclusive", 24))

    def test_no_direction(self):
        self.assertEqual(stats.verdict(1.5, 1.4, 1.6, None, 0.05, 6),
                         ("", None))
        self.assertEqual(stats.verdict(math.nan, math.nan, math.nan,
                                       "higher", 0.05, 6), ("", None))


class Compare(unittest.TestCase):
    def test_equal_distributions(self):
        base = noisy(1000, 6, 0.01, 1)
        var = noisy(1000, 6, 0.01, 2)
        c = stats.compare(base, var, "higher", FAST)
        self.assertFalse(c.significant)  # "~"
        self.assertGreaterEqual(c.p_value, 0.05)
        self.assertEqual(c.verdict, "no harm")
        self.assertEqual(c.warnings, [])
        self.assertLess(c.ratio_ci_lo, 1)
        self.assertGreater(c.ratio_ci_hi, 1)

    def test_identical_samples(self):
        c = stats.compare([5.0] * 6, [5.0] * 6, "higher", FAST)
        self.assertEqual((c.ratio, c.p_value, c.verdict), (1.0, 1.0,
                                                           "no harm"))

    def test_ten_percent_slowdown_is_harm(self):
        base = noisy(1000, 6, 0.01, 3)
        c = stats.compare(base, noisy(900, 6, 0.01, 4), "higher", FAST)
        self.assertAlmostEqual(c.ratio, 0.9, delta=0.02)
        self.assertTrue(c.significant)
        self.assertLess(c.p_value, 0.01)
        self.assertEqual(c.verdict, "harm")

    def test_ten_percent_improvement_is_better(self):
        base = noisy(1000, 6, 0.01, 5)
        c = stats.compare(base, noisy(1100, 6, 0.01, 6), "higher", FAST)
        self.assertEqual(c.verdict, "better")

    def test_lower_is_better_metric(self):
        base = noisy(500, 6, 0.01, 7)
        slower = stats.compare(base, noisy(550, 6, 0.01, 8), "lower", FAST)
        faster = stats.compare(base, noisy(450, 6, 0.01, 9), "lower", FAST)
        self.assertEqual((slower.verdict, faster.verdict), ("harm", "better"))

    def test_tiny_n_warns_but_judges(self):
        c = stats.compare([100, 101, 99], [90, 91, 89], "higher", FAST)
        self.assertIn(stats.TOO_FEW, c.warnings)
        self.assertEqual(c.warnings, ["n<6: too few samples"])
        self.assertIn(c.verdict, ("harm", "inconclusive"))

    def test_noisy_is_inconclusive_with_estimate(self):
        base = noisy(1000, 6, 0.15, 10)
        var = noisy(1000, 6, 0.15, 11)
        c = stats.compare(base, var, "higher", FAST)
        self.assertEqual(c.verdict, "inconclusive")
        self.assertTrue(c.n_needed == "unreachable" or c.n_needed > 6)

    def test_seed_is_data(self):
        base, var = noisy(1000, 6, 0.02, 12), noisy(990, 6, 0.02, 13)
        a = stats.compare(base, var, "higher", FAST)
        b = stats.compare(base, var, "higher", FAST)
        c = stats.compare(base, var, "higher", FAST.with_(seed=99))
        self.assertEqual((a.ratio_ci_lo, a.ratio_ci_hi),
                         (b.ratio_ci_lo, b.ratio_ci_hi))
        self.assertNotEqual((a.ratio_ci_lo, a.ratio_ci_hi),
                            (c.ratio_ci_lo, c.ratio_ci_hi))

    def test_zero_baseline(self):
        c = stats.compare([0] * 6, [1, 2, 1, 2, 1, 2], "lower", FAST)
        self.assertTrue(math.isnan(c.ratio))
        self.assertEqual(c.verdict, "")
        self.assertIn("baseline median is 0: ratio undefined", c.warnings)
        c = stats.compare([0] * 6, [0] * 6, "lower", FAST)
        self.assertEqual((c.ratio, c.verdict), (1.0, "no harm"))


class AATest(unittest.TestCase):
    def test_false_alarm_rate_is_small(self):
        x = noisy(1000, 12, 0.02, 20)
        r = stats.aa_false_alarm_rate(x, "higher", FAST, splits=200, seed=3)
        self.assertEqual((r["group_size"], r["splits"]), (6, 200))
        self.assertLessEqual(r["rate"], 0.10)
        self.assertEqual(sum(r["verdicts"].values()), 200)

    def test_is_seeded(self):
        x = noisy(1000, 12, 0.02, 21)
        a = stats.aa_false_alarm_rate(x, "higher", FAST, splits=50, seed=4)
        b = stats.aa_false_alarm_rate(x, "higher", FAST, splits=50, seed=4)
        self.assertEqual(a, b)

    def test_too_few(self):
        with self.assertRaises(ValueError):
            stats.aa_false_alarm_rate([1, 2, 3], "higher", FAST)


class Tables(unittest.TestCase):
    def test_comparisons_table(self):
        rows = []
        for variant, factor in (("before", 1.0), ("after", 0.9)):
            for i, v in enumerate(noisy(1000 * factor, 6, 0.01, 30)):
                for metric, val in (("throughput_ops_s", v),
                                    ("lookup_lat_median_ns", 1e6 / v)):
                    rows.append({"campaign": "c", "variant": variant,
                                 "cpus": 2, "point": "p1", "read_pct": 90,
                                 "mailboxes": 16, "miss_pct": 0,
                                 "duration_ms": 1000, "metric": metric,
                                 "unit": "x", "value": val})
        df = pd.DataFrame(rows)
        comps = stats.comparisons_table(df, "before", FAST)
        self.assertEqual(len(comps), 2)
        got = dict(zip(comps["metric"], comps["verdict"]))
        self.assertEqual(got, {"throughput_ops_s": "harm",
                               "lookup_lat_median_ns": "harm"})
        self.assertEqual(set(stats.COMPARISONS_COLUMNS) - set(comps.columns),
                         set())
        med = stats.medians_table(df, FAST)
        self.assertEqual(len(med), 4)
        self.assertEqual(set(med["n"]), {6})


if __name__ == "__main__":
    unittest.main()
