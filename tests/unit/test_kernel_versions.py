# SPDX-License-Identifier: GPL-2.0
"""A run of two kernel versions (campaign kernels = ["6.1", "6.12"]):
every comparison row names its kernel, each pair's answer says which
Linux it booted, and one sentence per pair says where the verdict holds
across the versions and where it does not (analysis/render/answer.py
across_kernels)."""

import csv
import os
import shutil
import tempfile
import unittest

from analysis import report
from tests.unit import synth
from tests.unit.helpers import run_main


class TwoKernels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kernels-")
        cls.dir = os.path.join(cls.tmp, "versions-20260101T000000Z")
        specs = [
            {"name": "before", "lock": "rw", "patches": ["0001"]},
            {"name": "after", "lock": "spin", "patches": ["0001", "0002"]},
            {"name": "before@6.12", "lock": "rw", "patches": ["0001"],
             "kernel_version": "6.12.118"},
            # The conversion harms p1 on 6.12 only.
            {"name": "after@6.12", "lock": "spin", "patches": ["0001", "0002"],
             "kernel_version": "6.12.118", "effects": {"p1": 0.80}},
        ]
        synth.make_run(cls.dir, variants=specs, reps=8,
                       compare=[["before", "after"], ["before@6.12", "after@6.12"]])
        status, _out, err = run_main(report.main, [cls.dir, "--quiet"])
        assert status == 0, err
        with open(os.path.join(cls.dir, "answer.txt")) as f:
            cls.answer = f.read()
        with open(os.path.join(cls.dir, "tidy", "comparisons.csv")) as f:
            cls.rows = list(csv.DictReader(f))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_rows_name_their_kernel(self):
        kernels = {(r["baseline"], r["variant"]): r["kernel"] for r in self.rows}
        self.assertEqual(kernels, {("before", "after"): "6.1",
                                   ("before@6.12", "after@6.12"): "6.12"})

    def test_each_answer_names_its_linux(self):
        self.assertIn("Answer for after against before on Linux 6.1.192 (", self.answer)
        self.assertIn("Answer for after@6.12 against before@6.12 on Linux 6.12.118 (",
                      self.answer)

    def test_across_versions(self):
        last = self.answer.strip().split("\n\n")[-1]
        self.assertTrue(last.startswith(
            "Across Linux 6.1 and Linux 6.12, after against before: the same verdict at "
            "1 of 2 primary cells (2 vCPUs p2 no harm); a different one at 2 vCPUs p1 "
            "(6.1: no harm "), last)
        self.assertIn(", 6.12: harm 0.8", last)
        self.assertNotIn("undecided", last)
        self.assertNotIn("\n", last)

    def test_across_when_nothing_is_decided(self):
        """Two versions that both leave a cell open do not 'agree' on it."""
        import pandas as pd
        from analysis.render import answer
        rows = pd.DataFrame([
            {"baseline": b, "variant": v, "kernel": k, "cpus": 2, "point": p,
             "verdict": verdict, "ratio": 1.0, "ratio_ci_lo": 0.9, "ratio_ci_hi": 1.1,
             "clock": "wall"}
            for (b, v, k) in (("before", "after", "6.1"), ("before@6.12", "after@6.12", "6.12"))
            for p, verdict in (("p1", "inconclusive (n≈40)"), ("p2", "no harm"))])
        (text,) = answer.across_kernels(rows)
        self.assertEqual(text, "Across Linux 6.1 and Linux 6.12, after against before: the "
                               "same verdict at 1 of 2 primary cells (2 vCPUs p2 no harm); "
                               "undecided on every version at 2 vCPUs p1.")
        self.assertEqual(answer.across_kernels(rows[rows["kernel"] == "6.1"]), [])

    def test_commit_block_says_it_too(self):
        with open(os.path.join(self.dir, "commit-msg.txt")) as f:
            text = f.read()
        self.assertIn("after@6.12 vs before@6.12 on Linux 6.12.118", text)
        self.assertIn("Across Linux 6.1 and Linux 6.12, after", text)
        self.assertTrue(all(len(line) <= 72 for line in text.splitlines()), text)


class PreemptRT(unittest.TestCase):
    def test_answer_names_the_regime(self):
        """A pair of PREEMPT_RT kernels (build-meta.json preempt = "rt")
        is answered as such, beside a pair of the same kernels without."""
        tmp = tempfile.mkdtemp(prefix="rt-")
        self.addCleanup(shutil.rmtree, tmp)
        d = os.path.join(tmp, "rt-20260101T000000Z")
        specs = [{"name": "before", "lock": "rw", "patches": ["0001"]},
                 {"name": "after", "lock": "spin", "patches": ["0001", "0002"]},
                 {"name": "before-rt", "lock": "rw", "patches": ["0001"], "preempt": "rt"},
                 {"name": "after-rt", "lock": "spin", "patches": ["0001", "0002"],
                  "preempt": "rt"}]
        synth.make_run(d, variants=specs, reps=6,
                       compare=[["before", "after"], ["before-rt", "after-rt"]])
        status, _out, err = run_main(report.main, [d, "--quiet"])
        self.assertEqual(status, 0, err)
        with open(os.path.join(d, "answer.txt")) as f:
            text = f.read()
        self.assertIn("Answer for after-rt against before-rt under PREEMPT_RT (", text)
        self.assertIn("Answer for after against before (", text)
        self.assertEqual(text.count("PREEMPT_RT"), 1, text)
        with open(os.path.join(d, "commit-msg.txt")) as f:
            self.assertIn("after-rt vs before-rt under PREEMPT_RT", f.read())


if __name__ == "__main__":
    unittest.main()
