# SPDX-License-Identifier: GPL-2.0
"""Host steal: the runner's sampler of QEMU's vCPU threads (a thread of
this process named like one stands in for QEMU), host-steal.txt as the
runner writes it and tidy reads it, a guest that sends the host's file,
and the steal metrics of samples.csv on a synthetic run directory."""

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import threading
import time
import unittest

from analysis.parse import host_steal
from analysis import metrics
from analysis.metrics import HOST_STEAL
from analysis.tidy import point_metrics
from analysis.parse import rundir
from analysis.tidy import tables
from analysis.parse.common import ParseError
from guest import collect, qemu, vcpu
from lockbench.defaults import ICOUNT
from tests.unit import helpers, synth


def steal_metrics(rows):
    """The metrics the registry reads from host-steal.txt's rows."""
    return point_metrics.compute({HOST_STEAL: rows})


def run_metrics(m, clock="wall"):
    """What the registry derives from the metrics m alone (no file)."""
    got = point_metrics.compute({}, clock, given=m)
    return {k: v for k, v in got.items() if k not in m}


def snap(name, t_ns, run_ns, wait_ns, nvcsw, tid=100):
    """A one-thread vcpu_snapshot()."""
    return {tid: (name, t_ns, run_ns, wait_ns, nvcsw)}


def marks_for(rows_begin, rows_end, t=(1.0, 2.0)):
    return {"begin": (t[0], rows_begin), "end": (t[1], rows_end)}


def two_threads(wait0_ms, wait1_ms, wall_ms=1000):
    """begin/end snapshots of CPU 0/TCG and CPU 1/TCG."""
    begin = {11: ("CPU 0/TCG", 0, 0, 0, 0), 12: ("CPU 1/TCG", 0, 0, 0, 0)}
    end = {11: ("CPU 0/TCG", wall_ms * 10**6, 900 * 10**6,
                wait0_ms * 10**6, 3),
           12: ("CPU 1/TCG", wall_ms * 10**6, 600 * 10**6,
                wait1_ms * 10**6, 40)}
    return begin, end


def write_steal_file(pdir, wait0_ms, wait1_ms, point_id="p1"):
    """host-steal.txt in pdir, as the runner writes it."""
    begin, end = two_threads(wait0_ms, wait1_ms)
    rows = vcpu.steal_rows(begin, end)
    with open(os.path.join(pdir, host_steal.STEAL_FILE), "w") as f:
        f.write(vcpu.steal_text(point_id, marks_for(begin, end), rows))


class Sampler(helpers.VcpuThread, unittest.TestCase):
    """vcpu_snapshot() finds threads by QEMU's names and reads schedstat."""

    BUSY = True

    def test_finds_the_vcpu_threads_and_the_others(self):
        self.assertEqual(list(vcpu.vcpu_threads(os.getpid())), [self.tid])
        s = vcpu.vcpu_snapshot(os.getpid())
        self.assertIn(self.tid, s)
        self.assertIn(threading.get_native_id(), s)  # this one: not a vCPU
        name, t_ns, run_ns, wait_ns, nvcsw = s[self.tid]
        self.assertEqual(name, "CPU 0/TCG")
        self.assertTrue(t_ns > 0 and run_ns > 0 and wait_ns >= 0
                        and nvcsw >= 0)

    def test_window_of_a_running_thread(self):
        a = vcpu.vcpu_snapshot(os.getpid())
        time.sleep(0.3)
        b = vcpu.vcpu_snapshot(os.getpid())
        rows = vcpu.steal_rows(a, b)
        row = rows[0]  # the vCPU thread first, then the others
        self.assertEqual(row["thread"], "CPU 0/TCG")
        self.assertEqual(len(rows), len(set(a) & set(b)))
        self.assertEqual(row["tid"], self.tid)
        self.assertGreater(row["wall_ns"], 250 * 10**6)
        # Busy all along: it either ran or waited for a core.  Loose
        # bounds: this process's own snapshots can wait for a core too.
        self.assertGreater(row["run_ns"] + row["wait_ns"],
                           0.5 * row["wall_ns"])
        self.assertLess(row["run_ns"] + row["wait_ns"], 1.5 * row["wall_ns"])

    def test_gone_process(self):
        self.assertEqual(vcpu.vcpu_snapshot(2**22 + 12345), {})
        self.assertIsNone(vcpu.thread_sched(os.getpid(), 2**22 + 12345))

    def test_names(self):
        for name in ("CPU 0/TCG", "CPU 15/TCG", "ALL CPUs/TCG"):
            self.assertTrue(vcpu.VCPU_COMM.fullmatch(name), name)
        for name in ("qemu-system-arm", "CPU 0/KVM", "worker", "CPU /TCG"):
            self.assertFalse(vcpu.VCPU_COMM.fullmatch(name), name)


