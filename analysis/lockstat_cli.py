# SPDX-License-Identifier: GPL-2.0
"""Any /proc/lock_stat dump -> tidy CSV on stdout.

Usage: /usr/bin/python3 -m analysis.lockstat_cli FILE... [--class REGEX]

One FILE: its CSV table, nothing else.  Several: each file's table under
a line "==> FILE <==" (as head(1) names its files), a blank line between
tables; a bad file is one line on stderr and no table, the others are
still converted, and the exit status is 2.
"""

import csv
import os
import re
import sys

from analysis.parse import lockstat
from analysis.parse.common import ParseError
from lockbench.cli import EXIT_BAD_INPUT, OneLineParser, run_cli

PROG = "lockstat"
CSV_COLUMNS = ("class", "kind") + lockstat.FIELDS


def make_parser():
    p = OneLineParser(
        prog=PROG,
        description="Convert a /proc/lock_stat dump (version 0.3 or 0.4) to "
        "tidy CSV on stdout: one row per lock class and kind, columns "
        + ",".join(CSV_COLUMNS) + ". kind is R or W for the read and write "
        "side of an rwlock-style class (rows 'name-R', 'name-W'), empty for a "
        "plain row (spinlock, mutex, or an rwlock with write acquisitions "
        "only). Times are microseconds as the kernel prints them. Version "
        "0.3 dumps have no avg columns: waittime_avg_us and holdtime_avg_us "
        "are then computed as total/count (2 decimals), empty when the count "
        "is 0. Contention-point lines are not in the CSV. Several FILEs "
        "(say a capture before and one after): each file's table under a "
        "line '==> FILE <==', a blank line between tables.",
        epilog="Bad input: one line 'lockstat: FILE: what is wrong' on "
        "stderr for each bad FILE (the others are still converted), exit "
        "status 2.")
    p.add_argument("files", metavar="FILE", nargs="+",
                   help="a /proc/lock_stat dump (a capture of the file)")
    p.add_argument("--class", dest="class_re", metavar="REGEX",
                   help="only classes whose name (without -R/-W) matches "
                   "this Python regular expression (re.search: unanchored; "
                   "use ^mboxes_lock$ for one class)")
    return p


def _fmt(col, value):
    if value is None:
        return ""
    if col in lockstat.COUNT_FIELDS:
        return str(value)
    return f"{value:.2f}"


def rows_as_csv(dump, out, class_re=None):
    """Write the tidy CSV of a parsed dump to the file object out."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in dump.select(name_regex=class_re):
        w.writerow([r.name, r.kind]
                   + [_fmt(c, getattr(r, c)) for c in lockstat.FIELDS])


def parse_named(path):
    """The parsed dump at PATH.  A file named on the command line may be
    reached through links (the user chose it; links are refused only
    inside a run directory), and what is wrong with it is said under the
    name the user gave."""
    try:
        return lockstat.parse_file(os.path.realpath(path))
    except ParseError as e:
        raise ParseError(path, e.line, e.message) from None


def _run(args):
    class_re = None
    if args.class_re is not None:
        try:
            class_re = re.compile(args.class_re)
        except re.error as e:
            raise ParseError(args.files[0], None,
                             f"invalid --class regex {args.class_re!r}: {e}")
    if len(args.files) == 1:
        rows_as_csv(parse_named(args.files[0]), sys.stdout, class_re)
        sys.stdout.flush()
        return 0
    bad, shown = 0, 0
    for path in args.files:
        try:
            dump = parse_named(path)
        except ParseError as e:
            sys.stdout.flush()
            print(f"{PROG}: {e}", file=sys.stderr)
            bad += 1
            continue
        if shown:
            sys.stdout.write("\n")
        sys.stdout.write(f"==> {path} <==\n")
        rows_as_csv(dump, sys.stdout, class_re)
        sys.stdout.flush()
        shown += 1
    return EXIT_BAD_INPUT if bad else 0


def main(argv=None):
    return run_cli(PROG, make_parser(), argv, _run)


if __name__ == "__main__":
    sys.exit(main())
