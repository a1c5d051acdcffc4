# SPDX-License-Identifier: GPL-2.0
"""The early-stopping rule on simulated campaigns with known answers.

A campaign with repetitions = { min = 6, max = 30 } looks at 6, 13 and 30
repetitions (campaign_file.look_schedule) and stops at the first look
whose verdict is decided (better, no harm, worse, harm), each look judged
at confidence 1 - 0.05/3 (Thresholds.for_looks). Looking three
times at 95% would let a false claim through at any of the three; by
Bonferroni the chance that some look's CI misses the truth is at most
the sum of the three misses, <= 5%, and a false claim needs a miss.

Boots are drawn as in test_verdict_sim.py (lognormal CV 5%, and this
host's two-speed mixture); the variant is the baseline scaled by a true
ratio. Printed: the verdict shares at the stop, the false-claim rate,
the mean repetitions used, and the same rule without the correction.
"""

import math
import unittest

import numpy as np

from analysis.estimate import mann_whitney, stats

from analysis.estimate.thresholds import Thresholds
from scripts.campaign import file as campaign_file
from tests.unit.test_verdict_sim import draw, mc_bound

SIMS = 2000
MARGIN = 0.05
LOOKS = campaign_file.look_schedule(6, 30, 3)
# truth -> the labels that would be false claims
FALSE = {1.00: ("better", "worse", "harm"),
         0.97: ("better", "harm"),
         0.95: ("better", "no harm"),
         0.90: ("better", "no harm"),
         0.50: ("better", "no harm")}


def run_campaigns(shape, ratio, looks, confidence, seed):
    """(label at the stop per simulation, repetitions used)."""
    rng = np.random.default_rng(seed)
    b = draw(rng, shape, (SIMS, looks[-1]))
    v = draw(rng, shape, (SIMS, looks[-1])) * ratio
    label = np.array([""] * SIMS, dtype=object)
    used = np.zeros(SIMS, dtype=int)
    for k in looks:
        open_ = used == 0
        shift, lo, hi = mann_whitney.shift_ci_many(b[open_, :k], v[open_, :k],
                                            confidence)
        got = [stats.verdict(math.exp(s), math.exp(x), math.exp(y),
                             "higher", MARGIN, k)[0].split(" (")[0]
               for s, x, y in zip(shift, lo, hi)]
        idx = np.flatnonzero(open_)
        for i, g in zip(idx, got):
            if g in stats.DECIDED or k == looks[-1]:
                label[i], used[i] = g, k
    return list(label), used


class StoppingRule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        th = Thresholds().for_looks(len(LOOKS))
        cls.rows = {}
        seed = 500
        print(f"\nearly stopping, looks at {LOOKS}, {SIMS} simulated "
              f"campaigns a row (margin {MARGIN:.0%}):")
        print(f"{'shape':5} {'ratio':>5} {'rule':9} {'false':>6} "
              f"{'decided':>7} {'mean n':>6} {'stop@6':>6}  labels")
        for shape in ("ln5", "mix"):
            for ratio in FALSE:
                for rule, conf in (("corrected", th.confidence),
                                   ("naive 95%", 0.95)):
                    seed += 1
                    labels, used = run_campaigns(shape, ratio, LOOKS, conf,
                                                 seed)
                    false = sum(x in FALSE[ratio] for x in labels) / SIMS
                    decided = sum(x in stats.DECIDED for x in labels) / SIMS
                    r = dict(false=false, decided=decided,
                             mean_n=float(used.mean()),
                             first=float((used == LOOKS[0]).mean()))
                    cls.rows[(shape, ratio, rule)] = r
                    counts = {k: labels.count(k) for k in sorted(set(labels))}
                    print(f"{shape:5} {ratio:5.2f} {rule:9} "
                          f"{100 * false:5.1f}% {100 * decided:6.1f}% "
                          f"{r['mean_n']:6.1f} {100 * r['first']:5.1f}%  "
                          f"{counts}")

    def test_false_claims_within_alpha(self):
        for (shape, ratio, rule), r in self.rows.items():
            if rule == "corrected":
                self.assertLessEqual(r["false"], mc_bound(0.05),
                                     f"{shape} {ratio}: {r['false']:.1%}")

    def test_correction_is_needed_at_no_difference(self):
        # the same looks at 95% each would claim a difference more often
        for shape in ("ln5", "mix"):
            self.assertGreater(self.rows[(shape, 1.0, "naive 95%")]["false"],
                               self.rows[(shape, 1.0, "corrected")]["false"],
                               shape)

    def test_a_clear_case_stops_at_the_first_look(self):
        for shape in ("ln5", "mix"):
            self.assertGreaterEqual(
                self.rows[(shape, 0.50, "corrected")]["first"], 0.95, shape)

    def test_a_quiet_host_decides_no_difference(self):
        r = self.rows[("ln5", 1.0, "corrected")]
        self.assertGreaterEqual(r["decided"], 0.90)
        self.assertLess(r["mean_n"], LOOKS[-1])

    def test_schedule(self):
        self.assertEqual(LOOKS, [6, 13, 30])
        self.assertEqual(campaign_file.look_schedule(6, 7, 3), [6, 7])
        self.assertEqual(campaign_file.look_schedule(6, 30, 4),
                         [6, 10, 18, 30])
        th = Thresholds().for_looks(3)
        self.assertAlmostEqual(th.confidence, 1 - 0.05 / 3)
        self.assertAlmostEqual(th.alpha, 0.05 / 3)
        self.assertEqual(Thresholds().for_looks(1).confidence, 0.95)


if __name__ == "__main__":
    unittest.main()
