# SPDX-License-Identifier: GPL-2.0
"""Load and check a campaign file (campaigns/*.toml) before anything runs.

Every rule gives one line naming the file, the key and what is allowed:
unknown keys, wrong types, out-of-range values, empty lists, unknown or
duplicate variants, unsafe names, unknown architectures.

The architecture is a dimension: arches = ["arm", "arm64"] (default
["arm"]) runs every variant on each.  The campaign as resolved names
build targets (scripts/variant.py): "before" for arm, "before@arm64" for
arm64; the baseline is the first arch's, and each compared pair is
compared within each arch, never across.
"""
import hashlib
import os
import re
import tomllib

from analysis import primary as primarymod
from analysis.common import CliError
from guest import job as jobmod
from guest import safeio
from scripts import target as targetmod
from scripts import variant as variantmod

# Matched whole (fullmatch): "$" would let a name end in a newline.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
# Text that goes into one-line messages and reports: no control characters.
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
# A campaign file is a page of TOML; a manifest a few hundred cells.
MAX_FILE_BYTES = 1 << 20
METRICS = ("throughput_ops_s", "lookup_lat_median_ns", "lookup_lat_p99_ns",
           "write_lat_median_ns", "write_lat_p99_ns", "lock_waittime_per_acq_ns",
           "throughput_ref", "lookup_lat_median_ref", "write_lat_median_ref",
           "throughput_run", "lookup_lat_mean_ns", "write_lat_mean_ns", "insn_per_op")
# key: (type, check, what is allowed, default or REQUIRED)
REQUIRED = object()
TOP = {
    "name": (str, NAME_RE.fullmatch, "a name of [A-Za-z0-9_-], at most 64, not starting with - or _", REQUIRED),
    "description": (str, lambda v: len(v) <= 200 and not CONTROL_RE.search(v),
                    "text of at most 200 characters, without control characters", ""),
    "variants": (list, None, "a non-empty list of distinct built variants", REQUIRED),
    "baseline": (str, None, "one of the campaign's variants", None),
    "compare": (list, None, "a list of [baseline, variant] pairs of the campaign's variants", None),
    "control": (bool, None, "true or false", False),
    # Pin the vCPU threads of each cell of 2 vCPUs or more, one per host
    # core (guest/run_guest.py cell_cores; 1-vCPU cells stay unpinned;
    # local cells only, not --hosts; the default by measurement: README,
    # "Measured").
    "pin": (bool, None, "true or false", True),
    "arches": (list, None, "a non-empty list of distinct architectures from "
               + ", ".join(variantmod.ARCHES), ["arm"]),
    "cpus": (list, None, "a non-empty list of distinct integers 1..16", REQUIRED),
    "repetitions": (object, None, "an integer 1..100, or a table { min = 6, max = 30 } "
                    "with min < max <= 100 and optional looks = 2..8 (default 3)", REQUIRED),
    # balanced: every variant in every position of a repetition equally
    # often (a cyclic Latin square and its mirror); alternate: the list
    # order, reversed on even repetitions; random: shuffled (seed)
    "order": (str, lambda v: v in ORDERS, "'balanced', 'alternate' or 'random'", "alternate"),
    "seed": (int, lambda v: 0 <= v < 2**32, "an integer 0..2^32-1", 1),
    "mem_mb": (int, lambda v: 128 <= v <= 2048, "an integer 128..2048", 512),
    "margin": (float, lambda v: 0 < v < 1, "a number between 0 and 1 (0.05 = 5%)", 0.05),
    # None: per regime, what the default campaign uses (analysis/primary.py)
    "primary_metric": (str, lambda v: v in METRICS, "one of " + ", ".join(METRICS), None),
    "primary_points": (list, None, "a non-empty list of distinct point ids of the campaign", None),
    # The lock under test (kernel-patches/targets/NAME.toml): its
    # lock_stat class (resolved into lock_class: the cross-check, the
    # lock_stat table and the plots follow it) and the workloads that
    # drive it.
    "target": (str, targetmod.NAME_RE.fullmatch, "a target of kernel-patches/targets/ ("
               + ", ".join(targetmod.names()) + ")", "mboxes_lock"),
    "perf": (dict, None, "a table with keys stat, lock", {}),
    # What a guest's clock is: the host's wall clock, or QEMU's instruction
    # count (-icount shift=0,sleep=off: 1 guest ns = 1 instruction, single-
    # threaded TCG), for the whole campaign or per vCPU count.
    "clock": (object, None, "'wall' or 'icount', or a table of the campaign's vCPU "
              "counts { 1 = \"icount\", 2 = \"wall\" }", "wall"),
    # Boots a side of each icount cell: they agree to parts per million,
    # so a few measure the spread the verdict is judged on.
    "icount_repetitions": (int, lambda v: 2 <= v <= 100, "an integer 2..100", 3),
    # The runner's silence limit (guest/run_guest.py --silence): a kernel
    # that may hang is lost sooner.
    "silence_s": (int, lambda v: 10 <= v <= 3600, "an integer 10..3600 (seconds)", None),
    "points": (list, None, "a non-empty array of [[points]] tables", REQUIRED),
}
PERF = {"stat": (bool, "true or false", True), "lock": (bool, "true or false", False)}
POINT_DEFAULTS = {"miss_pct": 0, "duration_ms": 1000, "seed": 1, "timing": 8, "think_ns": 0}


