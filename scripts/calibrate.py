# SPDX-License-Identifier: GPL-2.0
"""Measure how many times a generic lockload workload takes a lock per op.

    ./run.sh calibrate [--variant V] [--cpus N] [--out DIR] --lock CLASS WORKLOAD
    ./run.sh calibrate --from-run DIR --lock CLASS --points A,B

WORKLOAD is a generic guest/inside/lockload case, "read /proc/iomem" (guest/job.py
GENERIC).  One boot of the rwlock kernel V (before) in QEMU, through the
harness's own runner (guest/run_guest.py, as ./run.sh boot), runs it at
two durations (300 and 900 ms, --locks-per-op 1, no perf: the fewest
execs), lock_stat cleared before each; for each the class's acquisitions
(its -R row, or its one row) over lockload's successful ops must be the
same integer K >= 1, exactly: acquisitions = K x ops at both op counts.
The rule is exact because the campaign's cross-check of lockload's count
(K per op) against lock_stat is: an acquisition outside the workload (the
kernel's own, or lockload's start) shows as acquisitions that are not K
times the ops, or as a K that differs between the two runs, and is
refused, as is a workload that takes the lock 0 times an op, takes its
write side, or whose ops fail.  --from-run judges points of a run made
already (tests/t-lockload.sh: in the suite's one boot).

Prints one line, ending with locks_per_op=K; exit 0.  Refused: one line,
exit 2; the kernel not built: one line, exit 3; the boot failed: exit 1.
"""
import os
import subprocess
import sys
import tempfile

from analysis.parse import bench_results, lockstat
from lockbench import safeio, workloads
from lockbench.cli import CliError, OneLineParser, run_cli
from guest import job as jobmod
from scripts import guest_paths
from scripts import lock_target as targetmod

DURATIONS_MS = (300, 900)
PROG = "calibrate"


class CalibrateError(CliError):
    def __init__(self, msg, exit_code=2):
        super().__init__(msg)
        self.exit_code = exit_code


def measure_point(pd, lock):
    """(ops, acquisitions, workload token) of one point's directory;
    CalibrateError if its ops failed or it took the write side."""
    pid = os.path.basename(pd)
    try:
        res = bench_results.parse_file(os.path.join(pd, "results.txt"))
        ls = lockstat.parse_file(os.path.join(pd, "lock_stat.txt"))
    except (OSError, ValueError) as e:
        raise CalibrateError(f"point {pid}: cannot read its results: {e}", 1) from None
    if res.status != "SUCCESS" or res.total.get("errors"):
        errs = sorted({k for t in res.threads for k in t if k.startswith("err_")})
        if errs == ["err_ENOENT"] and not res.total.get("hits"):
            raise CalibrateError(f"point {pid}: {guest_paths.enoent(res.param.get('workload'))}")
        raise CalibrateError(f"point {pid}: the workload's ops failed "
                             f"({res.total.get('errors')} errors: {', '.join(errs) or 'see run.log'})")
    rows = {r.kind: r.acquisitions for r in ls.rows if r.name == lock}
    if rows.get("W"):
        raise CalibrateError(f"point {pid}: {lock} was taken {rows['W']} times for writing: "
                             "lockload counts the read side only")
    return res.total["hits"], rows.get("R", rows.get("", 0)), res.param.get("workload")


