# SPDX-License-Identifier: GPL-2.0
"""analyze + report on a small synthetic results directory built here:
2 variants x 1 vCPU count x 2 points x 6 repetitions; "after" is 10%
slower at p1 and equal at p2."""

import csv
import os
import shutil
import tempfile
import time
import unittest

from analysis import analyze, report
from analysis.tidy import COLUMNS
from tests.unit import synth
from tests.unit.helpers import run_main

FAILED_CELL = {"id": "r07-after-c2", "variant": "after", "cpus": 2,
               "rep": 7, "state": "failed", "oversubscribed": False}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="analysis-e2e-")
        cls.dir = os.path.join(cls.tmp, "synth-20240101T000000Z")
        synth.make_run(cls.dir, effects={"p1": 0.90, "p2": 1.00},
                       wrong_count_cell="r03-after-c2",
                       extra_cells=[FAILED_CELL])
        # one missing file: a reported problem, not a zero
        os.remove(os.path.join(cls.dir, "cells", "r05-before-c2", "points",
                               "p2", "perf-stat.csv"))
        cls.a_status, cls.a_out, cls.a_err = run_main(analyze.main,
                                                      [cls.dir])
        cls.r_status, cls.r_out, cls.r_err = run_main(report.main,
                                                      [cls.dir])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def tidy(self, name):
        return read_csv(os.path.join(self.dir, "tidy", name))

    def test_analyze_files_and_columns(self):
        self.assertEqual(self.a_status, 0, self.a_err)
        for name, cols in COLUMNS.items():
            if name == "perf_lock":
                continue
            path = os.path.join(self.dir, "tidy", name + ".csv")
            with open(path) as f:
                self.assertEqual(f.readline().rstrip("\n"), ",".join(cols))
        samples = self.tidy("samples.csv")
        tp = [r for r in samples if r["metric"] == "throughput_ops_s"]
        self.assertEqual(len(tp), 2 * 2 * 6)  # variants x points x reps
        metrics = {r["metric"] for r in samples}
        for m in ("throughput_ops_s", "lookup_lat_median_ns",
                  "lookup_lat_p99_ns", "lookup_lat_max_ns",
                  "write_lat_median_ns", "write_lat_p99_ns",
                  "write_lat_max_ns", "fairness_spread", "lock_contentions",
                  "lock_waittime_total_us", "lock_waittime_avg_us",
                  "lock_waittime_max_us", "lock_holdtime_avg_us",
                  "lock_acquisitions", "task_clock_ms", "context_switches"):
            self.assertIn(m, metrics)
        self.assertNotIn("r07-after-c2", {r["cell"] for r in samples})
        hist = self.tidy("hist.csv")
        self.assertEqual(len(hist), 12 * 2 * 2 * 32)  # cells x points x ops
        self.assertEqual(len(self.tidy("threads.csv")), 12 * 2 * 2)
        kinds = {(r["variant"], r["kind"]) for r in self.tidy("lockstat.csv")}
        self.assertEqual(kinds, {("before", "R"), ("before", "W"),
                                 ("after", "")})
        med = self.tidy("medians.csv")
        row = [r for r in med if r["variant"] == "before"
               and r["point"] == "p1" and r["metric"] == "throughput_ops_s"]
        self.assertEqual(row[0]["n"], "6")

    def test_missing_file_is_a_problem_not_a_zero(self):
        problems = self.tidy("problems.csv")
        self.assertIn({"cell": "r05-before-c2", "point": "p2",
                       "file": "perf-stat.csv", "problem": "missing"},
                      problems)
        tc = [r for r in self.tidy("samples.csv")
              if r["cell"] == "r05-before-c2" and r["point"] == "p2"
              and r["metric"] == "task_clock_ms"]
        self.assertEqual(tc, [])
        self.assertIn("r05-before-c2/p2/perf-stat.csv: missing", self.a_err)

    def test_not_done_cell_warned(self):
        self.assertIn("r07-after-c2 (failed)", self.a_err)
        cells = {r["cell"]: r for r in self.tidy("cells.csv")}
        self.assertEqual(cells["r07-after-c2"]["analyzed"], "0")

    def test_crosscheck_flags_the_wrong_count(self):
        xc = self.tidy("crosscheck.csv")
        bad = {(r["cell"], r["point"]) for r in xc if r["ok"] == "0"}
        self.assertEqual(bad, {("r03-after-c2", "p1"),
                               ("r03-after-c2", "p2")})
        good = [r for r in xc if r["ok"] == "1"]
        self.assertEqual(len(good), 12 * 2 - 2)
        self.assertEqual({r["relation"] for r in xc if r["variant"] ==
                          "before"}, {"rw"})
        self.assertEqual({r["relation"] for r in xc if r["variant"] ==
                          "after"}, {"total"})
        warn = [l for l in self.a_err.splitlines() if "crosscheck" in l]
        self.assertEqual(len(warn), 2)
        self.assertTrue(all(l.startswith("analyze: warning: ")
                            for l in warn))

    def test_report_verdicts(self):
        self.assertEqual(self.r_status, 0, self.r_err)
        rows = read_csv(os.path.join(self.dir, "summary.csv"))
        tp = {r["point"]: r for r in rows
              if r["metric"] == "throughput_ops_s"}
        self.assertEqual(tp["p1"]["verdict"], "harm")
        self.assertEqual(tp["p2"]["verdict"], "no harm")
        self.assertEqual(tp["p2"]["significant"], "0")
        self.assertAlmostEqual(float(tp["p1"]["ratio"]), 0.9, delta=0.02)
        self.assertEqual(tp["p1"]["n_base"], "6")

    def test_summary_md(self):
        with open(os.path.join(self.dir, "summary.md")) as f:
            md = f.read()
        self.assertEqual(md, self.r_out)
        self.assertIn("QEMU TCG emulation", md)
        self.assertIn("2 vCPUs on 2 host cores", md)
        self.assertIn("kernel 6.1.192", md)
        self.assertIn("n = 6 boots", md)
        self.assertIn("the ratio is the result", md)
        self.assertIn("## throughput_ops_s", md)
        self.assertLess(md.index("## throughput_ops_s"),
                        md.index("## lookup_lat_median_ns"))
        self.assertIn("| ~ |", md)
        self.assertIn("Cross-check: 2 cell x point(s)", md)

    def test_commit_msg(self):
        with open(os.path.join(self.dir, "commit-msg.txt")) as f:
            msg = f.read()
        for line in msg.splitlines():
            self.assertLessEqual(len(line), 72, line)
        self.assertIn("./run.sh campaign campaigns/synth.toml", msg)
        self.assertIn("./run.sh report", msg)
        self.assertIn("harm", msg)
        self.assertIn("no harm", msg)
        self.assertIn("QEMU TCG", msg)

    def test_report_options_and_staleness(self):
        # an up-to-date tidy/ is not rewritten
        stamp = os.path.join(self.dir, "tidy", "comparisons.csv")
        before = os.path.getmtime(stamp)
        status, _out, err = run_main(report.main, [self.dir, "--margin",
                                                   "0.2", "--quiet"])
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(os.path.getmtime(stamp), before)
        rows = read_csv(os.path.join(self.dir, "summary.csv"))
        self.assertEqual({r["margin"] for r in rows}, {"0.2"})
        # a touched raw file makes it stale: report runs analyze first
        raw = os.path.join(self.dir, "cells", "r01-before-c2", "points",
                           "p1", "results.txt")
        later = time.time() + 5
        os.utime(raw, (later, later))
        status, _out, err = run_main(report.main, [self.dir, "--quiet"])
        self.assertEqual(status, 0)
        self.assertIn("running analyze", err)
        self.assertGreater(os.path.getmtime(stamp), before)
        # --baseline swaps the roles
        status, _out, _err = run_main(report.main, [self.dir, "--baseline",
                                                    "after", "--quiet"])
        self.assertEqual(status, 0)
        rows = read_csv(os.path.join(self.dir, "summary.csv"))
        self.assertEqual({r["variant"] for r in rows}, {"before"})
        run_main(report.main, [self.dir, "--quiet"])  # default summary

    def test_bad_input(self):
        def one_line(main, argv, words):
            status, out, err = run_main(main, argv)
            self.assertEqual(status, 2, err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(words, err)
            self.assertNotIn("Traceback", err)
        one_line(analyze.main, [os.path.join(self.tmp, "nope")],
                 "no such directory")
        one_line(report.main, [os.path.join(self.tmp, "nope")],
                 "no such directory")
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty, exist_ok=True)
        one_line(analyze.main, [empty], "manifest.json")
        with open(os.path.join(empty, "manifest.json"), "w") as f:
            f.write("{not json")
        one_line(analyze.main, [empty], "invalid JSON")
        with open(os.path.join(empty, "manifest.json"), "w") as f:
            f.write('{"format": 9}')
        one_line(analyze.main, [empty], "unsupported manifest format")
        one_line(report.main, [self.dir, "--baseline", "nosuch"],
                 "baseline 'nosuch'")
        one_line(report.main, [self.dir, "--margin", "5"], "--margin")


