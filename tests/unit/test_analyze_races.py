# SPDX-License-Identifier: GPL-2.0
"""analyze's check of a folder and its use of it are one (issue #43, holes
4 and 5): another local user who swaps a point folder or tidy/ for a link
between analyze's check and its open is never followed.

The race is made exact, not hoped for: the real command
(python3 -m analysis.analyze DIR, as ./run.sh analyze runs it) is started
through a wrapper that, at the moment the real code has finished its
check, swaps the folder for a link to the victim's folder (as the
attacker's loop did, within 0.01-0.63 ms), then lets the real code go on.
Before the fix the point's files were then read through the link (the
victim's private line in problems.csv) and the tables written through it
(outcomes.csv and problems.csv replaced in the victim's 0700 folder)."""

import os
import subprocess
import tempfile
import unittest

from tests.unit import campaign_stand_ins as standin
from tests.unit import synth

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"

# The real analyze, with the swap put exactly in the window after a
# check of a point folder (tables._folder) or before the first table is
# written (safeio.Dir.write_atomic, after analysis/outputs.py has opened
# DIR/tidy: whatever its arguments).
WRAPPER = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
from analysis import analyze
from analysis.tidy import tables
from lockbench import safeio
run, what, victim = sys.argv[2], sys.argv[3], sys.argv[4]
swapped = []

def swap(path):
    if not swapped:
        os.rename(path, path + ".moved")
        os.symlink(victim, path)
        swapped.append(path)

if what == "point":
    real = tables._folder
    def folder(root, rel):
        why = real(root, rel)
        if why is None and rel == os.path.join("cells", "r01-after-c2", "points", "p1"):
            swap(os.path.join(root, rel))
        return why
    tables._folder = folder
else:
    real_write = safeio.Dir.write_atomic
    def write_atomic(self, *args, **kw):
        swap(os.path.join(run, "tidy"))
        return real_write(self, *args, **kw)
    safeio.Dir.write_atomic = write_atomic
rc = analyze.main([run])
print("swapped:", swapped, file=sys.stderr)
sys.exit(rc)
"""


class Races(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.run_dir = os.path.join(self.tmp.name, "run")
        synth.make_run(self.run_dir, reps=2)
        self.victim = os.path.join(self.tmp.name, "victim")
        os.mkdir(self.victim, 0o700)
        for name in ("results.txt", "outcomes.csv", "problems.csv"):
            with open(os.path.join(self.victim, name), "w") as f:
                f.write("PRIVATE-LINE of the victim: x=1\n")
        self.wrapper = os.path.join(self.tmp.name, "wrapper.py")
        with open(self.wrapper, "w") as f:
            f.write(WRAPPER)

    def analyze(self, what):
        p = subprocess.run([PY, self.wrapper, ROOT, self.run_dir, what, self.victim],
                           cwd=ROOT, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=ROOT))
        self.assertIn("swapped: ['", p.stderr, "the race was not made")
        self.assertNotIn("Traceback", p.stderr)
        return p.returncode, p.stdout, p.stderr

    def no_private_text(self):
        for top, _dirs, files in os.walk(self.run_dir):
            for f in files:
                p = os.path.join(top, f)
                if os.path.islink(p) or f == "results.txt":
                    continue
                with open(p, errors="replace") as fh:
                    self.assertNotIn("PRIVATE-LINE", fh.read(), p)

    def test_point_folder_swapped_after_its_check(self):
        before = standin.snapshot(self.victim)
        rc, out, err = self.analyze("point")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(standin.snapshot(self.victim), before)
        self.no_private_text()
        with open(os.path.join(self.run_dir, "tidy", "problems.csv")) as f:
            rows = [r for r in f if "r01-after-c2,p1" in r]
        # the victim's results.txt never parsed (its first line quoted)
        self.assertIn("r01-after-c2,p1,results.txt,\"cells/r01-after-c2/points/p1 is a "
                      "symbolic link, not followed\"\n", rows)
        self.assertFalse([r for r in rows if "mbox_bench" in r], rows)

    def test_tidy_swapped_after_its_check(self):
        before = standin.snapshot(self.victim)
        rc, out, err = self.analyze("tidy")
        self.assertEqual(standin.snapshot(self.victim), before, out + err)
        # The tables went into the folder analyze checked (since moved).
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(os.path.isfile(os.path.join(self.run_dir, "tidy.moved", "outcomes.csv")))


if __name__ == "__main__":
    unittest.main()
