# SPDX-License-Identifier: GPL-2.0
"""Run a campaign's boots on other machines with GNU parallel.

The hosts file is GNU parallel's --sshloginfile: one sshlogin a line, e.g.
"2/ssh -p 2222 -i KEY user@host" or "build1" (see parallel(1)).  Each host
needs the harness's packages (./run.sh setup) but no kernel build: the
kernels, modules, root file system, runner and job are sent once per host
(parallel --nonall --basefile), each boot runs there with the same runner
(guest/run_guest.py), and its run directory comes back (--return) into
this campaign's cells/ before it is renamed into place as any local boot.
Scheduling is parallel's: per host, as many boots of N vCPUs at a time as
100/N percent of its cores (-j), so boots never oversubscribe a host.

Before any boot runs, every host is asked (probe) for its CPU model and
core count, read there, and whether it has /usr/bin/python3, rsync, perl
and the QEMU of each arch: a host that does not answer, or lacks one, is
named in one line and nothing runs.  Each boot records the host it ran on and that
host's CPU model and cores as its runner read them there (meta.json).

A host that goes away (ssh's exit status 255: the connection refused or
lost), or ends a boot itself (its QEMU killed, its disk full, what it sent
refused), fails that try in one line naming the host; the try stays on
record, counts as no boot of the kernel (analysis/tidy/boots.py), and
the boot is tried again on the hosts that ended none, up to
MAX_HOST_FAULTS times (a host that went away is left out for the rest
of the run); with no other host left it waits for --resume.
A kernel's own end (hung, panic, lockdep, ...) is a result, never retried.

A host is not trusted: what comes back is regular files and directories
only (rsync without links, devices or specials, then a walk that removes
anything else and fails the boot), and nothing from the manifest reaches
a remote shell unquoted.  Each run uses its own remote folder
(lockbench-DIR-TOKEN, named and recorded by scripts/campaign/manifest.py),
removed at the end, and boot numbers are never reused, so that a run's
leftovers cannot collide with a later --resume; parallel dies with the
harness.
"""
import contextlib
import os
import re
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import tarfile
import time

from lockbench.cli import CliError
from guest import variant_name, lockload_cases, qemu
from lockbench import dirlock, safeio
from lockbench.paths import BUILD, ROOT
from scripts.campaign import boot as campaign_boot
from scripts.campaign import file as campaign_file
from scripts.campaign import manifest as campaign_manifest
from lockbench.defaults import WALL

PARALLEL = "parallel"

# GNU parallel's default (-rlDzR) keeps symlinks, devices and FIFOs: a
# host could plant meta.json -> /etc/shadow or a FIFO that hangs the
# analysis.  -R (relative paths) is what --return needs.
RSYNC_OPTS = "-rtzR --no-links --no-devices --no-specials"
# A boot is points/ID/ a few levels down; deeper is not the runner's.
MAX_DEPTH = 16
# A row of parallel's --joblog: Seq Host Starttime JobRuntime Send Receive
# Exitval Signal Command, tab-separated (a tab in a host name shifts them).
JOBLOG_COLS = 9
JOBLOG_MAX_BYTES = 16 << 20
SEQ_RE = re.compile(r"[1-9][0-9]{0,8}")
EXITVAL_RE = re.compile(r"-?[0-9]{1,3}")
# ssh's own exit status: the connection was refused, failed or was lost
# (the runner's exit codes stop at 130).
SSH_LOST = 255
# How a try ends when its host, not its kernel, ended it (all of them
# analysis/tidy/boots.py's NOT_COUNTED): no meta.json came back (error:
# the host went away, or its runner died), QEMU killed there, its disk
# full, or what it sent refused (failed).
HOST_FAULTS = ("error", "killed", "nospace", "failed")
# Host-ended tries of one boot in one run before it waits for --resume.
MAX_HOST_FAULTS = 3
# The sshlogin of a hosts file's line: parallel's "N/" (cores) and
# "@GROUP/" prefixes off.
PREFIX_RE = re.compile(r"^(?:@[^/ ]*/)?(?:[0-9]+/)?")
PROBE_TIMEOUT_S = 120
# What every host is asked before a boot runs: its cores and CPU model as
# guest/qemu.py host_info reads them (the first "model name" line), and
# which of the programs a boot needs there (NEEDS, filled in: rsync and
# perl for parallel, the QEMU of each arch) it lacks: one tab-separated
# line.
PROBE_PY = ("import os,shutil;"
            "m=[l.split(':',1)[1].strip() for l in open('/proc/cpuinfo') "
            "if l.startswith('model name')];"
            "print('lockbench-host',os.cpu_count(),' '.join((m or ['unknown'])[0].split()),"
            "','.join(q for q in NEEDS if not shutil.which(q)) or '-',sep='\\t')")


