# SPDX-License-Identifier: GPL-2.0
"""A campaign's time budget (./run.sh campaign --budget, the budget key):
the durations it takes, how long the next look is estimated to take from
the done boots, the stop at the last look the budget covers (the running
of boots and the looks stood in for), and --dry-run's line."""

import math
import unittest
from unittest import mock

from scripts.campaign import estimate, file as campaign_file, run


def boots(reps, variants=("before", "after"), cpus=2, done_upto=0, wall=20.0):
    out = []
    for r in range(1, reps + 1):
        for v in variants:
            c = {"id": f"r{r:02d}-{v}-c{cpus}", "variant": v, "cpus": cpus, "rep": r,
                 "clock": "wall", "state": "done" if r <= done_upto else "planned"}
            if r <= done_upto:
                c["wall_s"] = wall
            out.append(c)
    return out


class Man:
    def __init__(self, cs, looks=(4, 8, 12)):
        self.data = {"campaign": {"looks": list(looks), "repetitions": looks[-1],
                                  "arches": ["arm"], "points": [{"duration_ms": 1000}] * 4},
                     "cells": cs}
        self.saved = 0

    def save(self):
        self.saved += 1


class Durations(unittest.TestCase):
    def test_parse(self):
        for text, secs in (("30m", 1800), ("1h30m", 5400), ("900s", 900), ("2m30s", 150),
                           ("1h", 3600)):
            self.assertEqual(campaign_file.parse_duration(text), secs)
        for text in ("", "0m", "m", "1.5h", "30 m", "30M", "200h", "-5m", None, 30):
            self.assertIsNone(campaign_file.parse_duration(text), text)


class NextLook(unittest.TestCase):
    def test_from_the_done_boots(self):
        # 4 repetitions done at 20 s a boot; the next look's 8 boots of 2
        # vCPUs run one at a time on 2 cores: 160 s
        man = Man(boots(12, done_upto=4))
        self.assertAlmostEqual(run.next_look_seconds(man, 4, 8, jobs=1, cores=2), 160)
        # two 1-vCPU boots fit side by side: half
        man1 = Man(boots(12, cpus=1, done_upto=4))
        self.assertAlmostEqual(run.next_look_seconds(man1, 4, 8, jobs=2, cores=2), 80)

    def test_nothing_done(self):
        self.assertEqual(run.next_look_seconds(Man(boots(12)), 4, 8, jobs=1, cores=2),
                         math.inf)


class Stop(unittest.TestCase):
    """run_boots with the batches and the looks stood in for: the clock
    advances by each batch's boots at 20 s."""

    def run_with(self, budget_s, decided_at=None):
        man = Man(boots(12))
        clock = [0.0]

        def batch(_d, m, _jobs, reps, _prog, _tried):
            for c in m.data["cells"]:
                if c["rep"] <= reps and c["state"] == "planned":
                    c.update(state="done", wall_s=20.0)
                    clock[0] += 20.0
            return []

        def look(_d, m, reps, _prog):
            m.data.setdefault("sequential", {"looks": [], "stopped_at": None})
            m.data["sequential"]["looks"].append({"reps": reps})
            return reps == decided_at

        with mock.patch.object(run, "run_batch", batch), \
                mock.patch.object(run, "take_look", look), \
                mock.patch.object(run.time, "monotonic", lambda: clock[0]), \
                mock.patch.object(run.os, "cpu_count", lambda: 2), \
                mock.patch("builtins.print"):
            run.run_boots("d", man, 1, budget_s)
        states = [c["state"] for c in man.data["cells"]]
        return man, states

    def test_stops_at_the_last_look_that_fits(self):
        # look at 4: 160 s spent, the next 160 s more: 320 > 300
        man, states = self.run_with(300)
        self.assertEqual(states.count("done"), 8)
        self.assertEqual(states.count("unneeded"), 16)
        self.assertEqual(man.data["sequential"]["stopped_at"], 4)
        self.assertEqual(man.data["sequential"]["stopped_by"], "budget")

    def test_a_budget_that_covers_two_looks(self):
        man, states = self.run_with(330)
        self.assertEqual(states.count("done"), 16)
        self.assertEqual(man.data["sequential"]["stopped_at"], 8)

    def test_no_budget_or_a_large_one_runs_all(self):
        for b in (None, 3600):
            man, states = self.run_with(b)
            self.assertEqual(states.count("done"), 24, b)
            self.assertNotIn("stopped_by", man.data["sequential"])

    def test_decided_first(self):
        man, states = self.run_with(300, decided_at=4)
        self.assertEqual(states.count("done"), 8)
        self.assertNotIn("stopped_by", man.data["sequential"])


class DryRun(unittest.TestCase):
    def test_budget_line(self):
        man = Man(boots(12))
        c, cs = man.data["campaign"], man.data["cells"]
        # defaults: a 2-vCPU wall boot with 4 points of 1 s is 4 + 4 * 2.5 = 14 s,
        # one at a time: the looks end at 112, 224 and 336 s
        with mock.patch.object(estimate, "samples", lambda _r, _a: ({}, [])):
            self.assertEqual(estimate.budget_line(c, cs, 1, "results", 300, cores=2),
                             "the budget (5 min) covers the looks up to 8 repetitions (about "
                             "4 min); the look at 12 would end at about 6 min: it stops at 8 "
                             "unless every primary cell is decided sooner")
            self.assertIn("covers every repetition",
                          estimate.budget_line(c, cs, 1, "results", 3600, cores=2))
            self.assertIn("is less than the first look",
                          estimate.budget_line(c, cs, 1, "results", 60, cores=2))


if __name__ == "__main__":
    unittest.main()
