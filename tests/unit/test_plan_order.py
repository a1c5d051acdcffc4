# SPDX-License-Identifier: GPL-2.0
"""The order a campaign's variants run in within a repetition
(scripts/campaign/manifest.py variant_order) and the boots plan() makes
of it: their positions, and the icount vCPU counts that stop after
icount_repetitions.

"balanced" exists because "alternate" is not: with 3 variants the list
reversed on even repetitions keeps the middle variant in the middle, so
a position effect (analysis/estimate/position.py) lands on one variant only.
"""

import itertools
import random
import unittest
from collections import Counter

from scripts.campaign import manifest as cm


def campaign(variants, order, reps, clock=None, icount_reps=3, cpus=(1, 2)):
    return {"variants": list(variants), "order": order, "seed": 1,
            "repetitions": reps, "cpus": list(cpus),
            "clock": clock or {str(c): "wall" for c in cpus},
            "icount_repetitions": icount_reps}


def orders(c, reps):
    rng = random.Random(c["seed"])
    return [cm.variant_order(c, rep, rng) for rep in range(1, reps + 1)]


def held(seq):
    """Counter of (variant, position) over a list of orders."""
    return Counter((v, pos) for o in seq for pos, v in enumerate(o, 1))


class Balanced(unittest.TestCase):
    def test_three_variants_six_repetitions(self):
        vs = ["before", "after", "before~aa"]
        seq = orders(campaign(vs, "balanced", 6), 6)
        counts = held(seq)
        for v in vs:
            for pos in (1, 2, 3):
                self.assertEqual(counts[(v, pos)], 2, (v, pos, seq))
        self.assertEqual({tuple(o) for o in seq},
                         set(itertools.permutations(vs)))
        # every repetition is a permutation of the list
        for o in seq:
            self.assertEqual(sorted(o), sorted(vs))

    def test_two_and_four_variants(self):
        for k in (2, 4):
            vs = [f"v{i}" for i in range(k)]
            for cycles in (1, 2):
                seq = orders(campaign(vs, "balanced", 2 * k * cycles),
                             2 * k * cycles)
                counts = held(seq)
                self.assertEqual(set(counts.values()), {2 * cycles},
                                 (k, seq))
                self.assertEqual(len(counts), k * k)

    def test_first_repetition_is_the_list(self):
        vs = ["a", "b", "c"]
        self.assertEqual(orders(campaign(vs, "balanced", 1), 1), [vs])

    def test_does_not_change_the_variant_list(self):
        c = campaign(["a", "b", "c"], "balanced", 6)
        orders(c, 6)
        self.assertEqual(c["variants"], ["a", "b", "c"])


class Alternate(unittest.TestCase):
    def test_middle_stays_in_the_middle(self):
        # why "balanced" exists: alternate never moves the middle variant
        vs = ["before", "after", "before~aa"]
        seq = orders(campaign(vs, "alternate", 6), 6)
        self.assertEqual(seq[0], vs)
        self.assertEqual(seq[1], vs[::-1])
        self.assertTrue(all(o[1] == "after" for o in seq))
        counts = held(seq)
        self.assertEqual(counts[("after", 2)], 6)
        self.assertEqual(counts[("before", 2)], 0)

    def test_two_variants_alternate_is_balanced(self):
        seq = orders(campaign(["a", "b"], "alternate", 4), 4)
        self.assertEqual(set(held(seq).values()), {2})


class Random(unittest.TestCase):
    def test_seeded_permutations(self):
        vs = ["a", "b", "c", "d"]
        c = campaign(vs, "random", 10)
        first, again = orders(c, 10), orders(c, 10)
        self.assertEqual(first, again)
        for o in first:
            self.assertEqual(sorted(o), vs)
        self.assertGreater(len({tuple(o) for o in first}), 1)


class Plan(unittest.TestCase):
    def check_positions(self, c):
        boots = cm.plan(c)
        rng = random.Random(c["seed"])
        by_key = {}
        for rep in range(1, c["repetitions"] + 1):
            for cpus in c["cpus"]:
                by_key[(rep, cpus)] = cm.variant_order(c, rep, rng)
        groups = {}
        for boot in boots:
            groups.setdefault((boot["rep"], boot["cpus"]), []).append(boot)
        for key, group in groups.items():
            self.assertEqual([g["variant"] for g in group], by_key[key], key)
            self.assertEqual([g["pos"] for g in group],
                             list(range(1, len(group) + 1)), key)
            for g in group:
                self.assertEqual(g["id"],
                                 f"r{g['rep']:02d}-{g['variant']}-c{g['cpus']}")
                self.assertEqual(g["state"], "planned")
        return boots

    def test_every_boot_has_its_position(self):
        for order in ("balanced", "alternate", "random"):
            c = campaign(["before", "after", "before~aa"], order, 6)
            boots = self.check_positions(c)
            self.assertEqual(len(boots), 6 * 2 * 3)
            self.assertTrue(all("clock" not in x for x in boots))

    def test_balanced_plan_counterbalances_each_vcpu_count(self):
        vs = ["before", "after", "before~aa"]
        boots = cm.plan(campaign(vs, "balanced", 6))
        for cpus in (1, 2):
            counts = Counter((x["variant"], x["pos"]) for x in boots
                             if x["cpus"] == cpus)
            self.assertEqual(set(counts.values()), {2})
            self.assertEqual(len(counts), 9)

    def test_icount_stops_after_its_repetitions(self):
        c = campaign(["before", "after", "before~aa"], "balanced", 8,
                     clock={"1": "icount", "2": "wall"}, icount_reps=3)
        boots = self.check_positions(c)
        one = [x for x in boots if x["cpus"] == 1]
        two = [x for x in boots if x["cpus"] == 2]
        self.assertEqual(sorted({x["rep"] for x in one}), [1, 2, 3])
        self.assertEqual(sorted({x["rep"] for x in two}), list(range(1, 9)))
        self.assertEqual(len(one), 3 * 3)
        self.assertEqual(len(two), 8 * 3)
        self.assertTrue(all(x["clock"] == "icount" for x in one))
        self.assertTrue(all("clock" not in x for x in two))
        # 3 icount repetitions of 3 variants: the cyclic square, each
        # variant in each position once
        self.assertEqual(set(Counter((x["variant"], x["pos"])
                                     for x in one).values()), {1})

    def test_icount_keeps_the_random_orders(self):
        # the icount vCPU count's skipped repetitions do not shift the
        # random draws of the wall-clock ones
        vs = ["a", "b", "c"]
        wall = cm.plan(campaign(vs, "random", 6))
        mixed = cm.plan(campaign(vs, "random", 6,
                                 clock={"1": "icount", "2": "wall"}))
        pick = [(x["id"], x["pos"]) for x in wall if x["cpus"] == 2]
        self.assertEqual(pick, [(x["id"], x["pos"]) for x in mixed
                                if x["cpus"] == 2])


if __name__ == "__main__":
    unittest.main()