class HostsError(CliError):
    pass


def check_hosts_file(path):
    """The sshlogins of the hosts file PATH; HostsError, one line naming
    the line, for a control character anywhere in it, a tab too: one
    sshlogin a line, its words separated by spaces, is the one format.
    parallel reads it line by line (a stray carriage return or an escape
    would name a host nobody meant) and writes the sshlogin into its
    tab-separated joblog (a tab made a host's name its exit value and
    parse_joblog died: issue #27)."""
    if not os.path.exists(path):
        raise HostsError(f"--hosts {path}: no such file")
    try:
        text = campaign_file.read_capped(path, 64 << 10).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise HostsError(f"--hosts {path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    for n, ln in enumerate(text.split("\n"), 1):
        bad = campaign_file.CONTROL_RE.search(ln)
        if bad:
            raise HostsError(f"--hosts {path}: line {n}: control character in sshlogin "
                             f"({bad.group()!r}): one sshlogin a line, words separated by spaces")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if not lines:
        raise HostsError(f"--hosts {path}: no sshlogin in it")
    return lines


def login_of(line):
    """The sshlogin of a hosts file's line, as parallel names it in its
    joblog and --tag: 'ssh -p 2222 user@host' of '2/ssh -p 2222 user@host'."""
    return PREFIX_RE.sub("", line, count=1).strip()


def host_name(login, logins=()):
    """What a line says a host is called: the sshlogin's last word
    ('user@host', 'lbhost2'), or the whole sshlogin where two of LOGINS
    end in the same word (one machine on two ports)."""
    words = str(login).split()
    last = words[-1] if words else str(login)
    same = [x for x in logins if (x.split() or [""])[-1] == last]
    return str(login) if len(same) > 1 else last


def one_line(text, n=200):
    """TEXT as one line of at most N characters (control characters, a
    host's \\r among them, made spaces)."""
    return re.sub(r"\s+", " ", campaign_file.CONTROL_RE.sub(" ", str(text))).strip()[:n]


def tagged(text):
    """{tag: [its lines]} of parallel's --tag / --tagstring output TEXT
    (ssh ends its messages with \\r\\n: both end a line here)."""
    out = {}
    for ln in re.split(r"[\r\n]+", text):
        tag, sep, rest = ln.partition("\t")
        if sep and rest.strip():
            out.setdefault(tag, []).append(rest.strip())
    return out


class HostsRefused(HostsError):
    """A host that cannot take boots, found before any boot ran."""


def probe(hosts_file, arches, cwd=None):
    """Ask every host of HOSTS_FILE what it is: {login: {"cpu_model",
    "cores"}}, read there.  HostsRefused, one line naming each host that
    did not answer (exit 2) or lacks /usr/bin/python3, rsync, perl or the
    QEMU of one of ARCHES (exit 3: ./run.sh setup there)."""
    logins = [login_of(x) for x in check_hosts_file(hosts_file)]
    found, gone = probe_live(hosts_file, arches, cwd)
    if gone:
        raise HostsRefused(f"--hosts {hosts_file}: " + "; ".join(
            f"{host_name(h, logins)} did not answer ({why})" for h, why in gone.items())
            + ": no boot was run (bring it up, or leave it out of the hosts file)")
    missing = {h: i["missing"] for h, i in found.items() if i["missing"]}
    if missing:
        e = HostsRefused(f"--hosts {hosts_file}: " + "; ".join(
            f"{host_name(h, logins)} lacks {', '.join(m)}" for h, m in missing.items())
            + ": run ./run.sh setup there; no boot was run")
        e.exit_code = 3
        raise e
    return {h: {"cpu_model": i["cpu_model"], "cores": i["cores"]} for h, i in found.items()}


def probe_live(hosts_file, arches, cwd=None):
    """Ask the hosts of HOSTS_FILE what they are, at once (parallel
    --nonall): ({login: {"cpu_model", "cores", "missing": [programs it
    lacks]}} of those that answered, {login: why not, in one line} of
    the others)."""
    want = [login_of(x) for x in check_hosts_file(hosts_file)]
    needs = ["rsync", "perl"] + sorted({qemu.arch_info(a)["qemu"] for a in arches})
    src = PROBE_PY.replace("NEEDS", repr(needs))
    cmd = [PARALLEL, "--sshloginfile", hosts_file, "--nonall", "--tag",
           f"/usr/bin/python3 -c {shlex.quote(src)}"]
    rc, out = run_parallel(cmd, cwd or os.getcwd(), PROBE_TIMEOUT_S)
    said = tagged(out)
    found, gone = {}, {}
    for h in want:
        info = None
        for ln in said.get(h, []):
            f = ln.split("\t")
            if len(f) == 4 and f[0] == "lockbench-host" and re.fullmatch(r"[0-9]{1,6}", f[1]):
                info = {"cores": int(f[1]), "cpu_model": one_line(f[2]) or "unknown",
                        "missing": [] if f[3] == "-" else [one_line(q, 60) for q in f[3].split(",")]}
        if info:
            found[h] = info
            continue
        why = one_line("; ".join(said.get(h, [])), 160) or (
            f"no answer within {PROBE_TIMEOUT_S} s" if rc == 124 else "no reply")
        gone[h] = why + (" (run ./run.sh setup there)" if "python3" in why else "")
    return found, gone


# The runner and what it imports or reads, as paths in the repository:
# all a host needs of the harness (the runner names targets and reads the
# arch and kernel tables with guest/variant_name.py, a job's lockload cases
# and their writers in the target files with guest/lockload_cases.py, and
# builds the host speed meter from its source with guest/hostspeed.py; its
# errors, clocks, files and lock are lockbench's, as every command's).  The
# host runs python3 -m guest.run_guest with payload/ as the root;
# tests/unit/test_hosts_payload.py holds this list to the runner's imports.
RUNNER_FILES = ("guest/__init__.py", "guest/run_guest.py", "guest/judge.py", "guest/collect.py",
                "guest/vcpu.py", "guest/hostspeed.py", "guest/point_files.py", "guest/meter/host_meter.c",
                "guest/job.py", "guest/lockload_cases.py", "guest/qemu.py",
                "guest/variant_name.py", "guest/inside/init.sh", "guest/arches.toml",
                "kernel-patches/kernels.toml",
                "lockbench/__init__.py", "lockbench/cli.py", "lockbench/defaults.py",
                "lockbench/dirlock.py", "lockbench/paths.py", "lockbench/safeio.py",
                "lockbench/workloads.py",
                *lockload_cases.target_files())


def make_payload(path, build, variants, job):
    """What a host needs to run boots: the runner, the artifacts, the job.
    PATH is a new file (safeio.open_new: never written through a link)."""
    with safeio.open_new(path, 0o644, binary=True) as out, \
            tarfile.open(fileobj=out, mode="w") as tar:
        for f in RUNNER_FILES:
            tar.add(os.path.join(ROOT, f), f"payload/{f}")
        arches = []
        for v in variants:
            arch = variant_name.split_name(v).arch
            arches += [] if arch in arches else [arch]
            for f in (variant_name.ARCHES[arch]["kernel"], "mbox_bench.ko", "build-meta.json"):
                tar.add(os.path.join(build, v, f), f"payload/build/{v}/{f}")
            # The file system writer of lockload's points, where built.
            if os.path.isfile(os.path.join(build, v, "fs_writer.ko")):
                tar.add(os.path.join(build, v, "fs_writer.ko"), f"payload/build/{v}/fs_writer.ko")
        for a in arches:
            rootfs = f"{variant_name.rootfs_dir(a)}/rootfs.cpio"
            tar.add(os.path.join(build, rootfs), f"payload/build/{rootfs}")
            lockload = f"lockload/{a}/lockload"
            if os.path.isfile(os.path.join(build, lockload)):
                tar.add(os.path.join(build, lockload), f"payload/build/{lockload}")
        tar.add(job, "payload/job.conf")


def parse_joblog(path):
    """({seq: (host, exit value)} of the jobs parallel finished, [a line for
    each row that is not a joblog row]).  Never raises: a joblog not there
    yet is empty, one that cannot be read is a line.  A garbled row that
    names its job (Seq) gives (None, None): that job failed; one that does
    not leaves its job unaccounted for (an `error` at the end).  Only
    whole lines are read: the last may be still being written."""
    if not os.path.lexists(path):
        return {}, []
    try:
        text = safeio.read_text(path, JOBLOG_MAX_BYTES)
    except safeio.Unsafe as e:
        return {}, [f"cannot read it: {e.why}"]
    done, bad = {}, []
    for n, line in enumerate(text.split("\n")[1:-1], 2):
        cols = line.split("\t")
        seq = SEQ_RE.fullmatch(cols[0])
        if (len(cols) == JOBLOG_COLS and seq and EXITVAL_RE.fullmatch(cols[6])
                and not campaign_file.CONTROL_RE.search(cols[1])):
            done.setdefault(int(cols[0]), (cols[1][:200], int(cols[6])))
            continue
        bad.append(f"line {n}: not a row of GNU parallel's joblog ({len(cols)} columns): "
                   + repr(line[:100])[:100])
        if seq:
            done.setdefault(int(cols[0]), (None, None))
    return done, bad


def scrub(path):
    """Remove from PATH (a returned boot directory or file) everything that
    is not a regular file or a directory, without following a link, and
    directories nested deeper than MAX_DEPTH; return what was removed
    (relative names)."""
    removed = []

    def visit(p, depth):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode) and depth <= MAX_DEPTH:
            for name in sorted(os.listdir(p)):
                visit(os.path.join(p, name), depth + 1)
        elif stat.S_ISDIR(st.st_mode):
            shutil.rmtree(p)
            removed.append(os.path.relpath(p, os.path.dirname(path)) + "/ (too deep)")
        elif not stat.S_ISREG(st.st_mode):
            os.unlink(p)
            removed.append(os.path.relpath(p, os.path.dirname(path)))
    visit(path, 0)
    return removed


