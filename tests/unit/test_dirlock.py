# SPDX-License-Identifier: GPL-2.0
"""lockbench/dirlock.py: one runner per run directory, and a resume that waits
for a killed campaign's runner to end before it starts the boot again at
the same path (the race that cost a CI run a point: the old runner
unlinked the new QEMU's results stream)."""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from guest import judge, run_guest  # noqa: E402
from lockbench import dirlock  # noqa: E402
from scripts.campaign import boot as campaign_boot  # noqa: E402
from scripts.campaign import file as campaign_file  # noqa: E402

# A stand-in runner: takes the lock, says so, holds it for argv[2] seconds.
HOLDER = r"""
import os, sys, time
sys.path.insert(0, sys.argv[3])
from lockbench import dirlock
fd = dirlock.hold(sys.argv[1])
print("held" if fd is not None else "busy", flush=True)
time.sleep(float(sys.argv[2]))
"""


class DirLock(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = os.path.join(self.tmp.name, ".tmp-r02-after-c1")
        os.makedirs(self.dir)
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            p.kill()
            p.wait()
            p.stdout.close()

    def holder(self, seconds):
        p = subprocess.Popen([sys.executable, "-c", HOLDER, self.dir, str(seconds), ROOT],
                             stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.assertEqual(p.stdout.readline().strip(), "held")
        return p

    def test_one_holder(self):
        fd = dirlock.hold(self.dir)
        self.assertIsNotNone(fd)
        try:
            p = subprocess.run([sys.executable, "-c", HOLDER, self.dir, "0", ROOT],
                               capture_output=True, text=True, check=True)
            self.assertEqual(p.stdout.strip(), "busy")
            self.assertFalse(dirlock.wait_free(self.dir, 0.2))
        finally:
            os.close(fd)
        self.assertTrue(dirlock.wait_free(self.dir, 0))

    def test_wait_for_the_holder_to_end(self):
        self.holder(0.6)
        t0 = time.monotonic()
        self.assertTrue(dirlock.wait_free(self.dir, 20))
        self.assertGreater(time.monotonic() - t0, 0.3)

    def test_a_killed_holder_frees_it(self):
        """The lock goes with the holder: a holder killed outright frees it."""
        p = self.holder(60)
        self.assertFalse(dirlock.wait_free(self.dir, 0.2))
        p.kill()
        p.wait()
        self.assertTrue(dirlock.wait_free(self.dir, 5))

    def test_resume_waits_then_keeps_the_runners_files(self):
        with open(self.dir + ".log", "w") as f:
            f.write("boot: the old runner's last words\n")
        with open(os.path.join(self.dir, "meta.json"), "w") as f:
            f.write("{}\n")
        self.holder(0.6)
        kept = campaign_boot.set_aside_unfinished(self.dir, wait_s=20)
        self.assertEqual(kept, self.dir + ".partial-1")
        self.assertFalse(os.path.exists(self.dir))
        self.assertFalse(os.path.exists(self.dir + ".log"))
        self.assertEqual(sorted(os.listdir(kept)), ["meta.json", "runner.log"])

    def test_resume_refuses_while_a_runner_works(self):
        self.holder(60)
        with self.assertRaisesRegex(campaign_file.CampaignError,
                                    r"still at work in .*\.tmp-r02-after-c1 after 0\.3 s"):
            campaign_boot.set_aside_unfinished(self.dir, wait_s=0.3)
        self.assertTrue(os.path.isdir(self.dir), "moved while its runner was at work")

    def test_runner_refuses_a_directory_in_use(self):
        self.holder(60)
        args = argparse.Namespace(out=self.dir, timeout=None, silence=None)
        job = ([("p", {"duration_ms": 300})], {})
        with self.assertRaisesRegex(judge.RunError, "in use by another runner"):
            run_guest._run_job(args, {}, job, self.tmp.name)
        self.assertEqual(os.listdir(self.dir), [], "the runner wrote into a directory in use")


if __name__ == "__main__":
    unittest.main()
