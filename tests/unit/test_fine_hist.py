# SPDX-License-Identifier: GPL-2.0
"""analysis.parse.fine_hist and results v2's "fine" rows: the quantiles the host
takes of the module's fine histograms."""

import random
import statistics
import unittest

from analysis.parse import bench_results, fine_hist
from analysis.parse.common import ParseError
from tests.unit.helpers import fixture, read


def hist_of(times):
    h = [0] * fine_hist.BUCKETS
    for t in times:
        h[fine_hist.bucket(t)] += 1
    return h


def rows(of, hist):
    """The "fine" lines the module prints for hist."""
    out = []
    for r in range(fine_hist.ROWS):
        c = hist[r * fine_hist.SUB:(r + 1) * fine_hist.SUB]
        if any(c):
            out.append(f"fine of={of} row={r} counts=" + ",".join(map(str, c)))
    return out


class Buckets(unittest.TestCase):
    def test_bucket_and_span_are_inverse(self):
        for b in range(fine_hist.BUCKETS):
            lo, width = fine_hist.bucket_span(b)
            self.assertEqual(fine_hist.bucket(lo), b)
            self.assertEqual(fine_hist.bucket(lo + width - 1), b)
            if b + 1 < fine_hist.BUCKETS:
                self.assertEqual(fine_hist.bucket_span(b + 1)[0], lo + width)

    def test_exact_below_16_and_at_most_6_percent_wide(self):
        self.assertEqual([fine_hist.bucket(n) for n in range(16)], list(range(16)))
        for b in range(fine_hist.SUB, fine_hist.BUCKETS):
            lo, width = fine_hist.bucket_span(b)
            self.assertLessEqual(width / lo, 1 / 16)

    def test_long_times_go_in_the_last_bucket(self):
        self.assertEqual(fine_hist.bucket(1 << 27), fine_hist.BUCKETS - 1)
        self.assertEqual(fine_hist.bucket(10 ** 15), fine_hist.BUCKETS - 1)


