# SPDX-License-Identifier: GPL-2.0
"""Hostile input files for the analysis parsers, about 1 MB each (tests
only; issue #17, items 5 and 6).

CASES[parser][case] -> the file's text; PARSERS[parser] names the function
that reads such a file (module, function).  The cases:

- long-line: a valid start, then one line of 1 MB built against the
  parser's old patterns (lock_stat: "x 1 [< 1 [< ...", quadratic in the
  contention-point pattern; the others: a 1 MB number, which int()
  refuses with a ValueError); for perf stat ten lines of a 100 KB digit
  run (under the csv module's field limit), quadratic in the old
  "\\d+\\.?\\d*" number pattern;
- digits: rows whose numbers are 3800 digits long (under the line limit,
  over a u64's 20 digits; int() still reads them: a silent wrong number);
- columns: 1 MB of lines of 500 to 2000 fields each;
- valid (lock_stat only): 1 MB of well-formed class rows (the speed of the
  ordinary path).

Measure every parser on every case, in a subprocess each with a time
limit (a slow pattern cannot stop the table), with the code of each TREE
(a directory holding analysis/, default the work tree):

    /usr/bin/python3 -m tests.unit.hostile [TREE ...]
"""

import os
import subprocess
import sys
import tempfile

SIZE = 1 << 20
PARSERS = {
    "lockstat": ("analysis.parse.lockstat", "parse_file"),
    "perf_stat": ("analysis.parse.perf_stat", "parse_file"),
    "perf_lock": ("analysis.parse.perf_lock", "parse_file"),
    "bench_results": ("analysis.parse.bench_results", "parse_file"),
    "host_steal": ("analysis.parse.host_steal", "parse_host_steal"),
}

LOCKSTAT_HEAD = ("lock_stat version 0.4\n" + "-" * 40 + "\n"
                 "class name con-bounces contentions waittime-min "
                 "waittime-max waittime-total waittime-avg acq-bounces "
                 "acquisitions holdtime-min holdtime-max holdtime-total "
                 "holdtime-avg\n" + "-" * 40 + "\n\n")
PERF_LOCK_HEAD = ("                Name   acquired  contended   avg wait "
                  "total wait   max wait   min wait \n\n")
BENCH_HEAD = "mbox_bench-results v1\n"
STEAL_HEAD = ("lockbench-host-steal v1\nthread\ttid\twall_ns\trun_ns\t"
              "wait_ns\tnonvoluntary_switches\tsteal_pct\n")
BENCH_PARAM = "param read_pct=50 mailboxes=16 miss_pct=0 duration_ms=1000\n"
BENCH_TAIL = ("total ops=2 ops_per_sec=2\nlockops read=1 write=1\n"
              "fairness min_ops=2 max_ops=2 spread=1.00 flag=ok\n"
              "end status=SUCCESS\n")
LONG = 3800  # digits in the "digits" case: under MAX_LINE_CHARS


def _fill(head, line_of, tail=""):
    """head, then line_of(i) for i = 0, 1, ... until SIZE bytes, then
    tail."""
    out, size, i = [head], len(head), 0
    while size < SIZE:
        line = line_of(i) + "\n"
        out.append(line)
        size += len(line)
        i += 1
    return "".join(out) + tail


def _lockstat_row(name, first="0"):
    """A 0.4 class row; first is its con-bounces."""
    return f"{name:>40}: " + " ".join(
        f"{v:>14}" for v in [first, "0"] + ["0.00"] * 4 + ["0", "5"]
        + ["0.00"] * 4)


