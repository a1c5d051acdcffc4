# SPDX-License-Identifier: GPL-2.0
"""Parser for the benchmark module's results, "mbox_bench-results v1" and v2.

Line oriented: a record word, then key=value pairs separated by spaces:

    mbox_bench-results v1
    param read_pct=50 mailboxes=16 miss_pct=0 duration_ms=1000 cpus=0-3 ...
    run id=1 threads=4 elapsed_ns=1000123456 clock_read_ns=42
    thread cpu=0 ops=1234 lookups=600 hits=600 misses=0 writes=634 errors=0
    lat op=lookup count=2400 min_ns=120 max_ns=99000 sum_ns=3000000 hist=...
    fine of=lookup row=8 counts=0,0,3,17,...        (v2)
    total ops=... ops_per_sec=...
    lockops read=... write=...
    fairness min_ops=... max_ops=... spread=1.03 flag=ok
    check registry=ok ...
    end status=SUCCESS

An unknown version, a missing "end" (truncated file), a record missing a
required key or a garbled line is a ParseError with the file name and line
number: never a partial result. Record words this parser does not know
(with valid key=value syntax) are kept in Results.extra, and unknown keys
are kept in their record's dict: bench-module/FORMAT.md lets v1 add both.

Latency histograms have 32 log2 buckets: bucket b counts latencies in
[2^b, 2^(b+1)) ns, bucket 0 also 0 ns, bucket 31 everything >= 2^31 ns.
hist_quantile() turns one into a percentile (log-interpolated).

The percentiles an analysis uses come from the finer histograms (16
buckets per power of two).  v1 results carry the module's own p50_ns,
p90_ns, p99_ns and the probe's median_ns/trim_mean_ns/outliers; v2 results
carry the histograms themselves ("fine" rows) and this parser computes the
same numbers from them (analysis/parse/fine_hist.py), so every reader sees
Latency.fine and the ref record's keys alike whatever the version.  In v2 a
"fine" histogram must count exactly what its record counts.

Numbers are ASCII (bench-module/FORMAT.md): a value of digits is an int
and may have at most 20 of them (a u64); the counters the analysis uses
(COUNTERS) must be such ints; a float has at most 20 digits on each side
of the '.' and a 3-digit exponent, and must be finite (only "inf" is
spelled out, for spread).  A line over MAX_LINE_CHARS (analysis/parse/common.py)
is a ParseError naming it.  Every pattern is anchored, with bounded
repeats that match a digit one way only: linear on any input.
"""

import math
import re
from dataclasses import dataclass, field

from analysis.parse import fine_hist
from analysis.parse.common import (full_path, MAX_DIGITS, U64_MAX, ParseError, clip,
                                   parse_uint, read_text, split_lines)

MAGIC = "mbox_bench-results"
SUPPORTED_VERSIONS = ("v1", "v2")
NBUCKETS = 32

_KV_RE = re.compile(r"([A-Za-z0-9_]+)=(\S*)")
_INT_RE = re.compile(r"-?[0-9]+")
_FLOAT_RE = re.compile(r"-?(?:[0-9]{1,%d}(?:\.[0-9]{0,%d})?|\.[0-9]{1,%d})"
                       r"(?:[eE][-+]?[0-9]{1,3})?"
                       % (MAX_DIGITS, MAX_DIGITS, MAX_DIGITS))

#: Required keys per record word; records marked once may appear only once.
REQUIRED = {
    "param": ("read_pct", "mailboxes", "miss_pct", "duration_ms"),
    "run": ("threads", "elapsed_ns"),
    "thread": ("cpu", "ops", "lookups", "writes"),
    "lat": ("op", "count", "min_ns", "max_ns", "sum_ns", "hist"),
    "fine": ("of", "row", "counts"),
    "total": ("ops", "ops_per_sec"),
    "lockops": ("read", "write"),
    "fairness": ("min_ops", "max_ops", "spread", "flag"),
    "check": (),
    "end": ("status",),
}
#: Keys that are u64 counters (FORMAT.md) and that the analysis counts
#: with: a value that is not an integer of at most 20 digits is an error.
COUNTERS = {
    "run": ("threads", "elapsed_ns"),
    "thread": ("cpu", "ops", "lookups", "writes"),
    "total": ("ops",),
    "lockops": ("read", "write"),
    "fairness": ("min_ops", "max_ops"),
    "fine": ("row",),
}
#: Keys whose values are words or lists, never numbers.
TEXT_KEYS = ("hist", "op", "flag", "status", "cpus", "of", "counts")
ONCE = ("param", "run", "total", "lockops", "fairness", "end")
MANDATORY = ("param", "run", "total", "lockops", "fairness", "end")


