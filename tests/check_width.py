#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check that a text block fits a commit message.

Usage: check_width.py COLUMNS LINES FILE...
       check_width.py --commit FILE...

Each FILE has at most LINES lines of at most COLUMNS characters (counted
as characters, not bytes: a verdict label carries a '≈').  --commit: the
commit block's own bounds (analysis/render/commit_msg.py WIDTH and
MAX_LINES), stated once there.  Prints the first offending line and
exits 1, else one ok line.
"""
import os
import sys


def main(argv):
    if argv[:1] == ["--commit"] and len(argv) > 1:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from analysis.render import commit_msg
        argv = [str(commit_msg.WIDTH), str(commit_msg.MAX_LINES)] + argv[1:]
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cols, most = int(argv[0]), int(argv[1])
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        if len(lines) > most:
            print(f"FAIL: {path}: {len(lines)} lines, more than {most}")
            return 1
        for i, line in enumerate(lines, 1):
            if len(line) > cols:
                print(f"FAIL: {path}:{i}: over {cols} columns: {line}")
                return 1
        print(f"ok: {path}: {len(lines)} lines of at most {cols} columns")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
