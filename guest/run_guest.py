#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Boot one kernel variant in QEMU (TCG) and run a job in it, or give a shell.

Usage: run_guest.py TARGET [--cpus N] [--mem MB] [--job FILE --out DIR]
                           [--pin CORES] [--timeout S] [--dry-run]

TARGET is VARIANT (a 32-bit ARM guest: qemu-system-arm -M virt -cpu
cortex-a15, build/VARIANT/uImage, build/rootfs) or VARIANT@ARCH (arm64:
qemu-system-aarch64 -M virt -cpu cortex-a57, build/VARIANT@arm64/Image,
build/rootfs-arm64); scripts/variant.py's ARCHES says which is which.

With --job, the run directory OUT gets: console.log, qemu-cmd (the exact
command; its initrd is scratch, in $TMPDIR, removed once the guest talks),
rerun (OUT/rerun NEWDIR, from the harness root: the same job again),
job.conf (the job as checked and given to the guest), meta.json (with
the arch and the QEMU binary, machine and CPU) and points/<id>/ for every
point the guest finished (each checked against the guest's SHA256SUMS
and its run id against the point's before; the guest is not trusted:
collect() writes its files itself, guest/JOB.md).  The run
never hangs and never lies: a wall-clock limit and a silence limit kill a
stuck guest ("hung"), the console is scanned for panics, oopses, lockdep
reports and warnings, and a run without every point and the guest's end
marker is never "ok".

--pin CORES (a comma list, e.g. 0,1) pins vCPU N's QEMU thread to the
Nth core listed as soon as QEMU has created it; the other QEMU threads
stay unpinned.  A pin that cannot be applied is one line on stderr and
the run goes on unpinned; meta.json's "pin" records either.

Exit status: 0 ok; 2 bad arguments; 3 variant or root fs not built or a
package missing; 10 hung, 11 panic, 12 oops, 13 lockdep, 14 warning,
15 incomplete, 16 QEMU killed, 17 no space left for the results,
130 interrupted.
"""
import argparse
import contextlib
import datetime
import errno
import hashlib
import json
import os
import re
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import job as jobmod  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("LOCKBENCH_BUILD", os.path.join(ROOT, "build"))
INIT = os.path.join(ROOT, "guest", "init.sh")

EXIT = {"ok": 0, "hung": 10, "panic": 11, "oops": 12, "lockdep": 13,
        "warning": 14, "incomplete": 15, "killed": 16, "nospace": 17,
        "interrupted": 130}
# Most severe first: a run's state is the worst thing that happened to it.
SEVERITY = ["panic", "hung", "nospace", "interrupted", "oops", "lockdep", "warning",
            "killed", "incomplete", "ok"]
CONSOLE_PATTERNS = [
    ("panic", re.compile(r"Kernel panic - not syncing")),
    ("lockdep", re.compile(
        r"possible circular locking dependency|possible recursive locking"
        r"|inconsistent lock state|possible irq lock inversion"
        r"|suspicious RCU usage|lock held when returning|bad unlock balance"
        r"|held lock freed|INFO: lockdep is turned off|DEBUG_LOCKS_WARN_ON")),
    ("oops", re.compile(r"\bBUG:|\bOops\b|Internal error:|Unable to handle kernel")),
    ("warning", re.compile(r"WARNING:|\[ cut here \]")),
]
# Guest time for booting, and per point beyond its duration (perf, dumps).
BOOT_S = 90
POINT_OVERHEAD_S = 30


class RunError(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code


class OneLineParser(argparse.ArgumentParser):
    """Bad usage is one line on stderr and exit 2, not a usage dump."""

    def error(self, message):
        print(f"boot: {message} (./run.sh boot --help)", file=sys.stderr)
        sys.exit(2)


def make_parser():
    p = OneLineParser(
        prog="./run.sh boot",
        description="Boot a kernel variant under QEMU TCG: a shell, or one job.")
    p.add_argument("variant",
                   help="a built VARIANT or VARIANT@ARCH (./run.sh build TARGET)")
    p.add_argument("--cpus", type=int, default=2, help="vCPUs, 1..16 (default 2)")
    p.add_argument("--mem", type=int, default=512, help="guest memory in MiB, 128..2048 (default 512)")
    p.add_argument("--job", help="job file to run (guest/JOB.md); without it, a shell")
    p.add_argument("--out", help="run directory for --job (created; must not exist or be empty)")
    p.add_argument("--timeout", type=float, help="wall-clock limit in s (default: from the job)")
    p.add_argument("--silence", type=float,
                   help="kill as hung after this many s without console output (default: from the job)")
    p.add_argument("--pin", metavar="CORES",
                   help="pin vCPU N's thread to the Nth host core of this comma list "
                   "(e.g. 0,1); QEMU's other threads stay unpinned")
    p.add_argument("--dry-run", action="store_true", help="print the QEMU command and exit")
    return p


def variantmod():
    """scripts/variant.py (sent along to --hosts machines)."""
    scripts = os.path.join(ROOT, "scripts")
    if scripts not in sys.path:  # called per target: put it there once
        sys.path.insert(0, scripts)
    import variant  # noqa: E402
    return variant


def target(name):
    """(variant, arch, label) of VARIANT or VARIANT@ARCH; RunError 2 if bad."""
    vm = variantmod()
    try:
        variant, arch = vm.parse_target(name)
    except vm.VariantError as e:
        raise RunError(2, str(e)) from None
    return variant, arch, vm.label(variant, arch)


def arch_info(arch):
    """What builds and boots arch (scripts/arches.toml): {"kernel", "qemu",
    "machine", "cpu", "console", "gicv2_max_cpus", ...}."""
    return variantmod().ARCHES[arch]


def rootfs_path(arch):
    """The guest root file system of arch's guests."""
    return os.path.join(BUILD, variantmod().rootfs_dir(arch), "rootfs.cpio")


