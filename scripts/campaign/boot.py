# SPDX-License-Identifier: GPL-2.0
"""One boot's lifecycle on this host: start its runner (guest/run_guest.py)
in cells/.tmp-ID, then record how it ended in the manifest and move it to
cells/ID, or aside to cells/ID.partial-N when it did not finish (cells/:
the run directory's folder of boots, a name every run directory has).

Apart from scripts/campaign/main.py (the entry point) and the runner of many
boots (scripts/campaign/run.py) because both ways of running boots (side
by side here, or on --hosts: scripts/campaign/hosts.py) and --resume end a
boot the same way, through finish_boot and set_aside_unfinished.
"""
import hashlib
import os
import signal
import stat
import subprocess
import sys

from guest import judge, qemu

from lockbench import dirlock, safeio
from lockbench.paths import ROOT
from scripts.campaign import file as campaign_file
from lockbench.defaults import WALL

PY = "/usr/bin/python3"
# A runner's meta.json is a few KB (its problems are capped).
META_MAX_BYTES = campaign_file.MAX_FILE_BYTES
# wall_s and boot_to_workload_s: seconds, less than this (a year and more).
MAX_SECONDS = 1e8


def is_dir(path):
    """PATH is a directory, not a link to one (lstat)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def is_regular(path):
    """PATH is a regular file, not a link to one (lstat)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def clear_tmp(tmp):
    """Make way for a boot's runner at TMP (cells/.tmp-ID): whatever is
    there goes (dirlock.clear: a link is unlinked, never followed nor
    removed through), unless a runner holds it: its files are not ours
    to remove, and a second runner there would mix two boots."""
    if not dirlock.clear(tmp):
        raise campaign_file.CampaignError(
            f"{tmp}: a runner is at work in it (another campaign's?): refusing to start "
            f"its boot there")


def job_name(boot):
    """The job file a boot runs, in the campaign's directory: job.conf
    (every point), or job-HASH.conf where a look left it some points
    (scripts/campaign/run.py narrow)."""
    pts = boot.get("points")
    if not pts:
        return "job.conf"
    return f"job-{hashlib.sha256(' '.join(pts).encode()).hexdigest()[:12]}.conf"


def job_file(d, c, points):
    """Write DIR's job of the campaign's POINTS alone, once (a new file,
    through no link: safeio.open_new); return its path."""
    path = os.path.join(d, job_name({"points": points}))
    if not os.path.lexists(path):
        with safeio.open_new(path, 0o644) as f:
            f.write(campaign_file.job_text(c, points))
    return path


def start_boot(d, man, boot, job_path, pin=()):
    tmp = os.path.join(d, "cells", f".tmp-{boot['id']}")
    # cells/ a link would take the runner, and what clear_tmp removes,
    # elsewhere (safeio.Unsafe).
    safeio.check_dir(os.path.join(d, "cells"))
    clear_tmp(tmp)
    c = man.data["campaign"]
    cmd = [PY, "-m", "guest.run_guest", campaign_file.booted_variant(c, boot["variant"]),
           "--cpus", str(boot["cpus"]), "--mem", str(c["mem_mb"]),
           "--job", job_path, "--out", tmp] + (["--pin", ",".join(map(str, pin))] if pin else [])
    if boot.get("clock", WALL) != WALL:
        cmd += ["--clock", boot["clock"]]
    if c.get("silence_s"):
        cmd += ["--silence", str(c["silence_s"])]
    if c.get("meter") is False:
        cmd += ["--no-meter"]
    if pin:
        boot["pin"] = list(pin)
    # A new file, through no link (a link planted there was truncated and
    # got the runner's log: safeio.open_new unlinks it first).
    log = safeio.open_new(os.path.relpath(tmp + ".log", d), 0o644, root=d)
    # The runner is the package guest/ of this repository, wherever the
    # campaign runs from.
    with log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=ROOT),
                                preexec_fn=qemu.die_with_parent(signal.SIGTERM))
    boot["state"] = "running"
    man.save()
    return proc, tmp


def folder_of(path):
    """(a safeio.Dir of PATH's folder, a campaign's cells/, opened with no
    link as its last name; PATH's name in it): every rename in cells/
    goes through that descriptor (renameat), never by a path a swapped
    folder could redirect (issue #43)."""
    return safeio.Dir.open(os.path.dirname(path), nofollow=True), os.path.basename(path)


def rename(src, dst, replace=False):
    """Rename SRC to DST, both in one folder (cells/) or DST below SRC's
    folder, through that folder's descriptor; DST replaced (its name,
    never a link's target) only with REPLACE."""
    folder, name = folder_of(src)
    with folder:
        folder.rename(name, os.path.relpath(dst, folder.path), replace=replace)


def keep_aside(path):
    """Move an unfinished boot's files to PATH.partial-N (a name nothing,
    not even a dangling link, holds), through cells/' descriptor."""
    folder, name = folder_of(path)
    with folder:
        n = 1
        while folder.exists(f"{name}.partial-{n}"):
            n += 1
        folder.rename(name, f"{name}.partial-{n}", replace=False)
    return f"{path}.partial-{n}"


def move_log(log, dest):
    """Move a runner's log into its boot's directory as DEST (a name below
    the log's folder, cells/): a regular file only; anything else there
    (a link to a file outside, a FIFO) is unlinked, not moved in where a
    reader of the boot would follow it.  Both through cells/' descriptor:
    the boot folder on the way is opened with no link followed."""
    folder, name = folder_of(log)
    with folder:
        try:
            st = folder.stat(name)
        except FileNotFoundError:
            return
        if stat.S_ISREG(st.st_mode):
            folder.rename(name, os.path.relpath(dest, folder.path))
        elif not stat.S_ISDIR(st.st_mode):
            folder.unlink(name)


