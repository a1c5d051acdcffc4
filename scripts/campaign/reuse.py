# SPDX-License-Identifier: GPL-2.0
"""./run.sh campaign --reuse DIR: the finished icount boots of earlier runs
taken into a new campaign instead of booting them again (./run.sh bisect:
the boots of GOOD and of its A/A control, once a bisection).

Only a count of instructions is the same in any run whatever the host did
meanwhile, so only an icount boot is taken, and only when an earlier run
has that boot (variant, vCPUs, repetition) done under icount, from the
same kernel (its build identity), root fs and job.  Its every try comes
with it (a boot lost there counts here too), and the boot says where it
came from (reused_from).

An earlier run is read as --hosts reads a host's boots (issue #43, hole
6): nothing in it is trusted.  Its manifest.json and job.conf are read
capped through no link (a FIFO, /dev/zero, 1e400, deep nesting: one line,
exit 2, before the new directory is made); of an old boot only the keys
a finished boot has are taken, each checked as finish_boot checks a
runner's meta.json (times finite and in range, problems one line each,
at most 10); its folder is taken only when its meta.json says "ok", every
planned point's files check against its SHA256SUMS, and it holds nothing
but regular files and folders within the caps below (no link, FIFO,
device, sparse or oversized file): copied file by file through
descriptors (lockbench/safeio.py Dir), modes 0644 or 0755.  A boot that
fails any of it is booted again, with one line saying why.
"""
import hashlib
import os
import re
import shutil
import stat
import sys

from guest import variant_name, collect, judge
from lockbench import safeio
from lockbench.defaults import ICOUNT
from scripts.campaign import boot as campaign_boot
from scripts.campaign import file as campaign_file
from scripts.campaign import manifest as campaign_manifest

#: what one reused boot may hold: files, bytes in all, bytes per file
#: (collect.py's caps on what a guest may send: a point is at most 1 GiB)
BOOT_FILES_MAX = 256
BOOT_BYTES_MAX = 2 << 30
FILE_BYTES_MAX = collect.MEMBER_MAX
#: a folder nested deeper than this is no boot's (cells/ID/points/P)
DEPTH_MAX = 4
#: a file whose blocks hold less than its size by more than this is
#: sparse: never one the harness wrote (collect writes every byte)
SPARSE_SLACK = 1 << 20
#: the keys of a finished boot taken from an earlier run (the rest:
#: this campaign's own plan)
TRY_KEYS = ("state", "problems", "kept")
PROBLEMS_MAX = 10
KEPT_RE = re.compile(r"(?P<id>[A-Za-z0-9_~.@+-]{1,120})\.partial-[0-9]{1,6}")


class Source:
    """An earlier run: its folder held open, its manifest and job."""

    def __init__(self, path, dirh, data, job):
        self.path, self.dir, self.data, self.job = path, dirh, data, job


def open_sources(paths):
    """Each --reuse DIR opened and read, before anything is made: its
    manifest.json (a JSON object of regular boots) and job.conf, capped,
    through no link; CampaignError (one line) for one that is not."""
    out = []
    for p in paths:
        def refuse(why, p=p):
            raise campaign_file.CampaignError(f"--reuse {p}: {why}")
        try:
            dirh = safeio.Dir.open(p)
        except safeio.Unsafe as e:
            refuse(e.why)
        try:
            data = dirh.read_json("manifest.json", campaign_manifest.MANIFEST_MAX_BYTES)
            job = dirh.read_bytes("job.conf", campaign_file.MAX_FILE_BYTES)
        except safeio.Unsafe as e:
            dirh.close()
            refuse(f"{os.path.basename(e.filename)}: {e.why}")
        if not isinstance(data, dict) or not isinstance(data.get("cells", []), list):
            dirh.close()
            refuse("manifest.json: not a campaign's manifest")
        out.append(Source(os.path.abspath(p), dirh, data, job))
    return out


def line(text, limit=300):
    """One line of at most LIMIT characters: no control character."""
    return campaign_file.CONTROL_RE.sub(" ", str(text))[:limit]


