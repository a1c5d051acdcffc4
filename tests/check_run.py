#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check one run directory of guest/run_guest.py as the tests expect it.

Usage: check_run.py DIR --lock rwlock|spinlock|rcu|none [--perf-data]

Asserts: the run is "ok" with every point back and meta.json complete; the
console shows /proc/lock_stat readable and omap_mbox_register in kallsyms;
for every point the module's results parse with non-zero counts and every
self-check ok, perf stat parses with a task-clock, lock_stat has
mboxes_lock as the variant's lock type prints it (rwlock: -R and -W rows,
or one row when only one side was taken; spinlock: one plain row), and the
module's exact count of registry calls agrees with lock_stat's acquisitions
within 1%.  rcu: lookups take no lock, so the one plain row counts the
module's writes only.  none (a kernel without CONFIG_LOCK_STAT): the
console says once that there is no /proc/lock_stat and no point has a
lock_stat.txt.  With --perf-data: perf.data arrived (its SHA-256 matched the
guest's, as run_guest.py checks) and perf lock report names mboxes_lock.

Prints one line per check; exit 1 on the first failure.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from analysis.parse import bench_results, lockstat, perf_stat  # noqa: E402

META_KEYS = ("variant", "build", "cpus", "mem_mb", "host", "start", "end",
             "boot_to_init_s", "boot_to_workload_s", "state", "exit_code")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check_point(d, pid, lock, perf_data):
    pd = os.path.join(d, "points", pid)
    res = bench_results.parse_file(os.path.join(pd, "results.txt"))
    if res.status != "SUCCESS":
        fail(f"{pid}: module status {res.status}")
    bad = [c for c in res.checks for k, v in c.items() if v == "fail"]
    if bad:
        fail(f"{pid}: self-checks failed: {bad}")
    tot = res.total
    rp = res.param["read_pct"]
    if tot["ops"] <= 0 or any(t["ops"] <= 0 for t in res.threads):
        fail(f"{pid}: a thread made no progress: {res.threads}")
    if rp > 0 and tot["lookups"] <= 0 or rp < 100 and tot["writes"] <= 0:
        fail(f"{pid}: read_pct={rp} but lookups={tot['lookups']} writes={tot['writes']}")
    print(f"ok: {pid}: read_pct={rp}: {tot['ops']} ops ({tot['lookups']} lookups, "
          f"{tot['writes']} writes) on {len(res.threads)} threads, checks ok")

    counters = perf_stat.parse_file(os.path.join(pd, "perf-stat.csv"))
    tc = counters.get("task-clock")
    if tc is None or not tc.value:
        fail(f"{pid}: perf stat has no task-clock: {list(counters)}")
    print(f"ok: {pid}: perf stat task-clock {tc.value:.0f} ms")

    if lock == "none":
        if os.path.exists(os.path.join(pd, "lock_stat.txt")):
            fail(f"{pid}: lock_stat.txt from a kernel without lock_stat")
        print(f"ok: {pid}: no lock_stat.txt (kernel without CONFIG_LOCK_STAT)")
        return
    ls = lockstat.parse_file(os.path.join(pd, "lock_stat.txt"))
    rows = {r.kind: r for r in ls.rows if r.name == "mboxes_lock"}
    if not rows:
        fail(f"{pid}: no mboxes_lock in lock_stat")
    reads, writes = res.lockops["read"], res.lockops["write"]
    if lock == "spinlock":
        if set(rows) != {""}:
            fail(f"{pid}: spinlock kernel shows mboxes_lock rows {sorted(rows)}")
        pairs = [("plain row", rows[""].acquisitions, reads + writes)]
    elif lock == "rcu":
        if set(rows) != {""}:
            fail(f"{pid}: rcu kernel shows mboxes_lock rows {sorted(rows)}")
        pairs = [("plain row (writes only)", rows[""].acquisitions, writes)]
    else:
        if "" in rows and reads and writes:
            fail(f"{pid}: rwlock kernel with reads and writes shows a plain row")
        if set(rows) != {"R", "W"}:
            fail(f"{pid}: rwlock kernel shows mboxes_lock rows {sorted(rows)}")
        pairs = [("-R row", rows["R"].acquisitions, reads),
                 ("-W row", rows["W"].acquisitions, writes)]
    for what, got, want in pairs:
        if abs(got - want) > 0.01 * max(want, 1):
            fail(f"{pid}: lock_stat {what} acquisitions {got} vs module {want}: more than 1% apart")
        print(f"ok: {pid}: lock_stat {what} acquisitions {got} == module's {want} (within 1%)")

    if perf_data:
        if not os.path.isfile(os.path.join(pd, "perf.data")):
            fail(f"{pid}: no perf.data")
        with open(os.path.join(pd, "perf-lock.txt")) as f:
            rep = f.read()
        if "mboxes_lock" not in rep:
            fail(f"{pid}: perf lock report does not name mboxes_lock")
        print(f"ok: {pid}: perf.data ({os.path.getsize(os.path.join(pd, 'perf.data'))} bytes) "
              "matched the guest's SHA-256; perf lock report names mboxes_lock")


def main(argv):
    p = argparse.ArgumentParser(prog="check_run.py")
    p.add_argument("dir")
    p.add_argument("--lock", choices=("rwlock", "spinlock", "rcu", "none"), required=True)
    p.add_argument("--perf-data", action="store_true")
    args = p.parse_args(argv)
    with open(os.path.join(args.dir, "meta.json")) as f:
        meta = json.load(f)
    missing = [k for k in META_KEYS if meta.get(k) is None]
    if missing:
        fail(f"meta.json lacks {missing}")
    if meta["state"] != "ok" or meta["points_done"] != meta["points_planned"]:
        fail(f"run state {meta['state']}, points {meta['points_done']} of "
             f"{meta['points_planned']}: {meta['problems']}")
    for f in ("console.log", "qemu-cmd", "rerun", "job.conf"):
        if not os.path.isfile(os.path.join(args.dir, f)):
            fail(f"no {f}")
    print(f"ok: run complete: {len(meta['points_done'])} points, boot-to-workload "
          f"{meta['boot_to_workload_s']} s")
    with open(os.path.join(args.dir, "console.log"), errors="replace") as f:
        console = f.read()
    # The root fs has no /dev/console of its own: the kernel's built-in
    # initramfs must give init its console (guest/inside/rootfs-files.txt).
    if "unable to open an initial console" in console:
        fail("console: the kernel found no /dev/console for init")
    if args.lock == "none":
        said = console.count("no /proc/lock_stat (kernel built without CONFIG_LOCK_STAT)")
        if "lock_stat='lock_stat version" in console or said != 1:
            fail(f"console: /proc/lock_stat present, or its absence said {said} times, not once")
        print("ok: no /proc/lock_stat, and the console says so once")
    elif "lock_stat='lock_stat version 0.4'" not in console:
        fail("console: /proc/lock_stat was not readable")
    if "omap_mbox_register=1" not in console:
        fail("console: omap_mbox_register not in /proc/kallsyms")
    print("ok: omap_mbox_register in /proc/kallsyms"
          + ("" if args.lock == "none" else ", /proc/lock_stat readable"))
    for pid in meta["points_done"]:
        check_point(args.dir, pid, args.lock, args.perf_data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
