# SPDX-License-Identifier: GPL-2.0
"""How long a campaign will take, for ./run.sh campaign FILE --dry-run.

A boot runs every point of the campaign (guest/run_guest.py), so its
wall time is

    boot_s + sum over the points of (duration_s x stretch + point_s)

boot_s: from QEMU's start to the job's start (a boot's boot_to_workload_s);
point_s: what a point costs beyond its run (loading the module, perf, the
lock_stat dump, streaming its files back); stretch: host seconds per guest
second of a point's run, 1 on the wall clock, more under icount (its
guest second is 10^9 instructions of a single-threaded TCG).

Each is calibrated from the boots earlier campaigns measured
(results/*/manifest.json: every done boot's wall_s and boot_to_workload_s,
its campaign's points), per clock and arch where there are such boots,
else from lockbench/defaults.py's BOOT_TIMES (measured on a 2-core AMD
EPYC host: results of the default campaign, quiet and busy, rounded
up).  The boots are then laid out as campaign_run.run_batch starts them:
in plan order, up to JOBS side by side and never more vCPUs than the
host has cores, repetition batch by repetition batch up to each look.
With looks, the campaign may stop at the first: the estimate is then a
range.
"""
import math
import os
import statistics

from guest import variant_name
from lockbench import safeio
from lockbench.defaults import BOOT_TIMES, WALL

# The newest run directories read, and the most bytes of a manifest.
MAX_DIRS = 20
MANIFEST_MAX_BYTES = 16 << 20
MAX_S = 100000.0


def _secs(v):
    return (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
            and 0 <= v < MAX_S and math.isfinite(v) else None)


def _arch(variant, default):
    try:
        return variant_name.split_name(str(variant).split("~")[0]).arch
    except variant_name.VariantError:
        return default


