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

from analysis import outputs
from analysis.estimate import medians as medians_mod
from analysis.estimate.thresholds import Thresholds
from analysis.parse import lockdep
from analysis.parse import rundir as rundir_mod
from analysis.parse.common import ParseError
from analysis.parse.tidy_table import COMPARISONS_FILE, TIDY_DIR, read_tables
from analysis.tidy import boots, tables, tidy_csv
from analysis.verdict import compare as compare_mod
from lockbench import safeio
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
                   % Thresholds().seed)
    p.add_argument("--resamples", type=int, default=None,
                   help="bootstrap resamples for comparisons.csv (default "
                   "%d)" % Thresholds().resamples)
    return p


class Frames(NamedTuple):
    """What the parse and tidy stages hand on: the run directory, its
    tidy tables as data frames (the same whether built now, with
    tidy_csv.table_frame, or read from DIR/tidy, with read_table), and
    the facts of the run every later stage reads."""
    rd: object  # rundir.RunDir
    samples: object
    cells: object  # tidy/cells.csv: one row per boot (the format's name)
    problems: object
    outcomes: object  # None: a run analysed before outcomes.csv
    lockstat: object  # None: lockstat.csv not read as a table
    crosscheck: object  # None: crosscheck.csv not read as a table
    warnings: list  # the tables' warnings, when built now
    built: object  # tables.Tidy built now (to be written), None: read
    twins: list  # rd.observer_pairs()
    unsafe: dict  # lockdep.lockdep_reports(rd)
    notes: list  # tables.variant_notes(rd)
    tally: dict  # boots.tally(): the boots each side lost


#: the tables a judging step reads, in Frames' order
FRAMED = Frames._fields[1:7]


def frames(path, reanalyze=None):
    """The parse and tidy stages of run directory path: the run directory
    (DIR/tidy, when there, a folder and no link: the tables are read and
    written there, never in a folder elsewhere that a link planted in a
    run directory names), its lockdep reports, and its tidy tables, built
    now when stale (reanalyze None: when DIR/tidy is missing or older than
    a raw file; True/False: always/never; nothing written: the caller
    writes them, outputs.write) else read from DIR/tidy.  ParseError when
    a run built now has no sample at all."""
    tdir = os.path.join(path, TIDY_DIR)
    if os.path.lexists(tdir):
        try:
            safeio.check_dir(tdir)
        except safeio.Unsafe as e:
            raise ParseError(tdir, None, e.why) from None
    rd = rundir_mod.load(path)
    stale = reanalyze
    if stale is None:
        # the comparisons file is written last: its time is the tables'
        try:
            when = os.path.getmtime(os.path.join(tdir, COMPARISONS_FILE))
            stale = any(os.path.getmtime(f) > when
                        for f in rd.raw_files() if os.path.exists(f))
        except OSError:  # no tables yet, or a file gone meanwhile
            stale = True
    twins = rd.observer_pairs()
    unsafe = lockdep.lockdep_reports(rd)
    # outcomes.csv absent: a run analysed before it; lockstat.csv and
    # crosscheck.csv unreadable: the commit block leaves lock_stat out
    got = None if stale else read_tables(
        path, [n + ".csv" for n in FRAMED],
        missing_ok=("outcomes.csv", "lockstat.csv", "crosscheck.csv"),
        unreadable_ok=("lockstat.csv", "crosscheck.csv"))
    notes = tables.variant_notes(rd)
    t = tables.build_some(rd) if stale else None
    if t is not None:
        got = [tidy_csv.table_frame(tables.COLUMNS[n], t.tables[n]) for n in FRAMED]
    tally = boots.tally(boots.boot_rows(rd))
    return Frames(rd, *got, list(t.warnings) if t is not None else [], t,
                  twins, unsafe, notes, tally)


def analyze(path, thresholds=None, write=True):
    """Read the run directory, judge it and write DIR/tidy/*.csv
    (./run.sh analyze; report runs the same stages itself).

    Returns (rundir, Tidy, medians DataFrame or None, compare.Compared).
    write=False (a look): judged in memory, DIR/tidy left as it is, and
    no medians (medians.csv's table, which nothing judges).  Raises
    ParseError when there is nothing to analyze.  Never prints."""
    f = frames(path, reanalyze=True)
    th = (thresholds or Thresholds()).for_run(f.rd.margin, len(f.rd.looks))
    medians = medians_mod.medians_table(f.samples, th) if write else None
    c = compare_mod.compare_run(f.rd, f.samples, f.outcomes, th, f.tally, f.unsafe)
    if write:
        files = outputs.tidy_files(f.built, medians, c.comps)
        outputs.write(path, tidy=files)
    return f.rd, f.built, medians, c


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
    th = Thresholds().with_(seed=args.seed, resamples=args.resamples)
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
