# SPDX-License-Identifier: GPL-2.0
"""QEMU's vCPU threads seen from the host: pin them to cores (--pin), and
measure how long each waited on a host run queue while a point ran (host
steal, host-steal.txt).  Used by guest/run_guest.py while a guest runs;
boot_cores() also by the campaign runner, which hands out the cores."""
import contextlib
import os
import re
import time

from guest.hostspeed import METER_FILE
from guest import point_files
from guest.judge import RunError
from lockbench import safeio


# Pinning (--pin CORES): the thread of vCPU N ("CPU N/TCG") gets the Nth
# core of the list, by sched_setaffinity, as soon as QEMU has created the
# vCPU threads (at machine init, before the guest runs).  QEMU's other
# threads (main loop, RCU, workers) keep the runner's affinity: the issue
# wanted the main loop on a core of its own, but a 2-core host running 2
# vCPUs has none to give it, and its main loop is mostly asleep under TCG.
# A pin that cannot be applied (fewer cores listed than vCPUs, a core this
# runner may not use, threads that never show) is one line on stderr and
# meta.json's pin.why; the run goes on unpinned.
PIN_WAIT_S = 10
VCPU_INDEX = re.compile(r"CPU (\d+)/TCG")
# QEMU's vCPU thread names with debug-threads=on: one per vCPU with
# thread=multi, one for all of them with thread=single.
VCPU_COMM = re.compile(r"CPU \d+/TCG|ALL CPUs/TCG")


def parse_pin(text):
    """--pin CORES: a comma list of distinct host core numbers."""
    parts = text.split(",")
    if not all(re.fullmatch(r"\d{1,4}", x) for x in parts):
        raise RunError(2, f"--pin {text}: must be a comma list of host core numbers, e.g. 0,1")
    cores = [int(x) for x in parts]
    if len(set(cores)) != len(cores):
        raise RunError(2, f"--pin {text}: a core is listed twice (one vCPU per core)")
    return cores


def pin_plan(cores, cpus, allowed):
    """({vCPU index: host core}, None), or (None, why not) when the list
    has fewer cores than vCPUs or a core outside allowed (a set)."""
    if len(cores) < cpus:
        return None, (f"{cpus} vCPUs but {len(cores)} host core{'' if len(cores) == 1 else 's'} "
                      f"given (--pin {','.join(map(str, cores))}): one core per vCPU needed")
    off = [c for c in cores[:cpus] if c not in allowed]
    if off:
        return None, (f"host core {','.join(map(str, off))} not available to this runner "
                      f"(it may use {','.join(map(str, sorted(allowed)))})")
    return {i: cores[i] for i in range(cpus)}, None


def vcpu_threads(pid):
    """{tid: name} of QEMU process pid's vCPU threads now (VCPU_COMM);
    {} when its task list cannot be read."""
    return {t: n for t, n in qemu_threads(pid).items()
            if VCPU_COMM.fullmatch(n)}


def qemu_threads(pid):
    """{tid: name} of every thread of QEMU process pid now; {} when its
    task list cannot be read."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            name = safeio.read_text(f"/proc/{pid}/task/{tid}/comm", 4096).strip()
        except OSError:
            continue
        out[int(tid)] = name
    return out


def vcpu_tids(pid):
    """{vCPU index: tid} of QEMU process pid's "CPU N/TCG" threads now."""
    return {int(m.group(1)): tid for tid, name in vcpu_threads(pid).items()
            if (m := VCPU_INDEX.fullmatch(name))}



