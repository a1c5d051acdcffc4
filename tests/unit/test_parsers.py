# SPDX-License-Identifier: GPL-2.0
"""analysis.parse.bench_results, analysis.parse.perf_stat, analysis.parse.perf_lock."""

import unittest

from analysis.parse import bench_results, perf_lock, perf_stat
from analysis.parse.common import ParseError
from tests.unit.helpers import fixture, read


class BenchResults(unittest.TestCase):
    def test_full_file(self):
        r = bench_results.parse_file(fixture("results-v1.txt"))
        self.assertTrue(r.ok)
        self.assertEqual(r.param["read_pct"], 90)
        self.assertEqual(r.param["cpus"], "0-1")
        self.assertEqual(r.run["elapsed_ns"], 1000123456)
        self.assertEqual(len(r.threads), 2)
        self.assertEqual(r.threads[1]["err_EBUSY"], 2)
        self.assertEqual(r.total["ops_per_sec"], 98997.92)
        self.assertEqual(r.lockops, {"read": 89111, "write": 9899})
        self.assertEqual(r.fairness["flag"], "ok")
        self.assertEqual(len(r.checks), 2)
        self.assertEqual(r.lat["lookup"].count, 1000)
        self.assertEqual(r.lat["write"].max_ns, 250000)
        self.assertAlmostEqual(r.lat["lookup"].mean_ns, 412.0)
        self.assertEqual(r.warnings, [])

    def test_timing_off_has_no_lat(self):
        r = bench_results.parse_file(fixture("results-timing0.txt"))
        self.assertEqual(r.lat, {})
        self.assertEqual(r.param["timing"], 0)

    def test_failure_parses_but_is_not_ok(self):
        r = bench_results.parse_file(fixture("results-failure.txt"))
        self.assertFalse(r.ok)
        self.assertEqual(r.fairness["flag"], "???")

    def test_bad_files(self):
        cases = {"results-truncated.txt": (9, "truncated"),
                 "results-v9.txt": (1, "unsupported results version v9"),
                 "results-badhist.txt": (6, "32 comma-separated"),
                 "results-garbled.txt": (4, "not key=value"),
                 "lockstat-0.3.txt": (1, "not mbox_bench results")}
        for name, (line, words) in cases.items():
            with self.subTest(name):
                with self.assertRaises(ParseError) as cm:
                    bench_results.parse_file(fixture(name))
                self.assertEqual(cm.exception.line, line)
                self.assertIn(words, str(cm.exception))
                self.assertIn(name, str(cm.exception))

    def test_structural_errors(self):
        good = read("results-v1.txt")
        lines = good.splitlines(True)
        bad = {
            "missing key": good.replace("lockops read=89111 ",
                                        "lockops rd=89111 "),
            "after end": good + "total ops=1 ops_per_sec=1\n",
            "twice": good.replace("end status", "total ops=1 ops_per_sec=1"
                                  "\nend status"),
            "no total": "".join(l for l in lines
                                if not l.startswith("total")),
            "bad status": good.replace("status=SUCCESS", "status=MAYBE"),
            "not a number": good.replace("ops_per_sec=98997.92",
                                         "ops_per_sec=fast"),
            "garbled word": good.replace("check progress", "Check! progress"),
        }
        for what, text in bad.items():
            with self.subTest(what):
                with self.assertRaises(ParseError):
                    bench_results.parse_text(text, "r.txt")

    def test_unknown_record_kept(self):
        text = read("results-v1.txt").replace(
            "end status", "note kernel=6.1.192\nend status")
        r = bench_results.parse_text(text)
        self.assertEqual(r.extra, [("note", {"kernel": "6.1.192"})])

    def test_spread_inf_and_unknown_keys(self):
        text = read("results-v1.txt").replace("spread=1.03", "spread=inf")
        text = text.replace("check progress=ok", "check progress=ok 2x=1")
        r = bench_results.parse_text(text)
        self.assertEqual(r.fairness["spread"], float("inf"))
        self.assertEqual(r.checks[1]["2x"], 1)

    def test_hist_sum_mismatch_is_a_warning(self):
        text = read("results-v1.txt").replace("count=1000", "count=1001")
        r = bench_results.parse_text(text)
        self.assertEqual(len(r.warnings), 1)

    def test_quantiles(self):
        h = [0] * 32
        h[9] = 100  # all in [512, 1024)
        self.assertAlmostEqual(bench_results.hist_quantile(h, 0.5),
                               512 * 2 ** 0.5)
        self.assertAlmostEqual(bench_results.hist_quantile(h, 1.0), 1024)
        # clamped to [min, max]
        self.assertEqual(bench_results.hist_quantile(h, 0.5, 800, 900), 800)
        self.assertEqual(bench_results.hist_quantile(h, 1.0, 600, 700), 700)
        h2 = [0] * 32
        h2[0], h2[10] = 50, 50
        self.assertAlmostEqual(bench_results.hist_quantile(h2, 0.25), 1.0)
        self.assertIsNone(bench_results.hist_quantile([0] * 32, 0.5))
        r = bench_results.parse_file(fixture("results-v1.txt"))
        # lookups: 400 below 512, 400 in [512, 1024): rank 500 -> f = 1/4
        self.assertAlmostEqual(r.lat["lookup"].quantile(0.5),
                               512 * 2 ** 0.25)
        self.assertEqual(bench_results.bucket_bounds(0), (0, 2))
        self.assertEqual(bench_results.bucket_bounds(31), (2 ** 31, None))


