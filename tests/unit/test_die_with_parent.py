# SPDX-License-Identifier: GPL-2.0
"""guest/qemu.py's die_with_parent(): a child whose parent is gone,
even before the child could ask to be told, does not live on (the race
that left a QEMU running after a campaign was SIGKILLed while starting a
boot: tests/t-campaign.sh)."""
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# P makes the preexec function in the parent, as scripts/campaign/boot.py does, forks C
# and exits at once; C runs the function (CALL) only once P is gone, then
# writes "alive" on the pipe unless the function ended it.
SCRIPT = r"""
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from guest import qemu
w = int(sys.argv[2])
parent = os.getpid()
fn = qemu.die_with_parent(signal.SIGTERM)
if os.fork() == 0:
    while os.getppid() == parent:
        time.sleep(0.01)
    CALL
    os.write(w, b"alive")
    os._exit(0)
os._exit(0)
"""


class DieWithParent(unittest.TestCase):
    def child_says(self, call):
        r, w = os.pipe()
        try:
            p = subprocess.Popen([sys.executable, "-c", SCRIPT.replace("CALL", call),
                                  ROOT, str(w)], pass_fds=(w,))
            os.close(w)
            self.assertEqual(p.wait(30), 0)
            out = b""
            while True:  # EOF once C has exited
                chunk = os.read(r, 64)
                if not chunk:
                    return out
                out += chunk
        finally:
            os.close(r)

    def test_parent_gone_before_the_child_asked(self):
        self.assertEqual(self.child_says("fn()"), b"")

    def test_without_it_the_child_lives_on(self):
        # What the test above would see if die_with_parent() did nothing.
        self.assertEqual(self.child_says("pass"), b"alive")


if __name__ == "__main__":
    unittest.main()
