# SPDX-License-Identifier: GPL-2.0
"""Load and check a campaign file (campaigns/*.toml) before anything runs.

Every rule gives one line naming the file, the key and what is allowed:
unknown keys, wrong types, out-of-range values, empty lists, unknown or
duplicate variants, unsafe names, unknown architectures.

The architecture and the kernel version are dimensions: arches = ["arm",
"arm64"] (default ["arm"]) and kernels = ["6.1", "6.12"] (default
["6.1"]) run every variant on each arch and kernel.  The campaign as
resolved names variants (scripts/variant.py): "before" for arm on
6.1, "before@arm64" for arm64, "before@6.12" for 6.12; the baseline is
the first arch's and kernel's, and each compared pair is compared within
each arch and kernel, never across.
"""
import copy
import hashlib
import os
import re
import sys
import tomllib
from typing import NamedTuple

from analysis import primary as primarymod
from analysis.metrics import PRIMARY_CHOICES
from lockbench import defaults, workloads
from lockbench.cli import CliError, OneLineParser, run_cli
from guest import job as jobmod
from lockbench import safeio
from scripts import lock_target as targetmod
from scripts import variant as variantmod
from lockbench.defaults import CLOCKS, ICOUNT, WALL

# A time budget: 90s, 30m, 1h30m (whole numbers of h, m, s, in that order).
DURATION_RE = re.compile(r"(?:(\d{1,3})h)?(?:(\d{1,4})m)?(?:(\d{1,6})s)?")
#: the longest budget: a week
MAX_BUDGET_S = 7 * 24 * 3600
# Matched whole (fullmatch): "$" would let a name end in a newline.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
# Text that goes into one-line messages and reports: no control characters.
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
# A campaign file is a page of TOML; a manifest a few hundred boots.
MAX_FILE_BYTES = 1 << 20
DOC = "docs/campaigns.md"
# The campaign schema: the one table of every key, read by load() (type,
# check, what is allowed, default) and by reference(), which writes
# docs/campaigns.md from it (a unit test holds the file to it).
REQUIRED = object()
#: the key's default is lockbench/defaults.py's CAMPAIGN[key], which the
#: analysis reads old manifests with (filled in below)
DEFAULT = object()


class Key(NamedTuple):
    typ: type        # what TOML gives: str, int, float, bool, list, dict; object: checked by hand
    check: object    # a test of the value beyond its type, or None
    allowed: str     # what is allowed, in words (error messages and the reference)
    default: object  # the value when the key is absent, or REQUIRED
    meaning: str     # one line: what the key does
    kind: str = ""   # its type in the reference, when typ does not say it
    shown: str = ""  # its default in the reference, when the value does not say it


