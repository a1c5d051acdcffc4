# SPDX-License-Identifier: GPL-2.0
"""What the plot builders and the report share: one run directory (its
manifest as analysis.parse.rundir reads it, tidy/*.csv, see analysis/TIDY.md)
and one-line errors.  Only the standard library (and
analysis modules that use nothing else): selecting rows needs no pandas.
Every file of the run directory is read through lockbench/safeio.py
(read_file): a regular file of bounded size, no link followed.
"""

import csv
import dataclasses
import io
import os
import re

from analysis.render import run_setup
from analysis.parse import rundir
from analysis.parse.common import ParseError, dir_refusal
from lockbench.cli import EXIT_BAD_INPUT, CliError
from lockbench import safeio

EXIT_NO_TOOL = 3

# Names that go into gnuplot word lists must be plain tokens ("~": an A/A
# control, BASELINE~aa).
TOKEN = re.compile(r"^[A-Za-z0-9_.+:@~-]+$")


class PlotsError(CliError):
    """Bad input: run_cli (analysis.parse.common) prints it on one line and
    exits with exit_code."""
    exit_code = EXIT_BAD_INPUT


class MissingTool(PlotsError):
    """A program the plots need is not installed."""
    exit_code = EXIT_NO_TOOL


#: the largest tidy table read (DIR/tidy/*.csv, observer.csv): hist.csv,
#: the largest, has 32 rows a boot, point and op, tens of MB for a
#: campaign of thousands of boots; more is not analyze's output
TIDY_MAX_BYTES = 256 << 20
#: answer.txt and legend.txt: a few KB of text
TEXT_MAX_BYTES = 1 << 20


def read_file(root, rel, limit, missing=None):
    """The text of root/rel: a regular file of at most limit bytes, opened
    with no link followed anywhere under root (lockbench/safeio.py: a run
    directory may come from anywhere, and a FIFO, a device or a link in it
    must neither hang the plots nor take a file from outside into the
    report); None when it is not there and missing is None, else
    PlotsError(missing); PlotsError on one line for anything else."""
    path = os.path.join(root, rel)
    if not os.path.lexists(path):
        if missing is None:
            return None
        raise PlotsError(f"{path}: {missing}")
    try:
        return safeio.read_text(rel, limit, root=root)
    except safeio.Unsafe as e:
        raise PlotsError(f"{path}: unreadable: {e.why}") from None


def read_csv(root, rel, required=()):
    """Rows of a tidy CSV (root/rel, read_file) as dicts; PlotsError if
    missing, unreadable or if a required column is missing."""
    path = os.path.join(root, rel)
    text = read_file(root, rel, TIDY_MAX_BYTES,
                     "missing (run ./run.sh analyze first)")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        rows = list(reader)
    except csv.Error as e:
        raise PlotsError(f"{path}: unreadable: {e}") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise PlotsError(f"{path}: no column {', '.join(missing)} "
                         "(see analysis/TIDY.md)")
    return rows


def check_dir(path, what):
    """path is a directory and no link (analysis.parse.common.dir_refusal);
    PlotsError naming what it is for otherwise."""
    why = dir_refusal(path)
    if why:
        raise PlotsError(f"{path}: {why} ({what})")


def to_int(value, where):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise PlotsError(f"{where}: {value!r} is not an integer") from None


def gp_quote(text):
    """A gnuplot single-quoted string literal ('' stands for ')."""
    return "'" + str(text).replace("'", "''") + "'"


def point_dict(point):
    """A rundir.Point as the dict the plot code indexes: its set fields
    only, so that `"read_pct" in p` says whether the campaign set it."""
    return {k: v for k, v in dataclasses.asdict(point).items()
            if v is not None}


