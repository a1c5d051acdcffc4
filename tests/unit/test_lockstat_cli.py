# SPDX-License-Identifier: GPL-2.0
"""analysis.lockstat_cli: golden CSV files and one-line errors.

The golden files live beside the dumps in fixtures/ (<dump>.csv). After a
deliberate format change, regenerate them with
  /usr/bin/python3 -m analysis.lockstat_cli DUMP > GOLDEN
and review the diff."""

import os
import subprocess
import sys
import tempfile
import unittest

from analysis import lockstat_cli
from tests.unit.helpers import fixture, read, run_main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HEADER = ("class,kind,con_bounces,contentions,waittime_min_us,"
          "waittime_max_us,waittime_total_us,waittime_avg_us,acq_bounces,"
          "acquisitions,holdtime_min_us,holdtime_max_us,holdtime_total_us,"
          "holdtime_avg_us")


class Golden(unittest.TestCase):
    def check(self, argv, golden):
        status, out, err = run_main(lockstat_cli.main, argv)
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(out, read(golden))

    def test_busy_04(self):
        self.check([fixture("lockstat-0.4-busy.txt")],
                   "lockstat-0.4-busy.csv")

    def test_03_computed_averages(self):
        self.check([fixture("lockstat-0.3.txt")], "lockstat-0.3.csv")

    def test_class_filter(self):
        self.check(["--class", "^mboxes_lock$",
                    fixture("lockstat-0.4-spinlock-warning.txt")],
                   "lockstat-0.4-spinlock-warning-mboxes.csv")

    def test_header_exact(self):
        _, out, _ = run_main(lockstat_cli.main,
                             [fixture("lockstat-0.4-busy.txt")])
        self.assertEqual(out.splitlines()[0], HEADER)

    def test_no_match_is_header_only(self):
        status, out, _ = run_main(lockstat_cli.main, [
            "--class", "no-such-class", fixture("lockstat-0.4-busy.txt")])
        self.assertEqual((status, out), (0, HEADER + "\n"))


class Errors(unittest.TestCase):
    def one_line_error(self, argv, words):
        status, out, err = run_main(lockstat_cli.main, argv)
        self.assertEqual(status, 2)
        self.assertEqual(out, "")
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("lockstat: "), err)
        self.assertIn(words, err)
        self.assertNotIn("Traceback", err)
        return err

    def test_bad_inputs(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "missing")
            err = self.one_line_error([missing], "No such file")
            self.assertTrue(err.startswith(f"lockstat: {missing}: "))
            self.one_line_error([d], "is a directory")
            binary = os.path.join(d, "bin")
            with open(binary, "wb") as f:
                f.write(bytes(range(256)) * 4)
            self.one_line_error([binary], "binary")
            empty = os.path.join(d, "empty")
            open(empty, "w").close()
            self.one_line_error([empty], "empty")
        self.one_line_error([fixture("lockstat-0.5.txt")],
                            "unsupported lock_stat version 0.5")
        self.one_line_error([fixture("lockstat-0.4-truncated.txt")],
                            ":7: garbled line")
        self.one_line_error([fixture("results-v1.txt")],
                            "not a lock_stat dump")
        self.one_line_error(["--class", "x(", fixture("lockstat-0.3.txt")],
                            "invalid --class regex")

    def test_usage_errors(self):
        self.one_line_error([], "required")
        self.one_line_error(["--bogus", "x"], "unrecognized")

    def test_help(self):
        status, out, _ = run_main(lockstat_cli.main, ["--help"])
        self.assertEqual(status, 0)
        self.assertIn("0.3", out)
        self.assertIn("total/count", out)

    def test_module_entry_point(self):
        """The real command: exit status 2, one line, no traceback."""
        p = subprocess.run([sys.executable, "-m", "analysis.lockstat_cli",
                            fixture("no-such-file")], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        p = subprocess.run([sys.executable, "-m", "analysis.lockstat_cli",
                            fixture("lockstat-0.4-busy.txt")], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        self.assertEqual(p.stdout, read("lockstat-0.4-busy.csv"))


if __name__ == "__main__":
    unittest.main()
