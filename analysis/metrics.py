# SPDX-License-Identifier: GPL-2.0
"""The metrics of samples.csv: unit and direction (which way is better).
TIDY.md documents how each is computed."""

#: metric -> (unit, direction): "higher" or "lower" is better, None: no verdict
METRICS = {
    "throughput_ops_s": ("ops/s", "higher"),
    "lookup_lat_median_ns": ("ns", "lower"),
    "lookup_lat_p99_ns": ("ns", "lower"),
    "lookup_lat_max_ns": ("ns", "lower"),
    "lookup_lat_mean_ns": ("ns", "lower"),
    "write_lat_median_ns": ("ns", "lower"),
    "write_lat_p99_ns": ("ns", "lower"),
    "write_lat_max_ns": ("ns", "lower"),
    "write_lat_mean_ns": ("ns", "lower"),
    "fairness_spread": ("ratio", "lower"),
    # Normalised to the host's speed (the module's reference probe).
    "throughput_ref": ("ops/kref", "higher"),
    "lookup_lat_median_ref": ("ref", "lower"),
    "write_lat_median_ref": ("ref", "lower"),
    "ref_probe_ns": ("ns", None),
    # Throughput per second that the vCPUs were on a host core: the
    # runner's host steal divided out (TIDY.md, "throughput_run").
    "throughput_run": ("ops/s", "higher"),
    # Under QEMU's icount only (analysis/primary.py): instructions per
    # operation, the think time, the probes and the timer ticks included.
    "insn_per_op": ("insn/op", "lower"),
    # Totals of a run scale with the work it did (a kernel that collapses
    # to a few ops also has few contentions): no verdict.  The rate after
    # each, per unit of work, is what a comparison judges.
    "lock_contentions": ("count", None),
    "lock_contentions_per_kacq": ("per 1k acq", "lower"),
    "lock_waittime_total_us": ("us", None),
    "lock_waittime_per_acq_ns": ("ns", "lower"),
    "lock_waittime_avg_us": ("us", "lower"),
    "lock_waittime_max_us": ("us", "lower"),
    "lock_holdtime_avg_us": ("us", "lower"),
    "lock_acquisitions": ("count", None),
    "task_clock_ms": ("ms", None),
    "context_switches": ("count", None),
    "context_switches_per_mop": ("per 1M ops", "lower"),
    "cpu_migrations": ("count", None),
    "cpu_migrations_per_mop": ("per 1M ops", "lower"),
    "perf_lock_contended": ("count", None),
    "perf_lock_contended_per_kop": ("per 1k lockops", "lower"),
    "perf_lock_wait_total_ns": ("ns", None),
    "perf_lock_wait_per_op_ns": ("ns", "lower"),
    # The host, not the kernel (host-steal.txt, guest/JOB.md): how much of
    # the module's run QEMU's vCPU threads waited on a host run queue.
    "steal_pct": ("%", None),
    "steal_max_pct": ("%", None),
    # What the guest's own QEMU could have taken from its vCPUs: the run
    # time of its other threads, in % of one core (guards.own_threads).
    "qemu_other_pct": ("% of a core", None),
}

#: steal_max_pct above this (percent of the run that the worst vCPU thread
#: waited on a host run queue) flags a point: the host, not the kernel, may
#: have set its numbers.  Measured on the 2-core host (TIDY.md, "Why 10"):
#: quiet, 1-3%; a busy process per core, 37-50%; other work costs two busy
#: vCPUs ~50% steal per core of it, so 10 is ~0.2 core of other work.
STEAL_FLAG_PCT = 10.0


#: what a metric is, in words, where its name does not say it (the answer
#: paragraph names the primary metric with it)
PLAIN = {
    "throughput_ops_s": "operations per second",
    "throughput_run": "operations per second the vCPUs were on a host "
                      "core, the host's steal divided out",
    "throughput_ref": "operations per unit of host speed (the module's "
                      "probe)",
}


#: the one sentence every output says of an icount number
ICOUNT_MEANS = ("instructions (QEMU icount): 1 guest ns = 1 instruction; an "
                "instruction count under emulation prices path length, not "
                "cache misses or atomic latency on real hardware")
#: a time unit read under icount (shift 0)
ICOUNT_UNITS = {"ns": "insn", "us": "k insn", "ms": "M insn"}


def unit_of(metric, clock="wall"):
    """A metric's unit in a cell of this clock: under icount a guest
    nanosecond is an instruction."""
    u = unit(metric)
    return ICOUNT_UNITS.get(u, u) if clock == "icount" else u


def direction(metric):
    """"higher", "lower" or None (no verdict) for a metric name."""
    return METRICS.get(metric, (None, None))[1]


def unit(metric):
    return METRICS.get(metric, ("", None))[0]