def apply_pin(proc, cpus, cores, wait_s=PIN_WAIT_S):
    """Pin QEMU's vCPU threads as --pin says, once they exist; return
    meta.json's pin record: requested, applied, and per thread its tid and
    the cores it may run on afterwards, or why not."""
    rec = {"requested": cores, "applied": False,
           "others": "QEMU's other threads unpinned"}
    allowed = os.sched_getaffinity(0)
    plan, why = pin_plan(cores, cpus, allowed)
    t0 = time.monotonic()
    tids = {}
    while plan is not None:
        tids = vcpu_tids(proc.pid)
        if all(i in tids for i in plan):
            break
        if proc.poll() is not None:
            why = "QEMU exited before its vCPU threads showed"
            break
        if time.monotonic() - t0 > wait_s:
            why = (f"{len(tids)} of {cpus} vCPU threads (CPU N/TCG) showed within "
                   f"{wait_s:g} s")
            break
        time.sleep(0.005)
    if why is None:
        threads = {}
        try:
            for i, core in sorted(plan.items()):
                os.sched_setaffinity(tids[i], {core})
                threads[f"CPU {i}/TCG"] = {"tid": tids[i],
                                           "cores": sorted(os.sched_getaffinity(tids[i]))}
        except OSError as e:
            why = f"sched_setaffinity: {e.strerror or e}"
            for t in threads.values():  # all or none: undo the ones done
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(t["tid"], allowed)
        else:
            rec.update(applied=True, threads=threads,
                       after_s=round(time.monotonic() - t0, 3))
    if why is not None:
        rec["why"] = why
    return rec


