# SPDX-License-Identifier: GPL-2.0
"""The plots step of `./run.sh report`: DIR/plots/*.png|svg, then
DIR/report.html and DIR/report.md, from the files analysis wrote
(DIR/tidy/*.csv, answer.txt, legend.txt, observer.csv).  A command of its
own, run after `python3 -m analysis.report`, so that analysis/ never
imports plots/.

Usage: /usr/bin/python3 -m plots DIR

Exit status: 0 done, 2 bad input (one line on stderr), 3 gnuplot missing.
"""

import sys

from lockbench.cli import EXIT_OK, OneLineParser, run_cli
from plots.make_plots import make_plots
from plots.pages import write_reports

PROG = "plots"


def make_parser():
    ap = OneLineParser(
        prog=PROG, description="Draw DIR/plots/*.png and *.svg from "
        "DIR/tidy/*.csv, then write DIR/report.html and DIR/report.md (what "
        "./run.sh report runs after the analysis).")
    ap.add_argument("dir", metavar="DIR", help="a run directory "
                    "(with tidy/, after python3 -m analysis.report DIR)")
    return ap


def main(argv=None):
    def body(args):
        make_plots(args.dir)
        write_reports(args.dir)
        return EXIT_OK
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
