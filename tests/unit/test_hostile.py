# SPDX-License-Identifier: GPL-2.0
# Timed: bounds the wall time of runs (hang guards): tests/run-all.sh runs
# this module at the normal priority, not niced beside a kernel build.
"""The parsers on hostile files (issue #17, items 5, 6 and 12): 1 MB files
built against the old patterns, numbers that are not u64 counters, files
that are not regular files, and `run.sh analyze` on a run directory with
such files in some points: a ParseError (exit 2, one line from a CLI)
found in linear time, and the tables of every other point still written."""

import contextlib
import csv
import importlib
import os
import resource
import signal
import subprocess
import tempfile
import time
import unittest
from unittest import mock

from analysis.parse import (bench_results, common, lockstat, perf_lock,
                            perf_stat)
from analysis import analyze
from analysis.parse import host_steal
from analysis.tidy import tables
from analysis.parse.common import ParseError
from tests.unit import hostile, synth
from tests.unit.helpers import read

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
#: Generous, for a loaded 2-core machine: each file takes well under 1 s
#: (python3 -m tests.unit.hostile prints the real times); the old
#: patterns took minutes on some of them.
BOUND_S = 30

#: (parser, case) -> (line of the ParseError, words in it); None: parsed.
EXPECT = {
    ("lockstat", "long-line"): (6, "longer than 4096"),
    ("lockstat", "digits"): (6, "bad con_bounces value"),
    ("lockstat", "columns"): (6, "garbled line"),
    ("lockstat", "valid"): None,
    ("perf_stat", "long-line"): (1, "longer than 4096"),
    ("perf_stat", "digits"): (1, "bad counter value"),
    ("perf_stat", "columns"): None,
    ("perf_lock", "long-line"): (3, "longer than 4096"),
    ("perf_lock", "digits"): (3, "bad 'acquired' field"),
    ("perf_lock", "columns"): None,
    ("bench_results", "long-line"): (2, "longer than 4096"),
    ("bench_results", "digits"): (4, "ops= has 3800 digits"),
    ("bench_results", "columns"): None,
    ("host_steal", "long-line"): (3, "longer than 4096"),
    ("host_steal", "digits"): (3, "not a number of at most 20 digits"),
    ("host_steal", "columns"): (3, "2001 fields"),
}

#: Not u64 counters: '²' passes str.isdigit(), '٣' (Arabic-Indic 3) passes
#: \d and int(); 21 digits; 20 digits over 2^64 - 1; 3800 digits.
BAD_COUNTS = ("\u00b2", "\u0663", "1" * 21, "18446744073709551616",
              "9" * 3800)
#: The same for the integer part of a time or other decimal (not a u64).
BAD_DECIMALS = tuple(b for b in BAD_COUNTS if len(b) != 20)


def _parser(name):
    mod, fn = hostile.PARSERS[name]
    return getattr(importlib.import_module(mod), fn)


