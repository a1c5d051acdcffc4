# SPDX-License-Identifier: GPL-2.0
"""docs/glossary.md: one word for each thing.  The words it retires are
found only where the glossary allows them: the dated record
(docs/measurements.md), the glossary itself, and the readers of old
run directories (an older manifest's `attempts`).

Run: /usr/bin/python3 -m unittest tests.unit.test_glossary
"""

import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GLOSSARY = os.path.join(ROOT, "docs", "glossary.md")

#: retired spelling -> (the word that replaced it, files allowed to keep
#: it: an older run directory's key, read)
#: between two words of a retired phrase: spaces, or a line break and
#: the comment marks of the next line
SEP = r"[\s#*]+"
RETIRED = {
    rf"\bresults?{SEP}director(y|ies)\b": ("run directory", ()),
    rf"\bresults{SEP}folders?\b": ("run directory", ()),
    rf"\bbuild{SEP}targets?\b": ("variant", ()),
    r"\bbuild_target\b": ("guest/variant_name.py", ()),
    r"\bparse_target\b": ("variant_name.split_name", ()),
    r"\bcampaign_file\.image\(": ("campaign_file.booted_variant", ()),
    # a planned boot was a "cell" in the campaign and the analysis
    r"\b(finish|start|run|campaign)_cells?\b": ("..._boot(s)", ()),
    r"\bscripts/campaign/cell\.py\b": ("scripts/campaign/boot.py", ()),
    r"(?-i:\bCell([A-Z]\w*)?\b)": ("Boot...", ()),
    r"\b(rundir|rd)\.cells\b": ("rundir.boots", ()),
    r"campaign: cell ": ("campaign: boot ", ()),
    rf"\bdone{SEP}cells\b": ("done boots", ()),
    r"\bCELL_TIMES\b": ("BOOT_TIMES", ()),
    r"\battempts\b": ("len(tries)", ("scripts/campaign/manifest.py",
                                     "scripts/campaign/reuse.py",
                                     "tests/unit/test_campaign_hostile.py",
                                     "tests/unit/test_reuse_hostile.py")),
}
#: never checked: the dated record says what was true then
SKIP = ("docs/measurements.md", "docs/glossary.md",
        "tests/unit/test_glossary.py")
TEXT = (".py", ".sh", ".md", ".toml", ".c", ".h", ".gp", ".cocci")


def tracked():
    """The repository's text files (git ls-files; a copy without .git:
    every file under ROOT but build/ and results/)."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), ROOT)
               for d, dirs, files in os.walk(ROOT)
               for f in files
               if not os.path.relpath(d, ROOT).split(os.sep)[0]
               in (".git", "build", "results")]
    return [f for f in out if f.endswith(TEXT) or f == "run.sh"]


class OneWord(unittest.TestCase):
    def test_glossary_names_each_word(self):
        with open(GLOSSARY) as f:
            text = f.read()
        for word in ("variant", "target", "point", "cell", "boot", "try",
                     "job", "repetition", "look", "sample", "run directory"):
            self.assertRegex(text, rf"\| \*\*{word}\*\* \|",
                             f"docs/glossary.md has no row for {word!r}")

    def test_retired_words_are_gone(self):
        found = []
        for path in tracked():
            if path in SKIP or not os.path.isfile(os.path.join(ROOT, path)):
                continue
            with open(os.path.join(ROOT, path), errors="replace") as f:
                text = f.read()
            for pat, (word, allowed) in RETIRED.items():
                if path in allowed:
                    continue
                for m in re.finditer(pat, text, re.IGNORECASE):
                    line = text.count("\n", 0, m.start()) + 1
                    found.append(f"{path}:{line}: {m.group(0)!r} (say {word!r})")
        self.assertEqual(found, [], "retired words (docs/glossary.md):\n"
                         + "\n".join(found[:40]))

    def test_the_check_finds_a_retired_word(self):
        # The pattern list is not vacuous: each catches its own example.
        for pat, example in ((r"\bresults? director(y|ies)\b", "a Results Directory"),
                             (rf"\bbuild{SEP}targets?\b", "the build\n    # targets"),
                             (r"\battempts\b", 'cell["attempts"]'),
                             (r"\b(finish|start|run|campaign)_cells?\b", "finish_cell(d)"),
                             (r"campaign: cell ", "campaign: cell r01-before-c2: hung")):
            self.assertRegex(example, re.compile(pat, re.IGNORECASE))


if __name__ == "__main__":
    unittest.main()