def artifacts(name):
    vm = variantmod()
    variant, arch, label = target(name)
    vdir = os.path.join(BUILD, label)
    if not os.path.isdir(vdir) and vm.find_file(variant) is None:
        raise RunError(2, f"unknown variant {variant!r} (known: {', '.join(vm.variant_names())})")
    need = {"kernel": os.path.join(vdir, arch_info(arch)["kernel"]),
            "mbox_bench.ko": os.path.join(vdir, "mbox_bench.ko"),
            "build-meta.json": os.path.join(vdir, "build-meta.json")}
    for path in need.values():
        if not os.path.isfile(path):
            raise RunError(3, f"variant {label!r} is not built ({path} missing): run ./run.sh build {label}")
    rootfs = rootfs_path(arch)
    if not os.path.isfile(rootfs):
        raise RunError(3, f"no guest root file system ({rootfs}): run ./run.sh build"
                       + ("" if arch == vm.DEFAULT_ARCH else f" {label}"))
    need["rootfs"] = rootfs
    need["arch"] = arch
    # The userspace load generator (guest/build-lockload.sh) and the file
    # system writer module: optional, a job that needs them is checked in
    # make_initrd().
    need["lockload"] = lockload_path(arch)
    need["fs_writer.ko"] = os.path.join(vdir, "fs_writer.ko")
    return need


def lockload_path(arch):
    """The static lockload binary for arch's guests."""
    return os.path.join(BUILD, "lockload", arch, "lockload")


# What a job needs beyond the module: a pattern of its text, and why.
NEEDS = {"lockload": (r"\bworkload=(?!module\b)", "runs lockload"),
         "fs_writer.ko": (r"\bwriter_hz=0*[1-9]", "runs the fs_writer module")}


def make_initrd(path, art, job_text):
    """The root fs cpio followed by a second cpio with init, module, job."""
    if not shutil.which("cpio"):
        raise RunError(3, "missing 'cpio': run ./run.sh setup")
    with tempfile.TemporaryDirectory() as stage:
        shutil.copy(INIT, os.path.join(stage, "init"))
        os.chmod(os.path.join(stage, "init"), 0o755)
        shutil.copy(art["mbox_bench.ko"], os.path.join(stage, "mbox_bench.ko"))
        names = ["init", "mbox_bench.ko"]
        # lockload and fs_writer.ko go in when built: a job whose points
        # run a workload (guest/JOB.md) needs them.
        for name in ("lockload", "fs_writer.ko"):
            src = art.get(name)
            if src and os.path.isfile(src):
                shutil.copy(src, os.path.join(stage, name))
                os.chmod(os.path.join(stage, name), 0o755 if name == "lockload" else 0o644)
                names.append(name)
            elif job_text is not None and re.search(NEEDS[name][0], job_text):
                raise RunError(3, f"the job {NEEDS[name][1]} but {src} is missing: "
                               "run ./run.sh build (the target of this boot)")
        if job_text is not None:
            os.mkdir(os.path.join(stage, "job"))
            with open(os.path.join(stage, "job", "job.conf"), "w") as f:
                f.write(job_text)
            names += ["job", "job/job.conf"]
        cp = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"],
                            input="\n".join(names).encode(), cwd=stage,
                            capture_output=True, check=False)
        if cp.returncode:
            raise RunError(1, f"cpio failed: {cp.stderr.decode().strip()}")
    with open(path, "wb") as out:
        with open(art["rootfs"], "rb") as f:
            shutil.copyfileobj(f, out)
        out.write(cp.stdout)


def qemu_cmd(art, cpus, mem, initrd, results=None):
    """The one place the QEMU command is assembled."""
    a = arch_info(art["arch"])
    # GICv2 (-M virt's default) stops at 8 CPUs.
    machine = a["machine"] + (",gic-version=3" if cpus > a["gicv2_max_cpus"] else "")
    # debug-threads=on names the vCPU threads "CPU N/TCG" (else every
    # thread is "qemu-system-arm"): the host-steal sampler finds them so.
    cmd = [a["qemu"], "-M", machine, "-cpu", a["cpu"], "-accel", "tcg,thread=multi",
           "-name", "lockbench,debug-threads=on",
           "-smp", str(cpus), "-m", str(mem), "-no-reboot", "-nic", "none",
           "-kernel", art["kernel"], "-initrd", initrd,
           "-append", f"console={a['console']} panic=-1 loglevel=6"]
    if results is None:
        return cmd + ["-nographic"]
    return cmd + ["-display", "none", "-monitor", "none", "-serial", "stdio",
                  "-device", "virtio-serial-device",
                  "-chardev", "file,id=results,path=" + results.replace(",", ",,"),
                  "-device", "virtserialport,chardev=results,name=lockbench.results"]


