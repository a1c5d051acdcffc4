# SPDX-License-Identifier: GPL-2.0
"""Verdict table for a run directory: prints summary.md and writes
DIR/tidy/comparisons.csv (with this report's --baseline/--margin),
DIR/summary.md, DIR/commit-msg.txt, DIR/answer.txt, DIR/legend.txt (and
DIR/observer.csv when a comparison was measured both with and without
lock statistics). Runs analyze first when DIR/tidy is missing or older
than the raw files. The plots and report.html are the next step,
`python3 -m plots DIR`, which `./run.sh report` runs after this one.

Usage: /usr/bin/python3 -m analysis.report DIR [--baseline V] [--margin M]
"""

import os
import sys
from typing import NamedTuple

from lockbench.cli import require

# The tables are pandas data frames, the estimators scipy's.
require("report", "pandas", "scipy")

from analysis import analyze as analyze_mod
from analysis.estimate import observer as observer_mod
from analysis.estimate import stats
from analysis.parse import rundir as rundir_mod
from analysis.parse.common import ParseError, dir_refusal
from analysis.render import answer as answer_mod
from analysis.render import commit_msg, summary
from analysis.tidy import tables, tidy_csv
from analysis.tidy.tidy_csv import TIDY_DIR
from analysis.verdict import compare as compare_mod
from analysis.verdict import verdicts
from analysis.verdict.table import VerdictTable
from lockbench import safeio
from lockbench.cli import OneLineParser, UsageError, run_cli

PROG = "report"


def _margin(text):
    try:
        m = float(text)
    except ValueError:
        raise UsageError(f"--margin {text!r} is not a number") from None
    if not 0 < m < 1:
        raise UsageError(f"--margin {text} must be between 0 and 1 "
                         f"(0.05 = 5%)")
    return m


def make_parser():
    d = stats.Thresholds()
    p = OneLineParser(
        prog=PROG,
        description="Compare the variants of a run directory, each "
        "pair of the campaign's `compare` (default: each variant with the "
        "baseline): per metric, vCPU count and workload point, the medians "
        "with CIs (order statistics), the ratio as the Hodges-Lehmann "
        "shift of log values with its Mann-Whitney (Moses) CI and p, both at "
        "the campaign's confidence (95%, 1 - 0.05/K with K looks; every "
        "output prints the level it used; icount cells by the rule for "
        "exact data), a favourable claim also needing the mean over boots, "
        "lost boots counted against their kernel, "
        "and a verdict against the margin (better / no harm / worse / "
        "harm / inconclusive; the campaign's primary metric is the "
        "answer, every other verdict is Holm-corrected). Prints "
        "summary.md and writes DIR/summary.md, DIR/tidy/comparisons.csv "
        "(every number) and DIR/commit-msg.txt (72 columns). A comparison "
        "measured with lock statistics whose twin (same patches) was "
        "measured without gets an observer-effect section, both ratios "
        "side by side (DIR/observer.csv). Runs analyze first "
        "when DIR/tidy is missing or older than the raw files. Under QEMU "
        "TCG absolute times are emulation times: the ratio is the result.",
        epilog="Bad input: one line on stderr, exit status 2. ./run.sh "
        "report DIR (python3 -m plots.pipeline) runs this, then the plots "
        "and report.html (python3 -m plots DIR) unless given --no-plots.")
    p.add_argument("dir", metavar="DIR", help="a results/<name>-<stamp> "
                   "directory")
    p.add_argument("--baseline", metavar="V", default=None,
                   help="compare every other variant with V (default: the "
                   "campaign's compare pairs, else every variant with "
                   "campaign.baseline)")
    p.add_argument("--margin", metavar="M", type=_margin, default=None,
                   help="non-inferiority margin as a fraction (default: the "
                   "manifest's campaign.margin, else %g)" % d.margin)
    p.add_argument("--seed", type=int, default=None,
                   help="bootstrap seed (default %d)" % d.seed)
    p.add_argument("--resamples", type=int, default=None,
                   help="bootstrap resamples (default %d)" % d.resamples)
    p.add_argument("--quiet", "-q", action="store_true",
                   help="write the files but do not print summary.md")
    return p


def _rw_variants(ls, lock_class):
    """The variants whose lock_stat rows of lock_class include an -R row
    (an rwlock: the commit block says it sums -R and -W), from
    tidy/lockstat.csv; None when that table cannot be read as one (the
    block then leaves lock_stat out rather than say less than it sums)."""
    if ls is None or not {"variant", "class", "kind"} <= set(ls.columns):
        return None
    mine = ls[(ls["class"].astype(str) == lock_class)
              & (ls["kind"].astype(str) == "R")]
    return set(mine["variant"].astype(str))


def _short_path(path):
    """path relative to the current directory when it lies below it."""
    path = os.path.normpath(path)
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        if not rel.startswith(".."):
            return rel
    return path


def _write(path, name, text):
    """DIR/NAME replaced by text (safeio.write_atomic: never written
    through a link planted at NAME or NAME.tmp)."""
    f = os.path.join(path, name)
    try:
        safeio.write_atomic(f, text)
    except OSError as e:
        raise ParseError(f, None, f"cannot write: {e.strerror or e}") from None


class Report(NamedTuple):
    """What report() wrote, as values: summary.md's text, commit-msg.txt's
    (the block a campaign prints) and the warnings to print."""
    summary_md: str
    commit_msg: str
    warnings: list