class Quantiles(unittest.TestCase):
    def test_hand_computed(self):
        # 4 times in the bucket [4096, 4352) (row 9, width 256): rank 2 of
        # 4 is lo + 256 * 2 / 4.
        h = hist_of([4100, 4200, 4300, 4350])
        self.assertEqual(fine_hist.quantile_ns(h, 500), 4096 + 128)
        self.assertEqual(fine_hist.quantile_ns(h, 990), 4096 + 256)
        self.assertEqual(fine_hist.quantile_ns([0] * fine_hist.BUCKETS, 500), 0)
        self.assertEqual(fine_hist.quantile_ns(hist_of([7]), 500), 8)

    def test_within_a_bucket_of_the_exact_quantile(self):
        rng = random.Random(1)
        for _ in range(20):
            times = [int(rng.lognormvariate(8.5, 0.6)) for _ in range(5001)]
            h = hist_of(times)
            exact = sorted(times)
            for permille in (500, 900, 990):
                rank = -(-len(times) * permille // 1000)
                want = exact[rank - 1]
                got = fine_hist.quantile_ns(h, permille)
                self.assertLessEqual(abs(got - want), want / 16 + 1,
                                     (permille, got, want))

    def test_probe_summary_leaves_out_the_stretched_probes(self):
        rng = random.Random(2)
        probes = [int(rng.gauss(2000, 40)) for _ in range(990)]
        probes += [50_000] * 10  # an interrupt inside 1% of the probes
        s = fine_hist.probe_summary(hist_of(probes))
        self.assertEqual(s["outliers"], 10)
        self.assertLess(abs(s["trim_mean_ns"] - statistics.mean(probes[:990])), 2000 / 16)
        self.assertLess(abs(s["median_ns"] - statistics.median(probes)), 2000 / 16)
        self.assertEqual(fine_hist.probe_summary([0] * fine_hist.BUCKETS),
                         {"median_ns": 0, "trim_mean_ns": 0, "outliers": 0})


V2_HEAD = """mbox_bench-results v2
param read_pct=50 mailboxes=16 miss_pct=0 duration_ms=300 cpus=0-1 seed=1 timing=1
run id=2 threads=2 elapsed_ns=300831440 clock_read_ns=279
thread cpu=0 ops=6 lookups=3 hits=3 misses=0 writes=3 errors=0 ref_loops=2 ref_ns=4000
thread cpu=1 ops=2 lookups=1 hits=1 misses=0 writes=1 errors=0 ref_loops=2 ref_ns=4100
"""
V2_TAIL = """total ops=8 lookups=4 hits=4 misses=0 writes=4 errors=0 ops_per_sec=26
lockops read=4 write=8
ref loops=4 ns=8100 every=64 words=64 passes=4
{ref}
fairness min_ops=2 max_ops=6 spread=3.00 flag=???
check registry=ok preloaded=16 found=16 private_found=0
end status=SUCCESS
"""
LOOKUPS = [4100, 4200, 4300, 9000]
WRITES = [8000, 8100, 8200, 8300]
PROBES = [2000, 2010, 2020, 90_000]


def v2_text(lookups=LOOKUPS, writes=WRITES, probes=PROBES):
    def lat(op, times):
        return (f"lat op={op} count={len(times)} min_ns={min(times)} "
                f"max_ns={max(times)} sum_ns={sum(times)} hist="
                + ",".join(["0"] * 12 + ["4"] + ["0"] * 19) + "\n" + "\n".join(rows(op, hist_of(times))) + "\n")
    return (V2_HEAD + lat("lookup", lookups) + lat("write", writes)
            + V2_TAIL.format(ref="\n".join(rows("ref", hist_of(probes)))))


class ResultsV2(unittest.TestCase):
    def parse(self, text):
        return bench_results.parse_text(text, "results.txt")

    def test_percentiles_and_probe_come_from_the_fine_rows(self):
        r = self.parse(v2_text())
        h = hist_of(LOOKUPS)
        self.assertEqual(r.lat["lookup"].fine,
                         {"p50": fine_hist.quantile_ns(h, 500),
                          "p90": fine_hist.quantile_ns(h, 900),
                          "p99": fine_hist.quantile_ns(h, 990)})
        # rank 2 of the 3 lookups in [4096, 4352): lo + 256 * 2 / 3
        self.assertEqual(r.lat["lookup"].quantile(0.5), 4096 + 256 * 2 // 3)
        ref = next(kv for w, kv in r.extra if w == "ref")
        self.assertEqual(ref["outliers"], 1)
        self.assertEqual(ref["median_ns"], fine_hist.quantile_ns(hist_of(PROBES), 500))
        from analysis.metrics import RESULTS
        from analysis.tidy import point_metrics
        m = point_metrics.compute({RESULTS: r})
        self.assertEqual(m["ref_probe_ns"], ref["trim_mean_ns"])

    def assert_error(self, text, words):
        with self.assertRaises(ParseError) as cm:
            self.parse(text)
        self.assertIn(words, str(cm.exception))

    def test_rows_that_do_not_count_their_record_are_an_error(self):
        text = v2_text().replace("lat op=lookup count=4", "lat op=lookup count=5")
        self.assert_error(text, "fine of=lookup rows count 4, lat op=lookup count=5")
        text = v2_text().replace("ref loops=4", "ref loops=3")
        self.assert_error(text, "fine of=ref rows count 4, ref loops=3")

    def test_missing_rows_are_an_error_not_a_log2_fallback(self):
        text = "\n".join(l for l in v2_text().splitlines()
                         if not l.startswith("fine of=write")) + "\n"
        self.assert_error(text, "fine of=write rows count 0, lat op=write count=4")

    def test_bad_rows(self):
        line = next(l for l in v2_text().splitlines() if l.startswith("fine of=lookup"))
        for bad, words in ((line + "\n" + line, "second fine of=lookup"),
                           (line.replace("row=", "row=24") , "is not 0..23"),
                           (line.replace("counts=", "counts=1,"), "16 comma-separated"),
                           (line.replace("of=lookup", "of=Look"), "is not a lat op"),
                           (line + "\n" + line.replace("of=lookup", "of=read"),
                            "without a record")):
            with self.subTest(bad=bad[:60]):
                self.assert_error(v2_text().replace(line, bad), words)

    def test_v1_fine_words_are_unknown_records(self):
        # v1 carries the module's own percentiles; a "fine" word there is
        # an unknown record (FORMAT.md lets v1 add records) and changes
        # nothing.
        text = read("results-v1-ref.txt").replace(
            "total ops", "fine of=lookup row=3 counts=1\ntotal ops")
        r = self.parse(text)
        self.assertEqual(r.lat["lookup"].fine["p50"], 8693)



class RealResultsV2(unittest.TestCase):
    """A real guest's results v2 (the after kernel, 2 vCPUs, read_pct=50,
    timing=8: tests/t-guest-job.sh's boot): every fine row counts what
    its record counts, and the host's percentiles agree with the log2
    histogram the module printed beside them."""

    def setUp(self):
        self.r = bench_results.parse_file(fixture("real/results-v2-after-r50.txt"))

    def test_percentiles_fall_in_the_log2_bucket_of_their_rank(self):
        for op, lat in self.r.lat.items():
            for q in (0.5, 0.9, 0.99):
                v = lat.quantile(q)
                rank = -(-lat.count * round(q * 1000) // 1000)
                cum, b = 0, 0
                while cum + lat.hist[b] < rank:
                    cum += lat.hist[b]
                    b += 1
                with self.subTest(op=op, q=q):
                    self.assertTrue(2 ** b <= v <= 2 ** (b + 1), (v, b))

    def test_probe_speed(self):
        ref = next(kv for w, kv in self.r.extra if w == "ref")
        self.assertEqual(ref["loops"], 1430)
        # 1 probe of 1430 took 32 us (an interrupt): left out of the mean
        self.assertEqual(ref["outliers"], 1)
        mean_all = ref["ns"] / ref["loops"]
        self.assertLess(ref["trim_mean_ns"], mean_all)
        self.assertGreater(ref["trim_mean_ns"], 0.9 * mean_all)
        self.assertTrue(1024 <= ref["median_ns"] < 2048)


if __name__ == "__main__":
    unittest.main()