TOP = {
    "name": Key(str, NAME_RE.fullmatch, "a name of [A-Za-z0-9_-], at most 64, not starting "
                "with - or _", REQUIRED,
                "the campaign's name: the run directory is results/NAME-UTCSTAMP"),
    "description": Key(str, lambda v: len(v) <= 200 and not CONTROL_RE.search(v),
                       "text of at most 200 characters, without control characters", DEFAULT,
                       "one line for the report"),
    "variants": Key(list, None, "a non-empty list of distinct built variants", REQUIRED,
                    "the kernel variants compared (kernel-patches/variants/, "
                    "--variants DIR, LOCKBENCH_VARIANT_PATH)", kind="array of strings"),
    "baseline": Key(str, None, "one of the campaign's variants", None,
                    "the variant the others are compared with", shown="the first variant"),
    "compare": Key(list, None, "a list of [baseline, variant] pairs of the campaign's variants",
                   None, "the pairs compared; a pair whose variants differ in a converted lock "
                   "(their converts: docs/variants.md) needs points whose workload drives it "
                   "(kernel-patches/targets/)", kind="array of pairs",
                   shown="every other variant against the baseline"),
    "control": Key(bool, None, "true or false", DEFAULT,
                   "also boot each compared baseline a second time as BASELINE~aa: the "
                   "A/A pair that calibrates every verdict of its pairs"),
    # Pin the vCPU threads of each boot of 2 vCPUs or more, one per host
    # core (guest/vcpu.py boot_cores; 1-vCPU boots stay unpinned;
    # local boots only, not --hosts; the default by measurement:
    # docs/measurements.md, "Pinning vCPU threads").
    "pin": Key(bool, None, "true or false", DEFAULT,
               "pin the vCPU threads of each boot of 2 vCPUs or more, one per host core "
               "(local boots only)"),
    # guest/meter/README.md: the host's speed beside each wall-clock boot.
    "meter": Key(bool, None, "true or false", DEFAULT,
                 "run the host speed meter beside each wall-clock boot (guest/meter/README.md; "
                 "the metric host_meter_ns)"),
    "arches": Key(list, None, "a non-empty list of distinct architectures from "
                  + ", ".join(variantmod.ARCHES), DEFAULT,
                  "the guest architectures: every variant runs on each, pairs are compared "
                  "within an arch", kind="array of strings"),
    "kernels": Key(list, None, "a non-empty list of distinct kernel versions from "
                   + ", ".join(variantmod.KERNELS), DEFAULT,
                   "the kernel versions (kernel-patches/kernels.toml): every variant runs "
                   "on each, pairs are compared within a version", kind="array of strings"),
    "cpus": Key(list, None, "a non-empty list of distinct integers 1..16", REQUIRED,
                "the vCPU counts: one boot per variant, vCPU count and repetition",
                kind="array of integers"),
    "repetitions": Key(object, None, "an integer 1..100, or a table { min = 6, max = 30 } "
                       "with min < max <= 100 and optional looks = 2..8 (default 3)", REQUIRED,
                       "boots per variant and vCPU count; a table stops at the first look "
                       "where every primary cell has a verdict", kind="integer or table"),
    # balanced: every variant in every position of a repetition equally
    # often (a cyclic Latin square and its mirror); alternate: the list
    # order, reversed on even repetitions; random: shuffled (seed)
    "order": Key(str, lambda v: v in ORDERS, "'balanced', 'alternate' or 'random'", DEFAULT,
                 "the variants' order in a repetition: a Latin square, the list reversed "
                 "every other repetition, or shuffled"),
    "seed": Key(int, lambda v: 0 <= v < 2**32, "an integer 0..2^32-1", DEFAULT,
                "the seed of order = 'random'"),
    "mem_mb": Key(int, lambda v: 128 <= v <= 2048, "an integer 128..2048", DEFAULT,
                  "guest memory, MiB"),
    "margin": Key(float, lambda v: 0 < v < 1, "a number between 0 and 1 (0.05 = 5%)", DEFAULT,
                  "the smallest change that counts as harm or benefit"),
    # None: per regime, what the default campaign uses (analysis/primary.py)
    "primary_metric": Key(str, lambda v: v in PRIMARY_CHOICES, "one of " + ", ".join(PRIMARY_CHOICES), None,
                          "the metric each verdict is on", shown="per regime (analysis/primary.py)"),
    "primary_points": Key(list, None, "a non-empty list of distinct point ids of the campaign",
                          None, "the points whose verdicts answer the campaign",
                          kind="array of strings", shown="every point"),
    # The lock under test (kernel-patches/targets/NAME.toml): its
    # lock_stat class (resolved into lock_class: the cross-check, the
    # lock_stat table and the plots follow it) and the workloads that
    # drive it.
    "target": Key(str, targetmod.NAME_RE.fullmatch, "a target of kernel-patches/targets/ ("
                  + ", ".join(targetmod.names()) + ")", DEFAULT,
                  "the lock under test: its lock_stat class and the workloads that drive it"),
    "perf": Key(dict, None, "a table with keys stat, lock", DEFAULT,
                "perf around each point (perf.stat, perf.lock below)"),
    # What a guest's clock is: the host's wall clock, or QEMU's instruction
    # count (-icount shift=0,sleep=off: 1 guest ns = 1 instruction, single-
    # threaded TCG), for the whole campaign or per vCPU count.
    "clock": Key(object, None, "'wall' or 'icount', or a table of the campaign's vCPU "
                 "counts { 1 = \"icount\", 2 = \"wall\" }", DEFAULT,
                 "the guest's clock: the host's wall clock, or QEMU's instruction count "
                 "(1 vCPU only, needs control = true; docs/icount.md)",
                 kind="string or table"),
    # Boots a side of each icount cell: they agree to parts per million,
    # so a few measure the spread the verdict is judged on.
    "icount_repetitions": Key(int, lambda v: 2 <= v <= 100, "an integer 2..100", DEFAULT,
                              "boots a side of each icount cell (at most repetitions)"),
    # Some variants at some vCPU counts only: the default campaign boots
    # the lockdep-free twins (before-plain, after-plain) at 1 vCPU, under
    # icount, where the production kernel's cost is counted exactly.
    "variant_cpus": Key(dict, None, "a table { VARIANT = [vCPU counts] } of the campaign's "
                        "variants, each a non-empty list of its vCPU counts", None,
                        "the vCPU counts a variant (and its A/A control) boots at",
                        kind="table", shown="every vCPU count for every variant"),
    # The runner's silence limit (guest/run_guest.py --silence): a kernel
    # that may hang is lost sooner.
    # Checked and turned into seconds by parse_duration (./run.sh campaign
    # --budget overrides it).
    "budget": Key(str, lambda v: parse_duration(v) is not None,
                  "a duration such as 30m, 1h30m or 900s (at most a week)", None,
                  "spend at most this long running boots: the campaign stops at the last "
                  "look whose repetitions fit (its boots' measured times say how long the "
                  "next look would take)", shown="none"),
    "silence_s": Key(int, lambda v: 10 <= v <= 3600, "an integer 10..3600 (seconds)", None,
                     "a boot silent this long is lost", shown="60 + twice the longest point"),
    "points": Key(list, None, "a non-empty array of [[points]] tables", REQUIRED,
                  "the workload points every boot runs, in order (keys below)",
                  kind="array of tables"),
}
for _k, _key in TOP.items():
    if _key.default is DEFAULT:
        TOP[_k] = _key._replace(default=defaults.CAMPAIGN[_k])