class OneMegabyte(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cases = hostile.cases()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_parser_every_case(self):
        self.assertEqual(set(EXPECT), {(p, c) for p, cs in self.cases.items()
                                       for c in cs})
        for (parser, case), want in EXPECT.items():
            with self.subTest(f"{parser} {case}"):
                path = os.path.join(self.tmp.name, f"{parser}-{case}")
                with open(path, "w") as f:
                    f.write(self.cases[parser][case])
                self.assertGreaterEqual(os.path.getsize(path), 1 << 20)
                t = time.monotonic()
                try:
                    _parser(parser)(path)
                    got = None
                except ParseError as e:
                    got = e
                secs = time.monotonic() - t
                self.assertLess(secs, BOUND_S)
                if want is None:
                    self.assertIsNone(got)
                else:
                    self.assertIsNotNone(got)
                    self.assertEqual(got.line, want[0], got)
                    self.assertIn(want[1], str(got))
                    self.assertEqual(len(str(got).splitlines()), 1)
                    self.assertLess(len(str(got)), 400)


class BadNumbers(unittest.TestCase):
    """Each counter field of each parser, with each of BAD_COUNTS: a
    ParseError naming the line, never a ValueError nor a number."""

    def refused(self, parse, text, line, words=None, bads=BAD_COUNTS):
        for bad in bads:
            with self.subTest(bad=bad[:25]):
                with self.assertRaises(ParseError) as cm:
                    parse(text.replace("@", bad), "f")
                self.assertEqual(cm.exception.line, line)
                if words:
                    self.assertIn(words, str(cm.exception))

    def test_lockstat(self):
        row = hostile._lockstat_row("mboxes_lock", "@")
        self.refused(lockstat.parse_text, hostile.LOCKSTAT_HEAD + row + "\n",
                     6, "bad con_bounces value")
        row = hostile._lockstat_row("mboxes_lock").replace(" 5 ", " @ ")
        self.refused(lockstat.parse_text, hostile.LOCKSTAT_HEAD + row + "\n",
                     6, "bad acquisitions value")
        time_ = hostile._lockstat_row("mboxes_lock").replace(" 0.00 ",
                                                             " @.00 ", 1)
        self.refused(lockstat.parse_text, hostile.LOCKSTAT_HEAD + time_
                     + "\n", 6, "want a time", BAD_DECIMALS)
        point = (hostile.LOCKSTAT_HEAD + hostile._lockstat_row("mboxes_lock")
                 + "\n" + "-" * 20 + "\n" + " " * 20 + "mboxes_lock "
                 "@ [<000000001c6f1e1c>] omap_mbox_get+0x1c/0x90\n")
        self.refused(lockstat.parse_text, point, 8)
        (p,) = lockstat.parse_text(point.replace("@", "42")).points
        self.assertEqual((p.name, p.count, p.addr, p.symbol),
                         ("mboxes_lock", 42, "000000001c6f1e1c",
                          "omap_mbox_get+0x1c/0x90"))

    def test_perf_stat(self):
        for line, bads in (("@,msec,task-clock,1,100.00,,", BAD_DECIMALS),
                           ("1,msec,task-clock,@,100.00,,", BAD_COUNTS),
                           ("1,msec,task-clock,1,@.00,,", BAD_DECIMALS)):
            with self.subTest(line):
                self.refused(perf_stat.parse_text, "# x\n" + line + "\n", 2,
                             bads=bads)
        for value in ("1e999", "nan", "inf", "1" * 21 + ".0"):
            with self.subTest(value):
                with self.assertRaises(ParseError):
                    perf_stat.parse_text(f"{value},,task-clock,1,100.00,,\n")

    def test_csv_field_over_the_csv_module_limit(self):
        text = "1,msec,task-clock," + "x" * 200_000 + ",100.00,,\n"
        with self.assertRaises(ParseError) as cm:
            perf_stat.parse_text(text, "p.csv")
        self.assertEqual(cm.exception.line, 1)
        self.assertIn("longer than 4096", str(cm.exception))

    def test_perf_lock(self):
        for row, bads in (
                ("lock @ 1 1.00 us 1.00 us 1.00 us 1.00 us", BAD_COUNTS),
                ("lock 1 @ 1.00 us 1.00 us 1.00 us 1.00 us", BAD_COUNTS),
                ("lock 1 1 @.00 us 1.00 us 1.00 us 1.00 us", BAD_DECIMALS)):
            with self.subTest(row):
                self.refused(perf_lock.parse_text,
                             hostile.PERF_LOCK_HEAD + row + "\n", 3,
                             bads=bads)

    def refused_edits(self, good, edits):
        """Each (old, new) edit of the results text good, its "@" a bad
        value, is refused at the line of old."""
        for old, new in edits:
            with self.subTest(old):
                self.assertIn(old, good)
                line = good[:good.index(old)].count("\n") + 1
                self.refused(bench_results.parse_text,
                             good.replace(old, new, 1), line)

    def test_bench_results(self):
        good = read("results-v1.txt")
        self.refused_edits(good, (("lockops read=89111", "lockops read=@"),
                                  ("hist=0,", "hist=@,"),
                                  ("thread cpu=0 ops=", "thread cpu=0 ops=@")))
        for value in ("inf", "1e999", "-5", "1.5"):
            with self.subTest(value):
                with self.assertRaises(ParseError):
                    bench_results.parse_text(good.replace(
                        "lockops read=89111", f"lockops read={value}"))

    def test_bench_results_v2_fine_rows(self):
        self.refused_edits(read("real/results-v2-after-r50.txt"), (
            ("fine of=lookup row=8 counts=0,", "fine of=lookup row=8 counts=@,"),
            ("fine of=ref row=7 counts=508,", "fine of=ref row=7 counts=@,"),
            ("fine of=write row=9 ", "fine of=write row=@ ")))

    def test_host_steal(self):
        text = hostile.STEAL_HEAD + "CPU 0/TCG\t@\t1000\t900\t100\t2\t10.000\n"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "host-steal.txt")

            def parse(t, _name):
                with open(path, "w") as f:
                    f.write(t)
                return host_steal.parse_host_steal(path)
            self.refused(parse, text, 3, "not a number")
            self.refused(parse, text.replace("@", "7").replace("10.000",
                                                               "@"), 3,
                         bads=BAD_DECIMALS)
            self.refused(parse, text.replace("@", "7").replace("10.000",
                                                               "nan"), 3)