def report(path, baseline=None, margin=None, thresholds=None, run_dir=None,
           reanalyze=None):
    """Compute and write the summary files; returns a Report.  One pass,
    stage to stage, each handing its result to the next: the run directory
    (parse/), its tidy tables (analyze: built now when stale, else read
    from DIR/tidy), the comparisons (verdict/, with estimate/'s
    estimators and the guards), the observer effect (estimate/), the texts
    (render/), and last every file this step writes.

    reanalyze: None = when stale, True/False = always/never."""
    rd = _run_dir(path)
    th = analyze_mod.run_thresholds(rd, thresholds, margin)
    f = analyze_mod.frames(path, rd, th, reanalyze)
    c = compare_mod.compare_run(rd, f.samples, f.outcomes, th, baseline)
    compare_mod.check(path, c)
    twins = [t for t in rd.observer_pairs()
             if t[0] in c.pairs and t[1] in c.pairs]
    observer = observer_mod.observer_table(c.comps, f.samples, twins,
                                           rd.primary_metric, th)
    texts = _texts(path, f, c, observer, th, margin, run_dir)
    _write_all(path, c, observer, texts)
    # a console.log that is not read (a link, a FIFO): one line here, and
    # in summary.md in place of its lockdep report
    warnings = f.warnings + c.warnings + [
        rep["refused"] for rep in c.unsafe.values() if rep.get("refused")]
    return Report(texts["summary.md"], texts["commit-msg.txt"], warnings)


def _run_dir(path):
    """The run directory at path (rundir.load), once DIR/tidy, when there,
    is known to be a folder and no link: analyze writes its tables there
    and this reads them, never in a folder elsewhere that a link planted
    in a run directory names."""
    tdir = os.path.join(path, TIDY_DIR)
    why = dir_refusal(tdir) if os.path.lexists(tdir) else None
    if why:
        raise ParseError(tdir, None, why)
    return rundir_mod.load(path)


def _texts(path, f, c, observer, th, margin, run_dir):
    """{file name: text} of summary.md, commit-msg.txt, answer.txt and
    legend.txt: one set of facts (and one read of any lockdep report) for
    every output."""
    rd, baseline = f.rd, c.baseline
    primary = rd.primary_metric
    # the one table every text renders, in its one order
    table = VerdictTable(c.comps, primary)
    notes = [f"{v}: {text}" for v, text in tables.variant_notes(rd)]
    overrides = {}
    if margin is not None and abs(margin - rd.margin) > 1e-12:
        overrides["margin"] = (rd.margin, margin)
    if baseline != rd.baseline:
        overrides["baseline"] = (rd.baseline, baseline)
    facts = summary.header_facts(rd, f.cells, f.samples, baseline, primary,
                                 c.unsafe, c.tally, overrides)
    md = summary.render_markdown(rd, table, facts, f.problems, baseline, th,
                                 notes, observer, f.samples)
    # Reproduce names the copy the run directory keeps: the user's own
    # file may have changed or gone since.
    where = run_dir or path
    copy = os.path.join(where, "campaign.toml")
    campaign_file = copy if os.path.isfile(os.path.join(path, "campaign.toml")) \
        else _short_path(rd.campaign.get("file") or f"campaigns/{rd.name}.toml")
    # A campaign of --variants folders reproduces only with them.
    dirs = rd.manifest.get("variant_dirs")
    args = [campaign_file]
    if isinstance(dirs, list) and all(isinstance(x, str) for x in dirs):
        args = [w for x in dirs for w in ("--variants", x)] + args
    msg = commit_msg.render_commit_msg(
        table, facts, th, args, where, samples=f.samples,
        lock_class=rd.lock_class,
        rw_variants=_rw_variants(f.lockstat, rd.lock_class),
        crosscheck=f.crosscheck)
    answer = "\n\n".join(answer_mod.answer_text(table, facts, th))
    legend = "\n".join(summary.legend(th, table))
    # answer.txt and legend.txt: what report.html opens with (the plots
    # step reads files: analysis/ never imports plots/)
    return {"summary.md": md, "commit-msg.txt": msg,
            "answer.txt": answer + "\n", "legend.txt": legend + "\n"}


def _write_all(path, c, observer, texts):
    """Every file of this step: the one comparisons file (what the plots
    and report.html read), observer.csv, then the texts."""
    with tidy_csv.tidy_dir(path) as tidy:
        tidy_csv.write_comparisons(tidy, verdicts.COMPARISONS_COLUMNS, c.comps)
    with safeio.Dir.open(path) as run:
        if len(observer):
            tidy_csv.write_csv(run, "observer.csv", observer_mod.OBSERVER_COLUMNS,
                               observer.to_dict("records"))
        else:  # a link: the link goes, not its target
            run.unlink("observer.csv")
    for name, text in texts.items():
        _write(path, name, text)


def run(args):
    """The analysis's part of ./run.sh report (plots/pipeline.py runs it,
    then the plots): report() with the options of args, its warnings
    printed (and summary.md unless --quiet); returns the Report."""
    th = stats.Thresholds().with_(seed=args.seed, resamples=args.resamples)
    r = report(args.dir, args.baseline, args.margin, th,
               run_dir=_short_path(args.dir))
    analyze_mod.print_warnings(PROG, r.warnings)
    if not args.quiet:
        sys.stdout.write(r.summary_md)
        sys.stdout.flush()
    return r


def main(argv=None):
    def body(args):
        run(args)
        return 0
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
