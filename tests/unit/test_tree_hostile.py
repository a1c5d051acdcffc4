# SPDX-License-Identifier: GPL-2.0
"""The user's own git tree (./run.sh build --tree, ./run.sh bisect) against
a hostile tree or folder (issue #43, holes 3, 8 and 9), through the real
commands: python3 -m scripts.tree.kernel_tree variants (what ./run.sh
build --tree runs before it builds) and ./run.sh bisect (stopped at its
first build by a stand-in dpkg-query: nothing is built).

- hole 3: links planted at the variant files' names and their
  temporaries in the output folder are replaced, never written through;
- hole 8: a tree whose configuration names programs (core.fsmonitor, a
  clean filter, a textconv, gpg.program under log.showSignature) has
  none of them run;
- hole 9: a tree path ending in white space or holding a newline is
  refused in one line (git named another folder; the newline broke out
  of the variant file's comment into TOML)."""

import os
import shutil
import subprocess
import tempfile
import unittest

from tests.unit import campaign_stand_ins as standin
from tests.unit.test_bisect import CAMPAIGN
from tests.unit.test_kernel_tree import ENV, commit, git, makefile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
BOUND_S = 120

# Each program appends its name to MARKS/NAME when run, and does its job.
PROGRAMS = {
    "fsmonitor": "echo fsmonitor >>{marks}/fsmonitor\nexit 1\n",
    "clean": "echo clean >>{marks}/clean\ncat\n",
    "smudge": "echo smudge >>{marks}/smudge\ncat\n",
    "textconv": "echo textconv >>{marks}/textconv\ncat \"$1\"\n",
    # gpg: signs (for the test's own commit) without a mark; a --verify
    # (git log under log.showSignature) marks.
    "gpg": ("case \"$*\" in *--verify*) echo gpg >>{marks}/gpg; exit 0 ;; esac\n"
            "cat >/dev/null\nprintf '\\n[GNUPG:] SIG_CREATED D 1 8 00 0 X\\n' >&2\n"
            "printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nx\\n-----END PGP SIGNATURE-----\\n'\n"),
}


def kernel_tree(path):
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main")
    commit(path, {"Makefile": makefile(), "kernel/locking/lockdep.c": "x\n"}, "base")
    git(path, "tag", "good")
    return commit(path, {"f.c": "1\n"}, "one")


