# SPDX-License-Identifier: GPL-2.0
"""The judge (guest/judge.py) offline: ./run.sh recheck DIR re-reads a
saved run's console and points and judges it as the live runner would,
keeping what only the runner knew (a hung guest it stopped, a signal)."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from guest import judge, recheck  # noqa: E402

CONSOLE = ("[    1.0] Booting Linux\nLOCKBENCH-INIT\nlockbench: point p1 start\n"
           "lockbench: point p2 start\nLOCKBENCH-JOB-END\n")


class Finish(unittest.TestCase):
    def test_worst_state_wins(self):
        probs = [{"state": "warning", "t": 1, "line": "WARNING: x"},
                 {"state": "lockdep", "t": 2, "line": "possible recursive locking"}]
        self.assertEqual(judge.finish(probs, ["p1"], ["p1"], True, 3), "lockdep")

    def test_incomplete_without_end_marker_or_points(self):
        self.assertEqual(judge.finish([], ["p1"], ["p1"], False, 1), "incomplete")
        probs = []
        self.assertEqual(judge.finish(probs, ["p1", "p2"], ["p1"], True, 1), "incomplete")
        self.assertEqual(probs[-1]["line"], "points not brought back: p2")
        self.assertEqual(judge.finish([], ["p1"], ["p1"], True, 1), "ok")

    def test_console_state(self):
        self.assertEqual(judge.console_state("Kernel panic - not syncing: x"), "panic")
        self.assertEqual(judge.console_state("WARNING: CPU: 1 PID: 2 at x"), "warning")
        self.assertIsNone(judge.console_state("lockbench: point p1 start"))


class Recheck(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_dir(self, name, console=CONSOLE, state="ok", problems=(), points=("p1", "p2")):
        d = os.path.join(self.tmp.name, name)
        os.makedirs(d)
        with open(os.path.join(d, "console.log"), "w") as f:
            f.write(console)
        for p in points:
            os.makedirs(os.path.join(d, "points", p))
            for n in ("results.txt", "lock_stat.txt"):
                with open(os.path.join(d, "points", p, n), "w") as f:
                    f.write("x\n")
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump({"points_planned": ["p1", "p2"], "state": state,
                       "problems": list(problems), "build": {"lock_stat": True}}, f)
        return d

    def main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = recheck.main(list(args))
        return rc, out.getvalue(), err.getvalue()

    def test_as_recorded(self):
        d = self.run_dir("ok")
        self.assertEqual(self.main(d), (0, f"recheck: {d}: ok\n", ""))

    def test_a_line_the_runner_missed(self):
        """A console line the patterns of its day did not know (here: the
        run recorded ok) is judged by today's."""
        d = self.run_dir("warn", CONSOLE.replace("LOCKBENCH-JOB-END",
                                                 "WARNING: CPU: 0 PID: 1 at kernel/x.c:1\n"
                                                 "LOCKBENCH-JOB-END"))
        rc, out, _ = self.main(d)
        self.assertEqual(rc, 1)
        self.assertEqual(out, f"recheck: {d}: warning, recorded ok: "
                              "WARNING: CPU: 0 PID: 1 at kernel/x.c:1\n")

    def test_runner_facts_kept(self):
        """A guest the runner stopped stays hung: its console cannot say so."""
        hung = {"state": "hung", "t": 60, "line": "no console output or results for 60 s"}
        d = self.run_dir("hung", CONSOLE.replace("LOCKBENCH-JOB-END\n", ""), "hung", [hung],
                         points=("p1",))
        self.assertEqual(self.main(d), (0, f"recheck: {d}: hung\n", ""))

    def test_a_point_lost_since(self):
        d = self.run_dir("lost")
        os.unlink(os.path.join(d, "points", "p2", "lock_stat.txt"))
        rc, out, _ = self.main(d)
        self.assertEqual((rc, out), (1, f"recheck: {d}: incomplete, recorded ok: "
                                        "points not brought back: p2\n"))

    def test_a_campaign(self):
        camp = os.path.join(self.tmp.name, "camp")
        os.makedirs(os.path.join(camp, "cells"))
        with open(os.path.join(camp, "manifest.json"), "w") as f:
            f.write("{}")
        for c in ("r01-a-c1", "r01-b-c1"):
            os.rename(self.run_dir(c), os.path.join(camp, "cells", c))
        os.symlink(os.path.join(camp, "cells", "r01-a-c1"), os.path.join(camp, "cells", "zlink"))
        rc, out, _ = self.main(camp)
        self.assertEqual(rc, 0)
        self.assertEqual(out.splitlines(), [f"recheck: {camp}/cells/r01-a-c1: ok",
                                            f"recheck: {camp}/cells/r01-b-c1: ok"])

    def test_bad_input(self):
        d = self.run_dir("bad")
        for body, want in (("[]", "not a run's meta.json"), ("{", "not readable JSON"),
                           ('{"points_planned": ["p1"], "state": "fine", "problems": []}',
                            "not a run's meta.json")):
            with self.subTest(body=body):
                with open(os.path.join(d, "meta.json"), "w") as f:
                    f.write(body)
                rc, out, err = self.main(d)
                self.assertEqual((rc, out), (2, ""))
                self.assertEqual(len(err.splitlines()), 1)
                self.assertIn(want, err)
        os.unlink(os.path.join(d, "meta.json"))
        os.symlink("/etc/hostname", os.path.join(d, "meta.json"))
        rc, _, err = self.main(d)
        self.assertEqual(rc, 2)
        self.assertIn("no meta.json (a regular file)", err)


if __name__ == "__main__":
    unittest.main()