@dataclass
class Latency:
    op: str
    count: int
    min_ns: int
    max_ns: int
    sum_ns: int
    hist: list  # NBUCKETS counts
    # The module's own percentiles from its fine histogram (16 buckets per
    # power of two): {"p50": ns, ...}; empty in results from before them.
    fine: dict = field(default_factory=dict)

    @property
    def mean_ns(self):
        return self.sum_ns / self.count if self.count else None

    def quantile(self, q):
        """The fine percentile when the module printed it (p50, p90, p99),
        else log-interpolated from the log2 histogram."""
        key = f"p{round(q * 100)}"
        if key in self.fine and abs(q * 100 - round(q * 100)) < 1e-9 and self.count:
            return self.fine[key]
        return hist_quantile(self.hist, q, self.min_ns, self.max_ns)


@dataclass
class Results:
    path: str
    version: str
    param: dict
    run: dict
    threads: list  # of dicts (cpu, ops, lookups, hits, misses, writes, ...)
    lat: dict  # op -> Latency
    total: dict
    lockops: dict
    fairness: dict
    checks: list  # of dicts
    status: str
    extra: list = field(default_factory=list)  # (word, dict) unknown records
    warnings: list = field(default_factory=list)

    @property
    def ok(self):
        return self.status == "SUCCESS"


def _value(path, lineno, key, text):
    """The int or float text spells, else text itself (a word)."""
    if _INT_RE.fullmatch(text):
        digits = len(text.lstrip("-"))
        if digits > MAX_DIGITS:
            raise ParseError(path, lineno, f"{key}= has {digits} digits, "
                             f"more than a u64's {MAX_DIGITS}")
        if abs(int(text)) > U64_MAX:
            raise ParseError(path, lineno, f"{key}={text} is over a u64's "
                             f"2^64 - 1")
        return int(text)
    if text in ("inf", "-inf"):  # fairness spread=inf when min_ops=0
        return float(text)
    if _FLOAT_RE.fullmatch(text):
        value = float(text)
        if not math.isfinite(value):
            raise ParseError(path, lineno, f"{key}={clip(text)} is out of "
                             f"range")
        return value
    return text


def bucket_bounds(b):
    """[lo, hi) of bucket b in ns; hi is None for the open last bucket."""
    lo = 0 if b == 0 else 2 ** b
    hi = None if b == NBUCKETS - 1 else 2 ** (b + 1)
    return lo, hi


def hist_quantile(hist, q, min_ns=None, max_ns=None):
    """The q-quantile (0 < q <= 1) of a log2 histogram, in ns.

    Rank r = q * total. In the bucket where the cumulative count first
    reaches r, the value is log-interpolated between the bucket bounds,
    lo * (hi/lo) ** f, with f the fraction of the bucket's count needed
    (linear in bucket 0, whose lower bound is 0; the last bucket's upper
    bound is max_ns, or 2^32 without it); then clamped to [min_ns, max_ns].
    None for an empty histogram."""
    total = sum(hist)
    if total <= 0:
        return None
    rank = q * total
    cum = 0
    for b, c in enumerate(hist):
        if c <= 0:
            continue
        if cum + c >= rank:
            f = (rank - cum) / c
            lo, hi = bucket_bounds(b)
            if hi is None:
                hi = max(max_ns or 0, 2 ** 32)
            if b == 0:
                v = lo + (hi - lo) * f
            else:
                v = lo * math.exp(math.log(hi / lo) * f)
            if min_ns is not None:
                v = max(v, min_ns)
            if max_ns is not None:
                v = min(v, max_ns)
            return v
        cum += c
    return None


