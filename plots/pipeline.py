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


def run(argv):
    """main(argv), and the commit block as a value: (exit status,
    commit-msg.txt's text, or None when the analysis did not write it).
    A campaign calls this in its own process: every error is one line on
    stderr and an exit status, as from the command (lockbench.cli)."""
    block = []

    def body(args):
        why = not_results_dir(args.dir, PROG)
        if why:
            raise CliError(why)
        block.append(analysis_report.run(args).commit_msg)
        if args.no_plots:
            return 0
        return plots_main([args.dir])
    rc = run_cli(PROG, make_parser(), argv, body)
    return rc, (block or [None])[0]


def main(argv=None):
    return run(argv)[0]


if __name__ == "__main__":
    sys.exit(main())
