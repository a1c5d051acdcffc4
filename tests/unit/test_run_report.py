# SPDX-License-Identifier: GPL-2.0
"""./run.sh report (plots/pipeline.py): the analysis, then the plots step;
--no-plots, exit codes and one-line errors of either step come through."""

import os
import shutil
import subprocess
import tempfile
import unittest

from analysis import analyze
from tests.unit import synth
from tests.unit.helpers import needs, run_main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def run_sh(*args):
    cp = subprocess.run([os.path.join(ROOT, "run.sh"), "report", *args],
                        cwd=ROOT, capture_output=True, text=True, timeout=300)
    return cp.returncode, cp.stdout, cp.stderr


class RunReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="run-report-")
        cls.dir = os.path.join(cls.tmp, "synth-20240101T000000Z")
        synth.make_run(cls.dir, effects={"p1": 0.90, "p2": 1.00})
        # analysed here, so that report's stderr is its own (the copies
        # keep the times: their tidy files stay fresh)
        status, _out, err = run_main(analyze.main, [cls.dir, "--quiet"])
        assert status == 0, err

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def copy(self, name):
        d = os.path.join(self.tmp, name)
        shutil.copytree(self.dir, d)
        return d

    def test_no_plots_stops_after_the_analysis(self):
        d = self.copy("noplots")
        rc, out, err = run_sh("--margin", "0.1", d, "--no-plots")
        self.assertEqual(rc, 0, err)
        self.assertIn("throughput_ops_s", out)
        self.assertTrue(os.path.isfile(os.path.join(d, "summary.md")))
        self.assertTrue(os.path.isfile(os.path.join(d, "tidy",
                                                    "comparisons.csv")))
        self.assertFalse(os.path.exists(os.path.join(d, "summary.csv")))
        self.assertFalse(os.path.exists(os.path.join(d, "plots")))
        self.assertFalse(os.path.exists(os.path.join(d, "report.html")))

    @needs("gnuplot")
    def test_plots_follow_the_analysis(self):
        d = self.copy("plots")
        rc, _out, err = run_sh(d, "--baseline", "before", "-q")
        self.assertEqual(rc, 0, err)
        for f in ("summary.md", "report.html", "report.md",
                  "plots/throughput.svg", "plots/throughput.png"):
            self.assertTrue(os.path.isfile(os.path.join(d, f)), f)
        with open(os.path.join(d, "report.html"), encoding="utf-8") as f:
            self.assertIn("From tidy/comparisons.csv", f.read())

    def test_analysis_error_stops_before_the_plots(self):
        d = self.copy("badbase")
        rc, out, err = run_sh(d, "--baseline", "nosuch")
        self.assertEqual((rc, out), (2, ""), err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("report: "), err)
        self.assertFalse(os.path.exists(os.path.join(d, "plots")))

    def test_plots_error_comes_through(self):
        d = self.copy("plotsfile")
        with open(os.path.join(d, "plots"), "w") as f:
            f.write("a file where the plots directory goes\n")
        rc, _out, err = run_sh(d, "-q")
        lines = err.splitlines()
        self.assertEqual(rc, 3 if not shutil.which("gnuplot") else 2, err)
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith("plots: "), err)
        self.assertNotIn("Traceback", err)
        # the analysis was done all the same
        self.assertTrue(os.path.isfile(os.path.join(d, "summary.md")))


if __name__ == "__main__":
    unittest.main()
