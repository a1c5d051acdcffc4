# SPDX-License-Identifier: GPL-2.0
"""The module's fine histograms, and the quantiles the host takes of them.

bench-module/mbox_bench.c and guest/inside/lockload/lockload.c count op latencies
and reference-probe times in histograms of 16 buckets per power of two
(at most 6% wide) and print them as "fine" rows (bench-module/FORMAT.md,
v2).  Every quantile is computed here, on the host, once: the kernel only
counts.  The arithmetic is integer and the same as the module's was in
results v1 (which printed p50_ns/p90_ns/p99_ns and the probe's median and
trimmed mean itself), so v1 and v2 results of the same times agree.

Bucket b: exact for b < 16 (0..15 ns); above, row r = b // 16 >= 1 covers
[16 << (r - 1), 32 << (r - 1)) in 16 equal buckets.  24 rows: up to 2^27 ns,
the last bucket also holds everything longer.
"""

SUB_BITS = 4
SUB = 1 << SUB_BITS          # buckets per row (per power of two)
ROWS = 24
BUCKETS = ROWS * SUB
#: Probes slower than this many times the median count as interrupted.
REF_OUTLIER = 4


def bucket(ns):
    """The bucket a time of ns nanoseconds goes in (bench_fine_bucket())."""
    if ns < SUB:
        return ns
    octave = ns.bit_length() - 1
    b = (octave - SUB_BITS + 1) * SUB + ((ns >> (octave - SUB_BITS)) & (SUB - 1))
    return min(b, BUCKETS - 1)


def bucket_span(b):
    """(lo, width) of bucket b: it holds [lo, lo + width)."""
    if b < SUB:
        return b, 1
    shift = b // SUB - 1
    return (SUB + b % SUB) << shift, 1 << shift


def rank_ns(hist, rank):
    """The time of rank `rank` (1-based) among the times counted in hist,
    linearly interpolated inside its bucket; 0 when hist is empty."""
    count = sum(hist)
    if not count:
        return 0
    rank = min(max(rank, 1), count)
    cum = 0
    for b, n in enumerate(hist):
        if n and cum + n >= rank:
            lo, width = bucket_span(b)
            return lo + width * (rank - cum) // n
        cum += n
    raise AssertionError("unreachable: rank <= count")


def quantile_ns(hist, permille):
    """The permille/1000 quantile: the time of rank ceil(count * p)."""
    count = sum(hist)
    return rank_ns(hist, -(-count * permille // 1000))


def probe_summary(hist):
    """The host speed a run's probe histogram says: its median, the mean
    of the probes up to REF_OUTLIER times the median (bucket midpoints;
    follows a host that changed speed during the run, not a probe an
    interrupt or a host preemption stretched), and how many were left out.
    {"median_ns", "trim_mean_ns", "outliers"}, as results v1 printed them."""
    median = quantile_ns(hist, 500)
    cut = median * REF_OUTLIER
    n = total = 0
    for b, c in enumerate(hist):
        lo, width = bucket_span(b)
        if lo > cut:
            break
        n += c
        total += c * (lo + width // 2)
    return {"median_ns": median, "trim_mean_ns": total // n if n else 0,
            "outliers": sum(hist) - n}
