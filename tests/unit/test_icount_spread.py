# SPDX-License-Identifier: GPL-2.0
"""tests/icount_spread.py, the leak finder of the instruction-exact clock
(docs/icount.md), on synthetic boots with known answers: each boot's
insn_per_op from its raw results, the spread of one kernel's boots (a
baseline pooled with its A/A control), and the fingerprint, what was
counted differently in their points (a lock class of lock_stat.txt, an
event of trace.txt) with the boots at each count; --max-ppm's leak line
and exit status; and one line with exit 2 for a directory that is not a
run.
"""

import io
import json
import os
import re
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

from tests import icount_spread

HERE = os.path.dirname(os.path.abspath(__file__))
LOCKSTAT = os.path.join(HERE, "fixtures", "lockstat-0.4-busy.txt")
RESULTS = os.path.join(HERE, "fixtures", "results-timing0.txt")
TRACE_LINE = ("  mbox_bench/0-41      [000] d.h1.     0.481383: irq_handler_entry: "
              "irq=26 name=arch_timer\n")
WORK_LINE = ("  kworker/0:2-22       [000] ...1.     0.458854: workqueue_execute_start: "
             "work struct (ptrval): function do_free_init\n")


def write_boot(root, boot, elapsed, ops, lock_bump=0, trace=None):
    """A boot directory cells/BOOT with an icount meta.json and a read95
    point: results with elapsed_ns and total ops, the lock_stat fixture
    with lock_bump more acquisitions of &rq->__lock, trace lines."""
    pdir = os.path.join(root, "cells", boot, "points", "read95")
    os.makedirs(pdir)
    with open(os.path.join(root, "cells", boot, "meta.json"), "w") as f:
        json.dump({"variant": "before", "clock": {"kind": "icount"}}, f)
    with open(RESULTS) as f:
        text = f.read()
    text = re.sub(r"elapsed_ns=\d+", f"elapsed_ns={elapsed}", text)
    text = re.sub(r"threads=2", "threads=1", text)
    text = re.sub(r"^total ops=\d+", f"total ops={ops}", text, flags=re.M)
    with open(os.path.join(pdir, "results.txt"), "w") as f:
        f.write(text)
    with open(LOCKSTAT) as f:
        text = f.read()
    if lock_bump:
        # The 8th number of &rq->__lock's row is its acquisitions.
        def bump(m):
            nums = m.group(2).split()
            nums[7] = str(int(nums[7]) + lock_bump)
            return m.group(1) + "".join(f"{x:>15}" for x in nums)
        text = re.sub(r"^(\s*&rq->__lock:)(.*)$", bump, text, count=1, flags=re.M)
    with open(os.path.join(pdir, "lock_stat.txt"), "w") as f:
        f.write(text)
    if trace is not None:
        with open(os.path.join(pdir, "trace.txt"), "w") as f:
            f.write("# tracer: nop\n" + "".join(trace))


def write_run(root, boots):
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump({"cells": [{"id": b, "variant": v} for b, v in boots]}, f)


class IcountSpread(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def spread(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = icount_spread.main([self.run, *args])
        return rc, out.getvalue(), err.getvalue()

    def test_agreeing_boots(self):
        # 2000 insn per op to a part per million: nothing differs.
        write_boot(self.run, "r01-before-c1", 300_000_000, 150_000)
        write_boot(self.run, "r01-before~aa-c1", 300_000_300, 150_000)
        write_run(self.run, [("r01-before-c1", "before"), ("r01-before~aa-c1", "before~aa")])
        rc, out, _ = self.spread("--max-ppm", "10")
        self.assertEqual(rc, 0, out)
        self.assertIn("read95 before A/A pooled: 2 boots, spread 1 ppm", out)
        self.assertIn("differs: nothing counted", out)

    def test_leak_named(self):
        # The control boot ran 800k instructions of other work in its
        # window: fewer ops, one more lock acquisition, a work item.
        write_boot(self.run, "r01-before-c1", 300_000_000, 150_000, trace=[TRACE_LINE])
        write_boot(self.run, "r01-before~aa-c1", 300_000_000, 149_600, lock_bump=1,
                   trace=[TRACE_LINE, WORK_LINE])
        write_run(self.run, [("r01-before-c1", "before"), ("r01-before~aa-c1", "before~aa")])
        rc, out, _ = self.spread("--max-ppm", "100")
        self.assertEqual(rc, 1, out)
        self.assertIn("spread 2674 ppm", out)
        self.assertIn("trace workqueue_execute_start do_free_init: 0 in 1 boot "
                      "(2000.00..2000.00), 1 in 1 boot (2005.35..2005.35)", out)
        self.assertRegex(out, r"differs: lock &rq->__lock: \d+ in 1 boot \(2000\.00")
        self.assertNotIn("irq_handler_entry", out)  # the same in both
        self.assertRegex(out, r"leak: read95 before boots spread 2674 ppm > 100 "
                              r"\(what differs: .*do_free_init")

    def test_not_a_run(self):
        rc, out, err = self.spread()
        self.assertEqual(rc, 2)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("not a campaign or boot run directory", err)


if __name__ == "__main__":
    unittest.main()
