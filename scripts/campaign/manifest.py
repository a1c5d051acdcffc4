# SPDX-License-Identifier: GPL-2.0
"""A campaign's manifest.json: the planned boots and their states, the
kernels and guest root file systems the campaign started with, and the
checks --resume makes before it trusts any of it (checked_manifest).

Apart from scripts/campaign/main.py (the entry point) so that what a run
directory's manifest holds, and why a resume refuses one, is read in one
file; the boots' lifecycle (scripts/campaign/boot.py) and the runner
(scripts/campaign/run.py) change boots' states and save it.
"""
import datetime
import hashlib
import os
import random
import re
import secrets
import stat

from guest import variant_name, judge, qemu

from lockbench import dirlock, safeio
from lockbench.cli import CliError
from scripts.campaign import file as campaign_file
from scripts import variant as variantmod
from lockbench import defaults
from lockbench.defaults import ICOUNT, WALL

# A manifest of the biggest campaign (16 vCPU counts x 100 repetitions x
# a few variants) is a few MB.
MANIFEST_MAX_BYTES = 64 << 20
STATE_RE = judge.STATE_RE
UNNEEDED = "unneeded"  # a boot past the look where the campaign stopped
SETTLED = ("done", UNNEEDED)
# Build-meta fields that identify a kernel; the others (build time, harness
# commit) change on a no-op rebuild.
IDENTITY = ("kernel_version", "debian_package_version", "patches",
            "config_fragments", "config_sha256", "compiler", "tree_commit")


