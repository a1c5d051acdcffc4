# SPDX-License-Identifier: GPL-2.0
"""The paired ratio (analysis/estimate/paired.py): a hand-checked example, the
signed-rank statistic against scipy, and a simulation with known answers.

Simulated repetitions run on this host's two speeds (150k or 85k ops/s,
chosen per repetition with p = 0.5) with 3% CV per boot. "shared": both
boots of a repetition see the same speed (side by side, or one right
after the other); "independent": each boot draws its own. The variant is
the baseline scaled by a true ratio. Printed: coverage, false alarms at
ratio 1 and the median width of the paired CI over the unpaired one.
"""

import math
import unittest

import numpy as np
import pandas as pd
from scipy import stats as sps

from analysis.estimate import paired, stats
from analysis.verdict import verdicts

SIMS = 600
N = 8


def draw(rng, shared, ratio):
    speed = np.where(rng.random(N) < 0.5, 150e3, 85e3)
    other = speed if shared else np.where(rng.random(N) < 0.5, 150e3, 85e3)
    b = speed * np.exp(rng.normal(0, 0.03, N))
    v = other * np.exp(rng.normal(0, 0.03, N)) * ratio
    return b, v


def simulate(shared, ratio, seed):
    rng = np.random.default_rng(seed)
    cover = false = 0
    widths = []
    for _ in range(SIMS):
        b, v = draw(rng, shared, ratio)
        p = paired.paired(dict(enumerate(b)), dict(enumerate(v)))
        c = stats.compare(b, v, "higher")
        cover += p.ci_lo <= ratio <= p.ci_hi
        false += not p.ci_lo <= 1 <= p.ci_hi
        widths.append(math.log(p.ci_hi / p.ci_lo)
                      / math.log(c.ratio_ci_hi / c.ratio_ci_lo))
    return cover / SIMS, false / SIMS, float(np.median(widths))


class Exact(unittest.TestCase):
    def test_walsh_and_estimate(self):
        # d = log ratios 0.1, 0.2, 0.3: Walsh averages .1 .15 .2 .2 .25 .3
        d = [0.1, 0.2, 0.3]
        np.testing.assert_allclose(paired.walsh(d),
                                   [0.1, 0.15, 0.2, 0.2, 0.25, 0.3])
        r = paired.paired({1: 1.0, 2: 1.0, 3: 1.0},
                          {1: math.exp(0.1), 2: math.exp(0.2),
                           3: math.exp(0.3)})
        self.assertAlmostEqual(math.log(r.ratio), 0.2)
        # 3 pairs cannot give a 95% CI (smallest two-sided p: 2/8)
        self.assertEqual((r.ci_lo, r.ci_hi, r.level), (0.0, math.inf, 1.0))

    def test_critical_values_and_p_match_the_tables(self):
        # n = 8 at 95%: the 4th Walsh average from each end (W+ <= 3 has
        # probability 5/256), actual level 1 - 10/256
        self.assertEqual(paired._k(8, 0.95), 4)
        self.assertAlmostEqual(paired._cdf(3, 8), 5 / 256)
        rng = np.random.default_rng(3)
        for n in (6, 9, 14):
            d = rng.normal(0.05, 0.1, n)
            r = paired.paired(dict(enumerate(np.ones(n))),
                              dict(enumerate(np.exp(d))))
            self.assertAlmostEqual(r.p_value, sps.wilcoxon(d).pvalue)
            self.assertAlmostEqual(r.level, 1 - 2 * paired._cdf(
                paired._k(n, 0.95) - 1, n))

    def test_hand_computed_ci_at_7_pairs(self):
        # d sorted: -.02 .01 .03 .05 .06 .08 .12; of the 28 Walsh averages
        # two are negative (-.02, -.005), then .005; the largest are .12,
        # .10, .09; the 14th and 15th are .045 and .05. At n = 7, W+ <= 2
        # has probability 3/128 <= 2.5% and W+ <= 3 has 5/128 > 2.5%: the
        # 95% CI is [A_(3), A_(26)] = [.005, .09] at level 1 - 6/128. W+ =
        # 28 - rank of |-.02| = 26: p = 2 * 3/128, the same as scipy's.
        d = [0.05, -0.02, 0.12, 0.01, 0.08, 0.03, 0.06]  # any rep order
        r = paired.paired(dict(enumerate(np.ones(7))),
                          dict(enumerate(np.exp(d))))
        self.assertEqual(r.n, 7)
        self.assertAlmostEqual(math.log(r.ratio), 0.0475)
        self.assertAlmostEqual(math.log(r.ci_lo), 0.005)
        self.assertAlmostEqual(math.log(r.ci_hi), 0.09)
        self.assertAlmostEqual(r.level, 1 - 6 / 128)
        self.assertAlmostEqual(r.p_value, 6 / 128)
        self.assertAlmostEqual(r.p_value, sps.wilcoxon(d).pvalue)

    def test_p_matches_scipy_exact_and_approximate(self):
        # exact up to EXACT_MAX pairs; beyond, the normal approximation
        # with continuity correction (scipy's correction=True)
        rng = np.random.default_rng(5)
        for n, kw in ((30, {}), (50, {}),
                      (60, dict(method="approx", correction=True)),
                      (80, dict(method="approx", correction=True))):
            d = rng.normal(0.03, 0.1, n)
            r = paired.paired(dict(enumerate(np.ones(n))),
                              dict(enumerate(np.exp(d))))
            self.assertAlmostEqual(r.p_value, sps.wilcoxon(d, **kw).pvalue,
                                   msg=n)

    def test_only_reps_both_sides_have(self):
        r = paired.paired({1: 1.0, 2: 2.0, 3: 3.0}, {2: 2.2, 3: 3.3, 4: 9})
        self.assertEqual(r.n, 2)
        self.assertAlmostEqual(r.ratio, 1.1)
        self.assertEqual(paired.paired({1: 1.0}, {2: 1.0}).n, 0)