def _fields(path, lineno, word, rest):
    kv = {}
    for tok in rest:
        m = _KV_RE.fullmatch(tok)
        if not m:
            raise ParseError(path, lineno, f"garbled {word!r} record: "
                             f"{clip(tok)!r} is not key=value")
        if m.group(1) in kv:
            raise ParseError(path, lineno, f"{word!r} record repeats key "
                             f"{clip(m.group(1))!r}")
        kv[m.group(1)] = m.group(2)
    for key in REQUIRED.get(word, ()):
        if key not in kv:
            raise ParseError(path, lineno, f"{word!r} record lacks {key}=")
    out = {}
    for k, v in kv.items():
        out[k] = v if k in TEXT_KEYS else _value(path, lineno, k, v)
    for k in COUNTERS.get(word, ()):
        if k in out and (not isinstance(out[k], int) or out[k] < 0):
            raise ParseError(path, lineno, f"{word} {k}={clip(str(out[k]))} "
                             f"is not a non-negative integer")
    return out


def _lat(path, lineno, kv):
    parts = kv["hist"].split(",")
    counts = [parse_uint(p) for p in parts]
    if len(parts) != NBUCKETS or None in counts:
        raise ParseError(path, lineno, f"lat hist= must be {NBUCKETS} "
                         f"comma-separated counts of at most {MAX_DIGITS} "
                         f"digits, got {len(parts)} fields")
    for k in ("count", "min_ns", "max_ns", "sum_ns"):
        if not isinstance(kv[k], int) or kv[k] < 0:
            raise ParseError(path, lineno, f"lat {k}= must be a non-negative "
                             f"integer")
    fine = {}
    for k in ("p50", "p90", "p99"):
        v = kv.get(f"{k}_ns")
        if v is None:
            continue
        if not isinstance(v, int) or v < 0:
            raise ParseError(path, lineno, f"lat {k}_ns= must be a non-negative "
                             f"integer")
        fine[k] = v
    return Latency(op=kv["op"], count=kv["count"], min_ns=kv["min_ns"],
                   max_ns=kv["max_ns"], sum_ns=kv["sum_ns"],
                   hist=counts, fine=fine)


def _fine_row(path, lineno, kv, fine):
    """One "fine" row (v2): 16 counts of the histogram of `of`."""
    of, row = kv["of"], kv["row"]
    if not re.fullmatch(r"[a-z]{1,16}", of):
        raise ParseError(path, lineno, f"fine of={clip(of)!r} is not a "
                         f"lat op or 'ref'")
    if not isinstance(row, int) or not 0 <= row < fine_hist.ROWS:
        raise ParseError(path, lineno, f"fine row={clip(str(row))} is not "
                         f"0..{fine_hist.ROWS - 1}")
    parts = kv["counts"].split(",")
    counts = [parse_uint(p) for p in parts]
    if len(parts) != fine_hist.SUB or None in counts:
        raise ParseError(path, lineno, f"fine counts= must be {fine_hist.SUB} "
                         f"comma-separated counts of at most {MAX_DIGITS} "
                         f"digits, got {len(parts)} fields")
    rows = fine.setdefault(of, {})
    if row in rows:
        raise ParseError(path, lineno, f"second fine of={of} row={row}")
    rows[row] = counts


def _apply_fine(path, lat, extra, fine):
    """v2: the percentiles and the probe's host speed, from the fine
    histograms; each histogram must count what its record counts."""
    hists = {of: [c for r in range(fine_hist.ROWS)
                  for c in rows.get(r, [0] * fine_hist.SUB)]
             for of, rows in fine.items()}
    ref = next((kv for word, kv in extra if word == "ref"), None)
    want = {op: l.count for op, l in lat.items()}
    if ref is not None and isinstance(ref.get("loops"), int):
        want["ref"] = ref["loops"]
    for of in sorted(set(hists) | {k for k, n in want.items() if n}):
        if of not in want:
            raise ParseError(path, None, f"fine of={of} rows without a "
                             f"record they belong to")
        got = sum(hists.get(of, ()))
        if got != want[of]:
            what = "ref loops" if of == "ref" else f"lat op={of} count"
            raise ParseError(path, None, f"fine of={of} rows count {got}, "
                             f"{what}={want[of]}")
    for op, l in lat.items():
        if l.count:
            l.fine = {f"p{p // 10}": fine_hist.quantile_ns(hists[op], p)
                      for p in (500, 900, 990)}
    if want.get("ref"):
        ref.update(fine_hist.probe_summary(hists["ref"]))


