# SPDX-License-Identifier: GPL-2.0
"""Pinning: the runner's --pin (parse, plan, applied to a thread of this
process named like QEMU's first vCPU thread) and the campaign's core
assignment per boot (guest/vcpu.py boot_cores)."""

import os
import unittest
from unittest import mock

from guest import judge, vcpu
from tests.unit import helpers


class ParseAndPlan(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(vcpu.parse_pin("0,1"), [0, 1])
        self.assertEqual(vcpu.parse_pin("3"), [3])
        for bad in ("", "a", "0,,1", "0-1", "-1", "0,0", " 0"):
            with self.assertRaises(judge.RunError, msg=bad) as cm:
                vcpu.parse_pin(bad)
            self.assertEqual(cm.exception.exit_code, 2)

    def test_plan(self):
        self.assertEqual(vcpu.pin_plan([1, 0], 2, {0, 1}), ({0: 1, 1: 0}, None))
        # More cores than vCPUs: the first ones.
        self.assertEqual(vcpu.pin_plan([1, 0], 1, {0, 1}), ({0: 1}, None))
        plan, why = vcpu.pin_plan([0, 1], 4, {0, 1})
        self.assertIsNone(plan)
        self.assertEqual(why, "4 vCPUs but 2 host cores given (--pin 0,1): "
                         "one core per vCPU needed")
        plan, why = vcpu.pin_plan([0, 5], 2, {0, 1})
        self.assertIsNone(plan)
        self.assertIn("host core 5 not available to this runner (it may use 0,1)", why)


class Apply(helpers.VcpuThread, unittest.TestCase):
    """apply_pin() on this process: a thread named "CPU 0/TCG" stands in
    for QEMU's vCPU thread."""

    class Proc:
        pid = os.getpid()

        @staticmethod
        def poll():
            return None

    def test_pins_the_vcpu_thread_only(self):
        mine = os.sched_getaffinity(0)
        core = max(mine)
        rec = vcpu.apply_pin(self.Proc, 1, [core])
        self.assertTrue(rec["applied"], rec)
        self.assertEqual(rec["threads"], {"CPU 0/TCG": {"tid": self.tid, "cores": [core]}})
        self.assertEqual(os.sched_getaffinity(self.tid), {core})
        self.assertEqual(os.sched_getaffinity(0), mine)
        self.assertIn("to core", vcpu.pin_line("before c1", rec))

    def test_missing_threads(self):
        # 2 vCPUs, only CPU 0/TCG exists: give up after wait_s, pin none.
        mine = os.sched_getaffinity(0)
        # Whatever this host has: the plan must pass to reach the wait.
        with mock.patch.object(vcpu.os, "sched_getaffinity", return_value={0, 1}):
            rec = vcpu.apply_pin(self.Proc, 2, [0, 1], wait_s=0.05)
        self.assertFalse(rec["applied"])
        self.assertEqual(rec["why"], "1 of 2 vCPU threads (CPU N/TCG) showed within 0.05 s")
        self.assertEqual(os.sched_getaffinity(self.tid), mine)
        self.assertEqual(vcpu.pin_line("before c2", rec),
                         "boot: before c2: pin not applied, running unpinned: " + rec["why"])

    def test_not_applicable(self):
        rec = vcpu.apply_pin(self.Proc, 3, [0, 1])
        self.assertFalse(rec["applied"])
        self.assertIn("3 vCPUs but 2 host cores given", rec["why"])


class BootCores(unittest.TestCase):
    """The campaign's assignment of host cores to boots."""

    def test_whole_host(self):
        self.assertEqual(vcpu.boot_cores(2, 1, 0, [0, 1]), [0, 1])
        self.assertEqual(vcpu.boot_cores(2, 2, 1, {1, 0}), [0, 1])
        # More vCPUs than cores: all of them (the runner then says no).
        self.assertEqual(vcpu.boot_cores(4, 1, 0, [0, 1]), [0, 1])

    def test_side_by_side_distinct_and_swapped(self):
        for rep in range(1, 9):
            a = vcpu.boot_cores(1, rep, 0, [0, 1])
            b = vcpu.boot_cores(1, rep, 1, [0, 1])
            self.assertNotEqual(a, b, rep)
            self.assertNotEqual(a, vcpu.boot_cores(1, rep + 1, 0, [0, 1]), rep)
        # Each variant sees each core in half the repetitions.
        for vidx in range(3):
            seen = [vcpu.boot_cores(1, rep, vidx, [0, 1])[0] for rep in range(1, 9)]
            self.assertEqual(sorted(seen), [0] * 4 + [1] * 4, vidx)

    def test_blocks(self):
        host = [0, 1, 2, 3, 4, 5, 6, 7]
        got = {tuple(vcpu.boot_cores(2, rep, 0, host)) for rep in range(4)}
        self.assertEqual(got, {(0, 1), (2, 3), (4, 5), (6, 7)})
        # 3 vCPUs on 8 cores: 2 blocks, cores 6 and 7 unused.
        self.assertEqual(vcpu.boot_cores(3, 1, 0, host), [3, 4, 5])
        self.assertEqual(vcpu.boot_cores(3, 1, 1, host), [0, 1, 2])

    def test_busy_waits(self):
        self.assertIsNone(vcpu.boot_cores(1, 1, 0, [0, 1], busy={1}))
        self.assertEqual(vcpu.boot_cores(1, 1, 0, [0, 1], busy={0}), [1])
        self.assertIsNone(vcpu.boot_cores(2, 1, 0, [0, 1], busy={0}))


if __name__ == "__main__":
    unittest.main()
