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

import sys
from typing import NamedTuple

from lockbench.cli import require

# The tables are pandas data frames, the estimators scipy's.
require("report", "pandas", "scipy")

from analysis import analyze as analyze_mod
from analysis import outputs
from analysis.estimate import medians as medians_mod
from analysis.verdict import observer as observer_mod
from analysis.estimate.thresholds import Thresholds
from analysis.render import texts as texts_mod
from analysis.verdict import compare as compare_mod
from analysis.verdict.table import VerdictTable
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
    d = Thresholds()
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


class Report(NamedTuple):
    """What report() wrote, as values: summary.md's text, commit-msg.txt's
    (the block a campaign prints) and the warnings to print."""
    summary_md: str
    commit_msg: str
    warnings: list


def report(path, baseline=None, margin=None, thresholds=None, run_dir=None,
           reanalyze=None):
    """Compute and write the summary files; returns a Report.  One pass,
    stage to stage, each handing its result to the next: the run
    directory and its tidy tables (analyze.frames: parse/ and tidy/,
    built now when stale, else read from DIR/tidy), the thresholds and
    medians (estimate/), the comparisons with their guards (verdict/),
    the observer effect (verdict/), the texts (render/), and last every
    file this step writes (outputs.py).

    reanalyze: None = when stale, True/False = always/never."""
    f = analyze_mod.frames(path, reanalyze)
    th = (thresholds or Thresholds()).for_run(
        f.rd.margin if margin is None else margin, len(f.rd.looks))
    medians = medians_mod.medians_table(f.samples, th) if f.built is not None else None
    c = compare_mod.compare_run(f.rd, f.samples, f.outcomes, th, f.tally, f.unsafe,
                                baseline, refuse=True)
    table = VerdictTable(c.comps, f.rd.primary_metric)
    observer = observer_mod.observer_table(
        c.comps, f.samples, [t for t in f.twins if t[0] in c.pairs and t[1] in c.pairs],
        f.rd.primary_metric, th)
    texts = texts_mod.render_texts(path, f, c, table, observer, th, margin, run_dir)
    tidy = outputs.tidy_files(f.built, medians, c.comps)
    observer_csv = (observer_mod.OBSERVER_COLUMNS, observer.to_dict("records"))
    # an empty observer.csv goes (a link: the link, not its target)
    outputs.write(path, tidy=tidy, run=[
        ("observer.csv", observer_csv if len(observer) else None), *texts.items()])
    # a console.log that is not read (a link, a FIFO): one line here, and
    # in summary.md in place of its lockdep report
    warnings = f.warnings + c.warnings + [
        rep["refused"] for rep in c.unsafe.values() if rep.get("refused")]
    return Report(texts["summary.md"], texts["commit-msg.txt"], warnings)


def run(args):
    """The analysis's part of ./run.sh report (plots/pipeline.py runs it,
    then the plots): report() with the options of args, its warnings
    printed (and summary.md unless --quiet); returns the Report."""
    th = Thresholds().with_(seed=args.seed, resamples=args.resamples)
    r = report(args.dir, args.baseline, args.margin, th,
               run_dir=texts_mod.short_path(args.dir))
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
