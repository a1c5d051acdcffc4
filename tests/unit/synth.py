# SPDX-License-Identifier: GPL-2.0
"""Builds a small synthetic run directory, in the layout `run.sh
campaign` writes, with known effects (tests only).

make_run(path, effects={"p1": 0.90, "p2": 1.00}) writes 2 variants
(before: rwlock-style lock_stat rows -R/-W; after: one plain row) x cpus
x points x reps; the "after" throughput is the "before" one times the
point's effect, with 0.5% noise, deterministic (seeded).

make_run(path, variants=[...], compare=[...]) writes any variants, each a
dict: name, lock ("rw", "spin", "rcu": lookups take no lock, so lock_stat
counts writes only, "none": a kernel without lock_stat, no lock_stat.txt),
scale (throughput factor, default 1), effects (point id -> factor),
patches (names, for build-meta's patch SHA-256s), kernel_version
(build-meta's, default 6.1.192) and preempt (build-meta's "rt", ...;
default none recorded).
"""

import json
import os
import random

from tests.unit import kernelfmt

POINTS = [
    {"id": "p1", "read_pct": 90, "mailboxes": 16, "miss_pct": 0,
     "duration_ms": 1000},
    {"id": "p2", "read_pct": 50, "mailboxes": 16, "miss_pct": 10,
     "duration_ms": 1000},
]


def hist_of(samples):
    h = [0] * 32
    for s in samples:
        b = 0 if s < 2 else min(31, int(s).bit_length() - 1)
        h[b] += 1
    return h


