# SPDX-License-Identifier: GPL-2.0
"""The QEMU side of a boot (guest/run_guest.py runs it): what a target's
boot needs and where it is (the kernel, module and root fs of
build/VARIANT, guest/arches.toml's QEMU machine), the initrd, the one
QEMU command line, a QEMU that dies with its runner, and the watch over
a running guest's console and results stream (limits, a full disk).
What the console says is judged in guest/judge.py; what comes back is
checked in guest/collect.py."""
import os
import re
import select
import shutil
import subprocess
import tempfile
import time

from guest import judge
from guest.collect import NOSPACE, write_all
from guest.judge import RunError, split_lines
from guest.vcpu import note_run_mark
from guest import variant_name
from lockbench.defaults import ICOUNT, WALL
from lockbench.paths import BUILD, ROOT

INIT = os.path.join(ROOT, "guest", "inside", "init.sh")

# A results stream stalled with less than this free is a full disk, not a
# hung guest (ext4 keeps some blocks even from root).
LOW_SPACE = 16 << 20


def target(name):
    """(variant, arch, kernel, label) of VARIANT[@ARCH][@VERSION]; RunError
    2 if bad."""
    try:
        variant, arch, kernel = variant_name.split_name(name)
    except variant_name.VariantError as e:
        raise RunError(2, str(e)) from None
    return variant, arch, kernel, variant_name.join_name(variant, arch, kernel)


def arch_info(arch):
    """What builds and boots arch (guest/arches.toml): {"kernel", "qemu",
    "machine", "cpu", "console", "gicv2_max_cpus", ...}."""
    return variant_name.ARCHES[arch]


def rootfs_path(arch):
    """The guest root file system of arch's guests."""
    return os.path.join(BUILD, variant_name.rootfs_dir(arch), "rootfs.cpio")


def artifacts(name):
    """The files that boot target NAME: a boot variant's are its booted variant's
    (guest/variant_name.py boot_spec), with "cmdline" its kernel parameters."""
    variant, arch, kernel, label = target(name)
    try:
        booted, cmdline = variant_name.boot_spec(variant)
    except variant_name.VariantError as e:
        raise RunError(2, str(e)) from None
    if booted != variant:
        label = variant_name.join_name(booted, arch, kernel)
    vdir = os.path.join(BUILD, label)
    if not os.path.isdir(vdir) and variant_name.find_file(variant) is None:
        known = ", ".join(variant_name.variant_names())
        raise RunError(2, f"unknown variant {variant!r} (known: {known}; "
                          f"{variant_name.ADD_FOLDER})")
    need = {"kernel": os.path.join(vdir, arch_info(arch)["kernel"]),
            "mbox_bench.ko": os.path.join(vdir, "mbox_bench.ko"),
            "build-meta.json": os.path.join(vdir, "build-meta.json")}
    for path in need.values():
        if not os.path.isfile(path):
            raise RunError(3, f"variant {label!r} is not built ({path} missing): run ./run.sh build {label}")
    rootfs = rootfs_path(arch)
    if not os.path.isfile(rootfs):
        raise RunError(3, f"no guest root file system ({rootfs}): run ./run.sh build"
                       + ("" if arch == variant_name.DEFAULT_ARCH else f" {label}"))
    need["rootfs"] = rootfs
    need["arch"] = arch
    need["cmdline"] = cmdline
    # The userspace load generator (guest/inside/build-lockload.sh) and the file
    # system writer module: optional, a job that needs them is checked in
    # make_initrd().
    need["lockload"] = lockload_path(arch)
    need["fs_writer.ko"] = os.path.join(vdir, "fs_writer.ko")
    return need


def lockload_path(arch):
    """The static lockload binary for arch's guests."""
    return os.path.join(BUILD, "lockload", arch, "lockload")


# What a job needs beyond the module: a pattern of its text, and why.
NEEDS = {"lockload": (r"\bworkload=(?!module\b)", "runs lockload"),
         "fs_writer.ko": (r"\bwriter_hz=0*[1-9]", "runs the fs_writer module")}


