# SPDX-License-Identifier: GPL-2.0
"""Run directory -> DIR/tidy/*.csv (see analysis/TIDY.md), with the
cross-check of bench-module lock operations against lock_stat.

Usage: /usr/bin/python3 -m analysis.analyze DIR
"""

import os
import sys
from typing import NamedTuple

from lockbench.cli import require

# The tables are pandas data frames, the estimators scipy's.
require("analyze", "pandas", "scipy")

from analysis.estimate import stats
from analysis.parse import rundir as rundir_mod
from analysis.parse.common import ParseError
from analysis.tidy import medians as medians_mod
from analysis.tidy import tables, tidy_csv
from analysis.tidy.tidy_csv import TIDY_DIR
from analysis.verdict import compare as compare_mod
from analysis.verdict import verdicts
from lockbench.cli import CliError, OneLineParser, run_cli

PROG = "analyze"


def make_parser():
    p = OneLineParser(
        prog=PROG,
        description="Read a run directory written by 'run.sh campaign' "
        "(manifest.json, cells/*/points/*/ raw files) and write its tidy "
        "tables to DIR/tidy/: cells, samples, lockstat, hist, threads, "
        "crosscheck, outcomes, medians, comparisons, problems, notes (and perf_lock when "
        "perf-lock.txt files exist). analysis/TIDY.md documents every file "
        "and column. Only boots in state 'done' are analyzed; missing or "
        "malformed raw files are reported (warnings on stderr, "
        "problems.csv), never read as zeros. Bench-module lock operation "
        "counts are cross-checked against lock_stat acquisitions of "
        "mboxes_lock (disagreement > 1% is a warning; skipped, with a note, for "
        "a kernel built without CONFIG_LOCK_STAT; writes only where the "
        "variant's lookups take no lock). lock_stat 0.3 "
        "dumps have no avg columns: averages are computed as total/count.",
        epilog="Bad input (no manifest, a malformed manifest, no analyzable "
        "boot): one line on stderr, exit status 2.")
    p.add_argument("dir", metavar="DIR", help="a results/<name>-<stamp> "
                   "directory")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="do not print warnings (they stay in problems.csv)")
    p.add_argument("--seed", type=int, default=None,
                   help="bootstrap seed for comparisons.csv (default %d)"
                   % stats.Thresholds().seed)
    p.add_argument("--resamples", type=int, default=None,
                   help="bootstrap resamples for comparisons.csv (default "
                   "%d)" % stats.Thresholds().resamples)
    return p


class Frames(NamedTuple):
    """The tidy tables every judging step reads, as data frames: the same
    whether analyze has just built them (tidy_csv.table_frame) or they are
    read from DIR/tidy (tidy_csv.read_table); and the thresholds the run
    is judged by."""
    rd: object  # rundir.RunDir
    samples: object
    cells: object  # tidy/cells.csv: one row per boot (the format's name)
    problems: object
    outcomes: object  # None: a run analysed before outcomes.csv
    lockstat: object  # None: lockstat.csv not read as a table
    crosscheck: object  # None: crosscheck.csv not read as a table
    warnings: list  # analyze's, when it has just run
    th: object  # stats.Thresholds: run_thresholds()


#: the tables a judging step reads, in Frames' order
FRAMED = Frames._fields[1:-2]


def analyze(path, thresholds=None, write=True):
    """Read the run directory, judge it and write DIR/tidy/*.csv
    (./run.sh analyze; report builds its tables through frames()).

    Returns (rundir, Tidy, medians DataFrame or None, compare.Compared).
    write=False (a look): judged in memory, DIR/tidy left as it is, and
    no medians (medians.csv's table, which nothing judges).  Raises
    ParseError when there is nothing to analyze.  Never prints."""
    rd = rundir_mod.load(path)
    t = tidy_tables(path, rd)
    thresholds = run_thresholds(rd, thresholds)
    df = table_frames(t, ("samples", "outcomes"))
    medians = medians_mod.medians_table(df["samples"], thresholds) if write else None
    c = compare_mod.compare_run(rd, df["samples"], df["outcomes"], thresholds)
    if write:
        write_tables(path, t, medians, c)
    return rd, t, medians, c


def tidy_tables(path, rd):
    """The tidy tables of run directory rd (tables.build); ParseError when
    it has no sample at all."""
    t = tables.build(rd)
    if not t.tables["samples"]:
        done = sum(1 for b in rd.boots if b.state == "done")
        why = ("no boot is in state 'done'" if not done else
               f"no usable samples in the {done} done boot(s)"
               + (f" (first problem: {t.warnings[-1]})" if t.warnings else ""))
        raise ParseError(path, None, why)
    return t


