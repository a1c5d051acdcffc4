# SPDX-License-Identifier: GPL-2.0
"""./run.sh campaign --reuse (scripts/campaign/reuse.py): the
boots a new campaign takes from an earlier run instead of booting them.

Only a finished icount boot of the same id, from the same kernel, root fs
and job, is taken; it brings its tries and its folder (and a failed try's
kept folder); a wall-clock boot, a boot of another build, job or root fs,
an unfinished one, and a boot the new run has finished already are not.
"""

import hashlib
import json
import os
import shutil
import tempfile
import unittest

from scripts.campaign import file as campaign_file
from scripts.campaign import manifest as cm
from scripts.campaign import reuse as campaign_reuse

KERNEL = {"kernel_version": "6.1", "config_sha256": "c1", "module_sha256": "m1",
          "cmdline": "", "patches": [], "tree_commit": "t1"}
ROOTFS = {"arm": "r1"}


def boot(cid, variant, clock="icount", state="planned", **more):
    c = {"id": cid, "variant": variant, "cpus": 1, "rep": int(cid[1:3]), "state": state,
         "pos": 1, "oversubscribed": False}
    if clock != "wall":
        c["clock"] = clock
    c.update(more)
    return c


def finished_boot(cdir, points=("p0",)):
    """A boot folder as a runner leaves it: meta.json "ok", each point's
    files with their SHA256SUMS."""
    os.makedirs(cdir)
    with open(os.path.join(cdir, "meta.json"), "w") as f:
        f.write('{"state": "ok"}')
    for p in points:
        pdir = os.path.join(cdir, "points", p)
        os.makedirs(pdir)
        sums = ""
        for name, text in (("results.txt", f"results of {p}\n"), ("lock_stat.txt", "ls\n")):
            with open(os.path.join(pdir, name), "w") as f:
                f.write(text)
            sums += f"{hashlib.sha256(text.encode()).hexdigest()}  {name}\n"
        with open(os.path.join(pdir, "SHA256SUMS"), "w") as f:
            f.write(sums)


def run_dir(root, name, boots, job=b"point p0 read_pct=95\n", builds=None, rootfs=None):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "cells"))
    with open(os.path.join(d, "job.conf"), "wb") as f:
        f.write(job)
    data = {"campaign": {"variants": ["good", "c1", "good~aa"], "controls": {"good~aa": "good"},
                         "points": [{"id": "p0"}]},
            "builds": builds or {"good": dict(KERNEL), "c1": dict(KERNEL, tree_commit="t2"),
                                 "good~aa": dict(KERNEL)},
            "rootfs_sha256_by_arch": rootfs or dict(ROOTFS), "cells": boots}
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(data, f)
    for c in boots:
        if c["state"] == "done":
            finished_boot(os.path.join(d, "cells", c["id"]))
    return d, data


def reuse(d, man, dirs):
    """What ./run.sh campaign --reuse does: the runs opened, then taken."""
    return campaign_reuse.take(d, man, campaign_reuse.open_sources(dirs))


class Reuse(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="reuse-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def new_run(self, boots, **kw):
        d, data = run_dir(self.tmp, "new", boots, **kw)
        return d, cm.Manifest(os.path.join(d, "manifest.json"), data)

    def test_takes_only_the_same_finished_icount_boots(self):
        hung_try = {"state": "hung", "problems": ["hung"], "kept": "r02-good-c1.partial-1"}
        old, _ = run_dir(self.tmp, "old", [
            boot("r01-good-c1", "good", state="done", tries=[{"state": "done"}], wall_s=4.0),
            boot("r02-good-c1", "good", state="done", tries=[hung_try, {"state": "done"}]),
            boot("r01-good~aa-c1", "good~aa", state="hung", tries=[{"state": "hung"}]),
            boot("r03-good-c1", "good", clock="wall", state="done"),
            boot("r01-c1-c1", "c1", state="done"),
        ])
        os.makedirs(os.path.join(old, "cells", "r02-good-c1.partial-1"))
        d, man = self.new_run([
            boot("r01-good-c1", "good"), boot("r02-good-c1", "good"),
            boot("r01-good~aa-c1", "good~aa"), boot("r03-good-c1", "good", clock="wall"),
            boot("r01-c1-c1", "c1", state="done"), boot("r04-good-c1", "good"),
        ])
        self.assertEqual(reuse(d, man, [old]), 2)
        by = {c["id"]: c for c in man.data["cells"]}
        self.assertEqual(by["r01-good-c1"]["state"], "done")
        self.assertEqual(by["r01-good-c1"]["wall_s"], 4.0)
        self.assertEqual(by["r01-good-c1"]["reused_from"], os.path.abspath(old))
        self.assertEqual(by["r01-good-c1"]["clock"], "icount")
        # the lost boot comes along, with its kept folder
        self.assertEqual([t["state"] for t in by["r02-good-c1"]["tries"]], ["hung", "done"])
        self.assertTrue(os.path.isdir(os.path.join(d, "cells", "r02-good-c1.partial-1")))
        self.assertTrue(os.path.isfile(os.path.join(d, "cells", "r01-good-c1", "meta.json")))
        for cid in ("r01-good~aa-c1", "r03-good-c1", "r04-good-c1"):
            self.assertEqual(by[cid]["state"], "planned", cid)
            self.assertNotIn("reused_from", by[cid])
        self.assertNotIn("reused_from", by["r01-c1-c1"])  # finished here already
        with open(os.path.join(d, "manifest.json")) as f:
            saved = json.load(f)
        self.assertEqual(saved["cells"], man.data["cells"])

    def test_another_kernel_job_or_root_fs_takes_nothing(self):
        done = [boot("r01-good-c1", "good", state="done")]
        other = [
            run_dir(self.tmp, "k", done, builds={"good": dict(KERNEL, config_sha256="c2"),
                                                 "c1": dict(KERNEL), "good~aa": dict(KERNEL)})[0],
            run_dir(self.tmp, "j", done, job=b"point p0 read_pct=50\n")[0],
            run_dir(self.tmp, "r", done, rootfs={"arm": "r2"})[0],
        ]
        d, man = self.new_run([boot("r01-good-c1", "good")])
        self.assertEqual(reuse(d, man, other), 0)
        self.assertEqual(man.data["cells"][0]["state"], "planned")

    def test_a_run_that_is_not_there_is_one_line(self):
        d, man = self.new_run([boot("r01-good-c1", "good")])
        with self.assertRaises(campaign_file.CampaignError) as e:
            reuse(d, man, [os.path.join(self.tmp, "nowhere")])
        self.assertIn("nowhere", str(e.exception))


if __name__ == "__main__":
    unittest.main()
