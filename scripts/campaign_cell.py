# SPDX-License-Identifier: GPL-2.0
"""One cell's lifecycle on this host: start its runner (guest/run_guest.py)
in cells/.tmp-ID, then record how it ended in the manifest and move it to
cells/ID, or aside to cells/ID.partial-N when it did not finish.

Apart from scripts/campaign.py (the entry point) and the runner of many
cells (scripts/campaign_run.py) because both ways of running cells (side
by side here, or on --hosts: scripts/campaign_hosts.py) and --resume end a
cell the same way, through finish_cell and set_aside_unfinished.
"""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys

from guest import dirlock, qemu
from scripts import campaign_file, campaign_manifest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def start_cell(d, man, cell, job_path, pin=()):
    tmp = os.path.join(d, "cells", f".tmp-{cell['id']}")
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    c = man.data["campaign"]
    cmd = [PY, "-m", "guest.run_guest", campaign_file.image(c, cell["variant"]),
           "--cpus", str(cell["cpus"]), "--mem", str(c["mem_mb"]),
           "--job", job_path, "--out", tmp] + (["--pin", ",".join(map(str, pin))] if pin else [])
    if cell.get("clock", "wall") != "wall":
        cmd += ["--clock", cell["clock"]]
    if c.get("silence_s"):
        cmd += ["--silence", str(c["silence_s"])]
    if pin:
        cell["pin"] = list(pin)
    log = open(os.path.join(d, "cells", f".tmp-{cell['id']}.log"), "w")
    # The runner is the package guest/ of this repository, wherever the
    # campaign runs from.
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=dict(os.environ, PYTHONPATH=ROOT),
                            preexec_fn=qemu.die_with_parent(signal.SIGTERM))
    log.close()
    cell["state"] = "running"
    cell["attempts"] = cell.get("attempts", 0) + 1
    man.save()
    return proc, tmp


def keep_aside(path):
    """Move an unfinished cell's files to PATH.partial-N."""
    n = 1
    while os.path.exists(f"{path}.partial-{n}"):
        n += 1
    os.rename(path, f"{path}.partial-{n}")
    return f"{path}.partial-{n}"


def set_aside_unfinished(tmp, wait_s=dirlock.RUNNER_END_S):
    """Move a killed campaign's unfinished cell TMP, with its runner's
    log, to TMP.partial-N once its runner has ended (dirlock): a runner
    still at work there would write into the cell started next at the
    same path.  Returns the new path."""
    if not dirlock.wait_free(tmp, 0):
        print(f"campaign: waiting up to {wait_s:g} s for the stopped campaign's runner "
              f"in {os.path.basename(tmp)} to end", file=sys.stderr, flush=True)
    if not dirlock.wait_free(tmp, wait_s):
        raise campaign_file.CampaignError(
            f"refusing to resume: the stopped campaign's runner is still at work in {tmp} "
            f"after {wait_s:g} s (let it end, or stop it, then resume)")
    kept = keep_aside(tmp)
    with contextlib.suppress(FileNotFoundError):
        os.replace(tmp + ".log", os.path.join(kept, "runner.log"))
    return kept


def read_meta(tmp):
    """A cell's meta.json, or None: missing, not a regular file, not a
    JSON object (a remote host's cell is not trusted)."""
    try:
        meta = json.loads(campaign_file.read_capped(os.path.join(tmp, "meta.json")))
    except (OSError, ValueError, RecursionError):
        return None
    return meta if isinstance(meta, dict) else None


def finish_cell(d, man, cell, tmp, interrupted, refused=None):
    """Record how the cell in TMP ended and move it into place; REFUSED
    (a line) fails it whatever its meta.json says."""
    final = os.path.join(d, "cells", cell["id"])
    log = tmp + ".log"
    meta = read_meta(tmp)
    if os.path.isdir(tmp) and os.path.exists(log):
        os.replace(log, os.path.join(tmp, "runner.log"))
    state = meta.get("state") if meta else "error"
    if not isinstance(state, str) or not campaign_manifest.STATE_RE.fullmatch(state):
        state = "error"
    if interrupted and state != "ok":
        state = "interrupted"
    if refused:
        state = "failed"
    kept = None  # where this try's files went when it did not finish
    if state == "ok":
        if os.path.exists(final):
            keep_aside(final)
        os.rename(tmp, final)
        cell["state"] = "done"
    else:
        cell["state"] = state
        if os.path.isdir(tmp):
            if os.path.exists(final):
                keep_aside(final)
            os.rename(tmp, final)
            kept = cell["kept"] = os.path.basename(keep_aside(final))
    problems = []
    if meta:
        number = (lambda v: v if isinstance(v, (int, float)) and not isinstance(v, bool) else None)
        cell["wall_s"] = number(meta.get("wall_s"))
        cell["boot_to_workload_s"] = number(meta.get("boot_to_workload_s"))
        got = meta.get("problems")
        problems = [f"{p.get('state')}: {p.get('line')}"[:300]
                    for p in (got if isinstance(got, list) else []) if isinstance(p, dict)]
    elif state != "interrupted":
        problems = ["error: no readable meta.json (the runner wrote none, or not a JSON object)"]
    now = ([refused] if refused else []) + problems[:10]
    if now or meta:
        cell["problems"] = now
    # Every try that ended stays on record, the failed ones too: a boot
    # that hung or reported lockdep is a result about its kernel even when
    # --resume's next try of the cell succeeds (analysis/boots.py).
    cell.setdefault("tries", []).append(
        {"state": cell["state"], "problems": now, **({"kept": kept} if kept else {})})
    man.save()
    return meta
