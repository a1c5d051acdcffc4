#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check a run directory of lockload points (guest/JOB.md, workload=) on an
rwlock kernel: the cross-check of guest/inside/lockload against /proc/lock_stat.

Usage: check_lockload.py DIR [--lock NAME] [--lock-type rwlock|spinlock]
                          [--writer-point ID...] [--point-lock ID=NAME...]
                          [--skip-point ID...]

For every point brought back: results.txt parses (bench-module/FORMAT.md)
with status SUCCESS, every check ok, a workload= on its param line and ops
on every thread; lock_stat.txt has NAME (default: the point's own, the
lock= of lockload's lockops line: file_systems_lock, or binfmt_lock for
execve, proc_subdir_lock for proc_lookup), and its read acquisitions (the -R row, or the one plain row when only reads
were taken) equal lockload's `lockops read` within 1%, its write
acquisitions (-W row; none when lockload reports none) `lockops write`
(twice the fs_writer pairs) within 1%.  For binfmt_lock, read by every
exec of the guest, lockload's count is 3 per exec (search_binary_handler:
once, then once after each of binfmt_script and binfmt_elf) of its
workload's, of its own and of the --outside-execs that guest/inside/init.sh gives
it (its sh -c wrapper, the cat of /proc/lock_stat, perf): the whole of
lock_stat's, so the same 1% applies, and an exact count is the rule.
For proc_subdir_lock, a proc_lookup op reads it once and each writer pair
(proc_create + remove_proc_entry of /proc/lockbench_fsw) reads it once
and writes it twice: lockload's read count includes the pairs' reads.  --lock-type spinlock (a kernel
where ./run.sh convert made the lock a spinlock): one plain row, whose
acquisitions equal read + write within 1%.  lock_stat is cleared right before
each point, so the boot's own users of the lock are outside it.  A
--writer-point must have writes > 0.  Every point of the job must be
back (the runner's meta.json).  A generic workload's point (read PATH,
...: lockload says lock=unknown, and counts the K of its locks_per_op an
op) needs its lock named, --point-lock ID=NAME; --skip-point ID leaves a
point out (one that ./run.sh calibrate judges instead).

Prints one line per check; exit 1 on the first failure.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from analysis.parse import bench_results, lockstat  # noqa: E402


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def within(got, want):
    return abs(got - want) <= 0.01 * max(want, 1)


def check_point(d, pid, lock, writer, lock_type):
    pd = os.path.join(d, "points", pid)
    res = bench_results.parse_file(os.path.join(pd, "results.txt"))
    lock = lock or res.lockops.get("lock", "file_systems_lock")
    if lock == "unknown":
        fail(f"{pid}: a generic workload's point ({res.param.get('workload')}): "
             "name its lock with --point-lock ID=NAME")
    wl = res.param.get("workload")
    if not wl:
        fail(f"{pid}: no workload= on the param line: not lockload's results")
    if res.status != "SUCCESS":
        fail(f"{pid}: lockload status {res.status}")
    bad = [c for c in res.checks for v in c.values() if v == "fail"]
    if bad:
        fail(f"{pid}: checks failed: {bad}")
    if any(t["ops"] <= 0 for t in res.threads):
        fail(f"{pid}: a thread made no progress: {res.threads}")
    reads, writes = res.lockops["read"], res.lockops["write"]
    if writer and res.total["writes"] <= 0:
        fail(f"{pid}: writer point with writes=0")
    print(f"ok: {pid}: workload={wl}: {res.total['ops']} ops on {len(res.threads)} threads, "
          f"{res.total['writes']} writer pairs, lockops read={reads} write={writes} lock={lock}")

    ls = lockstat.parse_file(os.path.join(pd, "lock_stat.txt"))
    rows = {r.kind: r for r in ls.rows if r.name == lock}
    if not rows:
        fail(f"{pid}: no {lock} in lock_stat")
    if "" in rows and ("R" in rows or "W" in rows):
        fail(f"{pid}: {lock} has a plain row beside -R/-W rows: {sorted(rows)}")
    if lock_type == "spinlock":
        if set(rows) != {""}:
            fail(f"{pid}: spinlock kernel shows {lock} rows {sorted(rows)}")
        got, want = rows[""].acquisitions, reads + writes
        if not within(got, want):
            fail(f"{pid}: lock_stat {lock} acquisitions {got} vs lockload's read + write "
                 f"{want}: more than 1% apart")
        print(f"ok: {pid}: lock_stat {lock} acquisitions {got} == lockload's read + write "
              f"{want} (within 1%{', exactly' if got == want else ''})")
        return
    got_r = rows["R"].acquisitions if "R" in rows else rows[""].acquisitions if not writes else 0
    got_w = rows["W"].acquisitions if "W" in rows else 0
    for what, got, want in (("read", got_r, reads), ("write", got_w, writes)):
        if not within(got, want):
            fail(f"{pid}: lock_stat {lock} {what} acquisitions {got} vs lockload's {want}: "
                 "more than 1% apart")
        print(f"ok: {pid}: lock_stat {lock} {what} acquisitions {got} == lockload's {want} "
              f"(within 1%{', exactly' if got == want else ''})")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--lock", default=None)
    ap.add_argument("--writer-point", action="append", default=[])
    ap.add_argument("--lock-type", choices=("rwlock", "spinlock"), default="rwlock")
    ap.add_argument("--point-lock", action="append", default=[], metavar="ID=NAME")
    ap.add_argument("--skip-point", action="append", default=[], metavar="ID")
    args = ap.parse_args(argv)
    try:
        with open(os.path.join(args.dir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.dir}: no run's meta.json: {e}")
    if meta.get("state") != "ok":
        fail(f"run state {meta.get('state')!r}, not ok")
    pids = sorted(os.listdir(os.path.join(args.dir, "points")))
    if not pids or sorted(meta.get("points_done", [])) != sorted(meta.get("points_planned", [])):
        fail(f"points back {pids}, planned {meta.get('points_planned')}")
    locks = dict(pl.split("=", 1) for pl in args.point_lock if "=" in pl)
    for pid in pids:
        if pid in args.skip_point:
            print(f"ok: {pid}: left out (--skip-point)")
            continue
        check_point(args.dir, pid, locks.get(pid, args.lock), pid in args.writer_point,
                    args.lock_type)


if __name__ == "__main__":
    main(sys.argv[1:])
