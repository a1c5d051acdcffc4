# SPDX-License-Identifier: GPL-2.0
"""Draw the plots of one run directory into DIR/plots/ (PNG and SVG).

Usage: /usr/bin/python3 -m plots.make_plots DIR [--only NAME[,NAME...]]
       (the repository root on PYTHONPATH)

For each plot, a builder (median_plots.py, boot_plots.py, crossover.py)
selects rows and columns of DIR/tidy/*.csv (analysis/TIDY.md) into
DIR/plots/data/NAME*.csv, the rows of one line next to each other as
gnuplot wants them (select.py), and this runs plots/gnuplot/NAME.gp on it.  Nothing is computed
here: every number drawn is in a tidy file.  The setup footer comes from
DIR/manifest.json.  Also writes DIR/plots/plots.json (titles and captions,
for pages.py) and DIR/plots/gnuplot-commands.txt (to redraw by hand).

Exit status: 0 done, 2 bad input (one line on stderr), 3 gnuplot missing.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys

from plots.boot_plots import cdf, lockstat, steal
from lockbench.cli import EXIT_OK, OneLineParser, run_cli
from lockbench import safeio
from plots.common import MissingTool, PlotsError, Run, check_dir, gp_quote
from plots.crossover import crossover
from plots.median_plots import fairness, latency, starvation, throughput
from plots.select import NotApplicable, Selector, Skip

PROG = "make_plots"
HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("latency", "throughput", "crossover", "steal", "lockstat", "starvation",
         "cdf", "fairness")
GNUPLOT_TIMEOUT_S = 120


BUILDERS = {"latency": latency, "throughput": throughput, "crossover": crossover,
            "steal": steal, "lockstat": lockstat,
            "starvation": starvation, "cdf": cdf, "fairness": fairness}


def find_gnuplot():
    path = shutil.which("gnuplot")
    if not path:
        raise MissingTool("gnuplot not found: run ./run.sh setup")
    return path


def command(gnuplot, plot, outbase):
    v = dict(plot.variables)
    v["infile"] = plot.data[0]
    v["outbase"] = outbase
    v["width"], v["height"] = plot.size
    sets = "; ".join(f"{k}={val}" if isinstance(val, int) else f"{k}={gp_quote(val)}"
                     for k, val in v.items())
    return [gnuplot, "-e", sets, os.path.join(HERE, "gnuplot", plot.name + ".gp")]


def make_plots(run_dir, only=None, warn=None):
    """Draw the plots of run_dir into run_dir/plots; returns the paths
    written (PNG and SVG of each plot that has data).  A plot without data
    is left out with a warning (warn(str), default: stderr).  Raises
    PlotsError on bad input, MissingTool without gnuplot."""
    warn = warn or (lambda m: print(f"{PROG}: warning: {m}", file=sys.stderr))
    gnuplot = find_gnuplot()
    run = Run(run_dir)
    outdir = os.path.join(run.dir, "plots")
    datadir = os.path.join(outdir, "data")
    _folders(outdir, datadir)
    sel = Selector(run, datadir)
    written, index, cmds = [], [], []
    for name in only or NAMES:
        try:
            plot = BUILDERS[name](sel, warn)
        except NotApplicable as e:
            if only:
                warn(f"no {name} plot: {e}")
            continue
        except Skip as e:
            warn(f"no {name} plot: {e}")
            continue
        outbase = os.path.join(outdir, name)
        _clear(outbase)
        cmd = command(gnuplot, plot, outbase)
        cmds.append(shlex.join(cmd))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               errors="replace", timeout=GNUPLOT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise PlotsError(f"gnuplot {name}.gp: no result after "
                             f"{GNUPLOT_TIMEOUT_S} s") from None
        errs = [ln for ln in p.stderr.splitlines() if ln.strip()]
        files = [f"{outbase}.{ext}" for ext in ("png", "svg")]
        if p.returncode != 0 or not all(os.path.isfile(f) for f in files):
            raise PlotsError(f"gnuplot {name}.gp failed: "
                             f"{errs[-1] if errs else 'exit %d' % p.returncode}")
        written += files
        index.append({"name": name, "png": f"plots/{name}.png",
                      "svg": f"plots/{name}.svg", "title": plot.title,
                      "caption": plot.caption, "footer": plot.variables["footer"],
                      "width": plot.size[0], "height": plot.size[1],
                      "data": [os.path.relpath(d, run.dir) for d in plot.data],
                      "verdicts": plot.verdicts})
    try:
        safeio.write_atomic(os.path.join(outdir, "plots.json"),
                   json.dumps({"plots": index}, indent=1) + "\n")
        safeio.write_atomic(os.path.join(outdir, "gnuplot-commands.txt"),
                   "# the gnuplot runs that drew these plots (make_plots.py)\n"
                   + "".join(c + "\n" for c in cmds))
    except OSError as e:
        raise PlotsError(f"{outdir}: cannot write: {e.strerror}") from None
    return written


def _folders(outdir, datadir):
    """DIR/plots and DIR/plots/data made, each a directory and no link: a
    link planted there in a run directory must not have the plots
    written into a folder elsewhere."""
    for d in (outdir, datadir):
        try:
            os.mkdir(d)
        except FileExistsError:
            pass
        except OSError as e:
            raise PlotsError(f"{d}: cannot create: {e.strerror}") from None
        check_dir(d, "the plots go there")


def _clear(outbase):
    """Remove the PNG and SVG a run before drew (or whatever is at their
    names: gnuplot opens its output as named, through a link someone
    planted there)."""
    for ext in ("png", "svg"):
        try:
            os.unlink(f"{outbase}.{ext}")
        except FileNotFoundError:
            pass
        except OSError as e:
            raise PlotsError(f"{outbase}.{ext}: cannot replace: {e.strerror}") from None


def make_parser():
    ap = OneLineParser(
        prog=PROG, description="Draw DIR/plots/*.png and *.svg from DIR/tidy/*.csv.")
    ap.add_argument("dir", metavar="DIR", help="a run directory (with tidy/)")
    ap.add_argument("--only", metavar="NAME[,NAME...]",
                    help=f"only these plots (of: {', '.join(NAMES)})")
    return ap


def main(argv=None):
    def body(args):
        only = None
        if args.only:
            only = [n.strip() for n in args.only.split(",") if n.strip()]
            bad = [n for n in only if n not in NAMES]
            if bad:
                raise PlotsError(f"--only: no plot {bad[0]!r} (of: {', '.join(NAMES)})")
        for path in make_plots(args.dir, only):
            print(path)
        return EXIT_OK
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
