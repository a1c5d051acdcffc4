# SPDX-License-Identifier: GPL-2.0
"""Judge saved runs again, offline, as rcutorture's kvm-recheck does: the
console is scanned anew (guest/judge.py's patterns, as they are now), the
points are counted on disk, and what only the live runner could know (it
stopped a hung guest, got a signal, saw QEMU die, refused part of the
results) is taken from meta.json.  Nothing is written.

Usage: ./run.sh recheck DIR...
  DIR  a run directory (./run.sh boot --job ... --out DIR) or a campaign's
       (./run.sh campaign: each of its cells/*)

One line per run: its state, and where that is not the state meta.json
recorded, the recorded one and the first problem behind the new state.
Exit status: 0 every run judged as recorded; 1 some run judged otherwise;
2 bad input (not a run or campaign directory, an unreadable meta.json).
"""
import json
import os
import stat
import sys

from analysis.common import CliError, OneLineParser
from guest import judge
from guest.collect import point_needs

META_MAX = 16 << 20


def regular(path):
    """Is path a regular file, not a link?"""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def load_meta(run):
    path = os.path.join(run, "meta.json")
    if not regular(path):
        raise judge.RunError(2, f"{run}: no meta.json (a regular file): not a run directory")
    try:
        with open(path, "rb") as f:
            data = f.read(META_MAX + 1)
        if len(data) > META_MAX:
            raise ValueError("over 16 MiB")
        meta = json.loads(data)
    except (OSError, ValueError) as e:
        raise judge.RunError(2, f"{path}: not readable JSON ({e.__class__.__name__})") from None
    planned = meta.get("points_planned") if isinstance(meta, dict) else None
    if (not isinstance(planned, list) or not all(isinstance(p, str) for p in planned)
            or meta.get("state") not in judge.EXIT or not isinstance(meta.get("problems"), list)
            or not all(isinstance(p, dict) for p in meta["problems"])):
        raise judge.RunError(2, f"{path}: not a run's meta.json (points_planned, state, "
                                "problems)")
    return meta


def recheck(run):
    """(state, recorded state, the first problem of the new state or None)."""
    meta = load_meta(run)
    console = os.path.join(run, "console.log")
    if not regular(console):
        raise judge.RunError(2, f"{run}: no console.log (a regular file)")
    build = meta.get("build") if isinstance(meta.get("build"), dict) else {}
    needs = point_needs(build)
    on_disk = [p for p in meta["points_planned"]
               if all(regular(os.path.join(run, "points", p, n)) for n in needs)]
    state, problems = judge.rejudge(meta, console, on_disk)
    why = next((p for p in problems if p.get("state") == state), None)
    return state, meta["state"], why


def runs(d):
    """The run directories of DIR: itself, or a campaign's cells."""
    if regular(os.path.join(d, "manifest.json")):
        cells = os.path.join(d, "cells")
        try:
            names = sorted(os.listdir(cells))
        except OSError:
            raise judge.RunError(2, f"{d}: a campaign without a cells/ folder") from None
        return [os.path.join(cells, n) for n in names
                if not os.path.islink(os.path.join(cells, n))
                and regular(os.path.join(cells, n, "meta.json"))]
    return [d]


def main(argv):
    p = OneLineParser(prog="./run.sh recheck", hint="./run.sh recheck --help",
                      description=__doc__.split("\n")[0])
    p.add_argument("dirs", metavar="DIR", nargs="+")
    differ = 0
    try:
        args = p.parse_args(argv)
        for d in args.dirs:
            if not os.path.isdir(d):
                raise judge.RunError(2, f"{d}: not a directory")
            for run in runs(d):
                state, was, why = recheck(run)
                if state == was:
                    print(f"recheck: {run}: {state}")
                    continue
                differ += 1
                line = f": {why['line']}" if why else ""
                print(f"recheck: {run}: {state}, recorded {was}{line}")
    except CliError as e:
        print(f"recheck: {e}", file=sys.stderr)
        return e.exit_code
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
