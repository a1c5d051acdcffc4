# SPDX-License-Identifier: GPL-2.0
"""What a remote host gets of the harness (scripts/campaign_hosts.py
RUNNER_FILES) is all the runner needs: every guest/ and scripts/ module
that guest/run_guest.py imports, directly or through another, and every
file they read from the repository.  A module added to the runner and
left out of the payload fails only on a remote host (t-hosts), so it is
checked here, from the sources."""

import ast
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import campaign_hosts  # noqa: E402


def local_imports(path):
    """The guest/ and scripts/ modules path imports, as repository paths."""
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module] if isinstance(node, ast.ImportFrom) and node.module
                 else [])
        for n in names:
            for d in ("guest", "scripts"):
                if os.path.isfile(os.path.join(ROOT, d, n + ".py")):
                    found.add(f"{d}/{n}.py")
    # guest/qemu.py imports scripts/variant.py by path (variantmod())
    if "def variantmod" in open(path).read():
        found.add("scripts/variant.py")
    return found


class Payload(unittest.TestCase):
    def test_the_runner_is_whole(self):
        want, todo = set(), ["guest/run_guest.py"]
        while todo:
            f = todo.pop()
            if f in want:
                continue
            want.add(f)
            todo += local_imports(os.path.join(ROOT, f))
        want |= {"guest/init.sh", "scripts/arches.toml"}
        self.assertEqual(want - set(campaign_hosts.RUNNER_FILES), set())
        for f in campaign_hosts.RUNNER_FILES:
            self.assertTrue(os.path.isfile(os.path.join(ROOT, f)), f)


if __name__ == "__main__":
    unittest.main()
