# SPDX-License-Identifier: GPL-2.0
"""The position effect (analysis/estimate/position.py): synthetic boots whose place
in the repetition's order does (or does not) move their numbers.

8 repetitions x 3 variants (24 boots) per vCPU count, the variants in a
cyclic order (each holds each place about equally often), 2 points, a
throughput metric plus a latency metric that must be ignored.
"""

import math
import unittest
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.estimate import position
from analysis.render import position_section

VARIANTS = ("before", "after", "before~aa")
SCALE = {"before": 100e3, "after": 90e3, "before~aa": 100e3}
POINT_SCALE = {"p1": 1.0, "p2": 0.5}
METRIC = "throughput_run"


@dataclass(frozen=True)
class C:
    id: str
    variant: str
    cpus: int
    pos: int


def metric_for(_cpus, _point):
    return METRIC


def make(effect, seed, reps=8, cpus=(1, 2), cv=0.01, pos0=()):
    """(samples, boots): position 1's throughput times effect[0], 2's
    times effect[1], ...; boots of the repetitions in pos0 carry pos 0."""
    rng = np.random.default_rng(seed)
    rows, boots = [], []
    for rep in range(1, reps + 1):
        for cp in cpus:
            i = (rep - 1) % len(VARIANTS)
            order = VARIANTS[i:] + VARIANTS[:i]
            for pos, v in enumerate(order, 1):
                cid = f"r{rep:02d}-{v}-c{cp}"
                boots.append(C(cid, v, cp, 0 if rep in pos0 else pos))
                for pt, ps in POINT_SCALE.items():
                    x = (SCALE[v] * ps * effect[pos - 1]
                         * math.exp(rng.normal(0, cv)))
                    base = dict(campaign="t", variant=v, arch="arm", cpus=cp,
                                rep=rep, cell=cid, point=pt, read_pct=90,
                                mailboxes=16, miss_pct=0, duration_ms=1000)
                    rows.append(dict(base, metric=METRIC, value=x,
                                     unit="ops/s"))
                    # another metric, far off: must not enter the table
                    rows.append(dict(base, metric="lookup_lat_median_ns",
                                     value=1000 * pos * rng.random(),
                                     unit="ns"))
    return pd.DataFrame(rows), boots


