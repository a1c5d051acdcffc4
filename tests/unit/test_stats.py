# SPDX-License-Identifier: GPL-2.0
"""analysis.estimate.stats on synthetic data with known answers."""

import math
import unittest

import numpy as np
import pandas as pd

from scipy import stats as sps

from analysis.estimate import mann_whitney, stats

from analysis.estimate.thresholds import Thresholds
from analysis.estimate import medians
from analysis.verdict import verdicts

FAST = Thresholds(resamples=2000)


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
        # the whole CI beyond the margin
        self.assertEqual(v(0.90, 0.88, 0.92, "higher", 0.05, 6),
                         ("harm", None))
        # below 1, reaching into the margin: worse, not harm
        self.assertEqual(v(0.95, 0.92, 0.98, "higher", 0.05, 6),
                         ("worse", None))
        # straddles 1 and the margin: log space, 6 * (0.105 / 0.051)^2
        label, need = v(1.0, 0.90, 1.10, "higher", 0.05, 6)
        self.assertEqual((label, need), (f"inconclusive (n≈{need})", 26))
        # the estimate beyond the margin: the way to a decision is "worse"
        label, need = v(0.94, 0.85, 1.02, "higher", 0.05, 6)
        self.assertEqual(label, f"inconclusive (n≈{need})")
        self.assertGreater(need, 6)

    def test_rule_lower_is_better(self):
        v = stats.verdict
        self.assertEqual(v(0.9, 0.85, 0.95, "lower", 0.05, 6)[0], "better")
        self.assertEqual(v(1.03, 1.01, 1.05, "lower", 0.05, 6)[0], "no harm")
        self.assertEqual(v(1.10, 1.07, 1.12, "lower", 0.05, 6)[0], "harm")
        self.assertEqual(v(1.05, 1.02, 1.08, "lower", 0.05, 6)[0], "worse")
        self.assertTrue(v(1.0, 0.9, 1.1, "lower", 0.05, 6)[0].startswith(
            "inconclusive (n≈"))

    def test_too_few_boots_get_no_verdict(self):
        for n in (1, 2, 5):
            self.assertEqual(stats.verdict(0.5, 0.4, 0.6, "higher", 0.05, n),
                             ("inconclusive (n<6)", None))

    def test_no_direction(self):
        self.assertEqual(stats.verdict(1.5, 1.4, 1.6, None, 0.05, 6),
                         ("", None))
        self.assertEqual(stats.verdict(math.nan, math.nan, math.nan,
                                       "higher", 0.05, 6), ("", None))


class HodgesLehmann(unittest.TestCase):
    def test_exact_null_distribution(self):
        # P(U <= u) for n = m = 3: counts 1 1 2 3 3 3 3 2 1 1 of 20
        self.assertEqual(list(np.round(mann_whitney._u_cdf(3, 3) * 20)),
                         [1, 2, 4, 7, 10, 13, 16, 18, 19, 20])
        # critical ranks of the Moses CI at 95% (tables: 6, 14, 38)
        self.assertEqual([mann_whitney._k_crit(n, n, 0.025)
                          for n in (6, 8, 12)],
                         [6, 14, 38])
        self.assertEqual(mann_whitney._k_crit(2, 2, 0.025), 0)

    def test_p_matches_scipy(self):
        x = np.array([1, 2.5, 3, 4.2, 5, 6.1])
        y = x * 1.3 + 0.05
        ours = stats.mann_whitney_p(x, y)
        ref = sps.mannwhitneyu(y, x, method="exact").pvalue
        self.assertAlmostEqual(ours, ref)
        # beyond the exact range: the normal approximation, close to scipy
        rng = np.random.default_rng(5)
        x, y = rng.normal(10, 1, 40), rng.normal(10.3, 1, 40)
        self.assertAlmostEqual(stats.mann_whitney_p(x, y),
                               sps.mannwhitneyu(y, x).pvalue, delta=0.01)

    def test_ratio_is_the_median_pairwise_ratio(self):
        b, v = [10.0, 20, 40], [15.0, 30, 60]
        c = stats.compare(b, v, "higher")
        pairwise = sorted(vj / bi for bi in b for vj in v)
        self.assertAlmostEqual(c.ratio, float(np.median(pairwise)))
        self.assertEqual(c.verdict, "inconclusive (n<6)")
        # too few for a 95% CI at all: infinite bounds, not zero width
        self.assertEqual((c.ratio_ci_lo, c.ratio_ci_hi), (0.0, math.inf))

    def test_ci_is_order_statistics_of_pairwise_ratios(self):
        b = noisy(100, 8, 0.05, 40)
        v = noisy(95, 8, 0.05, 41)
        c = stats.compare(b, v, "higher")
        d = np.sort((np.log(v)[None, :] - np.log(b)[:, None]).ravel())
        self.assertAlmostEqual(math.log(c.ratio_ci_lo), d[13])
        self.assertAlmostEqual(math.log(c.ratio_ci_hi), d[64 - 14])
        # 1 - 2 P(U <= 13) for n = m = 8 (tables: P = 0.0249)
        self.assertAlmostEqual(mann_whitney.ci_level(8, 8, 0.95), 0.9501,
                               places=4)

    def test_two_speed_host_is_not_blind(self):
        # boots at one of two host speeds: a 10% loss stays visible
        rng = np.random.default_rng(7)
        speed = np.array([150e3, 85e3] * 6)
        b = speed * np.exp(rng.normal(0, 0.03, 12))
        v = speed[::-1] * 0.9 * np.exp(rng.normal(0, 0.03, 12))
        c = stats.compare(b, v, "higher")
        self.assertLess(c.ratio_ci_hi, 1)
        self.assertIn(c.verdict, ("worse", "harm"))


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
        comps = verdicts.comparisons_table(df, [("before", "after")], FAST)
        self.assertEqual(len(comps), 2)
        got = dict(zip(comps["metric"], comps["verdict"]))
        self.assertEqual(got, {"throughput_ops_s": "harm",
                               "lookup_lat_median_ns": "harm"})
        self.assertEqual(dict(zip(comps["metric"], comps["role"])),
                         {"throughput_ops_s": "primary",
                          "lookup_lat_median_ns": "exploratory"})
        self.assertEqual(list(comps.columns),
                         list(verdicts.COMPARISONS_COLUMNS))
        med = medians.medians_table(df, FAST)
        self.assertEqual(len(med), 4)
        self.assertEqual(set(med["n"]), {6})


if __name__ == "__main__":
    unittest.main()
