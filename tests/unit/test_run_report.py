# SPDX-License-Identifier: GPL-2.0
"""./run.sh report (plots/pipeline.py): the analysis, then the plots step;
--no-plots, exit codes and one-line errors of either step come through,
and the same from a campaign, which runs it in its own process and gets
the commit block back as a value; a look (analysis.looks) judges in
memory and writes no table."""

import os
import shutil
import subprocess
import tempfile
import unittest

from analysis import analyze, looks
from scripts.campaign import main as campaign_main
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


class CampaignReport(unittest.TestCase):
    """scripts/campaign/main.py's report(): plots.pipeline in process."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="campaign-report-")
        self.dir = os.path.join(self.tmp, "synth-20240101T000000Z")
        synth.make_run(self.dir, effects={"p1": 0.90, "p2": 1.00})

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def report(self, verbose=False):
        got = []
        status, out, err = run_main(
            lambda _argv: got.append(campaign_main.report(self.dir, verbose)) or 0, [])
        (rc, block), = got
        return rc, block, out, err

    @needs("gnuplot")
    def test_the_block_comes_back_as_a_value(self):
        rc, block, out, err = self.report()
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "")  # --quiet: the campaign prints the block
        with open(os.path.join(self.dir, "commit-msg.txt"), encoding="utf-8") as f:
            self.assertEqual(block, f.read())
        self.assertTrue(os.path.isfile(os.path.join(self.dir, "report.html")))

    def test_verbose_prints_the_summary(self):
        with open(os.path.join(self.dir, "plots"), "w") as f:
            f.write("a file where the plots directory goes\n")
        rc, block, out, err = self.report(verbose=True)
        self.assertIn("throughput_ops_s", out)
        self.assertIn("Reproduce", block)
        # the plots step's error: one line, its status, no traceback
        self.assertEqual(rc, 3 if not shutil.which("gnuplot") else 2, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("plots: "), err)

    def test_an_analysis_error_is_one_line(self):
        os.unlink(os.path.join(self.dir, "manifest.json"))
        rc, block, out, err = self.report()
        self.assertEqual((rc, block, out), (2, None, ""))
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("report: "), err)
        self.assertNotIn("Traceback", err)

    def test_a_look_writes_no_table(self):
        status, out, err = run_main(looks.main, [self.dir])
        self.assertEqual(status, 0, err)
        self.assertIn('"primary"', out)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "tidy")))


if __name__ == "__main__":
    unittest.main()
