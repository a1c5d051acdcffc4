# SPDX-License-Identifier: GPL-2.0
"""plots/: the gnuplot plots and the HTML/Markdown report, on the synthetic
run directory tests/unit/fixtures/plots/run (made by make_plots_fixture.py
beside it).

Run: /usr/bin/python3 -m unittest tests.unit.test_plots

The report is opened in headless Chromium twice: a screenshot of the page
itself (not blank), and a DOM dump of a probe copy of it that records, once
the page has loaded, each <img>'s naturalWidth x naturalHeight: a broken
image has 0x0 there, so the check fails if any image does not decode (a
negative control corrupts one PNG and expects exactly that).  The probe's
script is added by the test to a copy; report.html itself has none.

The plots are checked as a reader would look at them: Chromium lays out
their SVGs (whose text plots/gnuplot/style.gp sizes as the PNG's) and reports where
each text and each plot area is; no text may be cut by the image's edge or
lie on another, no key entry on a plot area (a negative control moves a
title and a key entry and expects both to be reported).  Besides: a log y
axis exactly on the panels whose data span more than 10x, no 1-vCPU
starvation panel, the verdict label beside each compared variant's point.
"""

import contextlib
import csv
import html
import io
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser
from unittest import mock

from analysis.metrics import STEAL_FLAG_PCT
from plots import make_plots as mp
from plots import select
from plots import pages as rh

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "plots", "run")
# a crossover sweep (make_plots_fixture.py --grid): the heat map's fixture
CROSSOVER = os.path.join(HERE, "fixtures", "plots", "crossover")
# the plots the fixture draws: all but the crossover heat map (its points
# vary in read_pct only)
DRAWN = [n for n in mp.NAMES if n != "crossover"]
# (width, height) each plot of the fixture must have
SIZES = {"latency": (1000, 600), "throughput": (1000, 450),
         "steal": (1000, 670),
         "lockstat": (1250, 670), "starvation": (1000, 450),
         "cdf": (1000, 450), "fairness": (1000, 450)}
# plots/gnuplot/style.gp's colours of the first three variants
VCOLOURS = [(0x00, 0x72, 0xB2), (0xD5, 0x5E, 0x00), (0x00, 0x9E, 0x73)]
FOOTER = ("QEMU TCG emulation, 1, 2, 4 vCPUs on 2 host cores, n=5-6 boots per "
          "variant, Linux 6.1.192, oversubscribed")
# which tidy file each data file the driver writes is selected from
SOURCES = {"latency": "medians.csv", "throughput": "medians.csv",
           "latency-verdicts": "comparisons.csv",
           "throughput-verdicts": "comparisons.csv",
           "starvation": "medians.csv", "fairness-medians": "medians.csv",
           "lockstat-medians": "medians.csv", "lockstat": "lockstat.csv",
           "cdf": "hist.csv", "fairness": "samples.csv",
           "crossover": "comparisons.csv"}
# data files that put a tidy file's values side by side: one row per these
# keys, a column per metric (each its samples.csv row's value)
PIVOTS = {"steal": ("samples.csv", ("cell", "point"),
                    ("steal_pct", "steal_max_pct", "throughput_ops_s"))}
CHROMIUM_TIMEOUT_S = 60


# --- images -----------------------------------------------------------------

