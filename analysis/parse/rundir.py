# SPDX-License-Identifier: GPL-2.0
"""The run directory written by `run.sh campaign`: manifest.json and the
per-boot raw files. Loading only; no analysis here.

    DIR/manifest.json
    DIR/cells/<boot id>/points/<point id>/results.txt, lock_stat.txt,
                                          perf-stat.csv, perf-lock.txt (opt.)

(`cells/` and the manifest's "cells": the boots, under the format's
names, which every run directory written so far has.)
"""

import math
import os
from dataclasses import dataclass

from analysis import primary as primarymod
from analysis.parse.common import MAX_FILE_BYTES, ParseError, read_text
from lockbench import safeio
from lockbench import defaults
from lockbench.defaults import CLOCKS, WALL

MANIFEST_FORMATS = (defaults.MANIFEST_FORMAT,)
POINT_FILES = ("results.txt", "lock_stat.txt", "perf-stat.csv")
OPTIONAL_POINT_FILES = ("perf-lock.txt",)


@dataclass(frozen=True)
class Point:
    id: str
    read_pct: object
    mailboxes: object
    miss_pct: object
    duration_ms: object
    think_ns: int = 0  # the module's pause between ops (0: a tight loop)
    workload: object = None  # a lockload point's workload (guest/JOB.md)
    primary_metric: object = None  # the point's own, as the campaign named it


def _unset(v):
    return v is None or v == "" or (isinstance(v, float) and math.isnan(v))


def _whole(v):
    try:
        return str(int(v))
    except (TypeError, ValueError, OverflowError):
        return str(v)


def point_label(pid, read_pct=None, mailboxes=None, miss_pct=None,
                long=False):
    """The one label of a workload point: 'p1 (read 95%, 8 mbox, miss
    10%)', or with long=True (plot titles) 'p1: 95% reads, 8 mailboxes,
    10% misses'; parameters that are None, '' or NaN are left out, and
    the id alone is the label when none is set."""
    words = (("{}% reads", "{} mailboxes", "{}% misses") if long else
             ("read {}%", "{} mbox", "miss {}%"))
    bits = [w.format(_whole(v)) for w, v in
            zip(words, (read_pct, mailboxes, miss_pct)) if not _unset(v)]
    if not bits:
        return str(pid)
    return (f"{pid}: {', '.join(bits)}" if long else
            f"{pid} ({', '.join(bits)})")


@dataclass(frozen=True)
class Boot:
    id: str
    variant: str
    cpus: int
    rep: int
    state: str
    oversubscribed: bool
    arch: str
    pos: int = 0  # its place in its repetition's order (1 = first; 0: unknown)
    clock: str = WALL  # "wall" or "icount" (analysis/primary.py)
    tries: tuple = ()  # every try that ended: ({"state", "problems"...}, ...)
    pinned: bool = False  # its vCPU threads pinned one a host core
    host: str = ""  # the --hosts host it ran on ("": this host)
    # the --hosts host's (CPU model, cores) as its runner read them there;
    # () for a boot of this host (RunDir.host) or a host that said nothing
    host_cpu: tuple = ()
    # the points it ran, where a look left it only the undecided ones
    # (scripts/campaign/run.py, "open points"); () for every point
    points: tuple = ()


def host_kind(model, cores):
    """'AMD EPYC, 2 cores': a kind of machine, from its CPU model and core
    count as recorded; "" when the model is not."""
    if not isinstance(model, str) or not model.strip():
        return ""
    model = " ".join(model.split())[:200]
    return f"{model}, {cores} cores" if type(cores) is int else model


def _host_cpu(c):
    """A --hosts boot's host_cpu (scripts/campaign/hosts.py) as a (model,
    cores) tuple; () when it has none or it is not one."""
    info = c.get("host_cpu")
    if not isinstance(info, dict) or not isinstance(info.get("cpu_model"), str):
        return ()
    cores = info.get("cores")
    return (info["cpu_model"], cores if type(cores) is int else None)