assert set(defaults.CAMPAIGN) <= set(TOP), "a default of no campaign key"
# perf = { ... }: key: (type, what is allowed, default, meaning).
PERF = {"stat": (bool, "true or false", defaults.PERF["stat"], "perf stat -a around each point"),
        "lock": (bool, "true or false", defaults.PERF["lock"],
                 "also perf lock record -a and its report (doubles a point's overhead)")}

# A point's keys ([[points]]).  Which points take a key: ALL, MODULE
# (mbox_bench.ko, workload = "module") or LOCKLOAD (workload = NAME).
# The module parameters' ranges are guest/job.py's POINT_KEYS (the guest
# checks them again); tests/unit/test_campaign_doc.py holds this table to
# every key there.
ALL, MODULE, LOCKLOAD = "all", "module", "lockload"


class PointKey(NamedTuple):
    takes: str       # ALL, MODULE or LOCKLOAD
    default: object  # filled in when absent (None: not filled in), or REQUIRED
    meaning: str
    allowed: str = ""  # what is allowed; "" for an integer in POINT_KEYS' range
    shown: str = ""    # the default in the reference, when the value does not say it


def _int_range(key):
    lo, hi = jobmod.POINT_KEYS[key]
    return f"an integer {lo}..{hi}"


POINT = {
    "id": PointKey(ALL, REQUIRED, "the point's name in cells, tables and plots",
                   "a string of [A-Za-z0-9_-], at most 32, not starting with - or _"),
    "workload": PointKey(ALL, "module", "what runs the point: the benchmark module, or a "
                         "guest/inside/lockload test case (guest/JOB.md); one kind in a campaign; "
                         "a generic case names its target, as \"read /proc/iomem\"",
                         "one of " + ", ".join(jobmod.WORKLOADS) + ", or "
                         + workloads.GENERIC_SPELLING),
    "primary_metric": PointKey(ALL, None, "the metric this point's verdicts are on",
                               TOP["primary_metric"].allowed, shown="the campaign's"),
    "read_pct": PointKey(MODULE, REQUIRED, "percent of ops that are lookups; the rest "
                         "register + unregister a mailbox"),
    "mailboxes": PointKey(MODULE, REQUIRED, "mailboxes registered before the run "
                          "(the list a lookup walks)"),
    "miss_pct": PointKey(MODULE, 0, "percent of lookups for a name never registered "
                         "(a full list walk)"),
    "duration_ms": PointKey(ALL, 1000, "the length of the point's run, ms (guest time)"),
    "seed": PointKey(ALL, 1, "the seed of each thread's choices"),
    "timing": PointKey(ALL, 8, "time one op in N per thread (1: every op; 0: only count)"),
    "think_ns": PointKey(MODULE, 0, "ns each thread spins outside the lock after each op "
                         "(0: back to back)"),
    "writer_hz": PointKey(LOCKLOAD, None, "the fs_writer module's register + unregister "
                          "pairs a second during the run", shown="0 (no writer)"),
    "locks_per_op": PointKey(LOCKLOAD, None, "a generic workload's acquisitions of the "
                             "target's lock an op (lockload --locks-per-op): the target's "
                             "locks_per_op, filled in; a point may not say another",
                             shown="the target's"),
}
for _k, _p in POINT.items():
    if not _p.allowed:
        POINT[_k] = _p._replace(allowed=_int_range(_k))
POINT_DEFAULTS = {k: p.default for k, p in POINT.items()
                  if k in jobmod.POINT_KEYS and p.default not in (None, REQUIRED)}


def point_keys(workload):
    """The keys a point of WORKLOAD ("module" or a lockload test case) takes."""
    kind = MODULE if workload == "module" else LOCKLOAD
    return [k for k, p in POINT.items() if p.takes in (ALL, kind)]


