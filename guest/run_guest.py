# SPDX-License-Identifier: GPL-2.0
"""Boot one kernel variant in QEMU (TCG) and run a job in it, or give a shell.

Usage: ./run.sh boot VARIANT [--cpus N] [--mem MB] [--job FILE --out DIR]
                          [--pin CORES] [--clock wall|icount] [--no-meter]
                          [--timeout S] [--dry-run]
  (./run.sh boot is PYTHONPATH=ROOT /usr/bin/python3 -m guest.run_guest)

VARIANT is NAME (a 32-bit ARM guest: qemu-system-arm -M virt -cpu
cortex-a15, build/NAME/uImage, build/rootfs) or NAME@ARCH (arm64:
qemu-system-aarch64 -M virt -cpu cortex-a57, build/NAME@arm64/Image,
build/rootfs-arm64); guest/arches.toml says which is which.

With --job, the run directory OUT gets: console.log, qemu-cmd (the exact
command; its initrd is scratch, in $TMPDIR, removed once the guest talks),
rerun (OUT/rerun NEWDIR, from the harness root: the same job again),
job.conf (the job as checked and given to the guest), meta.json (with
the arch and the QEMU binary, machine and CPU) and points/<id>/ for every
point the guest finished (each checked against the guest's SHA256SUMS
and its run id against the point's before; the guest is not trusted:
guest/collect.py writes its files itself, guest/JOB.md).  The run
never hangs and never lies: a wall-clock limit and a silence limit kill a
stuck guest ("hung"), the console is scanned for panics, oopses, lockdep
reports and warnings (guest/judge.py, which ./run.sh recheck runs again
on a saved run), and a run without every point and the guest's end
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
import datetime
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

from lockbench.cli import CliError, OneLineParser, run_cli
from guest import judge
from lockbench import dirlock
from guest import job as jobmod
from guest.collect import NOSPACE, collect, point_needs
from guest.judge import EXIT, RunError
from guest.qemu import (arch_info, artifacts, clock_meta, die_with_parent,
                        host_info, make_initrd, qemu_cmd, stop, target, watch)
from lockbench.defaults import CLOCKS, ICOUNT, WALL
from guest.hostspeed import meter_cores, start_meter, stop_meter, write_meter
from guest.vcpu import apply_pin, parse_pin, pin_line, write_steal

# Guest time for booting, and per point beyond its duration (perf, dumps).
BOOT_S = 90
POINT_OVERHEAD_S = 30


#: How to run the benchmark in the guest's shell (--help's epilog; the
#: guest's banner, guest/inside/init.sh, says the same in short).
def shell_howto():
    """What --help says of a boot without --job: the guest shell's banner,
    read from guest/inside/init.sh (the one text; the host's code itself names
    no module loading: tests/t-fault-security.sh)."""
    init = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inside",
                        "init.sh")
    try:
        with open(init) as fh:
            text = fh.read()
        body = text.split("cat <<-'EOF'\n", 1)[1].split("\tEOF\n", 1)[0]
    except (OSError, IndexError):
        return "In the shell (no --job): see bench-module/README.md."
    return "In the shell (no --job), the guest prints:\n" + "".join(
        "  " + ln.lstrip("\t") + "\n" for ln in body.splitlines())


def make_parser():
    p = OneLineParser(
        prog="./run.sh boot", hint="./run.sh boot --help",
        description="Boot a kernel variant under QEMU TCG: a shell, or one job.",
        epilog=shell_howto(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("variant",
                   help="a built variant, NAME or NAME@ARCH (./run.sh build VARIANT)")
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
    p.add_argument("--clock", choices=CLOCKS, default=WALL,
                   help="the guest's clock: the host's time (wall, the default), or QEMU's "
                   "instruction count (icount: -icount shift=0,sleep=off, single-threaded "
                   "TCG, 1 vCPU; 1 guest ns = 1 instruction)")
    p.add_argument("--no-meter", action="store_true",
                   help="do not run the host speed meter beside a wall-clock job "
                   "(guest/meter/README.md); meta.json says it was off")
    p.add_argument("--dry-run", action="store_true", help="print the QEMU command and exit")
    return p


def meter_why_off(args):
    """Why the host speed meter does not run beside this job, or None."""
    if args.no_meter:
        return "off (--no-meter)"
    if args.clock == ICOUNT:
        return "off under icount (the guest's time is its instruction count)"
    return None


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


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
    initrd (qemu-cmd's was scratch).  It boots what build/VARIANT holds
    now: meta.json's build says which kernel this run had."""
    boot = shlex.join(["./run.sh", "boot", args.variant, "--cpus", str(args.cpus),
                       "--mem", str(args.mem)]
                      + (["--clock", args.clock] if args.clock != WALL else [])
                  + (["--no-meter"] if args.no_meter else [])
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
    limit, silence, lockdep_silence = _limits(args, points, options)
    out = args.out
    initrd, results, cmd = _prepare(args, art, text, scratch)
    with open(art["build-meta.json"]) as f:
        build = json.load(f)
    a = arch_info(art["arch"])
    meta = {"format": 1, "variant": args.variant, "arch": art["arch"],
            "qemu": {"binary": a["qemu"], "machine": a["machine"], "cpu": a["cpu"]},
            "cpus": args.cpus, "mem_mb": args.mem, "clock": clock_meta(args.clock),
            "build": build, "cmdline": art.get("cmdline", ""),
            "host": host_info(a["qemu"]), "timeout_s": limit, "silence_s": silence,
            "points_planned": planned, "pin": None, "start": now_iso()}
    events, problems = {}, []
    marks = {pid: {} for pid in planned}
    w = _boot_and_watch(args, cmd, meta, (limit, silence, lockdep_silence), initrd, results,
                        events, problems, marks)
    # Bounded in time (collect.COLLECT_MAX_S; SIGNAL_MAX_S once a signal
    # came, before or now), whatever the guest sent: meta.json gets written.
    done, bad, keep = collect(results, out, planned, point_needs(build), signals=w.interrupted)
    if keep:
        # What could not be written, or was not read in time, is in the
        # stream: keep it.
        os.replace(results, os.path.join(out, "results-stream.tar"))
        bad.append("the guest's raw results stream is kept in results-stream.tar")
    elif os.path.exists(results):
        os.unlink(results)
    steal = write_steal(out, done, marks)
    speed = write_meter(out, done, marks, w.meter_off, w.meter_cpu)
    now = round(w.wall, 3)
    _note_ends(problems, w, bad, now)
    state = judge.finish(problems, planned, done, "LOCKBENCH-JOB-END" in events, now)
    meta.update({
        "end": now_iso(), "wall_s": round(w.wall, 3), "qemu_exit": w.proc.returncode,
        "boot_to_init_s": events.get("LOCKBENCH-INIT"),
        "boot_to_workload_s": events.get("first-point"),
        # console.log may be cut (judge.CONSOLE_MAX): a recheck takes the
        # end marker from here then.
        "job_end_s": events.get("LOCKBENCH-JOB-END"),
        "points_done": done, "state": state, "exit_code": EXIT[state],
        "problems": problems, "host_steal": steal, "host_meter": speed,
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
        kept = "; the guest's raw results stream is kept in results-stream.tar" if keep else ""
        raise RunError(EXIT["nospace"], f"{args.variant} c{args.cpus}: nospace: no space left "
                       f"on the results disk: {out}/meta.json not written{kept}") from None
    os.replace(tmp, os.path.join(out, "meta.json"))
    return meta


def _limits(args, points, options):
    """(wall-clock limit, silence limit, silence limit once lockdep
    spoke) of a job of POINTS, in s."""
    dur = sum(p.get("duration_ms", 1000) for _, p in points) / 1000
    extra = POINT_OVERHEAD_S * (2 if options.get("perf_lock") == "1" else 1)
    limit = args.timeout or BOOT_S + dur * 2 + extra * len(points)
    longest = max(p.get("duration_ms", 1000) for _, p in points) / 1000
    silence = args.silence or 60 + 2 * longest
    # After lockdep's report the guest is past its boot: a guest that goes
    # on is silent at most for a point (twice its length) and the work
    # around it (perf, lock_stat: the point's overhead allowance).
    return limit, silence, min(silence, extra + 2 * longest)


def _prepare(args, art, text, scratch):
    """Make the run directory --out ours (empty, held) with the job TEXT,
    qemu-cmd and rerun in it, and the initrd in SCRATCH: (initrd, the
    results chardev's file, the QEMU command)."""
    out = args.out
    os.makedirs(out, exist_ok=True)
    # Held until this runner exits (dirlock: a resume waits for it).
    if dirlock.hold(out) is None:
        raise RunError(2, f"run directory {out} is in use by another runner")
    if os.listdir(out):
        raise RunError(2, f"run directory {out} is not empty")
    with open(os.path.join(out, "job.conf"), "w") as f:
        f.write(text)
    initrd = os.path.join(scratch, "initrd")
    results = os.path.join(out, ".results.tar")
    make_initrd(initrd, art, text)
    cmd = qemu_cmd(art, args.cpus, args.mem, initrd, results, args.clock)
    with open(os.path.join(out, "qemu-cmd"), "w") as f:
        f.write(shlex.join(cmd) + "\n")
    write_rerun(out, args)
    return initrd, results, cmd


class Watched(NamedTuple):
    """What came of a guest's run, as _boot_and_watch saw it."""
    proc: subprocess.Popen  # QEMU, ended
    stopped: object         # (state, line) when watch stopped the guest, else None
    interrupted: list       # the signals this runner got
    wall: float             # s from QEMU's start to its end
    meter_off: object       # why the host speed meter did not run, or None
    meter_cpu: object       # what stop_meter said of it


def _boot_and_watch(args, cmd, meta, limits, initrd, results, events, problems, marks):
    """Start QEMU (CMD), pin it and start the meter beside it as ARGS
    say, and watch the console until the guest ends or is stopped; a
    SIGINT or SIGTERM stops it too, and is noted, not obeyed, from then
    on.  LIMITS: (wall-clock, silence, silence after lockdep), in s."""
    out = args.out
    limit, silence, lockdep_silence = limits
    t0 = time.monotonic()
    interrupted = []

    def on_signal(signum, _frame):
        interrupted.append(signal.Signals(signum).name)
        raise KeyboardInterrupt

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=die_with_parent(signal.SIGKILL))
    stopped = None
    meter, meter_off, meter_cpu = None, meter_why_off(args), None
    try:
        if args.pin is not None:
            meta["pin"] = apply_pin(proc, args.cpus, args.pin)
            print(pin_line(f"{args.variant} c{args.cpus}", meta["pin"]), file=sys.stderr,
                  flush=True)
        if meter_off is None:
            # On the cores the vCPUs were given, once they have them.
            meter, meter_off = start_meter(out, meter_cores(meta["pin"]),
                                           die_with_parent(signal.SIGKILL))
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
        meter_cpu = stop_meter(meter)
    return Watched(proc, stopped, interrupted, time.monotonic() - t0, meter_off, meter_cpu)


def _note_ends(problems, w, bad, now):
    """Add to PROBLEMS how the run ended beyond what the console said:
    stopped by the watch, interrupted, QEMU killed, points not
    collected (BAD)."""
    if w.stopped:
        problems.append({"state": w.stopped[0], "t": now, "line": w.stopped[1]})
    if w.interrupted:
        problems.append({"state": "interrupted", "t": now,
                         "line": f"harness got {w.interrupted[0]}"})
    rc = w.proc.returncode
    if rc is not None and rc < 0 and not w.stopped and not w.interrupted:
        problems.append({"state": "killed", "t": now, "line": f"QEMU died from signal {-rc}"})
    problems += [{"state": "incomplete", "t": now, "line": b} for b in bad]


def interrupt(_signum, _frame):
    raise KeyboardInterrupt


def _boot(args):
    """The checks, then a shell (its exit status) or a job (its meta)."""
    if not 1 <= args.cpus <= 16:
        raise RunError(2, f"--cpus {args.cpus}: must be 1..16")
    if not 128 <= args.mem <= 2048:
        raise RunError(2, f"--mem {args.mem}: must be 128..2048")
    if args.pin is not None:
        args.pin = parse_pin(args.pin)
    if args.clock == ICOUNT and args.cpus != 1:
        raise RunError(2, f"--clock icount --cpus {args.cpus}: icount takes 1 vCPU "
                       "(its vCPUs take turns, and QEMU 7.2 crawls or livelocks "
                       "booting a second one: docs/icount.md)")
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
        print(shlex.join(qemu_cmd(art, args.cpus, args.mem, "INITRD", res, args.clock)))
        return 0
    if not args.job:
        with tempfile.TemporaryDirectory() as tmp:
            initrd = os.path.join(tmp, "initrd")
            make_initrd(initrd, art, None)
            cmd = qemu_cmd(art, args.cpus, args.mem, initrd, None, args.clock)
            if args.pin is None:
                return subprocess.call(cmd)
            with subprocess.Popen(cmd) as proc:
                print(pin_line(f"{args.variant} c{args.cpus}",
                               apply_pin(proc, args.cpus, args.pin)), file=sys.stderr)
                return proc.wait()
    return run_job(args, art, job)


def _body(args):
    # Anything that stops a run before the guest runs is one line and an
    # exit status of the runner's own (EXIT), not a traceback.
    try:
        meta = _boot(args)
    except CliError:
        raise
    except OSError as e:
        if e.errno in NOSPACE:
            raise RunError(EXIT["nospace"], "nospace: no space left on the results "
                           f"disk: cannot write {e.filename}") from None
        raise RunError(2, str(e)) from None
    except KeyboardInterrupt:
        raise RunError(EXIT["interrupted"], "interrupted before the guest ran") from None
    if isinstance(meta, int):  # a shell, or --dry-run
        return meta
    for pr in meta["problems"]:
        print(f"boot: {args.variant} c{args.cpus}: {pr['state']}: {pr['line']}", file=sys.stderr)
    print(f"boot: {args.variant} c{args.cpus}: {meta['state']}: "
          f"{len(meta['points_done'])}/{len(meta['points_planned'])} points, "
          f"boot-to-workload {meta['boot_to_workload_s']} s, wall {meta['wall_s']} s: {args.out}")
    return meta["exit_code"]


def main(argv):
    # SIGTERM as SIGINT until the guest runs (run_job handles both then).
    signal.signal(signal.SIGTERM, interrupt)
    # Results are never world-writable, whatever the caller's umask.
    os.umask(os.umask(0) | 0o002)
    return run_cli("boot", make_parser(), argv, _body)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