def die_with_parent(sig):
    """A preexec_fn: the child gets SIG when its parent dies, even by SIGKILL,
    so that no QEMU outlives a killed harness.  Call it in the parent."""
    parent = os.getpid()

    def set_pdeathsig():
        import ctypes
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG
        # A parent that died between fork() and prctl() sends nothing:
        # the child was reparented, so it signals itself (prctl(2)).
        if os.getppid() != parent:
            os.kill(os.getpid(), int(sig))
    return set_pdeathsig


def host_info(qemu):
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        qv = subprocess.run([qemu, "--version"], capture_output=True, text=True,
                            check=False).stdout.splitlines()[0]
    except (OSError, IndexError):
        qv = "unknown"
    return {"cpu_model": model, "cores": os.cpu_count(), "qemu_version": qv,
            "accel": "tcg"}


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def free_bytes(path):
    """Bytes this process may still write on path's file system."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize


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
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if VCPU_COMM.fullmatch(name):
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


def cell_cores(cpus, rep, vidx, host_cores, busy=()):
    """The host cores a campaign cell (cpus vCPUs, repetition rep, of the
    campaign's vidx-th variant) is pinned to, one per vCPU; None while they
    are busy (in use by a running cell: it waits for them).  A cell with
    as many vCPUs as host_cores or more gets them all (it runs alone; with
    more vCPUs than cores the runner says it cannot pin).  A smaller cell
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


NOSPACE = (errno.ENOSPC, errno.EDQUOT)
# A results stream stalled with less than this free is a full disk, not a
# hung guest (ext4 keeps some blocks even from root).
LOW_SPACE = 16 << 20


def write_all(f, data):
    """Write data to an unbuffered file; a short write is a full disk."""
    n = f.write(data)
    if n is not None and n < len(data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f.name)


# Host steal (guest/JOB.md, host-steal.txt): how long each QEMU vCPU thread
# waited on a host run queue while a point's module ran.  The guest cannot
# see it (a TCG guest has no steal clock), and it is what turns a 2-vCPU
# spinlock run on a 2-core host into lock-waiter preemption.
STEAL_FILE = "host-steal.txt"
# Files of a point that the host writes after collect(); the guest's stream
# may not carry them.
HOST_FILES = (STEAL_FILE,)
RUN_MARK = re.compile(r"lockbench: point (\S+) run-(begin|end)\s*$")


def thread_sched(pid, tid):
    """(run_ns, wait_ns, nonvoluntary switches) of one thread from
    /proc/PID/task/TID/schedstat and status; None once it is gone (or
    when the host kernel has no schedstat: CONFIG_SCHED_INFO off)."""
    task = f"/proc/{pid}/task/{tid}"
    try:
        with open(f"{task}/schedstat") as f:
            run_ns, wait_ns, _slices = (int(x) for x in f.read().split())
        with open(f"{task}/status") as f:
            nvcsw = next(int(line.split()[1]) for line in f
                         if line.startswith("nonvoluntary_ctxt_switches:"))
    except (OSError, ValueError, StopIteration):
        return None
    return run_ns, wait_ns, nvcsw


def vcpu_snapshot(pid):
    """{tid: (name, monotonic ns, run_ns, wait_ns, nvcsw)} of every vCPU
    thread of QEMU process pid, now; {} when none can be read."""
    snap = {}
    for tid, name in vcpu_threads(pid).items():
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
    """Sort key of a thread name: CPU 2 before CPU 10."""
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name)]


def steal_rows(begin, end):
    """One dict per vCPU thread in both snapshots: what it did between."""
    rows = []
    for tid in sorted(set(begin) & set(end), key=lambda t: vcpu_order(end[t][0])):
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
    written, why = [], []
    for pid in done:
        mark = marks.get(pid, {})
        rows = steal_rows(mark["begin"][1], mark["end"][1]) \
            if "begin" in mark and "end" in mark else []
        if not rows:
            continue
        try:
            # "x": never over a file that is there (collect() refuses a guest's).
            with open(os.path.join(out, "points", pid, STEAL_FILE), "x") as f:
                f.write(steal_text(pid, mark, rows))
        except OSError as e:
            why.append(f"{pid}: cannot write it: {e.strerror or e}")
            continue
        written.append(pid)
    if not written and not why:
        why.append("no run-begin/run-end markers on the console" if not any(marks.values())
                   else "no QEMU vCPU thread (CPU N/TCG) readable in /proc")
    return {"file": STEAL_FILE, "points": written, **({"why_not": "; ".join(why)} if why else {})}


