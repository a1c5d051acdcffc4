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
import os
import stat
import sys

from lockbench.cli import OneLineParser, run_cli
from guest import judge
from lockbench import safeio
from guest.collect import point_needs

META_MAX = 16 << 20
#: a console.log larger than this is not one a run wrote (the runner
#: keeps judge.CONSOLE_MAX of it now; older runs kept it whole): the judge
#: reads it in 1 MiB chunks, so the bound is on the time a recheck takes
CONSOLE_MAX = 1 << 30


def regular(path):
    """Is path a regular file, not a link?"""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def load_meta(root, run):
    """run's meta.json, read under root (the directory named on the
    command line) with lockbench/safeio.py: a regular file of at most
    META_MAX bytes, no link followed on the way from root, JSON without
    NaN and nested at most safeio.MAX_JSON_DEPTH deep (a recursive reader
    would end in a RecursionError)."""
    path = os.path.join(run, "meta.json")
    if not regular(path):
        raise judge.RunError(2, f"{run}: no meta.json (a regular file): not a run directory")
    try:
        meta = safeio.read_json(os.path.relpath(path, root), META_MAX, root=root)
    except safeio.Unsafe as e:
        # safeio's "not JSON this harness reads: WHY" said once
        why = e.why.partition("reads: ")[2] or e.why
        raise judge.RunError(2, f"{path}: not readable JSON ({why})") from None
    planned = meta.get("points_planned") if isinstance(meta, dict) else None
    if (not isinstance(planned, list) or not all(isinstance(p, str) for p in planned)
            or meta.get("state") not in judge.EXIT or not isinstance(meta.get("problems"), list)
            or not all(isinstance(p, dict) for p in meta["problems"])):
        raise judge.RunError(2, f"{path}: not a run's meta.json (points_planned, state, "
                                "problems)")
    return meta


def console_of(run):
    """run's console.log, for the judge to read: a regular file (lstat: a
    link is refused, not followed; a FIFO would block the read) of at
    most CONSOLE_MAX bytes."""
    console = os.path.join(run, "console.log")
    try:
        st = os.lstat(console)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode):
        raise judge.RunError(2, f"{run}: no console.log (a regular file)")
    if st.st_size > CONSOLE_MAX:
        raise judge.RunError(2, f"{console}: larger than {CONSOLE_MAX} bytes: "
                                "not a console of a run")
    return console


def recheck(run, root=None):
    """(state, recorded state, the first problem of the new state or None).
    root: the directory named on the command line, run itself or the
    campaign run is a boot of."""
    meta = load_meta(root or run, run)
    console = console_of(run)
    build = meta.get("build") if isinstance(meta.get("build"), dict) else {}
    needs = point_needs(build)
    on_disk = [p for p in meta["points_planned"]
               if all(regular(os.path.join(run, "points", p, n)) for n in needs)]
    try:
        state, problems = judge.rejudge(meta, console, on_disk)
    except OSError as e:  # no access, or gone since console_of
        raise judge.RunError(2, f"{console}: {e.strerror or e}") from None
    why = next((p for p in problems if p.get("state") == state), None)
    return state, meta["state"], why


def one_line(text):
    """text (a console's or meta.json's) fit for one line of a terminal:
    no control characters, at most 300 characters."""
    return "".join(ch if ch.isprintable() else "?" for ch in str(text)[:300])


def runs(d):
    """The run directories of DIR: itself, or a campaign's boots, each a
    folder of its cells/ (the format's name; a cells/ that is a link, and
    boots that are, are not followed)."""
    if regular(os.path.join(d, "manifest.json")):
        boots = os.path.join(d, "cells")
        if os.path.islink(boots):
            raise judge.RunError(2, f"{boots}: a symbolic link, not followed")
        try:
            names = sorted(os.listdir(boots))
        except OSError:
            raise judge.RunError(2, f"{d}: a campaign without a cells/ folder") from None
        return [os.path.join(boots, n) for n in names
                if not os.path.islink(os.path.join(boots, n))
                and regular(os.path.join(boots, n, "meta.json"))]
    return [d]


def make_parser():
    p = OneLineParser(prog="./run.sh recheck", hint="./run.sh recheck --help",
                      description=__doc__.split("\n")[0])
    p.add_argument("dirs", metavar="DIR", nargs="+")
    return p


def _body(args):
    """Each run's state judged again; exit 1 when one differs from the
    state it recorded."""
    differ = 0
    for d in args.dirs:
        if not os.path.isdir(d):
            raise judge.RunError(2, f"{d}: not a directory")
        for run in runs(d):
            state, was, why = recheck(run, d)
            if state == was:
                print(f"recheck: {run}: {state}")
                continue
            differ += 1
            line = f": {one_line(why.get('line', ''))}" if why else ""
            print(f"recheck: {run}: {state}, recorded {was}{line}")
    return 1 if differ else 0


def main(argv):
    return run_cli("recheck", make_parser(), argv, _body)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
