# SPDX-License-Identifier: GPL-2.0
"""./run.sh campaign FILE --dry-run's wall-time estimate
(scripts/campaign/estimate.py), calibrated from earlier run
directories or from its defaults, and --variants DIR: a folder of variant
files made known for one run.  No kernel: the builds are a stand-in tree
(LOCKBENCH_BUILD), as in test_campaign_hostile.py."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

from lockbench import defaults
from scripts.campaign import estimate as est
from tests.unit import campaign_stand_ins as standin

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"


def campaign(points=2, dur=1000, looks=None, reps=2):
    return {"arches": ["arm"], "repetitions": reps, "looks": looks or [reps],
            "points": [{"id": f"p{i}", "duration_ms": dur} for i in range(points)]}


def boots(reps, cpus=(1,), variants=("before", "after"), clock="wall"):
    out = []
    for r in range(1, reps + 1):
        for n in cpus:
            for v in variants:
                c = {"id": f"r{r:02d}-{v}-c{n}", "variant": v, "cpus": n, "rep": r}
                if clock != "wall":
                    c["clock"] = clock
                out.append(c)
    return out


class Estimate(unittest.TestCase):
    def setUp(self):
        self.results = tempfile.mkdtemp(prefix="estimate-")
        self.addCleanup(shutil.rmtree, self.results)

    def manifest(self, name, wall, boot, points=2, dur=1000, clock="wall", n=4):
        d = os.path.join(self.results, name)
        os.mkdir(d)
        cs = [dict(c, state="done", wall_s=wall, boot_to_workload_s=boot)
              for c in boots(n // 2, clock=clock)]
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump({"campaign": campaign(points, dur), "cells": cs}, f)
        return d

    def test_defaults_without_results(self):
        c = campaign(points=2, dur=1000, reps=30)
        line = est.estimate(c, boots(30), 1, self.results, cores=2)
        boot, point, _s = defaults.BOOT_TIMES["wall"]
        each = boot + 2 * (1 + point)  # seconds a boot, one at a time
        self.assertEqual(line, f"about {round(60 * each / 60)} min (60 boots, 1 side by side; "
                         f"from no earlier boots in results/: the defaults, boot {boot:g} s + "
                         f"{point:g} s a point (scripts/campaign/estimate.py))")

    def test_calibrated_from_measured_boots(self):
        # 10 s boot, 2 points of 1 s, 20 s a point beyond it: 52 s a boot.
        self.manifest("old-1", wall=52.0, boot=10.0)
        boot, point, stretch, measured = est.model("wall", "arm", est.samples(self.results)[0])
        self.assertEqual((boot, point, stretch, measured), (10.0, 20.0, 1.0, True))
        line = est.estimate(campaign(reps=30), boots(30), 1, self.results, cores=2)
        self.assertTrue(line.startswith("about 52 min (60 boots, 1 side by side; from measured "
                                        "boot times of 4 boots in results/old-1)"), line)

    def test_icount_stretch(self):
        self.manifest("w", wall=12.0, boot=4.0)            # a point: 3 s beyond its second
        self.manifest("i", wall=30.0, boot=4.0, clock="icount")  # (30-4-6)/2 = 10 s a guest s
        found = est.samples(self.results)[0]
        self.assertEqual(est.model("icount", "arm", found), (4.0, 3.0, 10.0, True))

    def test_side_by_side(self):
        c, cs = campaign(points=1, dur=60000), boots(2, cpus=(1,))
        secs = {x["id"]: 60.0 for x in cs}
        self.assertEqual(est.schedule(c, cs, secs, 1, 4, 2), 240.0)
        self.assertEqual(est.schedule(c, cs, secs, 2, 4, 2), 120.0)
        self.assertEqual(est.schedule(c, cs, secs, 4, 4, 2), 60.0)
        # Never more vCPUs than cores: 2-vCPU boots on 2 cores run alone.
        cs2 = boots(2, cpus=(2,))
        self.assertEqual(est.schedule(c, cs2, {x["id"]: 60.0 for x in cs2}, 2, 2, 2), 240.0)

    def test_looks_give_a_range(self):
        self.manifest("old-1", wall=60.0, boot=10.0)
        c = campaign(looks=[2, 4], reps=4)
        line = est.estimate(c, boots(4), 1, self.results, cores=2)
        self.assertTrue(line.startswith("about 8 min, 4 if it stops at the look at 2 "
                                        "repetitions (8 boots, 1 side by side; "), line)

    def test_hostile_results_skipped(self):
        d = self.manifest("garbage", wall=52.0, boot=10.0)
        with open(os.path.join(d, "manifest.json"), "w") as f:
            f.write('{"campaign": {"points": "x"}, "cells": [1, {"wall_s": NaN}]}')
        os.symlink(os.path.join(self.manifest("real", 52.0, 10.0), "manifest.json"),
                   os.path.join(self.results, "garbage2"))
        d3 = os.path.join(self.results, "linked")
        os.mkdir(d3)
        os.symlink(os.path.join(self.results, "real", "manifest.json"),
                   os.path.join(d3, "manifest.json"))
        found, used = est.samples(self.results)
        self.assertEqual(used, ["real"])


BOOTS = """description = "before, booted with a parameter (test only)"
boots = "before"
cmdline = "lockbench.x=1"
"""
CAMPAIGN = """name = "variants-dir"
variants = ["before", "zz-boots"]
cpus = [1]
repetitions = 2
[[points]]
id = "p"
read_pct = 50
mailboxes = 16
"""


class VariantsDir(unittest.TestCase):
    """--variants DIR, end to end, on a stand-in build of "before"."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="variants-dir-")
        build = standin.build_tree(cls.tmp, ("before",))
        cls.vdir = os.path.join(cls.tmp, "vars")
        os.mkdir(cls.vdir)
        with open(os.path.join(cls.vdir, "zz-boots.toml"), "w") as fh:
            fh.write(BOOTS)
        cls.toml = os.path.join(cls.tmp, "c.toml")
        with open(cls.toml, "w") as fh:
            fh.write(CAMPAIGN)
        env = {k: v for k, v in os.environ.items() if k != "LOCKBENCH_VARIANT_PATH"}
        cls.env = dict(env, LOCKBENCH_BUILD=build, PYTHONPATH=ROOT)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def campaign(self, *args):
        return subprocess.run([PY, "-m", "scripts.campaign", self.toml, "--dry-run", *args],
                              cwd=ROOT, env=self.env, capture_output=True, text=True)

    def test_unknown_without_it(self):
        cp = self.campaign()
        self.assertEqual(cp.returncode, 2, cp.stderr)
        self.assertEqual(len(cp.stderr.splitlines()), 1, cp.stderr)
        self.assertIn("unknown variant 'zz-boots'", cp.stderr)
        self.assertIn("--variants DIR", cp.stderr)
        self.assertIn("LOCKBENCH_VARIANT_PATH", cp.stderr)

    def test_known_with_it(self):
        cp = self.campaign("--variants", self.vdir)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertIn("r01-zz-boots-c1: zz-boots 1 vCPUs", cp.stdout)
        self.assertRegex(cp.stdout.splitlines()[-1],
                         r"^campaign: about \d+ min \(4 boots, \d+ side by side; from ")

    def test_not_a_folder(self):
        cp = self.campaign("--variants", os.path.join(self.tmp, "nowhere"))
        self.assertEqual(cp.returncode, 2, cp.stderr)
        self.assertRegex(cp.stderr, r"^campaign: --variants .*nowhere: not a folder\n$")

    def test_not_built_names_the_folder(self):
        with open(os.path.join(self.vdir, "zz-own.toml"), "w") as fh:
            fh.write('description = "x"\npatches = []\nconfigs = []\n')
        self.addCleanup(os.unlink, os.path.join(self.vdir, "zz-own.toml"))
        toml = os.path.join(self.tmp, "own.toml")
        with open(toml, "w") as fh:
            fh.write(CAMPAIGN.replace("zz-boots", "zz-own"))
        cp = subprocess.run([PY, "-m", "scripts.campaign", toml, "--dry-run",
                             "--variants", self.vdir],
                            cwd=ROOT, env=self.env, capture_output=True, text=True)
        self.assertEqual(cp.returncode, 3, cp.stderr)
        self.assertIn(f"run ./run.sh build --variants {self.vdir} zz-own", cp.stderr)


if __name__ == "__main__":
    unittest.main()