class Problems(unittest.TestCase):
    def test_missing_and_malformed_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "run")
            synth.make_run(d, reps=2)
            pdir = os.path.join(d, "cells", "r02-after-c2", "points", "p2")
            os.remove(os.path.join(pdir, "lock_stat.txt"))
            with open(os.path.join(pdir, "perf-lock.txt"), "w") as f:
                f.write("garbage\n")
            with open(os.path.join(d, "cells", "r01-before-c2", "points",
                                   "p1", "results.txt"), "a") as f:
                f.write("total ops=1 ops_per_sec=1\n")  # after "end"
            status, _out, err = run_main(analyze.main, [d])
            self.assertEqual(status, 0, err)
            problems = read_csv(os.path.join(d, "tidy", "problems.csv"))
            got = {(p["cell"], p["point"], p["file"]): p["problem"]
                   for p in problems}
            self.assertEqual(got[("r02-after-c2", "p2", "lock_stat.txt")],
                             "missing")
            self.assertIn("not perf lock report output",
                          got[("r02-after-c2", "p2", "perf-lock.txt")])
            self.assertIn("line 14: data after the 'end' record",
                          got[("r01-before-c2", "p1", "results.txt")])
            xc = {(r["cell"], r["point"]): r for r in read_csv(
                os.path.join(d, "tidy", "crosscheck.csv"))}
            self.assertEqual(xc[("r02-after-c2", "p2")]["relation"],
                             "missing")
            self.assertEqual(xc[("r02-after-c2", "p2")]["ok"], "")
            samples = read_csv(os.path.join(d, "tidy", "samples.csv"))
            got = {r["metric"] for r in samples
                   if (r["cell"], r["point"]) == ("r02-after-c2", "p2")}
            self.assertIn("throughput_ops_s", got)
            self.assertNotIn("lock_contentions", got)
            got = {r["metric"] for r in samples
                   if (r["cell"], r["point"]) == ("r01-before-c2", "p1")}
            self.assertNotIn("throughput_ops_s", got)


    def test_failure_status_drops_the_point(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "run")
            synth.make_run(d, reps=2)
            p = os.path.join(d, "cells", "r01-after-c2", "points", "p1",
                             "results.txt")
            with open(p) as f:
                text = f.read()
            with open(p, "w") as f:
                f.write(text.replace("registry=ok", "registry=FAIL")
                        .replace("status=SUCCESS", "status=FAILURE"))
            status, _out, err = run_main(analyze.main, [d])
            self.assertEqual(status, 0)
            self.assertIn("end status=FAILURE", err)
            self.assertIn("registry=FAIL", err)
            samples = read_csv(os.path.join(d, "tidy", "samples.csv"))
            self.assertFalse([r for r in samples
                              if r["cell"] == "r01-after-c2"
                              and r["point"] == "p1"])
            # n=2: the verdicts still come, with the warning
            status, out, _err = run_main(report.main, [d])
            self.assertEqual(status, 0)
            self.assertIn("n<6: too few samples", out)


if __name__ == "__main__":
    unittest.main()
