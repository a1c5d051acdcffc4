# SPDX-License-Identifier: GPL-2.0
"""guest/lockload_cases.py: a job's lockload cases and their writers are
read from the lock targets, not restated: guest/job.py's WORKLOADS is
"module" and the targets' named cases; a target file that names a case
badly or twice, or a bad writer, stops with one line naming it."""

import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from guest import job, lockload_cases  # noqa: E402

HEAD = 'description = "d"\nfile = "fs/x.c"\nlock = "x_lock"\n'


class Shipped(unittest.TestCase):
    def test_workloads_are_the_targets_cases(self):
        self.assertEqual(job.WORKLOADS, ("module", *lockload_cases.CASES))
        self.assertIn("proc_filesystems", job.WORKLOADS)
        self.assertNotIn("read", job.WORKLOADS)

    def test_writers(self):
        self.assertEqual(lockload_cases.writer("execve"), "binfmt_lock")
        self.assertEqual(lockload_cases.writer("mount_sysfs"), "file_systems_lock")
        for none in ("module", "read:/proc/iomem", "nope"):
            self.assertIsNone(lockload_cases.writer(none))


class Folder(unittest.TestCase):
    def load(self, files):
        with tempfile.TemporaryDirectory() as d:
            for name, body in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(HEAD + body)
            return lockload_cases.load(d)

    def refused(self, files, want):
        with self.assertRaises(SystemExit) as cm:
            self.load(files)
        msg = str(cm.exception.code)
        self.assertEqual(len(msg.splitlines()), 1, msg)
        self.assertIn(want, msg)

    def test_cases_and_writers(self):
        cases = self.load({"a_lock.toml": 'workloads = ["a1", "module", "read /x"]\n'
                                          'writer = "a_lock"\n',
                           "b_lock.toml": 'workloads = ["syscall 20", "b1"]\n',
                           "notes.txt": "not a target"})
        self.assertEqual(list(cases), ["a1", "b1"])
        self.assertEqual(cases["a1"][1], "a_lock")
        self.assertIsNone(cases["b1"][1])
        self.assertTrue(cases["b1"][0].endswith("/b_lock.toml"), cases)

    def test_refused(self):
        self.refused({"a.toml": 'workloads = ["a;reboot"]\n'},
                     "a.toml: workloads: 'a;reboot' is not a lockload case's name")
        self.refused({"a.toml": 'workloads = ["x"]\n', "b.toml": 'workloads = ["x"]\n'},
                     "b.toml: workloads: x is ")
        self.refused({"a.toml": 'workloads = ["x"]\nwriter = "$(reboot)"\n'},
                     "a.toml: writer: must be an fs_writer.ko lock= mode")
        self.refused({"a.toml": 'workloads = "x"\n'}, "a.toml: workloads: must be a list")
        self.refused({"a.toml": 'workloads = [\n'}, "a.toml")


if __name__ == "__main__":
    unittest.main()
