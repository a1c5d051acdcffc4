#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check the run directory of a faulted guest run as the fault tests expect.

Usage: check_fault.py DIR --state S --exit N [--done ID...] [--lost ID...]
                      [--problem REGEX] [--max-wall S]

Asserts: meta.json says state S and exit code N (never "ok" unless asked);
the points --done were brought back, their SHA-256 verified by the runner,
and their results.txt and lock_stat.txt parse (module status SUCCESS);
the points --lost are not claimed done; some problem line of meta.json
matches --problem; the run took at most --max-wall seconds.  One line per
check; exit 1 on the first failure.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from analysis.parse import bench_results, lockstat  # noqa: E402


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main(argv):
    p = argparse.ArgumentParser(prog="check_fault.py")
    p.add_argument("dir")
    p.add_argument("--state", required=True)
    p.add_argument("--exit", type=int, required=True)
    p.add_argument("--done", nargs="*", default=[])
    p.add_argument("--lost", nargs="*", default=[])
    p.add_argument("--problem")
    p.add_argument("--max-wall", type=float)
    a = p.parse_args(argv)
    try:
        with open(os.path.join(a.dir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"no readable meta.json: {e}")
    if meta.get("state") != a.state or meta.get("exit_code") != a.exit:
        fail(f"state {meta.get('state')} exit {meta.get('exit_code')}, want {a.state} {a.exit}: "
             f"{meta.get('problems')}")
    print(f"ok: meta.json: state {a.state}, exit code {a.exit}")
    for pid in a.done:
        if pid not in meta["points_done"]:
            fail(f"point {pid} not brought back: {meta['points_done']}")
        d = os.path.join(a.dir, "points", pid)
        res = bench_results.parse_file(os.path.join(d, "results.txt"))
        if res.status != "SUCCESS":
            fail(f"point {pid}: module status {res.status}")
        ls = lockstat.parse_file(os.path.join(d, "lock_stat.txt"))
        print(f"ok: point {pid} brought back intact: SHA-256 verified, "
              f"{res.total['ops']} ops, {len(ls.rows)} lock_stat rows")
    for pid in a.lost:
        if pid in meta["points_done"]:
            fail(f"point {pid} claimed done")
    if a.lost:
        print(f"ok: not claimed done: {' '.join(a.lost)}")
    if a.problem:
        hits = [pr["line"] for pr in meta["problems"] if re.search(a.problem, pr["line"])]
        if not hits:
            fail(f"no problem line matches {a.problem!r}: {meta['problems']}")
        print(f"ok: meta.json problems: {hits[0]}")
    if a.max_wall is not None:
        if meta["wall_s"] > a.max_wall:
            fail(f"wall {meta['wall_s']} s > {a.max_wall} s")
        print(f"ok: stopped after {meta['wall_s']} s (limit {a.max_wall:g} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
