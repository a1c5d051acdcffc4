# SPDX-License-Identifier: GPL-2.0
"""A variant of a developer's own git tree (scripts/tree/kernel_tree.py): each
refusal is one line (a missing ref, a dirty tree, a tree that is not a
kernel, another kernel version), the user's tree is never written, the
donor is the complete build nearest the commit, and the variant files and
the campaign that ./run.sh build --tree writes load as the harness reads
them.  A small git repository with a kernel's marks stands in for a
kernel tree (t-tree.sh builds a real one)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from guest import variant_name  # noqa: E402
from scripts import variant  # noqa: E402
from scripts.tree import kernel_tree  # noqa: E402
from scripts.campaign import file as campaign_file  # noqa: E402

ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
           GIT_COMMITTER_EMAIL="t@t", GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
           GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")


def git(cwd, *args):
    return subprocess.run(["git", "-C", cwd, *args], check=True, capture_output=True,
                          text=True, env=ENV).stdout.strip()


def commit(tree, files, msg):
    for name, text in files.items():
        path = os.path.join(tree, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", msg)
    return git(tree, "rev-parse", "HEAD")


def makefile(version=6, patchlevel=1, sublevel=192):
    return (f"# SPDX-License-Identifier: GPL-2.0\nVERSION = {version}\n"
            f"PATCHLEVEL = {patchlevel}\nSUBLEVEL = {sublevel}\nEXTRAVERSION =\n")


class Tree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.tree = os.path.join(self.tmp.name, "linux")
        os.makedirs(self.tree)
        git(self.tree, "init", "-q", "-b", "main")
        self.base = commit(self.tree, {"Makefile": makefile(),
                                       "kernel/locking/lockdep.c": "/* lockdep */\n"}, "base")
        self.reg = commit(self.tree, {kernel_tree.REGISTRY_FILE: "/* registry */\n"},
                          "mailbox: the registry")

    def refused(self, tree, ref, words):
        with self.assertRaises(kernel_tree.TreeError) as cm:
            kernel_tree.resolve(tree, ref)
        msg = str(cm.exception)
        self.assertNotIn("\n", msg)
        for w in words:
            self.assertIn(w, msg)

    def test_resolve(self):
        info = kernel_tree.resolve(self.tree, "HEAD")
        self.assertEqual(info["commit"], self.reg)
        self.assertEqual(info["version"], "6.1.192")
        self.assertTrue(info["registry"])
        self.assertEqual(info["subject"], "mailbox: the registry")
        self.assertFalse(kernel_tree.resolve(self.tree, "HEAD~1")["registry"])

    def test_refusals(self):
        self.refused(self.tree, "nope", ["'nope' is not a commit"])
        self.refused(self.tree, "-x", ["not a git revision"])
        self.refused(self.tree, "HEAD;rm", ["not a git revision"])
        self.refused("linux", "HEAD", ["absolute path"])
        self.refused(os.path.join(self.tmp.name, "none"), "HEAD", ["no such folder"])
        self.refused(self.tmp.name, "HEAD", ["not a git repository"])
        old = commit(self.tree, {"Makefile": makefile(5, 15, 1)}, "v5.15")
        self.refused(self.tree, old, ["Linux 5.15.1", "builds 6.1 and later"])
        git(self.tree, "rm", "-q", "-r", "kernel")
        git(self.tree, "commit", "-q", "-m", "no kernel")
        self.refused(self.tree, "HEAD", ["is not a Linux kernel"])
        git(self.tree, "checkout", "-q", self.reg)
        with open(os.path.join(self.tree, "Makefile"), "a") as f:
            f.write("# edited\n")
        self.refused(self.tree, "HEAD", ["uncommitted changes"])

    def test_versions(self):
        """A tested version is hosted by its own repository, silently; any
        later one by the nearest tested version before it, with one
        warning line naming the tested ones."""
        self.assertIsNone(kernel_tree.resolve(self.tree, "HEAD")["warning"])
        self.assertEqual(kernel_tree.resolve(self.tree, "HEAD")["base"], "6.1")
        for (ver, plevel), base in (((6, 12), "6.12"), ((6, 6), "6.1"), ((6, 18), "6.12"),
                                    ((7, 0), "6.12")):
            c = commit(self.tree, {"Makefile": makefile(ver, plevel, 3)}, f"v{ver}.{plevel}")
            info = kernel_tree.resolve(self.tree, c)
            self.assertEqual(info["base"], base, (ver, plevel))
            if (ver, plevel) == (6, 12):
                self.assertIsNone(info["warning"])
            else:
                self.assertIn(f"is Linux {ver}.{plevel}.3, not a tested version (6.1, 6.12)",
                              info["warning"])
                self.assertNotIn("\n", info["warning"])

    def test_untracked_files_are_not_dirt(self):
        with open(os.path.join(self.tree, "notes.txt"), "w") as f:
            f.write("mine\n")
        self.assertEqual(kernel_tree.resolve(self.tree, "HEAD")["commit"], self.reg)

    def test_attach_writes_only_the_harness_repository(self):
        repo = os.path.join(self.tmp.name, "harness")
        git(self.tmp.name, "init", "-q", "harness")
        before = git(self.tree, "for-each-ref") + git(self.tree, "status", "--porcelain")
        for _ in range(2):
            kernel_tree.attach(repo, self.tree)
        with open(os.path.join(repo, ".git", "objects", "info", "alternates")) as f:
            self.assertEqual(f.read().splitlines(),
                             [os.path.realpath(os.path.join(self.tree, ".git", "objects"))])
        self.assertEqual(git(repo, "cat-file", "-t", self.reg), "commit")
        self.assertEqual(git(self.tree, "for-each-ref") + git(self.tree, "status", "--porcelain"),
                         before)

    def test_donor_is_the_nearest_build_of_the_same_group(self):
        build = os.path.join(self.tmp.name, "build")
        far = commit(self.tree, {f"f{i}.c": "x\n" for i in range(5)}, "far")
        near = commit(self.tree, {"g.c": "y\n"}, "near")
        target = commit(self.tree, {"h.c": "z\n"}, "target")

        def built(name, head, arch="arm", shas=("a", "b"), vmlinux=True):
            d = os.path.join(build, name)
            os.makedirs(os.path.join(d, "src", "obj"))
            if vmlinux:
                open(os.path.join(d, "src", "obj", "vmlinux"), "w").close()
            with open(os.path.join(d, "build-meta.json"), "w") as f:
                json.dump({"arch": arch, "tree_commit": head,
                           "config_fragments": [{"sha256": s} for s in shas]}, f)
            return d

        built("far", far)
        near_d = built("near", near)
        built("arm64", target, arch="arm64")
        built("otherconf", target, shas=("a", "c"))
        built("unbuilt", target, vmlinux=False)
        built("gone", "0" * 40)
        got = kernel_tree.donor(build, self.tree, os.path.join(build, "new"), target, "arm",
                                ["a", "b"])
        self.assertEqual(got, (near_d, near))
        self.assertIsNone(kernel_tree.donor(build, self.tree, near_d, target, "arm", ["x"]))

    def test_variant_and_campaign_files(self):
        out = os.path.join(self.tmp.name, "trees")
        base_id = commit(self.tree, {"a.c": "1\n"}, 'a "quoted" subject')
        names, camp = kernel_tree.write_variants(self.tree, [self.reg, "HEAD"], out, "before")
        self.assertEqual(names, [f"linux-{self.reg[:12]}", f"linux-{base_id[:12]}"])
        saved = list(variant_name.VARIANT_DIRS)
        self.addCleanup(variant_name.VARIANT_DIRS.__setitem__, slice(None), saved)
        variant_name.VARIANT_DIRS.insert(0, out)
        v = variant.load(names[1])
        self.assertEqual((v["tree"], v["ref"], v["patches"]), (self.tree, base_id, []))
        self.assertEqual([os.path.basename(c) for c in v["configs"]],
                         ["virt-arm.config", "mbox-registry.config", "lockstat.config"])
        c = campaign_file.load(camp)
        self.assertEqual((c["variants"][:2], c["baseline"]), (names, names[0]))
        with self.assertRaises(kernel_tree.TreeError):
            kernel_tree.write_variants(self.tree, ["HEAD", base_id], out, "before")

    def test_variant_file_checks_tree_and_ref(self):
        d = os.path.join(self.tmp.name, "v")
        os.makedirs(d)
        saved = list(variant_name.VARIANT_DIRS)
        self.addCleanup(variant_name.VARIANT_DIRS.__setitem__, slice(None), saved)
        variant_name.VARIANT_DIRS.insert(0, d)
        for body, words in (('tree = "rel/path"\nref = "HEAD"', "absolute path"),
                            (f'tree = "{self.tree}"\nref = "-rf"', "ref must be"),
                            (f'tree = "{self.tree}"', "ref must be")):
            with open(os.path.join(d, "tv.toml"), "w") as f:
                f.write(f'description = "x"\nconfigs = []\n{body}\n')
            with self.subTest(body), self.assertRaises(variant.VariantError) as cm:
                variant.load("tv")
            self.assertIn(words, str(cm.exception))

    def test_tree_variant_name(self):
        self.assertEqual(kernel_tree.tree_variant_name("/src/Linux.Next/", "ab" * 20),
                         "linux-next-abababababab")
        name = kernel_tree.tree_variant_name("/x/" + "a" * 60, "cd" * 20)
        self.assertTrue(variant_name.NAME_RE.fullmatch(name), name)
        self.assertTrue(variant_name.NAME_RE.fullmatch(kernel_tree.tree_variant_name("/x/_", "e" * 40)))


if __name__ == "__main__":
    unittest.main()
