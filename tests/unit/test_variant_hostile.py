# SPDX-License-Identifier: GPL-2.0
# Timed: bounds the wall time of runs (hang guards): tests/run-all.sh runs
# this module at the normal priority, not niced beside a kernel build.
"""Variant files of a --variants DIR read as campaign files are (issue #43,
hole 15), through the real command every build and conversion reads a
variant with (python3 -m scripts.variant show, lib.sh's lb_variant) and
./run.sh campaign --variants DIR FILE --dry-run.

A 50 MB file (10 s to parse), one nested 100,000 deep (a RecursionError,
exit 1), a FIFO (blocked for ever) and a patch entry that is a link out of
DIR (a file from anywhere in the series): each one line, exit 2, within
BOUND_S."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
BOUND_S = 30
GOOD = 'description = "a variant of DIR"\npatches = []\nconfigs = []\n'


class VariantHostile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="variant-hostile-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.dir = os.path.join(self.tmp, "variants")
        os.makedirs(self.dir)
        self.env = dict(os.environ, PYTHONPATH=ROOT, LOCKBENCH_VARIANT_PATH=self.dir)

    def show(self, name):
        t0 = time.monotonic()
        try:
            cp = subprocess.run([PY, "-m", "scripts.variant", "show", name], cwd=ROOT,
                                env=self.env, capture_output=True, text=True, timeout=2 * BOUND_S)
        except subprocess.TimeoutExpired:
            self.fail(f"variant show {name}: still running after {2 * BOUND_S} s")
        self.assertLess(time.monotonic() - t0, BOUND_S)
        self.assertNotIn("Traceback", cp.stdout + cp.stderr)
        return cp.returncode, cp.stdout, cp.stderr

    def refused(self, name, want):
        rc, out, err = self.show(name)
        self.assertEqual((rc, out, len(err.splitlines())), (2, "", 1), err)
        self.assertIn(want, err)

    def test_big_deep_or_no_file_refused(self):
        with open(os.path.join(self.dir, "big.toml"), "w") as f:
            f.write(GOOD + ("# " + "x" * 98 + "\n") * 500000)
        with open(os.path.join(self.dir, "deep.toml"), "w") as f:
            f.write(GOOD + "x = " + "[" * 100000 + "]" * 100000 + "\n")
        os.mkfifo(os.path.join(self.dir, "fifo.toml"))
        os.symlink("/dev/zero", os.path.join(self.dir, "zero.toml"))
        self.refused("big", "larger than 1048576 bytes")
        self.refused("deep", "nested deeper than 32")
        # no regular file: no variant of that name (found at once, not read)
        self.refused("fifo", "unknown variant 'fifo'")
        self.refused("zero", "unknown variant 'zero'")

    def test_a_patch_that_is_a_link_out_of_dir_refused(self):
        outside = os.path.join(self.tmp, "elsewhere.patch")
        with open(outside, "w") as f:
            f.write("From a file outside the variants folder\n")
        os.symlink(outside, os.path.join(self.dir, "evil.patch"))
        with open(os.path.join(self.dir, "linked.toml"), "w") as f:
            f.write(GOOD.replace("patches = []", 'patches = ["evil.patch"]'))
        self.refused("linked", "patches entry 'evil.patch' is a symbolic link, not followed")
        # the same file itself beside the variant is taken
        os.unlink(os.path.join(self.dir, "evil.patch"))
        shutil.copy(outside, os.path.join(self.dir, "evil.patch"))
        rc, out, err = self.show("linked")
        self.assertEqual(rc, 0, err)
        self.assertIn(f"patch {os.path.join(self.dir, 'evil.patch')}", out)

    def test_campaign_with_a_deep_variant(self):
        with open(os.path.join(self.dir, "deep.toml"), "w") as f:
            f.write(GOOD + "x = " + "[" * 100000 + "]" * 100000 + "\n")
        camp = os.path.join(self.tmp, "c.toml")
        with open(camp, "w") as f:
            f.write('name = "c"\nvariants = ["before", "deep"]\ncpus = [1]\nrepetitions = 2\n'
                    '[[points]]\nid = "p"\nread_pct = 50\nmailboxes = 16\n')
        cp = subprocess.run(["./run.sh", "campaign", "--variants", self.dir, camp, "--dry-run"],
                            cwd=ROOT, env=self.env, capture_output=True, text=True,
                            timeout=2 * BOUND_S)
        self.assertEqual((cp.returncode, len(cp.stderr.splitlines())), (2, 1),
                         cp.stdout + cp.stderr)
        self.assertIn("nested deeper than 32", cp.stderr)


if __name__ == "__main__":
    unittest.main()