def make_initrd(path, art, job_text):
    """The root fs cpio followed by a second cpio with init, module, job."""
    if not shutil.which("cpio"):
        raise RunError(3, "missing 'cpio': run ./run.sh setup")
    with tempfile.TemporaryDirectory() as stage:
        shutil.copy(INIT, os.path.join(stage, "init"))
        os.chmod(os.path.join(stage, "init"), 0o755)
        shutil.copy(art["mbox_bench.ko"], os.path.join(stage, "mbox_bench.ko"))
        names = ["init", "mbox_bench.ko"]
        # lockload and fs_writer.ko go in when built: a job whose points
        # run a workload (guest/JOB.md) needs them.
        for name in ("lockload", "fs_writer.ko"):
            src = art.get(name)
            if src and os.path.isfile(src):
                shutil.copy(src, os.path.join(stage, name))
                os.chmod(os.path.join(stage, name), 0o755 if name == "lockload" else 0o644)
                names.append(name)
            elif job_text is not None and re.search(NEEDS[name][0], job_text):
                raise RunError(3, f"the job {NEEDS[name][1]} but {src} is missing: "
                               "run ./run.sh build (the target of this boot)")
        if job_text is not None:
            os.mkdir(os.path.join(stage, "job"))
            with open(os.path.join(stage, "job", "job.conf"), "w") as f:
                f.write(job_text)
            names += ["job", "job/job.conf"]
        cp = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"],
                            input="\n".join(names).encode(), cwd=stage,
                            capture_output=True, check=False)
        if cp.returncode:
            raise RunError(1, f"cpio failed: {cp.stderr.decode().strip()}")
    with open(path, "wb") as out:
        with open(art["rootfs"], "rb") as f:
            shutil.copyfileobj(f, out)
        out.write(cp.stdout)


# QEMU's instruction counter as the guest's clock: each instruction
# advances it by 2^ICOUNT_SHIFT ns, so at shift 0 a guest nanosecond is an
# instruction; sleep=off lets an idle guest's clock jump to its next timer
# at once instead of waiting for the host's time.  It needs single-
# threaded TCG (docs/icount.md).
ICOUNT_SHIFT = 0
def clock_meta(clock):
    """meta.json's record of a boot's clock."""
    if clock == ICOUNT:
        return {"kind": ICOUNT, "shift": ICOUNT_SHIFT, "sleep": False,
                "means": "instructions (QEMU icount): 1 guest ns = "
                         f"{2 ** ICOUNT_SHIFT} instruction"}
    return {"kind": WALL}


def qemu_cmd(art, cpus, mem, initrd, results=None, clock=WALL):
    """The one place the QEMU command is assembled."""
    a = arch_info(art["arch"])
    # GICv2 (-M virt's default) stops at 8 CPUs.
    machine = a["machine"] + (",gic-version=3" if cpus > a["gicv2_max_cpus"] else "")
    accel = ["-accel", "tcg,thread=multi"]
    if clock == ICOUNT:
        accel = ["-accel", "tcg,thread=single", "-icount",
                 f"shift={ICOUNT_SHIFT},sleep=off"]
    # debug-threads=on names the vCPU threads "CPU N/TCG" (else every
    # thread is "qemu-system-arm"): the host-steal sampler finds them so.
    cmd = [a["qemu"], "-M", machine, "-cpu", a["cpu"], *accel,
           "-name", "lockbench,debug-threads=on",
           "-smp", str(cpus), "-m", str(mem), "-no-reboot", "-nic", "none",
           "-kernel", art["kernel"], "-initrd", initrd,
           "-append", f"console={a['console']} panic=-1 loglevel=6"
           + (f" {art['cmdline']}" if art.get("cmdline") else "")]
    if results is None:
        return cmd + ["-nographic"]
    return cmd + ["-display", "none", "-monitor", "none", "-serial", "stdio",
                  "-device", "virtio-serial-device",
                  "-chardev", "file,id=results,path=" + results.replace(",", ",,"),
                  "-device", "virtserialport,chardev=results,name=lockbench.results"]


def die_with_parent(sig):
    """A preexec_fn: the child gets SIG when its parent dies, even by SIGKILL,
    so that no QEMU outlives a killed harness.  Call it in the parent."""
    parent = os.getpid()

    def set_pdeathsig():
        import ctypes
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG
        # A parent that died between fork() and prctl() sends nothing:
        # the child was reparented, so it signals itself (prctl(2)).
        if os.getppid() != parent:
            os.kill(os.getpid(), int(sig))
    return set_pdeathsig


def host_info(qemu):
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        qv = subprocess.run([qemu, "--version"], capture_output=True, text=True,
                            check=False).stdout.splitlines()[0]
    except (OSError, IndexError):
        qv = "unknown"
    return {"cpu_model": model, "cores": os.cpu_count(), "qemu_version": qv,
            "accel": "tcg"}


