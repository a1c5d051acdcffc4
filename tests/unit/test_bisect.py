# SPDX-License-Identifier: GPL-2.0
"""./run.sh bisect's walk (scripts/tree/bisect.py) with known answers: a step
judged by a table instead of a build and a campaign.  Over 8 commits
every planted position is found in at most 4 steps and a confirmation; a
commit that cannot be judged is skipped and said so; a skipped commit
next to the first bad one leaves both named; a BAD that is not bad and a
confirmation that disagrees end with exit 1; a resumed bisection does not
judge a commit twice; the verdicts map to good, bad and skip; a step's
campaign is the user's with its variants replaced.  t-bisect.sh runs it
on real kernels."""

import argparse
import os
import sys
import tempfile
import tomllib
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from scripts.campaign import file as campaign_file  # noqa: E402
from scripts.tree import bisect  # noqa: E402
from tests.unit.test_kernel_tree import commit, git, makefile  # noqa: E402


def kernel_repo(test):
    """A throwaway git tree with a kernel's marks, one commit "base":
    (its TemporaryDirectory, the tree, the commit id)."""
    tmp = tempfile.TemporaryDirectory()
    test.addCleanup(tmp.cleanup)
    t = os.path.join(tmp.name, "linux")
    os.makedirs(t)
    git(t, "init", "-q", "-b", "main")
    base = commit(t, {"Makefile": makefile(), "kernel/locking/lockdep.c": "x\n"}, "base")
    return tmp, t, base


# A campaign the campaign loader takes (its variants are replaced by each
# step's).
CAMPAIGN = """name = "x"
description = "a bisection's campaign"
variants = ["before", "after"]
cpus = [1]
repetitions = 2
[[points]]
id = "p"
read_pct = 50
mailboxes = 16
"""


def shut(log):
    """A stand-in call's log: a file object to close (a path before
    issue #43)."""
    getattr(log, "close", lambda: None)()


def state(n):
    return {"tree": "/t", "like": "before", "campaign": "campaign.toml",
            "good": {"id": "f" * 40, "subject": "good"},
            "bad_ref": "HEAD", "good_ref": "good",
            "commits": [{"id": f"{i:040d}", "subject": f"c{i}"} for i in range(n)],
            "steps": []}


