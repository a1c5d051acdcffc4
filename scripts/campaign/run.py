# SPDX-License-Identifier: GPL-2.0
"""Run a campaign's boots that are not settled: on this host, side by side
as its cores allow (pinned where the campaign says), repetition by
repetition up to each look, stopping at the first look where every
primary cell has a verdict; or on the hosts of --hosts
(scripts/campaign/hosts.py).  SIGINT and SIGTERM stop the running boots,
which are recorded, not lost; the progress line says how far it got.

Apart from scripts/campaign/main.py (the entry point: arguments, a new
campaign or a --resume, the summary) so that the order and the number of
boots running at once, and when a sequential campaign stops, are read in
one file.
"""
import contextlib
import io
import math
import os
import signal
import statistics
import sys
import time

from analysis import primary as primarymod
from lockbench.cli import CliError
from guest import vcpu
from scripts.campaign import boot as campaign_boot
from scripts.campaign import estimate as campaign_estimate
from scripts.campaign import hosts as campaign_hosts
from scripts.campaign import manifest as campaign_manifest



class BootRefused(CliError):
    """A boot that start_boot could not start (its directory in use by a
    runner, a file of it refused): the batch was stopped, its running
    boots recorded."""


class Progress:
    def __init__(self, total):
        self.total, self.t0 = total, time.monotonic()
        self.tty = sys.stdout.isatty()
        self.walls = []

    def show(self, done, running, note=""):
        el = time.monotonic() - self.t0
        left = self.total - done
        eta = "?"
        if self.walls:
            par = max(1, len(running))
            eta = fmt(sum(self.walls) / len(self.walls) * left / par)
        line = (f"[{done}/{self.total}] {', '.join(running) or '-'} | "
                f"elapsed {fmt(el)} | ETA {eta}" + (f" | {note}" if note else ""))
        if self.tty:
            print("\r\033[K" + line, end="", flush=True)
        elif running:
            # Piped: one line a boot started, not a second one for the
            # moment between two boots ("-": the next line says it all).
            print(line, flush=True)

    def say(self, msg):
        print(("\r\033[K" if self.tty else "") + msg, flush=True)


def fmt(s):
    """Seconds as 1m05s; "?" for what is no time (a NaN, an infinity)."""
    if not math.isfinite(s):
        return "?"
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s"


def pin_for(c, boot, running):
    """The host cores a boot about to start is pinned to (campaign pin =
    true): [] when the campaign does not pin or the boot has one vCPU,
    None while its cores are in use by a running boot (guest/run_guest.py
    boot_cores).  One vCPU is left to the host's scheduler: measured
    interleaved, pinning 1-vCPU boots side by side widened the A/A
    throughput CI (median width 0.32 pinned, 0.22 not), while at 2 vCPUs
    it narrowed it (0.99 against 1.13): docs/measurements.md, "Pinning vCPU threads"."""
    if not primarymod.pinned(c, boot["cpus"]):
        return []
    busy = {k for _p, _t, other in running.values() for k in other.get("pin") or ()}
    return vcpu.boot_cores(boot["cpus"], boot["rep"], c["variants"].index(boot["variant"]),
                           os.sched_getaffinity(0), busy)


@contextlib.contextmanager
def stop_signals():
    """Yield a list that SIGINT and SIGTERM append their names to, so that
    the boots running can be stopped and recorded instead of lost."""
    stop = []

    def on_signal(signum, _frame):
        stop.append(signal.Signals(signum).name)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class LookFailed(Exception):
    """The analysis of a look failed; its one-line reason."""