def results_txt(point, cpus, seed, ops_per_sec, threads, lat_scale=1.0,
                status="SUCCESS"):
    rnd = random.Random(seed)
    dur_ns = point["duration_ms"] * 1_000_000
    total_ops = int(ops_per_sec * dur_ns / 1e9)
    per = [total_ops // threads] * threads
    per[0] += total_ops - sum(per)
    lines = ["mbox_bench-results v1",
             f"param read_pct={point['read_pct']} mailboxes="
             f"{point['mailboxes']} miss_pct={point['miss_pct']} duration_ms="
             f"{point['duration_ms']} cpus=0-{cpus - 1} seed={seed} timing=1",
             f"run id=1 threads={threads} elapsed_ns={dur_ns + 123456} "
             f"clock_read_ns=42"]
    tl = tw = th = tm = 0
    for i, ops in enumerate(per):
        lookups = ops * point["read_pct"] // 100
        writes = ops - lookups
        misses = lookups * point["miss_pct"] // 100
        hits = lookups - misses
        tl, tw, th, tm = tl + lookups, tw + writes, th + hits, tm + misses
        lines.append(f"thread cpu={i} ops={ops} lookups={lookups} hits={hits} "
                     f"misses={misses} writes={writes} errors=0")
    for op, count, base in (("lookup", tl, 300), ("write", tw, 900)):
        n = min(count, 2000)
        lat = [rnd.lognormvariate(0, 0.5) * base * lat_scale
               for _ in range(n)]
        h = hist_of(lat)
        lines.append(f"lat op={op} count={n} min_ns={int(min(lat))} max_ns="
                     f"{int(max(lat))} sum_ns={int(sum(lat))} hist="
                     + ",".join(map(str, h)))
    lines += [f"total ops={total_ops} lookups={tl} hits={th} misses={tm} "
              f"writes={tw} errors=0 ops_per_sec={ops_per_sec:.2f}",
              f"lockops read={tl} write={tw}",
              f"fairness min_ops={min(per)} max_ops={max(per)} spread="
              f"{max(per) / max(min(per), 1):.2f} flag=ok",
              f"check registry=ok preloaded={point['mailboxes']} found="
              f"{point['mailboxes']} private_found=0",
              "check progress=ok threads_without_ops=0",
              f"end status={status}"]
    return "\n".join(lines) + "\n", tl, tw


def lockstat_txt(variant, read, write, seed, wait_scale=1.0):
    rnd = random.Random(seed)
    cont_r = int(read * 0.02 * wait_scale) + 1
    cont_w = int(write * 0.05 * wait_scale) + 1

    def lt(nr, mean):
        return (nr, 500, int(mean * 40), nr * int(mean))

    other = {"name": "&rq->__lock",
             "w": (3, lt(4, 3000), 900, lt(12000, 1500))}
    if variant in ("before", "rw"):
        cls = {"name": "mboxes_lock",
               "w": (cont_w // 2, lt(cont_w, 20000 * rnd.uniform(0.9, 1.1)),
                     write // 3, lt(write, 8000)),
               "r": (cont_r // 2, lt(cont_r, 30000 * rnd.uniform(0.9, 1.1)),
                     read // 3, lt(read, 2500)),
               "points": [(cont_r, "c07a1f3c", "omap_mbox_get+0x2c/0x9c")],
               "contending": [(cont_w, "c07a1d80",
                               "omap_mbox_register+0x30/0xd4")]}
    else:
        c = cont_r + cont_w
        cls = {"name": "mboxes_lock",
               "w": (c // 2, lt(c, 25000 * rnd.uniform(0.9, 1.1)),
                     (read + write) // 3, lt(read + write, 2200)),
               "points": [(c, "c07a1f38", "omap_mbox_get+0x28/0x98")],
               "contending": [(c, "c07a1f38", "omap_mbox_get+0x28/0x98")]}
    return kernelfmt.dump([cls, other])


def perf_stat_csv(duration_ms, cpus, seed):
    rnd = random.Random(seed)
    tc = duration_ms * cpus * rnd.uniform(0.97, 1.0)
    cs = rnd.randint(40, 80)
    return (f"{tc:.2f},msec,task-clock,{int(tc * 1e6)},100.00,"
            f"{tc / duration_ms:.3f},CPUs utilized\n"
            f"{cs},,context-switches,{int(tc * 1e6)},100.00,"
            f"{cs / tc * 1000:.3f},/sec\n"
            f"0,,cpu-migrations,{int(tc * 1e6)},100.00,0.000,/sec\n"
            "<not supported>,,cycles,0,100.00,,\n"
            "<not supported>,,instructions,0,100.00,,\n")


def fail_point(run, boot, point, check):
    """Make a point of a run written by make_run end status=FAILURE with
    one check failed: "progress" (a starved thread: cpu 1 made no op,
    threads_without_ops=1) or "registry"."""
    path = os.path.join(run, "cells", boot, "points", point, "results.txt")
    with open(path) as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        if check == "progress" and line.startswith("thread cpu=1 "):
            line = ("thread cpu=1 ops=0 lookups=0 hits=0 misses=0 writes=0 "
                    "errors=0")
        elif check == "progress" and line.startswith("check progress="):
            line = "check progress=FAIL threads_without_ops=1"
        elif check == "registry" and line.startswith("check registry="):
            line = line.replace("registry=ok", "registry=FAIL")
        elif line.startswith("end status="):
            line = "end status=FAILURE"
        out.append(line)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def make_run(path, effects=None, cpus=(2,), reps=6, seed=7,
             wrong_count_boot=None, extra_boots=(), base_ops=100000.0,
             noise=0.005, variants=None, compare=None):
    """Write a run directory at path; returns the manifest dict.

    effects: point id -> throughput factor after/before (default 1.0).
    wrong_count_boot: a boot id whose lock_stat acquisitions are 5% off.
    extra_boots: manifest boot dicts added as-is (e.g. a failed boot).
    variants, compare: see the module's docstring."""
    effects = effects or {}
    rnd = random.Random(seed)
    specs = variants or [
        {"name": "before", "lock": "rw", "patches": ["0001"]},
        {"name": "after", "lock": "spin", "effects": effects,
         "patches": ["0001", "0002"]}]
    spec = {x["name"]: x for x in specs}
    variants = [x["name"] for x in specs]
    boots = []  # the manifest's "cells" (the format's name)
    os.makedirs(path, exist_ok=True)
    for rep in range(1, reps + 1):
        for c in cpus:
            for v in variants:  # interleaved, as the runner does
                cid = f"r{rep:02d}-{v}-c{c}"
                boots.append({"id": cid, "variant": v, "cpus": c, "rep": rep,
                              "state": "done", "oversubscribed": c > 2})
                cdir = os.path.join(path, "cells", cid)
                os.makedirs(cdir, exist_ok=True)
                with open(os.path.join(cdir, "meta.json"), "w") as f:
                    json.dump({"cell": cid, "variant": v, "arch": "arm"}, f)
                for name in ("console.log", "qemu-cmd"):
                    with open(os.path.join(cdir, name), "w") as f:
                        f.write("synthetic\n")
                sv = spec[v]
                for p in POINTS:
                    factor = (sv.get("effects") or {}).get(p["id"], 1.0) \
                        * sv.get("scale", 1.0)
                    ops = base_ops * factor * (1 + rnd.gauss(0, noise))
                    s = rnd.randrange(1 << 30)
                    text, rd, wr = results_txt(p, c, s, ops, threads=c,
                                               lat_scale=1 / factor)
                    if cid == wrong_count_boot:
                        rd = int(rd * 1.05)
                    if sv["lock"] == "rcu":
                        rd = 0
                    pdir = os.path.join(cdir, "points", p["id"])
                    os.makedirs(pdir, exist_ok=True)
                    with open(os.path.join(pdir, "results.txt"), "w") as f:
                        f.write(text)
                    if sv["lock"] != "none":
                        with open(os.path.join(pdir, "lock_stat.txt"),
                                  "w") as f:
                            f.write(lockstat_txt(sv["lock"], rd, wr, s))
                    with open(os.path.join(pdir, "perf-stat.csv"), "w") as f:
                        f.write(perf_stat_csv(p["duration_ms"], c, s))
    boots.extend(extra_boots)
    manifest = {
        "format": 1,
        "campaign": {"name": "synth", "variants": variants,
                     "baseline": "before", "cpus": list(cpus),
                     "points": POINTS, "repetitions": reps, "margin": 0.05,
                     "primary_metric": "throughput_ops_s",
                     **({"compare": compare} if compare else {})},
        "host": {"cores": 2, "cpu_model": "Synthetic CPU @ 2.0GHz",
                 "qemu_version": "7.2.0", "accel": "tcg"},
        "builds": {v: {"kernel_version": spec[v].get("kernel_version", "6.1.192"),
                       "arch": "arm",
                       **({"preempt": spec[v]["preempt"]} if "preempt" in spec[v] else {}),
                       "lock_stat": spec[v]["lock"] != "none",
                       "lookup_lock": "none" if spec[v]["lock"] == "rcu"
                       else "lock",
                       "patches": [{"name": n, "sha256": n * 8}
                                   for n in spec[v].get("patches", [])]}
                   for v in variants},
        "cells": boots,
    }
    with open(os.path.join(path, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


#: campaigns/default.toml's points, as its manifest records them
DEFAULT_POINTS = [
    {"id": "read95", "read_pct": 95, "mailboxes": 16, "miss_pct": 0,
     "duration_ms": 1000, "think_ns": 0, "primary_metric": "throughput_run"},
    {"id": "read50", "read_pct": 50, "mailboxes": 16, "miss_pct": 0,
     "duration_ms": 1000, "think_ns": 0, "primary_metric": "throughput_run"},
    {"id": "read95-long", "read_pct": 95, "mailboxes": 256, "miss_pct": 0,
     "duration_ms": 1000, "think_ns": 0, "primary_metric": "throughput_run"},
    {"id": "read95-paced", "read_pct": 95, "mailboxes": 16, "miss_pct": 0,
     "duration_ms": 1000, "think_ns": 100000,
     "primary_metric": "lookup_lat_median_ns"},
]
#: (cpus, point) -> the after/before factor on throughput (its inverse on
#: latencies) of make_default_run: 1 vCPU (icount) within the margin, 2
#: vCPUs harm on the tight loops with lists, no change when paced
DEFAULT_EFFECTS = {(1, "read95"): 1 / 1.0037, (1, "read50"): 1 / 1.002,
                   (1, "read95-long"): 1 / 1.001, (1, "read95-paced"): 1.0,
                   (2, "read95"): 0.816, (2, "read50"): 1.0,
                   (2, "read95-long"): 0.66, (2, "read95-paced"): 1.0}
#: (cpus, point) -> the after/before factor on write latencies: the
#: spinlock's writers wait less where readers dominate
DEFAULT_WRITERS = {(2, "read95"): 0.6, (2, "read95-long"): 0.45}


def host_steal_txt(cpus, steal_pct, seed):
    """A host-steal.txt (guest/JOB.md) of cpus vCPU threads, each with
    about steal_pct % steal, and one other QEMU thread."""
    rnd = random.Random(seed)
    wall = 1_000_000_000
    lines = ["lockbench-host-steal v1",
             "thread\ttid\twall_ns\trun_ns\twait_ns\tnonvoluntary_switches"
             "\tsteal_pct"]
    for i in range(cpus):
        wait = int(wall * max(0.0, rnd.gauss(steal_pct, 0.5)) / 100)
        lines.append(f"CPU {i}/TCG\t{100 + i}\t{wall}\t{wall - wait}\t{wait}"
                     f"\t{rnd.randint(5, 50)}\t{100 * wait / wall:.3f}")
    lines.append(f"qemu-system-arm\t99\t{wall}\t{wall // 200}\t0\t1\t0.000")
    return "\n".join(lines) + "\n"


#: instructions per operation at 1 vCPU (icount): the lockdep + lock_stat
#: kernels' and the production twins' (docs/variants.md: before-plain is
#: 862), and the conversion's cost on each
INSN = {"before": 2209.0, "after": 2209.0 * 1.0037,
        "before-plain": 862.0, "after-plain": 862.0 + 8.1}


def make_default_run(path, effects=None, writers=None, reps=8, icount_reps=3,
                     seed=11, noise=0.02, icount_noise=3e-6, steal_pct=3.0,
                     name="default", plain=False):
    """A run directory shaped like campaigns/default.toml's: before
    (rwlock), after (spinlock) and the A/A control before~aa, at 1 vCPU
    under icount (icount_reps boots each: insn_per_op exact to
    icount_noise) and at 2 pinned vCPUs on the wall clock (reps boots
    each, throughput with `noise`, host-steal.txt), the four default
    points with their named primary metrics.  effects, writers: see
    DEFAULT_EFFECTS, DEFAULT_WRITERS.  plain: also the production twins
    before-plain and after-plain (no lockdep, no lock_stat; INSN) at 1
    vCPU only, compared as a second pair.  Returns the manifest dict."""
    effects = {**DEFAULT_EFFECTS, **(effects or {})}
    writers = {**DEFAULT_WRITERS, **(writers or {})}
    rnd = random.Random(seed)
    variants = ["before", "after", "before~aa"]
    lock = {"before": "rw", "after": "spin", "before~aa": "rw",
            "before-plain": "none", "after-plain": "none"}
    if plain:
        variants += ["before-plain", "after-plain"]
    boots = []  # the manifest's "cells" (the format's name)
    os.makedirs(path, exist_ok=True)
    for cpus, n, clock in ((1, icount_reps, "icount"), (2, reps, "wall")):
        for rep in range(1, n + 1):
            for pos, v in enumerate(variants, 1):
                if v.endswith("-plain") and cpus != 1:
                    continue
                cid = f"r{rep:02d}-{v}-c{cpus}"
                boots.append({"id": cid, "variant": v, "cpus": cpus,
                              "rep": rep, "pos": pos, "state": "done",
                              "oversubscribed": False, "clock": clock,
                              "tries": [{"state": "done", "problems": []}],
                              **({"pin": [0, 1]} if cpus == 2 else {})})
                cdir = os.path.join(path, "cells", cid)
                os.makedirs(cdir, exist_ok=True)
                with open(os.path.join(cdir, "meta.json"), "w") as f:
                    json.dump({"cell": cid, "variant": v, "arch": "arm"}, f)
                for fname in ("console.log", "qemu-cmd"):
                    with open(os.path.join(cdir, fname), "w") as f:
                        f.write("synthetic\n")
                for p in DEFAULT_POINTS:
                    k = (cpus, p["id"])
                    factor = effects.get(k, 1.0) if v == "after" else 1.0
                    s = rnd.randrange(1 << 30)
                    if clock == "icount":
                        # 1e9 guest ns / instructions an op
                        insn = INSN.get(v.split("~")[0], 2209.0)
                        if v == "after" and k in effects:
                            insn = 2209.0 / effects[k]
                        ops = 1e9 / insn * (1 + rnd.gauss(0, icount_noise))
                    else:
                        ops = 120000.0 * factor * (1 + rnd.gauss(0, noise))
                    if p["think_ns"]:
                        ops = 9000.0 * (1 + rnd.gauss(0, noise / 4))
                    text, rd, wr = results_txt(p, cpus, s, ops, threads=cpus,
                                               lat_scale=1 / factor)
                    wf = writers.get(k, 1.0) if v == "after" else 1.0
                    if wf != 1.0:
                        text = _scale_writes(text, wf)
                    pdir = os.path.join(cdir, "points", p["id"])
                    os.makedirs(pdir, exist_ok=True)
                    with open(os.path.join(pdir, "results.txt"), "w") as f:
                        f.write(text)
                    if lock[v] != "none":
                        with open(os.path.join(pdir, "lock_stat.txt"),
                                  "w") as f:
                            f.write(lockstat_txt(lock[v], rd, wr, s))
                    with open(os.path.join(pdir, "perf-stat.csv"), "w") as f:
                        f.write(perf_stat_csv(p["duration_ms"], cpus, s))
                    if clock == "wall":
                        with open(os.path.join(pdir, "host-steal.txt"),
                                  "w") as f:
                            f.write(host_steal_txt(cpus, steal_pct, s))
    campaign = {
        "name": name, "variants": variants, "baseline": "before",
        "compare": [["before", "after"]] + (
            [["before-plain", "after-plain"]] if plain else []),
        "control": True, "pin": True,
        "cpus": [1, 2], "repetitions": reps, "order": "balanced",
        "margin": 0.05, "primary_metric": None, "primary_points": None,
        "clock": {"1": "icount", "2": "wall"}, "icount_repetitions": icount_reps,
        "points": DEFAULT_POINTS, "looks": [reps],
        "controls": {"before~aa": "before"}, "lock_class": "mboxes_lock",
        "file": "campaigns/default.toml"}
    manifest = {
        "format": 1, "campaign": campaign,
        "host": {"cores": 2, "cpu_model": "Synthetic CPU @ 2.0GHz",
                 "qemu_version": "7.2.0", "accel": "tcg"},
        "builds": {v: {"kernel_version": "6.1.192", "kernel": "6.1",
                       "arch": "arm", "lock_stat": lock[v] != "none",
                       "lockdep": lock[v] != "none", "lookup_lock": "lock",
                       "patches": [{"name": n, "sha256": n * 8} for n in (
                           ["0001", "0002"] if v.startswith("after")
                           else ["0001"])]}
                   for v in variants if "~" not in v},
        "cells": boots,
    }
    with open(os.path.join(path, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def _scale_writes(text, factor):
    """results.txt text with its write latencies times factor (min, max,
    sum and the log2 histogram, shifted by whole buckets where the factor
    is a power of two, else by the rounded log2)."""
    shift = round(-__import__("math").log2(factor))
    out = []
    for line in text.splitlines():
        if line.startswith("lat op=write "):
            kv = dict(x.split("=", 1) for x in line.split()[1:])
            h = [int(x) for x in kv["hist"].split(",")]
            if shift > 0:
                h = h[shift:] + [0] * shift
            elif shift < 0:
                h = [0] * -shift + h[:shift]
            kv.update(min_ns=str(max(1, int(int(kv["min_ns"]) * factor))),
                      max_ns=str(max(1, int(int(kv["max_ns"]) * factor))),
                      sum_ns=str(int(int(kv["sum_ns"]) * factor)),
                      hist=",".join(map(str, h)))
            line = "lat " + " ".join(f"{k}={v}" for k, v in kv.items())
        out.append(line)
    return "\n".join(out) + "\n"
