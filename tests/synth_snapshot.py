# SPDX-License-Identifier: GPL-2.0
"""Four synthetic runs (tests/unit/synth.py) and every file `./run.sh
report` writes for them, for a refactoring that must not change an
output: take a snapshot before, one after, and `diff -r` them.

Usage: /usr/bin/python3 -m tests.synth_snapshot OUT [--no-plots]

The runs are built under one fixed folder (/tmp/lockbench-synth), so
that the paths the outputs name are the same in every snapshot, then
moved to OUT/NAME.  Lines that carry the time of the report are the
report's own; a diff that shows only them is no change."""

import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.unit import synth  # noqa: E402

WORK = "/tmp/lockbench-synth"

#: name -> (maker, keyword arguments)
RUNS = {
    "two": (synth.make_run, {"effects": {"p1": 0.90, "p2": 1.00}}),
    "four-locks": (synth.make_run, {
        "cpus": (1, 2),
        "variants": [
            {"name": "before", "lock": "rw", "patches": ["0001"]},
            {"name": "after", "lock": "spin", "patches": ["0001", "0002"],
             "effects": {"p1": 0.95}},
            {"name": "rcu", "lock": "rcu", "patches": ["0001", "0003"],
             "effects": {"p1": 1.10}},
            {"name": "nolockstat", "lock": "none", "patches": ["0001"]},
        ],
        "compare": [["after", "before"], ["rcu", "before"]]}),
    "default": (synth.make_default_run, {}),
    "default-plain": (synth.make_default_run, {"plain": True,
                                               "name": "plain"}),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="a folder that does not exist yet")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args()
    if os.path.exists(args.out):
        sys.exit(f"synth_snapshot: {args.out} exists")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    os.makedirs(args.out)
    for name, (make, kw) in RUNS.items():
        d = os.path.join(WORK, name)
        make(d, **kw)
        cmd = [os.path.join(ROOT, "run.sh"), "report", d, "-q"]
        if args.no_plots:
            cmd.append("--no-plots")
        cp = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
        with open(os.path.join(d, "report.stdout"), "w") as f:
            f.write(f"exit {cp.returncode}\n{cp.stdout}")
        shutil.move(d, os.path.join(args.out, name))
        print(f"{name}: exit {cp.returncode}")


if __name__ == "__main__":
    main()