class Walk(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_walk(self, n, first_bad, skip=(), confirm=bisect.BAD, st=None, stop_after=None):
        calls = []

        def judge(step):
            calls.append((step["kind"], step["index"]))
            if stop_after is not None and len(calls) > stop_after:
                raise bisect.Interrupted()
            i = step["index"]
            if step["kind"] == "confirm":
                return confirm, "table", []
            if i in skip:
                return bisect.SKIP, "does not build", []
            return (bisect.BAD if i >= first_bad else bisect.GOOD), "table", []
        b = bisect.Bisect(self.tmp.name, st or state(n), judge)
        b.log = lambda line: None
        try:
            rc = b.walk()
        except bisect.Interrupted:
            rc = 130
        return rc, calls, b

    def test_every_position_in_four_steps_and_a_confirmation(self):
        for planted in range(8):
            with self.subTest(planted=planted):
                rc, calls, b = self.run_walk(8, planted)
                self.assertEqual(rc, 0)
                self.assertEqual(b.s["result"]["first_bad"], f"{planted:040d}")
                self.assertLessEqual(sum(k != "confirm" for k, _ in calls), 4)
                self.assertEqual(calls[0], ("bad-check", 7))
                self.assertEqual(calls[-1], ("confirm", planted))
                self.assertEqual(len(calls), len(set(calls)))

    def test_a_broken_commit_is_skipped_and_said(self):
        rc, calls, b = self.run_walk(8, 5, skip={3})
        self.assertEqual(rc, 0)
        self.assertEqual(b.s["result"]["first_bad"], f"{5:040d}")
        self.assertIn(("step", 3), calls)
        st = next(s for s in b.s["steps"] if s["index"] == 3)
        self.assertEqual((st["class"], st["why"]), (bisect.SKIP, "does not build"))

    def test_a_skip_beside_the_first_bad_names_both(self):
        rc, _calls, b = self.run_walk(8, 4, skip={3})
        self.assertEqual(rc, 1)
        self.assertIsNone(b.s["result"]["first_bad"])
        text = b.s["result"]["text"]
        self.assertIn(f"{3:040d}"[:12], text)
        self.assertIn(f"{4:040d}"[:12], text)

    def test_bad_not_bad(self):
        rc, calls, b = self.run_walk(8, 99)
        self.assertEqual((rc, calls), (1, [("bad-check", 7)]))
        self.assertIn("nothing to bisect", b.s["result"]["text"])

    def test_confirmation_disagrees(self):
        rc, _calls, b = self.run_walk(8, 2, confirm=bisect.GOOD)
        self.assertEqual(rc, 1)
        self.assertIn("NOT CONFIRMED", b.s["result"]["text"])

    def test_resume_judges_no_commit_twice(self):
        rc, first, b = self.run_walk(8, 6, stop_after=2)
        self.assertEqual(rc, 130)
        st = bisect.load(self.tmp.name).s
        rc, second, b = self.run_walk(8, 6, st=st)
        self.assertEqual(rc, 0)
        self.assertEqual(b.s["result"]["first_bad"], f"{6:040d}")
        done = first[:2]
        # The interrupted step runs again; no finished one does.
        self.assertFalse(set(done) & set(second), (first, second))

    def test_classify(self):
        c = bisect.classify
        self.assertEqual(c(["harm (failures)", "no harm"])[0], bisect.BAD)
        self.assertEqual(c(["worse", "better"])[0], bisect.BAD)
        self.assertEqual(c(["unsafe (lockdep)"])[0], bisect.BAD)
        self.assertEqual(c(["no harm", "better"])[0], bisect.GOOD)
        self.assertEqual(c(["no harm", "inconclusive (n≈40)"])[0], bisect.SKIP)
        self.assertEqual(c(["withheld (steal)"])[0], bisect.SKIP)
        self.assertEqual(c([])[0], bisect.SKIP)

    def test_step_campaign_round_trip(self):
        with open(os.path.join(ROOT, "campaigns", "default.toml"), "rb") as f:
            base = tomllib.load(f)
        c = bisect.step_campaign(base, "bisect-01", "g", "x")
        back = tomllib.loads(bisect.dump_toml(c))
        self.assertEqual(back, c)
        self.assertEqual((back["variants"], back["baseline"], back["control"]),
                         (["g", "x"], "g", True))
        self.assertEqual(back["points"], base["points"])


class Step(unittest.TestCase):
    """A commit that does not build (build-kernel.sh exit 4, 5, 6) is
    skipped with its log named; any other build failure stops."""

    def test_build_failure_is_a_skip(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        os.mkdir(os.path.join(tmp.name, "steps"))
        st = state(3)
        b = bisect.Bisect(tmp.name, st)
        b.variant = lambda i: f"v{i}"
        calls = []
        saved = bisect.call
        self.addCleanup(setattr, bisect, "call", saved)
        for rc in (4, 5, 6):
            bisect.call = lambda cmd, log, rc=rc: shut(log) or calls.append(cmd) or (
                0 if cmd[-1] == "v-1" else rc)
            cls, why, cells = b.campaign_step({"index": 1, "base": -1, "run": "steps/01"})
            self.assertEqual((cls, cells), (bisect.SKIP, []))
            self.assertIn(f"v1 does not build (exit {rc}", why)
        self.assertEqual(st["built"], ["v-1"])  # GOOD built once, then not again
        self.assertEqual(sum(c[-1] == "v-1" for c in calls), 1)
        bisect.call = lambda cmd, log: shut(log) or 3
        with self.assertRaises(bisect.BisectError):
            b.campaign_step({"index": 2, "base": -1, "run": "steps/02"})

    def test_step_campaign_outside_the_bmp(self):
        """Issue #43, hole 10: a description with a character outside the
        BMP is written as itself, not as the surrogate pair json.dumps
        makes and TOML refuses: the step campaign loads with the campaign
        loader, the description whole."""
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        os.mkdir(os.path.join(tmp.name, "steps"))
        desc = "the \U0001d11e clef, \u2603 and a \\ \" quote"
        with open(os.path.join(tmp.name, "campaign.toml"), "w", encoding="utf-8") as f:
            f.write(CAMPAIGN.replace("a bisection's campaign", desc.replace("\\", "\\\\")
                                     .replace('"', '\\"')))
        st = state(3)
        st["built"] = ["before", "after"]
        b = bisect.Bisect(tmp.name, st)
        b.variant = lambda i: "before" if i < 0 else "after"
        saved = bisect.call
        self.addCleanup(setattr, bisect, "call", saved)
        bisect.call = lambda cmd, log: shut(log) or 1
        cls, why, _cells = b.campaign_step({"index": 1, "base": -1, "run": "steps/01-step"})
        self.assertEqual(cls, bisect.SKIP)
        self.assertIn("its report failed", why)
        c = campaign_file.load(os.path.join(tmp.name, "steps", "01-step.toml"))
        self.assertEqual(c["description"], desc)
        self.assertEqual((c["variants"][:2], c["baseline"]), (["before", "after"], "before"))


class Start(unittest.TestCase):
    """The commit list comes from the user's tree, first parents only."""

    def test_first_parents_and_refusals(self):
        tmp, t, good = kernel_repo(self)
        git(t, "checkout", "-q", "-b", "side")
        commit(t, {"side.c": "1\n"}, "side")
        git(t, "checkout", "-q", "main")
        a = commit(t, {"a.c": "1\n"}, "a")
        git(t, "merge", "-q", "--no-ff", "-m", "merge side", "side")
        m = git(t, "rev-parse", "HEAD")
        camp = os.path.join(tmp.name, "c.toml")
        with open(camp, "w") as f:
            f.write(CAMPAIGN)
        args = argparse.Namespace(tree=t, good=good, bad="HEAD", campaign=camp, like="before",
                                  out=os.path.join(tmp.name, "out"))
        b = bisect.start(args)
        self.assertEqual([c["id"] for c in b.s["commits"]], [a, m])
        self.assertEqual([c["subject"] for c in b.s["commits"]], ["a", "merge side"])
        with self.assertRaises(bisect.BisectError):  # a bisection is there
            bisect.start(args)
        for g, bad, words in ((m, good, "not an ancestor"), (m, m, "no commit between")):
            args.good, args.bad, args.out = g, bad, os.path.join(tmp.name, g[:3] + bad[:3])
            with self.subTest(words), self.assertRaises(bisect.BisectError) as cm:
                bisect.start(args)
            self.assertIn(words, str(cm.exception))


# A stand-in for a step's build and campaign, for git bisect run: a commit
# whose subject says "slow" (or comes after one) is bad, "broken" skipped.
JUDGE = """
import os, sys
sys.path.insert(0, {root!r})
from scripts.tree import bisect, kernel_tree
def step(self, st):
    c = self.s["commits"][st["index"]]
    log = kernel_tree.git(self.s["tree"], "log", "--format=%s", "good.." + c["id"])
    with open({calls!r}, "a") as f:
        f.write(c["id"] + "\\n")
    if c["subject"] == "broken":
        return bisect.SKIP, "does not build", []
    return (bisect.BAD if "slow" in log else bisect.GOOD), "table", []
bisect.Bisect.campaign_step = step
sys.exit(bisect.main(sys.argv[1:]))
"""


class Judge(unittest.TestCase):
    """--judge is git bisect run's test: 0 good, 1 bad, 125 skip, 128 an
    error; git bisect itself, in a throwaway tree, finds the commit."""

    def test_git_bisect_run(self):
        tmp, t, _base = kernel_repo(self)
        git(t, "tag", "good")
        ids = [commit(t, {f"f{i}.c": f"{i}\n"}, {3: "broken", 5: "slow"}.get(i, f"c{i}"))
               for i in range(1, 9)]
        calls = os.path.join(tmp.name, "calls")
        script = os.path.join(tmp.name, "judge.py")
        with open(script, "w") as f:
            f.write(JUDGE.format(root=ROOT, calls=calls))
        camp = os.path.join(tmp.name, "c.toml")
        with open(camp, "w") as f:
            f.write(CAMPAIGN)
        out = os.path.join(tmp.name, "out")
        cmd = [sys.executable, script, "--judge", "--tree", t, "good", "--campaign", camp,
               "--out", out]
        git(t, "bisect", "start", ids[-1], "good")
        log = git(t, "bisect", "run", *cmd)
        self.assertIn(f"{ids[4]} is the first bad commit", log)
        def read_calls():
            with open(calls) as f:
                return f.read().split()
        judged = read_calls()
        self.assertEqual(len(judged), len(set(judged)))
        git(t, "bisect", "reset")
        # Once judged, a commit is not judged again; an error is 128.
        import subprocess
        one = cmd[:6] + [ids[4]] + cmd[6:]
        rc = subprocess.call(one, stdout=subprocess.DEVNULL)
        self.assertEqual(rc, 1)
        self.assertEqual(read_calls(), judged + ([] if ids[4] in judged else [ids[4]]))
        for bad_args in (["--judge", "--tree", t, "--campaign", camp],
                         ["--judge", "--tree", t, "nope", "--campaign", camp, "--out", out]):
            with self.subTest(bad_args):
                self.assertEqual(subprocess.call([sys.executable, script] + bad_args,
                                                 stderr=subprocess.DEVNULL), 128)


if __name__ == "__main__":
    unittest.main()