class Run:
    """One run directory as the plots and report.html see it: `rd`,
    its analysis.parse.rundir.RunDir (the one reader of manifest.json: the
    campaign, its defaults and checks, the point labels, the setup line),
    and only what drawing adds to it: the tidy files (read with one-line
    errors, cached), the variants baseline first (the order of colours),
    the points as dicts, the analysed boots, and names gnuplot can take."""

    def __init__(self, path):
        self.dir = os.path.abspath(path)
        if not os.path.isdir(self.dir):
            raise PlotsError(f"{path}: not a directory")
        self.tidy_dir = os.path.join(self.dir, "tidy")
        if not os.path.lexists(self.tidy_dir):
            raise PlotsError(f"{path}: no tidy/ (run ./run.sh analyze {path} first)")
        check_dir(self.tidy_dir, "analyze's tables")
        self._cache = {}
        try:
            self.rd = rundir.load(self.dir)
        except ParseError as e:
            raise PlotsError(str(e)) from None
        manifest = os.path.join(self.dir, "manifest.json")
        baseline = str(self.rd.baseline)
        if baseline not in self.rd.variants:
            raise PlotsError(f"{manifest}: baseline {baseline!r} is not one "
                             "of campaign.variants")
        # baseline first, the others in manifest order
        self.variants = [baseline] + [v for v in self.rd.variants
                                      if v != baseline]
        self.points = [point_dict(p) for p in self.rd.points]
        # what gnuplot is given as words
        for v in self.variants:
            if not TOKEN.match(v):
                raise PlotsError(f"{manifest}: variant name {v!r}: use letters, "
                                 "digits and _.+:@~- only")
        for p in self.points:
            if not TOKEN.match(p["id"]):
                raise PlotsError(f"{manifest}: point id {p['id']!r}: use "
                                 "letters, digits and _.+:@~- only")

    def tidy(self, name, required=()):
        """Rows of tidy/NAME (cached)."""
        if name not in self._cache:
            self._cache[name] = read_csv(self.dir, os.path.join("tidy", name),
                                         required)
        return self._cache[name]

    def has(self, name):
        """Whether tidy/NAME is there: anything by that name, so that a
        FIFO or a link there is refused when read, not taken for no
        file."""
        return os.path.lexists(os.path.join(self.tidy_dir, name))

    def text(self, name, limit=TEXT_MAX_BYTES):
        """DIR/NAME as text (read_file), None when it is not there."""
        return read_file(self.dir, name, limit)

    def point(self, pid):
        return next(p for p in self.points if p["id"] == pid)

    def point_label(self, pid):
        """'p1: 95% reads, 8 mailboxes, 10% misses' (rundir.point_label,
        its long form: a plot title has room for words)."""
        return self.rd.point_label(pid, long=True)

    def done_boots(self):
        """(variant, cpus, oversubscribed) of each boot that was analysed:
        tidy/cells.csv (one row per boot) when there, else the manifest's
        done boots."""
        out = []
        if self.has("cells.csv"):
            for r in self.tidy("cells.csv", ("variant", "cpus", "state")):
                if r.get("analyzed", "1") == "1" and r["state"] == "done":
                    out.append((r["variant"], to_int(r["cpus"], "cells.csv cpus"),
                                r.get("oversubscribed") == "1"))
        else:
            for b in self.rd.boots:
                if b.state == "done":
                    out.append((b.variant, b.cpus, b.oversubscribed))
        return out

    def oversubscribed(self):
        return sorted({c for _, c, o in self.done_boots() if o})

    def boots(self, cpus=None):
        """done_boots() at these vCPU counts (all when cpus is None)."""
        return [c for c in self.done_boots() if cpus is None or c[1] in cpus]

    def guests(self):
        """run_setup.guests() of the analysed boots."""
        return run_setup.guests(run_setup.setup_facts(self.rd, self.boots()))

    def setup_line(self, cpus=None):
        """run_setup.setup_line() of the analysed boots (those at these vCPU
        counts when cpus is given), the kernels in the plots' order."""
        return run_setup.setup_line(self.rd, self.boots(cpus), self.variants)


