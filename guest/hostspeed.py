# SPDX-License-Identifier: GPL-2.0
"""The host's speed while a wall-clock guest runs (guest/meter/README.md):
start guest/meter/host_meter on the host cores the vCPUs run on, keep its
samples in the run directory (host-meter.log), and write each point's
share, between its run-begin and run-end markers, into
points/ID/host-meter.txt (format: guest/JOB.md).  Used by
guest/run_guest.py; not under icount, where the guest's time is its
instruction count and the host's speed moves nothing."""
import hashlib
import os
import statistics
import subprocess

from guest import point_files
from lockbench import paths, safeio

METER_FILE = "host-meter.txt"
METER_LOG = "host-meter.log"
METER_MAGIC = "lockbench-host-meter v1"
METER_COLUMNS = ("cpu", "samples", "median_ns", "mean_ns", "min_ns", "max_ns")
#: one sample per core every PERIOD_MS (a 1000 ms point gets ~50 a core)
PERIOD_MS = 20
#: the fixed work's length: ~13 us on this project's 2-core EPYC host; with
#: its wake-ups the meter takes ~0.5% of each core (docs/measurements.md)
WORK = 8000
SOURCE = os.path.join(paths.ROOT, "guest", "meter", "host_meter.c")
CFLAGS = ("-O2", "-Wall", "-Wextra", "-Werror", "-pthread")
SOURCE_MAX_BYTES = 1 << 20
#: host-meter.log read back: 100 lines a second of ~45 bytes, hours of it
LOG_MAX_BYTES = 256 << 20