def allowed_keys(keys):
    """An unknown-key message's tail: every allowed key and where they are
    described."""
    return f"(allowed: {', '.join(keys)}): see {DOC}"


CONTROL_SUFFIX = "~aa"
ORDERS = ("balanced", "alternate", "random")
# A point's keys that are the campaign's, not the guest's job.
POINT_OWN = ("primary_metric",)


def booted_variant(campaign, variant):
    """The variant a boot of `variant` boots: a control boots its
    baseline's kernel."""
    return (campaign.get("controls") or {}).get(variant, variant)


class CampaignError(CliError):
    pass


def read_capped(path, limit=MAX_FILE_BYTES, root=None):
    """The bytes of PATH, a regular file of at most LIMIT bytes; an OSError
    (safeio.Unsafe, its strerror the reason) otherwise: a FIFO would block,
    /dev/zero would never end.  With ROOT (a run directory) PATH is
    read under it through no link at all (lockbench/safeio.py); without, it is
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
            raise CampaignError(f"{path}: repetitions.{key}: unknown key "
                                f"{allowed_keys(('min', 'max', 'looks'))}")
    lo, hi, k = val.get("min"), val.get("max"), val.get("looks", DEFAULT_LOOKS)
    if not (_type_ok(lo, int) and _type_ok(hi, int) and 1 <= lo < hi <= 100):
        raise CampaignError(f"{path}: repetitions: min and max must be integers with "
                            f"1 <= min < max <= 100, not {lo!r} and {hi!r}")
    if not _type_ok(k, int) or not 2 <= k <= 8:
        raise CampaignError(f"{path}: repetitions.looks: must be an integer 2..8, not {k!r}")
    out["repetitions"] = hi
    out["looks"] = look_schedule(lo, hi, k)


def _platforms(path, out):
    """Check arches and kernels and expand variants, baseline and compare
    to the variants of every arch and kernel (in place), kernel by
    kernel, arch by arch within each.  Return {variant: the locks its
    series converts} (the variant file's converts, the same on every arch
    and kernel)."""
    known = {"arches": variantmod.ARCHES, "kernels": variantmod.KERNELS}
    for key, allowed in known.items():
        vals = out[key]
        if (not vals or not all(isinstance(a, str) and a in allowed for a in vals)
                or len(set(vals)) != len(vals)):
            raise CampaignError(f"{path}: {key}: must be {TOP[key][2]}, not {vals!r}")
    where = [(a, k) for k in out["kernels"] for a in out["arches"]]
    converts = {}
    for a, k in where:
        for v in out["variants"]:
            try:
                loaded = variantmod.load(variantmod.join_name(v, a, k))
            except variantmod.VariantError as e:
                raise CampaignError(f"{path}: variants: {e}") from None
            converts.setdefault(v, loaded["converts"])
    lab = variantmod.join_name
    # control = true: each compared pair's baseline, on each arch and
    # kernel, boots a second time as the pseudo-variant BASELINE~aa (the
    # same kernel; no build), the A/A pair that calibrates every vCPU
    # count and point (analysis/README.md): a campaign of two pairs
    # (before/after, before-rt/after-rt) calibrates each on its own.
    # A campaign of the baseline alone (a calibration run) has no pair:
    # its control is the baseline's.
    bases = list(dict.fromkeys(b for b, _v in out["compare"])) or [out["baseline"]]
    out["controls"] = ({lab(b, a, k) + CONTROL_SUFFIX: lab(b, a, k)
                        for a, k in where for b in bases} if out["control"] else {})
    out["variants"] = ([lab(v, a, k) for a, k in where for v in out["variants"]]
                       + list(out["controls"]))
    out["baseline"] = lab(out["baseline"], *where[0])
    out["compare"] = [[lab(b, a, k), lab(v, a, k)] for a, k in where for b, v in out["compare"]]
    return converts


def drivers():
    """{lock: (target name, [workloads])} of every target of
    kernel-patches/targets/: the workloads that drive each lock ("module":
    mbox_bench.ko drives mboxes_lock)."""
    out = {}
    for name in targetmod.names():
        try:
            t = targetmod.load(name)
        except targetmod.TargetError as e:
            raise CampaignError(f"target {name}: {e}") from None
        have = out.setdefault(t["lock"], (name, []))
        have[1].extend(w for w in t["workloads"] if w not in have[1])
    return out


def _converted_locks(path, where, pairs, converts, points):
    """Refuse a compared pair whose variants differ in a converted lock
    (their converts: scripts/variant.py) that none of the points drives:
    the ratio would measure two kernels alike in every lock the points
    take.  A point drives the lock of every target whose workloads list
    its workload (a module point: mboxes_lock)."""
    used = sorted({p.get("workload", "module") for p in points})
    by_lock = drivers()
    driven = {lock for lock, (_t, ws) in by_lock.items() if set(ws) & set(used)}
    for a, b in pairs:
        differ = sorted(set(converts[a]) ^ set(converts[b]))
        for lock in differ:
            if lock in driven:
                continue
            if lock in by_lock:
                name, ws = by_lock[lock]
                how = (f"the workloads that drive it: {', '.join(ws)} "
                       f"(kernel-patches/targets/{name}.toml)")
            else:
                how = (f"no workload ships for {lock} (no kernel-patches/targets/ file "
                       f"names it): add a target, see docs/targets.md")
            raise CampaignError(
                f"{path}: {where}: compared variants {a} and {b} differ in the converted lock {lock}, which "
                f"none of the campaign's points drives (their workloads: "
                f"{', '.join(used)}); {how}")


def parse_duration(text):
    """Seconds of a duration such as 30m, 1h30m or 900s; None when it is
    not one (or is 0, or more than MAX_BUDGET_S)."""
    m = DURATION_RE.fullmatch(text) if isinstance(text, str) else None
    if not m or not any(m.groups()):
        return None
    h, mi, s = (int(x or 0) for x in m.groups())
    secs = 3600 * h + 60 * mi + s
    return secs if 0 < secs <= MAX_BUDGET_S else None


def _bad(path, key, allowed):
    raise CampaignError(f"{path}: {key}: must be {allowed}")


def _read(path, root):
    """(the file's bytes, its TOML), or one line why not."""
    try:
        raw = read_capped(path, root=root)
        return raw, tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise CampaignError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise CampaignError(f"{path}: not valid TOML: {e}") from None
    except ValueError as e:  # an integer of more than 4300 digits
        raise CampaignError(f"{path}: not valid TOML: {str(e).split(':')[0]}") from None
    except RecursionError:
        raise CampaignError(f"{path}: not valid TOML: nested too deeply") from None


def _top_keys(path, data):
    """Every key of TOP, of its type and range, or its default."""
    out = {}
    for key in data:
        if key not in TOP:
            raise CampaignError(f"{path}: unknown key {key!r} {allowed_keys(TOP)}")
    for key, (typ, check, allowed, default, *_doc) in TOP.items():
        if key not in data:
            if default is REQUIRED:
                raise CampaignError(f"{path}: {key}: missing; must be {allowed}")
            out[key] = copy.deepcopy(default)
            continue
        val = data[key]
        if not _type_ok(val, typ) or (check and not check(val)):
            _bad(path, key, allowed)
        out[key] = float(val) if typ is float else val
    return out


def _variants(path, out):
    """The variants known and distinct; the baseline one of them."""
    variants = out["variants"]
    known = variantmod.variant_names()
    if not variants:
        _bad(path, "variants", TOP["variants"][2])
    for v in variants:
        if not isinstance(v, str) or v not in known:
            raise CampaignError(f"{path}: variants: unknown variant {v!r} (known: "
                                f"{', '.join(known)}; {variantmod.ADD_FOLDER})")
    if len(set(variants)) != len(variants):
        raise CampaignError(f"{path}: variants: duplicate variant in {variants}")
    if out["baseline"] is None:
        out["baseline"] = variants[0]
    elif out["baseline"] not in variants:
        _bad(path, "baseline", f"one of the campaign's variants ({', '.join(variants)})")


def _perf(path, given):
    """perf = { ... } with every key of PERF."""
    perf = {}
    for key in given:
        if key not in PERF:
            raise CampaignError(f"{path}: perf.{key}: unknown key {allowed_keys(PERF)}")
    for key, (typ, allowed, default, _meaning) in PERF.items():
        val = given.get(key, default)
        if not isinstance(val, typ):
            _bad(path, f"perf.{key}", allowed)
        perf[key] = val
    return perf


def _point_params(path, where, pt, workload):
    """A point's keys but id, each one its workload takes and in range,
    and the defaults of those it leaves out."""
    takes = point_keys(workload)
    params = {}
    for key, val in pt.items():
        if key == "id":
            continue
        if key not in POINT:
            raise CampaignError(f"{path}: {where}: unknown key {key!r} "
                                f"{allowed_keys(POINT)}")
        if key not in takes:
            why = ("a module parameter; a workload point" if workload != "module" else
                   "a lockload parameter (workload = ...); a module point")
            raise CampaignError(f"{path}: {where}: {key!r} is {why} takes only "
                                f"{', '.join(takes)}: see {DOC}")
        if key == "primary_metric":
            if not isinstance(val, str) or val not in PRIMARY_CHOICES:
                _bad(path, f"{where}.primary_metric", POINT[key].allowed)
            params[key] = val
            continue
        if key == "workload":
            if workload != "module":
                params[key] = workload
            continue
        lo, hi = jobmod.POINT_KEYS[key]
        if not _type_ok(val, int) or not lo <= val <= hi:
            _bad(path, f"{where}.{key}", POINT[key].allowed)
        params[key] = val
    for key in takes:
        default = POINT[key].default
        if key in params or key == "id" or default is None:
            continue
        if default is REQUIRED:
            raise CampaignError(f"{path}: {where}.{key}: missing; must be "
                                f"{POINT[key].allowed}")
        if key in jobmod.POINT_KEYS:
            params[key] = default
    return params


def _points(path, given):
    """The [[points]], each {"id": ..., its parameters}, and their ids."""
    if not given:
        _bad(path, "points", TOP["points"][2])
    points, ids = [], set()
    for i, pt in enumerate(given, 1):
        where = f"points[{i}]"
        if not isinstance(pt, dict):
            _bad(path, where, "a table")
        pid = pt.get("id")
        if not isinstance(pid, str) or not jobmod.ID_RE.match(pid):
            _bad(path, f"{where}.id", POINT["id"].allowed)
        if pid in ids:
            raise CampaignError(f"{path}: {where}.id: duplicate point id {pid!r}")
        ids.add(pid)
        # workload = "NAME": a guest/inside/lockload point (guest/JOB.md); it
        # takes the keys of POINT marked ALL or LOCKLOAD.
        workload = pt.get("workload", "module")
        try:
            workload = jobmod.workload_token(workload)
        except jobmod.JobError:
            _bad(path, f"{where}.workload", POINT["workload"].allowed)
        params = _point_params(path, where, pt, workload)
        try:
            jobmod.check_point(pid, {k: v for k, v in params.items() if k not in POINT_OWN})
        except jobmod.JobError as e:
            raise CampaignError(f"{path}: {where}: {e}") from None
        points.append({"id": pid, **params})
    if len({"workload" in p for p in points}) > 1:
        raise CampaignError(f"{path}: points: all module points or all workload points "
                            "(guest/JOB.md), not both")
    return points, ids


def _target(path, name, points):
    """The target NAME (kernel-patches/targets/), which every point's
    workload must drive; a generic workload's point gets its
    locks_per_op."""
    try:
        target = targetmod.load(name)
    except targetmod.TargetError as e:
        raise CampaignError(f"{path}: target: {e}") from None
    for i, p in enumerate(points, 1):
        w = p.get("workload", "module")
        if w not in target["workloads"]:
            raise CampaignError(f"{path}: points[{i}].workload: "
                                f"{workloads.workload_spelled(w)!r} does not drive target "
                                f"{target['name']} (its workloads: "
                                f"{', '.join(map(workloads.workload_spelled, target['workloads']))})")
        if jobmod.is_generic(w):
            # A generic workload counts the target's K an op.
            k = target["locks_per_op"][w]
            if p.get("locks_per_op", k) != k:
                raise CampaignError(f"{path}: points[{i}].locks_per_op: {p['locks_per_op']}, "
                                    f"but target {target['name']} says {k} for "
                                    f"{workloads.workload_spelled(w)!r}")
            p["locks_per_op"] = k
    return target


def load(path, root=None):
    """Return the campaign resolved (defaults filled in), or raise; ROOT:
    read_capped's (a run directory's campaign.toml)."""
    return read(path, root)[1]


def read(path, root=None):
    """(the file's bytes, the campaign load() returns), from one read:
    what a new campaign keeps as its campaign.toml is what it runs."""
    raw, data = _read(path, root)
    out = _top_keys(path, data)
    _variants(path, out)
    variants = out["variants"]
    _repetitions(path, out)
    out["compare"] = _compare(path, out["compare"], variants, out["baseline"])
    pairs = out["compare"]
    converts = _platforms(path, out)
    cpus = out["cpus"]
    if (not cpus or len(set(map(str, cpus))) != len(cpus)
            or not all(_type_ok(c, int) and 1 <= c <= 16 for c in cpus)):
        _bad(path, "cpus", TOP["cpus"][2])
    out["perf"] = _perf(path, out["perf"])
    points, ids = _points(path, out["points"])
    target = _target(path, out["target"], points)
    # Without compare, every variant is compared with the baseline.
    _converted_locks(path, "compare" if "compare" in data else "variants", pairs, converts,
                     points)
    out["lock_class"] = target["lock_class"]
    if target.get(targetmod.INTERRUPT):
        # where the kernel takes it from interrupts: the answer says
        # whether a point (its writer) reached that context
        out["lock_interrupt"] = target[targetmod.INTERRUPT]
    out["points"] = points
    prim = out["primary_points"]
    if prim is not None and (not prim or len(set(map(str, prim))) != len(prim)
                             or not all(isinstance(p, str) and p in ids for p in prim)):
        _bad(path, "primary_points", f"{TOP['primary_points'][2]} ({', '.join(sorted(ids))})")
    _clock(path, out)
    _variant_cpus(path, out, variants)
    _primary(path, out)
    out["file"] = os.path.abspath(path)
    out["file_sha256"] = hashlib.sha256(raw).hexdigest()
    return raw, out


def _variant_cpus(path, out, names):
    """variant_cpus = { VARIANT = [1], ... } (variant names of the file):
    resolved to {target: [vCPU counts]} of every variant of those
    variants and of their A/A controls, or {} when absent."""
    val = out["variant_cpus"] or {}
    for name, cpus in val.items():
        if name not in names:
            raise CampaignError(f"{path}: variant_cpus.{name[:40]}: not one of the "
                                f"campaign's variants ({', '.join(names)})")
        if (not isinstance(cpus, list) or not cpus or len(set(map(str, cpus))) != len(cpus)
                or not all(_type_ok(c, int) and c in out["cpus"] for c in cpus)):
            raise CampaignError(f"{path}: variant_cpus.{name}: must be a non-empty list of "
                                f"the campaign's vCPU counts "
                                f"({', '.join(map(str, out['cpus']))}), not {str(cpus)[:40]}")
    out["variant_cpus"] = {
        t: sorted(val[n]) for t in out["variants"]
        for n in [variantmod.split_name(t.split(CONTROL_SUFFIX)[0]).name] if n in val}


def _clock(path, out):
    """clock = "wall" | "icount" | { "1" = "icount", ... }: resolved to a
    table of every vCPU count of the campaign.  icount runs one vCPU (the
    vCPUs of a single-threaded TCG take turns, and QEMU 7.2 crawls or
    livelocks booting them: docs/icount.md), needs the A/A control (its spread is what the
    verdict is judged on) and repetitions for its own boots."""
    val, cpus = out["clock"], out["cpus"]
    allowed = TOP["clock"][2]
    if isinstance(val, str):
        if val not in CLOCKS:
            raise CampaignError(f"{path}: clock: must be {allowed}, not {val[:40]!r}")
        table = {str(c): val for c in cpus}
    elif isinstance(val, dict):
        table = {str(c): WALL for c in cpus}
        for key, clock in val.items():
            if key not in table:
                raise CampaignError(f"{path}: clock.{key[:40]}: not one of the campaign's "
                                    f"vCPU counts ({', '.join(map(str, cpus))})")
            if not isinstance(clock, str) or clock not in CLOCKS:
                raise CampaignError(f"{path}: clock.{key}: must be 'wall' or 'icount', "
                                    f"not {str(clock)[:40]!r}")
            table[key] = clock
    else:
        raise CampaignError(f"{path}: clock: must be {allowed}")
    out["clock"] = table
    icount = sorted(int(c) for c, k in table.items() if k == ICOUNT)
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


def job_text(campaign, only=None):
    """The guest job of one boot: every point of the campaign, or those
    whose ids ONLY lists (in the campaign's order)."""
    pts = [(p["id"], {k: v for k, v in p.items() if k not in ("id",) + POINT_OWN})
           for p in campaign["points"] if only is None or p["id"] in only]
    opts = {"perf_stat": "1" if campaign["perf"]["stat"] else "0",
            "perf_lock": "1" if campaign["perf"]["lock"] else "0"}
    return jobmod.render(pts, opts)


def _cell(text):
    return str(text).replace("|", "\\|")


def _toml(val):
    """A default as the campaign file would say it."""
    if isinstance(val, bool):
        return "true" if val else "false"
    if isinstance(val, str):
        return f'"{val}"'
    if isinstance(val, list):
        return "[" + ", ".join(_toml(v) for v in val) + "]"
    return str(val)


def _default(default, shown):
    if default is REQUIRED:
        return "**required**"
    return shown or f"`{_toml(default)}`"


KINDS = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "table",
         list: "array"}