CONTROL_SUFFIX = "~aa"
ORDERS = ("balanced", "alternate", "random")
# A point's keys that are the campaign's, not the guest's job.
POINT_OWN = ("primary_metric",)


def image(campaign, variant):
    """The build target a cell of `variant` boots: a control boots its
    baseline's image."""
    return (campaign.get("controls") or {}).get(variant, variant)


class CampaignError(CliError):
    pass


def read_capped(path, limit=MAX_FILE_BYTES, root=None):
    """The bytes of PATH, a regular file of at most LIMIT bytes; an OSError
    (safeio.Unsafe, its strerror the reason) otherwise: a FIFO would block,
    /dev/zero would never end.  With ROOT (a results directory) PATH is
    read under it through no link at all (guest/safeio.py); without, it is
    a file the user named, read through the links they named."""
    if root is not None:
        return safeio.read_bytes(os.path.relpath(path, root), limit, root)
    return safeio.read_bytes(os.path.realpath(path), limit)


def _type_ok(val, typ):
    if typ is float:
        return isinstance(val, (int, float)) and not isinstance(val, bool)
    if typ is int:
        return isinstance(val, int) and not isinstance(val, bool)
    return isinstance(val, typ)


def _compare(path, pairs, variants, baseline):
    """The comparisons, [[baseline, variant], ...]: as given, checked, or
    every other variant against the baseline."""
    if pairs is None:
        return [[baseline, v] for v in variants if v != baseline]
    allowed = TOP["compare"][2]
    if not pairs:
        raise CampaignError(f"{path}: compare: must be {allowed}, not empty")
    seen = set()
    for i, pair in enumerate(pairs, 1):
        where = f"compare[{i}]"
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(v, str) for v in pair)):
            raise CampaignError(f"{path}: {where}: must be a [baseline, variant] "
                                f"pair of two variant names, not {pair!r}")
        for v in pair:
            if v not in variants:
                raise CampaignError(f"{path}: {where}: variant {v!r} is not one of the "
                                    f"campaign's variants ({', '.join(variants)})")
        if pair[0] == pair[1]:
            raise CampaignError(f"{path}: {where}: compares {pair[0]!r} with itself")
        if tuple(pair) in seen:
            raise CampaignError(f"{path}: {where}: duplicate pair {pair!r}")
        seen.add(tuple(pair))
    return pairs


DEFAULT_LOOKS = 3


def look_schedule(lo, hi, k):
    """k repetition counts from lo to hi, geometrically spaced (a look
    costs as much confidence early as late, and the early ones are cheap):
    6, 13, 30 for lo=6, hi=30, k=3."""
    k = min(k, hi - lo + 1)
    reps = [round(lo * (hi / lo) ** (i / (k - 1))) for i in range(k)]
    out = []
    for r in reps:
        out.append(max(r, out[-1] + 1) if out else r)
    out[-1] = hi
    return out


