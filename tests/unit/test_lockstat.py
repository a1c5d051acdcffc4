# SPDX-License-Identifier: GPL-2.0
"""analysis.parse.lockstat on hand-made /proc/lock_stat dumps (0.3 and 0.4)."""

import os
import tempfile
import unittest

from analysis.parse import lockstat
from analysis.parse.common import ParseError
from tests.unit.helpers import fixture, read


def rows_by(dump):
    return {(r.name, r.kind): r for r in dump.rows}


class BusyDump(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dump = lockstat.parse_file(fixture("lockstat-0.4-busy.txt"))
        cls.rows = rows_by(cls.dump)

    def test_version_and_counts(self):
        self.assertEqual(self.dump.version, "0.4")
        self.assertFalse(self.dump.debug_disabled)
        self.assertFalse(self.dump.computed_avg)
        self.assertEqual(len(self.dump.rows), 15)

    def test_rwlock_rows(self):
        w = self.rows[("mboxes_lock", "W")]
        r = self.rows[("mboxes_lock", "R")]
        self.assertEqual((w.con_bounces, w.contentions, w.acq_bounces,
                          w.acquisitions), (812, 1734, 1590, 3300))
        self.assertEqual(w.waittime_min_us, 1.12)
        self.assertEqual(w.waittime_max_us, 912.35)
        self.assertEqual(w.waittime_total_us, 35403.08)
        self.assertEqual(w.waittime_avg_us, 20.42)
        self.assertEqual(w.holdtime_avg_us, 9.13)
        self.assertEqual(r.acquisitions, 185000)
        self.assertEqual(r.holdtime_total_us, 458800.00)

    def test_plain_and_read_only_rows(self):
        self.assertEqual(self.rows[("&rq->__lock", "")].acquisitions, 402311)
        # a class with only read acquisitions prints only an -R row
        self.assertIn(("tasklist_lock", "R"), self.rows)
        self.assertNotIn(("tasklist_lock", ""), self.rows)

    def test_awkward_names(self):
        for name in ("{mbox registry: slot table} (private)",  # spaces : {}
                     "(console_sem).lock", "tty:0 ldisc",
                     "&sb->s_type->i_mutex_key#3", "&rq->__lock/1",
                     "&port_lock_key#2/1"):
            self.assertIn((name, ""), self.rows, name)

    def test_cut_names(self):
        cut = self.rows[("(work_completion)(&(&wb->dwork)->work", "")]
        self.assertEqual(len(cut.name), 37)
        self.assertTrue(cut.maybe_cut)
        self.assertFalse(self.rows[("mboxes_lock", "R")].maybe_cut)

    def test_contention_points(self):
        pts = [p for p in self.dump.points if p.name == "mboxes_lock"]
        self.assertEqual([p.role for p in pts],
                         ["contention"] * 3 + ["contending"] * 3)
        self.assertEqual(pts[0].count, 4102)
        self.assertEqual(pts[0].addr, "c07a1f3c")
        self.assertEqual(pts[0].symbol, "omap_mbox_get+0x2c/0x9c")
        self.assertEqual(pts[-1].symbol,
                         "mbox_bench_thread+0x1a4/0x3f0 [mbox_bench]")

    def test_select(self):
        self.assertEqual(len(self.dump.select(exact="mboxes_lock")), 2)
        self.assertEqual(len(self.dump.select(name_regex=r"^&rq")), 2)


class OtherVersions(unittest.TestCase):
    def test_warning_line_and_spinlock(self):
        d = lockstat.parse_file(fixture("lockstat-0.4-spinlock-warning.txt"))
        self.assertTrue(d.debug_disabled)
        (row,) = d.select(exact="mboxes_lock")
        self.assertEqual(row.kind, "")
        self.assertEqual(row.acquisitions, 188300)

    def test_v03_computes_averages(self):
        d = lockstat.parse_file(fixture("lockstat-0.3.txt"))
        self.assertEqual(d.version, "0.3")
        self.assertTrue(d.computed_avg)
        rows = rows_by(d)
        w = rows[("mboxes_lock", "W")]
        self.assertAlmostEqual(w.waittime_avg_us, round(35403.08 / 1734, 2))
        self.assertAlmostEqual(w.holdtime_avg_us, round(30112.50 / 3300, 2))
        # no contentions: the average is undefined, not 0
        self.assertIsNone(rows[("rcu_node_0", "")].waittime_avg_us)
        self.assertEqual(len(d.rows), 15)


class BadInput(unittest.TestCase):
    def assertParseError(self, text, line, words):
        with self.assertRaises(ParseError) as cm:
            lockstat.parse_text(text, "dump.txt")
        self.assertEqual(cm.exception.line, line)
        self.assertIn(words, str(cm.exception))
        self.assertTrue(str(cm.exception).startswith("dump.txt"))

    def test_unknown_version(self):
        with self.assertRaises(ParseError) as cm:
            lockstat.parse_file(fixture("lockstat-0.5.txt"))
        self.assertIn("unsupported lock_stat version 0.5", str(cm.exception))
        self.assertEqual(cm.exception.line, 1)

    def test_truncated_row(self):
        with self.assertRaises(ParseError) as cm:
            lockstat.parse_file(fixture("lockstat-0.4-truncated.txt"))
        self.assertEqual(cm.exception.line, 7)
        self.assertIn("garbled line", str(cm.exception))

    def test_console_garbage_after_version(self):
        with self.assertRaises(ParseError) as cm:
            lockstat.parse_file(fixture("lockstat-garbage.txt"))
        self.assertEqual(cm.exception.line, 2)

    def test_not_a_dump(self):
        self.assertParseError("hello world\n", 1, "not a lock_stat dump")
        self.assertParseError("", None, "empty")

    def test_header_missing_or_wrong(self):
        self.assertParseError("lock_stat version 0.4\n", 1, "truncated")
        good = read("lockstat-0.4-busy.txt")
        self.assertParseError(good.replace("holdtime-avg", "hold-avg"), 3,
                              "column header")
        v3 = read("lockstat-0.3.txt")
        self.assertParseError(v3.replace("version 0.3", "version 0.4"), 3,
                              "column header")

    def test_garbled_lines(self):
        good = read("lockstat-0.4-busy.txt")
        lines = good.splitlines(True)
        bad = "".join(lines[:6] + ["some random text\n"] + lines[6:])
        self.assertParseError(bad, 7, "garbled line")
        row = lines[5]
        self.assertParseError("".join(lines[:5] + [row.replace("1.12",
                                                               "1.1x")]),
                              6, "waittime_min_us")
        # 0.3 rows (10 fields) in a 0.4 file
        v3 = read("lockstat-0.3.txt").splitlines(True)
        self.assertParseError("".join(lines[:5] + v3[5:6]), 6, "garbled")

    def test_binary_and_missing_files(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "bin")
            with open(p, "wb") as f:
                f.write(b"lock_stat version 0.4\n\x00\x01\xff\xfe" * 10)
            with self.assertRaises(ParseError) as cm:
                lockstat.parse_file(p)
            self.assertIn("binary", str(cm.exception))
            with open(p, "wb") as f:
                f.write(b"\xff\xfe\xfd garbage")
            with self.assertRaises(ParseError):
                lockstat.parse_file(p)
            with self.assertRaises(ParseError) as cm:
                lockstat.parse_file(d)
            self.assertIn("is a directory", str(cm.exception))
            with self.assertRaises(ParseError) as cm:
                lockstat.parse_file(os.path.join(d, "nope"))
            self.assertIn("No such file", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
