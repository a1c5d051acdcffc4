# SPDX-License-Identifier: GPL-2.0
"""A lockdep report in any boot of a variant makes every comparison it
takes part in `unsafe`, in the tables, the answer and the looks, with the
splat in summary.md before any number (analysis/verdict/safety.py).  The console
is a real guest's (tests/t-fault-lockdep.sh's inject lockdep); the
campaign around it is synthetic (tests/unit/synth.py)."""

import json
import os
import shutil
import tempfile
import unittest

import pandas as pd

from analysis import analyze, looks, report
from analysis.parse import lockdep, rundir
from tests.unit import synth
from tests.unit.helpers import read_csv, run_main

HERE = os.path.dirname(os.path.abspath(__file__))
CONSOLE = os.path.join(HERE, "fixtures", "lockdep-console.log")
LINE = "WARNING: possible circular locking dependency detected"


def lockdep_boot(path, cid, variant, console_text):
    """A boot that ended with a lockdep report: kept aside, as the
    campaign runner keeps a boot that is not ok."""
    kept = f"{cid}.partial-1"
    d = os.path.join(path, "cells", kept)
    os.makedirs(d)
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write(console_text)
    return {"id": cid, "variant": variant, "cpus": 2, "rep": 7,
            "state": "lockdep", "oversubscribed": False, "kept": kept,
            "problems": [f"lockdep: {LINE}"]}


class Unsafe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="safety-")
        cls.dir = os.path.join(cls.tmp, "unsafe")
        with open(CONSOLE) as f:
            text = f.read()
        # "after" is 10% faster at p1: a number that would say "better"
        synth.make_run(cls.dir, effects={"p1": 1.10, "p2": 1.00},
                       extra_boots=[lockdep_boot(cls.tmp + "/unsafe", "r07-after-c2",
                                                 "after", text)])
        cls.a = run_main(analyze.main, [cls.dir])
        cls.r = run_main(report.main, [cls.dir])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_every_row_of_the_variant_is_unsafe(self):
        self.assertEqual(self.a[0], 0, self.a[2])
        self.assertEqual(self.r[0], 0, self.r[2])
        rows = read_csv(os.path.join(self.dir, "tidy", "comparisons.csv"))
        self.assertTrue(rows)
        self.assertEqual({r["verdict"] for r in rows}, {"unsafe"})

    def test_the_answer_says_unsafe_before_any_number(self):
        with open(os.path.join(self.dir, "answer.txt")) as f:
            answer = f.read()
        self.assertTrue(answer.startswith("Answer for after against before: unsafe. "
                                          "after had a lockdep report"), answer)
        self.assertIn(LINE, answer)
        self.assertIn("r07-after-c2", answer)
        with open(os.path.join(self.dir, "summary.md")) as f:
            md = f.read()
        splat = md.index("*** DEADLOCK ***")
        self.assertLess(md.index("unsafe"), splat)
        self.assertLess(splat, md.index("QEMU TCG"))
        self.assertIn("-> #1 (bench_inject_b)", md)
        with open(os.path.join(self.dir, "commit-msg.txt")) as f:
            self.assertIn("unsafe", f.read())

    def test_a_look_counts_unsafe_as_decided(self):
        comps = pd.read_csv(os.path.join(self.dir, "tidy", "comparisons.csv"))
        n, todo, _open = looks.undecided(comps)
        self.assertGreater(n, 0)
        self.assertEqual(todo, [])


