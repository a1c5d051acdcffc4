# SPDX-License-Identifier: GPL-2.0
# Timed: bounds the wall time of runs (hang guards): tests/run-all.sh runs
# this module at the normal priority, not niced beside a kernel build.
"""./run.sh campaign FILE --reuse OLD on an OLD that lies (issue #43, holes
6 and 7), through the real command: a stand-in build tree, and a
stand-in QEMU that ends at once (a boot not taken fails in a second, no
boot anywhere).

OLD is made as a campaign makes it, with its icount boots finished by
hand (meta.json "ok", points with their SHA256SUMS), then damaged: a
FIFO job.conf, a 1 GiB sparse file, manifest keys out of range or
unknown, a problem with an escape sequence, a forged boot whose files do
not check, 1e400.  Each run ends within BOUND_S; what cannot be read is
one line and exit 2 before the new directory is made; a boot that cannot
be taken is booted again, with one line why."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from tests.unit import campaign_stand_ins as standin

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
BOUND_S = 60
CAMPAIGN = """name = "reuse"
variants = ["before", "after"]
cpus = [1]
control = true
clock = { 1 = "icount" }
icount_repetitions = 3
repetitions = 3
[[points]]
id = "p"
read_pct = 50
mailboxes = 16
"""


class ReuseHostile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="reuse-hostile-")
        build = standin.build_tree(cls.tmp, ("before", "after"))
        cls.toml = os.path.join(cls.tmp, "reuse.toml")
        with open(cls.toml, "w") as f:
            f.write(CAMPAIGN)
        cls.env = dict(os.environ, LOCKBENCH_BUILD=build, LB_QEMU="fail")
        cls.env["PATH"] = standin.qemu_path(cls.tmp, cls.env)
        # OLD as ./run.sh campaign creates it, its boots then finished.
        cls.pristine = os.path.join(cls.tmp, "pristine")
        subprocess.run([PY, "-c", "import argparse, sys; from scripts.campaign import main; "
                        "main.create(argparse.Namespace(file=sys.argv[1], out=sys.argv[2], "
                        "dry_run=False))", cls.toml, cls.pristine], cwd=ROOT, env=cls.env,
                       check=True, capture_output=True)
        path = os.path.join(cls.pristine, "manifest.json")
        with open(path) as f:
            m = json.load(f)
        for c in m["cells"]:
            c.update(state="done", attempts=1, wall_s=12.5, boot_to_workload_s=8.0, problems=[],
                     tries=[{"state": "done", "problems": []}])
            cls.finish(os.path.join(cls.pristine, "cells", c["id"]))
        with open(path, "w") as f:
            json.dump(m, f)
        os.unlink(os.path.join(cls.pristine, "campaign.toml"))  # not read by --reuse

    @staticmethod
    def finish(cdir):
        os.makedirs(os.path.join(cdir, "points", "p"))
        with open(os.path.join(cdir, "meta.json"), "w") as f:
            f.write('{"state": "ok"}')
        sums = ""
        for name in ("results.txt", "lock_stat.txt"):
            with open(os.path.join(cdir, "points", "p", name), "w") as f:
                f.write(f"{name} of {cdir}\n")
            sums += hashlib.sha256(f"{name} of {cdir}\n".encode()).hexdigest() + f"  {name}\n"
        with open(os.path.join(cdir, "points", "p", "SHA256SUMS"), "w") as f:
            f.write(sums)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def setUp(self):
        self.case = tempfile.mkdtemp(dir=self.tmp)
        self.old = os.path.join(self.case, "old")
        shutil.copytree(self.pristine, self.old)
        self.new = os.path.join(self.case, "new")

    def manifest(self, d, edit=None):
        path = os.path.join(d, "manifest.json")
        with open(path) as f:
            m = json.load(f)
        if edit:
            edit(m)
            with open(path, "w") as f:
                json.dump(m, f)
        return m

    def campaign(self):
        t0 = time.monotonic()
        try:
            cp = subprocess.run(["./run.sh", "campaign", self.toml, "--out", self.new, "--reuse",
                                 self.old, "--no-report"], cwd=ROOT, env=self.env,
                                capture_output=True, text=True, timeout=BOUND_S)
        except subprocess.TimeoutExpired:
            self.fail(f"still running after {BOUND_S} s")
        self.took = time.monotonic() - t0
        self.assertNotIn("Traceback", cp.stdout + cp.stderr)
        return cp.returncode, cp.stdout, cp.stderr

    def boots(self):
        return {c["id"]: c for c in self.manifest(self.new)["cells"]}

    def test_all_taken_from_a_good_run(self):
        rc, out, err = self.campaign()
        self.assertEqual(rc, 0, out + err)
        self.assertIn("9 of 9 boots taken", out)
        c = self.boots()["r01-before-c1"]
        self.assertEqual((c["state"], c["wall_s"], c["reused_from"]), ("done", 12.5, self.old))

    def test_unreadable_run_refused_before_anything_is_made(self):
        for what, make, want in (
                ("fifo job.conf", lambda: (os.unlink(self.j), os.mkfifo(self.j)),
                 "job.conf: a FIFO, not a regular file"),
                ("1e400", lambda: self.manifest(self.old, lambda m: m["cells"][0].update(
                    wall_s="X")) and self.replace("\"X\"", "1e400"), "not a finite number"),
                ("deep", lambda: self.write_manifest("[" * 100000 + "]" * 100000),
                 "nested deeper than"),
                ("manifest a link", lambda: (os.unlink(self.m), os.symlink("/dev/zero", self.m)),
                 "a symbolic link")):
            with self.subTest(what):
                shutil.rmtree(self.new, ignore_errors=True)
                shutil.rmtree(self.old)
                shutil.copytree(self.pristine, self.old)
                self.j = os.path.join(self.old, "job.conf")
                self.m = os.path.join(self.old, "manifest.json")
                make()
                rc, out, err = self.campaign()
                self.assertEqual((rc, len(err.splitlines())), (2, 1), out + err)
                self.assertIn(want, err)
                self.assertFalse(os.path.exists(self.new), "a directory was made")

    def replace(self, a, b):
        with open(self.m) as f:
            text = f.read()
        self.write_manifest(text.replace(a, b, 1))

    def write_manifest(self, text):
        with open(self.m, "w") as f:
            f.write(text)

    def test_boots_that_cannot_be_taken_are_booted_again(self):
        boots = os.path.join(self.old, "cells")
        # a 1 GiB sparse file in one boot
        with open(os.path.join(boots, "r01-before-c1", "points", "p", "perf.data"), "wb") as f:
            f.truncate(1 << 30)
        # a link and a FIFO in two others
        os.symlink("/etc/passwd", os.path.join(boots, "r01-after-c1", "console.log"))
        os.mkfifo(os.path.join(boots, "r02-before-c1", "console.log"))
        # a forged boot: its files do not check against its SHA256SUMS
        with open(os.path.join(boots, "r02-after-c1", "points", "p", "results.txt"), "w") as f:
            f.write("forged\n")
        # a boot whose runner did not say ok
        with open(os.path.join(boots, "r03-before-c1", "meta.json"), "w") as f:
            f.write('{"state": "hung"}')

        def edit(m):
            c = next(x for x in m["cells"] if x["id"] == "r03-after-c1")  # taken, keys checked
            c.update(wall_s=1e308, boot_to_workload_s=-3, evil="x",
                     problems=["warning: \x1b[2Jcleared", 7],
                     tries=[{"state": "done", "problems": ["\x1b]0;title\x07"], "evil": 1}])
        self.manifest(self.old, edit)
        rc, out, err = self.campaign()
        self.assertEqual(rc, 1, out + err)  # the boots booted again fail (no QEMU)
        self.assertLess(self.took, BOUND_S)
        for cid, why in (("r01-before-c1", "a sparse file"),
                         ("r01-after-c1", "console.log: a symbolic link"),
                         ("r02-before-c1", "console.log: a FIFO"),
                         ("r02-after-c1", "points/p/results.txt does not match its SHA-256"),
                         ("r03-before-c1", "meta.json does not say ok")):
            self.assertIn(f"boot {cid} not taken (booted again): ", err)
            self.assertIn(why, [ln for ln in err.splitlines() if cid in ln][0])
        got = self.boots()
        self.assertEqual(sorted(c for c, x in got.items() if x.get("reused_from")),
                         ["r01-before~aa-c1", "r02-before~aa-c1", "r03-after-c1",
                          "r03-before~aa-c1"])
        c = got["r03-after-c1"]
        self.assertNotIn("evil", c)
        self.assertIsNone(c["wall_s"])
        self.assertIsNone(c["boot_to_workload_s"])
        self.assertEqual(c["problems"], ["warning:  [2Jcleared", "7"])
        self.assertEqual(c["tries"], [{"state": "done", "problems": [" ]0;title "]}])
        size = sum(os.lstat(os.path.join(t, f)).st_blocks * 512
                   for t, _d, fs in os.walk(self.new) for f in fs)
        self.assertLess(size, 10 << 20)
        for top, _dirs, files in os.walk(os.path.join(self.new, "cells")):
            for f in files:
                self.assertFalse(os.path.islink(os.path.join(top, f)), f)


if __name__ == "__main__":
    unittest.main()
