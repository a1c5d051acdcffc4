# SPDX-License-Identifier: GPL-2.0
"""analyze + report on a small synthetic run directory built here:
2 variants x 1 vCPU count x 2 points x 6 repetitions; "after" is 10%
slower at p1 and equal at p2."""

import json
import math
import os
import shutil
import tempfile
import time
import unittest

from analysis import analyze, metrics, report
from analysis.parse import bench_results
from analysis.tidy import point_metrics, tables
from analysis.tidy.tables import COLUMNS
from tests.unit import kernelfmt, synth
from tests.unit.helpers import read_csv, run_main


def rate_metrics(m, res):
    """The rates the registry derives from the totals m and results.txt
    (none without it)."""
    got = point_metrics.compute({metrics.RESULTS: res}, given=m)
    return {k: v for k, v in got.items() if metrics.METRICS[k].rule.stat == "rate"}

FAILED_BOOT = {"id": "r07-after-c2", "variant": "after", "cpus": 2,
               "rep": 7, "state": "failed", "oversubscribed": False}


class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="analysis-e2e-")
        cls.dir = os.path.join(cls.tmp, "synth-20240101T000000Z")
        synth.make_run(cls.dir, effects={"p1": 0.90, "p2": 1.00},
                       wrong_count_boot="r03-after-c2",
                       extra_boots=[FAILED_BOOT])
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
                  "lock_acquisitions", "task_clock_ms", "context_switches",
                  "lock_contentions_per_kacq", "lock_waittime_per_acq_ns",
                  "context_switches_per_mop", "cpu_migrations_per_mop"):
            self.assertIn(m, metrics)
        self.assertNotIn("r07-after-c2", {r["cell"] for r in samples})
        outcomes = self.tidy("outcomes.csv")
        self.assertEqual(len(outcomes), 12 * 2)  # done boots x points
        self.assertEqual({(r["outcome"], r["detail"]) for r in outcomes},
                         {("ok", "")})
        hist = self.tidy("hist.csv")
        self.assertEqual(len(hist), 12 * 2 * 2 * 32)  # boots x points x ops
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
              and r["metric"] in ("task_clock_ms", "context_switches_per_mop")]
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
        rows = read_csv(os.path.join(self.dir, "tidy", "comparisons.csv"))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "summary.csv")))
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
        self.assertIn("Cross-check: 2 boot x point(s)", md)

    def test_commit_msg(self):
        with open(os.path.join(self.dir, "commit-msg.txt")) as f:
            msg = f.read()
        for line in msg.splitlines():
            self.assertLessEqual(len(line), 72, line)
        self.assertIn("./run.sh campaign campaigns/synth.toml", msg)
        self.assertLessEqual(len(msg.splitlines()), 25)
        self.assertIn("harm", msg)
        self.assertIn("no harm", msg)
        self.assertIn("QEMU TCG", msg)

    def test_report_options_and_staleness(self):
        # an up-to-date tidy/ is not analysed again; report rewrites only
        # the comparisons, with its own margin
        stamp = os.path.join(self.dir, "tidy", "comparisons.csv")
        samples = os.path.join(self.dir, "tidy", "samples.csv")
        before = os.path.getmtime(stamp)
        samples_before = os.path.getmtime(samples)
        status, _out, err = run_main(report.main, [self.dir, "--margin",
                                                   "0.2", "--quiet"])
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(os.path.getmtime(samples), samples_before)
        rows = read_csv(stamp)
        self.assertEqual({r["margin"] for r in rows}, {"0.2"})
        # an override is said in the answer and reproduced by the block
        with open(os.path.join(self.dir, "commit-msg.txt")) as f:
            msg = f.read()
        self.assertIn("./run.sh report", msg)
        self.assertIn("--margin 0.2", msg)
        with open(os.path.join(self.dir, "answer.txt")) as f:
            self.assertIn("margin 20% set by report --margin", f.read())
        # a touched raw file makes it stale: report runs analyze first
        raw = os.path.join(self.dir, "cells", "r01-before-c2", "points",
                           "p1", "results.txt")
        later = time.time() + 5
        os.utime(raw, (later, later))
        status, _out, err = run_main(report.main, [self.dir, "--quiet"])
        self.assertEqual(status, 0)
        self.assertNotIn("running analyze", err)  # the normal path: silent
        self.assertGreater(os.path.getmtime(stamp), before)
        # --baseline swaps the roles
        status, _out, _err = run_main(report.main, [self.dir, "--baseline",
                                                    "after", "--quiet"])
        self.assertEqual(status, 0)
        rows = read_csv(stamp)
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
            got = [(r["outcome"], r["detail"]) for r in read_csv(
                os.path.join(d, "tidy", "outcomes.csv"))
                if (r["cell"], r["point"]) == ("r01-after-c2", "p1")]
            self.assertEqual(got, [("failed", "registry=FAIL preloaded=16 "
                                    "found=16 private_found=0")])
            # n=2: the verdicts still come, with the warning (its wording
            # is report's)
            status, out, _err = run_main(report.main, [d])
            self.assertEqual(status, 0)
            self.assertIn("n<6", out)