# The longest console line scanned whole.  A kernel message is at most
# 1 KB (printk's PRINTK_MESSAGE_MAX) and ends in a newline on the console,
# so a longer line is the guest's own output: it is scanned in pieces of
# LINE_MAX bytes (console.log keeps it whole), and the runner holds at most
# one piece, however long a line runs without a newline.
LINE_MAX = 4096


def split_lines(pending, data):
    """The lines that pending (a bytearray, the line so far, at most
    LINE_MAX bytes) and data complete, a line longer than LINE_MAX cut
    into pieces of LINE_MAX; pending keeps the rest.  Work linear in
    len(data)."""
    lines, pos = [], 0
    while True:
        nl = data.find(b"\n", pos)
        end = len(data) if nl < 0 else nl
        while end - pos > LINE_MAX - len(pending):
            cut = pos + LINE_MAX - len(pending)
            lines.append(bytes(pending) + data[pos:cut])
            pending.clear()
            pos = cut
        pending += data[pos:end]
        if nl < 0:
            return lines
        lines.append(bytes(pending))
        pending.clear()
        pos = nl + 1


def watch(proc, console_path, limit, silence, results_path, events, problems,
          on_output=None, marks=None, lockdep_silence=None):
    """Stream the console to a file, scan it, enforce the limits.

    Fills events (marker name -> seconds since start it was seen) and
    problems as it goes, so that they survive an interrupt.  Returns None,
    or (state, why) when the runner stopped the guest: "hung" or "nospace"
    (QEMU blocks the guest's results port while the results disk is full).
    on_output is called once, at the guest's first output.  marks (point
    id -> {}) gets, at each point's run-begin and run-end marker, the time
    and a snapshot of QEMU's vCPU threads (note_run_mark).  Once lockdep
    has reported, the silence limit drops to lockdep_silence: a lock that
    deadlocks spins without a word, and the boot is lost either way.
    """
    start = time.monotonic()
    last = start
    last_size = 0
    full_since = None
    pending = bytearray()
    counts = {}
    fd = proc.stdout.fileno()
    stopped = None
    rdir = os.path.dirname(os.path.abspath(results_path))
    quiet = [silence, ""]  # the silence limit now, and why it is that

    def scan(raw):
        line = raw.decode("utf-8", "replace").rstrip("\r")
        t = round(time.monotonic() - start, 3)
        for name in ("LOCKBENCH-INIT", "LOCKBENCH-JOB-END"):
            if name in line and name not in events:
                events[name] = t
        if "lockbench: point " in line and " start " in line:
            events.setdefault("first-point", t)
        if marks is not None:
            note_run_mark(line, t, proc.pid, marks)
        for state, pat in CONSOLE_PATTERNS:
            if pat.search(line):
                if state == "lockdep" and lockdep_silence and lockdep_silence < quiet[0]:
                    quiet[:] = [lockdep_silence, " after lockdep's report (a deadlock)"]
                note(problems, counts, state, {"state": state, "t": t, "line": line.strip()},
                     lambda n, state=state, t=t: {
                         "state": state, "t": t,
                         "line": f"... and {n:,} more {state} lines (console.log has them)"})
                break

    # Unbuffered: a full disk fails the write that hit it, nothing later.
    with open(console_path, "wb", buffering=0) as con:
        while True:
            now = time.monotonic()
            if now - start > limit:
                stopped = ("hung", f"wall-clock limit of {limit:.0f} s reached")
                break
            try:
                size = os.path.getsize(results_path)
            except OSError:
                size = 0
            if size != last_size:
                last_size, last = size, now
            free = free_bytes(rdir)
            if free == 0:
                full_since = full_since or now
                if now - full_since > 3:
                    stopped = ("nospace", f"no space left on the results disk ({rdir})")
                    break
            else:
                full_since = None
            if now - last > quiet[0]:
                if free is not None and free < LOW_SPACE:
                    stopped = ("nospace", f"results stalled for {quiet[0]:.0f} s with "
                               f"{free >> 10} KiB left on the results disk ({rdir})")
                else:
                    stopped = ("hung", f"no console output or results for "
                               f"{quiet[0]:.0f} s{quiet[1]}")
                break
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            data = os.read(fd, 65536)
            if not data:
                break
            last = time.monotonic()
            if on_output:
                on_output()
                on_output = None
            try:
                write_all(con, data)
            except OSError as e:
                if e.errno not in NOSPACE:
                    raise
                stopped = ("nospace", f"cannot write {console_path}: {e.strerror}")
                break
            for raw in split_lines(pending, data):
                scan(raw)
    scan(pending)  # an unterminated last line: already in console.log
    return stopped


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# Every point has these; its SHA256SUMS must vouch for them.
POINT_NEEDS = ("results.txt", "lock_stat.txt")
# A file name in a point (and in its SHA256SUMS): no ".", "..", hidden
# names, slashes or spaces.
POINT_FILE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
# What the guest may send, per file and per point.  The host hashes and
# parses results.txt, lock_stat.txt and SHA256SUMS: their caps are well
# over the largest real ones (over the 90 points of results/ and the
# tests' runs: results.txt 1.2 KB, lock_stat.txt 44 KB, SHA256SUMS 312 B;
# a 16-thread results.txt with every err_ key is under 10 KB).  Any other
# file (perf.data of "option perf_lock 1" is the big one) was written in
# the guest's /tmp, a tmpfs of half its memory, at most 1 GiB at --mem
# 2048, and so was the whole point: a bigger member is not a guest's file.
FILE_MAX = {"results.txt": 256 << 10, "lock_stat.txt": 4 << 20, "SHA256SUMS": 64 << 10}
MEMBER_MAX = 1 << 30
POINT_MAX = 1 << 30
# A point holds at most 7 files (guest/JOB.md).
POINT_FILES_MAX = 32
COPY_CHUNK = 1 << 20
# Problems of one kind kept in full (meta.json, collect()'s lines); the
# rest are counted in one line, so that a guest printing 200,000 warnings
# or sending 100,000 bad members makes a few lines, not a 20 MB meta.json.
PROBLEMS_KEPT = 10


