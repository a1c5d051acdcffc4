#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check that a reported run opens with its answer.

Usage: check_answer.py DIR

summary.md and report.html each open with the answer (summary.md:
right under the title, after any lost boots, its head, its table of
cells and the setup under it; report.html: its head before the first
table), commit-msg.txt with its short answer (<= 72 columns), and each
names every vCPU count of the primary rows of DIR/tidy/comparisons.csv
with each of their verdict labels, the setup (QEMU TCG, host cores) and
n.  tests/check_verdicts.py checks each cell's verdict and ratio.
"""
import csv
import html
import os
import re
import sys


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def first_para(text):
    return " ".join(text.strip().split("\n\n")[0].split())


def answer_paras(md):
    """summary.md's answer: everything under the title before its setup
    facts (the bold head of each compared pair, its table of cells, the
    setup paragraph under it), as one text."""
    out = []
    for line in md.strip().split("\n"):
        if line.startswith(("- **QEMU", "## ")):
            break
        out.append(line)
    return " ".join(" ".join(out).split()).replace("**", "")


def answer_html(page):
    """report.html's answer: the text before its first heading under the
    title (the answer's paragraphs and its table of cells)."""
    body = page[page.index("</h1>") + 5:]
    body = body[:body.find("<h2>")] if "<h2>" in body else body
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def main(argv):
    d = argv[0]
    with open(os.path.join(d, "tidy", "comparisons.csv"), newline="") as f:
        prim = [r for r in csv.DictReader(f) if r["role"] == "primary"]
    if not prim:
        fail("tidy/comparisons.csv has no primary row")
    with open(os.path.join(d, "summary.md"), encoding="utf-8") as f:
        md = f.read().split("\n", 2)[2]  # under the title
    with open(os.path.join(d, "commit-msg.txt"), encoding="utf-8") as f:
        msg = f.read()
    with open(os.path.join(d, "report.html"), encoding="utf-8") as f:
        page = f.read()
    long = [x for x in msg.split("\n") if len(x) > 72]
    if long:
        fail(f"commit-msg.txt: over 72 columns: {long[0]!r}")
    if '<p class="answer">' not in page or \
            page.find('<p class="answer">') > page.find("<table"):
        fail("report.html: no answer paragraph before the first table")
    texts = {"summary.md": answer_paras(md),
             "commit-msg.txt": first_para(msg),
             "report.html": answer_html(page)}
    # The block's setup is its own paragraph: the answer and it together.
    texts["commit-msg.txt"] = " ".join(msg.split())
    for name, text in texts.items():
        opening = ("Answer for ", "Lost boots: ") if name != "commit-msg.txt" \
            else tuple(f"{r['variant']} vs {r['baseline']} " for r in prim) \
            + tuple(f"{r['variant']} vs {r['baseline']}:" for r in prim)
        if not text.startswith(opening):
            fail(f"{name}: does not open with the answer: {text[:80]!r}")
        for word in ("QEMU TCG", "host cores", "boots a side"):
            if word not in text:
                fail(f"{name}: the answer does not say {word!r}: {text}")
        for r in prim:
            if r["verdict"] == "unsafe":
                continue  # the unsafe paragraph names the lockdep report
            c = int(r["cpus"])
            head = f"{c} vCPU{'s' if c > 1 else ''}" if name != \
                "commit-msg.txt" else f"{c}"
            label = r["verdict"] or "n/a"
            short = label.split(" (")[0] if label.startswith(
                "inconclusive (n≈") else label
            if name == "commit-msg.txt":
                short = short.split(" (")[0]
            if head not in text or short not in text:
                fail(f"{name}: the answer does not name {head} with "
                     f"{short!r}: {text}")
    print(f"ok: the answer opens summary.md, commit-msg.txt and report.html "
          f"and names every vCPU count with its verdict: {texts['summary.md']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