def checked_tries(cid, tries):
    """The tries of old boot CID with their known keys only, each checked;
    None when they are not tries a campaign writes."""
    if not isinstance(tries, list) or len(tries) > 1000:
        return None
    out = []
    for t in tries:
        if not isinstance(t, dict) or not isinstance(t.get("state"), str) \
                or not judge.STATE_RE.fullmatch(t["state"]):
            return None
        probs = t.get("problems", [])
        if not isinstance(probs, list):
            return None
        kept = t.get("kept")
        if kept is not None:
            m = KEPT_RE.fullmatch(kept) if isinstance(kept, str) else None
            if not m or m.group("id") != cid:
                return None
        out.append({"state": t["state"], "problems": [line(p) for p in probs[:PROBLEMS_MAX]],
                    **({"kept": kept} if kept is not None else {})})
    return out


def checked_boot(o):
    """What a new boot takes of the old boot O: its known keys, checked
    as finish_boot checks a runner's meta.json; None when O is not a
    finished boot a campaign wrote."""
    tries = checked_tries(o["id"], o.get("tries", []))
    attempts = o.get("attempts", 0)  # an older harness's count, checked only
    probs = o.get("problems", [])
    if tries is None or type(attempts) is not int or not 0 <= attempts <= 1000 \
            or not isinstance(probs, list):
        return None
    # A boot a look left some points only (scripts/campaign/run.py
    # narrow) is not the boot the new campaign plans, which runs them all.
    if o.get("points") is not None:
        return None
    out = {"state": "done", "tries": tries,
           "problems": [line(p) for p in probs[:PROBLEMS_MAX]]}
    for k in ("wall_s", "boot_to_workload_s"):
        if k in o:
            out[k] = campaign_boot.seconds(o[k])
    return out


def _sums(text):
    """{name: digest} of a SHA256SUMS text, or None when a line is
    garbled or names a file twice (collect.read_sums' rules)."""
    sums = {}
    for ln in text.splitlines():
        digest, _, name = ln.partition("  ")
        if not re.fullmatch(r"[0-9a-f]{64}", digest) or not collect.POINT_FILE.fullmatch(name) \
                or name in sums:
            return None
        sums[name] = digest
    return sums


def _hash(dirh, rel):
    h = hashlib.sha256()
    with dirh.open_read(rel) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class NotTaken(Exception):
    """Why a boot is not taken (one line)."""


def copy_scrubbed(cdir, out):
    """Copy the folder CDIR (a Dir of an earlier run's boot) into the Dir
    OUT (made here, empty), file by file through descriptors: regular
    files (0644, 0755 where executable) and folders (0755) only, within
    the caps; NotTaken for a link, FIFO, device, sparse or oversized
    file, too many files or folders too deep."""
    files, total = 0, 0
    stack = [("", 0)]
    while stack:
        rel, depth = stack.pop()
        for entry in sorted(cdir.listdir(rel or None)):
            r = f"{rel}/{entry}" if rel else entry
            st = cdir.stat(r)
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 > DEPTH_MAX:
                    raise NotTaken(f"{r}: folders nested deeper than a boot's")
                out.sub(r, create=True).close()
                stack.append((r, depth + 1))
                continue
            if not stat.S_ISREG(st.st_mode):
                raise NotTaken(f"{r}: {safeio.kind(st.st_mode)}, not a regular file")
            files += 1
            if files > BOOT_FILES_MAX or st.st_size > FILE_BYTES_MAX \
                    or total + st.st_size > BOOT_BYTES_MAX:
                raise NotTaken(f"{r}: over a boot's caps ({BOOT_FILES_MAX} files, "
                               f"{FILE_BYTES_MAX} bytes a file, {BOOT_BYTES_MAX} in all)")
            if st.st_blocks * 512 + SPARSE_SLACK < st.st_size:
                raise NotTaken(f"{r}: a sparse file ({st.st_size} bytes in "
                               f"{st.st_blocks * 512} on disk)")
            mode = 0o755 if st.st_mode & 0o111 else 0o644
            with cdir.open_read(r) as f, out.open_new(r, mode, binary=True, exclusive=True) as g:
                left = FILE_BYTES_MAX
                while chunk := f.read(min(1 << 20, left + 1)):
                    left -= len(chunk)
                    total += len(chunk)
                    if left < 0 or total > BOOT_BYTES_MAX:
                        raise NotTaken(f"{r}: grew past the caps while copied")
                    g.write(chunk)