def note(problems, counts, kind, entry, more):
    """Append entry to problems, but only the first PROBLEMS_KEPT of its
    kind: past them one entry more(n) counts the n left out (updated in
    place, so that the list is whole whenever an interrupt stops it)."""
    c = counts.setdefault(kind, [0, None])
    c[0] += 1
    if c[0] <= PROBLEMS_KEPT:
        problems.append(entry)
    elif c[1] is None:
        c[1] = len(problems)
        problems.append(more(1))
    else:
        problems[c[1]] = more(c[0] - PROBLEMS_KEPT)


def point_needs(build):
    """POINT_NEEDS for a kernel's build-meta.json: without CONFIG_LOCK_STAT
    ("lock_stat": false) the guest has no /proc/lock_stat to dump."""
    if build.get("lock_stat", True) is False:
        return tuple(n for n in POINT_NEEDS if n != "lock_stat.txt")
    return POINT_NEEDS


def sha256_file(path):
    """SHA-256 of a file, read in chunks (a file may be as big as MEMBER_MAX)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(COPY_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def member_problem(m, planned):
    """Why tar member m may not be unpacked (one line), or None: it may be
    a directory points/ID of a planned point, or a regular file
    points/ID/NAME in one, within its size cap."""
    parts = m.name.split("/")
    what = f"unexpected member {m.name[:80]!r} in the results stream"
    if not (len(parts) in (2, 3) and parts[0] == "points" and parts[1] in planned
            and all(POINT_FILE.fullmatch(x) for x in parts[2:])):
        return what
    if len(parts) == 2:
        return None if m.isdir() else f"{what}: not a directory"
    if not m.isreg():
        kind = ("a symbolic link" if m.issym() else "a hard link" if m.islnk()
                else "a directory" if m.isdir() else "a device or fifo"
                if m.ischr() or m.isblk() or m.isfifo() else f"of tar type {m.type!r}")
        return f"{what}: {kind}, not a regular file"
    if m.issparse():
        return f"{what}: a sparse file"
    if parts[2] in HOST_FILES:
        # Only the host measures the host: never take the guest's word for
        # it (nor let it block the host's file).
        return f"the guest sent {m.name!r}, a file only the host writes"
    cap = FILE_MAX.get(parts[2], MEMBER_MAX)
    if m.size > cap:
        return f"{what}: {m.size} bytes, over its cap of {cap}"
    return None


def make_dir(path):
    """mkdir 0755 (whatever mode the guest's tar has), or accept a
    directory that is there and no link; OSError otherwise."""
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise
    return path


def unpack_member(tar, m, out):
    """Write regular member m (checked by member_problem) under out as a
    new file of this user, mode 0644 (umask applies), with none of the
    guest's metadata; return its size.  O_EXCL|O_NOFOLLOW: never over or
    through anything that is there.  A partial file is removed."""
    d = make_dir(os.path.join(make_dir(os.path.join(out, "points")), m.name.split("/")[1]))
    path = os.path.join(d, m.name.split("/")[2])
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_WRONLY, 0o644)
    n = 0
    try:
        with os.fdopen(fd, "wb", buffering=0) as f:
            src = tar.extractfile(m)
            while chunk := src.read(COPY_CHUNK):
                n += len(chunk)
                if n > m.size:  # tarfile reads m.size bytes: never here
                    raise tarfile.ReadError(f"{m.name}: more data than its size")
                write_all(f, chunk)
    except BaseException:
        os.unlink(path)
        raise
    return n


def unpack(results_path, out, planned, bad):
    """Unpack the guest's tar stream into out/points, member by member:
    a member that may not be unpacked, or cannot be written, is one line
    in bad and the next member is tried.  Return whether the results disk
    was full (then unpacking stopped)."""
    counts, sizes, files = {}, {}, {}

    def reject(line):
        note(bad, counts, "member", line,
             lambda n: f"... and {n:,} more members of the results stream refused")

    try:
        with tarfile.open(results_path, ignore_zeros=True) as tar:
            # next(), not iteration: tarfile would keep every member read
            # in tar.members, a list as long as the guest makes it.
            while (m := tar.next()) is not None:
                tar.members.clear()
                why = member_problem(m, planned)
                pid = m.name.split("/")[1] if why is None else None
                if why is None and m.isreg():
                    what = f"unexpected member {m.name[:80]!r} in the results stream"
                    if sizes.get(pid, 0) + m.size > POINT_MAX:
                        why = f"{what}: point {pid} would be over its cap of {POINT_MAX} bytes"
                    elif files.get(pid, 0) >= POINT_FILES_MAX:
                        why = f"{what}: point {pid} has {POINT_FILES_MAX} files already"
                if why is not None:
                    reject(why)
                    continue
                try:
                    if m.isdir():
                        make_dir(os.path.join(make_dir(os.path.join(out, "points")), pid))
                    else:
                        sizes[pid] = sizes.get(pid, 0) + unpack_member(tar, m, out)
                        files[pid] = files.get(pid, 0) + 1
                except FileExistsError:
                    reject(f"{m.name[:80]!r} in the results stream twice: the second refused")
                except OSError as e:
                    if e.errno in NOSPACE:
                        bad.append(f"cannot write the points into {out}: {e.strerror}")
                        return True
                    reject(f"cannot write {m.name[:80]!r}: {e.strerror or e}")
    except (tarfile.TarError, EOFError) as e:
        bad.append(f"results stream cut or garbled: {e}")
    except OSError as e:
        # The stream itself unreadable (the disk under the run directory).
        bad.append(f"cannot read the results stream {results_path}: {e.strerror or e}")
    return False


# The run line of results.txt (bench-module/FORMAT.md): "run id=N ...".
RUN_ID = re.compile(r"^run (?:\S+ )*?id=(\d+)(?: |$)", re.M)


def run_id(path):
    """The module's run id in a point's results.txt (capped in size by
    FILE_MAX), or None when it has none."""
    with open(path, errors="replace") as f:
        m = RUN_ID.search(f.read(FILE_MAX["results.txt"]))
    return int(m.group(1)) if m else None


def collect(results_path, out, planned, needs=POINT_NEEDS):
    """Unpack the guest's tar stream; return (ids of the verified points,
    problems, whether writing the points failed)."""
    done, bad, nowrite = [], [], False
    if not os.path.isfile(results_path) or os.path.getsize(results_path) == 0:
        return done, bad, nowrite
    nowrite = unpack(results_path, out, planned, bad)
    counts = {}
    last = None  # (index, id, point) of the last point verified
    for i, pid in enumerate(planned):
        d = os.path.join(out, "points", pid)
        sums = os.path.join(d, "SHA256SUMS")
        if not os.path.isfile(sums):
            continue

        def problem(line, pid=pid):
            note(bad, counts, pid, f"point {pid}: {line}",
                 lambda n: f"point {pid}: ... and {n:,} more problems")
        ok, names = True, set()
        with open(sums, errors="replace") as f:
            for line in f:
                digest, _, name = line.rstrip("\n").partition("  ")
                if not re.fullmatch(r"[0-9a-f]{64}", digest) or not POINT_FILE.fullmatch(name):
                    problem(f"SHA256SUMS line {line.strip()[:60]!r} is garbled")
                    ok = False
                    continue
                names.add(name)
                p = os.path.join(d, name)
                if not os.path.isfile(p) or sha256_file(p) != digest:
                    problem(f"{name} does not match the guest's SHA-256")
                    ok = False
        for name in needs:
            if name not in names:
                problem(f"SHA256SUMS does not list {name}")
                ok = False
        if not ok:
            continue
        # One write to the module's run file per point, in job order, and
        # each run that starts takes the next id (a run refused at its
        # parameter check takes none): a point's id is above the last
        # verified point's, by at most the points between.  An id that
        # does not rise is an earlier run's results (a guest whose run
        # failed and sent what the module still had).
        rid = run_id(os.path.join(d, "results.txt"))
        if rid is None:
            problem("results.txt has no run id (no 'run id=N' line): the module's run did not finish")
            continue
        if last is not None and not last[1] < rid <= last[1] + i - last[0]:
            problem(f"results.txt has run id={rid} after point {last[2]}'s id={last[1]}: "
                    + ("an earlier run's results, refused" if rid <= last[1]
                       else "more runs than points, refused"))
            continue
        last = (i, rid, pid)
        done.append(pid)
    return done, bad, nowrite


def load_job(path):
    """Read and check a job file: (points, options)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise RunError(2, f"--job {path}: not a job file (binary data)") from None
    return jobmod.parse(text, path)