def free_bytes(path):
    """Bytes this process may still write on path's file system."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize


class _Watch:
    """What watch() keeps from one read of the console to the next: the
    clocks its limits run on, and what the scan found so far."""

    def __init__(self, proc, limit, silence, results_path, events, problems, marks,
                 lockdep_silence):
        self.start = self.last = time.monotonic()
        self.last_size = 0
        self.full_since = None
        self.proc, self.limit, self.results_path = proc, limit, results_path
        self.rdir = os.path.dirname(os.path.abspath(results_path))
        self.events, self.problems, self.marks = events, problems, marks
        self.lockdep_silence = lockdep_silence
        self.counts = {}
        # the silence limit now, and why it is that
        self.quiet_s, self.quiet_why = silence, ""

    def scan(self, raw):
        """Note one console line: its markers in events, a point's run
        marks, what judge makes of it in problems."""
        line = raw.decode("utf-8", "replace").rstrip("\r")
        t = round(time.monotonic() - self.start, 3)
        for name in ("LOCKBENCH-INIT", "LOCKBENCH-JOB-END"):
            if name in line and name not in self.events:
                self.events[name] = t
        if "lockbench: point " in line and " start " in line:
            self.events.setdefault("first-point", t)
        if self.marks is not None:
            note_run_mark(line, t, self.proc.pid, self.marks)
        state = judge.console_state(line)
        if state:
            if state == "lockdep" and self.lockdep_silence and \
                    self.lockdep_silence < self.quiet_s:
                self.quiet_s = self.lockdep_silence
                self.quiet_why = " after lockdep's report (a deadlock)"
            judge.note_console(self.problems, self.counts, state, t, line)

    def limit_hit(self, now):
        """(state, why) when a limit is reached at NOW: the wall clock,
        the results disk full, or neither console nor results moved for
        the silence limit; else None.  Results that grow count as life."""
        if now - self.start > self.limit:
            return ("hung", f"wall-clock limit of {self.limit:.0f} s reached")
        try:
            size = os.path.getsize(self.results_path)
        except OSError:
            size = 0
        if size != self.last_size:
            self.last_size, self.last = size, now
        free = free_bytes(self.rdir)
        if free == 0:
            self.full_since = self.full_since or now
            if now - self.full_since > 3:
                return ("nospace", f"no space left on the results disk ({self.rdir})")
        else:
            self.full_since = None
        if now - self.last > self.quiet_s:
            if free is not None and free < LOW_SPACE:
                return ("nospace", f"results stalled for {self.quiet_s:.0f} s with "
                        f"{free >> 10} KiB left on the results disk ({self.rdir})")
            return ("hung", f"no console output or results for "
                    f"{self.quiet_s:.0f} s{self.quiet_why}")
        return None


def watch(proc, console_path, limit, silence, results_path, events, problems,
          on_output=None, marks=None, lockdep_silence=None):
    """Stream the console to a file (its first judge.CONSOLE_MAX bytes:
    judge.console_part), scan all of it, enforce the limits.

    Fills events (marker name -> seconds since start it was seen) and
    problems as it goes, so that they survive an interrupt.  Returns None,
    or (state, why) when the runner stopped the guest: "hung" or "nospace"
    (QEMU blocks the guest's results port while the results disk is full).
    on_output is called once, at the guest's first output.  marks (point
    id -> {}) gets, at each point's run-begin and run-end marker, the time
    and a snapshot of QEMU's vCPU threads (note_run_mark).  Once lockdep
    has reported, the silence limit drops to lockdep_silence: a lock that
    deadlocks spins without a word, and the boot is lost either way.
    """
    w = _Watch(proc, limit, silence, results_path, events, problems, marks, lockdep_silence)
    pending = bytearray()
    fd = proc.stdout.fileno()
    stopped = None
    seen = 0  # console bytes read (console.log keeps judge.CONSOLE_MAX of them)
    # Unbuffered: a full disk fails the write that hit it, nothing later.
    with open(console_path, "wb", buffering=0) as con:
        while True:
            stopped = w.limit_hit(time.monotonic())
            if stopped:
                break
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            data = os.read(fd, 65536)
            if not data:
                break
            w.last = time.monotonic()
            if on_output:
                on_output()
                on_output = None
            try:
                write_all(con, judge.console_part(seen, data))
            except OSError as e:
                if e.errno not in NOSPACE:
                    raise
                stopped = ("nospace", f"cannot write {console_path}: {e.strerror}")
                break
            seen += len(data)
            for raw in split_lines(pending, data):
                w.scan(raw)
    w.scan(pending)  # an unterminated last line: already in console.log
    return stopped


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
