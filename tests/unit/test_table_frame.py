# SPDX-License-Identifier: GPL-2.0
"""tidy_csv.table_frame (a table judged just after analyze built it) is
the frame tidy_table.frame reads back from the table's CSV text (one
judged from DIR/tidy): the same frame, value for value and type for
type, for every table of four synthetic runs and for the odd values a
table can hold.  Without this, a fresh report and a re-read one could
judge different numbers.

Run: /usr/bin/python3 -m unittest tests.unit.test_table_frame
"""

import math
import shutil
import tempfile
import unittest

from pandas.testing import assert_frame_equal

from analysis.parse import rundir, tidy_table
from analysis.tidy import tables, tidy_csv
from lockbench import csvw
from tests.unit import synth


def read_back(columns, rows):
    return tidy_table.frame(csvw.csv_text(columns, rows), "test")


class TableFrame(unittest.TestCase):
    def same(self, columns, rows, what):
        with self.subTest(what):
            assert_frame_equal(tidy_csv.table_frame(columns, rows),
                               read_back(columns, rows), check_exact=True)

    def test_every_table_of_four_runs(self):
        tmp = tempfile.mkdtemp(prefix="table-frame-")
        self.addCleanup(shutil.rmtree, tmp)
        runs = {
            "two": (synth.make_run, {"effects": {"p1": 0.9}}),
            "four-locks": (synth.make_run, {"cpus": (1, 2), "variants": [
                {"name": "before", "lock": "rw", "patches": ["0001"]},
                {"name": "rcu", "lock": "rcu", "patches": ["0001", "0003"]},
                {"name": "nolockstat", "lock": "none", "patches": ["0001"]}]}),
            "default": (synth.make_default_run, {}),
            "plain": (synth.make_default_run, {"plain": True, "name": "plain"}),
        }
        n = 0
        for name, (make, kw) in runs.items():
            d = f"{tmp}/{name}"
            make(d, **kw)
            t = tables.build(rundir.load(d))
            for table, columns in tables.COLUMNS.items():
                self.same(columns, t.tables[table], f"{name} {table}")
                n += len(t.tables[table])
        self.assertGreater(n, 1000)  # the runs' tables are not empty

    def test_odd_values(self):
        cols = ("variant", "cpus", "value", "flag", "note", "mixed")
        cases = {
            "empty": [],
            "a value missing": [{"variant": "1", "cpus": 2, "value": None},
                                {"variant": "a", "cpus": 1, "value": 0.5}],
            "integral floats": [{"value": 3.0}, {"value": 1e20}, {"value": -0.0}],
            "nan and inf": [{"value": math.nan}, {"value": math.inf},
                            {"value": -math.inf}],
            "13 digits": [{"value": 1 / 3}, {"value": 123456789.123456789}],
            "booleans": [{"flag": True}, {"flag": False}],
            "a boolean missing": [{"flag": True}, {"flag": None}],
            "text of numbers": [{"note": "007"}, {"note": "1e3"}, {"note": ""}],
            "numbers and text": [{"mixed": 1}, {"mixed": "x"}, {"mixed": 2.5}],
            "text point ids": [{"variant": "007"}, {"variant": "7"}],
        }
        for what, rows in cases.items():
            self.same(cols, rows, what)


if __name__ == "__main__":
    unittest.main()
