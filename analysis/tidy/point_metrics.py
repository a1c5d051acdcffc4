# SPDX-License-Identifier: GPL-2.0
"""The sample metrics of one point from its parsed files: throughput,
latencies and the host-speed (_ref) metrics from results.txt, the lock
metrics from lock_stat's rows of the class, the perf events, and the
rates per unit of work (RATES).  Pure functions of parsed objects;
analysis.tidy.tables decides which files a point has and whether they count.
"""

PERF_EVENTS = {"task-clock": "task_clock_ms",
               "context-switches": "context_switches",
               "cpu-migrations": "cpu_migrations"}

#: rate -> (total, factor, work): factor * total / work.  A total scales
#: with the work a run did (a kernel that collapses to a few ops has few
#: contentions), a rate does not.  work: "acq" = lock_stat acquisitions of
#: the class, "ops" = results.txt `total ops`, "lockops" = `lockops read +
#: write` (the module's calls that take the lock on a locking kernel).
RATES = {
    "lock_contentions_per_kacq": ("lock_contentions", 1e3, "acq"),
    "lock_waittime_per_acq_ns": ("lock_waittime_total_us", 1e3, "acq"),
    "context_switches_per_mop": ("context_switches", 1e6, "ops"),
    "cpu_migrations_per_mop": ("cpu_migrations", 1e6, "ops"),
    "perf_lock_contended_per_kop": ("perf_lock_contended", 1e3, "lockops"),
    "perf_lock_wait_per_op_ns": ("perf_lock_wait_total_ns", 1, "lockops"),
}


def lock_metrics(rows):
    """Sample metrics from the lock_stat rows (R, W, plain) of one class."""
    cont = sum(r.contentions for r in rows)
    wait_total = sum(r.waittime_total_us for r in rows)
    acq = sum(r.acquisitions for r in rows)
    hold_total = sum(r.holdtime_total_us for r in rows)
    out = {
        "lock_contentions": cont,
        "lock_waittime_total_us": wait_total,
        "lock_waittime_avg_us": wait_total / cont if cont else 0.0,
        "lock_waittime_max_us": max(r.waittime_max_us for r in rows),
        "lock_acquisitions": acq,
    }
    if acq:
        out["lock_holdtime_avg_us"] = hold_total / acq
    return out


def rate_metrics(metrics, res):
    """The RATES of one point from its other metrics and its results.

    Only from an ok results.txt (also the lock_stat rates, whose totals
    alone do not need one): the work of a failed run is not the work its
    counters saw.  A zero amount of work gives no rate, not inf."""
    if res is None or not res.ok:
        return {}
    work = {"acq": metrics.get("lock_acquisitions") or 0,
            "ops": res.total["ops"],
            "lockops": res.lockops["read"] + res.lockops["write"]}
    return {rate: factor * metrics[total] / work[per]
            for rate, (total, factor, per) in RATES.items()
            if total in metrics and work[per] > 0}


def ref_ns(res, key="trim_mean_ns"):
    """Time of the module's reference probe over the run, ns: the host
    speed the threads saw while they ran.  trim_mean_ns: the mean without
    the probes an interrupt stretched, the host's average speed over the
    run; median_ns: its typical speed.  None in results without a "ref"
    record.  bench-module/FORMAT.md, "ref"."""
    ref = next((kv for word, kv in res.extra if word == "ref"), None)
    if not ref or not isinstance(ref.get("loops"), int) or ref["loops"] <= 0:
        return None
    val = ref.get(key)
    if not isinstance(val, int) or val <= 0:
        return None
    return float(val)


def bench_metrics(res):
    out = {"throughput_ops_s": res.total["ops_per_sec"],
           "fairness_spread": res.fairness["spread"]}
    for op, lat in sorted(res.lat.items()):
        if op not in ("lookup", "write") or lat.count == 0:
            continue
        out[f"{op}_lat_median_ns"] = lat.quantile(0.5)
        out[f"{op}_lat_p99_ns"] = lat.quantile(0.99)
        out[f"{op}_lat_max_ns"] = lat.max_ns
        out[f"{op}_lat_mean_ns"] = lat.mean_ns
    # The same, in units of the host's speed during the run: a host core
    # that slows down slows the workload and the probe alike.
    # An average (throughput) against the probe's average, a median (an
    # op's typical latency) against its median: when the host changed
    # speed during the run, both medians come from the same, longer phase.
    ref, ref_med = ref_ns(res), ref_ns(res, "median_ns")
    if ref is not None:
        out["ref_probe_ns"] = ref
        out["throughput_ref"] = res.total["ops_per_sec"] * ref / 1e6
    if ref_med is not None:
        for op in ("lookup", "write"):
            if out.get(f"{op}_lat_median_ns") is not None:
                out[f"{op}_lat_median_ref"] = out[f"{op}_lat_median_ns"] / ref_med
    return {k: v for k, v in out.items() if v is not None}


def icount_metrics(res):
    """insn_per_op: the instructions each thread executed per operation,
    elapsed_ns * threads / ops, read under QEMU's icount (shift 0: a guest
    ns is an instruction; the pause of a paced point, the probes and the
    timer ticks included).  Only for icount cells (analysis/primary.py);
    none without ops."""
    elapsed, threads = res.run.get("elapsed_ns"), res.run.get("threads")
    ops = res.total.get("ops")
    if not isinstance(elapsed, int) or not isinstance(threads, int) \
            or not ops:
        return {}
    return {"insn_per_op": elapsed * threads / ops}