def meter_binary(build=None):
    """BUILD/host-meter/host_meter, compiled now with the host's gcc if it
    is not there or not from this source, flags and compiler (the key in
    inputs.sha256); (path, None) or (None, why not).  Runners side by
    side may compile at once: each into its own file, renamed into place."""
    out = os.path.join(build or paths.BUILD, "host-meter")
    binary, keyfile = os.path.join(out, "host_meter"), os.path.join(out, "inputs.sha256")
    try:
        src = safeio.read_bytes(SOURCE, SOURCE_MAX_BYTES)
        cc = subprocess.run(["gcc", "--version"], capture_output=True, text=True,
                            timeout=30).stdout.split("\n")[0]
    except OSError as e:
        return None, f"cannot build host_meter: {e.filename or 'gcc'}: {e.strerror or e}"
    except subprocess.TimeoutExpired:
        return None, "cannot build host_meter: gcc --version hung"
    key = hashlib.sha256(src + " ".join(CFLAGS).encode() + cc.encode()).hexdigest()
    try:
        if safeio.read_text(keyfile, 4096).strip() == key and os.path.isfile(binary):
            return binary, None
    except OSError:  # not built yet (safeio.Unsafe is one too)
        pass
    os.makedirs(out, exist_ok=True)
    tmp = f"{binary}.{os.getpid()}"
    try:
        r = subprocess.run(["gcc", *CFLAGS, "-o", tmp, SOURCE], capture_output=True,
                           text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"cannot build host_meter: {e}"
    if r.returncode:
        first = (r.stderr.strip().splitlines() or ["?"])[0]
        return None, f"host_meter did not build: {first}"
    os.replace(tmp, binary)
    with safeio.open_new(f"{keyfile}.{os.getpid()}") as f:
        f.write(key + "\n")
    os.replace(f"{keyfile}.{os.getpid()}", keyfile)
    return binary, None


def meter_cores(pin):
    """The host cores to measure: the vCPUs' where the pin was applied,
    else every core this runner may use (where QEMU's threads may run)."""
    if pin and pin.get("applied"):
        return sorted({c for t in pin["threads"].values() for c in t["cores"]})
    return sorted(os.sched_getaffinity(0))


def start_meter(out, cores, preexec_fn=None):
    """Start host_meter on cores, its lines into OUT/host-meter.log;
    (Popen, None) or (None, why not)."""
    binary, why = meter_binary()
    if binary is None:
        return None, why
    try:
        with safeio.open_new(os.path.join(out, METER_LOG), binary=True) as log:
            proc = subprocess.Popen(
                [binary, "--cpus", ",".join(map(str, cores)), "--period-ms", str(PERIOD_MS),
                 "--work", str(WORK)], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.DEVNULL, preexec_fn=preexec_fn)
    except OSError as e:
        return None, f"cannot start host_meter: {e.strerror or e}"
    return proc, None


def stop_meter(proc):
    """Stop host_meter (its log stays); the CPU seconds it used (its
    /proc/PID/stat utime + stime, read before the stop), None if unread."""
    if proc is None:
        return None
    try:
        fields = safeio.read_text(f"/proc/{proc.pid}/stat", 4096).rsplit(")", 1)[1].split()
        cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        cpu_s = None
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return cpu_s


def read_samples(path):
    """[(t_ns, cpu, work_ns)] of host-meter.log, and its header's work and
    period; a line cut by the stop (the last) is skipped."""
    samples, head = [], {}
    text = safeio.read_text(path, LOG_MAX_BYTES)
    for n, line in enumerate(text.splitlines(keepends=True)):
        words = line.split()
        if n == 0:
            if " ".join(words[:2]) == METER_MAGIC:
                head = dict(w.split("=", 1) for w in words[2:] if "=" in w)
            continue
        if not line.endswith("\n") or len(words) != 4 or words[0] != "sample":
            continue
        try:
            kv = dict(w.split("=", 1) for w in words[1:])
            samples.append((int(kv["t_ns"]), int(kv["cpu"]), int(kv["work_ns"])))
        except (KeyError, ValueError):
            continue
    return samples, head


def mark_ns(snapshot):
    """The host monotonic time (ns) of a marker's snapshot of QEMU's
    threads (vcpu.vcpu_snapshot: each thread stamped as read); None if
    none was read."""
    stamps = sorted(s[1] for s in snapshot.values())
    return stamps[len(stamps) // 2] if stamps else None


def window_rows(samples, t0, t1):
    """One dict per core: its samples between t0 and t1 (ns)."""
    per = {}
    for t, cpu, ns in samples:
        if t0 <= t <= t1:
            per.setdefault(cpu, []).append(ns)
    return [{"cpu": cpu, "samples": len(v), "median_ns": statistics.median(v),
             "mean_ns": statistics.fmean(v), "min_ns": min(v), "max_ns": max(v)}
            for cpu, v in sorted(per.items())]


def meter_text(point_id, mark, head, rows):
    """host-meter.txt of one point (format: guest/JOB.md)."""
    (tb, _), (te, _) = mark["begin"], mark["end"]
    lines = [METER_MAGIC,
             f"# point {point_id}: host_meter samples between the console markers run-begin "
             f"(runner t={tb:.3f} s) and run-end (t={te:.3f} s)",
             f"# each sample: {head.get('work', '?')} iterations of a register-only chain, "
             f"every {head.get('period_ms', '?')} ms on each core, wall time in ns",
             "\t".join(METER_COLUMNS)]
    for r in rows:
        lines.append("\t".join(f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c])
                               for c in METER_COLUMNS))
    return "\n".join(lines) + "\n"


def write_meter(out, done, marks, why_not=None, cpu_s=None):
    """Write points/ID/host-meter.txt for every verified point with both
    markers and samples in its window; return what meta.json says about
    it (cpu_s: the CPU seconds the meter used, its cost).  why_not: why
    the meter did not run (nothing is written)."""
    rec = {"file": METER_FILE, "points": [], "period_ms": PERIOD_MS, "work": WORK,
           **({"cpu_s": round(cpu_s, 3)} if cpu_s is not None else {})}
    if why_not:
        return dict(rec, why_not=why_not)
    try:
        samples, head = read_samples(os.path.join(out, METER_LOG))
    except OSError as e:
        return dict(rec, why_not=f"cannot read {METER_LOG}: {e.strerror or e}")

    def text(pid, mark):
        t0, t1 = mark_ns(mark["begin"][1]), mark_ns(mark["end"][1])
        rows = window_rows(samples, t0, t1) if t0 is not None and t1 is not None else []
        return meter_text(pid, mark, head, rows) if rows else None
    rec["points"], why = point_files.write_windows(out, done, marks, METER_FILE, text)
    if not rec["points"] and not why:
        why.append("no samples within any point's run-begin/run-end window")
    return dict(rec, **({"why_not": "; ".join(why)} if why else {}))
