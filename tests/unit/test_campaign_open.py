# SPDX-License-Identifier: GPL-2.0
"""Boots where the answer is still open: after a look the later boots run
only the points whose primary cells are undecided (scripts/campaign/run.py
narrow), each such boot with a job of those points alone; the analysis
reads a boot that ran some points without counting the others missing,
and the answer says at which look a boot was decided."""

import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

import pandas as pd

from analysis import analyze, looks
from analysis.parse.common import ParseError
from analysis.render import answer, summary
from guest import job as jobmod
from lockbench.cli import require
from scripts.campaign import boot as campaign_boot, run
from tests.unit import synth

POINTS = [{"id": p} for p in ("read95", "read50", "read95-long", "read95-paced")]


def man_of(reps=12, cpus=(1, 2)):
    boots = [{"id": f"r{r:02d}-{v}-c{c}", "variant": v, "cpus": c, "rep": r,
              "state": "done" if r <= 4 else "planned"}
             for r in range(1, reps + 1) for c in cpus for v in ("before", "after")]

    class Man:
        data = {"campaign": {"points": POINTS, "looks": [4, 8, 12]}, "cells": boots}
        saved = 0

        def save(self):
            self.saved += 1
    return Man()


class Narrow(unittest.TestCase):
    def test_open_points_only(self):
        man = man_of()
        run.narrow(man, 4, [(2, "read50"), (2, "read95-paced")])
        by = {c["id"]: c for c in man.data["cells"]}
        self.assertEqual(by["r03-after-c2"]["state"], "done")
        self.assertNotIn("points", by["r03-after-c2"])
        self.assertEqual(by["r05-before-c1"]["state"], "unneeded")
        self.assertEqual(by["r05-before-c2"]["points"], ["read50", "read95-paced"])
        # the campaign's order, not the order the look named them in
        run.narrow(man, 8, [(2, "read95-paced"), (2, "read50"), (1, "read95")])
        self.assertEqual(by["r09-after-c2"]["points"], ["read50", "read95-paced"])
        # a boot's points only shrink; a vCPU count closed stays closed
        self.assertEqual(by["r09-after-c1"]["state"], "unneeded")
        run.narrow(man, 8, [(2, "read50")])
        self.assertEqual(by["r09-after-c2"]["points"], ["read50"])
        # every variant at a vCPU count runs the same points: balanced
        later = [c for c in man.data["cells"] if c["rep"] > 8 and c["cpus"] == 2]
        self.assertEqual({tuple(c["points"]) for c in later}, {("read50",)})

    def test_take_look_records_and_narrows(self):
        man = man_of()
        res = (8, ["2 vCPUs read50 after/before: x"], [[2, "read50"]])
        with mock.patch.object(looks, "look", lambda d: res), \
                mock.patch("builtins.print"):
            self.assertFalse(run.take_look("d", man, 4, run.Progress(1)))
        look = man.data["sequential"]["looks"][0]
        self.assertEqual(look["open"], [[2, "read50"]])
        self.assertEqual({c["state"] for c in man.data["cells"] if c["cpus"] == 1
                          and c["rep"] > 4}, {"unneeded"})


class LookFails(unittest.TestCase):
    """A look whose analysis fails (a package missing, bad input, a bug)
    says so in one line, records no verdict and narrows nothing, and the
    campaign runs its next repetitions; Ctrl-C still stops it."""

    def said(self, fail):
        man, out, err = man_of(), io.StringIO(), io.StringIO()
        with mock.patch.object(looks, "look", side_effect=fail), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            self.assertFalse(run.take_look("d", man, 4, run.Progress(1)))
        self.assertEqual(err.getvalue(), "")
        self.assertEqual(man.data["sequential"]["looks"],
                         [{"reps": 4, "primary": 0, "undecided": ["the analysis failed"]}])
        self.assertNotIn("unneeded", {c["state"] for c in man.data["cells"]})
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 2, lines)  # the failure, then the look
        self.assertEqual(lines[1], "campaign: look at 4 repetitions: 1 of 0 primary cells "
                         "undecided: the analysis failed")
        return lines[0]

    def test_one_line_each(self):
        def missing(_d):
            require("analyze", "pandas", "no_such_package_of_lockbench")
        self.assertEqual(self.said(missing), "campaign: look at 4 repetitions: the analysis "
                         "failed (analyze: missing python3-no_such_package_of_lockbench: "
                         "run ./run.sh setup); going on")
        self.assertIn("the analysis failed (d: not a run directory); going on",
                      self.said(ParseError("d", None, "not a run directory")))
        self.assertIn("the analysis failed (internal error: KeyError: 'verdict'); going on",
                      self.said(KeyError("verdict")))
        self.assertIn("(internal error: ValueError: two); going on",
                      self.said(ValueError("two\nlines")))

    def test_the_campaign_goes_on(self):
        man, batches = man_of(), []

        def batch(_d, _m, _jobs, reps, _prog, _tried):
            batches.append(reps)
            return []
        with mock.patch.object(run, "run_batch", batch), \
                mock.patch.object(looks, "look", side_effect=RuntimeError("boom")), \
                mock.patch("builtins.print"):
            self.assertEqual(run.run_boots("d", man, 1), [])
        self.assertEqual(batches, [4, 8, 12])
        self.assertEqual([x["reps"] for x in man.data["sequential"]["looks"]], [4, 8])

    def test_ctrl_c_goes_through(self):
        with mock.patch.object(looks, "look", side_effect=KeyboardInterrupt), \
                mock.patch("builtins.print"), self.assertRaises(KeyboardInterrupt):
            run.take_look("d", man_of(), 4, run.Progress(1))


