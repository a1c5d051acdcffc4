#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check the plots and report.html of a real run directory.

Usage: check_report.py DIR [PLOT...]

Every plot named (default: the six of plots/README.md every run has, and
steal and crossover where plots.json lists them: a run from before
host-steal.txt has no steal plot, a campaign that sweeps fewer than two of
mailboxes, read_pct, think_ns no crossover plot) exists as PNG and SVG
of the size plots.json records, decodes, and is not blank (more than 20
colours in the PNG, drawn elements and the setup footer in the SVG), and
reads at a glance: laid out by headless Chromium, no text of its SVG (laid
out as the PNG) is cut by the image's edge or lies on another, and its key
is outside the plot areas; report.html has no script, its verdict table
comes before the plots, and headless Chromium renders every image in it at
its real size.  Reuses the image, layout and Chromium checks of
tests/unit/test_plots.py.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests.unit import test_plots as tp  # noqa: E402

PLOTS = ("latency", "throughput", "lockstat", "starvation", "cdf", "fairness")
OPTIONAL = ("steal", "crossover")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main(argv):
    d = argv[0]
    with open(os.path.join(d, "plots", "plots.json")) as f:
        plots = {p["name"]: p for p in json.load(f)["plots"]}
    want = argv[1:] or list(PLOTS) + [n for n in OPTIONAL if n in plots]
    for name in want:
        p = plots.get(name) or fail(f"plot {name} missing from plots.json")
        w, h, colours = tp.png_pixels(os.path.join(d, p["png"]))
        if (w, h) != (p["width"], p["height"]) or len(colours) <= 20:
            fail(f"{name}.png: {w}x{h} with {len(colours)} colours")
        sw, sh, root = tp.svg_info(os.path.join(d, p["svg"]))
        text = tp.svg_text(root)
        if (sw, sh) != (p["width"], p["height"]) or "QEMU TCG emulation" not in text:
            fail(f"{name}.svg: {sw}x{sh}, footer present: {'QEMU TCG' in text}")
        drawn = sum(1 for e in root.iter() if e.tag.endswith(("path", "polyline", "circle", "use")))
        if drawn < 10:
            fail(f"{name}.svg: only {drawn} drawn elements")
        print(f"ok: {name}: PNG {w}x{h} with {len(colours)} colours, SVG with {drawn} elements and the footer")
    with tempfile.TemporaryDirectory() as tmp:
        layout = tp.svg_layout({n: os.path.join(d, plots[n]["svg"]) for n in want}, tmp)
    for name in want:
        problems = tp.layout_problems(name, layout[name])
        if problems:
            fail("; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)"
                                            if len(problems) > 5 else ""))
        print(f"ok: {name}: no text cut or overlapping, key outside the plot areas")
    with open(os.path.join(d, "report.html")) as f:
        html = f.read()
    if "<script" in html.lower():
        fail("report.html has a script")
    if html.find("<table") < 0 or html.find("<table") > html.find("<img"):
        fail("report.html: the verdict table does not come before the plots")
    with tempfile.TemporaryDirectory() as tmp:
        broken = tp.broken_images(os.path.join(d, "report.html"), tmp)
        shown = tp.rendered_images(os.path.join(d, "report.html"), tmp)
    if broken or not shown:
        fail(f"report.html: broken images in Chromium: {broken or 'no image rendered'}")
    print(f"ok: report.html: no script, verdicts first, Chromium rendered all {len(shown)} images")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
