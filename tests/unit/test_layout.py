# SPDX-License-Identifier: GPL-2.0
"""The house by stage (analysis/README.md, "Rooms"): each room of
analysis/ imports only from the rooms below it, analysis/ never imports
plots/, no room grows past a dozen files, and a report (and analyze)
runs the stages in one direction: each stage's modules called in one
stretch, in the order parse, tidy, estimate, verdict, render, and the
files written last."""

import ast
import os
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

#: the rooms from the bottom up; a module may import its own room and any
#: room before it in this list
ORDER = ("schema", "parse", "tidy", "estimate", "verdict", "render",
         "commands")
COMMANDS = {"analyze", "report", "looks", "lockstat_cli", "across", "outputs"}
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


#: the stages in the order a report runs them; analyze.frames is the
#: parse and tidy stages (it hands on the tidy tables), outputs.py the
#: writes, last
STAGES = ("parse", "tidy", "estimate", "verdict", "render", "outputs")


def stage_of(module):
    """The stage an analysis module's calls belong to, or None (the
    schema, and anything outside analysis/: safeio, the defaults, the
    CSV text, which every stage may use)."""
    if module == "analysis.analyze":
        return "tidy"
    if module == "analysis.outputs":
        return "outputs"
    room = room_of(module) if module.startswith("analysis.") else None
    return room if room in STAGES else None


def aliases(tree):
    """{name bound by an import of the module: the analysis module it
    names (a name imported from a module: that module)}."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("analysis"):
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                is_module = os.path.exists(os.path.join(ROOT, *sub.split(".")) + ".py")
                out[a.asname or a.name] = sub if is_module else node.module
    return out


def stage_calls(path, function):
    """[(stage, module)] of the calls function makes in path, in the
    order of the source (a call before its arguments), of the calls
    into a module of a stage."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    names = aliases(tree)
    body = next(n for n in ast.walk(tree)
                if isinstance(n, ast.FunctionDef) and n.name == function)
    calls = []

    class Visit(ast.NodeVisitor):
        def visit_Call(self, node):
            f = node.func
            while isinstance(f, ast.Attribute):
                f = f.value
            if isinstance(f, ast.Call):
                f = f.func  # Thresholds().for_run(...)
            mod = names.get(f.id) if isinstance(f, ast.Name) else None
            stage = stage_of(mod) if mod else None
            if stage:
                calls.append((stage, mod))
            self.generic_visit(node)
    Visit().visit(body)
    return calls


class Rooms(unittest.TestCase):
    def one_direction(self, path, function, least):
        calls = stage_calls(os.path.join(ROOT, path), function)
        self.assertGreaterEqual(len(calls), least, f"{path}:{function}: too few calls seen")
        ranks = [STAGES.index(s) for s, _m in calls]
        self.assertEqual(ranks, sorted(ranks),
                         f"{path}:{function} goes back a stage: {calls}")
        mods = [m for _s, m in calls]
        runs = [m for i, m in enumerate(mods) if i == 0 or mods[i - 1] != m]
        self.assertEqual(len(runs), len(set(runs)),
                         f"{path}:{function} comes back to a module: {runs}")

    def test_report_runs_the_stages_in_one_direction(self):
        self.one_direction("analysis/report.py", "report", 8)
        self.one_direction("analysis/analyze.py", "analyze", 5)
        self.one_direction("analysis/analyze.py", "frames", 6)
        self.one_direction("analysis/render/texts.py", "render_texts", 4)

    def test_one_direction_fails_when_a_stage_comes_back(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            bad = os.path.join(d, "bad.py")
            with open(bad, "w", encoding="utf-8") as f:
                f.write("from analysis.estimate import medians\n"
                        "from analysis.verdict import compare\n"
                        "def report(x):\n"
                        "    compare.compare_run(medians.medians_table(x))\n"
                        "    return medians.medians_table(x)\n")
            rel = os.path.relpath(bad, ROOT)
            self.assertEqual(stage_calls(bad, "report"),
                             [("verdict", "analysis.verdict.compare"),
                              ("estimate", "analysis.estimate.medians"),
                              ("estimate", "analysis.estimate.medians")])
            with self.assertRaises(AssertionError):
                self.one_direction(rel, "report", 1)


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
