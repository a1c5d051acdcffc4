# SPDX-License-Identifier: GPL-2.0
"""./run.sh convert writes through no link and overwrites nothing unless
told (issue #43, hole 14), a command that only needs a tree leaves a
built kernel built and a campaign says when a kernel is being built
(hole 17): the real ./run.sh convert and scripts/build-kernel.sh
--tree-only on a tiny tree (tests/unit/fake_build.py: nothing compiles),
and the real ./run.sh campaign on a stand-in build.

Each refusal: exit 2, one line, nothing written; each planted link is
replaced, never followed; the victim's folder beside is left as it was."""

import os
import shutil
import signal
import subprocess
import tempfile
import unittest

from tests.unit import campaign_stand_ins as standin
from tests.unit import fake_build

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATCH = "0001-fs-demo-convert-demo_lock-to-a-spinlock.patch"
VARIANT = "spin-demo-lock.toml"
WORKLOAD = ["--workload", "read /proc/iomem", "--locks-per-op", "2"]
BOUND_S = 120


class Convert(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="convert-safe-")
        cls.env = fake_build.make(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def setUp(self):
        self.case = tempfile.mkdtemp(dir=self.tmp)
        self.out = os.path.join(self.case, "out")
        self.victim = os.path.join(self.case, "victim")
        os.makedirs(self.victim)
        self.secret = os.path.join(self.victim, "private")
        with open(self.secret, "w") as f:
            f.write("PRIVATE\n")

    def run_sh(self, *args):
        cp = subprocess.run(["./run.sh", *args], cwd=ROOT, env=self.env, capture_output=True,
                            text=True, timeout=BOUND_S)
        self.assertNotIn("Traceback", cp.stdout + cp.stderr)
        return cp.returncode, cp.stdout, cp.stderr

    def convert(self, *extra):
        return self.run_sh("convert", "--base", "tv", "--out", self.out, *extra,
                           "fs/demo.c", "demo_lock")

    def written(self):
        return {os.path.relpath(os.path.join(t, f), self.out): open(os.path.join(t, f)).read()
                for t, _d, fs in os.walk(self.out) for f in fs
                if not os.path.islink(os.path.join(t, f))}

    def test_an_existing_file_is_refused_without_force(self):
        rc, out, err = self.convert(*WORKLOAD)
        self.assertEqual(rc, 0, out + err)
        first = self.written()
        self.assertEqual(sorted(first), sorted([PATCH, VARIANT, "targets/demo_lock.toml",
                                                "campaigns/my-spin-demo-lock.toml"]))
        for name in first:
            with self.subTest(name):
                keep = {n: t for n, t in first.items() if n != name}
                for n in keep:  # only NAME is there: each is checked
                    os.unlink(os.path.join(self.out, n))
                with open(os.path.join(self.out, name), "w") as f:
                    f.write("the user's own file\n")
                rc, out, err = self.convert(*WORKLOAD)
                self.assertEqual((rc, len(err.splitlines())), (2, 1), out + err)
                self.assertIn(f"{name} exists: not overwritten (give --force", err)
                self.assertEqual(self.written(), {name: "the user's own file\n"},
                                 "something was written")
                for n, text in first.items():
                    with open(os.path.join(self.out, n), "w") as f:
                        f.write(text)
        rc, out, err = self.convert(*WORKLOAD, "--force")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.written(), first)

    def test_links_are_never_written_through(self):
        os.makedirs(os.path.join(self.out, "targets"))
        os.makedirs(os.path.join(self.out, "campaigns"))
        for name in (PATCH, VARIANT, "targets/demo_lock.toml", "campaigns/my-spin-demo-lock.toml",
                     "targets/demo_lock.toml.tmp", VARIANT + ".tmp", PATCH + ".tmp"):
            os.symlink(self.secret, os.path.join(self.out, name))
        before = standin.snapshot(self.victim)
        rc, out, err = self.convert(*WORKLOAD)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("exists: not overwritten", err)
        rc, out, err = self.convert(*WORKLOAD, "--force")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(standin.snapshot(self.victim), before)
        for name in (PATCH, VARIANT, "targets/demo_lock.toml", "campaigns/my-spin-demo-lock.toml"):
            self.assertFalse(os.path.islink(os.path.join(self.out, name)), name)

    def test_a_folder_that_is_a_link_is_refused(self):
        os.makedirs(self.out)
        os.symlink(self.victim, os.path.join(self.out, "targets"))
        before = standin.snapshot(self.victim)
        rc, out, err = self.convert(*WORKLOAD, "--force")
        self.assertEqual((rc, len(err.splitlines())), (2, 1), out + err)
        self.assertIn("targets: a symbolic link", err)
        self.assertEqual(standin.snapshot(self.victim), before)
        self.assertEqual(self.written(), {}, "something was written before the refusal")