def png_info(path):
    """(width, height, bit depth, colour type, IDAT bytes) of a PNG; raises
    AssertionError if it is not one."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path}: not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            raise AssertionError(f"{path}: bad CRC in {kind!r}")
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    if ihdr is None or not idat:
        raise AssertionError(f"{path}: no IHDR or IDAT")
    return ihdr[0], ihdr[1], ihdr[2], ihdr[3], b"".join(idat)


def png_pixels(path):
    """(width, height, set of (r, g, b)) of an 8-bit RGB/RGBA PNG."""
    w, h, bpp, lines = png_lines(path)
    colours = set()
    for line in lines:
        colours.update(zip(line[0::bpp], line[1::bpp], line[2::bpp]))
    return w, h, colours


def png_rgb(path, x, y):
    """The (r, g, b) of pixel x, y of an 8-bit RGB/RGBA PNG."""
    _w, _h, bpp, lines = png_lines(path)
    line = lines[int(y)]
    return tuple(line[int(x) * bpp:int(x) * bpp + 3])


def png_lines(path):
    """(width, height, bytes per pixel, the unfiltered lines) of an 8-bit
    RGB/RGBA PNG."""
    w, h, depth, ctype, idat = png_info(path)
    if depth != 8 or ctype not in (2, 6):
        raise AssertionError(f"{path}: depth {depth} colour type {ctype} not handled")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    lines = []
    pos = 0
    for _ in range(h):
        ftype = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        elif ftype != 0:
            raise AssertionError(f"{path}: bad filter type {ftype}")
        lines.append(line)
        prev = line
    return w, h, bpp, lines


def svg_info(path):
    """(width, height, XML root) of an SVG file."""
    root = ET.parse(path).getroot()
    num = lambda s: int(float(re.match(r"[\d.]+", s).group(0)))  # noqa: E731
    return num(root.get("width")), num(root.get("height")), root


def svg_text(root):
    return " ".join(t.strip() for t in root.itertext() if t.strip())


# --- Chromium ---------------------------------------------------------------

def chromium(args, tmp):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        raise AssertionError("chromium not installed: run ./run.sh setup")
    profile = tempfile.mkdtemp(dir=tmp, prefix="chromium-profile-")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={profile}"] + args
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=CHROMIUM_TIMEOUT_S)


PROBE = """<script>
window.addEventListener("load", function () {
  for (const img of document.images)
    img.setAttribute("data-probe", img.naturalWidth + "x" + img.naturalHeight);
  document.body.setAttribute("data-probe-done", "yes");
});
</script>"""


class ImgProbe(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.done = [], False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a)
        if tag == "body" and a.get("data-probe-done") == "yes":
            self.done = True


def rendered_images(report, tmp):
    """{src: (naturalWidth, naturalHeight)} of report's <img>s as Chromium
    rendered them, from a probe copy of the page in the same directory."""
    with open(report, encoding="utf-8") as f:
        page = f.read()
    probe = os.path.join(os.path.dirname(report), "probe-report.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", PROBE + "</body>"))
    p = chromium(["--virtual-time-budget=10000", "--dump-dom",
                  "file://" + probe], tmp)
    os.unlink(probe)
    parser = ImgProbe()
    parser.feed(p.stdout)
    if not parser.done:
        raise AssertionError(f"chromium did not load the page: {p.stderr[-500:]}")
    return {a["src"]: tuple(int(x) for x in a.get("data-probe", "0x0").split("x"))
            for a in parser.imgs}


def broken_images(report, tmp):
    """The <img> srcs that Chromium did not decode at their PNG size."""
    out = []
    for src, size in rendered_images(report, tmp).items():
        path = os.path.join(os.path.dirname(report), src)
        try:
            w, h = png_info(path)[:2]
        except (OSError, AssertionError):
            w = h = -1
        if size != (w, h) or size == (0, 0):
            out.append(src)
    return out


# --- the plots as a browser draws them -------------------------------------

SVG_PROBE = """<script>
window.addEventListener("load", function () {
  const res = {};
  for (const div of document.querySelectorAll("div.plot")) {
    const svg = div.querySelector("svg"), o = svg.getBoundingClientRect();
    const box = (r) => [r.left - o.left, r.top - o.top, r.width, r.height];
    const texts = [], borders = [];
    for (const t of svg.querySelectorAll("text")) {
      const g = t.closest("g[transform]");
      texts.push({text: t.textContent, box: box(t.getBoundingClientRect()),
                  key: t.closest('g[id^="gnuplot_plot"]') !== null,
                  size: parseFloat(g ? g.getAttribute("font-size") : "0"),
                  rotated: !!(g && /rotate/.test(g.getAttribute("transform")))});
    }
    for (const p of svg.querySelectorAll("path")) {
      if (!/^rgb\\(\\s*85,\\s*85,\\s*85\\)$/.test(p.getAttribute("stroke") || ""))
        continue;
      const r = p.getBoundingClientRect();
      if (r.width > 50 && r.height > 50) borders.push(box(r));
    }
    res[div.dataset.name] = {size: [o.width, o.height], texts: texts, borders: borders};
  }
  document.getElementById("probe-out").textContent = JSON.stringify(res);
  document.body.setAttribute("data-probe-done", "yes");
});
</script>"""


def svg_layout(svgs, tmp):
    """{name: {"size": [w, h], "texts": [...], "borders": [[x, y, w, h]]}}:
    each SVG (name -> path) drawn inline in a page of headless Chromium,
    which reports the box of each <text> as laid out (text, box [x, y, w,
    h] in the SVG's pixels, key: inside a plot's group, i.e. a key entry,
    size: font size, rotated) and the plot areas: the bounding boxes of the
    border paths (plots/gnuplot/style.gp's border colour)."""
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'></head>"
             "<body style='margin:0'>"]
    for name, path in svgs.items():
        with open(path, encoding="utf-8") as f:
            svg = re.sub(r"^<\?xml[^>]*>", "", f.read().lstrip())
        parts.append(f"<div class='plot' data-name='{name}'>{svg}</div>")
    parts.append("<pre id='probe-out'></pre>" + SVG_PROBE + "</body></html>")
    page = os.path.join(tmp, "svg-probe.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write("".join(parts))
    p = chromium(["--virtual-time-budget=10000", "--dump-dom", "file://" + page], tmp)
    m = re.search(r"<pre id=\"probe-out\">(.*?)</pre>", p.stdout, re.S)
    if 'data-probe-done="yes"' not in p.stdout or not m:
        raise AssertionError(f"chromium did not lay out the SVGs: {p.stderr[-500:]}")
    return json.loads(html.unescape(m.group(1)))


def overlaps(a, b, slack=0.5):
    """Whether boxes [x, y, w, h] a and b share more than slack pixels."""
    return (a[0] + slack < b[0] + b[2] and b[0] + slack < a[0] + a[2] and
            a[1] + slack < b[1] + b[3] and b[1] + slack < a[1] + a[3])


def layout_problems(name, lay):
    """What a reader would see as broken in one plot's layout: text cut by
    the image's edge, two texts on top of each other, a key entry over a
    plot area, no key at all."""
    w, h = lay["size"]
    texts = [t for t in lay["texts"] if t["text"].strip()]
    borders = sorted({tuple(round(x, 1) for x in b) for b in lay["borders"]})
    out = []
    if not borders:
        out.append(f"{name}: no plot area found")
    for t in texts:
        x, y, tw, th = t["box"]
        if x < -0.5 or y < -0.5 or x + tw > w + 0.5 or y + th > h + 0.5:
            out.append(f"{name}: text {t['text']!r} at {t['box']} is cut "
                       f"by the {w:g}x{h:g} image")
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            if overlaps(a["box"], b["box"]):
                out.append(f"{name}: texts {a['text']!r} and {b['text']!r} overlap")
    keys = [t for t in texts if t["key"]]
    if not keys:
        out.append(f"{name}: no key")
    for t in keys:
        for b in borders:
            if overlaps(t["box"], b):
                out.append(f"{name}: key entry {t['text']!r} lies over the plot "
                           f"area {list(b)}")
    return out


WHO = re.compile(r"^[^ ]+(?: vs [^ ]+)?:(?: |$)")


def verdict_labels(texts, who="after:"):
    """The verdict labels "WHO VERDICT" among texts (as svg_layout reports
    them) whose variant part is who ("after:"), whole: a label that
    plots/gnuplot/style.gp broke into lines ("after:", "inconclusive", "(n≈23)",
    each a text of its own, one under the other at the same x) is joined
    again, up to the next label of the list below it.  Each with the box of
    its first line."""
    out = []
    for t in texts:
        if t["text"].startswith(who + " "):
            out.append(t)
        elif t["text"] == who:
            parts, last = [who], t
            while True:
                x, y, _w, h = last["box"]
                below = [u for u in texts if u is not last
                         and abs(u["box"][0] - x) < 1
                         and 0 < u["box"][1] - y < 2 * h]
                if len(below) > 1:
                    raise AssertionError(f"two lines under {last}: {below}")
                if not below or WHO.match(below[0]["text"]):
                    break
                parts.append(below[0]["text"])
                last = below[0]
            out.append(dict(t, text=" ".join(parts)))
    return out


# --- fixtures ---------------------------------------------------------------

def copy_run(src, dst):
    """A copy of a committed fixture run directory."""
    shutil.copytree(src, dst)
    return dst


def copy_fixture(tmp):
    return copy_run(FIXTURE, os.path.join(tmp, "run"))


def rows_of(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_rows(path, rows, header):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def add_variant(run, new="rcu", like="after"):
    """A third variant: a copy of `like` in every tidy file and the manifest."""
    tidy = os.path.join(run, "tidy")
    for name in os.listdir(tidy):
        path = os.path.join(tidy, name)
        rows = rows_of(path)
        if not rows or "variant" not in rows[0]:
            continue
        extra = []
        for r in rows:
            if r["variant"] == like:
                r2 = dict(r, variant=new)
                if "cell" in r2:
                    r2["cell"] = r2["cell"].replace(like, new)
                extra.append(r2)
        write_rows(path, rows + extra, list(rows[0]))
    with open(os.path.join(run, "manifest.json")) as f:
        m = json.load(f)
    m["campaign"]["variants"].append(new)
    m["builds"][new] = dict(m["builds"][like])
    with open(os.path.join(run, "manifest.json"), "w") as f:
        json.dump(m, f)


def keep_points(run, ids):
    """Only these workload points, in every tidy file and the manifest."""
    tidy = os.path.join(run, "tidy")
    for name in os.listdir(tidy):
        path = os.path.join(tidy, name)
        rows = rows_of(path)
        if rows and "point" in rows[0]:
            write_rows(path, [r for r in rows if r["point"] in ids], list(rows[0]))
    with open(os.path.join(run, "manifest.json")) as f:
        m = json.load(f)
    m["campaign"]["points"] = [p for p in m["campaign"]["points"] if p["id"] in ids]
    with open(os.path.join(run, "manifest.json"), "w") as f:
        json.dump(m, f)


def gnuplot_var(run_dir, plot, name):
    """The value of variable name in plot's gnuplot command (a string;
    None when not set)."""
    with open(os.path.join(run_dir, "plots", "gnuplot-commands.txt")) as f:
        cmd = next(shlex.split(ln) for ln in f if f"/{plot}.gp" in ln)
    sets = cmd[cmd.index("-e") + 1]
    m = re.search(rf"(?:^|; ){name}='((?:[^']|'')*)'", sets)
    if m:
        return m.group(1).replace("''", "'")
    m = re.search(rf"(?:^|; ){name}=(-?[0-9.]+)(?:;|$)", sets)
    return m and m.group(1)


def quiet(fn, *args):
    """fn(*args) with stderr captured: (result, stderr text)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        r = fn(*args)
    return r, err.getvalue()


class FixtureRun(unittest.TestCase):
    """make_plots + write_reports once on a copy of the fixture."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-plots-")
        cls.run_dir = copy_fixture(cls.tmp)
        cls.written, cls.warnings = quiet(mp.make_plots, cls.run_dir)
        cls.html, cls.md = rh.write_reports(cls.run_dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def gnuplot_var(self, plot, name):
        return gnuplot_var(self.run_dir, plot, name)

    def svg_texts(self, name):
        root = svg_info(os.path.join(self.run_dir, "plots", name + ".svg"))[2]
        return [t.strip() for t in root.itertext() if t.strip()]


class TestPlots(FixtureRun):

    def test_every_plot_written(self):
        want = [os.path.join(self.run_dir, "plots", f"{n}.{ext}")
                for n in DRAWN for ext in ("png", "svg")]
        self.assertEqual(sorted(self.written), sorted(want))
        self.assertEqual(self.warnings, "")

    def test_png_valid_sized_not_blank(self):
        for name, size in SIZES.items():
            path = os.path.join(self.run_dir, "plots", name + ".png")
            with self.subTest(plot=name):
                w, h, colours = png_pixels(path)
                self.assertEqual((w, h), size)
                self.assertGreater(len(colours), 20, "blank or nearly")
                for c in VCOLOURS[:2]:  # both variants' data are drawn
                    self.assertIn(c, colours, "a variant's colour is missing")

    def test_svg_valid_sized_with_data(self):
        for name, size in SIZES.items():
            path = os.path.join(self.run_dir, "plots", name + ".svg")
            with self.subTest(plot=name):
                w, h, root = svg_info(path)
                self.assertEqual((w, h), size)
                text = ET.tostring(root, encoding="unicode")
                drawn = re.findall(r"<(?:\w+:)?(?:path|polyline|use)\b", text)
                self.assertGreater(len(drawn), 30)
                for r, g, b in VCOLOURS[:2]:
                    self.assertRegex(text, rf"rgb\(\s*{r},\s*{g},\s*{b}\)")

    def test_title_axes_legend_footer(self):
        for name in SIZES:
            root = svg_info(os.path.join(self.run_dir, "plots", name + ".svg"))[2]
            text = svg_text(root)
            with self.subTest(plot=name):
                self.assertIn(FOOTER.split(", 1, 2")[0], text)
                self.assertIn("Linux 6.1.192", text)
                self.assertIn("host cores", text)
                self.assertIn("before", text)   # legend
                self.assertIn("after", text)
                self.assertRegex(text, r"\((ns|us|count|ops/s|ratio|ns, [^)]*)")
        text = svg_text(svg_info(os.path.join(self.run_dir, "plots", "latency.svg"))[2])
        self.assertIn(FOOTER, text)
        self.assertIn("vCPUs", text)

    def test_data_files_only_select_tidy_rows(self):
        """Every number drawn is in a tidy file: each row of each data file
        the driver wrote equals (on its columns) a row of its source."""
        with open(os.path.join(self.run_dir, "plots", "plots.json")) as f:
            index = json.load(f)["plots"]
        seen = set()
        for plot in index:
            for data in plot["data"]:
                name = os.path.basename(data)[:-4]
                seen.add(name)
                got = rows_of(os.path.join(self.run_dir, data))
                self.assertTrue(got, data)
                if name in PIVOTS:
                    self.assert_pivot_of_tidy(got, *PIVOTS[name])
                    continue
                src = rows_of(os.path.join(self.run_dir, "tidy", SOURCES[name]))
                cols = [c for c in got[0] if c in src[0]]
                self.assertEqual(cols, list(got[0]), f"{data}: a column not in the tidy file")
                have = {tuple(r[c] for c in cols) for r in src}
                for r in got:
                    self.assertIn(tuple(r[c] for c in cols), have, data)
        # the fixture's answer is a throughput: no latency labels
        self.assertEqual(seen, (set(SOURCES) | set(PIVOTS))
                         - {"crossover", "latency-verdicts"})

    def assert_pivot_of_tidy(self, got, source, keys, metrics):
        """Each row's value in each metric column is the value of that
        metric's row of the source for the row's keys (or empty: no row),
        and its other columns are that row's."""
        src = {}
        for r in rows_of(os.path.join(self.run_dir, "tidy", source)):
            src[tuple(r[k] for k in keys) + (r["metric"],)] = r
        for r in got:
            rows = [src.get(tuple(r[k] for k in keys) + (m,)) for m in metrics]
            for m, s in zip(metrics, rows):
                self.assertEqual(r[m], s["value"] if s else "", (r, m))
            s = next(x for x in rows if x)
            for c in r:
                if c not in metrics:
                    self.assertEqual(r[c], s[c], (r, c))

    def test_cdf_is_the_most_contended_cell(self):
        rows = rows_of(os.path.join(self.run_dir, "plots", "data", "cdf.csv"))
        self.assertEqual({(r["cpus"], r["point"]) for r in rows}, {("4", "p2")})
        self.assertEqual({r["op"] for r in rows}, {"lookup", "write"})

    def test_gnuplot_commands_replayable(self):
        with open(os.path.join(self.run_dir, "plots", "gnuplot-commands.txt")) as f:
            cmds = [ln for ln in f if ln.startswith("/") or ln.startswith("gnuplot")]
        self.assertEqual(len(cmds), len(DRAWN))
        self.assertIn("infile=", cmds[0])

class TestLayout(FixtureRun):
    """The plots read at a glance: what a person would check on the PNGs,
    checked on the SVGs (laid out like the PNGs, plots/gnuplot/style.gp) as headless
    Chromium draws them."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.layout = svg_layout({n: os.path.join(cls.run_dir, "plots", n + ".svg")
                                 for n in DRAWN}, cls.tmp)

    def test_no_text_cut_or_overlapping_and_keys_outside(self):
        for name in DRAWN:
            with self.subTest(plot=name):
                self.assertEqual(layout_problems(name, self.layout[name]), [])
                keys = {t["text"] for t in self.layout[name]["texts"] if t["key"]}
                self.assertTrue({"before", "after"} <= keys or
                                {"before p99", "after p99"} <= keys or
                                {"before median", "after median"} <= keys, keys)

    def test_titles_inside_the_image(self):
        for name in DRAWN:
            lay = self.layout[name]
            w, h = lay["size"]
            top = min(b[1] for b in lay["borders"])
            titles = [t for t in lay["texts"] if not t["rotated"] and not t["key"]
                      and t["box"][1] + t["box"][3] <= top]
            with self.subTest(plot=name):
                self.assertGreaterEqual(len(titles), 2)   # the plot's, a panel's
                for t in titles:
                    x, y, tw, th = t["box"]
                    self.assertGreater(y, 0, t["text"])
                    self.assertLessEqual(x + tw, w, t["text"])
                    self.assertGreaterEqual(x, 0, t["text"])

    def test_layout_check_catches_problems(self):
        """Negative control: a key entry moved onto the data and a title
        moved over the top edge are reported."""
        with open(os.path.join(self.run_dir, "plots", "throughput.svg"),
                  encoding="utf-8") as f:
            svg = f.read()
        title = re.search(r'translate\(([\d.]+),[\d.]+\)([^>]*>\s*<text>mboxes_lock: )',
                          svg)
        svg = svg.replace(title.group(0), f"translate({title.group(1)},4.00)"
                          + title.group(2))
        key = re.search(r'translate\([\d.]+,[\d.]+\)([^>]*>\s*<text>before</text>)', svg)
        border = self.layout["throughput"]["borders"][0]
        svg = svg.replace(key.group(0), f"translate({border[0] + 60:.2f},"
                          f"{border[1] + 60:.2f})" + key.group(1))
        bad = os.path.join(self.tmp, "bad-throughput.svg")
        with open(bad, "w", encoding="utf-8") as f:
            f.write(svg)
        problems = "\n".join(layout_problems(
            "bad", svg_layout({"bad": bad}, self.tmp)["bad"]))
        self.assertRegex(problems, r"text 'mboxes_lock: .* is cut")
        self.assertIn("key entry 'before' lies over the plot area", problems)

    def test_log_axis_where_a_panel_spans_a_decade(self):
        """latency: a log y axis on each panel whose medians and CI ends
        span more than 10x (the fixture has one, write:p1), only there."""
        rows = rows_of(os.path.join(self.run_dir, "plots", "data", "latency.csv"))
        vals = {}
        for r in rows:
            vals.setdefault(f"{r['metric'].split('_')[0]}:{r['point']}", []).extend(
                float(r[c]) for c in ("median", "ci_lo", "ci_hi"))
        wide = {p for p, v in vals.items() if max(v) > 10 * min(v)}
        self.assertEqual(wide, {"write:p1"})   # the fixture's spread
        self.assertEqual(set(self.gnuplot_var("latency", "logpanels").split()), wide)
        texts = self.svg_texts("latency")
        self.assertEqual(texts.count("(log scale)"), len(wide))
        for tick in ("1k", "10k", "100k"):   # decades on the log axis
            self.assertIn(tick, texts)
        # throughput spans less than 10x: linear, no "(log scale)"
        self.assertEqual(self.gnuplot_var("throughput", "logpanels"), "")
        self.assertNotIn("(log scale)", self.svg_texts("throughput"))

    def test_starvation_has_no_one_vcpu_panel(self):
        rows = rows_of(os.path.join(self.run_dir, "plots", "data", "starvation.csv"))
        self.assertEqual({r["cpus"] for r in rows}, {"2", "4"})
        self.assertEqual(self.gnuplot_var("starvation", "cpuslist"), "2 4")
        texts = self.svg_texts("starvation")
        self.assertNotIn("1 vCPUs", texts)
        self.assertIn("2 vCPUs", texts)

    def verdict_labels(self, plot):
        """The "after: VERDICT" labels of a plot, each whole (a label
        broken into lines in a crowded panel is joined again)."""
        return verdict_labels(self.layout[plot]["texts"])

    def test_verdict_label_beside_each_compared_point(self):
        """The answer's verdict beside each compared point whose answer
        the figure draws: the fixture's answer is throughput_ops_s, so
        the throughput figure has a label per cell and the latency figure
        none (its exploratory verdicts are in report.html's table; a
        latency answer's labels: tests/unit/test_one_answer.py)."""
        comps = rows_of(os.path.join(self.run_dir, "tidy", "comparisons.csv"))
        for plot, metrics, n in (("throughput", ["throughput_ops_s"], 6),
                                 ("latency", ["lookup_lat_mean_ns",
                                              "write_lat_mean_ns"], 0)):
            want = sorted(f"{r['variant']}: {r['verdict']}" for r in comps
                          if r["metric"] in metrics and r["verdict"]
                          and r["role"] == "primary")
            with self.subTest(plot=plot):
                self.assertEqual(len(want), n)
                labels = self.verdict_labels(plot)
                self.assertEqual(sorted(t["text"] for t in labels), want)
                for t in labels:   # in a panel, never outside
                    self.assertTrue(any(b[0] <= t["box"][0] and
                                        t["box"][0] + t["box"][2] <= b[0] + b[2] and
                                        b[1] <= t["box"][1] <= b[1] + b[3]
                                        for b in self.layout[plot]["borders"]), t)


class TestSteal(FixtureRun):
    """steal.png: each boot's throughput against its host steal, a panel
    per point and vCPU count, the flag threshold as a vertical line."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.layout = svg_layout({"steal": os.path.join(cls.run_dir, "plots", "steal.svg")},
                                cls.tmp)["steal"]

    def test_a_marker_per_boot_and_point(self):
        samples = rows_of(os.path.join(FIXTURE, "tidy", "samples.csv"))
        want = {(r["cell"], r["point"]) for r in samples if r["metric"] == "steal_max_pct"}
        self.assertEqual(len(want), 70)   # 35 boots done x 2 points
        rows = rows_of(os.path.join(self.run_dir, "plots", "data", "steal.csv"))
        self.assertEqual({(r["cell"], r["point"]) for r in rows}, want)
        self.assertEqual(len(rows), len(want))

    def test_panels_per_point_and_vcpu_count(self):
        self.assertEqual(self.gnuplot_var("steal", "panels"),
                         "p1:1 p1:2 p1:4 p2:1 p2:2 p2:4")
        titles = [t["text"] for t in self.layout["texts"] if "reads), " in t["text"]]
        self.assertEqual(titles, ["p1 (95% reads), 1 vCPU", "p1 (95% reads), 2 vCPUs",
                                  "p1 (95% reads), 4 vCPUs*", "p2 (50% reads), 1 vCPU",
                                  "p2 (50% reads), 2 vCPUs", "p2 (50% reads), 4 vCPUs*"])
        self.assertEqual(len({tuple(b) for b in self.layout["borders"]}), 6)

    def test_log_y_with_labelled_ticks_in_every_panel(self):
        texts = self.svg_texts("steal")
        self.assertEqual(texts.count("(log scale)"), 6)
        for i in range(1, 7):
            ticks = self.gnuplot_var("steal", f"yt{i}").split()
            self.assertGreaterEqual(len(ticks), 2, i)
        # each panel's tick labels are drawn (a tick at an axis' end too)
        for label in ("150k", "200k", "300k", "500k", "700k", "1M", "1.5M"):
            self.assertIn(label, texts)

    def test_flag_threshold_line_in_every_panel(self):
        """The dashed line of plots/gnuplot/steal.gp (#666666) stands vertical at
        STEAL_FLAG_PCT on each panel's x axis (0 to xmax)."""
        self.assertEqual(float(self.gnuplot_var("steal", "flag")), STEAL_FLAG_PCT)
        xmax = float(self.gnuplot_var("steal", "xmax"))
        self.assertEqual(xmax, 100)
        with open(os.path.join(self.run_dir, "plots", "steal.svg"), encoding="utf-8") as f:
            svg = f.read()
        lines = [(float(a), float(b), float(c), float(d)) for a, b, c, d in re.findall(
            r"stroke='rgb\(102, 102, 102\)'[^>]*d='M([\d.]+),([\d.]+) L([\d.]+),([\d.]+)", svg)]
        vertical = [ln for ln in lines if abs(ln[0] - ln[2]) < 0.01]
        borders = {tuple(b) for b in self.layout["borders"]}
        self.assertEqual(len(vertical), len(borders))
        for b in borders:
            x = b[0] + b[2] * STEAL_FLAG_PCT / xmax
            self.assertTrue(any(abs(ln[0] - x) < 1.5 and b[1] - 1 <= min(ln[1], ln[3])
                                and max(ln[1], ln[3]) <= b[1] + b[3] + 1
                                for ln in vertical), (b, vertical))
        keys = {t["text"] for t in self.layout["texts"] if t["key"]}
        self.assertEqual(keys, {"before", "after", "flag: steal_max_pct > 10%"})

    def test_setup_footer_states_tcg_cores_and_n(self):
        self.assertIn(FOOTER, " ".join(self.svg_texts("steal")))

    def test_in_the_report_after_throughput(self):
        with open(self.html, encoding="utf-8") as f:
            page = f.read()
        self.assertLess(page.index('<figure id="throughput">'),
                        page.index('<figure id="steal">'))
        self.assertLess(page.index('<figure id="steal">'),
                        page.index('<figure id="lockstat">'))
        cap = re.search(r'<figure id="steal">.*?<figcaption>(.*?)</figcaption>', page, re.S)
        self.assertIn("Look at the low markers: right of the line", cap.group(1))

    def test_log_ticks(self):
        lo, hi, ticks = select.log_ticks([550e3, 670e3])     # less than a decade
        self.assertEqual((lo, hi), (500e3, 1e6))
        self.assertEqual(ticks, [500e3, 700e3, 1e6])
        lo, hi, ticks = select.log_ticks([1200, 90e3])       # a collapse: 2 decades
        self.assertEqual((lo, hi, ticks), (1e3, 100e3, [1e3, 2e3, 5e3, 10e3, 20e3,
                                                        50e3, 100e3]))
        lo, hi, ticks = select.log_ticks([1200, 150e3])      # up to 3: 1 and 3
        self.assertEqual((lo, hi, ticks), (1e3, 300e3, [1e3, 3e3, 10e3, 30e3,
                                                        100e3, 300e3]))
        lo, hi, ticks = select.log_ticks([500, 900e3])       # more: decades only
        self.assertEqual((lo, hi), (100, 1e6))
        self.assertEqual(ticks, [100, 1e3, 10e3, 100e3, 1e6])


class TestCrossover(unittest.TestCase):
    """crossover.png on tests/unit/fixtures/plots/crossover, a sweep in
    small (make_plots_fixture.py --grid): mailboxes 4 and 256 x reads 50
    and 95% x think_ns 0 and 100000 at 1 and 2 vCPUs, before vs after."""

    PLOTS = ["throughput", "crossover", "steal"]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-plots-")
        cls.run_dir = os.path.join(cls.tmp, "run")
        copy_run(CROSSOVER, cls.run_dir)
        cls.written, cls.warnings = quiet(mp.make_plots, cls.run_dir, cls.PLOTS)
        cls.html, _ = rh.write_reports(cls.run_dir)
        cls.layout = svg_layout({n: os.path.join(cls.run_dir, "plots", n + ".svg")
                                 for n in ("crossover", "steal")}, cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def var(self, name):
        return gnuplot_var(self.run_dir, "crossover", name)

    def comparisons(self):
        return [r for r in rows_of(os.path.join(CROSSOVER, "tidy", "comparisons.csv"))
                if r["metric"] == "throughput_ops_s"]

    def test_written_sized_and_coloured(self):
        self.assertEqual(sorted(os.path.basename(p) for p in self.written),
                         sorted(f"{n}.{e}" for n in self.PLOTS for e in ("png", "svg")))
        self.assertEqual(self.warnings, "")
        w, h, colours = png_pixels(os.path.join(self.run_dir, "plots", "crossover.png"))
        self.assertEqual((w, h), (1000, 770))
        # the key's teal (better) and brown (worse), the scale's white middle
        for c in ((0x35, 0x97, 0x8f), (0xbf, 0x81, 0x2d)):
            self.assertIn(c, colours)
        self.assertGreater(len(colours), 50)

    def test_a_panel_per_vcpu_count_and_think_time(self):
        self.assertEqual((self.var("npan"), self.var("ncols"), self.var("nrows")),
                         ("4", "2", "2"))
        self.assertEqual((self.var("mblist"), self.var("rplist")), ("4 256", "50 95"))
        texts = [t["text"] for t in self.layout["crossover"]["texts"]]
        for title in ("1 vCPU, tight loop (think_ns 0)",
                      "1 vCPU, 100 us pause between ops (think_ns 100000)",
                      "2 vCPUs, tight loop (think_ns 0)",
                      "2 vCPUs, 100 us pause between ops (think_ns 100000)"):
            self.assertIn(title, texts)
        self.assertEqual(len({tuple(b) for b in self.layout["crossover"]["borders"]}), 4)

    def test_data_is_the_primary_comparisons(self):
        got = rows_of(os.path.join(self.run_dir, "plots", "data", "crossover.csv"))
        src = self.comparisons()
        self.assertEqual(len(got), len(src))
        self.assertEqual(len(got), 16)
        cols = [c for c in got[0] if c != "better"]
        have = {tuple(r[c] for c in cols) for r in src}
        for r in got:
            self.assertIn(tuple(r[c] for c in cols), have)
            # the way its metric is better: the tile's colour turns with it
            self.assertEqual(r["better"], "higher")

    def test_each_tile_shows_its_ratio_and_verdict_in_its_place(self):
        """Each comparison's ratio (3 decimals) and verdict are written in
        its tile: in its panel's plot area, left for 4 mailboxes, right for
        256, low for 50% reads, high for 95%, the verdict under the ratio."""
        lay = self.layout["crossover"]
        texts = lay["texts"]
        borders = sorted({tuple(b) for b in lay["borders"]}, key=lambda b: (b[1], b[0]))
        titles = {t["text"]: t for t in texts if "think_ns" in t["text"]}
        with open(os.path.join(CROSSOVER, "manifest.json")) as f:
            points = {p["id"]: p for p in json.load(f)["campaign"]["points"]}

        def panel_of(r):
            p = points[r["point"]]
            c = int(r["cpus"])
            title = (f"{c} vCPU{'s' if c > 1 else ''}, " +
                     ("tight loop (think_ns 0)" if not p["think_ns"] else
                      "100 us pause between ops (think_ns 100000)"))
            t = titles[title]["box"]
            # the plot area right under the title
            return min((b for b in borders if b[1] > t[1]), key=lambda b: b[1] - t[1]
                       + abs(b[0] + b[2] / 2 - t[0] - t[2] / 2))
        for r in self.comparisons():
            with self.subTest(cpus=r["cpus"], point=r["point"]):
                b = panel_of(r)
                p = points[r["point"]]
                xi = 0 if p["mailboxes"] == 4 else 1
                yi = 1 if p["read_pct"] == 50 else 0     # screen y grows down
                tile = (b[0] + xi * b[2] / 2, b[1] + yi * b[3] / 2, b[2] / 2, b[3] / 2)

                def inside(t):
                    x, y, w, h = t["box"]
                    return (tile[0] <= x and x + w <= tile[0] + tile[2] and
                            tile[1] <= y and y + h <= tile[1] + tile[3])
                ratio = [t for t in texts if t["text"] == f"{float(r['ratio']):.3f}"
                         and inside(t)]
                self.assertEqual(len(ratio), 1, r["ratio"])
                verdict = r["verdict"].split(" (")[0]
                under = [t for t in texts if t["text"] == verdict and inside(t)
                         and t["box"][1] > ratio[0]["box"][1]]
                self.assertEqual(len(under), 1, r["verdict"])
                if " (" in r["verdict"]:
                    detail = r["verdict"][r["verdict"].index(" (") + 1:]
                    self.assertTrue([t for t in texts if t["text"] == detail
                                     and inside(t)], detail)
                # the tile's colour (the PNG is laid out as the SVG), away
                # from its text: teal (more green than red) where the ratio
                # is above 1, brown (more red than blue) below
                rgb = png_rgb(os.path.join(self.run_dir, "plots", "crossover.png"),
                              tile[0] + 8, tile[1] + 8)
                ratio = float(r["ratio"])
                if ratio > 1.03:
                    self.assertGreater(rgb[1], rgb[0], (ratio, rgb))
                elif ratio < 0.97:
                    self.assertGreater(rgb[0], rgb[2], (ratio, rgb))

    def test_colour_scale_centred_on_one(self):
        cbmax = float(self.var("cbmax"))
        ratios = [float(r["ratio"]) for r in self.comparisons()]
        far = max(max(x, 1 / x) for x in ratios)
        self.assertGreaterEqual(cbmax, far)
        ticks = [float(x) for x in self.var("cbtics").split()]
        self.assertIn(1.0, ticks)
        self.assertEqual(sorted(ticks), ticks)
        for a, b in zip(ticks, reversed(ticks)):    # symmetric on a log scale
            self.assertAlmostEqual(a * b, 1, places=2)
        self.assertIn("after / before (log scale)",
                      [t["text"] for t in self.layout["crossover"]["texts"]])

    def test_layout_key_and_footer(self):
        for name in ("crossover", "steal"):
            with self.subTest(plot=name):
                self.assertEqual(layout_problems(name, self.layout[name]), [])
        keys = {t["text"] for t in self.layout["crossover"]["texts"] if t["key"]}
        self.assertEqual(keys, {"better than the baseline", "worse than the baseline",
                                "no ratio"})
        text = " ".join(t["text"] for t in self.layout["crossover"]["texts"])
        self.assertIn("QEMU TCG emulation, 1, 2 vCPUs on 2 host cores, n=6 boots "
                      "per variant", text)
        # 16 panels of steal, four a row
        self.assertEqual(len({tuple(b) for b in self.layout["steal"]["borders"]}), 16)
        self.assertEqual(gnuplot_var(self.run_dir, "steal", "ncols"), "4")

    def test_in_the_report_after_throughput(self):
        with open(self.html, encoding="utf-8") as f:
            page = f.read()
        self.assertLess(page.index('<figure id="throughput">'),
                        page.index('<figure id="crossover">'))
        cap = re.search(r'<figure id="crossover">.*?<figcaption>(.*?)</figcaption>', page, re.S)
        self.assertIn("Look for the border between teal and brown", cap.group(1))
        self.assertEqual(broken_images(self.html, self.tmp), [])


class TestCrossoverCases(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-plots-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.run = os.path.join(self.tmp, "run")
        copy_run(CROSSOVER, self.run)

    def test_not_drawn_unless_two_keys_vary(self):
        """The main fixture varies read_pct only: no heat map, no warning
        (a warning when asked for by name)."""
        run = copy_fixture(tempfile.mkdtemp(dir=self.tmp))
        written, warn = quiet(mp.make_plots, run, None)
        self.assertNotIn("crossover.png", [os.path.basename(p) for p in written])
        self.assertNotIn("crossover", warn)
        written, warn = quiet(mp.make_plots, run, ["crossover"])
        self.assertEqual(written, [])
        self.assertIn("no crossover plot: the campaign's points vary over read_pct "
                      "of mailboxes, read_pct, think_ns, not two", warn)

    def test_two_keys_without_think_time(self):
        """Mailboxes x reads at one think time (a manifest from before
        think_ns: none in its points) is enough: a panel per vCPU count."""
        keep_points(self.run, ["m4-r50-t0", "m4-r95-t0", "m256-r50-t0", "m256-r95-t0"])
        with open(os.path.join(self.run, "manifest.json")) as f:
            m = json.load(f)
        for p in m["campaign"]["points"]:
            del p["think_ns"]
        with open(os.path.join(self.run, "manifest.json"), "w") as f:
            json.dump(m, f)
        written, warn = quiet(mp.make_plots, self.run, ["crossover"])
        self.assertEqual(len(written), 2, warn)
        self.assertEqual((gnuplot_var(self.run, "crossover", "npan"),
                          gnuplot_var(self.run, "crossover", "ncols")), ("2", "1"))
        lay = svg_layout({"c": os.path.join(self.run, "plots", "crossover.svg")},
                         self.tmp)["c"]
        self.assertEqual(layout_problems("crossover", lay), [])

    def test_control_pair_left_out_and_lower_is_better(self):
        """The A/A control (role control) draws no panel; a primary metric
        where lower is better turns the colours round (teal still better)."""
        path = os.path.join(self.run, "tidy", "comparisons.csv")
        rows = rows_of(path)
        extra = [dict(r, variant="before~aa", role="control", verdict="harm")
                 for r in rows if r["metric"] == "throughput_ops_s"]
        for r in rows + extra:
            if r["metric"] == "throughput_ops_s":
                r["metric"] = "lookup_lat_median_ns"
        write_rows(path, rows + extra, list(rows[0]))
        with open(os.path.join(self.run, "manifest.json")) as f:
            m = json.load(f)
        m["campaign"]["primary_metric"] = "lookup_lat_median_ns"
        m["campaign"]["variants"].append("before~aa")
        m["builds"]["before~aa"] = m["builds"]["before"]
        with open(os.path.join(self.run, "manifest.json"), "w") as f:
            json.dump(m, f)
        written, warn = quiet(mp.make_plots, self.run, ["crossover"])
        self.assertEqual(len(written), 2, warn)
        data = rows_of(os.path.join(self.run, "plots", "data", "crossover.csv"))
        self.assertEqual({r["variant"] for r in data}, {"after"})
        self.assertEqual(gnuplot_var(self.run, "crossover", "npan"), "4")
        self.assertEqual({r["better"] for r in data}, {"lower"})

    def test_no_comparisons_is_skipped_with_a_warning(self):
        path = os.path.join(self.run, "tidy", "comparisons.csv")
        rows = rows_of(path)
        write_rows(path, [r for r in rows if r["metric"] != "throughput_ops_s"],
                   list(rows[0]))
        written, warn = quiet(mp.make_plots, self.run, ["crossover", "steal"])
        self.assertEqual([os.path.basename(p) for p in written], ["steal.png", "steal.svg"])
        self.assertIn("no crossover plot: no primary row in tidy/comparisons.csv",
                      warn)


class TestReport(FixtureRun):

    def read(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def test_html_static_and_ordered(self):
        page = self.read(self.html)
        self.assertNotIn("<script", page.lower())
        self.assertNotRegex(page, r"(src|href)=\"(https?:)?//")
        self.assertNotIn("@import", page)
        table, setup, img = (page.index("<table"), page.index("QEMU TCG emulation"),
                             page.index("<img"))
        self.assertLess(table, setup)
        self.assertLess(setup, img)
        # the primary metric's table first: its heading, then the rows
        self.assertIn("Verdicts: throughput_ops_s", page[:table])
        first = page[table:page.index("</table>")]
        self.assertNotIn("lookup_lat", first)
        self.assertIn("[", first)   # ratio [CI]
        self.assertRegex(first, r"better|no harm|harm|inconclusive")

    def test_html_images_exist_with_alt(self):
        page = self.read(self.html)
        imgs = re.findall(r"<img [^>]*>", page)
        self.assertEqual(len(imgs), len(DRAWN))
        for tag in imgs:
            src = re.search(r'src="([^"]+)"', tag).group(1)
            self.assertTrue(src.startswith("plots/") and src.endswith(".png"), src)
            self.assertRegex(tag, r'alt="[^"]{20,}"')
            self.assertEqual(png_info(os.path.join(self.run_dir, src))[:2],
                             SIZES[os.path.basename(src)[:-4]])
        self.assertEqual(page.count("<figcaption>"), len(DRAWN))

    def test_markdown(self):
        md = self.read(self.md)
        self.assertTrue(md.startswith("# fixture: after vs before"))
        self.assertIn("| vCPUs", md)
        self.assertLess(md.index("| vCPUs"), md.index("QEMU TCG emulation"))
        for name in DRAWN:
            self.assertIn(f"](plots/{name}.png)", md)
        self.assertRegex(md, r"\n\[\d+\] every value is 0 on both sides\n")
        self.assertRegex(md, r"\n\[\d+\] host steal above 10% in ")

    def test_verdicts_from_comparisons_csv(self):
        # the one comparisons file: what report last judged is what the
        # page shows (a summary.csv of an older run is not read)
        src = os.path.join(self.run_dir, "tidy", "comparisons.csv")
        with open(src, encoding="utf-8") as f:
            saved = f.read()
        rows = rows_of(src)
        for r in rows:
            r["verdict"] = "harm"
        write_rows(src, rows, list(rows[0]))
        old = os.path.join(self.run_dir, "summary.csv")
        write_rows(old, [dict(r, verdict="better") for r in rows], list(rows[0]))
        try:
            html_path, _ = rh.write_reports(self.run_dir)
            page = self.read(html_path)
            self.assertIn("From tidy/comparisons.csv", page)
            self.assertNotIn(">better<", page)
        finally:
            os.unlink(old)
            with open(src, "w", encoding="utf-8") as f:
                f.write(saved)
            rh.write_reports(self.run_dir)


class TestChromium(FixtureRun):

    def test_screenshot_not_blank(self):
        shot = os.path.join(self.tmp, "shot.png")
        p = chromium(["--window-size=1300,1400", f"--screenshot={shot}",
                      "file://" + self.html], self.tmp)
        self.assertTrue(os.path.isfile(shot), p.stderr[-500:])
        w, h, _, _, idat = png_info(shot)
        self.assertEqual((w, h), (1300, 1400))
        raw = zlib.decompress(idat)
        self.assertGreater(len(set(raw[::97])), 10, "blank screenshot")

    def test_every_image_rendered(self):
        rendered = rendered_images(self.html, self.tmp)
        self.assertEqual(len(rendered), len(DRAWN))
        self.assertEqual(broken_images(self.html, self.tmp), [])

    def test_broken_image_is_caught(self):
        """Negative control: the check above fails when an image is broken."""
        d = os.path.join(self.tmp, "broken")
        shutil.copytree(self.run_dir, d)
        target = os.path.join(d, "plots", "throughput.png")
        with open(target, "r+b") as f:
            f.seek(40)
            f.write(b"\0" * 200)
        self.assertEqual(broken_images(os.path.join(d, "report.html"), self.tmp),
                         ["plots/throughput.png"])


class TestEdgeCases(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-plots-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_three_variants_and_an_empty_panel(self):
        run = copy_fixture(self.tmp)
        add_variant(run)
        # a point without write latencies (as with 100% reads)
        path = os.path.join(run, "tidy", "medians.csv")
        rows = rows_of(path)
        write_rows(path, [r for r in rows if not (r["point"] == "p1" and
                                                  r["metric"].startswith("write_lat"))],
                   list(rows[0]))
        written, warn = quiet(mp.make_plots, run)
        self.assertEqual(len(written), 2 * len(DRAWN), warn)
        _, _, colours = png_pixels(os.path.join(run, "plots", "latency.png"))
        for c in VCOLOURS:
            self.assertIn(c, colours)
        self.assertIn("no data", svg_text(svg_info(
            os.path.join(run, "plots", "latency.svg"))[2]))
        html_path, _ = rh.write_reports(run)
        with open(html_path, encoding="utf-8") as f:
            self.assertIn("rcu vs before", f.read())

    def test_one_point_titles_fit(self):
        """One workload point: a short lockstat.png, whose panel titles
        overlapped the plot's title before the layout was in pixels."""
        run = copy_fixture(self.tmp)
        keep_points(run, ["p1"])
        written, warn = quiet(mp.make_plots, run)
        self.assertEqual(len(written), 2 * len(DRAWN), warn)
        lay = svg_layout({n: os.path.join(run, "plots", n + ".svg")
                          for n in DRAWN}, self.tmp)
        for name in DRAWN:
            self.assertEqual(layout_problems(name, lay[name]), [])

    def test_verdicts_shown_whole_and_fitted(self):
        """Three variants, verdicts of any text (a comma, <, a non-ASCII
        character): each label shows its verdict whole, none overlaps."""
        run = copy_fixture(self.tmp)
        add_variant(run)
        path = os.path.join(run, "tidy", "comparisons.csv")
        rows = rows_of(path)
        texts = ["inconclusive (n≈14)", "no harm", "inconclusive (n<6)",
                 "conflict, see notes", "uncalibrated", "worse"]
        for i, r in enumerate(rows):
            if r["verdict"]:
                r["verdict"] = texts[i % len(texts)]
        write_rows(path, rows, list(rows[0]))
        written, warn = quiet(mp.make_plots, run, ["throughput", "latency"])
        self.assertEqual(len(written), 4, warn)
        lay = svg_layout({n: os.path.join(run, "plots", n + ".svg")
                          for n in ("throughput", "latency")}, self.tmp)
        for name in ("throughput", "latency"):
            self.assertEqual(layout_problems(name, lay[name]), [])
        texts = lay["throughput"]["texts"]
        shown = {t["text"] for who in ("after:", "rcu:")
                 for t in verdict_labels(texts, who)}
        for r in rows:
            if r["metric"] == "throughput_ops_s" and r["verdict"]:
                self.assertIn(f"{r['variant']}: {r['verdict']}", shown)
        for who in ("after:", "rcu:"):
            self.assertTrue(verdict_labels(texts, who), who)

    def crowded_run(self):
        """A run like a real campaign with an A/A control: variants before,
        after, rcu (both compared with before) and before~aa (the control:
        before booted again, role `control` in comparisons.csv), long
        verdicts on every pair, and a write latency panel (p1) spanning
        1k to 1M, so that its log axis has a tick label ("100k") level with
        the y label's second line "(log scale)"."""
        run = copy_fixture(self.tmp)
        add_variant(run, "rcu", "after")
        add_variant(run, "before~aa", "before")
        scaled = ("write_lat_mean_ns", "p1", "4")
        path = os.path.join(run, "tidy", "medians.csv")
        rows = rows_of(path)
        for r in rows:
            if (r["metric"], r["point"], r["cpus"]) == scaled:
                for c in ("median", "ci_lo", "ci_hi", "min", "q25", "q75", "max"):
                    r[c] = str(float(r[c]) * 10)
        write_rows(path, rows, list(rows[0]))
        path = os.path.join(run, "tidy", "comparisons.csv")
        rows = rows_of(path)
        texts = ["inconclusive (n≈23)", "inconclusive (Holm)",
                 "inconclusive (failed 2 vs 1)", "inconclusive (n≈280)"]
        control = []
        for i, r in enumerate(rows):
            if (r["metric"], r["point"], r["cpus"]) == scaled:
                for c in ("median_base", "median_var", "ci_lo_base", "ci_hi_base",
                          "ci_lo_var", "ci_hi_var"):
                    r[c] = str(float(r[c]) * 10) if r[c] else ""
            if r["verdict"]:
                r["verdict"] = texts[i % len(texts)]
            # a campaign answered on latencies too, so that the latency
            # figure has the answer's labels to crowd
            if r["metric"] in ("lookup_lat_mean_ns", "write_lat_mean_ns"):
                r["role"] = "primary"
            if r["variant"] == "after":
                control.append(dict(r, variant="before~aa", role="control",
                                    verdict=texts[(i + 1) % len(texts)]))
        write_rows(path, rows + control, list(rows[0]))
        return run

    def test_crowded_verdicts_and_log_label_do_not_overlap(self):
        """Reproduces a real run's latency.png: "(log scale)" lay on the
        log axis' tick labels, and the A/A control's verdicts were drawn
        among (and over) the compared pairs'.  The control pair gets no
        label, the labels of after and rcu at one vCPU count form a list,
        and no text is cut or on another; a comparisons.csv without the
        role column (older runs) has all its pairs drawn."""
        run = self.crowded_run()
        written, warn = quiet(mp.make_plots, run, ["latency", "throughput"])
        self.assertEqual(len(written), 4, warn)
        with open(os.path.join(run, "plots", "gnuplot-commands.txt")) as f:
            cmd = next(shlex.split(ln) for ln in f if "/latency.gp" in ln)
        self.assertIn("write:p1", re.search(r"(?:^|; )logpanels='([^']*)'",
                                            cmd[cmd.index("-e") + 1]).group(1).split())
        lay = svg_layout({n: os.path.join(run, "plots", n + ".svg")
                          for n in ("latency", "throughput")}, self.tmp)
        for name in ("latency", "throughput"):
            with self.subTest(plot=name):
                self.assertEqual(layout_problems(name, lay[name]), [])
                texts = lay[name]["texts"]
                self.assertEqual(verdict_labels(texts, "before~aa:"), [])
                n = 12 if name == "latency" else 6   # verdict rows per variant
                for who in ("after:", "rcu:"):
                    labels = verdict_labels(texts, who)
                    self.assertEqual(len(labels), n, who)
                    for t in labels:
                        self.assertRegex(t["text"], r": inconclusive \((n≈2|Holm|failed)")
        self.assertIn("(log scale)", [t["text"] for t in lay["latency"]["texts"]])
        rows = self.verdict_data(run, "latency")
        self.assertEqual({r["variant"] for r in rows}, {"after", "rcu"})
        # no role column: every pair, the control's included
        path = os.path.join(run, "tidy", "comparisons.csv")
        rows = rows_of(path)
        header = [c for c in rows[0] if c != "role"]
        write_rows(path, [{c: r[c] for c in header} for r in rows], header)
        quiet(mp.make_plots, run, ["throughput"])
        lay = svg_layout({"t": os.path.join(run, "plots", "throughput.svg")},
                         self.tmp)["t"]
        self.assertEqual(layout_problems("throughput", lay), [])
        self.assertEqual(len(verdict_labels(lay["texts"], "before~aa:")), 6)

    def verdict_data(self, run, plot):
        return rows_of(os.path.join(run, "plots", "data", f"{plot}-verdicts.csv"))

    def test_verdict_labels_from_comparisons_csv(self):
        run = copy_fixture(self.tmp)
        path = os.path.join(run, "tidy", "comparisons.csv")
        rows = rows_of(path)
        for r in rows:
            r["verdict"] = "harm"
        write_rows(path, rows, list(rows[0]))
        # an older run's summary.csv is not read
        write_rows(os.path.join(run, "summary.csv"),
                   [dict(r, verdict="better") for r in rows], list(rows[0]))
        quiet(mp.make_plots, run, ["throughput"])
        text = svg_text(svg_info(os.path.join(run, "plots", "throughput.svg"))[2])
        self.assertEqual(text.count("after: harm"), 6)
        self.assertNotIn("after: better", text)

    def test_starvation_without_more_than_one_vcpu_is_skipped(self):
        run = copy_fixture(self.tmp)
        path = os.path.join(run, "tidy", "medians.csv")
        rows = rows_of(path)
        write_rows(path, [r for r in rows if r["cpus"] == "1"], list(rows[0]))
        written, warn = quiet(mp.make_plots, run, ["starvation", "throughput"])
        self.assertEqual([os.path.basename(p) for p in written],
                         ["throughput.png", "throughput.svg"])
        self.assertIn("no starvation plot: only 1-vCPU", warn)

    def test_log_axis_follows_the_data(self):
        """throughput: p2's 4-vCPU medians and CIs a hundredth of the rest
        make p2's panel span more than 10x: a log axis there, not on p1."""
        run = copy_fixture(self.tmp)
        path = os.path.join(run, "tidy", "medians.csv")
        rows = rows_of(path)
        for r in rows:
            if (r["metric"], r["point"], r["cpus"]) == ("throughput_ops_s", "p2", "4"):
                for c in ("median", "ci_lo", "ci_hi"):
                    r[c] = str(float(r[c]) / 100)
        write_rows(path, rows, list(rows[0]))
        quiet(mp.make_plots, run, ["throughput"])
        with open(os.path.join(run, "plots", "gnuplot-commands.txt")) as f:
            self.assertIn("logpanels='p2'", shlex.split(f.read().splitlines()[1])[2])
        texts = [t.strip() for t in svg_info(os.path.join(
            run, "plots", "throughput.svg"))[2].itertext()]
        self.assertEqual(texts.count("(log scale)"), 1)
        for tick in ("1k", "10k", "100k"):
            self.assertIn(tick, texts)

    def test_long_footer_on_two_lines(self):
        """A setup line too long for one line at 8 pt is cut in two at a
        comma, not by the image's edge."""
        run = copy_fixture(self.tmp)
        with open(os.path.join(run, "manifest.json")) as f:
            m = json.load(f)
        m["host"]["qemu_guests"] = {"arm": "qemu-system-arm -M virt,cortex-a15",
                                    "arm64": "qemu-system-aarch64 -M virt"}
        m["builds"]["after"].update(arch="arm64",
                                    kernel_version="6.1.192-rt71-a-long-localversion")
        with open(os.path.join(run, "manifest.json"), "w") as f:
            json.dump(m, f)
        quiet(mp.make_plots, run, ["throughput"])
        with open(os.path.join(run, "plots", "plots.json")) as f:
            footer = json.load(f)["plots"][0]["footer"]
        self.assertGreater(len(footer), 200)
        lay = svg_layout({"t": os.path.join(run, "plots", "throughput.svg")}, self.tmp)["t"]
        self.assertEqual(layout_problems("throughput", lay), [])
        lines = [t["text"] for t in lay["texts"] if t["text"].startswith("QEMU")
                 or t["text"].startswith("Linux")]
        self.assertEqual(len(lines), 2)
        self.assertEqual(" ".join(lines), footer)

    def test_spans_decade(self):
        self.assertFalse(select.spans_decade(["100", "1000"]))
        self.assertTrue(select.spans_decade(["100", "", "1000.5"]))
        self.assertFalse(select.spans_decade(["0", "5000"]))     # 0: no log axis
        self.assertFalse(select.spans_decade([]))

    def test_steal_without_steal_samples_is_skipped(self):
        """A run from before host-steal.txt: no steal plot, the others
        drawn; a warning only when the steal plot was asked for by name
        (analyze has no problem with such a run either)."""
        run = copy_fixture(self.tmp)
        path = os.path.join(run, "tidy", "samples.csv")
        rows = rows_of(path)
        write_rows(path, [r for r in rows if not r["metric"].startswith("steal")],
                   list(rows[0]))
        written, warn = quiet(mp.make_plots, run, ["steal", "throughput"])
        self.assertEqual([os.path.basename(p) for p in written],
                         ["throughput.png", "throughput.svg"])
        self.assertIn("no steal plot: samples.csv has no steal_max_pct", warn)
        written, warn = quiet(mp.make_plots, run)
        self.assertEqual(len(written), 2 * (len(DRAWN) - 1))
        self.assertEqual(warn, "")

    def test_steal_no_data_panel(self):
        """A point and vCPU count whose boots have no steal rows (the other
        point has them there): its panel says "no data"; nothing cut or
        overlapping."""
        run = copy_fixture(self.tmp)
        path = os.path.join(run, "tidy", "samples.csv")
        rows = rows_of(path)
        write_rows(path, [r for r in rows if not (r["metric"].startswith("steal")
                                                  and (r["cpus"], r["point"]) == ("2", "p1"))],
                   list(rows[0]))
        written, warn = quiet(mp.make_plots, run, ["steal"])
        self.assertEqual(len(written), 2, warn)
        self.assertEqual(gnuplot_var(run, "steal", "empty"), "p1:2")
        lay = svg_layout({"s": os.path.join(run, "plots", "steal.svg")}, self.tmp)["s"]
        self.assertEqual(layout_problems("steal", lay), [])
        self.assertIn("no data", [t["text"] for t in lay["texts"]])

    def test_plot_without_data_is_skipped(self):
        run = copy_fixture(self.tmp)
        path = os.path.join(run, "tidy", "lockstat.csv")
        write_rows(path, [], list(rows_of(path)[0]))
        written, warn = quiet(mp.make_plots, run, ["lockstat", "throughput"])
        self.assertEqual([os.path.basename(p) for p in written],
                         ["throughput.png", "throughput.svg"])
        self.assertIn("no lockstat plot", warn)

    def main(self, argv, module=mp):
        return quiet(module.main, argv)

    def assert_one_line(self, rc, err, code, pattern):
        self.assertEqual(rc, code, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertRegex(err, pattern)
        self.assertNotIn("Traceback", err)

    def test_bad_input_exits_2_on_one_line(self):
        run = copy_fixture(self.tmp)
        rc, err = self.main([os.path.join(self.tmp, "nope")])
        self.assert_one_line(rc, err, 2, "not a directory")
        rc, err = self.main([])
        self.assert_one_line(rc, err, 2, "DIR")
        rc, err = self.main([run, "--only", "pie"])
        self.assert_one_line(rc, err, 2, "no plot 'pie'")
        with open(os.path.join(run, "manifest.json"), "w") as f:
            f.write("{not json")
        rc, err = self.main([run])
        self.assert_one_line(rc, err, 2, r"manifest.json(:\d+)?: invalid JSON")
        rc, err = self.main([run], rh)
        self.assert_one_line(rc, err, 2, "manifest.json")

    def test_bad_tidy_file_exits_2(self):
        run = copy_fixture(self.tmp)
        with open(os.path.join(run, "tidy", "medians.csv"), "w") as f:
            f.write("variant,cpus\nbefore,1\n")
        rc, err = self.main([run])
        self.assert_one_line(rc, err, 2, r"medians.csv: no column point")
        os.unlink(os.path.join(run, "tidy", "medians.csv"))
        rc, err = self.main([run])
        self.assert_one_line(rc, err, 2, r"medians.csv: missing")

    def test_no_gnuplot_exits_3(self):
        run = copy_fixture(self.tmp)
        with mock.patch.dict(os.environ, {"PATH": self.tmp}):
            rc, err = self.main([run])
        self.assert_one_line(rc, err, 3, r"gnuplot.*\./run\.sh setup")

    def test_cli_prints_paths(self):
        run = copy_fixture(self.tmp)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(mp.main([run, "--only", "cdf"]), 0)
            self.assertEqual(rh.main([run]), 0)
        lines = out.getvalue().split()
        self.assertEqual([os.path.basename(x) for x in lines],
                         ["cdf.png", "cdf.svg", "report.html", "report.md"])


if __name__ == "__main__":
    unittest.main()


class TestLockClass(unittest.TestCase):
    """The lock under test comes from the campaign (lock_class), not from
    the plots: titles say it, and the lock_stat plot draws its rows only."""

    def test_titles_and_lockstat_rows_follow_lock_class(self):
        tmp = tempfile.mkdtemp(prefix="test-plots-class-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        run = copy_fixture(tmp)
        path = os.path.join(run, "tidy", "lockstat.csv")
        rows = rows_of(path)
        theirs = [dict(r, **{"class": "file_systems_lock"}) for r in rows
                  if r["class"] == "mboxes_lock"]
        self.assertTrue(theirs)
        write_rows(path, rows + theirs, list(rows[0]))
        with open(os.path.join(run, "manifest.json")) as f:
            m = json.load(f)
        m["campaign"]["lock_class"] = "file_systems_lock"
        with open(os.path.join(run, "manifest.json"), "w") as f:
            json.dump(m, f)
        quiet(mp.make_plots, run)
        for plot in ("throughput", "latency", "lockstat"):
            self.assertEqual(gnuplot_var(run, plot, "lockname"), "file_systems_lock", plot)
            root = svg_info(os.path.join(run, "plots", plot + ".svg"))[2]
            title = [t for t in root.itertext() if "file_systems_lock" in t]
            self.assertTrue(title, f"{plot}.svg has no title naming file_systems_lock")
            self.assertFalse([t for t in root.itertext() if "mboxes_lock" in t], plot)
        drawn = rows_of(os.path.join(run, "plots", "data", "lockstat.csv"))
        self.assertEqual({r["class"] for r in drawn}, {"file_systems_lock"})
        self.assertEqual(len(drawn), len([r for r in theirs if r["variant"] in
                                          m["campaign"]["variants"]]))