def reference():
    """docs/campaigns.md: every campaign-file key and every point key, from
    TOP, PERF and POINT (python3 -m scripts.campaign.file --reference)."""
    out = [
        "# Campaign files: every key",
        "",
        "<!-- Generated from scripts/campaign/file.py (TOP, PERF, POINT) by",
        "     /usr/bin/python3 -m scripts.campaign.file --reference > docs/campaigns.md",
        "     Do not edit: tests/unit/test_campaign_doc.py fails when it differs. -->",
        "",
        "A campaign file (`campaigns/*.toml`; run it with `./run.sh campaign FILE`,",
        "check it with `--dry-run`) is TOML: the keys below at the top, then one",
        "`[[points]]` table per workload point.  A key not listed here is refused,",
        "as is a value outside what is allowed: one line naming the file and the key,",
        "exit 2.  Variants are the files of `kernel-patches/variants/`, of a folder",
        "given with `--variants DIR` and of `LOCKBENCH_VARIANT_PATH` (docs/variants.md).",
        "",
        "## Top-level keys",
        "",
        "| key | type | default | allowed | meaning |",
        "|---|---|---|---|---|",
    ]
    for key, k in TOP.items():
        out.append(f"| `{key}` | {k.kind or KINDS[k.typ]} | {_cell(_default(k.default, k.shown))} "
                   f"| {_cell(k.allowed)} | {_cell(k.meaning)} |")
    out += ["", "### `perf = { ... }`", "",
            "| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for key, (typ, allowed, default, meaning) in PERF.items():
        out.append(f"| `perf.{key}` | {KINDS[typ]} | {_default(default, '')} | {_cell(allowed)} "
                   f"| {_cell(meaning)} |")
    out += ["", "## Point keys: `[[points]]`", "",
            "A point is a module point (`workload` absent or `\"module\"`: the benchmark",
            "module, bench-module/README.md) or a lockload point (`workload = NAME`:",
            "guest/inside/lockload, guest/JOB.md); a campaign's points are all of one kind.",
            "\"takes\" says which points take the key; a key a point does not take is",
            "refused.  Required: "
            + "; ".join(f"{', '.join(f'`{k}`' for k in keys)} in {who}"
                        for who, keys in required_point_keys().items()) + ".",
            "",
            "| key | takes | type | default | allowed | meaning |",
            "|---|---|---|---|---|---|"]
    takes = {ALL: "all", MODULE: "module", LOCKLOAD: "lockload"}
    for key, p in POINT.items():
        typ = "string" if key in ("id", "workload", "primary_metric") else "integer"
        out.append(f"| `{key}` | {takes[p.takes]} | {typ} | {_cell(_default(p.default, p.shown))} "
                   f"| {_cell(p.allowed)} | {_cell(p.meaning)} |")
    boot, point, _stretch = defaults.BOOT_TIMES[WALL]
    out += ["", "## How long: `--dry-run`", "",
            "`./run.sh campaign FILE --dry-run` ends with about how long the boots take:",
            "a boot takes its start-up plus, for each point, its `duration_ms` and what the point",
            "costs beyond it; boots run `--jobs` side by side.  The boot time and a point's",
            "cost are the median of the boots of earlier campaigns in `results/` (their",
            "`manifest.json`), per clock and arch; without any, the defaults of",
            f"scripts/campaign/estimate.py: a boot {boot:g} s, a point {point:g} s beyond its",
            f"run, and under icount {defaults.BOOT_TIMES[ICOUNT][2]:g} host seconds "
            "a guest second.",
            "", "## Example", "", "```toml",
            'name = "example"',
            'variants = ["before", "after"]',
            "cpus = [1, 2]",
            "repetitions = { min = 6, max = 30 }",
            "control = true",
            "",
            "[[points]]",
            'id = "read95"',
            "read_pct = 95",
            "mailboxes = 16",
            "```", ""]
    return "\n".join(out)


def required_point_keys():
    """{"every point": [...], "a module point": [...], ...}: the keys a point
    must have."""
    out = {}
    for who, kind in (("every point", ALL), ("a module point", MODULE),
                      ("a lockload point", LOCKLOAD)):
        keys = [k for k, p in POINT.items() if p.takes == kind and p.default is REQUIRED]
        if keys:
            out[who] = keys
    return out


def main(argv):
    p = OneLineParser(prog="python3 -m scripts.campaign.file",
                      hint="python3 -m scripts.campaign.file --help",
                      description="Check a campaign file, or print the reference of its keys.")
    p.add_argument("file", nargs="?", help="a campaign file to check")
    p.add_argument("--reference", action="store_true",
                   help=f"print the reference of every key ({DOC})")

    def body(args):
        if args.reference == bool(args.file):
            raise CampaignError("give a campaign FILE or --reference (one of them)")
        if args.reference:
            sys.stdout.write(reference())
            return 0
        c = load(args.file)
        print(f"campaign_file: {args.file}: ok: {c['name']}, {len(c['variants'])} variants, "
              f"{len(c['points'])} points")
        return 0
    return run_cli("campaign_file", p, argv, body)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
