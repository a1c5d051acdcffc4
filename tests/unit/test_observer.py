# SPDX-License-Identifier: GPL-2.0
"""analyze + report on a synthetic campaign of five variants: before and
after with lock_stat, their twins before-plain and after-plain without
(no lock_stat.txt: a note, not a problem), and rcu, whose lookups take no
lock (lock_stat counts writes only). The campaign's `compare` pairs drive
the comparisons; the observer-effect section sets after/before beside
after-plain/before-plain."""

import os
import shutil
import tempfile
import unittest

import numpy as np

from analysis import analyze, report
from analysis.verdict import observer
from tests.unit import synth
from tests.unit.helpers import read_csv, run_main

VARIANTS = [
    {"name": "before", "lock": "rw", "patches": ["0001"], "scale": 0.5},
    # with lock_stat, after is 20% faster at p1; without, only 5%
    {"name": "after", "lock": "spin", "patches": ["0001", "0002"],
     "scale": 0.5, "effects": {"p1": 1.20}},
    {"name": "before-plain", "lock": "none", "patches": ["0001"]},
    {"name": "after-plain", "lock": "none", "patches": ["0001", "0002"],
     "effects": {"p1": 1.05}},
    {"name": "rcu", "lock": "rcu", "patches": ["0001", "0002", "0003"],
     "scale": 0.5, "effects": {"p1": 1.8, "p2": 1.5}},
]
COMPARE = [["before", "after"], ["before-plain", "after-plain"],
           ["after", "rcu"]]
NOTE = "no lock_stat (kernel built without CONFIG_LOCK_STAT)"


