# SPDX-License-Identifier: GPL-2.0
"""The setup behind a run's analysed boots, in words: how QEMU ran them,
on how many host cores, how many boots, which kernels.  Its own module
because two outputs must say the same thing: summary.md's header
(analysis.render.summary.header_facts adds the sample counts) and the one setup
line of the plots' footers and report.html (setup_line).  Reads a loaded
analysis.parse.rundir.RunDir; no file access."""

from lockbench import workloads


def analysed(boots):
    """(variant, cpus, oversubscribed) of each analysed boot of
    tidy/cells.csv's data frame (one row per boot): setup_facts' done."""
    done = boots[boots["analyzed"] == 1] if len(boots) else boots
    return list(zip(done["variant"], (int(c) for c in done["cpus"]),
                    done["oversubscribed"] == 1)) if len(done) else []


def driver_s(points):
    """What ran the points: "mbox_bench", or "lockload (W, ...)" for
    guest/inside/lockload points (a generic workload as a campaign spells it)."""
    loads = []
    for p in points:
        w = p.workload
        if w and w != "module":
            w = workloads.workload_spelled(str(w))
            if w not in loads:
                loads.append(w)
    return f"lockload ({', '.join(loads)})" if loads else "mbox_bench"


def setup_facts(rd, done):
    """The setup behind the analysed boots: the one computation of what
    summary.md's header (analysis.render.summary.header_facts, which adds the
    sample counts) and the plots' footer (setup_line) say. done: (variant, cpus, oversubscribed) of each analysed boot.

    A dict: accel (upper case, "TCG"), cores ("?" when not recorded),
    cpu_model, qemu, cpus and over_cpus (the boots' vCPU counts, sorted),
    boots ({(variant, cpus): number of boots}), archs (the booted
    variants' architectures, sorted), guests ({arch: how QEMU booted it}
    for those the campaign recorded, manifest host.qemu_guests), kernels
    ({variant: kernel version, '' when not recorded} of every variant),
    preempt ({variant: its preemption model, build-meta.json's "rt",
    "none", ...; '' when not recorded}),
    commits ({variant: (commit id, tree)} of the variants built from a
    git tree, scripts/tree/kernel_tree.py; not the A/A control's, the
    baseline's kernel again),
    host_kinds ({cpus: {kind of machine: {variant: boots}}}: RunDir.host_kinds;
    with --hosts, cores and cpu_model are those of the machines the boots
    ran on, as each read its own: '2-16' cores, '2 kinds of CPU')."""
    host, done = rd.host, list(done)
    boots = {}
    for v, c, _o in done:
        boots[(v, c)] = boots.get((v, c), 0) + 1
    archs = sorted({rd.arch(v) for v, _c in boots})
    qg = host.get("qemu_guests")
    qg = qg if isinstance(qg, dict) else {}
    cpus = sorted({c for _v, c in boots})
    cores = "?" if rd.host_cores is None else rd.host_cores
    model = host.get("cpu_model", "unknown CPU")
    ran = [rd.boot_host(b) for b in rd.boots
           if b.state == "done" and b.cpus in cpus and b.host]
    if ran:  # --hosts boots: the machines they ran on, not this one
        ran += [rd.boot_host(b) for b in rd.boots
                if b.state == "done" and b.cpus in cpus and not b.host]
        known = sorted({k for _m, k in ran if type(k) is int})
        cores = span(known) if known else "?"
        models = {m for m, _k in ran if m}
        model = (models.pop() if len(models) == 1 else
                 f"{len(models)} kinds of CPU" if models else "unknown CPU")
    return {
        "accel": rd.accel.upper(),
        "cores": cores,
        "cpu_model": model,
        "qemu": host.get("qemu_version", "?"),
        "cpus": sorted({c for _v, c in boots}),
        "over_cpus": sorted({c for _v, c, o in done if o}),
        "over_boots": sum(1 for _v, _c, o in done if o),
        "boots": boots,
        "archs": archs,
        "guests": {a: str(qg[a]) for a in archs if a in qg},
        "kernels": {v: str((rd.builds.get(v) or {}).get("kernel_version")
                           or "") for v in rd.variants},
        "preempt": {v: str((rd.builds.get(v) or {}).get("preempt") or "")
                    for v in rd.variants},
        "commits": {v: (str(src.get("commit", "")), str(src.get("tree", "")))
                    for v in rd.variants if "~" not in v
                    for src in [(rd.builds.get(v) or {}).get("source")]
                    if isinstance(src, dict) and src.get("commit")},
        "host_kinds": {c: rd.host_kinds(c) for c in cpus},
        # What drove the lock: the module, or lockload (its workloads).
        "driver": driver_s(rd.points),
    }


