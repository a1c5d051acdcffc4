# SPDX-License-Identifier: GPL-2.0
"""The module's think_ns parameter on the host side: a job point
(guest/job.py) and a campaign point (scripts/campaign/file.py) may set it
within 0..1000000; a campaign point that does not set it gets think_ns=0,
so that it never inherits the think time of the point before it in the
guest; the results' param line carries it (analysis/parse/bench_results.py)."""

import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from analysis.parse import bench_results  # noqa: E402
from guest import job  # noqa: E402
from scripts.campaign import file as campaign_file  # noqa: E402

RESULTS = """mbox_bench-results v1
param read_pct=90 mailboxes=16 miss_pct=0 duration_ms=1000 cpus=0-1 seed=1 timing=8 think_ns=20000
run id=1 threads=2 elapsed_ns=1000000000 clock_read_ns=110 timing_cost_pct=0.01
thread cpu=0 ops=9000 lookups=8100 hits=8100 misses=0 writes=900 errors=0 ref_loops=141 ref_ns=141000
thread cpu=1 ops=9000 lookups=8100 hits=8100 misses=0 writes=900 errors=0 ref_loops=141 ref_ns=141000
total ops=18000 lookups=16200 hits=16200 misses=0 writes=1800 errors=0 ops_per_sec=18000
lockops read=16216 write=3632
fairness min_ops=9000 max_ops=9000 spread=1.00 flag=ok
end status=SUCCESS
"""


class JobThink(unittest.TestCase):
    def test_range(self):
        self.assertEqual(job.POINT_KEYS["think_ns"], (0, 1000000))
        for val in (0, 20000, 1000000):
            points, _ = job.parse(f"lockbench-job v1\npoint p1 think_ns={val}\n")
            self.assertEqual(points, [("p1", {"think_ns": val})])
        with self.assertRaisesRegex(job.JobError, r"think_ns=1000001 must be an integer in 0\.\.1000000"):
            job.parse("lockbench-job v1\npoint p1 think_ns=1000001\n")


class CampaignThink(unittest.TestCase):
    def load(self, points):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write('name = "t"\nvariants = ["before"]\ncpus = [2]\nrepetitions = 1\n')
            for pid, extra in points:
                f.write(f'[[points]]\nid = "{pid}"\nread_pct = 90\nmailboxes = 16\n{extra}')
        self.addCleanup(os.unlink, f.name)
        return campaign_file.load(f.name)

    def test_default_zero_after_a_think_point(self):
        c = self.load([("t20k", "think_ns = 20000\n"), ("t0", "")])
        self.assertEqual([p["think_ns"] for p in c["points"]], [20000, 0])
        lines = campaign_file.job_text(c).splitlines()
        self.assertIn("think_ns=20000", lines[-2].split())
        self.assertIn("think_ns=0", lines[-1].split())

    def test_out_of_range(self):
        for val in ("-1", "1000001", "1.5", '"20000"'):
            with self.subTest(val), self.assertRaises(campaign_file.CampaignError) as cm:
                self.load([("p1", f"think_ns = {val}\n")])
            self.assertIn("think_ns: must be an integer 0..1000000", str(cm.exception))


class ResultsThink(unittest.TestCase):
    def test_param_line(self):
        res = bench_results.parse_text(RESULTS)
        self.assertEqual(res.param["think_ns"], 20000)
        self.assertEqual(res.status, "SUCCESS")


if __name__ == "__main__":
    unittest.main()