class TreeHostile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tree-hostile-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.victim = os.path.join(self.tmp, "victim")
        os.makedirs(self.victim)
        self.secret = os.path.join(self.victim, "private")
        with open(self.secret, "w") as f:
            f.write("PRIVATE\n")
        bin_dir = os.path.join(self.tmp, "bin")
        os.makedirs(bin_dir)
        with open(os.path.join(bin_dir, "dpkg-query"), "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        os.chmod(os.path.join(bin_dir, "dpkg-query"), 0o755)
        self.env = dict(ENV, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""),
                        LOCKBENCH_BUILD=os.path.join(self.tmp, "build"), PYTHONPATH=ROOT)

    def variants(self, tree, *refs, out=None):
        cp = subprocess.run([PY, "-m", "scripts.tree.kernel_tree", "variants", tree, *refs,
                             "--out", out or os.path.join(self.tmp, "out")], cwd=ROOT,
                            env=self.env, capture_output=True, text=True, timeout=BOUND_S)
        self.assertNotIn("Traceback", cp.stdout + cp.stderr)
        return cp.returncode, cp.stdout, cp.stderr

    # --- hole 3 ---

    def test_planted_links_at_variant_files_not_followed(self):
        tree = os.path.join(self.tmp, "linux")
        head = kernel_tree(tree)
        out = os.path.join(self.tmp, "out")
        os.makedirs(out)
        names = [f"linux-{git(tree, 'rev-parse', 'good')[:12]}", f"linux-{head[:12]}"]
        camp = f"campaign-{names[0]}-{names[1][-12:]}.toml"
        for n in names:
            for planted in (f".{n}.toml.tmp", f"{n}.toml.tmp", f"{n}.toml"):
                os.symlink(self.secret, os.path.join(out, planted))
        for planted in (camp, camp + ".tmp"):
            os.symlink(self.secret, os.path.join(out, planted))
        before = standin.snapshot(self.victim)
        rc, so, se = self.variants(tree, "good", "HEAD")
        self.assertEqual(rc, 0, so + se)
        self.assertEqual(standin.snapshot(self.victim), before)
        for f in [f"{n}.toml" for n in names] + [camp]:
            p = os.path.join(out, f)
            self.assertFalse(os.path.islink(p), f)
            with open(p) as fh:
                self.assertNotIn("PRIVATE", fh.read())

    # --- hole 8 ---

    def test_the_trees_programs_are_not_run(self):
        tree = os.path.join(self.tmp, "linux")
        kernel_tree(tree)
        marks = os.path.join(self.tmp, "marks")
        os.makedirs(marks)
        for name, body in PROGRAMS.items():
            path = os.path.join(self.tmp, f"{name}.sh")
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + body.format(marks=marks))
            os.chmod(path, 0o755)
        prog = os.path.join(self.tmp, "{}.sh").format
        git(tree, "config", "gpg.program", prog("gpg"))
        commit(tree, {"g.c": "1\n"}, "signed")
        git(tree, "commit", "-q", "--amend", "-S", "--no-edit")
        for k, v in (("core.fsmonitor", prog("fsmonitor")), ("filter.evil.clean", prog("clean")),
                     ("filter.evil.smudge", prog("smudge")),
                     ("diff.evil.textconv", prog("textconv")), ("log.showSignature", "true")):
            git(tree, "config", k, v)
        with open(os.path.join(tree, ".gitattributes"), "w") as f:
            f.write("* filter=evil diff=evil\n")
        git(tree, "add", ".gitattributes")
        git(tree, "commit", "-q", "-m", "attributes")
        for f in os.listdir(marks):
            os.unlink(os.path.join(marks, f))
        os.utime(os.path.join(tree, "Makefile"))  # stat-dirty: a status looks inside it
        rc, so, se = self.variants(tree, "good", "HEAD")
        self.assertEqual(rc, 0, so + se)
        camp = os.path.join(self.tmp, "c.toml")
        with open(camp, "w") as f:
            f.write(CAMPAIGN)
        cp = subprocess.run(["./run.sh", "bisect", "--tree", tree, "good", "HEAD", "--campaign",
                             camp, "--out", os.path.join(self.tmp, "bisect")], cwd=ROOT,
                            env=self.env, capture_output=True, text=True, timeout=BOUND_S)
        self.assertNotIn("Traceback", cp.stdout + cp.stderr)
        self.assertEqual(sorted(os.listdir(marks)), [], "the tree's programs ran")

    # --- hole 9 ---

    def test_paths_git_would_name_otherwise_refused(self):
        kernel_tree(os.path.join(self.tmp, "linux"))
        kernel_tree(os.path.join(self.tmp, "linux "))
        kernel_tree(os.path.join(self.tmp, "linux\t"))
        odd = os.path.join(self.tmp, 'linux\ndescription = "injected"\n#')
        kernel_tree(odd)
        for tree in (os.path.join(self.tmp, "linux "), odd, os.path.join(self.tmp, "linux\t")):
            with self.subTest(repr(tree)):
                out = os.path.join(self.tmp, "out-" + str(len(tree)))
                rc, so, se = self.variants(tree, "HEAD", out=out)
                self.assertEqual((rc, len(se.splitlines())), (2, 1), so + se)
                self.assertIn("a control character or white space", se)
                self.assertFalse(os.path.exists(out) and os.listdir(out), "a file was written")


if __name__ == "__main__":
    unittest.main()