def _manifests(results):
    """The newest MAX_DIRS run directories' manifests, as (name, data);
    a directory or manifest that is not a plain one is skipped."""
    try:
        dirs = [e for e in os.scandir(results) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    dirs.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    out = []
    for e in dirs[:MAX_DIRS]:
        try:
            data = safeio.read_json("manifest.json", MANIFEST_MAX_BYTES, root=e.path)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            out.append((e.name, data))
    return out


def samples(results, default_arch="arm"):
    """{(clock, arch): [(wall_s, boot_s, points, duration_s)]} of every done
    boot of the earlier campaigns in RESULTS, and the directories they
    came from."""
    out, used = {}, []
    for name, data in _manifests(results):
        try:
            pts = data["campaign"]["points"]
            dur = sum(_secs(p.get("duration_ms", 1000) / 1000) for p in pts)
            n = len(pts)
            boots = [c for c in data["cells"] if isinstance(c, dict)]
        except (KeyError, TypeError, AttributeError, ValueError):
            continue
        got = 0
        for c in boots:
            wall, boot = _secs(c.get("wall_s")), _secs(c.get("boot_to_workload_s"))
            if c.get("state") != "done" or wall is None or boot is None or not n:
                continue
            key = (str(c.get("clock", WALL)), _arch(c.get("variant", ""), default_arch))
            out.setdefault(key, []).append((wall, boot, n, dur))
            got += 1
        if got:
            used.append(name)
    return out, used


def model(clock, arch, found):
    """(boot_s, point_s, stretch, measured) for boots of CLOCK on ARCH."""
    d_boot, d_point, d_stretch = BOOT_TIMES.get(clock, BOOT_TIMES[WALL])

    def pick(c):
        return found.get((c, arch)) or [s for (k, _a), v in found.items() if k == c for s in v]

    wall = pick(WALL)
    point = (max(0.0, statistics.median((w - b - dur) / n for w, b, n, dur in wall))
             if wall else d_point)
    own = pick(clock)
    if not own:
        return d_boot, point, d_stretch, False
    boot = statistics.median(b for _w, b, _n, _d in own)
    if clock == WALL:
        return boot, point, 1.0, True
    runs = [max(0.0, w - b - n * point) / dur for w, b, n, dur in own if dur > 0]
    return boot, point, (statistics.median(runs) if runs else d_stretch), True


def boot_seconds(c, boot, found, default_arch="arm"):
    start, point, stretch, _m = model(boot.get("clock", WALL),
                                      _arch(boot["variant"], default_arch), found)
    return start + sum(p.get("duration_ms", 1000) / 1000 * stretch + point
                      for p in c["points"])


def schedule(c, boots, secs, jobs, cores, upto):
    """The wall time of the boots up to repetition UPTO: batches to each
    look (each starts when the one before has ended), within a batch the
    next boot starts while fewer than JOBS run and its vCPUs fit the
    host's CORES (a boot bigger than the host runs alone)."""
    looks = [r for r in (c.get("looks") or [c["repetitions"]]) if r <= upto] or [upto]
    t, done = 0.0, set()
    for reps in looks:
        queue = [x for x in boots if x["rep"] <= reps and x["id"] not in done]
        running = []  # (end, cpus)
        while queue or running:
            used = sum(cp for _e, cp in running)
            while queue and len(running) < jobs and (
                    not running or used + queue[0]["cpus"] <= cores):
                x = queue.pop(0)
                done.add(x["id"])
                running.append((t + secs[x["id"]], x["cpus"]))
                used += x["cpus"]
            t = min(e for e, _cp in running)
            running = [r for r in running if r[0] > t]
    return t


def _boot_times(c, boots, results):
    """(found, used: samples(); {boot id: its estimated seconds}; the
    looks) of the campaign's boots, from the earlier campaigns in RESULTS."""
    found, used = samples(results, c["arches"][0])
    secs = {x["id"]: boot_seconds(c, x, found, c["arches"][0]) for x in boots}
    return found, used, secs, c.get("looks") or [c["repetitions"]]


def estimate(c, boots, jobs, results, cores=None):
    """One line: about how long the campaign's boots take."""
    cores = cores or os.cpu_count() or 1
    default_arch = c["arches"][0]
    found, used, secs, looks = _boot_times(c, boots, results)
    most = schedule(c, boots, secs, jobs, cores, looks[-1])
    least = schedule(c, boots, secs, jobs, cores, looks[0]) if len(looks) > 1 else most
    measured = any(model(x.get("clock", WALL), _arch(x["variant"], default_arch), found)[3]
                   for x in boots)

    def mins(s):
        return max(1, round(s / 60))
    span = f"{mins(most)} min"
    if mins(least) != mins(most):
        span += f", {mins(least)} if it stops at the look at {looks[0]} repetitions"
    if measured:
        where = (f"measured boot times of {sum(len(v) for v in found.values())} boots in "
                 + ", ".join(f"results/{u}" for u in used[:3])
                 + (f" +{len(used) - 3} more" if len(used) > 3 else ""))
    else:
        b, p, s = BOOT_TIMES[WALL]
        where = (f"no earlier boots in results/: the defaults, boot {b:g} s + "
                 f"{p:g} s a point (scripts/campaign/estimate.py)")
    return (f"about {span} ({len(boots)} boots, {jobs} side by side; from {where})")


def budget_line(c, boots, jobs, results, budget_s, cores=None):
    """One line: which looks the time budget covers, by the same estimate."""
    cores = cores or os.cpu_count() or 1
    _found, _used, secs, looks = _boot_times(c, boots, results)
    ends = [(r, schedule(c, boots, secs, jobs, cores, r)) for r in looks]
    fits = [(r, t) for r, t in ends if t <= budget_s]
    b = f"{budget_s / 60:g} min"
    if len(fits) == len(ends):
        return (f"the budget ({b}) covers every repetition (about "
                f"{max(1, round(ends[-1][1] / 60))} min)")
    over = ends[len(fits)]
    if not fits:
        return (f"the budget ({b}) is less than the first look ({over[0]} repetitions, about "
                f"{max(1, round(over[1] / 60))} min): that look runs whole, then it stops")
    return (f"the budget ({b}) covers the looks up to {fits[-1][0]} repetitions (about "
            f"{max(1, round(fits[-1][1] / 60))} min); the look at {over[0]} would end at "
            f"about {max(1, round(over[1] / 60))} min: it stops at {fits[-1][0]} unless every "
            f"primary cell is decided sooner")

