# SPDX-License-Identifier: GPL-2.0
"""The house by stage (analysis/README.md, "Rooms"): each room of
analysis/ imports only from the rooms below it, analysis/ never imports
plots/, and no room grows past a dozen files."""

import ast
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

#: the rooms from the bottom up; a module may import its own room and any
#: room before it in this list
ORDER = ("schema", "parse", "estimate", "tidy", "verdict", "render",
         "commands")
COMMANDS = {"analyze", "report", "looks", "lockstat_cli", "across"}
#: the most files (modules, READMEs) one folder holds
MOST_FILES = 12


def room_of(module):
    """analysis.X[.Y] -> its room's name."""
    parts = module.split(".")
    if len(parts) == 1:
        return None  # "from analysis import X": named by X
    if parts[1] in ORDER:
        return parts[1]
    return "commands" if parts[1] in COMMANDS else "schema"


def imported(path):
    """The analysis modules a file imports, dotted."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module in ("analysis",) or (
                    node.module.startswith("analysis.")
                    and node.module.split(".")[1] in ORDER):
                yield from (f"{node.module}.{a.name}" for a in node.names)
            else:
                yield node.module


def analysis_modules():
    """(path, dotted name) of every module of analysis/."""
    for d, _dirs, files in os.walk(os.path.join(ROOT, "analysis")):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(d, f)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                yield path, rel.removesuffix(".__init__")


class Rooms(unittest.TestCase):
    def test_imports_point_down(self):
        seen = 0
        for path, name in analysis_modules():
            mine = room_of(name) if name != "analysis" else "schema"
            for dep in imported(path):
                if dep.startswith("plots"):
                    self.fail(f"{path}: imports {dep}: analysis/ never "
                              "imports plots/")
                if not dep.startswith("analysis.") or dep in (
                        "analysis." + r for r in ORDER):
                    continue
                seen += 1
                theirs = room_of(dep)
                self.assertLessEqual(
                    ORDER.index(theirs), ORDER.index(mine),
                    f"{path} ({mine}) imports {dep} ({theirs}), a room "
                    "above its own")
        self.assertGreater(seen, 50, "the walk found too few imports")

    def test_rooms_are_small(self):
        for d, _dirs, files in os.walk(os.path.join(ROOT, "analysis")):
            files = [f for f in files if not f.endswith(".pyc")]
            self.assertLessEqual(len(files), MOST_FILES,
                                 f"{d}: {len(files)} files")

    def test_room_of(self):
        self.assertEqual(room_of("analysis.tidy.boots"), "tidy")
        self.assertEqual(room_of("analysis.metrics"), "schema")
        self.assertEqual(room_of("analysis.report"), "commands")


if __name__ == "__main__":
    unittest.main()