def mixed_hosts(facts, short=False):
    """The sentence that says which vCPU counts' boots ran on more than
    one kind of machine (--hosts), each kind with its boots per variant
    (SHORT: the counts of kinds only, for the commit block), or '': a
    ratio across machine kinds is not a ratio on one machine."""
    bits = []
    for cpus, kinds in sorted((facts.get("host_kinds") or {}).items()):
        if len(kinds) > 1:
            bits.append(f"at {cpus} vCPU{'s' if cpus != 1 else ''} on {len(kinds)} kinds"
                        + ("" if short else " (" + "; ".join(
                            f"{k}: " + ", ".join(f"{v} {n}" for v, n in by.items())
                            for k, by in kinds.items()) + ")"))
    if not bits:
        return ""
    return ("The boots ran on different kinds of host " + ", ".join(bits)
            + ": a ratio across machine kinds is not a ratio on one machine"
            + (" (summary.md names them)." if short else "."))


def span(values):
    """[5, 6, 6] -> '5-6', [6, 6] -> '6'."""
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def kernel_versions(facts, variants):
    """'Linux 6.1.192', or each variant's ('Linux before 6.1.192, after
    6.6.1') when they differ, in the order of variants."""
    vs = {v: facts["kernels"].get(v, "") for v in variants}
    known = {x for x in vs.values() if x}
    if not known:
        return "Linux (version not recorded)"
    if len(known) == 1:
        return "Linux " + known.pop()
    return "Linux " + ", ".join(f"{v} {x or '?'}" for v, x in vs.items())


def guests(facts):
    """What booted the analysed boots' arches, as the campaign recorded it
    (manifest host.qemu_guests: 'qemu-system-aarch64 -M virt,
    cortex-a57'), by arch; [] for an older manifest."""
    return [facts["guests"][a] for a in facts["archs"] if a in facts["guests"]]


def setup_line(rd, done, variants=None):
    """The one setup line of the plots' footers and report.html: 'QEMU TCG
    emulation, 1, 2, 4 vCPUs on 2 host cores, n=6 boots per variant, Linux
    6.1.192' (+ oversubscribed), from setup_facts(rd, done), as summary.md's
    setup. variants: the order of the kernel versions (default rd's)."""
    f = setup_facts(rd, done)
    how = ("QEMU TCG emulation" if f["accel"] == "TCG"
           else f"QEMU {f['accel']}")
    gs = guests(f)
    if gs:  # the QEMU binaries: the footer has no room for more
        how += f" ({', '.join(g.split()[0] for g in gs)})"
    boots = f["boots"].values()
    line = (f"{how}, {', '.join(map(str, f['cpus'])) or '?'} vCPUs on "
            f"{f['cores']} host cores, "
            f"n={span(boots) if boots else 0} boots per "
            f"variant, {kernel_versions(f, variants or rd.variants)}")
    if f["over_cpus"]:
        line += (f", oversubscribed (*): {', '.join(map(str, f['over_cpus']))} "
                 "vCPUs > host cores")
    mixed = [c for c, kinds in f["host_kinds"].items() if len(kinds) > 1]
    if mixed:
        line += (f", {', '.join(map(str, mixed))} vCPUs on several kinds of "
                 "host (--hosts)")
    return line