def variant_order(c, rep, rng, variants=None):
    """The order the variants (default: the campaign's) of repetition
    `rep` (from 1) run in.
    balanced: a cyclic Latin square and its mirror, so that over each
    k repetitions of k variants every variant holds every position once
    (for 3 variants the 6 repetitions of a square and its mirror are all 6
    orders; beyond 3, a variant neighbours only its two neighbours in the
    list); alternate: the list, reversed on even repetitions (with 3
    variants the middle one is always in the middle); random: shuffled."""
    order = list(c["variants"] if variants is None else variants)
    if c["order"] == "random":
        rng.shuffle(order)
    elif c["order"] == "balanced":
        k, i = len(order), rep - 1
        order = order[i % k:] + order[:i % k]
        if (i // k) % 2:
            order.reverse()
    elif rep % 2 == 0:
        order.reverse()
    return order


def plan(c):
    """The boots, interleaved: variants in a balanced, alternating or
    shuffled order per repetition; a vCPU count whose clock is icount
    (analysis/primary.py) runs its first icount_repetitions only; a
    variant of variant_cpus boots at its vCPU counts only."""
    boots = []
    rng = random.Random(c["seed"])
    clocks = c.get("clock") if isinstance(c.get("clock"), dict) else {}
    only = c.get("variant_cpus") or {}
    for rep in range(1, c["repetitions"] + 1):
        for cpus in c["cpus"]:
            # The order over the variants that boot at this vCPU count,
            # so that those stay balanced among themselves.
            order = variant_order(c, rep, rng, [v for v in c["variants"]
                                                if v not in only or cpus in only[v]])
            clock = clocks.get(str(cpus), WALL)
            if clock == ICOUNT and rep > c.get("icount_repetitions", 0):
                continue
            for pos, v in enumerate(order, 1):
                boot = {"id": f"r{rep:02d}-{v}-c{cpus}", "variant": v, "cpus": cpus,
                        "rep": rep, "state": "planned", "pos": pos,
                        "oversubscribed": cpus > (os.cpu_count() or 1)}
                if clock != WALL:
                    boot["clock"] = clock
                boots.append(boot)
    return boots


def build_dir(target):
    """build/LABEL, the folder the kernel TARGET boots is built in (a
    boot variant's: its booted variant's), or None for a target that is
    no variant."""
    try:
        variant, arch, kernel, label = qemu.target(target)
        booted, _cmdline = variant_name.boot_spec(variant)
    except CliError:
        return None
    if booted != variant:
        label = variant_name.join_name(booted, arch, kernel)
    return os.path.join(qemu.BUILD, label)


def refuse_if_being_built(target):
    """RunError 3 saying that TARGET's kernel is being built now, when a
    build holds its lock (build-kernel.sh's build/LABEL/.build.lock): a
    build-meta.json missing or not readable then is a build under way,
    not a kernel to build (issue #43, hole 17)."""
    vdir = build_dir(target)
    if vdir and dirlock.held(os.path.join(vdir, ".build.lock")):
        raise judge.RunError(3, f"variant {target!r} is being built now (a build holds "
                             f"{vdir}/.build.lock): run this again when that build ends")


def build_identity(variant):
    """The build a target boots (a boot variant: its booted variant's, with its
    kernel parameters as "cmdline")."""
    try:
        art = qemu.artifacts(variant)
    except judge.RunError as e:
        if e.exit_code == 3:
            refuse_if_being_built(variant)
        raise
    vdir = os.path.dirname(art["build-meta.json"])
    kernel = qemu.arch_info(art["arch"])["kernel"]
    try:
        meta = safeio.read_json(art["build-meta.json"])
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
        meta["module_sha256"] = safeio.sha256(os.path.join(vdir, "mbox_bench.ko"))
        meta["image_size"] = os.path.getsize(os.path.join(vdir, kernel))
    except (OSError, ValueError):
        refuse_if_being_built(variant)
        raise judge.RunError(3, f"variant {variant!r} is not built: run "
                             f"{build_command(variant)}") from None
    if art["cmdline"]:
        meta["cmdline"] = art["cmdline"]
    return meta


def build_command(target):
    """The command that builds TARGET: ./run.sh build --variants DIR TARGET
    when its variant file is in a folder of its own (--variants DIR,
    LOCKBENCH_VARIANT_PATH), which the build must be given too."""
    try:
        name = variant_name.split_name(target).name
    except variant_name.VariantError:
        return f"./run.sh build [--variants DIR] {target}"
    path = variant_name.find_file(name)
    shipped = os.path.join(variantmod.ROOT, "kernel-patches", "variants")
    if path is None or os.path.dirname(os.path.abspath(path)) == shipped:
        return f"./run.sh build {target}"
    return f"./run.sh build --variants {os.path.dirname(path)} {target}"


def same_kernel(a, b):
    return all(a.get(k) == b.get(k) for k in IDENTITY + ("module_sha256", "cmdline"))


def rootfs_hashes(arches):
    """{arch: SHA-256 of its guest root fs}; RunError 3 if one is missing."""
    out = {}
    for a in arches:
        path = qemu.rootfs_path(a)
        if not os.path.isfile(path):
            raise judge.RunError(3, f"no guest root file system for {a} ({path}): "
                                 "run ./run.sh build")
        out[a] = safeio.sha256(path)
    return out


def utc_stamp():
    """Now, as a run directory's name and a manifest's "created" say
    it: 20261206T114600Z."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


class Manifest:
    def __init__(self, path, data):
        self.path, self.data = path, data

    @classmethod
    def new(cls, d, campaign, host, builds, rootfs, boots, variant_dirs=None):
        """A new campaign's manifest in D, every key it has in one place:
        the campaign as scripts/campaign/file.py resolved it, the host, each
        variant's build (build_identity), the root fs hashes per arch
        (rootfs_hashes), the planned boots (plan) and the --variants
        folders, if any (the report's Reproduce line names them)."""
        data = {"format": defaults.MANIFEST_FORMAT, "campaign": campaign,
                "created": utc_stamp(), "host": host, "builds": builds}
        # rootfs_sha256: the arm guests' root fs, as before arches existed.
        if "arm" in rootfs:
            data["rootfs_sha256"] = rootfs["arm"]
        data["rootfs_sha256_by_arch"] = rootfs
        if variant_dirs:
            data["variant_dirs"] = [os.path.abspath(v) for v in variant_dirs]
        data["cells"] = boots  # "cells": the boots (the format's name)
        return cls(os.path.join(d, "manifest.json"), data)

    @classmethod
    def load(cls, d):
        """The manifest as JSON (safeio: a regular file, no link, no NaN or
        Infinity, nested at most safeio.MAX_JSON_DEPTH); what it says is
        checked by resume()."""
        path = os.path.join(d, "manifest.json")
        try:
            data = safeio.read_json("manifest.json", MANIFEST_MAX_BYTES, root=d)
        except safeio.Unsafe as e:
            raise campaign_file.CampaignError(f"{d}: no readable manifest.json ({e.why})") from None
        if not isinstance(data, dict):
            raise campaign_file.CampaignError(f"{d}: no readable manifest.json (not a JSON object)")
        return cls(path, data)

    def save(self):
        """Replace manifest.json: written to a new manifest.json.tmp (a link
        planted there is unlinked, not written through) and renamed over
        it; mode 0644; ValueError rather than a NaN or Infinity no reader
        takes (safeio.write_json)."""
        safeio.write_json(self.path, self.data, 0o644)

    def boot(self, cid):
        return next(c for c in self.data["cells"] if c["id"] == cid)


# The remote folders of a --hosts run (scripts/campaign/hosts.py), kept
# here beside hosts_remote, the manifest key that records them, so that
# checked_manifest knows which names it may trust to rm -rf.
def remote_base(d):
    """The part of a run's remote folder name that names its run
    directory D: its name, in characters safe in a shell word."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(os.path.abspath(d)))[:64]


def remote_name(d):
    """A new remote folder for a run of run directory D: a --resume,
    or another campaign whose directory has the same name, never shares
    it (the token)."""
    return f"lockbench-{remote_base(d)}-{secrets.token_hex(6)}"


def remote_pattern(d):
    return f"lockbench-{remote_base(d)}-<12 hex digits>"


def is_remote(d, name):
    """NAME is a remote folder remote_name makes for D, matched whole (the
    exact prefix, D's own name, a token of 12 hex digits): these alone are
    removed with rm -rf on every host."""
    return isinstance(name, str) and re.fullmatch(
        re.escape(f"lockbench-{remote_base(d)}-") + "[0-9a-f]{12}", name) is not None


def _refuse(d, why):
    raise campaign_file.CampaignError(f"{d}: refusing to resume: {why}")


def checked_manifest(d, man):
    """Refuse a manifest that is not what this campaign's saved
    campaign.toml plans, so that nothing in it is trusted: the campaign is
    loaded (and checked) again from that file, the boots re-planned, and
    every boot, build and root fs hash must match."""
    data = man.data
    old = data.get("campaign")
    if not isinstance(old, dict):
        _refuse(d, "manifest.json has no campaign")
    _check_folders(d)
    c = _saved_campaign(d, old)
    _check_boots(d, data.get("cells"), c)
    builds, rootfs = _builds_rootfs(d, data, c)
    _check_hosts_looks(d, data)
    data["campaign"] = c
    return c, builds, rootfs


def _check_folders(d):
    """D and its cells/: plain folders no other user can write in."""
    for sub in (d, os.path.join(d, "cells")):
        try:
            safeio.check_dir(sub)  # cells/ a link would take every boot elsewhere
        except safeio.Unsafe as e:
            _refuse(d, str(e))
        # Another local user could plant links where the boots go (one
        # made before the campaign set its umask: issue #27).
        if os.lstat(sub).st_mode & stat.S_IWOTH:
            _refuse(d, f"{sub} is writable by others (chmod o-w {sub})")


def _saved_campaign(d, old):
    """The campaign loaded again from D's campaign.toml, which must be
    the manifest's campaign OLD (and the file it came from unchanged)."""
    c = campaign_file.load(os.path.join(d, "campaign.toml"), root=d)
    # What every runner reads as its job: a regular file, not a link
    # (the runner opens it by path).
    try:
        campaign_file.read_capped(os.path.join(d, "job.conf"), root=d)
    except OSError as e:
        _refuse(d, f"{d}/job.conf: {e.strerror or e}")
    if c["file_sha256"] != old.get("file_sha256"):
        _refuse(d, f"{d}/campaign.toml changed since the campaign started")
    orig = old.get("file")
    if isinstance(orig, str) and os.path.isfile(orig):
        try:
            sha = hashlib.sha256(campaign_file.read_capped(orig)).hexdigest()
        except OSError:
            sha = None
        if sha != c["file_sha256"]:
            _refuse(d, f"campaign file {orig} changed since the campaign started")
        c["file"] = orig
    # A key the manifest lacks that the file leaves unset (None, {}, []:
    # what the harness did before the key existed) came with a newer
    # harness, not with a changed campaign: the run resumes.
    new = {k: v for k, v in c.items()
           if k != "file" and (k in old or v not in (None, {}, []))}
    if {k: v for k, v in old.items() if k != "file"} != new:
        diff = sorted(k for k in set(old) | set(new) if k != "file" and old.get(k) != new.get(k))
        _refuse(d, "manifest.json's campaign is not campaign.toml's (differs in "
                f"{', '.join(diff)})")
    return c


def _check_boots(d, boots, c):
    """The manifest's BOOTS are the boots campaign C plans, each with a
    state, points and tries of the right kind."""
    planned = plan(c)
    if not isinstance(boots, list) or len(boots) != len(planned):
        _refuse(d, f"manifest.json's boots are not the {len(planned)} boots campaign.toml plans")
    for boot, want in zip(boots, planned):
        if not isinstance(boot, dict) or any(boot.get(k) != want[k] or type(boot.get(k)) is not type(want[k])
                                             for k in ("id", "variant", "cpus", "rep")):
            _refuse(d, "manifest.json's boot "
                    f"{str(boot.get('id') if isinstance(boot, dict) else boot)[:40]!r} "
                    f"is not the planned boot {want['id']!r}")
        # (pos: not in manifests from before boots kept their place)
        if boot.get("clock", WALL) != want.get("clock", WALL) or \
                ("pos" in boot and boot["pos"] != want["pos"]):
            _refuse(d, f"manifest.json's boot {want['id']!r} is not planned with that clock or "
                    "place")
        if not isinstance(boot.get("state"), str) or not STATE_RE.fullmatch(boot["state"]):
            _refuse(d, f"boot {want['id']}: state {str(boot.get('state'))[:40]!r} is not a state")
        pts = boot.get("points")
        if pts is not None and not (isinstance(pts, list) and pts and all(
                isinstance(p, str) for p in pts) and set(pts) <= {p["id"] for p in c["points"]}):
            _refuse(d, f"boot {want['id']}: points is not a list of the campaign's point ids")
        # attempts: written by harnesses before docs/glossary.md (it was
        # len(tries)); still read in their manifests, never written.
        if not isinstance(boot.get("attempts", 0), int) or boot.get("attempts", 0) < 0:
            _refuse(d, f"boot {want['id']}: attempts is not a count")
        tries = boot.get("tries", [])
        if not isinstance(tries, list) or not all(
                isinstance(t, dict) and isinstance(t.get("state"), str)
                and STATE_RE.fullmatch(t["state"]) for t in tries):
            _refuse(d, f"boot {want['id']}: tries is not a list of ended tries")


def _builds_rootfs(d, data, c):
    """(the manifest's builds, its root fs hash by arch): one build a
    variant, one hash an arch of campaign C."""
    builds = data.get("builds")
    if not isinstance(builds, dict) or set(builds) != set(c["variants"]) \
            or not all(isinstance(b, dict) for b in builds.values()):
        _refuse(d, "manifest.json's builds do not name every variant's kernel ("
                + ", ".join(c["variants"]) + ")")
    want = data.get("rootfs_sha256_by_arch")
    if want is None and c["arches"] == ["arm"]:
        want = {"arm": data.get("rootfs_sha256")}
    if not isinstance(want, dict) or set(want) != set(c["arches"]) \
            or not all(isinstance(v, str) for v in want.values()):
        _refuse(d, "manifest.json has no root fs hash for each of " + ", ".join(c["arches"]))
    return builds, want


def _check_hosts_looks(d, data):
    """What --hosts and the looks recorded: of their own shape."""
    remotes = data.get("hosts_remote", [])
    # Each is removed with rm -rf on every host: only the names --hosts
    # makes for this directory, whole.
    if not (type(data.get("hosts_seq", 0)) is int and data.get("hosts_seq", 0) >= 0
            and isinstance(remotes, list)
            and all(is_remote(d, r) for r in remotes)):
        _refuse(d, "manifest.json's hosts_seq or hosts_remote is not what --hosts writes for "
                f"this directory ({remote_pattern(d)})")
    seq = data.get("sequential")
    if seq is not None and not (
            isinstance(seq, dict) and isinstance(seq.get("looks"), list)
            and all(isinstance(x, dict) and type(x.get("reps")) is int for x in seq["looks"])
            and (seq.get("stopped_at") is None or type(seq.get("stopped_at")) is int)
            and seq.get("stopped_by") in (None, "budget")):
        _refuse(d, "manifest.json's sequential looks are not a list of looks")