def judge_look(d):
    """(number of primary cells, [each undecided one], [(cpus, point) of
    each]) of analysis.looks.look(d), in this process.  Imported here: the
    analysis needs pandas and scipy, and a campaign runs its boots without
    them.  Whatever goes wrong in the analysis (a missing package, bad
    input, a bug of ours) is LookFailed with one line, never a traceback,
    so that the campaign goes on; what the analysis writes on stderr is
    kept off the progress line; Ctrl-C goes through."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            from analysis import looks
            n, todo, cells = looks.look(d)
        return n, list(todo), [(int(c), str(p)) for c, p in cells]
    except SystemExit as e:  # lockbench.cli.require: it said why on stderr
        said = err.getvalue().strip().splitlines()
        why = said[-1] if said else f"exit status {e.code}"
    except CliError as e:
        why = str(e)
    except Exception as e:  # a bug of ours: still one line
        why = f"internal error: {type(e).__name__}: {e}"
    raise LookFailed((why.strip().splitlines() or ["no reason given"])[0])


def take_look(d, man, reps, prog):
    """Judge the boots of repetitions 1..reps (judge_look); record the
    look in the manifest; True when every primary cell is decided.  A
    look whose analysis fails is one line, and the campaign goes on."""
    try:
        n, todo, cells = judge_look(d)
    except LookFailed as e:
        prog.say(f"campaign: look at {reps} repetitions: the analysis failed ({e}); going on")
        n, todo, cells = 0, ["the analysis failed"], None
    decided = n > 0 and not todo
    seq = man.data.setdefault("sequential", {"looks": [], "stopped_at": None})
    seq["looks"] = [x for x in seq["looks"] if x["reps"] != reps]
    seq["looks"].append({"reps": reps, "primary": n, "undecided": todo,
                         **({"open": [list(c) for c in cells]} if cells is not None else {})})
    if decided:
        seq["stopped_at"] = reps
    elif cells is not None:
        narrow(man, reps, cells)
    man.save()
    prog.say(f"campaign: look at {reps} repetitions: "
             + ("every primary cell decided: stopping" if decided else
                f"{len(todo)} of {n} primary cells undecided: " + "; ".join(todo[:4])
                + (f"; +{len(todo) - 4} more" if len(todo) > 4 else "")))
    return decided


def narrow(man, reps, open_cells):
    """After a look at reps repetitions, the later boots run only the
    points whose primary cells are still open there (OPEN_CELLS: (cpus,
    point)): a vCPU count with none open runs no more boots (`unneeded`),
    one with some runs its boots with those points alone, as a job of
    their own (boot.job_file: DIR/job-HASH.conf), in the order the campaign planned
    (every variant at that vCPU count runs them: the order stays
    balanced).  A boot's points only ever shrink."""
    c = man.data["campaign"]
    ids = [p["id"] for p in c["points"]]
    open_at = {}
    for cpus, point in open_cells:
        open_at.setdefault(cpus, set()).add(point)
    for boot in man.data["cells"]:
        if boot["rep"] <= reps or boot["state"] in campaign_manifest.SETTLED:
            continue
        had = boot.get("points") or ids
        keep = [p for p in had if p in open_at.get(boot["cpus"], ())]
        if not keep:
            boot["state"] = campaign_manifest.UNNEEDED
        elif keep != ids:
            boot["points"] = keep


def run_boots(d, man, jobs, budget_s=None):
    """Run the boots repetition by repetition up to each look; at a look
    before the last, stop when every primary cell is decided, or when the
    next look would not end within budget_s seconds of this call's start
    (next_look_seconds; the boots after it become `unneeded`)."""
    c = man.data["campaign"]
    looks = c.get("looks") or [c["repetitions"]]
    prog = Progress(len(man.data["cells"]))
    stop, tried = [], set()
    for i, reps in enumerate(looks):
        stop = run_batch(d, man, jobs, reps, prog, tried)
        if stop or reps == looks[-1]:
            break
        decided = take_look(d, man, reps, prog)
        if not decided and budget_s is not None:
            spent = time.monotonic() - prog.t0
            more = next_look_seconds(man, reps, looks[i + 1], jobs)
            if spent + more > budget_s:
                prog.say(f"campaign: the budget ({fmt(budget_s)}) does not cover the look at "
                         f"{looks[i + 1]} repetitions (about {fmt(more)} more after "
                         f"{fmt(spent)}): stopping at the look at {reps}")
                man.data["sequential"].update(stopped_at=reps, stopped_by="budget")
                decided = True
        if decided:
            for boot in man.data["cells"]:
                if boot["rep"] > reps and boot["state"] not in campaign_manifest.SETTLED:
                    boot["state"] = campaign_manifest.UNNEEDED
            man.save()
            break
    if prog.tty:
        print()
    return stop