def set_aside_unfinished(tmp, wait_s=dirlock.RUNNER_END_S):
    """Move a killed campaign's unfinished boot TMP, with its runner's
    log, to TMP.partial-N once its runner has ended (dirlock): a runner
    still at work there would write into the boot started next at the
    same path.  Returns the new path, or None: nothing there, or a link
    or file in its place, unlinked (never followed, nor waited on)."""
    if not is_dir(tmp):
        dirlock.clear(tmp)
        # A runner's log left alone is kept for start_boot to replace; a
        # link or FIFO in its place goes now.
        if os.path.lexists(tmp + ".log") and not is_regular(tmp + ".log"):
            dirlock.clear(tmp + ".log")
        return None
    if not dirlock.wait_free(tmp, 0, nofollow=True):
        print(f"campaign: waiting up to {wait_s:g} s for the stopped campaign's runner "
              f"in {os.path.basename(tmp)} to end", file=sys.stderr, flush=True)
    if not dirlock.wait_free(tmp, wait_s, nofollow=True):
        raise campaign_file.CampaignError(
            f"refusing to resume: the stopped campaign's runner is still at work in {tmp} "
            f"after {wait_s:g} s (let it end, or stop it, then resume)")
    kept = keep_aside(tmp)
    move_log(tmp + ".log", os.path.join(kept, "runner.log"))
    return kept


def read_meta(d, tmp):
    """(A boot's meta.json, None) or (None, why not): missing, a link, not
    a regular file, not JSON this harness reads (NaN or Infinity
    included: lockbench/safeio.py), not a JSON object.  Read under the
    campaign directory D through no link: a remote host's boot is not
    trusted."""
    try:
        meta = safeio.read_json(os.path.relpath(os.path.join(tmp, "meta.json"), d),
                                META_MAX_BYTES, root=d)
    except safeio.Unsafe as e:
        return None, e.why
    if not isinstance(meta, dict):
        return None, "not a JSON object"
    return (meta, None) if meta else (None, "an empty JSON object")


def seconds(v):
    """V if it is a time in seconds a runner could have measured (a finite
    number, 0 <= V < MAX_SECONDS), else None: a host's 1e400 (read as
    inf), a 5000-digit integer or a negative time never reaches the
    progress line's arithmetic or manifest.json."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if 0 <= v < MAX_SECONDS else None  # NaN compares false


def ended_words(boot):
    """How a boot that did not finish ended, for the progress line: its
    state and its first problem, the state said once.  The manifest keeps
    each problem as "STATE: LINE" (what analysis/tidy/boots.py and parse/lockdep.py
    read), so a problem of the boot's own state ("interrupted: harness
    got SIGINT" for an interrupted boot) is shown without its prefix:
    "interrupted: harness got SIGINT", not "interrupted: interrupted: ..."."""
    state = str(boot.get("state"))
    probs = boot.get("problems")
    if not probs or not isinstance(probs, list):
        return state
    first = str(probs[0])
    if first.startswith(state + ": "):
        first = first[len(state) + 2:]
    return f"{state}: {first}"


def finish_boot(d, man, boot, tmp, interrupted, refused=None, lost=None, host=None):
    """Record how the boot in TMP ended and move it into place; REFUSED
    (a line) fails it whatever its meta.json says; LOST (a line) says why
    no meta.json came, in place of "no readable meta.json" (a --hosts
    host that went away); HOST names the --hosts host of this try."""
    final = os.path.join(d, "cells", boot["id"])
    meta, why = read_meta(d, tmp)
    if is_dir(tmp):
        move_log(tmp + ".log", os.path.join(tmp, "runner.log"))
    state = meta.get("state") if meta else "error"
    if not isinstance(state, str) or not judge.STATE_RE.fullmatch(state):
        state = "error"
    if interrupted and state != "ok":
        state = "interrupted"
    if refused:
        state = "failed"
    kept = None  # where this try's files went when it did not finish
    if state == "ok":
        if os.path.lexists(final):
            keep_aside(final)
        rename(tmp, final)
        boot["state"] = "done"
    else:
        boot["state"] = state
        if is_dir(tmp):
            if os.path.lexists(final):
                keep_aside(final)
            rename(tmp, final)
            kept = boot["kept"] = os.path.basename(keep_aside(final))
    problems = []
    if meta:
        boot["wall_s"] = seconds(meta.get("wall_s"))
        boot["boot_to_workload_s"] = seconds(meta.get("boot_to_workload_s"))
        got = meta.get("problems")
        # One line each: a host's meta.json is not trusted to keep them so.
        problems = [campaign_file.CONTROL_RE.sub(" ", f"{p.get('state')}: {p.get('line')}"[:300])
                    for p in (got if isinstance(got, list) else []) if isinstance(p, dict)]
    elif state != "interrupted":
        problems = [f"error: {lost}" if lost else f"error: no readable meta.json ({why})"]
    now = ([refused] if refused else []) + problems[:10]
    if now or meta:
        boot["problems"] = now
    # Every try that ended stays on record, the failed ones too: a boot
    # that hung or reported lockdep is a result about its kernel even when
    # --resume's next try of the boot succeeds (analysis/tidy/boots.py).
    boot.setdefault("tries", []).append(
        {"state": boot["state"], "problems": now, **({"kept": kept} if kept else {}),
         **({"host": host} if host else {})})
    man.save()
    return meta