class TreeOnly(unittest.TestCase):
    """Hole 17: convert's build-kernel.sh --tree-only BASE, where BASE is
    built from a series its variant file no longer names, re-applied the
    series and removed build-meta.json: the built kernel was gone for
    every campaign ("not built") until a full rebuild."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tree-only-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.env = fake_build.make(self.tmp)
        self.vdir = os.path.join(self.env["LOCKBENCH_BUILD"], "tv")

    def test_a_complete_build_keeps_its_build_meta(self):
        cp = subprocess.run(["scripts/build-kernel.sh", "--tree-only", "tv"], cwd=ROOT,
                            env=self.env, capture_output=True, text=True, timeout=BOUND_S)
        self.assertEqual(cp.returncode, 0, cp.stdout + cp.stderr)
        # Built (build-meta.json: complete), then its series changed.
        meta = os.path.join(self.vdir, "build-meta.json")
        with open(meta, "w") as f:
            f.write('{"variant": "tv"}\n')
        with open(os.path.join(self.vdir, "series.sha256"), "w") as f:
            f.write("an older series\n")
        cp = subprocess.run(["./run.sh", "convert", "--base", "tv", "--out",
                             os.path.join(self.tmp, "out"), "fs/demo.c", "demo_lock"], cwd=ROOT,
                            env=self.env, capture_output=True, text=True, timeout=BOUND_S)
        self.assertEqual((cp.returncode, len(cp.stderr.splitlines())), (2, 1),
                         cp.stdout + cp.stderr)
        self.assertIn("./run.sh build tv", cp.stderr)
        with open(meta) as f:
            self.assertEqual(f.read(), '{"variant": "tv"}\n')
        with open(os.path.join(self.vdir, "series.sha256")) as f:
            self.assertEqual(f.read(), "an older series\n")


class BeingBuilt(unittest.TestCase):
    """Hole 17: a campaign that finds a kernel being built (its build's
    lock held, no build-meta.json yet) says so, not "not built: run
    ./run.sh build"."""

    def test_campaign_says_being_built(self):
        tmp = tempfile.mkdtemp(prefix="being-built-")
        self.addCleanup(shutil.rmtree, tmp)
        build = standin.build_tree(tmp, ("before", "after"))
        os.unlink(os.path.join(build, "after", "build-meta.json"))
        toml = os.path.join(tmp, "c.toml")
        with open(toml, "w") as f:
            f.write('name = "c"\nvariants = ["before", "after"]\ncpus = [1]\nrepetitions = 2\n'
                    '[[points]]\nid = "p"\nread_pct = 50\nmailboxes = 16\n')
        env = dict(os.environ, LOCKBENCH_BUILD=build)
        lock = os.path.join(build, "after", ".build.lock")
        with open(lock, "w"):
            pass
        flocker = subprocess.Popen(["flock", lock, "sleep", "120"], start_new_session=True)
        try:
            for _ in range(100):
                if subprocess.run(["flock", "-n", lock, "true"]).returncode:
                    break
                subprocess.run(["sleep", "0.05"])
            cp = subprocess.run(["./run.sh", "campaign", toml, "--dry-run"], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=BOUND_S)
        finally:
            os.killpg(flocker.pid, signal.SIGKILL)
            flocker.wait()
        self.assertEqual((cp.returncode, len(cp.stderr.splitlines())), (3, 1),
                         cp.stdout + cp.stderr)
        self.assertIn("'after' is being built now", cp.stderr)
        cp = subprocess.run(["./run.sh", "campaign", toml, "--dry-run"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=BOUND_S)
        self.assertEqual(cp.returncode, 3, cp.stdout + cp.stderr)
        self.assertIn("'after' is not built", cp.stderr)


if __name__ == "__main__":
    unittest.main()