class Observer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="analysis-observer-")
        cls.dir = os.path.join(cls.tmp, "observer-20240101T000000Z")
        synth.make_run(cls.dir, variants=VARIANTS, compare=COMPARE)
        cls.a_status, cls.a_out, cls.a_err = run_main(analyze.main,
                                                      [cls.dir])
        cls.r_status, cls.r_out, cls.r_err = run_main(
            report.main, [cls.dir, "--resamples", "2000"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def tidy(self, name):
        return read_csv(os.path.join(self.dir, "tidy", name))

    def test_no_lock_stat_is_a_note_not_a_problem(self):
        self.assertEqual(self.a_status, 0, self.a_err)
        self.assertEqual(self.tidy("problems.csv"), [])
        self.assertNotIn("warning", self.a_err)
        for v in ("before-plain", "after-plain"):
            self.assertIn(f"analyze: note: {v}: {NOTE}", self.a_err)
        notes = {r["variant"]: r["note"] for r in self.tidy("notes.csv")}
        self.assertEqual(set(notes), {"before-plain", "after-plain", "rcu"})
        self.assertTrue(notes["before-plain"].startswith(NOTE))
        self.assertIn(NOTE, self.r_out)

    def test_crosscheck_relations(self):
        rel = {}
        for r in self.tidy("crosscheck.csv"):
            rel.setdefault(r["variant"], set()).add((r["relation"], r["ok"]))
        self.assertEqual(rel["before"], {("rw", "1")})
        self.assertEqual(rel["after"], {("total", "1")})
        self.assertEqual(rel["rcu"], {("writes", "1")})
        self.assertEqual(rel["before-plain"], {("no_lock_stat", "")})
        rows = [r for r in self.tidy("crosscheck.csv") if r["variant"] == "rcu"]
        for r in rows:
            self.assertEqual(r["expected"], r["lockops_write"])
            self.assertNotEqual(r["lockops_read"], "0")

    def test_lock_metrics_absent_without_lock_stat(self):
        plain = {r["metric"] for r in self.tidy("samples.csv")
                 if r["variant"] == "after-plain"}
        self.assertIn("throughput_ops_s", plain)
        self.assertFalse({m for m in plain if m.startswith("lock_")})

    def test_compare_pairs(self):
        rows = read_csv(os.path.join(self.dir, "tidy", "comparisons.csv"))
        pairs = list(dict.fromkeys((r["baseline"], r["variant"]) for r in rows))
        self.assertEqual(pairs, [tuple(p) for p in COMPARE])
        # lock_* metrics only where both sides measured them
        plain = {r["metric"] for r in rows if r["variant"] == "after-plain"}
        self.assertFalse({m for m in plain if m.startswith("lock_")})
        self.assertIn("lock_contentions", {r["metric"] for r in rows
                                           if r["variant"] == "rcu"})
        rcu = [r for r in rows if r["variant"] == "rcu"
               and r["metric"] == "throughput_ops_s"]
        self.assertTrue(all(abs(float(r["ratio"]) - 1.5) < 0.05 for r in rcu))
        comps = self.tidy("comparisons.csv")
        self.assertEqual(list(dict.fromkeys((r["baseline"], r["variant"])
                                            for r in comps)),
                         [tuple(p) for p in COMPARE])

    def test_observer_section(self):
        self.assertEqual(self.r_status, 0, self.r_err)
        md = self.r_out
        self.assertIn("## Observer effect: after/before with LOCK_STAT vs "
                      "after-plain/before-plain without (throughput_ops_s)",
                      md)
        self.assertIn("**How far lockdep changes the conclusion:**", md)
        obs = read_csv(os.path.join(self.dir, "observer.csv"))
        self.assertEqual(len(obs), 2)
        byp = {r["point"]: r for r in obs}
        p1, p2 = byp["p1"], byp["p2"]
        self.assertAlmostEqual(float(p1["ratio"]), 1.20, delta=0.02)
        self.assertAlmostEqual(float(p1["ratio_plain"]), 1.05, delta=0.02)
        self.assertAlmostEqual(float(p1["ratio_of_ratios"]), 1.05 / 1.20,
                               delta=0.02)
        self.assertLess(float(p1["rr_ci_hi"]), 1)
        self.assertEqual((p1["verdict"], p1["verdict_plain"]),
                         ("better", "better"))
        self.assertLessEqual(float(p2["rr_ci_lo"]), 1)
        self.assertGreaterEqual(float(p2["rr_ci_hi"]), 1)
        self.assertAlmostEqual(float(p2["lockstat_cost_base"]), 0.5,
                               delta=0.02)
        self.assertIn("its 95% CI excludes 1 in 1 of 2 cell(s)", md)

    def test_explicit_baseline_overrides_compare(self):
        d = os.path.join(self.tmp, "copy")
        shutil.copytree(self.dir, d)
        st, out, err = run_main(report.main, [d, "--baseline",
                                              "before", "--resamples", "500"])
        self.assertEqual(st, 0, err)
        rows = read_csv(os.path.join(d, "tidy", "comparisons.csv"))
        self.assertEqual({r["baseline"] for r in rows}, {"before"})
        self.assertEqual(len({r["variant"] for r in rows}), 4)
        self.assertFalse(os.path.exists(os.path.join(d, "observer.csv")))

    def test_a_folder_where_observer_csv_goes(self):
        """Every file is written, or removed, last (analysis/outputs.py):
        one that cannot be is one line and exit 2, never a traceback."""
        d = os.path.join(self.tmp, "folder")
        shutil.copytree(self.dir, d)
        there = os.path.join(d, "observer.csv")
        if os.path.lexists(there):
            os.unlink(there)
        os.mkdir(there)
        st, _out, err = run_main(report.main, [d, "--baseline", "before",
                                               "--resamples", "500", "--quiet"])
        self.assertEqual(st, 2, err)
        self.assertEqual(err.strip().splitlines(),
                         [f"report: {d}/observer.csv: cannot remove: Is a directory"])


class RatioOfRatios(unittest.TestCase):
    def test_known_answer(self):
        b1, v1 = [10.0] * 6, [12.0] * 6
        b2, v2 = [20.0] * 6, [21.0] * 6
        rr, lo, hi = observer.ratio_of_ratios(b1, v1, b2, v2, resamples=200)
        self.assertAlmostEqual(rr, (21 / 20) / (12 / 10))
        self.assertAlmostEqual(lo, rr)
        self.assertAlmostEqual(hi, rr)

    def test_ci_covers_noise(self):
        rng = np.random.default_rng(3)
        g = [list(m * (1 + 0.01 * rng.standard_normal(8)))
             for m in (10, 12, 20, 24)]
        rr, lo, hi = observer.ratio_of_ratios(*g, resamples=2000)
        self.assertLess(lo, rr)
        self.assertGreater(hi, rr)
        self.assertLessEqual(lo, 1.0 + 0.03)
        self.assertGreaterEqual(hi, 1.0 - 0.03)

    def test_empty_group(self):
        rr, lo, hi = observer.ratio_of_ratios([], [1.0], [1.0], [1.0])
        self.assertTrue(np.isnan(rr) and np.isnan(lo) and np.isnan(hi))


if __name__ == "__main__":
    unittest.main()
