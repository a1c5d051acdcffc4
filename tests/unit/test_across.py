# SPDX-License-Identifier: GPL-2.0
"""./run.sh compare DIR1 DIR2 (analysis/across.py): two runs of one
campaign, per primary cell both ratios and their ratio with a CI.

The interval of the ratio of ratios is approximate (each run's interval
read as a normal one on the log scale): its coverage is simulated here
with known answers.  Two independent runs of a cell, n boots a side
(lognormal, CV 5%: a quiet host; or the two-speed host of
test_every_boot_sim: each boot at 0.65x with probability 0.3), each
judged as the table judges it (the Hodges-Lehmann ratio and its Moses
CI at 97.5%, mann_whitney.shift_ci_many), the true ratio 0.90 in run 1
and 0.90 or 0.95 in run 2 (a true ratio of ratios 1.000 or 1.056).
Printed: the coverage of the true ratio of ratios by the 95% CI, and
how often it excludes 1; asserted >= 95% coverage (the Moses CIs are
conservative at these n, so the combined one is too).

  /usr/bin/python3 -m unittest -v tests.unit.test_across
  LOCKBENCH_SIM_FULL=1 ...   # 20000 pairs of runs a row (analysis/README.md)
"""

import io
import math
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import numpy as np

from analysis import across, report
from analysis.estimate import mann_whitney
from tests.unit import synth
from tests.unit.helpers import run_main

SIMS = 20000 if os.environ.get("LOCKBENCH_SIM_FULL") else 4000
LEVEL = 0.975  # each run's level (the default campaign's, per look)
SIGMA = math.sqrt(math.log1p(0.05 ** 2))


def boots(rng, n, ratio, host):
    x = ratio * np.exp(rng.normal(0, SIGMA, (SIMS, n)))
    if host == "two-speed":
        x *= np.where(rng.random((SIMS, n)) < 0.3, 0.65, 1.0)
    return x


def coverage(n, host, r2, seed):
    rng = np.random.default_rng(seed)
    runs = []
    for r in (0.90, r2):
        sh, lo, hi = mann_whitney.shift_ci_many(boots(rng, n, 1.0, host),
                                                boots(rng, n, r, host), LEVEL)
        runs.append((np.exp(sh), np.exp(lo), np.exp(hi)))
    (a, alo, ahi), (b, blo, bhi) = runs
    rr = [across.rr_interval(*map(float, (a[i], alo[i], ahi[i])), LEVEL,
                             *map(float, (b[i], blo[i], bhi[i])), LEVEL, 0.95)
          for i in range(SIMS)]
    truth = r2 / 0.90
    cover = np.mean([lo <= truth <= hi for _r, lo, hi in rr])
    moved = np.mean([not lo <= 1 <= hi for _r, lo, hi in rr])
    return float(cover), float(moved)


class AcrossSimulation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = {}
        seed = 41
        for host in ("quiet", "two-speed"):
            for n in (8, 16):
                for r2 in (0.90, 0.95):
                    seed += 1
                    cls.rows[(host, n, r2)] = coverage(n, host, r2, seed)
        print(f"\nacross runs: {SIMS} pairs of runs a row, each run's "
              f"intervals at {100 * LEVEL:g}%, the ratio of ratios' at 95%:")
        print("| host | n | true ratio of ratios | cover | CI excludes 1 |")
        print("|---|--:|--:|--:|--:|")
        for (host, n, r2), (cover, moved) in cls.rows.items():
            print(f"| {host} | {n} | {r2 / 0.90:.3f} | {100 * cover:.1f}% | "
                  f"{100 * moved:.1f}% |")

    def test_coverage(self):
        for k, (cover, _moved) in self.rows.items():
            self.assertGreaterEqual(cover, 0.95, k)

    def test_a_real_move_is_seen_on_a_quiet_host(self):
        self.assertGreater(self.rows[("quiet", 16, 0.95)][1], 0.5)


class CompareCommand(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="across-")
        cls.one = os.path.join(cls.tmp, "one")
        cls.two = os.path.join(cls.tmp, "two")
        synth.make_default_run(cls.one, seed=1)
        # run 2: read50 at 2 vCPUs now loses 10%
        synth.make_default_run(cls.two, seed=2,
                               effects={(2, "read50"): 0.90})
        for d in (cls.one, cls.two):
            status, _out, err = run_main(report.main, [d, "--quiet"])
            assert status == 0, err

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def run_compare(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = across.main(list(argv))
        return status, out.getvalue(), err.getvalue()

    def test_a_row_per_primary_cell_and_the_move_seen(self):
        status, out, err = self.run_compare(self.one, self.two)
        self.assertEqual(status, 0, err)
        rows = [x for x in out.splitlines() if x.startswith("| after vs before")]
        self.assertEqual(len(rows), 8)
        read50 = next(x for x in rows if "| 2 | read50 |" in x)
        self.assertNotIn("~", read50.split("|")[-2])   # its CI excludes 1
        self.assertIn("| harm |", next(x for x in rows if "| 2 | read95 |" in x))
        self.assertIn("moved (its CI excludes 1) in", out)
        self.assertRegex(out, r"2 vCPUs read50 0\.(8|9)")

    def test_other_campaigns_are_refused_in_one_line(self):
        other = os.path.join(self.tmp, "other")
        shutil.copytree(self.one, other)
        path = os.path.join(other, "manifest.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace('"mailboxes": 256', '"mailboxes": 128'))
        status, out, err = self.run_compare(self.one, other)
        self.assertEqual((status, out), (2, ""))
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("point read95-long: mailboxes 256 vs 128", err)

    def test_an_unreported_run_is_refused(self):
        bare = os.path.join(self.tmp, "bare")
        synth.make_default_run(bare, seed=3)
        status, _out, err = self.run_compare(self.one, bare)
        self.assertEqual(status, 2)
        self.assertIn("./run.sh report", err)


if __name__ == "__main__":
    unittest.main()