def _repetitions(path, out):
    """repetitions = N, or { min, max, looks }: the campaign stops at the
    first look (a number of repetitions) where every primary cell has a
    verdict, each look judged at confidence 1 - alpha/looks (Bonferroni
    over the looks: analysis/README.md, "Stopping early").  Resolved to
    repetitions = max and looks = [the repetition counts]."""
    val = out["repetitions"]
    allowed = TOP["repetitions"][2]
    if _type_ok(val, int):
        if not 1 <= val <= 100:
            raise CampaignError(f"{path}: repetitions: must be {allowed}")
        out["looks"] = [val]
        return
    if not isinstance(val, dict):
        raise CampaignError(f"{path}: repetitions: must be {allowed}")
    for key in val:
        if key not in ("min", "max", "looks"):
            raise CampaignError(f"{path}: repetitions.{key}: unknown key (allowed: min, max, looks)")
    lo, hi, k = val.get("min"), val.get("max"), val.get("looks", DEFAULT_LOOKS)
    if not (_type_ok(lo, int) and _type_ok(hi, int) and 1 <= lo < hi <= 100):
        raise CampaignError(f"{path}: repetitions: min and max must be integers with "
                            f"1 <= min < max <= 100, not {lo!r} and {hi!r}")
    if not _type_ok(k, int) or not 2 <= k <= 8:
        raise CampaignError(f"{path}: repetitions.looks: must be an integer 2..8, not {k!r}")
    out["repetitions"] = hi
    out["looks"] = look_schedule(lo, hi, k)


def _arches(path, out):
    """Check arches and expand variants, baseline and compare to the build
    targets of every arch (in place)."""
    arches = out["arches"]
    if (not arches or not all(isinstance(a, str) and a in variantmod.ARCHES for a in arches)
            or len(set(arches)) != len(arches)):
        raise CampaignError(f"{path}: arches: must be {TOP['arches'][2]}, not {arches!r}")
    for a in arches:
        for v in out["variants"]:
            try:
                variantmod.load(variantmod.label(v, a))
            except variantmod.VariantError as e:
                raise CampaignError(f"{path}: arches: {e}") from None
    lab = variantmod.label
    # control = true: the baseline of each arch boots a second time as
    # the pseudo-variant BASELINE~aa (the same image; no build), the A/A
    # pair that calibrates every vCPU count and point (analysis/README.md).
    out["controls"] = ({lab(out["baseline"], a) + CONTROL_SUFFIX: lab(out["baseline"], a)
                        for a in arches} if out["control"] else {})
    out["variants"] = [lab(v, a) for a in arches for v in out["variants"]] + list(out["controls"])
    out["baseline"] = lab(out["baseline"], arches[0])
    out["compare"] = [[lab(b, a), lab(v, a)] for a in arches for b, v in out["compare"]]