def boot_cores(cpus, rep, vidx, host_cores, busy=()):
    """The host cores a campaign boot (cpus vCPUs, repetition rep, of the
    campaign's vidx-th variant) is pinned to, one per vCPU; None while they
    are busy (in use by a running boot: it waits for them).  A boot with
    as many vCPUs as host_cores or more gets them all (it runs alone; with
    more vCPUs than cores the runner says it cannot pin).  A smaller boot
    gets one of len(host_cores) // cpus disjoint blocks, block (vidx + rep)
    mod blocks: side by side the variants of a repetition get distinct
    blocks, and each variant moves to the next block at the next
    repetition, so that over the repetitions every variant sees every
    core (a slow core cancels)."""
    host = sorted(host_cores)
    if cpus >= len(host):
        cores = host
    else:
        b = (vidx + rep) % (len(host) // cpus)
        cores = host[b * cpus:(b + 1) * cpus]
    return None if set(cores) & set(busy) else cores


def pin_line(label, rec):
    """The runner's one line about the pin."""
    if rec["applied"]:
        return (f"boot: {label}: pinned " + ", ".join(
            f"{name} (tid {t['tid']}) to core {','.join(map(str, t['cores']))}"
            for name, t in rec["threads"].items()) + "; other QEMU threads unpinned")
    return f"boot: {label}: pin not applied, running unpinned: {rec['why']}"


# Host steal (guest/JOB.md, host-steal.txt): how long each QEMU vCPU thread
# waited on a host run queue while a point's module ran.  The guest cannot
# see it (a TCG guest has no steal clock), and it is what turns a 2-vCPU
# spinlock run on a 2-core host into lock-waiter preemption.
STEAL_FILE = "host-steal.txt"
# Files of a point that the host writes after collect(); the guest's stream
# may not carry them.
HOST_FILES = (STEAL_FILE, METER_FILE)
RUN_MARK = re.compile(r"lockbench: point (\S+) run-(begin|end)\s*$")


def thread_sched(pid, tid):
    """(run_ns, wait_ns, nonvoluntary switches) of one thread from
    /proc/PID/task/TID/schedstat and status; None once it is gone (or
    when the host kernel has no schedstat: CONFIG_SCHED_INFO off)."""
    task = f"/proc/{pid}/task/{tid}"
    try:
        run_ns, wait_ns, _slices = (int(x) for x in
                                    safeio.read_text(f"{task}/schedstat", 4096).split())
        nvcsw = next(int(line.split()[1])
                     for line in safeio.read_text(f"{task}/status", 1 << 16).splitlines()
                     if line.startswith("nonvoluntary_ctxt_switches:"))
    except (OSError, ValueError, StopIteration):
        return None
    return run_ns, wait_ns, nvcsw


def vcpu_snapshot(pid):
    """{tid: (name, monotonic ns, run_ns, wait_ns, nvcsw)} of every thread
    of QEMU process pid, now (its vCPU threads and the others: main loop,
    RCU, workers, whose run time is what the guest's own QEMU could have
    taken from its vCPUs); {} when none can be read."""
    snap = {}
    for tid, name in qemu_threads(pid).items():
        # Stamped at the middle of the read: the counters belong there.
        t0 = time.monotonic_ns()
        sched = thread_sched(pid, tid)
        if sched is not None:
            snap[int(tid)] = (name, (t0 + time.monotonic_ns()) // 2) + sched
    return snap


def note_run_mark(line, t, pid, marks):
    """At a console line "lockbench: point ID run-begin|run-end" of a
    planned point, keep (t, vcpu_snapshot) under marks[ID]["begin"|"end"]
    (the first one only).  Taken as the line is read: the window is off
    by the console's latency, milliseconds unless the host deschedules
    this runner too."""
    m = RUN_MARK.search(line)
    if m and m.group(1) in marks and m.group(2) not in marks[m.group(1)]:
        marks[m.group(1)][m.group(2)] = (t, vcpu_snapshot(pid))


def vcpu_order(name):
    """Sort key of a thread name: vCPU threads first, CPU 2 before CPU 10,
    then QEMU's other threads by name."""
    return [not VCPU_COMM.fullmatch(name)] + [
        int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name)]


def steal_rows(begin, end):
    """One dict per thread in both snapshots (vCPU threads first): what it
    did between."""
    rows = []
    for tid in sorted(set(begin) & set(end), key=lambda t: (vcpu_order(end[t][0]), t)):
        name, t0, run0, wait0, nv0 = begin[tid]
        _, t1, run1, wait1, nv1 = end[tid]
        wall = t1 - t0
        rows.append({"thread": name, "tid": tid, "wall_ns": wall,
                     "run_ns": run1 - run0, "wait_ns": wait1 - wait0,
                     "nonvoluntary_switches": nv1 - nv0,
                     "steal_pct": 100 * (wait1 - wait0) / wall if wall > 0 else 0.0})
    return rows


STEAL_COLUMNS = ("thread", "tid", "wall_ns", "run_ns", "wait_ns",
                 "nonvoluntary_switches", "steal_pct")


def steal_text(point_id, mark, rows):
    """host-steal.txt of one point (format: guest/JOB.md)."""
    (tb, _), (te, _) = mark["begin"], mark["end"]
    lines = ["lockbench-host-steal v1",
             f"# point {point_id}: QEMU vCPU threads between the console markers run-begin "
             f"(runner t={tb:.3f} s) and run-end (t={te:.3f} s)",
             "# steal_pct = 100 * wait_ns / wall_ns: time runnable on a host run queue, not run",
             "\t".join(STEAL_COLUMNS)]
    for r in rows:
        lines.append("\t".join(f"{r[c]:.3f}" if c == "steal_pct" else str(r[c])
                               for c in STEAL_COLUMNS))
    return "\n".join(lines) + "\n"


def write_steal(out, done, marks):
    """Write points/ID/host-steal.txt for every verified point with both
    markers and vCPU threads; return what meta.json says about it.  A file
    that cannot be written is left out (absent: not measured), and said."""
    def text(pid, mark):
        rows = steal_rows(mark["begin"][1], mark["end"][1])
        return steal_text(pid, mark, rows) \
            if any(VCPU_COMM.fullmatch(r["thread"]) for r in rows) else None
    written, why = point_files.write_windows(out, done, marks, STEAL_FILE, text)
    if not written and not why:
        why.append("no run-begin/run-end markers on the console" if not any(marks.values())
                   else "no QEMU vCPU thread (CPU N/TCG) readable in /proc")
    return {"file": STEAL_FILE, "points": written, **({"why_not": "; ".join(why)} if why else {})}


# The longest console line scanned whole.  A kernel message is at most
# 1 KB (printk's PRINTK_MESSAGE_MAX) and ends in a newline on the console,
# so a longer line is the guest's own output: it is scanned in pieces of
