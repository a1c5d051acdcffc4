# SPDX-License-Identifier: GPL-2.0
"""The verdict for exact data (analysis/estimate/exact.py: cells on
QEMU's instruction count, icount) on simulated cells with known answers,
through the rule itself (exact.log_interval_many, what exact.compare
computes, and stats.verdict).

Each boot's value is the true value times exp(e), e independent from
boot to boot: normal with sd 3e-6; uniform on +-5e-6; a two-point
mixture (e = +4e-5 in one boot of ten, else exactly 0: the boots tie);
a heavier normal with sd 1e-4; and the variant 10x and 30x noisier
than the baseline (sd 3e-5, 9e-5 against 3e-6: a kernel whose count
varies more than the baseline's).  A cell has the baseline, its A/A
control (the same image booted again: the baseline's distribution,
offset by a known amount) and the variant, n boots each.  Checked and
printed, per noise model and n:

(a) the A/A check can fail: the control against its baseline on each
    side's own range (control=True) flags (its interval excludes 1) an
    offset of 10 ppm in >= 75% of cells with sd 3e-6 at n = 3, where
    the pooled range of the rule before (printed beside it, "old")
    flagged 0%, whatever the offset: a range that holds both sides
    holds their difference; its false flags at offset 0 are printed
    (a flag widens the comparison's interval by its distance from 1,
    guards.calibrate: a false one costs a few ppm);
(b) the coverage of the true ratio (1.00, 1.01, 0.99) by the interval
    of a real pair (the baseline pooled with its control, the
    variant's range counted exact.VAR_WEIGHT times): >= 95% at n >= 3
    in every model, the noisier variants included;
(c) power: a true 1% slowdown of a lower-is-better metric at a 0.5%
    margin is `harm` in >= 99% at n = 3 in the tiny-noise models and
    with the 10x noisier variant;
(d) a true ratio 1.00 is favourable (`no harm`, or `better` where the
    interval misses it on the good side) in >= 99% in the same.

The table:
  /usr/bin/python3 -m unittest -v tests.unit.test_exact_sim
  LOCKBENCH_SIM_FULL=1 ...   # the 10000 cells a row of analysis/README.md
"""

import os
import unittest

import numpy as np

from analysis.estimate import exact, stats

from analysis.estimate.thresholds import Thresholds

SIMS = 10000 if os.environ.get("LOCKBENCH_SIM_FULL") else 2000
TRUE = 1.0e7  # instructions: icount's counts are 10^5 to 10^9
RATIOS = (1.0, 1.01, 0.99)
OFFSETS = (0.0, 1e-5)
MARGIN = 0.005
TH = Thresholds(margin=MARGIN)


def normal(sd):
    return lambda rng, size: rng.normal(0, sd, size)


NOISE = {  # name: (baseline's noise, variant's noise)
    "normal 3e-6": (normal(3e-6), normal(3e-6)),
    "uniform 5e-6": ((lambda rng, size: rng.uniform(-5e-6, 5e-6, size)),) * 2,
    "two-point": ((lambda rng, size: np.where(rng.random(size) < 0.1,
                                              4e-5, 0.0)),) * 2,
    "normal 1e-4": (normal(1e-4), normal(1e-4)),
    "variant 10x": (normal(3e-6), normal(3e-5)),
    "variant 30x": (normal(3e-6), normal(9e-5)),
}
TINY = ("normal 3e-6", "uniform 5e-6", "two-point", "variant 10x")
NS = {m: (3, 4) for m in NOISE}
NS.update({"variant 10x": (3, 5), "variant 30x": (3, 5)})


def logs(rng, noise, n, ratio=1.0):
    return np.log(TRUE * ratio) + noise(rng, (SIMS, n))


def labels(d, w, direction="lower"):
    return [stats.verdict(float(np.exp(x)), float(np.exp(x - y)),
                          float(np.exp(x + y)), direction, MARGIN, 3,
                          exact.MIN_N)[0] for x, y in zip(d, w)]