class Hung(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds):
    """Raise Hung in the block after seconds: a read that blocks (a FIFO
    opened without O_NONBLOCK waits for a writer forever) fails the test
    instead of hanging the suite."""
    def alarm(_sig, _frame):
        raise Hung(f"still blocked after {seconds} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class NotARegularFile(unittest.TestCase):
    """read_text, which every parser and the manifest reader use."""

    def refused_fast(self, path, words):
        t = time.monotonic()
        with self.assertRaises(ParseError) as cm, deadline(BOUND_S):
            common.read_text(path)
        self.assertLess(time.monotonic() - t, BOUND_S)
        self.assertIn(words, str(cm.exception))

    def test_fifo_directory_too_big(self):
        # /dev/zero is LockstatCli's: read here, a regression would take
        # all the memory of the machine before its MemoryError
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "fifo")
            os.mkfifo(fifo)
            self.refused_fast(fifo, "not a regular file (a FIFO)")
            self.refused_fast(d, "is a directory")
            link = os.path.join(d, "link")
            os.symlink(fifo, link)
            self.refused_fast(link, "a FIFO")
            big = os.path.join(d, "big")
            with open(big, "w") as f:
                f.truncate(common.MAX_FILE_BYTES + 1)  # sparse
            self.refused_fast(big, f"larger than {common.MAX_FILE_BYTES}")
            with open(big, "w") as f:
                f.write("x" * 11)
            with self.assertRaises(ParseError):
                common.read_text(big, limit=10)
            self.assertEqual(common.read_text(big, limit=11), "x" * 11)

    def test_proc_file_bounded_by_what_is_read(self):
        # /proc files say they are empty: the bound is on the bytes read
        self.assertIn("Name:", common.read_text("/proc/self/status"))
        with self.assertRaises(ParseError) as cm:
            common.read_text("/proc/self/status", limit=10)
        self.assertIn("larger than 10 bytes", str(cm.exception))


def _cli(argv, timeout=BOUND_S, memory=None):
    """Run a ./run.sh command; (exit status, stdout, stderr, seconds).
    The timeout keeps a read that blocks (a FIFO) from hanging the suite,
    memory (bytes of address space) one that never ends (/dev/zero) from
    taking the machine's memory."""
    def limit():
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    t = time.monotonic()
    p = subprocess.run([os.path.join(ROOT, "run.sh")] + argv, cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, preexec_fn=limit)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t