class Table(unittest.TestCase):
    def test_first_position_slower(self):
        samples, boots = make((0.9, 1.0, 1.0), seed=1)
        t = position.position_table(samples, boots, metric_for)
        self.assertEqual(list(t.columns), list(position.COLUMNS))
        self.assertEqual(sorted(set(t["cpus"])), [1, 2])
        for cp, b in t.groupby("cpus"):
            b = b.set_index("pos")
            self.assertEqual(list(b.index), [1, 2, 3])
            # n counts boots (8 x 3 = 24), not boots x points
            self.assertEqual(b["n"].sum(), 24)
            self.assertLess(b.loc[1, "p_kruskal"], 0.05)
            self.assertLess(b.loc[1, "median"], b.loc[2, "median"])
            self.assertLess(b.loc[1, "median"], b.loc[3, "median"])
            self.assertAlmostEqual(b.loc[1, "median"] / b.loc[2, "median"],
                                   0.9, delta=0.02)
            for pos in (1, 2, 3):
                self.assertLessEqual(b.loc[pos, "ci_lo"], b.loc[pos, "median"])
                self.assertGreaterEqual(b.loc[pos, "ci_hi"],
                                        b.loc[pos, "median"])
            # the CIs of position 1 and the others do not overlap
            self.assertLess(b.loc[1, "ci_hi"], b.loc[2, "ci_lo"])
            # cyclic order over 8 repetitions: position 1 held by the
            # variant list rotated (reps 1, 4, 7 / 2, 5, 8 / 3, 6)
            self.assertEqual(b.loc[1, "variants"],
                             "before 3, after 3, before~aa 2")

    def test_no_effect(self):
        # seed 3: one draw (p is uniform without an effect: a fixed seed,
        # not a property; the calibration below is the property)
        samples, boots = make((1.0, 1.0, 1.0), seed=3, cv=0.03)
        t = position.position_table(samples, boots, metric_for)
        self.assertEqual(len(t), 6)
        for m in t["median"]:
            self.assertAlmostEqual(m, 1.0, delta=0.03)
        for p in t["p_kruskal"]:
            self.assertGreater(p, 0.2)

    def test_no_effect_false_alarms(self):
        # 200 campaigns without a position effect: about 5% of them at
        # p < 0.05 (binomial 95% range for 200 draws: 2% to 8.5%)
        ps = []
        for seed in range(200):
            samples, boots = make((1.0, 1.0, 1.0), seed=seed, cv=0.03,
                                  cpus=(2,))
            t = position.position_table(samples, boots, metric_for)
            ps.append(t["p_kruskal"].iloc[0])
        rate = float(np.mean(np.array(ps) < 0.05))
        self.assertGreaterEqual(rate, 0.015)
        self.assertLessEqual(rate, 0.095)

    def test_pos0_left_out(self):
        samples, boots = make((0.9, 1.0, 1.0), seed=1, pos0=(1, 2))
        t = position.position_table(samples, boots, metric_for)
        # 6 repetitions of 8 have positions: 18 boots per vCPU count
        for _cp, b in t.groupby("cpus"):
            self.assertEqual(b["n"].sum(), 18)
        samples, boots = make((0.9, 1.0, 1.0), seed=1, pos0=range(1, 9))
        t = position.position_table(samples, boots, metric_for)
        self.assertTrue(t.empty)
        self.assertEqual(list(t.columns), list(position.COLUMNS))
        self.assertEqual(position_section.position_lines(t, lambda _c: METRIC), [])

    def test_boots_without_samples_and_empty(self):
        samples, boots = make((1.0, 1.0, 1.0), seed=3)
        t = position.position_table(samples.iloc[0:0], boots, metric_for)
        self.assertTrue(t.empty)
        t = position.position_table(samples, [], metric_for)
        self.assertTrue(t.empty)

    def test_untestable(self):
        # one position only, and all values equal: no p
        samples, boots = make((1.0, 1.0, 1.0), seed=3, cpus=(2,))
        one = [C(b.id, b.variant, b.cpus, 1) for b in boots]
        t = position.position_table(samples, one, metric_for)
        self.assertEqual(list(t["pos"]), [1])
        self.assertTrue(math.isnan(t["p_kruskal"].iloc[0]))
        flat = samples.assign(value=5.0)
        t = position.position_table(flat, boots, metric_for)
        self.assertEqual(len(t), 3)
        self.assertTrue(t["p_kruskal"].isna().all())
        lines = position_section.position_lines(t, lambda _c: METRIC)
        self.assertTrue(any("too few positions" in x for x in lines))


class Lines(unittest.TestCase):
    def test_mentions_each_vcpu_count(self):
        samples, boots = make((0.9, 1.0, 1.0), seed=1, cpus=(1, 2, 4))
        t = position.position_table(samples, boots, metric_for)
        lines = position_section.position_lines(t, lambda c: f"m{c}")
        self.assertEqual(lines[0], "## Position in the repetition")
        text = "\n".join(lines)
        for cp, word in ((1, "1 vCPU:"), (2, "2 vCPUs:"), (4, "4 vCPUs:")):
            self.assertIn(word, text)
            self.assertIn(f"| {cp} | m{cp} | 1 |", text)
        self.assertEqual(text.count("compare only counterbalanced orders"), 3)
        # one table row per (vCPUs, position)
        self.assertEqual(sum(x.startswith("| ") and x[2].isdigit()
                             for x in lines), 9)

    def test_no_effect_sentence(self):
        samples, boots = make((1.0, 1.0, 1.0), seed=3, cv=0.03)
        t = position.position_table(samples, boots, metric_for)
        text = "\n".join(position_section.position_lines(t, lambda _c: METRIC))
        self.assertNotIn("compare only counterbalanced", text)
        self.assertEqual(text.count("no sign that the position moved"), 2)


if __name__ == "__main__":
    unittest.main()
