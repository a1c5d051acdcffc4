# SPDX-License-Identifier: GPL-2.0
"""./run.sh report DIR: the whole report, in the order the data flows:
the analysis's verdicts and texts (analysis.report: tidy/comparisons.csv,
summary.md, commit-msg.txt, answer.txt, legend.txt), then the plots and
the pages from those files (python3 -m plots DIR: plots/*, report.html,
report.md).  The one place that runs both sits above both, so that
analysis/ never imports plots/.

Usage: /usr/bin/python3 -m plots.pipeline DIR [analysis.report's options]
       [--no-plots]

Exit status: analysis.report's (0, 2 bad input: one line on stderr),
then the plots step's (2 bad input, 3 gnuplot missing).
"""

import sys

from analysis import report as analysis_report
from lockbench.cli import CliError, run_cli
from analysis.parse.rundir import not_results_dir
from plots.__main__ import main as plots_main

PROG = "report"


def make_parser():
    p = analysis_report.make_parser()
    p.add_argument("--no-plots", action="store_true",
                   help="write the analysis's files only: no plots, no "
                   "report.html")
    return p


def _run(args):
    why = not_results_dir(args.dir, PROG)
    if why:
        raise CliError(why)
    rc = analysis_report.run(args)
    if rc or args.no_plots:
        return rc
    return plots_main([args.dir])


def main(argv=None):
    return run_cli(PROG, make_parser(), argv, _run)


if __name__ == "__main__":
    sys.exit(main())