def table_frames(t, names):
    """{table: its data frame} of the Tidy t's tables in names."""
    return {name: tidy_csv.table_frame(tables.COLUMNS[name], t.tables[name])
            for name in names}


def write_tables(path, t, medians, c=None):
    """DIR/tidy/*.csv from the Tidy t, the medians and the Compared c
    (None: no comparisons.csv, an old one removed: the tables stay stale
    until report writes it).  DIR/tidy held by a descriptor, no link on
    the way: a planted link would take the tables elsewhere, and one
    swapped in after a check by path did (issue #43)."""
    with tidy_csv.tidy_dir(path) as out:
        if c is None:
            out.unlink(tidy_csv.COMPARISONS_FILE)
        for name, columns in tables.COLUMNS.items():
            if name == "perf_lock" and not t.tables[name]:
                out.unlink("perf_lock.csv")
                continue
            tidy_csv.write_csv(out, name + ".csv", columns, t.tables[name])
        tidy_csv.write_csv(out, "medians.csv",
                           medians_mod.MEDIANS_COLUMNS, medians.to_dict("records"))
        if c is not None:
            tidy_csv.write_comparisons(out, verdicts.COMPARISONS_COLUMNS, c.comps)


def frames(path, rd, th, reanalyze=None):
    """The tidy tables of run directory rd at path: built now (and written
    to DIR/tidy, no comparisons: the caller judges) when they are stale
    (reanalyze None: when stale; True/False: always/never), else read from
    DIR/tidy; th: the thresholds the run is judged by (run_thresholds with
    report's --margin, which medians.csv does not depend on)."""
    stale = is_stale(path, rd) if reanalyze is None else reanalyze
    if stale:
        t = tidy_tables(path, rd)
        df = table_frames(t, FRAMED)
        medians = medians_mod.medians_table(df["samples"], th)
        write_tables(path, t, medians)
        return Frames(rd, *(df[n] for n in FRAMED), list(t.warnings), th)

    def optional(name, unreadable_ok):
        # None when absent (outcomes.csv: a run analysed before it);
        # unreadable_ok (lockstat.csv): without it the commit block
        # leaves lock_stat out
        if not os.path.lexists(os.path.join(path, TIDY_DIR, name)):
            return None
        try:
            return tidy_csv.read_table(path, name)
        except ParseError:
            if not unreadable_ok:
                raise
            return None
    return Frames(rd, tidy_csv.read_table(path, "samples.csv"),
                  tidy_csv.read_table(path, "cells.csv"),
                  tidy_csv.read_table(path, "problems.csv"),
                  optional("outcomes.csv", False), optional("lockstat.csv", True),
                  optional("crosscheck.csv", True), [], th)


def run_thresholds(rd, thresholds=None, margin=None):
    """The thresholds a run is judged by: its campaign's margin (unless
    `margin` overrides it) at the per-look level of a campaign that may
    stop early (stats.Thresholds.for_looks)."""
    return (thresholds or stats.Thresholds()).with_(
        margin=margin if margin is not None else rd.margin).for_looks(
            len(rd.looks))


def is_stale(path, rd=None):
    """True when DIR/tidy is missing or older than a raw file (rd: the
    run directory, when loaded already)."""
    stamp = os.path.join(path, TIDY_DIR, tidy_csv.COMPARISONS_FILE)
    if not os.path.exists(stamp):
        return True
    when = os.path.getmtime(stamp)
    rd = rd or rundir_mod.load(path)
    for f in rd.raw_files():
        try:
            if os.path.getmtime(f) > when:
                return True
        except OSError:
            continue
    return False


def print_warnings(prog, warnings, file=None):
    file = file or sys.stderr
    for w in warnings:
        print(f"{prog}: warning: {w}", file=file)


def print_notes(prog, notes, file=None):
    file = file or sys.stderr
    for n in notes:
        print(f"{prog}: note: {n}", file=file)


def _run(args):
    why = rundir_mod.not_results_dir(args.dir, PROG)
    if why:
        raise CliError(why)
    th = stats.Thresholds().with_(seed=args.seed, resamples=args.resamples)
    rd, t, _med, _c = analyze(args.dir, th)
    if not args.quiet:
        print_warnings(PROG, t.warnings)
        print_notes(PROG, t.notes)
    bad = sum(1 for r in t.tables["crosscheck"] if r.get("ok") == 0)
    print(f"{PROG}: wrote {os.path.join(args.dir, TIDY_DIR)}/: "
          f"{len(t.tables['samples'])} samples from "
          f"{sum(1 for b in rd.boots if b.state == 'done')} done boots, "
          f"{len(t.tables['problems'])} problems, "
          f"{bad} crosscheck disagreements")
    return 0


def main(argv=None):
    return run_cli(PROG, make_parser(), argv, _run)


if __name__ == "__main__":
    sys.exit(main())
