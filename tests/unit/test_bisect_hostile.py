# SPDX-License-Identifier: GPL-2.0
# Timed: bounds the wall time of runs (hang guards): tests/run-all.sh runs
# this module at the normal priority, not niced beside a kernel build.
"""./run.sh bisect against a hostile directory, tree or campaign (issue #43,
holes 1-3, 8, 9, 11-13), through its real command line and no build.

A throwaway git tree with a kernel's marks stands in for the user's, and a
bisection directory whose every step is judged already stands in for one
that a crash stopped at its end: --resume then walks to its result and
builds nothing.  Where a step would build, `./run.sh build` stops at its
first check (a stand-in dpkg-query that knows no package, first on PATH:
exit 3), so that no kernel is ever built here.  Each run ends within
BOUND_S, under a 2 GiB address-space cap, and a snapshot of the victim's
folder beside the bisection shows that nothing there changed."""

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tests.unit import campaign_stand_ins as standin  # noqa: E402
from tests.unit.test_bisect import CAMPAIGN  # noqa: E402
from tests.unit.test_kernel_tree import commit, git, makefile  # noqa: E402

BOUND_S = 60
MEMORY = 2 << 30


def capped():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_name(pos, kind, cid):
    return f"steps/{pos:02d}-{kind}-{cid[:12]}"


