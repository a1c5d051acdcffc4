# SPDX-License-Identifier: GPL-2.0
"""What the module's own timing costs: throughput with timing off and on.

Usage: ./run.sh overhead VARIANT [--boots B] [--rounds R] [--duration-ms MS]
                                 [--timing N ...] [--out DIR]
  (./run.sh overhead is PYTHONPATH=ROOT /usr/bin/python3 -m scripts.overhead)

Boots VARIANT at 1 vCPU B times; each boot runs R rounds of uncontended
lookups (read_pct=100, 16 mailboxes), one point per timing setting
(timing=0 and every --timing N), in an order that alternates per round
so that drift during a boot cancels.  The cost of a setting is the
median over all rounds of (its ops/s) / (timing=0's ops/s in the same
round): paired within a round, because whole boots under TCG run at
different speeds (tests/RELIABILITY.md), with the order-statistic 95%
CI of that median; both raw and divided by the module's host-speed probe
(the _ref normalisation, analysis/TIDY.md).  Prints a table and writes
DIR/overhead.csv (one row per point).
"""
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile

from analysis.parse import bench_results
from analysis.metrics import RESULTS
from analysis.tidy import point_metrics
from analysis.estimate import stats
from analysis.parse.common import ParseError
from guest.judge import RunError
from lockbench import safeio
from lockbench.cli import OneLineParser, run_cli
from lockbench.paths import ROOT

# The runner (guest/run_guest.py), as a module of this repository.
RUNNER = [sys.executable, "-m", "guest.run_guest"]
RUNNER_ENV = dict(os.environ, PYTHONPATH=ROOT)


def make_parser():
    p = OneLineParser(prog="./run.sh overhead", hint="./run.sh overhead --help",
                      description=__doc__.split("\n")[0])
    p.add_argument("variant")
    p.add_argument("--boots", type=int, default=2, help="boots, 1..20 (default 2)")
    p.add_argument("--rounds", type=int, default=6, help="rounds per boot, 1..50 (default 6)")
    p.add_argument("--duration-ms", type=int, default=1000,
                   help="length of each point, 100..10000 (default 1000)")
    p.add_argument("--timing", type=int, action="append",
                   help="a timing setting to compare with 0 (repeatable; default 8 and 1)")
    p.add_argument("--out", help="where the boots and overhead.csv go (default: a temp dir)")
    return p


def job_text(rounds, settings, duration_ms):
    lines = ["lockbench-job v1", "option perf_stat 0"]
    for r in range(rounds):
        order = settings if r % 2 == 0 else settings[::-1]
        for t in order:
            lines.append(f"point t{t}-r{r} read_pct=100 mailboxes=16 miss_pct=0 "
                         f"duration_ms={duration_ms} seed={r + 1} timing={t}")
    return "\n".join(lines) + "\n"