def simulate(model, n, seed):
    rng = np.random.default_rng(seed)
    nb, nv = NOISE[model]
    out = {}
    for off in OFFSETS:
        lb, la = logs(rng, nb, n), logs(rng, nb, n, np.exp(off))
        d, w = exact.log_interval_many(lb, la, control=True)
        out[("aa", off)] = float(np.mean(np.abs(d) > w))
        # the rule before: the control judged within the pooled range
        old = np.ptp(np.concatenate([lb, la], axis=1), axis=1)
        out[("old", off)] = float(np.mean(np.abs(d) > np.maximum(
            old, exact.FLOOR) + exact.EPS))
    for r in RATIOS:
        lb, la = logs(rng, nb, n), logs(rng, nb, n)
        lv = logs(rng, nv, n, r)
        d, w = exact.log_interval_many(lb, lv, la)
        cover = np.abs(d - np.log(r)) <= w
        lab = labels(d, w)
        out[r] = dict(cover=float(np.mean(cover)),
                      harm=lab.count(stats.HARM) / SIMS,
                      no_harm=(lab.count(stats.NO_HARM)
                               + lab.count(stats.BETTER)) / SIMS,
                      w=float(np.median(w)))
    return out


class ExactSimulation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = {}
        seed = 900
        for model in NOISE:
            for n in NS[model]:
                seed += 1
                cls.rows[(model, n)] = simulate(model, n, seed)
        print(f"\nexact data (icount) on {SIMS} simulated cells a row, "
              f"margin {MARGIN:.1%}, lower is better; n boots each of "
              f"baseline, A/A control, variant:")
        print("| noise | n | A/A flags, 0 ppm | A/A flags, 10 ppm | old rule, "
              "10 ppm | cover 1.00 | cover 1.01 | cover 0.99 | harm at 1.01 "
              "| favourable at 1.00 | w (median) |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for (model, n), o in cls.rows.items():
            print(f"| {model} | {n} | {100 * o[('aa', 0.0)]:.1f}% | "
                  f"{100 * o[('aa', 1e-5)]:.1f}% | "
                  f"{100 * o[('old', 1e-5)]:.1f}% | "
                  + " | ".join(f"{100 * o[r]['cover']:.1f}%" for r in RATIOS)
                  + f" | {100 * o[1.01]['harm']:.1f}% | "
                  f"{100 * o[1.0]['no_harm']:.1f}% | "
                  f"{exact.ppm_s(o[1.0]['w'])} |")

    def test_the_aa_check_can_fail(self):
        o = self.rows[("normal 3e-6", 3)]
        self.assertGreaterEqual(o[("aa", 1e-5)], 0.75)
        # the pooled range could not: 0 flags at any offset
        for (model, n), o in self.rows.items():
            self.assertEqual(o[("old", 1e-5)], 0.0, (model, n))
            # an offset above the boots' noise is flagged far more often
            # than none (at sd 1e-4, 10 ppm is inside the noise)
            if model in TINY:
                self.assertGreater(o[("aa", 1e-5)], 5 * o[("aa", 0.0)],
                                   (model, n))

    def test_a_constant_offset_between_constant_sides_is_flagged(self):
        # both sides constant, a count apart: the old pooled range held
        # the difference and said nothing; each side's own range is 0
        for x in (1000, 452690):
            c = exact.compare([x] * 3, [x + 1] * 3, "higher", TH, control=True)
            self.assertTrue(c.significant, x)
            self.assertEqual(c.verdict, stats.BETTER)

    def test_coverage(self):
        for (model, n), o in self.rows.items():
            for r in RATIOS:
                self.assertGreaterEqual(o[r]["cover"], 0.95, (model, n, r))

    def test_power_at_one_percent(self):
        for model in TINY:
            self.assertGreaterEqual(self.rows[(model, 3)][1.01]["harm"], 0.99,
                                    model)

    def test_no_harm_at_one(self):
        for model in TINY:
            self.assertGreaterEqual(self.rows[(model, 3)][1.0]["no_harm"],
                                    0.99, model)

    def test_compare_is_the_simulated_rule(self):
        rng = np.random.default_rng(5)
        b, a, v = (TRUE * np.exp(rng.normal(0, 3e-6, 3)) for _ in range(3))
        c = exact.compare(b, v * 1.01, "lower", TH, aa=a)
        d, w = exact.log_interval_many(np.log(b)[None], np.log(v * 1.01)[None],
                                       np.log(a)[None])
        self.assertAlmostEqual(np.log(c.ratio), d[0], places=12)
        self.assertAlmostEqual(np.log(c.ratio_ci_hi / c.ratio), w[0], places=12)
        self.assertEqual(c.n_base, 6)  # the baseline's with its control's


if __name__ == "__main__":
    unittest.main()