class Marks(unittest.TestCase):
    """The console watcher keeps the first run-begin/run-end of a planned
    point, with a snapshot."""

    def test_markers(self):
        marks = {"p1": {}, "p2": {}}
        lines = ["[   12.000000] lockbench: point p1 start read_pct=50",
                 "[   12.100000] lockbench: point p1 run-begin",
                 "[   13.100000] lockbench: point p1 run-end\r",
                 "[   13.200000] lockbench: point p1 run-end",
                 "[   14.000000] lockbench: point zz run-begin",
                 "[   15.000000] lockbench: point p2 run-begin-ish"]
        for t, line in enumerate(lines):
            vcpu.note_run_mark(line, float(t), os.getpid(), marks)
        self.assertEqual(sorted(marks["p1"]), ["begin", "end"])
        self.assertEqual(marks["p1"]["begin"][0], 1.0)
        self.assertEqual(marks["p1"]["end"][0], 2.0)  # the first only
        self.assertEqual(marks["p2"], {})
        self.assertNotIn("zz", marks)


class HostSteal(unittest.TestCase):
    """host-steal.txt: what the runner writes, tidy reads back."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="steal-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_rows(self):
        begin, end = two_threads(20, 300)
        rows = vcpu.steal_rows(begin, end)
        self.assertEqual([r["thread"] for r in rows],
                         ["CPU 0/TCG", "CPU 1/TCG"])
        self.assertAlmostEqual(rows[0]["steal_pct"], 2.0)
        self.assertAlmostEqual(rows[1]["steal_pct"], 30.0)
        self.assertEqual(rows[1]["nonvoluntary_switches"], 40)
        self.assertEqual(rows[1]["run_ns"], 600 * 10**6)

    def test_vcpu_order(self):
        names = ["CPU 10/TCG", "CPU 2/TCG", "CPU 0/TCG"]
        self.assertEqual(sorted(names, key=vcpu.vcpu_order),
                         ["CPU 0/TCG", "CPU 2/TCG", "CPU 10/TCG"])

    def test_thread_in_one_snapshot_only(self):
        begin = snap("CPU 0/TCG", 0, 0, 0, 0, tid=1)
        end = snap("CPU 0/TCG", 10, 5, 1, 0, tid=2)
        self.assertEqual(vcpu.steal_rows(begin, end), [])

    def test_round_trip(self):
        write_steal_file(self.tmp, 20, 300)
        rows = host_steal.parse_host_steal(os.path.join(self.tmp, host_steal.STEAL_FILE))
        self.assertEqual([r["thread"] for r in rows],
                         ["CPU 0/TCG", "CPU 1/TCG"])
        self.assertEqual(rows[1]["wait_ns"], 300 * 10**6)
        self.assertEqual(tuple(rows[0]), host_steal.STEAL_COLUMNS)
        self.assertEqual(host_steal.STEAL_COLUMNS, vcpu.STEAL_COLUMNS)
        m = steal_metrics(rows)
        self.assertAlmostEqual(m["steal_pct"], 16.0)
        self.assertAlmostEqual(m["steal_max_pct"], 30.0)

    def test_qemu_other_threads(self):
        # the vCPU threads and QEMU's main loop (5 ms run in 1000 ms)
        begin, end = two_threads(20, 300)
        begin[13] = ("qemu-system-arm", 0, 0, 0, 0)
        end[13] = ("qemu-system-arm", 10**9, 5 * 10**6, 10**6, 2)
        rows = vcpu.steal_rows(begin, end)
        self.assertEqual([r["thread"] for r in rows],
                         ["CPU 0/TCG", "CPU 1/TCG", "qemu-system-arm"])
        path = os.path.join(self.tmp, host_steal.STEAL_FILE)
        with open(path, "w") as f:
            f.write(vcpu.steal_text("p1", marks_for(begin, end), rows))
        m = steal_metrics(host_steal.parse_host_steal(path))
        self.assertAlmostEqual(m["steal_pct"], 16.0)  # the vCPUs only
        self.assertAlmostEqual(m["qemu_other_pct"], 0.5)
        self.assertNotIn("qemu_other_pct", steal_metrics(
            [r for r in host_steal.parse_host_steal(path)
             if r["thread"] != "qemu-system-arm"]))
        self.assertEqual(host_steal.VCPU_THREAD.pattern, vcpu.VCPU_COMM.pattern)
        # no vCPU row: not a host-steal file the runner writes
        lines = open(path).read().splitlines()
        with open(path, "w") as f:
            f.write("\n".join(ln for ln in lines if "/TCG" not in ln)
                    + "\n")
        with self.assertRaisesRegex(ParseError, "no vCPU thread rows"):
            host_steal.parse_host_steal(path)

    def bad(self, text):
        path = os.path.join(self.tmp, "bad.txt")
        with open(path, "w") as f:
            f.write(text)
        with self.assertRaises(ParseError) as cm:
            host_steal.parse_host_steal(path)
        return str(cm.exception)

    def test_malformed(self):
        head = ("lockbench-host-steal v1\n# c\n"
                + "\t".join(host_steal.STEAL_COLUMNS) + "\n")
        good = "CPU 0/TCG\t7\t1000\t900\t100\t2\t10.000\n"
        cases = [
            ("thread\n", "not 'lockbench-host-steal v1'"),
            ("lockbench-host-steal v1\n", "no header line"),
            (head, "no vCPU thread rows"),
            (head + "CPU 0/TCG 7 1000 900 100 2 10\n", "fields"),
            (head + good.replace("900", "9x0"), "not a number"),
            (head + good.replace("\t1000\t", "\t0\t"), "wall_ns must be > 0"),
            (head + good.replace("10.000", "1.000"), "steal_pct is not"),
            (head + "\0\n", "binary")]
        for text, why in cases:
            with self.subTest(why):
                self.assertIn(why, self.bad(text))

    def test_write_steal(self):
        os.makedirs(os.path.join(self.tmp, "points", "p1"))
        os.makedirs(os.path.join(self.tmp, "points", "p2"))
        begin, end = two_threads(1, 2)
        marks = {"p1": marks_for(begin, end), "p2": {"begin": (1.0, begin)},
                 "p3": marks_for(begin, end)}
        got = vcpu.write_steal(self.tmp, ["p1", "p2"], marks)
        self.assertEqual(got, {"file": "host-steal.txt", "points": ["p1"]})
        path = os.path.join(self.tmp, "points", "p1", "host-steal.txt")
        self.assertEqual(len(host_steal.parse_host_steal(path)), 2)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "points", "p2",
                                                     "host-steal.txt")))
        # Never over a file that is there.
        again = vcpu.write_steal(self.tmp, ["p1"], marks)
        self.assertEqual(again["points"], [])
        self.assertIn("p1: cannot write it", again["why_not"])
        none = vcpu.write_steal(self.tmp, ["p1"], {"p1": {}})
        self.assertEqual(none["why_not"],
                         "no run-begin/run-end markers on the console")
        nothr = vcpu.write_steal(self.tmp, ["p2"],
                                      {"p2": marks_for({}, {})})
        self.assertIn("no QEMU vCPU thread", nothr["why_not"])

    def test_guest_cannot_send_it(self):
        """A guest's stream with points/p1/host-steal.txt (listed in its
        SHA256SUMS): refused, never unpacked, the point not verified."""
        files = {"results.txt": b"r\n", "lock_stat.txt": b"l\n",
                 "host-steal.txt": b"lockbench-host-steal v1\n"}
        sums = "".join(f"{hashlib.sha256(v).hexdigest()}  {k}\n"
                       for k, v in files.items()).encode()
        files["SHA256SUMS"] = sums
        stream = os.path.join(self.tmp, "stream.tar")
        with tarfile.open(stream, "w") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(f"points/p1/{name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        out = os.path.join(self.tmp, "run")
        os.mkdir(out)
        done, bad, _ = collect.collect(stream, out, ["p1"])
        self.assertEqual(done, [])
        self.assertIn("the guest sent 'points/p1/host-steal.txt', a file only "
                      "the host writes", bad)
        self.assertFalse(os.path.exists(os.path.join(out, "points", "p1",
                                                     "host-steal.txt")))

    def test_qemu_is_asked_to_name_its_threads(self):
        art = {"arch": "arm", "kernel": "K"}
        cmd = qemu.qemu_cmd(art, 2, 512, "I", "/r/.results.tar")
        self.assertIn("lockbench,debug-threads=on", cmd)
        i = cmd.index("lockbench,debug-threads=on")
        self.assertEqual(cmd[i - 1], "-name")


class StealMetrics(unittest.TestCase):
    """samples.csv's steal_pct/steal_max_pct on a synthetic run: from
    host-steal.txt where there is one, no rows where there is none."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="steal-synth-")
        cls.dir = os.path.join(cls.tmp, "synth")
        synth.make_run(cls.dir, reps=2)
        cls.pdir = lambda boot, p: os.path.join(cls.dir, "cells", boot,
                                                "points", p)
        write_steal_file(cls.pdir("r01-before-c2", "p1"), 10, 40)
        write_steal_file(cls.pdir("r01-after-c2", "p1"), 300, 500)
        write_steal_file(cls.pdir("r02-after-c2", "p2"), 1, 1)
        with open(os.path.join(cls.pdir("r02-before-c2", "p2"),
                               host_steal.STEAL_FILE), "w") as f:
            f.write("lockbench-host-steal v1\nnonsense\n")
        synth.fail_point(cls.dir, "r02-after-c2", "p1", "registry")
        write_steal_file(cls.pdir("r02-after-c2", "p1"), 800, 800)
        cls.t = tables.build(rundir.load(cls.dir))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def steal(self, boot, point):
        return {r["metric"]: r["value"] for r in self.t.tables["samples"]
                if r["cell"] == boot and r["point"] == point
                and r["metric"].startswith("steal")}

    def test_values(self):
        got = self.steal("r01-before-c2", "p1")
        self.assertAlmostEqual(got["steal_pct"], 2.5)  # (1% + 4%) / 2
        self.assertAlmostEqual(got["steal_max_pct"], 4.0)
        got = self.steal("r01-after-c2", "p1")
        self.assertAlmostEqual(got["steal_pct"], 40.0)
        self.assertAlmostEqual(got["steal_max_pct"], 50.0)
        unit = {r["metric"]: r["unit"] for r in self.t.tables["samples"]}
        self.assertEqual(unit["steal_pct"], "%")

    def test_absent_file_is_no_row_and_no_problem(self):
        self.assertEqual(self.steal("r01-before-c2", "p2"), {})
        self.assertFalse([p for p in self.t.tables["problems"]
                          if p["cell"] == "r01-before-c2"])

    def test_failed_point_has_no_steal_sample(self):
        self.assertEqual(self.steal("r02-after-c2", "p1"), {})

    def test_malformed_file_is_a_problem(self):
        self.assertEqual(self.steal("r02-before-c2", "p2"), {})
        probs = [p for p in self.t.tables["problems"]
                 if p["file"] == "host-steal.txt"]
        self.assertEqual([(p["cell"], p["point"]) for p in probs],
                         [("r02-before-c2", "p2")])

    def test_flag_above_threshold(self):
        flags = [w for w in self.t.warnings
                 if w.startswith("host steal above")]
        self.assertEqual(len(flags), 1, self.t.warnings)
        # r01-after-c2/p1 (50%) is flagged, r01-before-c2/p1 (4%) and
        # r02-after-c2/p2 (0.1%) are not; 3 points measured.
        self.assertIn("at 1 of 3 measured points: r01-after-c2/p1:", flags[0])

    def metric(self, boot, point, name):
        got = [r["value"] for r in self.t.tables["samples"]
               if r["cell"] == boot and r["point"] == point
               and r["metric"] == name]
        return got[0] if got else None

    def test_throughput_run(self):
        # throughput per second the vCPUs ran: 40% stolen -> / 0.6
        thr = self.metric("r01-after-c2", "p1", "throughput_ops_s")
        self.assertAlmostEqual(
            self.metric("r01-after-c2", "p1", "throughput_run"), thr / 0.6)
        self.assertEqual(metrics.direction("throughput_run"), "higher")
        # no steal measured, or a failed point: no row
        self.assertIsNone(self.metric("r01-before-c2", "p2",
                                      "throughput_run"))
        self.assertIsNone(self.metric("r02-after-c2", "p1",
                                      "throughput_run"))

    def test_throughput_run_edges(self):
        self.assertEqual(run_metrics({"throughput_ops_s": 5.0,
                                      "steal_pct": 100.0}), {})
        self.assertEqual(run_metrics({"steal_pct": 1.0}), {})
        self.assertEqual(run_metrics({"throughput_ops_s": 9.0,
                                      "steal_pct": 0.0}),
                         {"throughput_run": 9.0})
        # none under icount, whose seconds are instructions
        self.assertEqual(run_metrics({"throughput_ops_s": 9.0,
                                      "steal_pct": 0.0}, clock=ICOUNT), {})

    def test_no_verdict(self):
        for m in ("steal_pct", "steal_max_pct"):
            self.assertIsNone(metrics.direction(m), m)
            self.assertEqual(metrics.unit(m), "%")
        self.assertEqual(metrics.STEAL_FLAG_PCT, 10.0)


if __name__ == "__main__":
    unittest.main()