def verify(cdir, points):
    """Why the copied boot folder CDIR (a Dir) is not a finished boot, or
    None: its meta.json a runner's "ok", each of POINTS checking against
    its SHA256SUMS (collect.py's rules: every line well formed, a file
    named once, results.txt and lock_stat.txt listed)."""
    try:
        meta = cdir.read_json("meta.json", campaign_boot.META_MAX_BYTES)
    except safeio.Unsafe as e:
        return f"meta.json: {e.why}"
    if not isinstance(meta, dict) or meta.get("state") != "ok":
        return "its meta.json does not say ok"
    for p in points:
        try:
            sums = _sums(cdir.read_text(f"points/{p}/SHA256SUMS",
                                        collect.FILE_MAX["SHA256SUMS"]))
            if sums is None or not set(collect.POINT_NEEDS) <= set(sums):
                return f"points/{p}/SHA256SUMS is garbled or lacks a file"
            for fname, digest in sums.items():
                if _hash(cdir, f"points/{p}/{fname}") != digest:
                    return f"points/{p}/{fname} does not match its SHA-256"
        except safeio.Unsafe as e:
            return f"point {p}: {e.why}"
    return None


def take_boot(src, cid, kept, points, dst):
    """Copy the boot CID of the Source SRC (and its kept tries' folders
    KEPT) into the Dir DST (the new run's), scrubbed, then check the copy
    (verify): what is checked is what was copied, whatever the earlier
    run's folder does meanwhile.  Moved into place only when all is
    well; else removed, and NotTaken."""
    made = []
    try:
        for name in [cid] + kept:
            tmp = f"cells/.reuse-{name}"
            if dst.exists(tmp):
                shutil.rmtree(dst.where(tmp))
            made.append(tmp)
            try:
                with src.dir.sub(f"cells/{name}") as cdir, dst.sub(tmp, create=True) as out:
                    copy_scrubbed(cdir, out)
                    why = verify(out, points) if name == cid else None
            except safeio.Unsafe as e:
                why = e.why
            if why:
                raise NotTaken(f"cells/{name}: {why}" if name != cid else why)
        for name, tmp in zip([cid] + kept, made):
            dst.rename(tmp, f"cells/{name}", replace=False)
    except BaseException:
        for tmp in made:
            if dst.exists(tmp):
                shutil.rmtree(dst.where(tmp))
        raise


def take(d, man, sources):
    """Take into the new campaign in D (its Manifest MAN) the boots of the
    earlier runs SOURCES (open_sources) that it may; returns how many."""
    data = man.data
    points = [p["id"] for p in data["campaign"].get("points", [])]
    taken = 0
    with safeio.Dir.open(d) as dst:
        job = dst.read_bytes("job.conf", campaign_file.MAX_FILE_BYTES)
        for src in sources:
            if src.job != job:
                continue
            old = src.data
            # "cells": an old manifest's boots (the format's name)
            boots = old.get("cells") if isinstance(old.get("cells"), list) else []
            by_id = {c["id"]: c for c in boots
                     if isinstance(c, dict) and isinstance(c.get("id"), str)}
            roots = old.get("rootfs_sha256_by_arch")
            roots = roots if isinstance(roots, dict) else {}
            builds = old.get("builds") if isinstance(old.get("builds"), dict) else {}
            for boot in data["cells"]:
                o = by_id.get(boot["id"])
                v = boot["variant"]
                arch = variant_name.split_name(campaign_file.booted_variant(data["campaign"], v))[1]
                if not (o and boot["state"] not in campaign_manifest.SETTLED
                        and o.get("state") == "done"
                        and boot.get("clock") == ICOUNT and o.get("clock") == ICOUNT
                        and isinstance(builds.get(v), dict)
                        and campaign_manifest.same_kernel(builds[v], data["builds"][v])
                        and roots.get(arch) == data["rootfs_sha256_by_arch"].get(arch)):
                    continue
                try:
                    got = checked_boot(o)
                    if got is None:
                        raise NotTaken("its manifest entry is not a finished boot's")
                    take_boot(src, boot["id"], [t["kept"] for t in got["tries"] if "kept" in t],
                              points, dst)
                except NotTaken as e:
                    print(f"campaign: --reuse {src.path}: boot {boot['id']} not taken (booted "
                          f"again): {line(e, 200)}", file=sys.stderr)
                    continue
                boot.update(got)
                boot["reused_from"] = src.path
                taken += 1
    man.save()
    return taken