def cases():
    n = SIZE
    lockstat = {
        "long-line": LOCKSTAT_HEAD + ("x" + " 1 [<" * (n // 5))[:n] + "\n",
        "digits": _fill(LOCKSTAT_HEAD,
                        lambda i: _lockstat_row(f"lock{i}", "9" * LONG)),
        "columns": _fill(LOCKSTAT_HEAD,
                         lambda i: f"lock{i}:" + " 1" * 2000),
        "valid": _fill(LOCKSTAT_HEAD, lambda i: _lockstat_row(f"lock{i}")),
    }
    perf_stat = {
        "long-line": _fill("", lambda i: "1" * (n // 10)
                           + f"x,,ev{i},1,100.00,,"),
        "digits": _fill("", lambda i: f"{'7' * LONG},,ev{i},1,100.00,,"),
        "columns": _fill("", lambda i: f"1,,ev{i}," + ",".join(["1"] * 2000)),
    }
    perf_lock = {
        "long-line": PERF_LOCK_HEAD + "lock " + "1" * n
        + " 1 1.00 us 1.00 us 1.00 us 1.00 us\n",
        "digits": _fill(PERF_LOCK_HEAD, lambda i: f"lock{i} {'3' * LONG} 1 "
                        f"1.00 us 1.00 us 1.00 us 1.00 us"),
        "columns": _fill(PERF_LOCK_HEAD, lambda i: "lock" + " 1" * 2000
                         + " 1 1 1.00 us 1.00 us 1.00 us 1.00 us"),
    }
    head = BENCH_HEAD + BENCH_PARAM + "run threads=1 elapsed_ns=1\n"
    bench = {
        "long-line": BENCH_HEAD + BENCH_PARAM.replace("=50 ", "=" + "1" * n
                                                      + " ")
        + "run threads=1 elapsed_ns=1\nthread cpu=0 ops=2 lookups=1 "
        "writes=1\n" + BENCH_TAIL,
        "digits": _fill(head, lambda i: f"thread cpu={i} ops={'5' * LONG}"
                        f" lookups=1 writes=1", BENCH_TAIL),
        "columns": _fill(head, lambda i: f"thread cpu={i} ops=2 lookups=1 "
                         f"writes=1 " + " ".join(f"k{j}=1" for j in range(500)),
                         BENCH_TAIL),
    }
    steal = {
        "long-line": STEAL_HEAD + "CPU 0/TCG\t" + "1" * n
        + "\t1000\t900\t100\t2\t10.000\n",
        "digits": _fill(STEAL_HEAD, lambda i: f"CPU {i}/TCG\t{'8' * LONG}\t"
                        f"1000\t900\t100\t2\t10.000"),
        "columns": _fill(STEAL_HEAD, lambda i: "CPU 0/TCG" + "\t1" * 2000),
    }
    return {"lockstat": lockstat, "perf_stat": perf_stat,
            "perf_lock": perf_lock, "bench_results": bench,
            "host_steal": steal}


_PROBE = r"""
import importlib, sys, time
sys.path.insert(0, sys.argv[1])
mod = importlib.import_module(sys.argv[2])
fn = getattr(mod, sys.argv[3])
t = time.perf_counter()
try:
    fn(sys.argv[4])
    what = "accepted"
except Exception as e:
    what = type(e).__name__ + ": " + str(e).split(": ", 1)[-1][:48]
print(f"{time.perf_counter() - t:.3f}\t{what}")
"""


def measure(tree, path, parser, limit=60):
    """(seconds or None after limit, what happened) for one file."""
    mod, fn = PARSERS[parser]
    try:
        p = subprocess.run([sys.executable, "-c", _PROBE,
                            os.path.abspath(tree), mod, fn, path],
                           capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return None, f"still running after {limit} s"
    if p.returncode or "\t" not in p.stdout:
        return None, f"exit {p.returncode}: {p.stderr.strip()[-60:]}"
    secs, what = p.stdout.strip().split("\t", 1)
    return float(secs), what


def main(argv):
    trees = argv or ["."]
    with tempfile.TemporaryDirectory() as d:
        print("parser\tcase\tbytes\t" + "\t".join(trees))
        for parser, texts in cases().items():
            for case, text in texts.items():
                path = os.path.join(d, f"{parser}-{case}.txt")
                with open(path, "w") as f:
                    f.write(text)
                cols = []
                for tree in trees:
                    secs, what = measure(tree, path, parser)
                    cols.append((f"{secs:.2f} s" if secs is not None
                                 else "-") + f" ({what})")
                print(f"{parser}\t{case}\t{len(text)}\t" + "\t".join(cols),
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
