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
}


def direction(metric):
    """"higher", "lower" or None (no verdict) for a metric name."""
    return METRICS.get(metric, (None, None))[1]


def unit(metric):
    return METRICS.get(metric, ("", None))[0]
