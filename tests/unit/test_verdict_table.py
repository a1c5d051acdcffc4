# SPDX-License-Identifier: GPL-2.0
"""One verdict table, one order, one level (issue #28, #25 item 6):
comparisons.csv, summary.md, the commit block and report.html show the
same rows in the same order, the campaign's primary metric first, and
every confidence level printed is the one the run was judged at."""

import json
import os
import re
import shutil
import tempfile
import unittest

import pandas as pd

from analysis import report
from analysis.verdict.table import VerdictTable, aa_status
from plots import pages
from tests.unit import synth


def _run(path, primary=None, looks=None):
    synth.make_run(path, cpus=(1, 2), reps=8, variants=[
        {"name": "before", "lock": "rw", "patches": ["0001"]},
        {"name": "after", "lock": "spin", "effects": {"p1": 0.93},
         "patches": ["0001", "0002"]},
        {"name": "rcu", "lock": "rcu", "effects": {"p1": 1.08},
         "patches": ["0001", "0003"]}],
        compare=[["before", "after"], ["after", "rcu"], ["before", "rcu"]])
    mpath = os.path.join(path, "manifest.json")
    with open(mpath) as f:
        m = json.load(f)
    if primary:
        m["campaign"]["primary_metric"] = primary
    if looks:
        m["campaign"]["looks"] = looks
        m["campaign"]["repetitions"] = {"min": looks[0], "max": looks[-1]}
    with open(mpath, "w") as f:
        json.dump(m, f)


class OneOrder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.dir = os.path.join(cls.tmp, "run")
        # a primary metric that is not the registry's first
        _run(cls.dir, primary="lookup_lat_mean_ns")
        report.report(cls.dir)
        pages.write_reports(cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def read(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read()

    def csv_blocks(self):
        c = pd.read_csv(os.path.join(self.dir, "tidy", "comparisons.csv"))
        return list(dict.fromkeys(zip(c["metric"], c["variant"] + " vs "
                                      + c["baseline"])))

    def test_primary_metric_first_in_the_csv(self):
        self.assertEqual(self.csv_blocks()[0][0], "lookup_lat_mean_ns")

    def test_summary_tables_in_the_csv_order(self):
        md = re.findall(r"^## (\S+) \([^)]*\): (.+ vs .+)$", self.read("summary.md"),
                        re.M)
        self.assertEqual(md, self.csv_blocks())

    def test_report_page_rows_in_the_csv_order(self):
        c = pd.read_csv(os.path.join(self.dir, "tidy", "comparisons.csv"))
        want = [f"{v} vs {b}" for b, v in zip(c["baseline"], c["variant"])]
        rows = re.findall(r'<tr><td class="l">([^<]+ vs [^<]+)</td>', self.read("report.html"))
        self.assertEqual(sorted(rows), sorted(want))
        # the page's primary table first, then the others: each in file order
        prim = c[c["role"] == "primary"]
        rest = c[c["role"] != "primary"]
        self.assertEqual(rows, [f"{v} vs {b}" for t in (prim, rest)
                                for b, v in zip(t["baseline"], t["variant"])])


class OneLevel(unittest.TestCase):
    def test_a_run_of_two_looks_prints_its_level_everywhere(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        d = os.path.join(tmp, "run")
        _run(d, looks=[4, 8])
        report.report(d)
        pages.write_reports(d)
        for name in ("summary.md", "answer.txt", "report.html", "report.md"):
            with open(os.path.join(d, name)) as f:
                text = f.read()
            self.assertIn("97.5% CI", text, name)
            self.assertNotIn("95% CI", text.replace("97.5% CI", ""), name)


class AAStatus(unittest.TestCase):
    def test_a_conflict_is_a_claim(self):
        rows = pd.DataFrame({"calibration": [
            "A/A no harm", "A/A conflict", "A/A harm, CI widened by ±3.0%",
            "A/A inconclusive (n≈9)", ""], "role": ["primary"] * 5,
            "metric": ["m"] * 5})
        self.assertEqual(aa_status(rows), (4, 1, 2))
        self.assertEqual(aa_status(VerdictTable(rows, "m").primary), (4, 1, 2))
        self.assertEqual(aa_status(rows.iloc[4:]), (0, 0, 0))


if __name__ == "__main__":
    unittest.main()
