# SPDX-License-Identifier: GPL-2.0
"""The verdict procedure on simulated boots with known answers: false
alarms, power and coverage, printed as a table and asserted.

Boots are drawn from three shapes: lognormal with CV 5% and 30%, and this
host's two-speed mixture (each boot at 150k or 85k ops/s, 3% CV within a
speed; tests/RELIABILITY.md). The variant is the baseline scaled by a true
ratio (throughput: 1.00, 0.97, 0.95 = the margin, 0.90; latency, lower is
better: the mirror 1.00, 1/0.97, 1.05, 1/0.90). Every comparison goes
through mann_whitney.shift_ci_many() and stats.verdict(), as compare() does.

The Moses CI is distribution-free under a shift of log values, so its
error rates are known exactly (1 - mann_whitney.ci_level()); a simulation of
SIMS comparisons estimates them with a Monte Carlo standard error, and
the bounds below allow 3 of those above the target.
"""

import math
import unittest

import numpy as np

from analysis.estimate import mann_whitney, stats

SIMS = 4000
NS = (6, 8, 12)
MARGIN = 0.05
TRUE = {"higher": (1.00, 0.97, 0.95, 0.90),
        "lower": (1.00, 1 / 0.97, 1.05, 1 / 0.90)}


def draw(rng, shape, size):
    if shape == "ln5":
        return np.exp(rng.normal(0, 0.05, size))
    if shape == "ln30":
        return np.exp(rng.normal(0, 0.30, size))
    speed = np.where(rng.random(size) < 0.5, 150e3, 85e3)
    return speed * np.exp(rng.normal(0, 0.03, size))


def simulate(shape, n, ratio, direction, seed):
    rng = np.random.default_rng(seed)
    b = draw(rng, shape, (SIMS, n))
    v = draw(rng, shape, (SIMS, n)) * ratio
    shift, lo, hi = mann_whitney.shift_ci_many(b, v)
    labels = [stats.verdict(math.exp(s), math.exp(a), math.exp(c), direction,
                            MARGIN, n)[0].split(" (")[0]
              for s, a, c in zip(shift, lo, hi)]
    share = {k: labels.count(k) / SIMS for k in
             ("better", "no harm", "worse", "harm", "inconclusive")}
    t = math.log(ratio)
    share["coverage"] = float(np.mean((lo <= t) & (t <= hi)))
    return share


def mc_bound(p):
    """target p plus 3 Monte Carlo standard errors."""
    return p + 3 * math.sqrt(p * (1 - p) / SIMS)


class Simulation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = []
        seed = 100
        for direction, ratios in TRUE.items():
            for shape in ("ln5", "ln30", "mix"):
                for n in NS:
                    for r in ratios:
                        seed += 1
                        cls.rows.append((direction, shape, n, r,
                                         simulate(shape, n, r, direction,
                                                  seed)))
        print(f"\nverdicts over {SIMS} simulated comparisons a row "
              f"(margin {MARGIN:.0%}, n boots a side):")
        print(f"{'dir':6} {'shape':5} {'n':>3} {'ratio':>6} {'better':>7} "
              f"{'no harm':>7} {'worse':>7} {'harm':>7} {'incon':>7} "
              f"{'cover':>7}")
        for d, shape, n, r, s in cls.rows:
            print(f"{d:6} {shape:5} {n:3} {r:6.3f} " + " ".join(
                f"{100 * s[k]:6.1f}%" for k in
                ("better", "no harm", "worse", "harm", "inconclusive",
                 "coverage")))

    def each(self, ratio_index):
        for d, shape, n, r, s in self.rows:
            if r == TRUE[d][ratio_index]:
                yield d, shape, n, s

    def test_false_alarms_at_no_difference(self):
        for d, shape, n, s in self.each(0):
            false = s["better"] + s["worse"] + s["harm"]
            # <= 5% by construction
            exact = 1 - mann_whitney.ci_level(n, n, 0.95)
            self.assertLessEqual(exact, 0.05)
            self.assertLessEqual(false, mc_bound(exact),
                                 f"{d} {shape} n={n}: {false:.1%}")

    def test_no_harm_at_the_margin(self):
        for d, shape, n, s in self.each(2):
            exact = (1 - mann_whitney.ci_level(n, n, 0.95)) / 2  # <= 2.5%
            self.assertLessEqual(s["no harm"], mc_bound(exact),
                                 f"{d} {shape} n={n}: {s['no harm']:.1%}")

    def test_power_at_a_ten_percent_loss(self):
        # The loss is found (worse or harm) in >= 90% of comparisons. The
        # label "harm" itself needs the whole CI beyond the margin: with a
        # CI half-width of ~5% at CV 5% and n = 8 that is about half the
        # runs, and the table prints it.
        for d, shape, n, s in self.each(3):
            if shape == "ln5" and n >= 8:
                self.assertGreaterEqual(s["worse"] + s["harm"], 0.90,
                                        f"{d} n={n}")
                self.assertEqual(s["better"] + s["no harm"], 0, f"{d} n={n}")

    def test_coverage(self):
        for d, shape, n, r, s in self.rows:
            self.assertGreaterEqual(s["coverage"], 0.93, (d, shape, n, r))
            self.assertLessEqual(s["coverage"], 0.97, (d, shape, n, r))

    def test_two_speed_host_detects_more_than_the_median_ratio(self):
        # the case: two-speed boots, n = 8, a true 10% loss
        for d, shape, n, s in self.each(3):
            if shape == "mix" and n == 8:
                self.assertGreaterEqual(s["worse"] + s["harm"], 0.35, d)


if __name__ == "__main__":
    unittest.main()
