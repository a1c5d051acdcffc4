# SPDX-License-Identifier: GPL-2.0
"""One look of a campaign that may stop early: are all its primary cells
decided with the boots done so far?

    /usr/bin/python3 -m analysis.looks DIR

Runs the analysis in memory (at the campaign's per-look confidence,
analysis/README.md "Stopping early"; DIR/tidy is left as it is) and prints
look(DIR) as one JSON object (scripts/campaign/run.py calls look() in its
own process):
{"primary": N, "undecided": ["2 vCPUs read95 after/before: inconclusive
(n≈12)", ...], "open": [[2, "read95"], ...]} (the vCPU counts and points
of the undecided cells, which later repetitions run alone). A cell is decided when its primary row's verdict is one
of better, no harm, worse, harm, `harm (failures)` or `unsafe` (a
lockdep report: no more boots change that); a difference in lost boots
or failed points and every inconclusive are not. scripts/campaign/run.py stops when none is
undecided. Bad input: one line on stderr, exit 2.
"""

import json
import sys

from analysis import analyze
from analysis.tidy import boots
from analysis.verdict import safety, verdicts
from analysis.estimate import stats
from lockbench.cli import OneLineParser, run_cli


def undecided(comps):
    """(number of primary rows, [description of each undecided one],
    [[cpus, point] of each, once])."""
    prim = verdicts.primary_rows(comps)
    rows = [r for r in prim.itertuples()
            if r.verdict not in stats.DECIDED + (safety.UNSAFE, boots.FAILURES)]
    out = [f"{r.cpus} vCPU{'s' if int(r.cpus) > 1 else ''} {r.point} "
           f"{r.variant}/{r.baseline}: {r.verdict or 'no verdict'}" for r in rows]
    cells = list(dict.fromkeys((int(r.cpus), str(r.point)) for r in rows))
    return len(prim), out, [list(c) for c in cells]


def look(path):
    """undecided() of run directory path, judged in memory: the campaign
    saves the look in manifest.json next, and a boot it makes `unneeded`
    changes cells.csv and problems.csv, so tables written now would be
    stale by then.  Raises ParseError (a CliError) on bad input."""
    _rd, _t, _m, c = analyze.analyze(path, write=False)
    return undecided(c.comps)


def main(argv=None):
    p = OneLineParser(prog="looks", description=__doc__.split("\n")[0])
    p.add_argument("dir")

    def body(args):
        n, todo, cells = look(args.dir)
        print(json.dumps({"primary": n, "undecided": todo, "open": cells}))
        return 0
    return run_cli("looks", p, argv, body)

if __name__ == "__main__":
    sys.exit(main())