class Hostile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="bisect-hostile-")
        t = cls.tree = os.path.join(cls.tmp, "linux")
        os.makedirs(t)
        git(t, "init", "-q", "-b", "main")
        cls.good = commit(t, {"Makefile": makefile(), "kernel/locking/lockdep.c": "x\n"}, "base")
        git(t, "tag", "good")
        cls.ids = [commit(t, {f"f{i}.c": f"{i}\n"}, f"c{i}") for i in range(3)]
        # ./run.sh build stops at its package check: nothing is built.
        cls.bin = os.path.join(cls.tmp, "bin")
        os.makedirs(cls.bin)
        with open(os.path.join(cls.bin, "dpkg-query"), "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        os.chmod(os.path.join(cls.bin, "dpkg-query"), 0o755)
        cls.env = dict(os.environ, PATH=cls.bin + os.pathsep + os.environ.get("PATH", ""),
                       LOCKBENCH_BUILD=os.path.join(cls.tmp, "build"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def setUp(self):
        self.case = tempfile.mkdtemp(dir=self.tmp)
        self.d = os.path.join(self.case, "bisect")
        self.victim = os.path.join(self.case, "victim")
        os.makedirs(self.victim)
        self.secret = os.path.join(self.victim, "private")
        with open(self.secret, "w") as f:
            f.write("PRIVATE-LINE\n")
        self.victim_toml = os.path.join(self.victim, "victim.toml")
        with open(self.victim_toml, "w") as f:
            f.write('secret = "PRIVATE-TOML"\n')
        self.state = self.finished()

    def finished(self):
        """A bisection of c0..c2 whose every step is judged (c1 is the
        first bad commit, confirmed): --resume ends it, building nothing."""
        os.makedirs(os.path.join(self.d, "steps"))
        os.makedirs(os.path.join(self.d, "variants"))
        with open(os.path.join(self.d, "campaign.toml"), "w") as f:
            f.write(CAMPAIGN)
        ids = self.ids
        steps = []
        for kind, i, cls in (("bad-check", 2, "bad"), ("step", 0, "good"), ("step", 1, "bad"),
                             ("confirm", 1, "bad")):
            steps.append({"kind": kind, "index": i, "base": i - 1 if kind == "confirm" else -1,
                          "run": run_name(len(steps) + 1, kind, ids[i]), "class": cls,
                          "why": "table", "cells": []})
        state = {"tree": self.tree, "like": "before", "campaign": "campaign.toml",
                 "good": {"id": self.good, "subject": "base"}, "bad_ref": "HEAD",
                 "good_ref": "good",
                 "commits": [{"id": c, "subject": f"c{i}"} for i, c in enumerate(ids)],
                 "steps": steps}
        self.write_state(state)
        return state

    @staticmethod
    def write(path, text):
        with open(path, "w") as f:
            f.write(text)

    def write_state(self, state):
        with open(os.path.join(self.d, "bisect.json"), "w") as f:
            json.dump(state, f)

    def bisect(self, *args, bound=BOUND_S):
        t0 = time.monotonic()
        try:
            cp = subprocess.run(["./run.sh", "bisect", *args], cwd=ROOT, env=self.env,
                                capture_output=True, text=True, timeout=bound,
                                preexec_fn=capped)
        except subprocess.TimeoutExpired:
            self.fail(f"bisect {args}: still running after {bound} s")
        self.took = time.monotonic() - t0
        return cp.returncode, cp.stdout, cp.stderr

    def refused(self, want, *args):
        """exit 2, one line on stderr naming WANT, no traceback."""
        rc, out, err = self.bisect(*args)
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn(want, err)
        self.assertNotIn("Traceback", out + err)
        return out, err

    def untouched(self, before):
        self.assertEqual(standin.snapshot(self.victim), before, "the victim's folder changed")
        for top, _dirs, files in os.walk(self.d):
            for f in files:
                p = os.path.join(top, f)
                if os.path.isfile(p) and not os.path.islink(p):
                    with open(p, errors="replace") as fh:
                        text = fh.read()
                    self.assertNotIn("PRIVATE", text, f"{p} holds the victim's text")

    # --- hole 1: --resume writes through links planted in its directory ---

    def test_tmp_link_replaced_not_written_through(self):
        os.symlink(self.secret, os.path.join(self.d, "bisect.json.tmp"))
        before = standin.snapshot(self.victim)
        rc, out, err = self.bisect("--resume", self.d)
        self.assertEqual(rc, 0, out + err)
        self.assertIn(f"first bad commit: {self.ids[1][:12]}", out)
        self.untouched(before)
        self.assertTrue(stat.S_ISREG(os.lstat(os.path.join(self.d, "bisect.json")).st_mode))
        self.assertFalse(os.path.lexists(os.path.join(self.d, "bisect.json.tmp")))

    def test_log_link_refused(self):
        os.symlink(self.secret, os.path.join(self.d, "log.txt"))
        before = standin.snapshot(self.victim)
        self.refused("log.txt: a symbolic link, not a regular file", "--resume", self.d)
        self.untouched(before)

    # --- hole 2: bisect.json's paths are not trusted ---

    def test_absolute_step_folder_refused(self):
        # The last step not judged yet, its variants "built": the old
        # code ran its campaign with its files at the path the state gave.
        st = self.state
        st["steps"][-1].pop("class")
        st["steps"][-1]["run"] = os.path.join(self.victim, "x")
        st["built"] = [f"linux-{c[:12]}" for c in (self.good, self.ids[1], self.ids[0])]
        self.write_state(st)
        before = standin.snapshot(self.victim)
        self.refused("step 4's folder is not 'steps/04-confirm-", "--resume", self.d)
        self.untouched(before)

    def test_campaign_elsewhere_refused(self):
        st = self.state
        st["steps"][-1].pop("class")
        st["campaign"] = self.victim_toml
        st["built"] = [f"linux-{c[:12]}" for c in (self.good, self.ids[1], self.ids[0])]
        self.write_state(st)
        before = standin.snapshot(self.victim)
        self.refused("campaign is not 'campaign.toml'", "--resume", self.d)
        self.untouched(before)

    def test_commits_not_the_trees_refused(self):
        st = self.state
        st["commits"][1]["id"] = "0" * 40  # and each step's folder made anew
        for pos, x in enumerate(st["steps"], 1):
            x["run"] = run_name(pos, x["kind"], st["commits"][x["index"]]["id"])
        self.write_state(st)
        self.refused("are not the first parents from GOOD to BAD", "--resume", self.d)

    # --- hole 3: a bisection's variant files and their temporaries ---

    def test_variant_temporaries_not_written_through(self):
        st = self.state
        st["steps"][-1].pop("class")
        st["built"] = [f"linux-{c[:12]}" for c in (self.good, self.ids[1], self.ids[0])]
        self.write_state(st)
        vdir = os.path.join(self.d, "variants")
        for c in (self.good, self.ids[0], self.ids[1], self.ids[2]):
            name = f"linux-{c[:12]}"
            for planted in (f".{name}.toml.tmp", f"{name}.toml.tmp", f"{name}.toml"):
                os.symlink(self.secret, os.path.join(vdir, planted))
        before = standin.snapshot(self.victim)
        rc, out, err = self.bisect("--resume", self.d)
        self.assertNotIn("Traceback", out + err)
        self.untouched(before)
        for name in os.listdir(vdir):
            self.assertFalse(os.path.islink(os.path.join(vdir, name)) and
                             name.endswith(".toml") and not name.startswith("."), name)

    # --- hole 12: bisect.json read capped ---

    def test_state_that_is_no_file(self):
        path = os.path.join(self.d, "bisect.json")
        for what, make, want in (
                ("fifo", os.mkfifo, "a FIFO, not a regular file"),
                ("zero", lambda p: os.symlink("/dev/zero", p), "a symbolic link"),
                ("deep", lambda p: self.write(p, "[" * 100000 + "]" * 100000),
                 "nested deeper than")):
            with self.subTest(what):
                os.unlink(path)
                make(path)
                self.refused(want, "--resume", self.d)
                self.assertLess(self.took, BOUND_S)

    def test_state_edited(self):
        for what, edit, want in (
                ("not an object", lambda s: [], "not a JSON object"),
                ("unknown key", lambda s: dict(s, evil=1), "its keys are not a bisection's"),
                ("index", lambda s: s["steps"][0].update(index=99) or s,
                 "step 1 has no kind and commit"),
                ("built", lambda s: dict(s, built=["before"]), "built names a variant"),
                ("tree", lambda s: dict(s, tree="relative"), "tree is not an absolute path"),
                ("wall_s", lambda s: s["steps"][0].update(cells=[["1"] * 5]) or s,
                 "step 1's cells")):
            with self.subTest(what):
                self.write_state(edit(json.loads(json.dumps(self.state))))
                self.refused(want, "--resume", self.d)

    # --- hole 13: one bisection at a time in a directory ---

    def test_second_bisection_refused(self):
        holder = standin.hold(self.d, 120)
        try:
            self.refused("another bisection is running in it", "--resume", self.d)
        finally:
            standin.release(holder)
        rc, out, err = self.bisect("--resume", self.d)
        self.assertEqual(rc, 0, out + err)

    def test_writable_by_others_refused(self):
        os.chmod(os.path.join(self.d, "steps"), 0o777)
        self.refused("is writable by others", "--resume", self.d)

    # --- hole 11: --campaign checked by the campaign loader at the start ---

    def start(self, campaign_text=None, path=None, **kw):
        path = path or os.path.join(self.case, "c.toml")
        if campaign_text is not None:
            with open(path, "w") as f:
                f.write(campaign_text)
        out = os.path.join(self.case, "new")
        return out, self.bisect("--tree", self.tree, "good", "HEAD", "--campaign", path,
                                "--out", out, **kw)

    def test_campaign_fifo(self):
        fifo = os.path.join(self.case, "fifo.toml")
        os.mkfifo(fifo)
        out, (rc, o, err) = self.start(path=fifo)
        self.assertEqual((rc, len(err.splitlines())), (2, 1), o + err)
        self.assertIn("a FIFO, not a regular file", err)

    def test_campaign_refused_before_any_build(self):
        for what, text, want in (
                ("unknown key", CAMPAIGN.replace('cpus = [1]', 'cpus = [1]\nevil = 1'),
                 "unknown key 'evil'"),
                ("repetitions", CAMPAIGN.replace("repetitions = 2", "repetitions = 0"),
                 "repetitions"),
                ("deep", "x = " + "[" * 100000 + "]" * 100000 + "\n", "nested")):
            with self.subTest(what):
                shutil.rmtree(os.path.join(self.case, "new"), ignore_errors=True)
                out, (rc, o, err) = self.start(text)
                self.assertEqual((rc, len(err.splitlines())), (2, 1), o + err)
                self.assertIn(want, err)
                self.assertNotIn("Traceback", err)
                logs = [f for _t, _d, fs in os.walk(out) for f in fs if ".build-" in f]
                self.assertEqual(logs, [], "a build was started")


if __name__ == "__main__":
    unittest.main()