def samples(values, metric="throughput_ops_s"):
    """{variant: {rep: value}} -> a samples.csv frame at one cell."""
    return pd.DataFrame([
        {"campaign": "c", "variant": variant, "arch": "arm", "cpus": 1,
         "rep": rep, "cell": f"r{rep:02d}-{variant}-c1", "point": "p1",
         "read_pct": 95, "mailboxes": 8, "miss_pct": 10,
         "duration_ms": 1000, "metric": metric, "value": v, "unit": "ops/s"}
        for variant, by_rep in values.items() for rep, v in by_rep.items()])


class Table(unittest.TestCase):
    """The comparisons table's paired columns: only reps both sides have,
    NaN and 0 pairs without, and the verdict untouched."""

    def test_columns(self):
        rng = np.random.default_rng(9)
        speed = np.where(rng.random(10) < 0.5, 150e3, 85e3)
        before = {r: speed[r] * math.exp(rng.normal(0, 0.03))
                  for r in range(1, 9)}
        after = {r: 0.9 * speed[r] * math.exp(rng.normal(0, 0.03))
                 for r in (1, 2, 3, 4, 5, 6, 7, 9)}  # rep 8 lost, 9 extra
        other = {r: 100e3 for r in range(20, 28)}  # no rep in common
        s = samples({"before": before, "after": after, "other": other})
        pairs = [("before", "after"), ("before", "other")]
        comps = verdicts.comparisons_table(s, pairs)
        self.assertEqual(list(comps.columns)[-8:-3],
                         ["n_pairs", "paired_ratio", "paired_ci_lo",
                          "paired_ci_hi", "paired_ci_level"])
        a = comps[comps["variant"] == "after"].iloc[0]
        want = paired.paired({r: before[r] for r in range(1, 8)},
                             {r: after[r] for r in range(1, 8)})
        self.assertEqual(a["n_pairs"], 7)
        self.assertAlmostEqual(a["paired_ratio"], want.ratio)
        self.assertAlmostEqual(a["paired_ci_lo"], want.ci_lo)
        self.assertAlmostEqual(a["paired_ci_hi"], want.ci_hi)
        self.assertAlmostEqual(a["paired_ci_level"], 1 - 6 / 128)
        o = comps[comps["variant"] == "other"].iloc[0]
        self.assertEqual(o["n_pairs"], 0)
        self.assertTrue(all(math.isnan(o[k]) for k in (
            "paired_ratio", "paired_ci_lo", "paired_ci_hi",
            "paired_ci_level")))
        # the verdict and the unpaired ratio are those of the same boots
        # without repetitions (no pairs at all)
        plain = verdicts.comparisons_table(s.drop(columns=["rep"]), pairs)
        self.assertEqual(list(plain["n_pairs"]), [0, 0])
        for k in ("verdict", "ratio", "ratio_ci_lo", "ratio_ci_hi"):
            self.assertEqual(list(comps[k]), list(plain[k]), k)


class Simulation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = {}
        seed = 40
        print(f"\npaired ratio, {SIMS} simulated campaigns a row, {N} pairs, "
              f"two-speed host:")
        for shared in (True, False):
            for ratio in (1.0, 0.9):
                seed += 1
                cls.rows[(shared, ratio)] = simulate(shared, ratio, seed)
                cov, fa, w = cls.rows[(shared, ratio)]
                print(f"  {'shared' if shared else 'independent':11} "
                      f"ratio {ratio:.2f}: coverage {cov:.1%}, CI without 1 "
                      f"{fa:.1%}, paired/unpaired CI width {w:.2f}")

    def test_coverage(self):
        nominal = 1 - 2 * paired._cdf(paired._k(N, 0.95) - 1, N)
        for key, (cov, _fa, _w) in self.rows.items():
            self.assertGreaterEqual(cov, nominal - 0.02, key)

    def test_false_alarm_at_no_difference(self):
        for shared in (True, False):
            self.assertLessEqual(self.rows[(shared, 1.0)][1], 0.07, shared)

    def test_pairing_pays_when_the_host_is_shared(self):
        for ratio in (1.0, 0.9):
            self.assertLess(self.rows[(True, ratio)][2], 0.5, ratio)

    def test_pairing_costs_little_when_it_is_not(self):
        for ratio in (1.0, 0.9):
            self.assertLess(self.rows[(False, ratio)][2], 1.5, ratio)


if __name__ == "__main__":
    unittest.main()