class NoSamples(unittest.TestCase):
    """A kernel that deadlocked in every boot has no samples at all: the
    report still answers, unsafe, instead of "nothing to compare"."""

    def test_report_answers_unsafe(self):
        with open(CONSOLE) as f:
            text = f.read()
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "deadlocked")
            synth.make_run(d, reps=6)
            with open(os.path.join(d, "manifest.json")) as f:
                man = json.load(f)
            hung = []
            for c in man["cells"]:
                if c["variant"] == "after":
                    shutil.rmtree(os.path.join(d, "cells", c["id"]))
                    x = lockdep_boot(d, c["id"], "after", text)
                    hung.append(dict(x, rep=c["rep"], state="hung",
                                     problems=x["problems"] + ["hung: no output for 60 s"]))
            man["cells"] = [c for c in man["cells"] if c["variant"] != "after"] + hung
            with open(os.path.join(d, "manifest.json"), "w") as f:
                json.dump(man, f)
            self.assertEqual(run_main(analyze.main, [d])[0], 0)
            status, _out, err = run_main(report.main, [d])
            self.assertEqual(status, 0, err)
            with open(os.path.join(d, "answer.txt")) as f:
                answer = f.read()
            self.assertTrue(answer.startswith(
                "Answer for after against before: unsafe. after had a lockdep "
                "report"), answer)
            self.assertIn("in 6 boots", answer)
            with open(os.path.join(d, "summary.md")) as f:
                self.assertIn("*** DEADLOCK ***", f.read())


class Safe(unittest.TestCase):
    def test_no_report_no_unsafe(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "safe")
            synth.make_run(d, effects={"p1": 1.10}, reps=6)
            self.assertEqual(lockdep.lockdep_reports(rundir.load(d)), {})
            self.assertEqual(run_main(analyze.main, [d])[0], 0)
            rows = read_csv(os.path.join(d, "tidy", "comparisons.csv"))
            self.assertNotIn("unsafe", {r["verdict"] for r in rows})

    def test_control_counts_for_the_baseline_and_splat_is_sanitized(self):
        """A report in the A/A control's boot (the baseline's image) makes
        the baseline unsafe; the guest's text cannot close the markdown
        fence or carry control characters."""
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "ctl")
            text = ("noise\n" + "=" * 20 + "\n" + LINE + "\n```\n\x1b[31mred\n"
                    + "x" * 500 + "\n")
            synth.make_run(d, reps=2, extra_boots=[
                lockdep_boot(d, "r03-before~aa-c2", "before~aa", text)])
            # as campaign_file records a control: its baseline's image
            with open(os.path.join(d, "manifest.json")) as f:
                man = json.load(f)
            man["campaign"]["controls"] = {"before~aa": "before"}
            with open(os.path.join(d, "manifest.json"), "w") as f:
                json.dump(man, f)
            got = lockdep.lockdep_reports(rundir.load(d))
            self.assertEqual(set(got), {"before"})
            splat = got["before"]["splat"]
            self.assertEqual(splat[:2], ["=" * 20, LINE])
            self.assertEqual(splat[2], "???")
            self.assertEqual(splat[3], "?[31mred")
            self.assertEqual(len(splat[4]), 200)

    def test_a_later_clean_try_does_not_erase_the_report(self):
        # --resume ran the boot again and it passed: its lockdep try stays
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "resumed")
            with open(CONSOLE) as f:
                boot = lockdep_boot(d, "r03-after-c2", "after", f.read())
            boot["tries"] = [{"state": "lockdep", "problems": boot["problems"],
                              "kept": boot["kept"]},
                             {"state": "done", "problems": []}]
            boot.update(state="done", problems=[])
            synth.make_run(d, reps=2, extra_boots=[boot])
            got = lockdep.lockdep_reports(rundir.load(d))
            self.assertEqual(set(got), {"after"})
            self.assertEqual(got["after"]["line"], LINE)
            self.assertTrue(got["after"]["splat"])

    def test_missing_console_keeps_the_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "gone")
            boot = lockdep_boot(d, "r03-after-c2", "after", "")
            synth.make_run(d, reps=2, extra_boots=[boot])
            shutil.rmtree(os.path.join(d, "cells", boot["kept"]))
            got = lockdep.lockdep_reports(rundir.load(d))
            self.assertEqual(got["after"]["splat"], [])
            self.assertEqual(got["after"]["line"], LINE)


if __name__ == "__main__":
    unittest.main()