def _check_numbers(path, lineno, word, kv, keys):
    for k in keys:
        if k in kv and not isinstance(kv[k], (int, float)):
            raise ParseError(path, lineno, f"{word} {k}={clip(kv[k])} is not "
                             f"a number")


def parse_text(text, path="<string>"):
    lines = split_lines(text, path)
    if not text.strip():
        raise ParseError(path, None, "empty file, not mbox_bench results")
    head = lines[0].split()
    if not head or head[0] != MAGIC:
        raise ParseError(path, 1, f"not mbox_bench results (first line is "
                         f"not '{MAGIC} vN')")
    if len(head) != 2 or head[1] not in SUPPORTED_VERSIONS:
        version = " ".join(head[1:]) or "(none)"
        raise ParseError(path, 1, f"unsupported results version {version} "
                         f"(supported: {', '.join(SUPPORTED_VERSIONS)})")
    single = {}
    threads, lat, checks, extra, warnings = [], {}, [], [], []
    fine = {}  # of -> {row: 16 counts}, v2
    end_line = None
    for i, line in enumerate(lines[1:], start=2):
        tokens = line.split()
        if not tokens:
            continue
        if end_line is not None:
            raise ParseError(path, i, "data after the 'end' record")
        word = tokens[0]
        if not re.fullmatch(r"[a-z][a-z0-9_]*", word):
            raise ParseError(path, i, f"garbled line: {clip(line.strip())!r}")
        kv = _fields(path, i, word, tokens[1:])
        if word in ONCE:
            if word in single:
                raise ParseError(path, i, f"second {word!r} record "
                                 f"(first on line {single[word][0]})")
            single[word] = (i, kv)
            if word == "end":
                end_line = i
        elif word == "thread":
            _check_numbers(path, i, word, kv, REQUIRED["thread"])
            threads.append(kv)
        elif word == "lat":
            if kv["op"] in lat:
                raise ParseError(path, i, f"second lat op={kv['op']} record")
            lat[kv["op"]] = _lat(path, i, kv)
            if sum(lat[kv["op"]].hist) != lat[kv["op"]].count:
                warnings.append(f"line {i}: lat op={kv['op']} hist sums to "
                                f"{sum(lat[kv['op']].hist)}, count="
                                f"{lat[kv['op']].count}")
        elif word == "check":
            checks.append(kv)
        elif word == "fine" and head[1] != "v1":
            _fine_row(path, i, kv, fine)
        else:
            extra.append((word, kv))
    if end_line is None:
        raise ParseError(path, len(lines), "truncated: no 'end' record")
    for word in MANDATORY:
        if word not in single:
            raise ParseError(path, None, f"no {word!r} record")
    for word, keys in (("total", ("ops", "ops_per_sec")),
                       ("lockops", ("read", "write")),
                       ("fairness", ("min_ops", "max_ops", "spread"))):
        _check_numbers(path, single[word][0], word, single[word][1], keys)
    if not threads:
        raise ParseError(path, None, "no 'thread' record")
    run = single["run"][1]
    if isinstance(run.get("threads"), int) and run["threads"] != len(threads):
        warnings.append(f"run threads={run['threads']} but {len(threads)} "
                        f"thread records")
    if head[1] != "v1":
        _apply_fine(path, lat, extra, fine)
    status = single["end"][1]["status"]
    if status not in ("SUCCESS", "FAILURE"):
        raise ParseError(path, end_line, f"end status={status} (want SUCCESS "
                         f"or FAILURE)")
    return Results(path=str(path), version=head[1], param=single["param"][1],
                   run=run, threads=threads, lat=lat,
                   total=single["total"][1], lockops=single["lockops"][1],
                   fairness=single["fairness"][1], checks=checks,
                   status=status, extra=extra, warnings=warnings)


def parse_file(path, root=None):
    # root: the run directory PATH is read under, no link followed
    return parse_text(read_text(path, root=root), full_path(path, root))