def parallel_cmd(hosts, *args):
    """parallel on the hosts, with the rsync options above."""
    return [PARALLEL, "--sshloginfile", hosts, "--rsync-opts", RSYNC_OPTS, *args]


def popen_parallel(cmd, **kw):
    """parallel, in its own session (a SIGINT to the harness's group is
    the harness's to handle), and TERMed if the harness dies even by
    SIGKILL: a TERMed parallel kills its jobs, ssh, and the remote side
    kills the runner when its ssh goes (parallel(1), --termseq)."""
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=qemu.die_with_parent(signal.SIGTERM), **kw)


def run_parallel(cmd, cwd, timeout):
    """popen_parallel to its end: (exit status, its output)."""
    proc = popen_parallel(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()
        out, _ = proc.communicate()
        return 124, out.decode(errors="replace") + f" (timed out after {timeout} s)"
    return proc.returncode, out.decode(errors="replace")


def run(d, man, hosts_file, finish_boot, prog, stop, probed=None):
    """Run every boot not done on the hosts; finish_boot(boot, tmp, problem,
    lost, host) each, problem a line when the host sent what no runner
    writes, lost one when nothing came back because the host went away.
    PROBED: what probe() said of the hosts just now (else asked here)."""
    check_hosts_file(hosts_file)
    # Where rsync brings the boots back and they are cleared: no link.
    safeio.check_dir(os.path.join(d, "cells"))
    hosts = os.path.abspath(hosts_file)
    c = man.data["campaign"]
    if probed is None:
        probed = probe(hosts, c["arches"], d)
    # What each host is, read there (the runner's meta.json says it again
    # for each boot it ran); a record that is not a table is replaced.
    if not isinstance(man.data.get("hosts"), dict):
        man.data["hosts"] = {}
    man.data["hosts"].update(probed)
    # This run's own folder on the hosts: a --resume, or another campaign
    # whose directory has the same name, never shares it (the token).
    remote = campaign_manifest.remote_name(d)
    man.data.setdefault("hosts_remote", []).append(remote)
    man.save()
    try:
        run_boots(d, man, hosts, remote, finish_boot, prog, stop)
    finally:
        # This run's folder, and those of earlier runs killed outright
        # (their parallel, and so their boots, died with them).
        gone = [r for r in man.data["hosts_remote"] if campaign_manifest.is_remote(d, r)]
        rc, out = run_parallel(parallel_cmd(hosts, "--nonall", "--tag",
                                            "rm -rf " + " ".join(map(shlex.quote, gone))), d, 300)
        if rc:
            logins = [login_of(x) for x in check_hosts_file(hosts)]
            why = "; ".join(f"{host_name(t, logins)}: {one_line(' '.join(ls), 120)}"
                            for t, ls in tagged(out).items()) or one_line(out)[-200:]
            prog.say(f"campaign: could not remove {remote} on every host ({why}); "
                     f"a later --resume with --hosts removes it")
        for f in os.listdir(d):
            if f.startswith(".hosts-"):
                with contextlib.suppress(OSError):  # (a directory: not ours)
                    os.unlink(os.path.join(d, f))


def run_boots(d, man, hosts, remote, finish_boot, prog, stop):
    copy_payload(d, man, hosts, remote, prog)
    lines = {login_of(x): x for x in check_hosts_file(hosts)}
    run_groups(d, man, lines, Run(d, man, remote, finish_boot, prog, stop, list(lines)),
               prog, stop)


def copy_payload(d, man, hosts, remote, prog):
    """The kernels, modules, root fs, runner and job to every host, once."""
    c = man.data["campaign"]
    payload = ".hosts-payload.tar"
    booted = list(dict.fromkeys(campaign_file.booted_variant(c, v) for v in c["variants"]))
    # A boot variant is another variant's kernel with kernel parameters
    # that live in its file here, not on the hosts.
    boots_other = [v for v in booted if variant_name.boot_spec(variant_name.split_name(v).name)[1]]
    if boots_other:
        raise HostsError(f"variant {boots_other[0]} boots another variant's kernel with its "
                         f"own kernel parameters: run it on this host, not with --hosts")
    make_payload(os.path.join(d, payload), BUILD, booted, os.path.join(d, "job.conf"))
    prog.say(f"campaign: copying kernels, modules and root fs to the hosts of {hosts}")
    rc, out = run_parallel(parallel_cmd(hosts, "--nonall", "--wd", remote, "--basefile", payload,
                                        f"rm -rf payload && tar xf {payload}"), d, 1800)
    os.unlink(os.path.join(d, payload))
    if rc:
        raise HostsError(f"copying to the hosts failed: {out.strip()[-300:]}")


def run_groups(d, man, lines, run, prog, stop):
    """Each vCPU count's boots not done, in passes of RUN (Run.one_pass) on
    the hosts of LINES ({login: its line of the hosts file}): after a
    pass, the boots a known host ended (HOST_FAULTS) go again on the
    hosts that ended none of this vCPU count's, each boot at most
    MAX_HOST_FAULTS times in this run; a host whose ssh failed (exit 255: it went away) is left out for
    the rest of the run.  With no host left the boots wait for --resume."""
    logins = list(lines)
    live = list(logins)  # the hosts that answer, as far as this run knows
    for cpus in sorted({x["cpus"] for x in man.data["cells"]}):
        boots = [x for x in man.data["cells"] if x["state"] not in ("done", "unneeded")
                 and x["cpus"] == cpus]
        faults = {}  # boot id: tries its hosts ended in this run
        ended_one = set()  # the hosts that ended a try of this vCPU count
        use = live
        if boots and not stop and not use:
            prog.say(f"campaign: the {len(boots)} boot(s) of {cpus} vCPU(s) wait for "
                     f"--resume: no host answers")
        while boots and not stop and use:
            ended = run.one_pass(hosts_file(d, lines, use), cpus, boots)
            # The tries a known host ended: tried again on the others.
            by, gone = {}, []
            for x, host, lost in ended:
                faults[x["id"]] = faults.get(x["id"], 0) + 1
                by.setdefault(host, []).append(x)
                gone += [host] if lost and host not in gone else []
            again = [x for xs in by.values() for x in xs if faults[x["id"]] < MAX_HOST_FAULTS]
            live = [h for h in live if h not in gone]
            if gone:
                prog.say(f"campaign: {', '.join(host_name(h, logins) for h in gone)} went "
                         f"away (ssh exit 255): left out for the rest of this run")
            if not again or stop:
                break
            ended_one |= set(by)
            use = [h for h in live if h not in ended_one]
            names = ", ".join(host_name(h, logins) for h in by)
            if not use:
                prog.say(f"campaign: {len(again)} boot(s) that {names} ended wait for "
                         f"--resume: no other host is left")
                break
            prog.say(f"campaign: {len(again)} boot(s) that {names} ended: again on "
                     + ", ".join(host_name(h, logins) for h in use))
            boots = again


def hosts_file(d, lines, use):
    """A hosts file in D for one pass: the lines ({login: line}) of the
    hosts USE."""
    name = f".hosts-{secrets.token_hex(4)}"
    with safeio.open_new(os.path.join(d, name), 0o644) as f:
        f.write("".join(lines[h] + "\n" for h in use))
    return os.path.join(d, name)


class Pass:
    """One hand-out of boots to parallel: the boots (of CPUS vCPUs), the
    names they run under on the hosts, parallel's files, and what came
    of them so far."""

    def __init__(self, cpus, boots, names, log, errpath):
        self.cpus, self.boots, self.names, self.log, self.errpath = (cpus, boots, names, log,
                                                                     errpath)
        self.finished, self.said, self.faulted = set(), set(), []


class Run:
    """The passes of one --hosts run: each hands boots to parallel once
    and finishes every boot that ends."""

    def __init__(self, d, man, remote, finish_boot, prog, stop, logins):
        self.d, self.man, self.remote = d, man, remote
        self.finish_boot, self.prog, self.stop, self.logins = finish_boot, prog, stop, logins
        self.done_count = sum(x["state"] == "done" for x in man.data["cells"])

    def one_pass(self, hosts, cpus, boots):
        """Run BOOTS (of CPUS vCPUs) on HOSTS once; [(boot, host login,
        whether the host went away)] of those whose try a known host
        ended (HOST_FAULTS)."""
        p, proc = self.start(hosts, cpus, boots)
        self.follow(p, proc)
        self.end(p)
        return p.faulted

    def start(self, hosts, cpus, boots):
        """Name BOOTS for the hosts, start parallel on them and mark them
        running: (the Pass, parallel's process)."""
        d, man = self.d, self.man
        c = man.data["campaign"]
        tag = secrets.token_hex(3)
        inp = os.path.join(d, f".hosts-c{cpus}-{tag}.in")
        log = os.path.join(d, f".hosts-c{cpus}-{tag}.joblog")
        # On the hosts a boot runs in cells/.tmp-cN-SEQ, renamed to
        # cells/.tmp-ID once back: parallel quotes a name with '@' (an arm64
        # target's), and --return then asks rsync for the quoted name.  SEQ
        # counts on across runs (hosts_seq): a --resume never reuses the
        # name of a boot that an earlier run may still be running.
        first = man.data.get("hosts_seq", 0) + 1
        names = [f"c{cpus}-{i:05d}" for i in range(first, first + len(boots))]
        man.data["hosts_seq"] = first + len(boots) - 1
        with safeio.open_new(inp, 0o644) as f:
            for x, name in zip(boots, names):
                f.write(f"{name} {campaign_file.booted_variant(c, x['variant'])}\n")
        # Nothing where parallel writes its joblog and rsync the boots: a
        # link there would be written through.
        for p in [log] + [os.path.join(d, "cells", f".tmp-{n}{s}") for n in names
                          for s in ("", ".log")]:
            dirlock.clear(p)
        cmd = self.command(hosts, cpus, boots, inp, log)
        # Its messages to a file: a pipe read only at the end would fill
        # and stall parallel (a host can make rsync say a lot).
        errpath = os.path.join(d, f".hosts-c{cpus}-{tag}.err")
        with safeio.open_new(errpath, 0o644, binary=True) as errf:
            proc = popen_parallel(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=errf)
        for x in boots:
            x["state"] = "running"
        man.save()
        return Pass(cpus, boots, names, log, errpath), proc

    def command(self, hosts, cpus, boots, inp, log):
        """parallel's command line: each line of INP (a boot's name and
        the variant it boots) run on HOSTS, its boot folder and log sent back."""
        c = self.man.data["campaign"]
        # Variant names are checked ([a-z0-9_-], and '@' before an arch)
        # before they get here; parallel quotes {1} and {2} itself, the
        # rest is quoted here.  --tagstring: what ssh and rsync say of a
        # job comes out under the boot's name.
        q = shlex.quote
        # The runner is the package payload/guest/ (PYTHONPATH: the payload
        # is the root, from the run's folder, so the job and the boot keep
        # their paths); it finds its build/ beside its guest/: payload/build.
        return parallel_cmd(
            hosts, "--wd", self.remote, "--colsep", " ", "--tagstring", "{1}",
            "-j", f"{max(1, 100 // cpus)}%", "--joblog", log, "-a", inp,
            "--return", "cells/.tmp-{1}", "--return", "cells/.tmp-{1}.log",
            f"rm -rf cells/.tmp-{{1}}; mkdir -p cells && env PYTHONPATH=payload /usr/bin/python3 "
            f"-m guest.run_guest {{2}} --cpus {q(str(cpus))} --mem {q(str(c['mem_mb']))} "
            + (f"--clock {q(boots[0]['clock'])} " if boots[0].get("clock", WALL) != WALL
               else "")
            + (f"--silence {q(str(c['silence_s']))} " if c.get("silence_s") else "")
            + ("--no-meter " if c.get("meter") is False else "")
            + "--job payload/job.conf --out cells/.tmp-{1} >cells/.tmp-{1}.log 2>&1")

    def follow(self, p, proc):
        """Finish each boot of pass P as its row appears in parallel's
        joblog, until parallel ends (stopped on a stop)."""
        termed = 0
        while True:
            if self.stop and termed < 2 and proc.poll() is None:
                # parallel: a TERM kills its jobs (older ones: the first
                # TERM stops new jobs, the second kills them).
                proc.send_signal(signal.SIGTERM)
                termed += 1
            # Known before the joblog is read: every row of a parallel that
            # has ended is in it, so that this pass is the last.
            ended = proc.poll() is not None
            rows, bad = parse_joblog(p.log)
            for b in bad:
                if b not in p.said:
                    p.said.add(b)
                    self.prog.say(f"campaign: {p.log}: {b}")
            for seq, (host, rc) in rows.items():
                if seq in p.finished or seq > len(p.boots):
                    continue
                self.back(p, seq - 1, [] if host is not None else
                          ["refused: its row in parallel's joblog is garbled"], host, rc)
            if ended:
                break
            time.sleep(0.5)

    def back(self, p, i, problems, host=None, rc=None):
        """Boot i of pass P came back, or its host went away: scrub what
        came, move it into place, finish it."""
        d, man, prog = self.d, self.man, self.prog
        p.finished.add(i + 1)
        x = p.boots[i]
        came = os.path.join(d, "cells", f".tmp-{p.names[i]}")
        tmp = os.path.join(d, "cells", f".tmp-{x['id']}")
        # Before anything reads it: regular files and directories only.
        removed = scrub(came) + scrub(came + ".log")
        if removed:
            problems.append(
                f"refused: the host sent {len(removed)} file(s) that are not regular "
                f"files or directories: {', '.join(removed[:3])}"
                + (", ..." if len(removed) > 3 else ""))
        name = host_name(host, self.logins) if host else None
        lost = None
        if rc == SSH_LOST and not os.path.lexists(os.path.join(came, "meta.json")):
            said_ = tagged(tail(p.errpath, 64 << 10)).get(p.names[i], [])
            ssh = [s for s in said_ if s.startswith("ssh")] or said_
            lost = (f"host {name} went away or refused the connection (ssh exit 255"
                    + (f": {one_line(ssh[0], 120)}" if ssh else "") + "): nothing came back")
        make_way(tmp)
        for suffix in ("", ".log"):
            if os.path.lexists(came + suffix):
                # through cells/' descriptor (make_way cleared tmp)
                campaign_boot.rename(came + suffix, tmp + suffix, replace=True)
        meta = self.finish_boot(x, tmp, "; ".join(problems) or None, lost, host)
        if host is not None:
            x["host"] = host
            kind = host_kind((meta or {}).get("host")) or \
                host_kind((man.data.get("hosts") or {}).get(host))
            if kind:
                # what the runner read there (else what the host said
                # when probed): the kind of machine the boot ran on
                x["host_cpu"] = kind
            man.save()
        if x["state"] == "done":
            self.done_count += 1
            prog.walls.append(x.get("wall_s") or 0)
        else:
            if host is not None and x["state"] in HOST_FAULTS and not self.stop:
                p.faulted.append((x, host, lost is not None))
            prog.say(f"campaign: boot {x['id']} on {name or '?'}: "
                     f"{campaign_boot.ended_words(x)}")
        prog.show(self.done_count, [y["id"] for y in p.boots if y["state"] == "running"])

    def end(self, p):
        """After parallel: what came back without a row, and every boot of
        pass P still running, ended and saved."""
        d, stop = self.d, self.stop
        # A job whose files came back and whose row did not (garbled past
        # naming its job): kept aside, failed, not left in cells/.
        for i, x in enumerate(p.boots):
            if x["state"] == "running" and not stop and \
                    os.path.lexists(os.path.join(d, "cells", f".tmp-{p.names[i]}")):
                self.back(p, i, ["refused: no readable row for it in parallel's joblog"])
        err = tail(p.errpath, 4096)
        for x in p.boots:
            if x["state"] == "running":
                x["state"] = "interrupted" if stop else "error"
                x["problems"] = [re.sub(r"\s+", " ", err)[-300:]] if err else []
        self.man.save()


def host_kind(info):
    """{"cpu_model", "cores"} of a host as its runner's meta.json or the
    probe says it, checked (a host is not trusted: one line of at most 200
    characters, a whole number of cores), or None."""
    if not isinstance(info, dict):
        return None
    model, cores = info.get("cpu_model"), info.get("cores")
    if not isinstance(model, str) or type(cores) is not int or not 0 < cores < 1 << 20:
        return None
    return {"cpu_model": one_line(model) or "unknown", "cores": cores}


def make_way(tmp):
    """Make way for a returned boot at TMP (cells/.tmp-ID); HostsError when
    a runner of this host is at work there (dirlock.clear)."""
    if not dirlock.clear(tmp):
        raise HostsError(f"{tmp}: a runner is at work in it (another campaign's?)")


def tail(path, n):
    """The last N bytes of the file at PATH as text, read through no link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ""
        f.seek(max(0, st.st_size - n))
        return f.read(n).decode(errors="replace").strip()
