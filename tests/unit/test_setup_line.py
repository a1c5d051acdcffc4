# SPDX-License-Identifier: GPL-2.0
"""analysis.render.run_setup.setup_line: the one setup line of the plots' footers
and report.html (plots.common.Run only passes its boots and order)."""

import os
import shutil
import tempfile
import unittest

from analysis.render import run_setup
from analysis.parse import rundir
from tests.unit import synth


class SetupLine(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="setup-line-")
        cls.dir = os.path.join(cls.tmp, "run")
        synth.make_run(cls.dir, reps=2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def rd(self, **host):
        rd = rundir.load(self.dir)
        rd.host = dict(rd.host, **host)
        return rd

    def test_one_kernel(self):
        rd = self.rd(accel="tcg", cores=2)
        rd.builds = {v: {"kernel_version": "6.1.192"} for v in rd.variants}
        done = [("before", 2, False), ("after", 2, False), ("before", 2, False)]
        self.assertEqual(run_setup.setup_line(rd, done),
                         "QEMU TCG emulation, 2 vCPUs on 2 host cores, n=1-2 "
                         "boots per variant, Linux 6.1.192")

    def test_kernels_in_the_given_order_and_oversubscribed(self):
        rd = self.rd(accel="kvm", cores=2)
        rd.builds = {"before": {"kernel_version": "6.1"},
                     "after": {"kernel_version": "6.6"}}
        done = [("before", 4, True), ("after", 4, True)]
        self.assertEqual(run_setup.setup_line(rd, done, ["after", "before"]),
                         "QEMU KVM, 4 vCPUs on 2 host cores, n=1 boots per "
                         "variant, Linux after 6.6, before 6.1, oversubscribed "
                         "(*): 4 vCPUs > host cores")

    def test_nothing_recorded(self):
        rd = self.rd(cores=None)
        rd.host.pop("cores")
        rd.builds = {}
        self.assertEqual(run_setup.setup_line(rd, []),
                         "QEMU TCG emulation, ? vCPUs on ? host cores, n=0 "
                         "boots per variant, Linux (version not recorded)")


if __name__ == "__main__":
    unittest.main()
