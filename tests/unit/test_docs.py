# SPDX-License-Identifier: GPL-2.0
"""analysis/TIDY.md documents exactly the columns the code writes (a
plotting engineer codes against it); README.md stays a short page for a
user (issue #28), and no relative link of it or of docs/ is dead."""

import glob
import os
import re
import unittest

from analysis.estimate import medians
from analysis.tidy import tables
from analysis import metrics
from analysis.verdict import observer
from analysis.verdict import verdicts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TIDY_MD = os.path.join(ROOT, "analysis", "TIDY.md")
README_MAX_LINES = 200
LINE_MAX_CHARS = 300
# [text](target) and [text](target "title"); an image's ![..](..) too.
LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")


class TidyDoc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(TIDY_MD) as f:
            cls.text = f.read()

    def test_every_file_and_column_line(self):
        documented = set(re.findall(r"^`([a-z_0-9,]+)`$", self.text, re.M))
        files = dict(tables.COLUMNS, medians=medians.MEDIANS_COLUMNS,
                     comparisons=verdicts.COMPARISONS_COLUMNS,
                     observer=observer.OBSERVER_COLUMNS)
        for name, cols in files.items():
            with self.subTest(name):
                self.assertIn(f"`{name}.csv`", self.text)
                self.assertIn(",".join(cols), documented)

    def test_every_metric(self):
        for m in metrics.METRICS:
            self.assertIn(f"`{m}", self.text, m)


def relative_links(path):
    """The relative link targets of a markdown file, without their
    #anchor: code blocks, code spans, URLs and bare anchors skipped."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = CODE_SPAN.sub("", FENCE.sub("", text))
    out = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue
        out.append(target.split("#", 1)[0])
    return out


class ReadmeShape(unittest.TestCase):
    """README.md is for a user (issue #28): the measurements live in
    docs/measurements.md, folder details in docs/ and folder READMEs."""

    def test_readme_short(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        self.assertLessEqual(len(lines), README_MAX_LINES,
                             f"README.md has {len(lines)} lines: move detail "
                             "to docs/ or a folder README")
        long = [(n, len(l)) for n, l in enumerate(lines, 1) if len(l) > LINE_MAX_CHARS]
        self.assertEqual(long, [], f"README.md lines over {LINE_MAX_CHARS} characters "
                         "(line, length)")

    def test_readme_test_command(self):
        # CI runs the README's test command (.ci/run).
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            self.assertIn("./run.sh test ", f.read())


class Links(unittest.TestCase):
    def test_relative_links_exist(self):
        # README.md, docs/, and the folder READMEs README.md links to
        # (build/ and results/ are output, not docs).
        pages = [os.path.join(ROOT, "README.md")] + sorted(
            glob.glob(os.path.join(ROOT, "docs", "*.md"))) + sorted(
            p for p in glob.glob(os.path.join(ROOT, "*", "README.md"))
            if os.path.basename(os.path.dirname(p)) not in ("build", "results"))
        self.assertGreater(len(pages), 1)
        for page in pages:
            for target in relative_links(page):
                if not target:
                    continue
                with self.subTest(page=os.path.relpath(page, ROOT), link=target):
                    self.assertFalse(os.path.isabs(target), "links stay relative")
                    path = os.path.normpath(os.path.join(os.path.dirname(page), target))
                    self.assertTrue(os.path.exists(path), f"dead link: {target}")

    def test_relative_links_parsed(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.md")
            with open(p, "w") as f:
                f.write("[a](a.md) [b](../b.md#sec \"t\") [c](https://x.org/c.md) "
                        "[d](#anchor) `[e](e.md)` ratio 1.02 [0.9, 1.1] (n=6)\n"
                        "```\n[f](f.md)\n```\n![g](img/g.png)\n")
            self.assertEqual(relative_links(p), ["a.md", "../b.md", "img/g.png"])


if __name__ == "__main__":
    unittest.main()