def write_rerun(out, args):
    """OUT/rerun NEWDIR: the same job on the same target, with a fresh
    initrd (qemu-cmd's was scratch).  It boots what build/TARGET holds
    now: meta.json's build says which kernel this run had."""
    boot = shlex.join(["./run.sh", "boot", args.variant, "--cpus", str(args.cpus),
                       "--mem", str(args.mem)]
                      + (["--pin", ",".join(map(str, args.pin))] if args.pin is not None else []))
    path = os.path.join(out, "rerun")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                "# Run from the harness's root: OUT/rerun NEWDIR\n"
                'if [ $# -ne 1 ] || [ ! -x ./run.sh ]; then\n'
                '\techo "usage: (in the harness root) $0 NEWDIR" >&2\n\texit 2\nfi\n'
                f'exec {boot} --job "$(dirname "$0")/job.conf" --out "$1"\n')
    os.chmod(path, 0o755)


def run_job(args, art, job):
    # The initrd (the 21 MB root fs + the job) is scratch: it does not go
    # on the results disk.
    with tempfile.TemporaryDirectory(prefix="lockbench-") as scratch:
        return _run_job(args, art, job, scratch)


def _run_job(args, art, job, scratch):
    points, options = job
    # The guest gets the job as checked here, not as written (comments,
    # indentation and line ends are the host's business).
    text = jobmod.render(points, options)
    planned = [pid for pid, _ in points]
    dur = sum(p.get("duration_ms", 1000) for _, p in points) / 1000
    extra = POINT_OVERHEAD_S * (2 if options.get("perf_lock") == "1" else 1)
    limit = args.timeout or BOOT_S + dur * 2 + extra * len(points)
    longest = max(p.get("duration_ms", 1000) for _, p in points) / 1000
    silence = args.silence or 60 + 2 * longest
    # After lockdep's report the guest is past its boot: a guest that goes
    # on is silent at most for a point (twice its length) and the work
    # around it (perf, lock_stat: the point's overhead allowance).
    lockdep_silence = min(silence, extra + 2 * longest)
    out = args.out
    os.makedirs(out, exist_ok=True)
    if os.listdir(out):
        raise RunError(2, f"run directory {out} is not empty")
    with open(os.path.join(out, "job.conf"), "w") as f:
        f.write(text)
    initrd = os.path.join(scratch, "initrd")
    results = os.path.join(out, ".results.tar")
    make_initrd(initrd, art, text)
    cmd = qemu_cmd(art, args.cpus, args.mem, initrd, results)
    with open(os.path.join(out, "qemu-cmd"), "w") as f:
        f.write(shlex.join(cmd) + "\n")
    write_rerun(out, args)
    with open(art["build-meta.json"]) as f:
        build = json.load(f)
    a = arch_info(art["arch"])
    meta = {"format": 1, "variant": args.variant, "arch": art["arch"],
            "qemu": {"binary": a["qemu"], "machine": a["machine"], "cpu": a["cpu"]},
            "cpus": args.cpus, "mem_mb": args.mem, "build": build,
            "host": host_info(a["qemu"]), "timeout_s": limit, "silence_s": silence,
            "points_planned": planned, "pin": None, "start": now_iso()}
    t0 = time.monotonic()
    interrupted = []

    def on_signal(signum, _frame):
        interrupted.append(signal.Signals(signum).name)
        raise KeyboardInterrupt

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=die_with_parent(signal.SIGKILL))
    events, problems, stopped = {}, [], None
    marks = {pid: {} for pid in planned}
    try:
        if args.pin is not None:
            meta["pin"] = apply_pin(proc, args.cpus, args.pin)
            print(pin_line(f"{args.variant} c{args.cpus}", meta["pin"]), file=sys.stderr,
                  flush=True)
        # QEMU has loaded the initrd once the guest talks: remove it then,
        # so that not even a SIGKILL of this runner leaves it behind.
        stopped = watch(proc, os.path.join(out, "console.log"), limit, silence,
                        results, events, problems, on_output=lambda: os.unlink(initrd),
                        marks=marks, lockdep_silence=lockdep_silence)
    except KeyboardInterrupt:
        interrupted = interrupted or ["SIGINT"]
    finally:
        # From here on a signal is noted, not obeyed: meta.json gets written.
        for s in old:
            signal.signal(s, lambda signum, _f: interrupted.append(signal.Signals(signum).name))
        stop(proc)
    wall = time.monotonic() - t0
    done, bad, nowrite = collect(results, out, planned, point_needs(build))
    if nowrite:
        # The points that could not be written are in the stream: keep it.
        os.replace(results, os.path.join(out, "results-stream.tar"))
        bad.append("the guest's raw results stream is kept in results-stream.tar")
    elif os.path.exists(results):
        os.unlink(results)
    steal = write_steal(out, done, marks)
    states = [pr["state"] for pr in problems]
    if stopped:
        states.append(stopped[0])
        problems.append({"state": stopped[0], "t": round(wall, 3), "line": stopped[1]})
    if interrupted:
        states.append("interrupted")
        problems.append({"state": "interrupted", "t": round(wall, 3),
                         "line": f"harness got {interrupted[0]}"})
    rc = proc.returncode
    if rc is not None and rc < 0 and not stopped and not interrupted:
        states.append("killed")
        problems.append({"state": "killed", "t": round(wall, 3),
                         "line": f"QEMU died from signal {-rc}"})
    missing = [p for p in planned if p not in done]
    if missing or bad or "LOCKBENCH-JOB-END" not in events:
        states.append("incomplete")
        for b in bad:
            problems.append({"state": "incomplete", "t": round(wall, 3), "line": b})
        if missing:
            problems.append({"state": "incomplete", "t": round(wall, 3),
                             "line": f"points not brought back: {' '.join(missing)}"})
    state = next(s for s in SEVERITY if s in states + ["ok"])
    meta.update({
        "end": now_iso(), "wall_s": round(wall, 3), "qemu_exit": rc,
        "boot_to_init_s": events.get("LOCKBENCH-INIT"),
        "boot_to_workload_s": events.get("first-point"),
        "points_done": done, "state": state, "exit_code": EXIT[state],
        "problems": problems, "host_steal": steal,
    })
    tmp = os.path.join(out, "meta.json.tmp")
    try:
        with open(tmp, "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
    except OSError as e:
        if e.errno not in NOSPACE:
            raise
        os.unlink(tmp)
        kept = "; the guest's raw results stream is kept in results-stream.tar" if nowrite else ""
        raise RunError(EXIT["nospace"], f"{args.variant} c{args.cpus}: nospace: no space left "
                       f"on the results disk: {out}/meta.json not written{kept}") from None
    os.replace(tmp, os.path.join(out, "meta.json"))
    return meta


def interrupt(_signum, _frame):
    raise KeyboardInterrupt


def main(argv):
    # SIGTERM as SIGINT until the guest runs (run_job handles both then).
    signal.signal(signal.SIGTERM, interrupt)
    # Results are never world-writable, whatever the caller's umask.
    os.umask(os.umask(0) | 0o002)
    args = make_parser().parse_args(argv)
    try:
        if not 1 <= args.cpus <= 16:
            raise RunError(2, f"--cpus {args.cpus}: must be 1..16")
        if not 128 <= args.mem <= 2048:
            raise RunError(2, f"--mem {args.mem}: must be 128..2048")
        if args.pin is not None:
            args.pin = parse_pin(args.pin)
        if args.job and not args.out:
            raise RunError(2, "--job needs --out DIR")
        if args.out and not args.job:
            raise RunError(2, "--out needs --job FILE")
        for opt, val in (("--timeout", args.timeout), ("--silence", args.silence)):
            if val is not None and not 0 < val <= 86400:
                raise RunError(2, f"{opt} {val:g}: must be more than 0 s, at most a day")
        if args.job and not os.path.isfile(args.job):
            raise RunError(2, f"--job {args.job}: " + ("is a directory, not a job file"
                                                        if os.path.isdir(args.job) else "no such file"))
        if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
            raise RunError(2, f"--out {args.out}: exists and is not a directory")
        job = load_job(args.job) if args.job else None
        qemu = arch_info(target(args.variant)[1])["qemu"]
        if not shutil.which(qemu):
            raise RunError(3, f"missing '{qemu}': run ./run.sh setup")
        art = artifacts(args.variant)
        if args.dry_run:
            res = os.path.join(args.out, ".results.tar") if args.job else None
            print(shlex.join(qemu_cmd(art, args.cpus, args.mem, "INITRD", res)))
            return 0
        if not args.job:
            with tempfile.TemporaryDirectory() as tmp:
                initrd = os.path.join(tmp, "initrd")
                make_initrd(initrd, art, None)
                if args.pin is None:
                    return subprocess.call(qemu_cmd(art, args.cpus, args.mem, initrd))
                with subprocess.Popen(qemu_cmd(art, args.cpus, args.mem, initrd)) as proc:
                    print(pin_line(f"{args.variant} c{args.cpus}",
                                   apply_pin(proc, args.cpus, args.pin)), file=sys.stderr)
                    return proc.wait()
        meta = run_job(args, art, job)
    except (RunError, jobmod.JobError) as e:
        print(f"boot: {e}", file=sys.stderr)
        return getattr(e, "code", 2)
    except OSError as e:
        if e.errno in NOSPACE:
            print(f"boot: nospace: no space left on the results disk: cannot write {e.filename}",
                  file=sys.stderr)
            return EXIT["nospace"]
        print(f"boot: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("boot: interrupted before the guest ran", file=sys.stderr)
        return EXIT["interrupted"]
    for pr in meta["problems"]:
        print(f"boot: {args.variant} c{args.cpus}: {pr['state']}: {pr['line']}", file=sys.stderr)
    print(f"boot: {args.variant} c{args.cpus}: {meta['state']}: "
          f"{len(meta['points_done'])}/{len(meta['points_planned'])} points, "
          f"boot-to-workload {meta['boot_to_workload_s']} s, wall {meta['wall_s']} s: {args.out}")
    return meta["exit_code"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