@dataclass
class RunDir:
    path: str
    manifest: dict
    campaign: dict
    host: dict
    builds: dict
    points: list  # of Point, manifest order
    boots: list  # of Boot, manifest order (its "cells")
    variants: list  # manifest order

    @property
    def name(self):
        return self.campaign.get("name", os.path.basename(self.path))

    @property
    def baseline(self):
        return self.campaign.get("baseline") or (self.variants[0]
                                                 if self.variants else "")

    @property
    def margin(self):
        m = defaults.campaign_value(self.campaign, "margin")
        return float(m) if isinstance(m, (int, float)) and 0 < m < 1 \
            else defaults.MARGIN

    @property
    def primary_metric(self):
        """The campaign's answer's metric (analysis/primary.py
        campaign_metric)."""
        return primarymod.campaign_metric(self.campaign, self.cpus_list,
                                          self.primary_points)

    @property
    def primary_default(self):
        """True when the campaign named no primary metric at all
        (analysis/primary.py named_nothing)."""
        return primarymod.named_nothing(self.campaign)

    @property
    def cpus_list(self):
        got = self.campaign.get("cpus")
        if isinstance(got, list) and all(isinstance(c, int) for c in got):
            return got
        return sorted({b.cpus for b in self.boots})

    def clock(self, cpus):
        """"wall" or "icount": how the boots of `cpus` vCPUs kept time."""
        return primarymod.clock_of(self.campaign, int(cpus))

    def primary_for(self, cpus, pid):
        """(metric, "named" | "default") that answers point pid at `cpus`
        vCPUs (analysis/primary.py metric_at)."""
        return primarymod.metric_at(self.campaign, cpus, pid)

    @property
    def primary_points(self):
        """The point ids whose primary verdicts are the answer (every point
        when the campaign names none)."""
        pts = self.campaign.get("primary_points")
        if isinstance(pts, list) and pts:
            return [str(p) for p in pts]
        return [p.id for p in self.points]

    @property
    def looks(self):
        """The repetition counts at which the campaign could stop
        (`repetitions = { min, max }`); one for a fixed count."""
        looks = self.campaign.get("looks")
        if isinstance(looks, list) and looks and all(
                isinstance(k, int) for k in looks):
            return looks
        return [self.campaign.get("repetitions")]

    @property
    def confidence(self):
        """The level the run's primary verdicts are judged and printed at:
        the default, per look (defaults.look_confidence)."""
        return defaults.look_confidence(len(self.looks))

    @property
    def stopped(self):
        """The manifest's record of the looks taken: {"looks": [{"reps",
        "undecided"}...], "stopped_at": reps or None}; {} for a fixed
        count."""
        seq = self.manifest.get("sequential")
        return seq if isinstance(seq, dict) else {}

    @property
    def controls(self):
        """[(baseline, control), ...]: the A/A pairs of a campaign with
        `control = true` (the control boots its baseline's kernel)."""
        ctl = self.campaign.get("controls")
        if not isinstance(ctl, dict):
            return []
        return [(str(b), str(c)) for c, b in ctl.items()]

    @property
    def lock_class(self):
        # Campaigns before lock_class was a key measured the default.
        return str(self.campaign.get("lock_class", defaults.TARGET))

    @property
    def accel(self):
        """How QEMU ran the guests (manifest host.accel, lower case as
        recorded: "tcg", "kvm"); "tcg" for a manifest without it."""
        return str(self.host.get("accel", "tcg"))

    @property
    def host_cores(self):
        """The host's core count (manifest host.cores); None when not
        recorded."""
        return self.host.get("cores")

    def boot_host(self, boot):
        """(CPU model, cores) of the machine a boot ran on: a --hosts
        boot's, as read there, else this campaign's host's; None where
        not recorded."""
        if boot.host:
            return boot.host_cpu or (None, None)
        return self.host.get("cpu_model"), self.host.get("cores")

    def host_kinds(self, cpus):
        """{kind of machine: {variant: done boots}} of the done boots of
        CPUS vCPUs ('AMD EPYC, 2 cores', 'unrecorded'): more than one kind,
        and the ratio at that vCPU count is taken across machine kinds."""
        out = {}
        for b in self.boots:
            if b.cpus == int(cpus) and b.state == "done":
                k = host_kind(*self.boot_host(b)) or "unrecorded"
                out.setdefault(k, {})
                out[k][b.variant] = out[k].get(b.variant, 0) + 1
        return out

    def arch(self, variant):
        """The guest architecture of a variant's boots: its boots' arch
        (build-meta.json's first, see _arch), else its build's; "unknown"
        when neither is recorded."""
        arch = next((b.arch for b in self.boots if b.variant == variant),
                    None)
        return str(arch or (self.builds.get(variant) or {}).get("arch")
                   or "unknown")

    def kernel(self, variant):
        """The kernel version of a variant's boots, "6.12": build-meta.json's
        kernel, else the first two numbers of its kernel_version (a build
        from before kernels were a dimension); the A/A control's is its
        baseline's kernel's; "" when not recorded."""
        meta = (self.builds.get(variant) or self.builds.get(variant.split("~")[0])
                or {})
        k = meta.get("kernel") or ".".join(str(meta.get("kernel_version") or "")
                                           .split(".")[:2])
        return str(k or "")

    def point_label(self, pid, long=False):
        """point_label() of the campaign point with id pid."""
        p = next((p for p in self.points if p.id == pid), None)
        if p is None:
            return str(pid)
        return point_label(pid, p.read_pct, p.mailboxes, p.miss_pct, long)

    @property
    def comparisons(self):
        """[(baseline, variant), ...]: the campaign's `compare` pairs, else
        every other variant against the baseline."""
        pairs = self.campaign.get("compare")
        if isinstance(pairs, list) and pairs:
            return [(str(b), str(v)) for b, v in pairs]
        ctl = {c for _b, c in self.controls}
        return [(self.baseline, v) for v in self.variants
                if v != self.baseline and v not in ctl]

    def steal_refusal(self, variant, cpus):
        """Why the host's steal cannot be divided out of the done boots of
        variant at `cpus` vCPUs (throughput_run), or None: only a vCPU
        thread that owns its host core waits on that core's run queue
        alone, and only this host's steal is measured the same way for
        both sides."""
        boots = [b for b in self.boots if b.variant == variant
                 and b.cpus == int(cpus) and b.state == "done"]
        if not boots:
            return None
        if any(b.oversubscribed for b in boots):
            return "oversubscribed boots"
        if any(b.host for b in boots):
            return "boots run on --hosts"
        if not all(b.pinned for b in boots):
            return "unpinned boots"
        return None

    def has_lock_stat(self, variant):
        """False when the variant's kernel was built without
        CONFIG_LOCK_STAT (build-meta.json "lock_stat"; builds from before
        that key had it)."""
        return (self.builds.get(variant) or {}).get("lock_stat", True) \
            is not False

    def lookup_lock(self, variant):
        """What omap_mbox_get() takes on the variant's kernel: "lock" (the
        class lock, read side of an rwlock) or "none" (e.g. RCU lookups),
        from the variant file through build-meta.json."""
        return str((self.builds.get(variant) or {}).get("lookup_lock",
                                                         "lock"))

    def same_patches(self, a, b):
        """True when two variants' kernels apply the same patches (by
        SHA-256), so that they differ only in their configs."""
        pa = (self.builds.get(a) or {}).get("patches")
        pb = (self.builds.get(b) or {}).get("patches")
        if not isinstance(pa, list) or not isinstance(pb, list):
            return False
        return [p.get("sha256") for p in pa] == [p.get("sha256") for p in pb]

    def observer_pairs(self):
        """[((base, var), (base_plain, var_plain)), ...]: each comparison
        measured with lock_stat that has a twin without it (the same
        patches on both sides, both kernels of the twin without
        CONFIG_LOCK_STAT): the observer effect of lock statistics."""
        pairs = self.comparisons
        out = []
        for b, v in pairs:
            if not (self.has_lock_stat(b) and self.has_lock_stat(v)):
                continue
            for b2, v2 in pairs:
                if (not self.has_lock_stat(b2) and not self.has_lock_stat(v2)
                        and self.same_patches(b, b2)
                        and self.same_patches(v, v2)):
                    out.append(((b, v), (b2, v2)))
                    break
        return out

    @staticmethod
    def point_rel(boot, point):
        """A boot's point folder, relative to the run directory (read
        under it, no link followed: analysis/tidy/tables.py); cells/: the
        boots' folder, under the format's name.  The ids as the manifest
        has them, not normalized: "a/../b" must be refused, not read
        through whatever "a" is."""
        return os.path.join("cells", boot.id, "points", point.id)

    def raw_files(self):
        """Every raw file (for staleness checks of DIR/tidy)."""
        out = [os.path.join(self.path, "manifest.json")]
        top = os.path.join(self.path, "cells")
        for root, _dirs, files in os.walk(top):
            out.extend(os.path.join(root, f) for f in files)
        return out