def samples_of(d):
    """{(boot, point): {metric: value}} of an analyzed run directory."""
    out = {}
    for r in read_csv(os.path.join(d, "tidy", "samples.csv")):
        out.setdefault((r["cell"], r["point"]), {})[r["metric"]] = \
            float(r["value"])
    return out


def zero_acq_lock_stat():
    """A lock_stat dump whose mboxes_lock row has 3 contentions (2.00 us
    of wait) and 0 acquisitions (the kernel never prints one; a rate must
    not divide by it all the same)."""
    return (kernelfmt.header("0.4") + "%40s:" % "mboxes_lock" + "%14d " % 2
            + kernelfmt.seq_lock_time((3, 500, 900, 2000), "0.4")
            + " %14d " % 0 + kernelfmt.seq_lock_time((0, 0, 0, 0), "0.4")
            + "\n")


class Rates(unittest.TestCase):
    """The rate metrics: totals per unit of the work the run did."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = d = os.path.join(cls.tmp.name, "run")
        synth.make_run(d, reps=1)
        shutil.copy(os.path.join(os.path.dirname(__file__), "fixtures",
                                 "perf-lock.txt"),
                    cls.pdir("r01-before-c2", "p1"))
        with open(os.path.join(cls.pdir("r01-after-c2", "p2"),
                               "lock_stat.txt"), "w") as f:
            f.write(zero_acq_lock_stat())
        status, _out, err = run_main(analyze.main, [d, "--quiet"])
        assert status == 0, err
        cls.samples = samples_of(d)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def pdir(cls, boot, point):
        return os.path.join(cls.dir, "cells", boot, "points", point)

    def assertClose(self, got, want):
        # samples.csv writes 10 significant digits
        self.assertTrue(math.isclose(got, want, rel_tol=1e-9), (got, want))

    def results(self, boot, point):
        return bench_results.parse_file(os.path.join(self.pdir(boot, point),
                                                     "results.txt"))

    def test_lock_stat_rates_per_acquisition(self):
        for key, m in self.samples.items():
            if key == ("r01-after-c2", "p2"):
                continue
            with self.subTest(key):
                acq = m["lock_acquisitions"]
                self.assertClose(m["lock_contentions_per_kacq"],
                                 1000 * m["lock_contentions"] / acq)
                self.assertClose(m["lock_waittime_per_acq_ns"],
                                 1000 * m["lock_waittime_total_us"] / acq)

    def test_zero_acquisitions_no_rate(self):
        m = self.samples[("r01-after-c2", "p2")]
        self.assertEqual((m["lock_contentions"], m["lock_acquisitions"]),
                         (3, 0))
        for gone in ("lock_contentions_per_kacq", "lock_waittime_per_acq_ns",
                     "lock_holdtime_avg_us"):
            self.assertNotIn(gone, m)
        self.assertIn("context_switches_per_mop", m)  # the others stay

    def test_perf_stat_rates_per_mop(self):
        for (boot, point), m in self.samples.items():
            with self.subTest((boot, point)):
                ops = self.results(boot, point).total["ops"]
                self.assertClose(m["context_switches_per_mop"],
                                 1e6 * m["context_switches"] / ops)
                self.assertEqual(m["cpu_migrations_per_mop"], 0)

    def test_perf_lock_rates_per_lockop(self):
        m = self.samples[("r01-before-c2", "p1")]
        lockops = self.results("r01-before-c2", "p1").lockops
        ops = lockops["read"] + lockops["write"]
        self.assertEqual(m["perf_lock_contended"], 6021)
        self.assertClose(m["perf_lock_contended_per_kop"], 1000 * 6021 / ops)
        self.assertClose(m["perf_lock_wait_per_op_ns"], 160840000 / ops)
        # only where perf-lock.txt exists
        self.assertNotIn("perf_lock_contended_per_kop",
                         self.samples[("r01-before-c2", "p2")])

    def test_no_rate_without_an_ok_results_txt(self):
        res = self.results("r01-before-c2", "p1")
        m = {"lock_contentions": 10, "lock_acquisitions": 1000,
             "context_switches": 5}
        self.assertEqual(set(rate_metrics(m, res)),
                         {"lock_contentions_per_kacq",
                          "context_switches_per_mop"})
        self.assertEqual(rate_metrics(m, None), {})
        res.total["ops"] = 0
        self.assertNotIn("context_switches_per_mop", rate_metrics(m, res))


class MetricsTable(unittest.TestCase):
    TOTALS = ("lock_contentions", "lock_waittime_total_us",
              "context_switches", "cpu_migrations", "perf_lock_contended",
              "perf_lock_wait_total_ns")

    def test_totals_have_no_direction(self):
        for m in self.TOTALS:
            self.assertIsNone(metrics.direction(m), m)

    def test_each_rate_right_after_its_total_and_lower_is_better(self):
        names = list(metrics.METRICS)
        rates = {m: x.rule.derived_from[0] for m, x in metrics.METRICS.items()
                 if x.rule.stat == "rate"}
        self.assertEqual(set(rates.values()), set(self.TOTALS))
        for rate, total in rates.items():
            self.assertEqual(metrics.direction(rate), "lower", rate)
            self.assertEqual(names.index(rate), names.index(total) + 1, rate)
        self.assertEqual(metrics.unit("lock_contentions_per_kacq"),
                         "per 1k acq")
        self.assertEqual(metrics.unit("context_switches_per_mop"),
                         "per 1M ops")


class Outcomes(unittest.TestCase):
    """outcomes.csv: one row per done boot x point, failures included."""

    def test_every_point_has_an_outcome(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "run")
            synth.make_run(d, reps=3, extra_boots=[dict(
                FAILED_BOOT, id="r04-after-c2", rep=4)])
            cdir = os.path.join(d, "cells")
            synth.fail_point(d, "r01-after-c2", "p1", "progress")
            synth.fail_point(d, "r01-after-c2", "p2", "registry")
            os.remove(os.path.join(cdir, "r02-before-c2", "points", "p1",
                                   "results.txt"))
            with open(os.path.join(cdir, "r02-before-c2", "points", "p2",
                                   "results.txt"), "w") as f:
                f.write("mbox_bench-results v1\nparam read_pct=50\n")
            shutil.rmtree(os.path.join(cdir, "r02-after-c2", "points", "p2"))
            shutil.rmtree(os.path.join(cdir, "r03-after-c2"))
            status, _out, err = run_main(analyze.main, [d, "--quiet"])
            self.assertEqual(status, 0, err)
            rows = read_csv(os.path.join(d, "tidy", "outcomes.csv"))
            got = {(r["cell"], r["point"]): (r["outcome"], r["detail"])
                   for r in rows}
            self.assertEqual(len(rows), 6 * 2)  # not r04-after-c2 (failed)
            not_ok = {k: v for k, v in got.items() if v != ("ok", "")}
            self.assertEqual(not_ok, {
                ("r01-after-c2", "p1"): ("starved", "threads_without_ops=1"),
                ("r01-after-c2", "p2"): ("failed", "registry=FAIL "
                                         "preloaded=16 found=16 "
                                         "private_found=0"),
                ("r02-before-c2", "p1"): ("missing", "results.txt missing"),
                ("r02-before-c2", "p2"): (
                    "missing", "results.txt: line 2: 'param' record lacks "
                    "mailboxes="),
                ("r02-after-c2", "p2"): ("missing", "point directory "
                                         "missing"),
                ("r03-after-c2", "p1"): ("missing", "boot directory missing"),
                ("r03-after-c2", "p2"): ("missing", "boot directory missing"),
            })
            one = next(r for r in rows if r["cell"] == "r01-after-c2"
                       and r["point"] == "p1")
            self.assertEqual({k: one[k] for k in tables.POINT_PARAMS},
                             {"read_pct": "90", "mailboxes": "16",
                              "miss_pct": "0", "duration_ms": "1000"})
            # the problems stay; a starved point gives no samples, and no
            # rate comes from a point without an ok results.txt
            problems = read_csv(os.path.join(d, "tidy", "problems.csv"))
            self.assertIn("progress=FAIL threads_without_ops=1",
                          " ".join(p["problem"] for p in problems
                                   if p["cell"] == "r01-after-c2"))
            samples = samples_of(d)
            self.assertNotIn(("r01-after-c2", "p1"), samples)
            m = samples[("r02-before-c2", "p1")]
            self.assertIn("lock_contentions", m)
            self.assertNotIn("lock_contentions_per_kacq", m)


if __name__ == "__main__":
    unittest.main()


class ControlOnly(unittest.TestCase):
    def test_calibration_campaign_answers_with_its_control(self):
        """A campaign of the baseline and its A/A control alone
        (tests/campaigns/aa.toml: `variants = ["before"]`, `control =
        true`) is a calibration run: the report opens with the control's
        primary rows, said to be the A/A, instead of refusing the run for
        having no compared pair."""
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "run")
            synth.make_run(d, reps=6, variants=[
                {"name": "before", "lock": "rw", "patches": ["0001"]},
                {"name": "before~aa", "lock": "rw", "patches": ["0001"]}])
            path = os.path.join(d, "manifest.json")
            with open(path) as f:
                m = json.load(f)
            m["campaign"].update(compare=[], control=True,
                                 controls={"before~aa": "before"})
            with open(path, "w") as f:
                json.dump(m, f)
            status, _out, err = run_main(report.main, [d])
            self.assertEqual(status, 0, err)
            comps = read_csv(os.path.join(d, "tidy", "comparisons.csv"))
            self.assertTrue(comps)
            self.assertEqual({(r["variant"], r["role"]) for r in comps},
                             {("before~aa", "control")})
            with open(os.path.join(d, "summary.md")) as f:
                answer = f.read().split("\n")
            self.assertRegex(answer[2], r"^\*\*A/A calibration only, before~aa "
                             r"\(before booted a second time\) against before "
                             r"\(throughput_ops_s")
            self.assertRegex(answer[6], r"^\| 2 vCPUs, p1 \| \*\*(no harm|"
                             r"inconclusive)")