def _read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class AnalyzeKeepsTheGoodPoints(unittest.TestCase):
    """./run.sh analyze on a synthetic run with hostile files in some of
    its points: exit 0, every tidy table written, the bad points recorded
    (problems.csv, outcomes.csv), the good points' samples all there."""

    def test_hostile_points(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "run")
            synth.make_run(d, reps=2)

            def pfile(boot, point, name):
                return os.path.join(d, "cells", boot, "points", point, name)

            def edit(boot, point, old, new):
                path = pfile(boot, point, "results.txt")
                with open(path) as f:
                    text = f.read()
                self.assertIn(old, text)
                with open(path, "w") as f:
                    f.write(text.replace(old, new, 1))
            # int('²') was a ValueError: "internal error", no table at all
            edit("r01-before-c2", "p1", "hist=0,", "hist=\u00b2,")
            # int() of 5000 digits was a ValueError too
            edit("r01-after-c2", "p2", "lat op=lookup count=",
                 "lat op=lookup count=" + "9" * 5000)
            os.remove(pfile("r02-before-c2", "p1", "lock_stat.txt"))
            os.mkfifo(pfile("r02-before-c2", "p1", "lock_stat.txt"))
            os.remove(pfile("r02-after-c2", "p2", "perf-stat.csv"))
            os.symlink("/dev/zero", pfile("r02-after-c2", "p2",
                                          "perf-stat.csv"))
            with open(pfile("r02-before-c2", "p2", "perf-stat.csv"),
                      "a") as f:
                f.write("1,,big," + "x" * 200_000 + ",100.00,,\n")

            status, out, err, _ = _cli(["analyze", d], timeout=120)
            self.assertEqual(status, 0, err)
            self.assertNotIn("internal error", err)
            self.assertNotIn("Traceback", err)
            self.assertIn("wrote", out)
            tdir = os.path.join(d, "tidy")
            for name in tables.COLUMNS:
                if name != "perf_lock":
                    self.assertTrue(os.path.exists(os.path.join(
                        tdir, name + ".csv")), name)
            outcomes = {(r["cell"], r["point"]): (r["outcome"], r["detail"])
                        for r in _read_csv(os.path.join(tdir,
                                                        "outcomes.csv"))}
            self.assertEqual(len(outcomes), 8)
            bad = {k: v for k, v in outcomes.items() if v[0] != "ok"}
            self.assertEqual(set(bad), {("r01-before-c2", "p1"),
                                        ("r01-after-c2", "p2")})
            self.assertEqual(bad[("r01-before-c2", "p1")][0], "missing")
            self.assertIn("results.txt: line 6: lat hist= must be 32",
                          bad[("r01-before-c2", "p1")][1])
            self.assertIn("results.txt: line 6: line of 5",
                          bad[("r01-after-c2", "p2")][1])
            problems = {(p["cell"], p["point"], p["file"]): p["problem"]
                        for p in _read_csv(os.path.join(tdir,
                                                        "problems.csv"))}
            self.assertEqual(problems[("r02-before-c2", "p1",
                                       "lock_stat.txt")],
                             "not a regular file (a FIFO)")
            self.assertEqual(problems[("r02-after-c2", "p2",
                                       "perf-stat.csv")],
                             "not a regular file (a character device)")
            self.assertIn("line 6: line of 200", problems[(
                "r02-before-c2", "p2", "perf-stat.csv")])
            samples = _read_csv(os.path.join(tdir, "samples.csv"))
            thr = {(r["cell"], r["point"]) for r in samples
                   if r["metric"] == "throughput_ops_s"}
            self.assertEqual(thr, set(outcomes) - set(bad))
            # the FIFO's point lost its lock_stat metrics only
            got = {r["metric"] for r in samples
                   if (r["cell"], r["point"]) == ("r02-before-c2", "p1")}
            self.assertIn("throughput_ops_s", got)
            self.assertNotIn("lock_contentions", got)

    def test_a_parser_bug_loses_one_point_not_the_run(self):
        """Should a parser still raise something else than a ParseError,
        tidy records that point as unreadable and goes on."""
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "run")
            synth.make_run(d, reps=2)
            real = bench_results.parse_file

            def buggy(path, root=None):
                if "r01-after-c2" in path and path.endswith(
                        os.path.join("p1", "results.txt")):
                    raise ValueError("a bug")
                return real(path, root=root)
            with mock.patch.object(bench_results, "parse_file", buggy), \
                    mock.patch.dict(os.environ, {"ANALYSIS_DEBUG": ""}):
                _rd, t, _m, _c = analyze.analyze(d)
            got = [o for o in t.tables["outcomes"] if o["outcome"] != "ok"]
            self.assertEqual(len(got), 1)
            self.assertEqual((got[0]["cell"], got[0]["point"]),
                             ("r01-after-c2", "p1"))
            self.assertIn("internal parser error (a bug): ValueError: a bug",
                          got[0]["detail"])
            self.assertEqual(len(t.tables["outcomes"]), 8)


class LockstatCli(unittest.TestCase):
    """./run.sh lockstat on the hostile files: exit 2, one line."""

    def refused(self, path, words):
        status, out, err, secs = _cli(["lockstat", path], memory=1 << 30)
        self.assertEqual(status, 2, err)
        self.assertEqual(out, "")
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith(f"lockstat: {path}"), err)
        self.assertIn(words, err)
        self.assertLess(secs, BOUND_S)

    def test_hostile_dumps(self):
        with tempfile.TemporaryDirectory() as d:
            cases = {
                "long-line": (hostile.cases()["lockstat"]["long-line"],
                              ":6: line of 1048576 characters"),
                "5000-digits": (hostile.LOCKSTAT_HEAD + hostile._lockstat_row(
                    "mboxes_lock", "9" * 5000) + "\n", ":6: line of 5"),
                "21-digits": (hostile.LOCKSTAT_HEAD + hostile._lockstat_row(
                    "mboxes_lock", "9" * 21) + "\n", ":6: bad con_bounces"),
                "superscript": (hostile.LOCKSTAT_HEAD + hostile._lockstat_row(
                    "mboxes_lock", "\u00b2") + "\n", ":6: bad con_bounces"),
            }
            for name, (text, words) in cases.items():
                with self.subTest(name):
                    path = os.path.join(d, name)
                    with open(path, "w") as f:
                        f.write(text)
                    self.refused(path, words)
            fifo = os.path.join(d, "fifo")
            os.mkfifo(fifo)
            self.refused(fifo, ": not a regular file (a FIFO)")
        self.refused("/dev/zero", ": not a regular file (a character device)")


if __name__ == "__main__":
    unittest.main()