def next_look_seconds(man, reps, upto, jobs, cores=None):
    """About how long the boots of repetitions reps+1..upto take: each as
    long as the median wall time of the done boots of its vCPU count and
    clock (of any, where none), laid out as run_batch starts them
    (campaign_estimate.schedule); inf when no boot is done yet."""
    boots = man.data["cells"]
    done = [x for x in boots if x["state"] == "done" and isinstance(x.get("wall_s"), (int, float))]
    if not done:
        return math.inf
    walls = {}
    for x in done:
        walls.setdefault((x["cpus"], x.get("clock")), []).append(x["wall_s"])
    anyone = statistics.median(x["wall_s"] for x in done)
    todo = [x for x in boots if reps < x["rep"] <= upto
            and x["state"] not in campaign_manifest.SETTLED]
    secs = {x["id"]: statistics.median(walls[(x["cpus"], x.get("clock"))])
            if (x["cpus"], x.get("clock")) in walls else anyone for x in todo}
    return campaign_estimate.schedule(man.data["campaign"], todo, secs, jobs,
                                      cores or os.cpu_count() or 1, upto)


def run_batch(d, man, jobs, reps, prog, tried):
    """Run every boot of repetitions 1..reps not done yet and not `tried`
    in this invocation (a failed boot waits for --resume).  A boot whose
    directory cannot be made ready (start_boot refuses it: a runner at
    work in it) stops the batch as a signal would, the running boots
    recorded, then raises that refusal."""
    boots = [c for c in man.data["cells"]
             if c["state"] not in campaign_manifest.SETTLED and c["rep"] <= reps
             and c["id"] not in tried]
    cores = os.cpu_count() or 1
    done = sum(c["state"] == "done" for c in man.data["cells"])
    running, refused = {}, []
    with stop_signals() as stop:
        while boots or running:
            if stop and running:
                for proc, _tmp, _boot in running.values():
                    if proc.poll() is None:
                        proc.send_signal(signal.SIGTERM)
            used = sum(c["cpus"] for _p, _t, c in running.values())
            while boots and not stop and len(running) < jobs:
                nxt = boots[0]
                # Never oversubscribe the host with side-by-side boots; a
                # boot bigger than the host runs alone (and is flagged).
                if running and used + nxt["cpus"] > cores:
                    break
                # Pinned, it waits for its own cores (a slow core cancels).
                pin = pin_for(man.data["campaign"], nxt, running)
                if pin is None:
                    break
                boots.pop(0)
                tried.add(nxt["id"])
                try:
                    job = (campaign_boot.job_file(d, man.data["campaign"], nxt["points"])
                           if nxt.get("points") else os.path.join(d, "job.conf"))
                    running[nxt["id"]] = (*campaign_boot.start_boot(d, man, nxt, job, pin),
                                          nxt)
                except (CliError, OSError) as e:
                    refused.append(e)
                    stop.append("refusal")
                    break
                used += nxt["cpus"]
                prog.show(done, list(running))
            if stop and not running:
                break
            time.sleep(0.2)
            for cid, (proc, tmp, boot) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[cid]
                meta = campaign_boot.finish_boot(d, man, boot, tmp, bool(stop))
                if boot["state"] == "done":
                    done += 1
                    if meta and boot.get("wall_s") is not None:
                        prog.walls.append(boot["wall_s"])
                else:
                    prog.say(f"campaign: boot {cid}: {campaign_boot.ended_words(boot)}")
                prog.show(done, list(running))
    if refused:
        raise BootRefused(str(refused[0]))
    return stop


def run_on_hosts(d, man, hosts, probed=None):
    """The boots on the hosts of HOSTS (scripts/campaign/hosts.py); PROBED:
    what the hosts said they are just now (hosts.probe), else asked there."""
    prog = Progress(len(man.data["cells"]))
    with stop_signals() as stop:
        campaign_hosts.run(d, man, hosts, lambda boot, tmp, refused, lost, host:
                           campaign_boot.finish_boot(d, man, boot, tmp, bool(stop), refused,
                                                     lost, host), prog, stop, probed)
    if prog.tty:
        print()
    return stop