def load(path, root=None):
    """Return the campaign resolved (defaults filled in), or raise; ROOT:
    read_capped's (a results directory's campaign.toml)."""
    def bad(key, allowed):
        raise CampaignError(f"{path}: {key}: must be {allowed}")

    try:
        raw = read_capped(path, root=root)
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise CampaignError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise CampaignError(f"{path}: not valid TOML: {e}") from None
    except ValueError as e:  # an integer of more than 4300 digits
        raise CampaignError(f"{path}: not valid TOML: {str(e).split(':')[0]}") from None
    except RecursionError:
        raise CampaignError(f"{path}: not valid TOML: nested too deeply") from None
    out = {}
    for key in data:
        if key not in TOP:
            raise CampaignError(f"{path}: unknown key {key!r} (allowed: {', '.join(TOP)})")
    for key, (typ, check, allowed, default) in TOP.items():
        if key not in data:
            if default is REQUIRED:
                raise CampaignError(f"{path}: {key}: missing; must be {allowed}")
            out[key] = default
            continue
        val = data[key]
        if not _type_ok(val, typ) or (check and not check(val)):
            bad(key, allowed)
        out[key] = float(val) if typ is float else val

    variants = out["variants"]
    known = variantmod.variant_names()
    if not variants:
        bad("variants", TOP["variants"][2])
    for v in variants:
        if not isinstance(v, str) or v not in known:
            raise CampaignError(f"{path}: variants: unknown variant {v!r} (known: {', '.join(known)})")
    if len(set(variants)) != len(variants):
        raise CampaignError(f"{path}: variants: duplicate variant in {variants}")
    if out["baseline"] is None:
        out["baseline"] = variants[0]
    elif out["baseline"] not in variants:
        bad("baseline", f"one of the campaign's variants ({', '.join(variants)})")
    _repetitions(path, out)
    out["compare"] = _compare(path, out["compare"], variants, out["baseline"])
    _arches(path, out)
    cpus = out["cpus"]
    if (not cpus or len(set(map(str, cpus))) != len(cpus)
            or not all(_type_ok(c, int) and 1 <= c <= 16 for c in cpus)):
        bad("cpus", TOP["cpus"][2])

    perf = {}
    for key in out["perf"]:
        if key not in PERF:
            raise CampaignError(f"{path}: perf.{key}: unknown key (allowed: {', '.join(PERF)})")
    for key, (typ, allowed, default) in PERF.items():
        val = out["perf"].get(key, default)
        if not isinstance(val, typ):
            bad(f"perf.{key}", allowed)
        perf[key] = val
    out["perf"] = perf

    if not out["points"]:
        bad("points", TOP["points"][2])
    points, ids = [], set()
    for i, pt in enumerate(out["points"], 1):
        where = f"points[{i}]"
        if not isinstance(pt, dict):
            bad(where, "a table")
        pid = pt.get("id")
        if not isinstance(pid, str) or not jobmod.ID_RE.match(pid):
            bad(f"{where}.id", "a string of [A-Za-z0-9_-], at most 32, not starting with - or _")
        if pid in ids:
            raise CampaignError(f"{path}: {where}.id: duplicate point id {pid!r}")
        ids.add(pid)
        params = {}
        # workload = "NAME": a guest/lockload point (guest/JOB.md); its
        # keys are jobmod.WORKLOAD_KEYS, no read_pct or mailboxes.
        workload = pt.get("workload", "module")
        if not isinstance(workload, str) or workload not in jobmod.WORKLOADS:
            bad(f"{where}.workload", "one of " + ", ".join(jobmod.WORKLOADS))
        for key, val in pt.items():
            if key == "id":
                continue
            if key == "primary_metric":
                if not isinstance(val, str) or val not in METRICS:
                    bad(f"{where}.primary_metric", TOP["primary_metric"][2])
                params[key] = val
                continue
            if key == "workload":
                if workload != "module":
                    params[key] = workload
                continue
            if workload != "module" and key not in jobmod.WORKLOAD_KEYS:
                raise CampaignError(f"{path}: {where}: {key!r} is a module parameter; a "
                                    f"workload point takes only id, "
                                    f"{', '.join(jobmod.WORKLOAD_KEYS)}")
            if key not in jobmod.POINT_KEYS:
                raise CampaignError(f"{path}: {where}: unknown key {key!r} "
                                    f"(allowed: id, {', '.join(jobmod.POINT_KEYS)})")
            lo, hi = jobmod.POINT_KEYS[key]
            if not _type_ok(val, int) or not lo <= val <= hi:
                bad(f"{where}.{key}", f"an integer {lo}..{hi}")
            params[key] = val
        for key in ("read_pct", "mailboxes") if workload == "module" else ():
            if key not in params:
                raise CampaignError(f"{path}: {where}.{key}: missing; must be an integer "
                                    f"{jobmod.POINT_KEYS[key][0]}..{jobmod.POINT_KEYS[key][1]}")
        for key, val in POINT_DEFAULTS.items():
            if workload == "module" or key in jobmod.WORKLOAD_KEYS:
                params.setdefault(key, val)
        try:
            jobmod.check_point(pid, {k: v for k, v in params.items() if k not in POINT_OWN})
        except jobmod.JobError as e:
            raise CampaignError(f"{path}: {where}: {e}") from None
        points.append({"id": pid, **params})
    if len({"workload" in p for p in points}) > 1:
        raise CampaignError(f"{path}: points: all module points or all workload points "
                            "(guest/JOB.md), not both")
    try:
        target = targetmod.load(out["target"])
    except targetmod.TargetError as e:
        raise CampaignError(f"{path}: target: {e}") from None
    for i, p in enumerate(points, 1):
        w = p.get("workload", "module")
        if w not in target["workloads"]:
            raise CampaignError(f"{path}: points[{i}].workload: {w!r} does not drive target "
                                f"{target['name']} (its workloads: "
                                f"{', '.join(target['workloads'])})")
    out["lock_class"] = target["lock_class"]
    out["points"] = points
    prim = out["primary_points"]
    if prim is not None and (not prim or len(set(map(str, prim))) != len(prim)
                             or not all(isinstance(p, str) and p in ids for p in prim)):
        bad("primary_points", f"{TOP['primary_points'][2]} ({', '.join(sorted(ids))})")
    _clock(path, out)
    _primary(path, out)
    out["file"] = os.path.abspath(path)
    out["file_sha256"] = hashlib.sha256(raw).hexdigest()
    return out


