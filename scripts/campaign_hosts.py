# SPDX-License-Identifier: GPL-2.0
"""Run a campaign's cells on other machines with GNU parallel.

The hosts file is GNU parallel's --sshloginfile: one sshlogin a line, e.g.
"2/ssh -p 2222 -i KEY user@host" or "build1" (see parallel(1)).  Each host
needs the harness's packages (./run.sh setup) but no kernel build: the
kernels, modules, root file system, runner and job are sent once per host
(parallel --nonall --basefile), each cell runs there with the same runner
(guest/run_guest.py), and its run directory comes back (--return) into
this campaign's cells/ before it is renamed into place as any local cell.
Scheduling is parallel's: per host, as many cells of N vCPUs at a time as
100/N percent of its cores (-j), so cells never oversubscribe a host.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PARALLEL = "parallel"
sys.path.insert(0, HERE)
import campaign_file  # noqa: E402
import variant as variantmod  # noqa: E402


class HostsError(Exception):
    code = 2


def check_hosts_file(path):
    if not os.path.isfile(path):
        raise HostsError(f"--hosts {path}: no such file")
    with open(path) as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    if not lines:
        raise HostsError(f"--hosts {path}: no sshlogin in it")
    return lines


def make_payload(path, build, variants, job):
    """What a host needs to run cells: the runner, the artifacts, the job."""
    with tarfile.open(path, "w") as tar:
        for f in ("run_guest.py", "job.py", "init.sh"):
            tar.add(os.path.join(ROOT, "guest", f), f"payload/guest/{f}")
        # The runner checks variant names with it.
        tar.add(os.path.join(HERE, "variant.py"), "payload/scripts/variant.py")
        arches = []
        for v in variants:
            arch = variantmod.parse_target(v)[1]
            arches += [] if arch in arches else [arch]
            for f in (variantmod.ARCHES[arch]["kernel"], "mbox_bench.ko", "build-meta.json"):
                tar.add(os.path.join(build, v, f), f"payload/build/{v}/{f}")
        for a in arches:
            rootfs = f"{variantmod.rootfs_dir(a)}/rootfs.cpio"
            tar.add(os.path.join(build, rootfs), f"payload/build/{rootfs}")
        tar.add(job, "payload/job.conf")


def parse_joblog(path):
    """{seq: (host, exit value)} of the jobs parallel finished."""
    done = {}
    try:
        with open(path) as f:
            for line in f.readlines()[1:]:
                cols = line.rstrip("\n").split("\t")
                if len(cols) >= 9 and cols[0].isdigit():
                    done[int(cols[0])] = (cols[1], int(cols[6]))
    except OSError:
        pass
    return done


def run(d, man, hosts_file, finish_cell, prog, stop):
    """Run every cell not done on the hosts; finish_cell(cell, tmp) each."""
    check_hosts_file(hosts_file)
    hosts = os.path.abspath(hosts_file)
    c = man.data["campaign"]
    build = os.environ.get("LOCKBENCH_BUILD", os.path.join(ROOT, "build"))
    remote = f"lockbench-{os.path.basename(os.path.abspath(d))}"
    payload = ".hosts-payload.tar"
    images = list(dict.fromkeys(campaign_file.image(c, v) for v in c["variants"]))
    make_payload(os.path.join(d, payload), build, images, os.path.join(d, "job.conf"))
    prog.say(f"campaign: copying kernels, modules and root fs to the hosts of {hosts_file}")
    cp = subprocess.run([PARALLEL, "--nonall", "--sshloginfile", hosts, "--wd", remote,
                         "--basefile", payload, f"rm -rf payload && tar xf {payload}"],
                        cwd=d, capture_output=True, text=True, check=False)
    os.unlink(os.path.join(d, payload))
    if cp.returncode:
        raise HostsError(f"copying to the hosts failed: {(cp.stderr or cp.stdout).strip()[-300:]}")
    done_count = sum(x["state"] == "done" for x in man.data["cells"])
    for cpus in sorted({x["cpus"] for x in man.data["cells"]}):
        cells = [x for x in man.data["cells"] if x["state"] not in ("done", "unneeded")
                 and x["cpus"] == cpus]
        if not cells or stop:
            continue
        inp = os.path.join(d, f".hosts-c{cpus}.in")
        log = os.path.join(d, f".hosts-c{cpus}.joblog")
        # On the hosts a cell runs in cells/.tmp-cN-SEQ, renamed to
        # cells/.tmp-ID once back: parallel quotes a name with '@' (an arm64
        # target's), and --return then asks rsync for the quoted name.
        names = [f"c{cpus}-{i:04d}" for i in range(1, len(cells) + 1)]
        with open(inp, "w") as f:
            for x, name in zip(cells, names):
                f.write(f"{name} {campaign_file.image(c, x['variant'])}\n")
        for name in names:  # left by a harness that was killed outright
            tmp = os.path.join(d, "cells", f".tmp-{name}")
            if os.path.isdir(tmp):
                shutil.rmtree(tmp)
            if os.path.exists(tmp + ".log"):
                os.unlink(tmp + ".log")
        if os.path.exists(log):
            os.unlink(log)
        # Variant names are checked ([a-z0-9_-], and '@' before an arch)
        # before they get here; parallel quotes {1} and {2} itself.
        cmd = [PARALLEL, "--sshloginfile", hosts, "--wd", remote, "--colsep", " ",
               "-j", f"{max(1, 100 // cpus)}%", "--joblog", log, "-a", inp,
               "--return", "cells/.tmp-{1}", "--return", "cells/.tmp-{1}.log",
               f"rm -rf cells/.tmp-{{1}}; mkdir -p cells && /usr/bin/python3 "
               f"payload/guest/run_guest.py {{2}} --cpus {cpus} --mem {c['mem_mb']} "
               f"--job payload/job.conf --out cells/.tmp-{{1}} >cells/.tmp-{{1}}.log 2>&1"]
        # The runner finds its build/ beside its guest/: payload/build.
        proc = subprocess.Popen(cmd, cwd=d, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        for x in cells:
            x["state"] = "running"
            x["attempts"] = x.get("attempts", 0) + 1
        man.save()
        finished = set()
        termed = 0
        while True:
            if stop and termed < 2 and proc.poll() is None:
                # parallel: the first TERM stops new jobs, the second kills them.
                proc.send_signal(signal.SIGTERM)
                termed += 1
            for seq, (host, _rc) in parse_joblog(log).items():
                if seq in finished or seq > len(cells):
                    continue
                finished.add(seq)
                x = cells[seq - 1]
                x["host"] = host
                came = os.path.join(d, "cells", f".tmp-{names[seq - 1]}")
                tmp = os.path.join(d, "cells", f".tmp-{x['id']}")
                if os.path.isdir(came) and os.path.isdir(tmp):
                    shutil.rmtree(tmp)
                for suffix in ("", ".log"):
                    if os.path.exists(came + suffix):
                        os.replace(came + suffix, tmp + suffix)
                finish_cell(x, tmp)
                if x["state"] == "done":
                    done_count += 1
                    prog.walls.append(x.get("wall_s") or 0)
                else:
                    prog.say(f"campaign: cell {x['id']} on {host}: {x['state']}")
                prog.show(done_count, [y["id"] for y in cells if y["state"] == "running"])
            if proc.poll() is not None and len(finished) >= len(parse_joblog(log)):
                break
            time.sleep(0.5)
        err = proc.stderr.read().decode(errors="replace").strip()
        for x in cells:
            if x["state"] == "running":
                x["state"] = "interrupted" if stop else "error"
                x["problems"] = [re.sub(r"\s+", " ", err)[-300:]] if err else []
        man.save()
    for f in os.listdir(d):
        if f.startswith(".hosts-"):
            os.unlink(os.path.join(d, f))