class JobOfSomePoints(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_job_file(self):
        c = {"points": [{"id": "read95", "read_pct": 95, "mailboxes": 16, "duration_ms": 1000},
                        {"id": "read50", "read_pct": 50, "mailboxes": 16, "duration_ms": 1000}],
             "perf": {"stat": True, "lock": False}}
        path = campaign_boot.job_file(self.tmp, c, ["read50"])
        self.assertEqual(os.path.basename(path), campaign_boot.job_name({"points": ["read50"]}))
        self.assertEqual(campaign_boot.job_name({}), "job.conf")
        with open(path) as f:
            points, _opts = jobmod.parse(f.read(), path)
        self.assertEqual([p for p, _ in points], ["read50"])
        before = os.stat(path).st_mtime_ns
        self.assertEqual(campaign_boot.job_file(self.tmp, c, ["read50"]), path)
        self.assertEqual(os.stat(path).st_mtime_ns, before)


class AnalysisOfSomePoints(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.man = synth.make_run(self.tmp, reps=8)
        # repetitions 5..8 ran p2 alone
        for c in self.man["cells"]:
            if c["rep"] > 4:
                c["points"] = ["p2"]
                shutil.rmtree(os.path.join(self.tmp, "cells", c["id"], "points", "p1"))
        self.man["campaign"]["looks"] = [4, 8]
        self.man["sequential"] = {"looks": [{"reps": 4, "primary": 2, "undecided": ["x"],
                                             "open": [[2, "p2"]]}], "stopped_at": None}
        with open(os.path.join(self.tmp, "manifest.json"), "w") as f:
            json.dump(self.man, f)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_no_missing_points(self):
        _rd, t, _m, c = analyze.analyze(self.tmp)
        out = pd.DataFrame(t.tables["outcomes"])
        self.assertEqual(set(out["outcome"]), {"ok"})
        self.assertEqual(len(out[out["point"] == "p1"]), 8)  # 4 reps x 2 variants
        self.assertEqual(len(out[out["point"] == "p2"]), 16)
        prim = c.comps[c.comps["role"] == "primary"]
        n = dict(zip(prim["point"], prim["n_var"]))
        self.assertEqual(n, {"p1": 4, "p2": 8})
        f = {"look_open": summary.look_open(self.man["sequential"]), "looks": [4, 8],
             "stopped_at": None}
        said = {r["point"]: answer.decided_s(r, f) for _, r in prim.iterrows()}
        self.assertEqual(said, {"p1": "; decided at the look at 4 repetitions", "p2": ""})

    def test_a_boot_that_names_an_unknown_point(self):
        self.man["cells"][-1]["points"] = ["p9"]
        with open(os.path.join(self.tmp, "manifest.json"), "w") as f:
            json.dump(self.man, f)
        with self.assertRaises(Exception) as e:
            analyze.analyze(self.tmp)
        self.assertIn("points is not a list of the campaign's point ids", str(e.exception))


if __name__ == "__main__":
    unittest.main()


class Reuse(unittest.TestCase):
    def test_a_narrowed_boot_is_not_taken(self):
        from scripts.campaign import reuse
        boot = {"id": "r09-before-c1", "state": "done", "tries": [{"state": "ok"}]}
        self.assertIsNotNone(reuse.checked_boot(boot))
        self.assertIsNone(reuse.checked_boot(dict(boot, points=["read50"])))
