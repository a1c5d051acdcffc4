# SPDX-License-Identifier: GPL-2.0
"""What a remote host gets of the harness (scripts/campaign/hosts.py
RUNNER_FILES) is all the runner needs: every guest/, lockbench/ and
scripts/ module that guest/run_guest.py imports, directly or through
another, and every file they read from the repository (the lock
targets, whose folder guest/lockload_cases.py reads whole).  A module
added to the runner and left out of the payload fails only on a remote
host (t-hosts), so it is checked here, from the sources."""

import ast
import glob
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from scripts.campaign import hosts as campaign_hosts  # noqa: E402

PACKAGES = ("guest", "lockbench", "scripts")


def module_file(name):
    """The repository path of module name ("guest.judge"), or of the
    package's __init__.py ("guest"); None if not one of PACKAGES'."""
    parts = name.split(".")
    if parts[0] not in PACKAGES or len(parts) > 2:
        return None
    path = "/".join(parts) + ".py" if len(parts) == 2 else f"{parts[0]}/__init__.py"
    return path if os.path.isfile(os.path.join(ROOT, path)) else None


def local_imports(path):
    """The PACKAGES' files path imports, as repository paths: the
    modules ("import guest.judge", "from guest import judge", "from
    guest.judge import RunError", and relative forms) and the packages'
    __init__.py, which an import of one of their modules runs too."""
    package = os.path.dirname(os.path.relpath(path, ROOT))
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from .x import y
                base = ".".join(filter(None, [package.replace("/", ".")] + [base]))
            # "from guest import judge": the module guest.judge, or a name
            # in guest/__init__.py; "from guest.judge import X": guest.judge.
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for n in names:
            parts = n.split(".")
            for i in range(1, len(parts) + 1):
                f = module_file(".".join(parts[:i]))
                if f:
                    found.add(f)
    return found


def data_files(path):
    """The repository files path names as os.path.join(ROOT, "dir",
    "file") with literal parts (guest/variant_name.py's arch and kernel
    tables, guest/qemu.py's guest init): what the module reads of the
    repository beside its imports.  Folders (a variant folder) are not
    read by the runner's boots and are left out."""
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if (isinstance(node, ast.Call) and ast.unparse(node.func) == "os.path.join"
                and node.args and isinstance(node.args[0], ast.Name)
                and node.args[0].id == "ROOT"
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                        for a in node.args[1:])):
            rel = "/".join(a.value for a in node.args[1:])
            if os.path.isfile(os.path.join(ROOT, rel)):
                found.add(rel)
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
        for f in list(want):
            want |= data_files(os.path.join(ROOT, f))
        # A folder the runner reads whole: every lock target, whose
        # lockload cases and writers a job is checked against.
        self.assertIn("guest/lockload_cases.py", want)
        want |= {os.path.relpath(f, ROOT) for f in glob.glob(
            os.path.join(ROOT, "kernel-patches", "targets", "*.toml"))}
        self.assertTrue({"guest/inside/init.sh", "guest/arches.toml",
                         "kernel-patches/kernels.toml"} <= want, want)
        self.assertEqual(want - set(campaign_hosts.RUNNER_FILES), set())
        for f in campaign_hosts.RUNNER_FILES:
            self.assertTrue(os.path.isfile(os.path.join(ROOT, f)), f)


if __name__ == "__main__":
    unittest.main()