class PerfStat(unittest.TestCase):
    def test_counters(self):
        c = perf_stat.parse_file(fixture("perf-stat.csv"))
        self.assertEqual(c["task-clock"].value, 1996.42)
        self.assertEqual(c["task-clock"].unit, "msec")
        self.assertEqual(c["context-switches"].value, 57)
        self.assertIsNone(c["cycles"].value)
        self.assertEqual(c["cycles"].status, "not supported")

    def test_bad(self):
        for text in ("", "garbage\n", "12x,,task-clock\n",
                     "1,,a\n2,,a\n"):
            with self.subTest(text):
                with self.assertRaises(ParseError):
                    perf_stat.parse_text(text, "p.csv")
        c = perf_stat.parse_text("# started on x\n\n<not counted>,,cycles,"
                                 "0,0.00,,\n")
        self.assertEqual(c["cycles"].status, "not counted")


class PerfLock(unittest.TestCase):
    def test_report(self):
        rows = {r.name: r for r in perf_lock.parse_file(fixture(
            "perf-lock.txt"))}
        m = rows["mboxes_lock"]
        self.assertEqual((m.acquired, m.contended), (188300, 6021))
        self.assertEqual(m.avg_wait_ns, 26710)
        self.assertEqual(m.total_wait_ns, 160840000)
        self.assertEqual(m.max_wait_ns, 2010000)
        self.assertEqual(m.min_wait_ns, 880)
        self.assertIn("&(&sem->wait_loc...", rows)  # cut by perf
        self.assertEqual(rows["slow lock"].avg_wait_ns, 90 * 10 ** 9)

    def test_selected_fields_and_debug_tail(self):
        text = ("                Name  contended   total wait \n\n"
                "         mboxes_lock         12      1.50 ms \n"
                "\n=== output for debug===\n\nbad: 1, total: 2\n")
        (row,) = perf_lock.parse_text(text)
        self.assertEqual(row.contended, 12)
        self.assertEqual(row.total_wait_ns, 1500000)
        self.assertIsNone(row.acquired)

    def test_bad(self):
        with self.assertRaises(ParseError):
            perf_lock.parse_text("nothing here\n", "l.txt")
        text = read("perf-lock.txt").replace("26.71 us", "26.71 xs")
        with self.assertRaises(ParseError) as cm:
            perf_lock.parse_text(text, "l.txt")
        self.assertEqual(cm.exception.line, 3)


if __name__ == "__main__":
    unittest.main()


class BenchResultsFinePercentilesAndProbe(unittest.TestCase):
    """A real guest result (2 vCPUs, read_pct=50, timing=1) with the fine
    p50/p90/p99 keys and the host-speed probe's ref record."""

    def setUp(self):
        self.r = bench_results.parse_file(fixture("results-v1-ref.txt"))

    def test_fine_percentiles_win_over_the_log2_histogram(self):
        lat = self.r.lat["lookup"]
        self.assertEqual(lat.fine, {"p50": 8693, "p90": 12680, "p99": 32888})
        self.assertEqual(lat.quantile(0.5), 8693)
        self.assertEqual(lat.quantile(0.99), 32888)
        # p75 has no fine key: the log2 histogram answers.
        self.assertEqual(lat.quantile(0.75),
                         bench_results.hist_quantile(lat.hist, 0.75, lat.min_ns,
                                                     lat.max_ns))

    def test_ref_metrics(self):
        from analysis.metrics import RESULTS
        from analysis.tidy import point_metrics
        m = point_metrics.compute({RESULTS: self.r})
        self.assertEqual(m["ref_probe_ns"], 2029.0)
        self.assertAlmostEqual(m["throughput_ref"], self.r.total["ops_per_sec"] * 2029 / 1e6)
        self.assertAlmostEqual(m["lookup_lat_median_ref"], 8693 / 2197)
        self.assertAlmostEqual(m["write_lat_median_ref"], 17100 / 2197)

    def test_no_ref_record_no_ref_metrics(self):
        from analysis.metrics import RESULTS
        from analysis.tidy import point_metrics
        m = point_metrics.compute({RESULTS: bench_results.parse_file(
            fixture("results-v1.txt"))})
        self.assertNotIn("throughput_ref", m)
        self.assertNotIn("lookup_lat_median_ref", m)

    def test_bad_fine_percentile_is_an_error(self):
        import os
        import tempfile
        text = read("results-v1-ref.txt").replace("p50_ns=8693", "p50_ns=-3")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results.txt")
            with open(path, "w") as f:
                f.write(text)
            with self.assertRaises(ParseError) as cm:
                bench_results.parse_file(path)
        self.assertIn("p50_ns", str(cm.exception))


class Outcome(unittest.TestCase):
    """tables.outcome: how a point ended, from its parsed results.txt."""

    def outcome(self, text):
        from analysis.tidy import tables
        return tables.outcome(bench_results.parse_text(text), None)

    def test_ok_failed_starved_missing(self):
        from analysis.tidy import tables
        self.assertEqual(self.outcome(read("results-v1.txt")), ("ok", ""))
        failure = read("results-failure.txt")
        registry = "registry=FAIL preloaded=16 found=16 private_found=0"
        self.assertEqual(self.outcome(failure), ("failed", registry))
        starved = failure.replace("progress=ok threads_without_ops=0",
                                  "progress=FAIL threads_without_ops=2")
        self.assertEqual(self.outcome(starved),
                         ("starved", "threads_without_ops=2; " + registry))
        self.assertEqual(tables.outcome(None, "results.txt missing"),
                         ("missing", "results.txt missing"))

    def test_failure_without_a_failed_check(self):
        text = read("results-v1.txt").replace("status=SUCCESS",
                                              "status=FAILURE")
        self.assertEqual(self.outcome(text), ("failed", "end status=FAILURE"))