def _clock(path, out):
    """clock = "wall" | "icount" | { "1" = "icount", ... }: resolved to a
    table of every vCPU count of the campaign.  icount runs one vCPU (the
    vCPUs of a single-threaded TCG take turns, and QEMU 7.2 crawls or
    livelocks booting them: docs/icount.md), needs the A/A control (its spread is what the
    verdict is judged on) and repetitions for its own cells."""
    val, cpus = out["clock"], out["cpus"]
    allowed = TOP["clock"][2]
    if isinstance(val, str):
        if val not in primarymod.CLOCKS:
            raise CampaignError(f"{path}: clock: must be {allowed}, not {val[:40]!r}")
        table = {str(c): val for c in cpus}
    elif isinstance(val, dict):
        table = {str(c): primarymod.WALL for c in cpus}
        for key, clock in val.items():
            if key not in table:
                raise CampaignError(f"{path}: clock.{key[:40]}: not one of the campaign's "
                                    f"vCPU counts ({', '.join(map(str, cpus))})")
            if not isinstance(clock, str) or clock not in primarymod.CLOCKS:
                raise CampaignError(f"{path}: clock.{key}: must be 'wall' or 'icount', "
                                    f"not {str(clock)[:40]!r}")
            table[key] = clock
    else:
        raise CampaignError(f"{path}: clock: must be {allowed}")
    out["clock"] = table
    icount = sorted(int(c) for c, k in table.items() if k == primarymod.ICOUNT)
    if not icount:
        return
    if icount[-1] > 1:
        raise CampaignError(
            f"{path}: clock: icount at {icount[-1]} vCPUs: icount takes 1 vCPU only "
            f"(its vCPUs take turns, so it measures the emulator's hand-over, not "
            f"contention, and QEMU 7.2 crawls or livelocks booting a second one: "
            f"docs/icount.md)")
    if not out["control"]:
        raise CampaignError(f"{path}: clock: icount needs control = true (the A/A pair "
                            f"measures the spread its verdicts are judged on)")
    if out["icount_repetitions"] > out["repetitions"]:
        raise CampaignError(f"{path}: icount_repetitions: {out['icount_repetitions']} is more "
                            f"than the campaign's {out['repetitions']} repetitions")


def _primary(path, out):
    """Check each cell's primary metric: a paced point is never answered
    by a rate (analysis/primary.py)."""
    for i, p in enumerate(out["points"], 1):
        for cpus in out["cpus"]:
            metric, how = primarymod.metric_for(out, cpus, p)
            why = primarymod.paced_refusal(metric, p)
            if why and how == "named":
                key = (f"points[{i}].primary_metric" if p.get("primary_metric")
                       else "primary_metric")
                raise CampaignError(f"{path}: {key}: at point {p['id']!r} {why}")


def job_text(campaign):
    """The guest job of one boot: every point of the campaign."""
    pts = [(p["id"], {k: v for k, v in p.items() if k not in ("id",) + POINT_OWN})
           for p in campaign["points"]]
    opts = {"perf_stat": "1" if campaign["perf"]["stat"] else "0",
            "perf_lock": "1" if campaign["perf"]["lock"] else "0"}
    return jobmod.render(pts, opts)