def _int_or_zero(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _boot_points(mpath, c, points, where):
    """A boot's own points (manifest "points": a subset of the campaign's
    ids, in its order), () for all of them; ParseError otherwise."""
    own = c.get("points")
    if own is None:
        return ()
    ids = [p.id for p in points]
    if not isinstance(own, list) or not own or not all(isinstance(x, str) and x in ids
                                                       for x in own):
        raise ParseError(mpath, None, f"manifest: {where}.points is not a list of the "
                         f"campaign's point ids")
    return tuple(x for x in ids if x in own)

def _need(path, obj, key, kind, where):
    if not isinstance(obj, dict) or key not in obj:
        raise ParseError(path, None, f"manifest: {where} lacks {key!r}")
    val = obj[key]
    if kind is int and (isinstance(val, bool) or not isinstance(val, int)):
        raise ParseError(path, None, f"manifest: {where}.{key} is not an "
                         f"integer")
    if kind is str and not isinstance(val, str):
        raise ParseError(path, None, f"manifest: {where}.{key} is not a "
                         f"string")
    if kind is list and not isinstance(val, list):
        raise ParseError(path, None, f"manifest: {where}.{key} is not a list")
    return val


def _arch(builds, campaign, path, cid, variant):
    arch = (builds.get(variant) or {}).get("arch")
    if not arch:
        # under the run directory, no link followed (safeio root=): the
        # boot id is the manifest's, which may say anything
        meta = os.path.join("cells", cid, "meta.json")
        try:
            got = safeio.read_json(meta, MAX_FILE_BYTES, root=path)
            arch = got.get("arch") if isinstance(got, dict) else None
        except safeio.Unsafe:
            arch = None
    return arch or campaign.get("arch") or "unknown"


def load_json(path, name):
    """The JSON value of the file name under the run directory path: read
    without following a link (common.read_text, root=), no NaN or
    Infinity, nested at most safeio.MAX_JSON_DEPTH deep (a parser's stack
    is bounded too); ParseError otherwise."""
    full = os.path.join(path, name)
    text = read_text(name, root=path)
    try:
        return safeio.loads_json(text, full)
    except safeio.Unsafe as e:
        # safeio says "not JSON this harness reads: WHY"; this module has
        # always said "invalid JSON: WHY"
        raise ParseError(full, None, "invalid JSON: "
                         + (e.why.partition(": ")[2] or e.why)) from None


def _tries(c):
    """The boot's ended tries as recorded (scripts/campaign/boot.py
    finish_boot), each {"state": str, "problems": [str], "kept": the
    folder its files were kept aside in, or ""}; a manifest from before
    tries were kept: its one state, problems and kept, when it ended."""
    got = c.get("tries")
    if not isinstance(got, list):
        state = str(c.get("state", ""))
        if state in ("", "planned", "running", "unneeded"):
            return ()
        got = [{"state": state, "problems": c.get("problems") or [],
                "kept": c.get("kept")}]
    out = []
    for t in got:
        if not isinstance(t, dict):
            continue
        probs = t.get("problems")
        out.append({"state": str(t.get("state", "")),
                    "problems": [str(p) for p in probs]
                    if isinstance(probs, list) else [],
                    "kept": str(t.get("kept") or "")})
    return tuple(out)


def not_results_dir(path, command="report"):
    """One line when PATH is a directory but not a campaign's run
    directory (no manifest.json): said as that, not as the missing file's
    "No such file or directory"; None otherwise (a missing PATH, or a
    manifest.json that is there, is load()'s to judge).  COMMAND: the
    ./run.sh command the hint of a folder of run directories names
    (report, analyze)."""
    if not os.path.isdir(path) or os.path.lexists(os.path.join(path, "manifest.json")):
        return None
    hint = "./run.sh campaign makes one"
    if os.path.lexists(os.path.join(path, "meta.json")):
        hint += f"; one boot's folder is judged by ./run.sh recheck {path}"
    else:
        runs = results_dirs_in(path)
        if runs:
            hint += f"; the newest in it: ./run.sh {command} {os.path.join(path, runs[0])}"
    return f"{path} is not a run directory (no manifest.json; {hint})"


def results_dirs_in(path):
    """The names of PATH's folders that are run directories (a
    manifest.json in them: say results/ itself was named), newest first."""
    found = []
    try:
        with os.scandir(path) as it:
            for e in it:
                m = os.path.join(e.path, "manifest.json")
                if e.is_dir(follow_symlinks=False) and os.path.isfile(m):
                    found.append((os.lstat(m).st_mtime, e.name))
    except OSError:
        return []
    return [name for _, name in sorted(found, reverse=True)]


def load(path):
    """Load DIR/manifest.json; ParseError if it is missing or malformed."""
    if not os.path.isdir(path):
        raise ParseError(path, None, "not a directory" if os.path.exists(path)
                         else "no such directory")
    mpath = os.path.join(path, "manifest.json")
    manifest = load_json(path, "manifest.json")
    if not isinstance(manifest, dict):
        raise ParseError(mpath, None, "not a JSON object")
    fmt = manifest.get("format")
    if fmt not in MANIFEST_FORMATS:
        raise ParseError(mpath, None, f"unsupported manifest format {fmt!r} "
                         f"(supported: {MANIFEST_FORMATS})")
    campaign = _need(mpath, manifest, "campaign", dict, "manifest")
    if not isinstance(campaign, dict):
        raise ParseError(mpath, None, "manifest: campaign is not an object")
    host = manifest.get("host") or {}
    builds = manifest.get("builds") or {}
    for key, val in (("host", host), ("builds", builds)):
        if not isinstance(val, dict):
            raise ParseError(mpath, None, f"manifest: {key} is not an object")
    if not isinstance(campaign.get("variants", []), list):
        raise ParseError(mpath, None, "manifest: campaign.variants is not a "
                         "list")
    points = []
    for i, p in enumerate(_need(mpath, campaign, "points", list, "campaign")):
        where = f"campaign.points[{i}]"
        points.append(Point(id=str(_need(mpath, p, "id", None, where)),
                            read_pct=p.get("read_pct"),
                            mailboxes=p.get("mailboxes"),
                            miss_pct=p.get("miss_pct"),
                            duration_ms=p.get("duration_ms"),
                            think_ns=_int_or_zero(p.get("think_ns")),
                            workload=p.get("workload"),
                            primary_metric=p.get("primary_metric")))
    if not points:
        raise ParseError(mpath, None, "manifest: campaign.points is empty")
    boots = []
    # manifest "cells": the boots (the format's name)
    for i, c in enumerate(_need(mpath, manifest, "cells", list, "manifest")):
        where = f"cells[{i}]"
        cid = _need(mpath, c, "id", str, where)
        variant = _need(mpath, c, "variant", str, where)
        cpus = _need(mpath, c, "cpus", int, where)
        over = c.get("oversubscribed")
        if over is None:
            cores = host.get("cores")
            over = isinstance(cores, int) and cpus > cores
        clock = c.get("clock", WALL)
        boots.append(Boot(id=cid, variant=variant, cpus=cpus,
                          rep=_need(mpath, c, "rep", int, where),
                          state=str(c.get("state", "")),
                          oversubscribed=bool(over),
                          arch=_arch(builds, campaign, path, cid, variant),
                          pos=_int_or_zero(c.get("pos")),
                          clock=clock if clock in CLOCKS
                          else WALL,
                          tries=_tries(c),
                          pinned=isinstance(c.get("pin"), list)
                          and len(c["pin"]) >= cpus,
                          host=str(c.get("host") or ""),
                          host_cpu=_host_cpu(c) if c.get("host") else (),
                          points=_boot_points(mpath, c, points, where)))
    variants = [str(v) for v in campaign.get("variants") or []]
    for b in boots:
        if b.variant not in variants:
            variants.append(b.variant)
    return RunDir(path=path, manifest=manifest, campaign=campaign, host=host,
                  builds=builds, points=points, boots=boots,
                  variants=variants)
