# SPDX-License-Identifier: GPL-2.0
"""The host speed meter: guest/meter/host_meter.c built and run for real
on this host's cores, the runner's windows of its samples
(guest/hostspeed.py), host-meter.txt as the runner writes it and
analysis reads it (host_meter_ns), and a guest that sends the file."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

from analysis.metrics import HOST_METER
from analysis.parse import host_meter
from analysis.tidy import point_metrics
from analysis.parse.common import ParseError
from guest import hostspeed, vcpu


def meter_metrics(rows):
    """The metrics the registry reads from host-meter.txt's rows."""
    return point_metrics.compute({HOST_METER: rows})


def marks_for(t0_ns, t1_ns, t=(1.0, 2.0)):
    """A point's begin/end marks with one stamped thread each."""
    return {"begin": (t[0], {11: ("CPU 0/TCG", t0_ns, 0, 0, 0)}),
            "end": (t[1], {11: ("CPU 0/TCG", t1_ns, 0, 0, 0)})}


class TestMeterProgram(unittest.TestCase):
    """The C program itself, on this host."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.binary, why = hostspeed.meter_binary(cls.tmp)
        if cls.binary is None:
            raise AssertionError(f"host_meter did not build: {why}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_samples_each_core(self):
        cores = sorted(os.sched_getaffinity(0))
        out = os.path.join(self.tmp, "log")
        t0 = time.monotonic_ns()
        with open(out, "xb") as f:
            p = subprocess.Popen([self.binary, "--cpus", ",".join(map(str, cores)),
                                  "--period-ms", "10"], stdout=f)
            time.sleep(0.5)
            p.terminate()
            p.wait()
        t1 = time.monotonic_ns()
        samples, head = hostspeed.read_samples(out)
        self.assertEqual(head, {"work": str(hostspeed.WORK), "period_ms": "10"})
        for c in cores:
            mine = [s for s in samples if s[1] == c]
            # 50 periods in 0.5 s: most of them, even on a busy host
            self.assertGreaterEqual(len(mine), 20, f"core {c}")
            # On CLOCK_MONOTONIC, the runner's clock (time.monotonic_ns).
            self.assertTrue(all(t0 < t < t1 for t, _, _ in mine))
            self.assertTrue(all(0 < ns < 50 * 10**6 for _, _, ns in mine))
        self.assertEqual({s[1] for s in samples}, set(cores))

    def test_bad_arguments(self):
        for args, why in ((["--cpus", "0,x"], "--cpus 'x'"), ([], "--cpus is required"),
                          (["--cpus", "0", "--period-ms", "0"], "--period-ms '0'"),
                          (["--cpus", "0,"], "a comma at the end"),
                          (["--bogus", "1"], "unknown option")):
            with self.subTest(args=args):
                r = subprocess.run([self.binary, *args], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2)
                self.assertIn(why, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1)

    def test_rebuilt_only_when_changed(self):
        before = os.stat(self.binary).st_mtime_ns
        self.assertEqual(hostspeed.meter_binary(self.tmp), (self.binary, None))
        self.assertEqual(os.stat(self.binary).st_mtime_ns, before)
        with open(os.path.join(self.tmp, "host-meter", "inputs.sha256"), "w") as f:
            f.write("stale\n")
        self.assertEqual(hostspeed.meter_binary(self.tmp), (self.binary, None))
        self.assertNotEqual(os.stat(self.binary).st_mtime_ns, before)


class TestMeterFiles(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        for p in ("p1", "p2"):
            os.makedirs(os.path.join(self.tmp, "points", p))
        lines = ["lockbench-host-meter v1 work=8000 period_ms=20"]
        # Core 0 at 1000 ns, core 1 at 3000 ns, t = 0..99 us; a cut last line.
        for t in range(100):
            lines.append(f"sample t_ns={t * 1000} cpu={t % 2} work_ns={1000 + 2000 * (t % 2)}")
        with open(os.path.join(self.tmp, hostspeed.METER_LOG), "w") as f:
            f.write("\n".join(lines) + "\nsample t_ns=99999 cpu=0 work")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_windows(self):
        samples, _ = hostspeed.read_samples(os.path.join(self.tmp, hostspeed.METER_LOG))
        self.assertEqual(len(samples), 100)
        rows = hostspeed.window_rows(samples, 10_000, 19_000)
        self.assertEqual([(r["cpu"], r["samples"], r["median_ns"]) for r in rows],
                         [(0, 5, 1000), (1, 5, 3000)])
        self.assertEqual(hostspeed.window_rows(samples, 200_000, 300_000), [])

    def test_write_and_read_back(self):
        marks = {"p1": marks_for(10_000, 29_000), "p2": {"begin": marks_for(0, 1)["begin"]}}
        got = hostspeed.write_meter(self.tmp, ["p1", "p2"], marks)
        self.assertEqual(got["points"], ["p1"])
        self.assertNotIn("why_not", got)
        rows = host_meter.parse_host_meter(os.path.join(self.tmp, "points", "p1",
                                                        host_meter.METER_FILE))
        self.assertEqual([(r["cpu"], r["samples"]) for r in rows], [(0, 10), (1, 10)])
        self.assertEqual(meter_metrics(rows), {"host_meter_ns": 2000})
        # Never over a file that is there.
        again = hostspeed.write_meter(self.tmp, ["p1"], marks)
        self.assertIn("p1: cannot write it", again["why_not"])
        # Outside every window: said.
        far = hostspeed.write_meter(self.tmp, ["p2"], {"p2": marks_for(10**9, 2 * 10**9)})
        self.assertEqual(far["why_not"], "no samples within any point's run-begin/run-end window")
        off = hostspeed.write_meter(self.tmp, ["p1"], marks, "off (--no-meter)")
        self.assertEqual((off["points"], off["why_not"]), ([], "off (--no-meter)"))

    def test_weighted_by_samples(self):
        rows = [{"cpu": 0, "samples": 30, "median_ns": 1000.0},
                {"cpu": 1, "samples": 10, "median_ns": 2000.0}]
        self.assertEqual(meter_metrics(rows), {"host_meter_ns": 1250})

    def bad(self, text):
        path = os.path.join(self.tmp, "bad.txt")
        with open(path, "w") as f:
            f.write(text)
        with self.assertRaises(ParseError) as e:
            host_meter.parse_host_meter(path)
        return str(e.exception)

    def test_refused(self):
        head = "lockbench-host-meter v1\n" + "\t".join(host_meter.METER_COLUMNS) + "\n"
        good = "0\t10\t1000\t1100\t900\t2000\n"
        cases = [("cpu\n", "not 'lockbench-host-meter v1'"),
                 ("lockbench-host-meter v1\n", "no header line"),
                 (head, "no host core rows"),
                 (head + "0 10 1000 1100 900 2000\n", "fields"),
                 (head + good.replace("1100", "1x00"), "not a number"),
                 (head + good.replace("\t900\t", "\t1500\t"), "min <= median"),
                 (head + good.replace("\t10\t", "\t0\t"), "samples >= 1"),
                 (head + good.replace("\t1100\t", "\t3000\t"), "mean <= max")]
        for text, why in cases:
            with self.subTest(why):
                self.assertIn(why, self.bad(text))

    def test_host_file(self):
        """collect() refuses it in a guest's stream, as host-steal.txt."""
        self.assertIn(host_meter.METER_FILE, vcpu.HOST_FILES)
        self.assertEqual(host_meter.METER_FILE, hostspeed.METER_FILE)
        self.assertEqual(host_meter.METER_COLUMNS, hostspeed.METER_COLUMNS)


if __name__ == "__main__":
    unittest.main()