def judge(lock, workload, measured):
    """K from [(point, ops, acquisitions), ...] (two op counts), or
    CalibrateError naming the rule broken."""
    shown = workloads.workload_spelled(workload)
    if len(measured) < 2 or len({ops for _p, ops, _a in measured}) < 2:
        raise CalibrateError(f"{shown}: want two runs of different op counts, got "
                             + ", ".join(f"{p}: {o} ops" for p, o, _a in measured))
    if any(ops <= 0 for _p, ops, _a in measured):
        raise CalibrateError(f"{shown}: a run made no op")
    said = ", ".join(f"{a} acquisitions in {o} ops" for _p, o, a in measured)
    if all(a == 0 for _p, _o, a in measured):
        # lock_stat prints no row for a class not taken since it was
        # cleared: the lock's name may be another there.
        raise CalibrateError(f"{shown} takes {lock} 0 times an op ({said}; lock_stat has "
                             f"no {lock} row after either run): not a workload of this "
                             "lock, or lock_stat names it otherwise (--lock: the class "
                             "name /proc/lock_stat shows)")
    ks = {a // o if a % o == 0 else None for _p, o, a in measured}
    if None in ks or len(ks) != 1 or 0 in ks:
        ratios = ", ".join(f"{a / o:.4f}" for _p, o, a in measured)
        raise CalibrateError(f"{shown} takes {lock} a varying or non-integer number of "
                             f"times an op ({said}: {ratios} an op): acquisitions outside "
                             "the workload, or an op that varies; the cross-check needs "
                             "an exact K (docs/targets.md)")
    k = ks.pop()
    lo, hi = jobmod.POINT_KEYS["locks_per_op"]
    if not lo <= k <= hi:
        raise CalibrateError(f"{shown}: {k} acquisitions of {lock} an op: more than {hi}")
    return k, said


def from_run(run_dir, lock, pids):
    """judge() of the points PIDS of RUN_DIR: (K, what was seen, the
    workload token of the first point)."""
    measured, workload = [], None
    for pid in pids:
        ops, acq, tok = measure_point(os.path.join(run_dir, "points", pid), lock)
        measured.append((pid, ops, acq))
        workload = workload or tok
    return (*judge(lock, workload, measured), workload)


def calibrate(variant, lock, workload, cpus=1, out=None):
    """Boot VARIANT once, run WORKLOAD twice; return (K, what was seen)."""
    from guest.qemu import RunError, artifacts
    tok = jobmod.workload_token(workload)
    if not jobmod.is_generic(tok):
        raise CalibrateError(f"{workload}: not a generic workload ({workloads.GENERIC_SPELLING}); "
                             "the shipped cases count their own acquisitions")
    try:
        artifacts(variant)
    except RunError as e:
        raise CalibrateError(f"needs the {variant} kernel built: {e}", 3) from None
    cfg = guest_paths.build_config(variant)
    lack = guest_paths.missing(tok, cfg) if cfg else None
    if lack:
        raise CalibrateError(f"{variant}: {lack}")
    pids = [f"cal-{ms}ms" for ms in DURATIONS_MS]
    points = [(p, {"workload": tok, "locks_per_op": 1, "duration_ms": ms, "timing": 8,
                   "seed": 1}) for p, ms in zip(pids, DURATIONS_MS)]
    text = jobmod.render(points, {"perf_stat": "0"})
    with tempfile.TemporaryDirectory(prefix="lockbench-calibrate.") as tmp, \
            safeio.Dir.open(tmp) as work:
        out = out or os.path.join(tmp, "run")
        job = os.path.join(tmp, "calibrate.job")
        work.write_new("calibrate.job", text)
        with work.open_new("run.log") as f:
            rc = subprocess.call([sys.executable, "-m", "guest.run_guest", variant,
                                  "--cpus", str(cpus), "--job", job, "--out", out],
                                 stdout=f, stderr=subprocess.STDOUT)
        if rc:
            tail = [ln.strip() for ln in work.read_text("run.log", 64 << 20).splitlines()
                    if ln.strip()][-1:]
            raise CalibrateError(f"the calibration boot of {variant} failed (rc {rc}): "
                                 f"{tail[0] if tail else 'no output'}", 3 if rc == 3 else 1)
        return from_run(out, lock, pids)[:2]


def make_parser():
    ap = OneLineParser(prog="./run.sh calibrate", description=__doc__.splitlines()[0],
                       hint="./run.sh calibrate --help")
    ap.add_argument("workload", nargs="?", help='a generic workload, e.g. "read /proc/iomem"')
    ap.add_argument("--lock", required=True, help="the lock_stat class, e.g. resource_lock")
    ap.add_argument("--variant", default="before", help="the rwlock kernel booted (before)")
    ap.add_argument("--cpus", type=int, default=1, help="vCPUs of the boot (1)")
    ap.add_argument("--out", help="keep the boot's run directory here")
    ap.add_argument("--from-run", metavar="DIR", help="judge points of a run made already")
    ap.add_argument("--points", help="with --from-run: the two point ids, A,B")
    return ap


def body(args):
    if not targetmod.LOCK_CLASS_RE.fullmatch(args.lock):
        raise CalibrateError(f"--lock {args.lock!r}: not a lock_stat class name")
    if args.from_run:
        if not args.points or args.workload:
            raise CalibrateError("--from-run DIR takes --points A,B and no WORKLOAD")
        k, said, tok = from_run(args.from_run, args.lock, args.points.split(","))
    else:
        if not args.workload:
            raise CalibrateError("missing WORKLOAD, e.g. 'read /proc/iomem'")
        if not 1 <= args.cpus <= 16:
            raise CalibrateError(f"--cpus {args.cpus}: must be 1..16")
        k, said = calibrate(args.variant, args.lock, args.workload, args.cpus, args.out)
        tok = jobmod.workload_token(args.workload)
    wl = repr(workloads.workload_spelled(tok))
    print(f"{PROG}: {args.lock}: {wl} takes it {k} times an op, exactly ({said}): "
          f"locks_per_op={k}")
    return 0


def main(argv):
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