def write_csv(out, rows):
    """OUT/overhead.csv, one row per point; returns its path."""
    path = os.path.join(out, "overhead.csv")
    text = io.StringIO(newline="")
    w = csv.DictWriter(text, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    with safeio.Dir.open(out) as d:
        d.write_atomic("overhead.csv", text.getvalue())
    return path


def _boot_rows(run, boot, rounds, settings):
    """One row per point of boot number BOOT (its run directory RUN):
    ops/s raw and over the host-speed probe, the clock's cost, the
    lookups timed."""
    rows = []
    for r in range(rounds):
        for t in settings:
            path = os.path.join(run, "points", f"t{t}-r{r}", "results.txt")
            try:
                res = bench_results.parse_file(path)
            except (OSError, ParseError) as e:
                raise RunError(1, str(e)) from None
            lat = res.lat.get("lookup")
            m = point_metrics.compute({RESULTS: res})
            rows.append({"boot": boot, "round": r, "timing": t,
                         "ops_per_sec": res.total["ops_per_sec"],
                         "ref_ns": m.get("ref_probe_ns", ""),
                         # ops per probe time: cancels the host's speed
                         # changes (analysis/TIDY.md, throughput_ref)
                         "norm": m.get("throughput_ref"),
                         "clock_read_ns": res.run.get("clock_read_ns", ""),
                         "timed_lookups": lat.count if lat else 0,
                         "mean_lookup_ns": round(lat.mean_ns) if lat and lat.count else ""})
    return rows


def _print_table(a, settings, rows):
    """The cost of each timing setting: the median ratio to timing=0 in
    the same round, with its CI, raw and over the host's speed."""
    base = {(r["boot"], r["round"]): r for r in rows if r["timing"] == 0}
    n = a.boots * a.rounds
    print(f"# {a.variant}: QEMU TCG, 1 vCPU on {os.cpu_count()} host cores, "
          f"read_pct=100 mailboxes=16, {a.duration_ms} ms points, "
          f"n={n} ({a.boots} boot(s) x {a.rounds} round(s))")
    print(f"{'':>8} {'':>13} {'raw ops/s':^29} {'normalised to the host speed':^29}")
    print(f"{'timing':>8} {'ops/s median':>13} {'ratio':>7} {'95% CI':>13} {'cost':>7}"
          f" {'ratio':>7} {'95% CI':>13} {'cost':>7}")
    levels = []
    for t in settings:
        mine = [r for r in rows if r["timing"] == t]
        line = f"{t:>8} {statistics.median(r['ops_per_sec'] for r in mine):>13.0f}"
        for key in ("ops_per_sec", "norm"):
            ratios = sorted(r[key] / base[(r["boot"], r["round"])][key] for r in mine
                            if r[key] and base[(r["boot"], r["round"])][key])
            if not ratios:
                line += f" {'-':>7} {'-':>13} {'-':>7}"
                continue
            med, lo, hi, level = stats.median_ci(ratios)
            levels.append(level)
            line += (f" {med:>7.3f} {lo:>6.3f}-{hi:<6.3f}"
                     f" {(1 - med) * 100:>6.1f}%")
        print(line)
    if levels and min(levels) < 0.95:
        print(f"note: n={n} is too few for a 95% CI of a median: the ranges are "
              f"the smallest and largest ratio, a {min(levels):.0%} CI (n >= 6 for 95%)")


def main(argv):
    return run_cli("overhead", make_parser(), argv, _body)


def _body(a):
    for name, val, lo, hi in (("--boots", a.boots, 1, 20), ("--rounds", a.rounds, 1, 50),
                              ("--duration-ms", a.duration_ms, 100, 10000)):
        if not lo <= val <= hi:
            raise RunError(2, f"{name} {val} out of range {lo}..{hi}")
    timings = a.timing or [8, 1]
    if any(not 1 <= t <= 1024 for t in timings):
        raise RunError(2, "--timing must be in 1..1024 (0 is always measured)")
    settings = [0] + sorted(set(timings), reverse=True)
    # The variant must exist and be built: run_guest.py says so in one line.
    check = subprocess.run(RUNNER + [a.variant, "--cpus", "1", "--dry-run"], env=RUNNER_ENV,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if check.returncode != 0:
        sys.stderr.write(check.stderr)
        return check.returncode
    out = a.out or tempfile.mkdtemp(prefix="lockbench-overhead-")
    os.makedirs(out, exist_ok=True)
    job = os.path.join(out, "overhead.job")
    with safeio.Dir.open(out) as d:
        d.write_atomic("overhead.job", job_text(a.rounds, settings, a.duration_ms))

    rows = []
    for b in range(a.boots):
        run = os.path.join(out, f"boot{b + 1}")
        rc = subprocess.call(RUNNER + [a.variant, "--cpus", "1", "--job", job, "--out", run],
                             env=RUNNER_ENV)
        if rc != 0:
            # run_guest.py said why in one line; keep its exit status and
            # what the earlier boots measured.
            kept = f"; boots 1..{b} kept in {write_csv(out, rows)}" if rows else ""
            raise RunError(rc, f"boot {b + 1} failed (run_guest.py exit {rc}; see {run}){kept}")
        rows += _boot_rows(run, b + 1, a.rounds, settings)
    _print_table(a, settings, rows)
    write_csv(out, rows)
    clocks = [r["clock_read_ns"] for r in rows if r["clock_read_ns"] != ""]
    if clocks:
        print(f"clock_read_ns median {statistics.median(clocks):.0f}; "
              f"results in {out}/overhead.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
