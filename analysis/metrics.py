# SPDX-License-Identifier: GPL-2.0
"""The metric registry: every metric of samples.csv, once, with all that
the rest of the project derives from it (TIDY.md documents how each is
computed in words):

- its rule: how tidy computes it (Rule: the source file, the statistic,
  its field and quantile, the metrics it is derived from;
  analysis/tidy/point_metrics.py loops over this registry), so a new
  metric is one line here and its line in TIDY.md;
- its unit and direction (which way is better; None: no verdict);
- its place: METRICS' order is the order of every table that lists
  metrics (summary.md, report.html; metric_order);
- whether a campaign may name it its primary metric (PRIMARY_CHOICES,
  scripts/campaign/file.py);
- whether a pause between operations keeps it from moving (RATE_METRICS,
  analysis/primary.py refuses such a primary at a paced point);
- the raw metric it normalises, and how (REF_TWIN, RUN_TWIN: the guards'
  twins, analysis/verdict/guards.py);
- what it becomes under QEMU's icount (ICOUNT_EQUIV).

Imports nothing: the bottom of analysis/ (analysis/README.md, "Rooms")."""

from typing import NamedTuple

from lockbench.defaults import ICOUNT, WALL


#: the raw files a metric is read from (Rule.source): results.txt, the
#: lock class's rows of lock_stat.txt, perf stat's events, the lock
#: class's row of perf-lock.txt, the host's two files (guest/JOB.md)
RESULTS, LOCK_STAT, PERF_STAT, PERF_LOCK = ("results.txt", "lock_stat.txt",
                                            "perf-stat.csv", "perf-lock.txt")
HOST_STEAL, HOST_METER = "host-steal.txt", "host-meter.txt"


class Rule(NamedTuple):
    """How tidy computes a metric for one point (the statistics are
    analysis/tidy/point_metrics.py STATS, keyed by (source, stat)).  A
    metric is computed when its source was read (results.txt only when
    its run passed; the other files only when results.txt did not fail)
    and the metrics it is derived from were computed; else it has no
    row."""
    #: the raw file it is read from (above), or None: from the metrics
    #: in `derived_from` alone
    source: str | None
    #: the statistic: "quantile", "mean", "max", "sum", "rate", ...
    stat: str
    #: what of the source it is taken of: an op's latencies ("lookup",
    #: "write"), a record's field, a perf event
    field: str | None = None
    #: the quantile of stat "quantile" (0.5: the median)
    q: float | None = None
    #: the metrics it is computed from (computed before it)
    derived_from: tuple = ()
    #: what it is divided by: a field or results.txt's work ("ops",
    #: "lockops"; a rate derived from two metrics: the second)
    per: str | None = None
    #: the factor (a rate: scale * total / work; a product: / scale)
    scale: float = 1
    #: the value when `per` is 0 (None: no value)
    zero: float | None = None
    #: only in cells of this clock (None: every cell)
    clock: str | None = None


class Metric(NamedTuple):
    unit: str
    #: "higher" or "lower" is better; None: no verdict
    direction: str | None
    #: how tidy computes it
    rule: Rule
    #: a campaign may name it its primary_metric
    primary: bool = False
    #: a rate: a pause between operations keeps it from moving
    rate: bool = False
    #: (how, raw metric): "ref" read against the host's speed (the
    #: module's probe), "run" per second the vCPUs were on a host core
    twin: tuple | None = None
    #: what it is under QEMU's icount (a guest ns is an instruction)
    icount: str | None = None


def _lat(op, stat, q=None):
    """A statistic of an op's timed operations (results.txt lat, fine)."""
    return Rule(RESULTS, stat, op, q=q)


def _rate(total, scale, per):
    """scale * total / work, of an ok results.txt: per is its work
    ("ops", "lockops") or a metric (lock_acquisitions)."""
    metric = () if per in ("ops", "lockops") else (per,)
    return Rule(RESULTS, "rate", derived_from=(total,) + metric, per=per,
                scale=scale)


M, R, LAT, RATE = Metric, Rule, _lat, _rate
#: metric -> Metric, in the order tables list them
METRICS = {
    "throughput_ops_s": M("ops/s", "higher", R(RESULTS, "total", "ops_per_sec"),
                          primary=True, rate=True, icount="insn_per_op"),
    "lookup_lat_median_ns": M("ns", "lower", LAT("lookup", "quantile", 0.5),
                              primary=True, icount="lookup_lat_mean_ns"),
    "lookup_lat_p99_ns": M("ns", "lower", LAT("lookup", "quantile", 0.99),
                           primary=True),
    "lookup_lat_max_ns": M("ns", "lower", LAT("lookup", "max")),
    "lookup_lat_mean_ns": M("ns", "lower", LAT("lookup", "mean"),
                            primary=True),
    "write_lat_median_ns": M("ns", "lower", LAT("write", "quantile", 0.5),
                             primary=True, icount="write_lat_mean_ns"),
    "write_lat_p99_ns": M("ns", "lower", LAT("write", "quantile", 0.99),
                          primary=True),
    "write_lat_max_ns": M("ns", "lower", LAT("write", "max")),
    "write_lat_mean_ns": M("ns", "lower", LAT("write", "mean"), primary=True),
    "fairness_spread": M("ratio", "lower", R(RESULTS, "fairness", "spread")),
    # Normalised to the host's speed (the module's reference probe): an
    # average (throughput) against the probe's average, a median (an
    # op's typical latency) against its median.
    "throughput_ref": M("ops/kref", "higher", R(None, "product", derived_from=(
                            "throughput_ops_s", "ref_probe_ns"), scale=1e6),
                        primary=True, rate=True,
                        twin=("ref", "throughput_ops_s"),
                        icount="insn_per_op"),
    "lookup_lat_median_ref": M("ref", "lower", R(
                                   RESULTS, "per_probe", "median_ns",
                                   derived_from=("lookup_lat_median_ns",)),
                               primary=True,
                               twin=("ref", "lookup_lat_median_ns"),
                               icount="lookup_lat_mean_ns"),
    "write_lat_median_ref": M("ref", "lower", R(
                                  RESULTS, "per_probe", "median_ns",
                                  derived_from=("write_lat_median_ns",)),
                              primary=True,
                              twin=("ref", "write_lat_median_ns"),
                              icount="write_lat_mean_ns"),
    "ref_probe_ns": M("ns", None, R(RESULTS, "probe", "trim_mean_ns")),
    # Throughput per second that the vCPUs were on a host core: the
    # runner's host steal divided out (TIDY.md, "throughput_run"); not
    # under icount, whose seconds are instructions (the host's steal
    # slows the emulation, not the count).
    "throughput_run": M("ops/s", "higher", R(None, "per_run", derived_from=(
                            "throughput_ops_s", "steal_pct"), clock=WALL),
                        primary=True, rate=True,
                        twin=("run", "throughput_ops_s"),
                        icount="insn_per_op"),
    # Under QEMU's icount only (analysis/primary.py): instructions per
    # operation, the think time, the probes and the timer ticks included.
    "insn_per_op": M("insn/op", "lower", R(RESULTS, "insn_per_op",
                                           clock=ICOUNT),
                     primary=True, rate=True),
    # Totals of a run scale with the work it did (a kernel that collapses
    # to a few ops also has few contentions): no verdict.  The rate after
    # each, per unit of work, is what a comparison judges.
    "lock_contentions": M("count", None, R(LOCK_STAT, "sum", "contentions")),
    "lock_contentions_per_kacq": M("per 1k acq", "lower", RATE(
        "lock_contentions", 1e3, "lock_acquisitions")),
    "lock_waittime_total_us": M("us", None, R(LOCK_STAT, "sum",
                                              "waittime_total_us")),
    "lock_waittime_per_acq_ns": M("ns", "lower", RATE(
        "lock_waittime_total_us", 1e3, "lock_acquisitions"), primary=True),
    "lock_waittime_avg_us": M("us", "lower", R(
        LOCK_STAT, "mean", "waittime_total_us", per="contentions",
        zero=0.0)),
    "lock_waittime_max_us": M("us", "lower", R(LOCK_STAT, "max",
                                               "waittime_max_us")),
    "lock_holdtime_avg_us": M("us", "lower", R(
        LOCK_STAT, "mean", "holdtime_total_us", per="acquisitions")),
    "lock_acquisitions": M("count", None, R(LOCK_STAT, "sum",
                                            "acquisitions")),
    "task_clock_ms": M("ms", None, R(PERF_STAT, "event", "task-clock")),
    "context_switches": M("count", None, R(PERF_STAT, "event",
                                           "context-switches")),
    "context_switches_per_mop": M("per 1M ops", "lower", RATE(
        "context_switches", 1e6, "ops")),
    "cpu_migrations": M("count", None, R(PERF_STAT, "event",
                                         "cpu-migrations")),
    "cpu_migrations_per_mop": M("per 1M ops", "lower", RATE(
        "cpu_migrations", 1e6, "ops")),
    "perf_lock_contended": M("count", None, R(PERF_LOCK, "field",
                                              "contended")),
    "perf_lock_contended_per_kop": M("per 1k lockops", "lower", RATE(
        "perf_lock_contended", 1e3, "lockops")),
    "perf_lock_wait_total_ns": M("ns", None, R(PERF_LOCK, "field",
                                               "total_wait_ns")),
    "perf_lock_wait_per_op_ns": M("ns", "lower", RATE(
        "perf_lock_wait_total_ns", 1, "lockops")),
    # The host, not the kernel (host-steal.txt, guest/JOB.md): how much of
    # the module's run QEMU's vCPU threads waited on a host run queue.
    "steal_pct": M("%", None, R(HOST_STEAL, "mean", "steal_pct")),
    "steal_max_pct": M("%", None, R(HOST_STEAL, "max", "steal_pct")),
    # What the guest's own QEMU could have taken from its vCPUs: the run
    # time of its other threads, in % of one core (guards.own_threads).
    "qemu_other_pct": M("% of a core", None, R(HOST_STEAL, "others_pct",
                                               "run_ns")),
    # How fast the host's cores ran a fixed piece of work while the point
    # ran (host-meter.txt, guest/meter/README.md): the host, which the
    # guest kernel cannot move.
    "host_meter_ns": M("ns", None, R(HOST_METER, "weighted_mean",
                                     "median_ns", per="samples")),
}
del M, R, LAT, RATE

#: the ops whose latencies results.txt times (Rule.field of a latency)
OPS = ("lookup", "write")


def find(source, stat, field=None, q=None):
    """The metric computed by this rule (the first in the registry), so
    that a reader names a metric by what it is: find(RESULTS, "fairness",
    "spread") is fairness_spread."""
    return next(m for m, x in METRICS.items()
                if x.rule[:4] == (source, stat, field, q))


def raw(metric):
    """The metric itself, or the raw metric a twin normalises."""
    x = METRICS.get(metric)
    return x.twin[1] if x and x.twin else metric


def op_of(metric):
    """The op ("lookup", "write") whose latencies the metric (or the raw
    metric of its twin) is a statistic of; None for any other."""
    x = METRICS.get(raw(metric))
    return x.rule.field if x and x.rule.source == RESULTS \
        and x.rule.field in OPS else None


def statistic(metric):
    """The statistic of an op's latencies the metric (or the raw metric
    of its twin) is, in words: "median", "p99", "max", "mean"; None for
    a metric that is none."""
    if op_of(metric) is None:
        return None
    rule = METRICS[raw(metric)].rule
    if rule.stat != "quantile":
        return rule.stat
    return "median" if rule.q == 0.5 else f"p{rule.q * 100:g}"


def latency(op, stat):
    """The metric of an op's latencies by its statistic in words
    (statistic's): latency("write", "p99") is write_lat_p99_ns."""
    return next(m for m, x in METRICS.items() if not x.twin
                and op_of(m) == op and statistic(m) == stat)


def twins(metric):
    """The metrics that read `metric` against the host (REF_TWIN,
    RUN_TWIN), in the registry's order."""
    return tuple(m for m, x in METRICS.items() if x.twin
                 and x.twin[1] == metric)


#: what a campaign may name its primary_metric
PRIMARY_CHOICES = tuple(m for m, x in METRICS.items() if x.primary)
#: metrics a pause between operations keeps from moving
RATE_METRICS = tuple(m for m, x in METRICS.items() if x.rate)
#: what a throughput or latency metric is under icount
ICOUNT_EQUIV = {m: x.icount for m, x in METRICS.items() if x.icount}
#: a raw metric and the same read against the host's speed (TIDY.md)
REF_TWIN = {x.twin[1]: m for m, x in METRICS.items()
            if x.twin and x.twin[0] == "ref"}
#: a raw metric and the same per second the vCPUs ran (TIDY.md)
RUN_TWIN = {x.twin[1]: m for m, x in METRICS.items()
            if x.twin and x.twin[0] == "run"}

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


def unit_of(metric, clock=WALL):
    """A metric's unit in a cell of this clock: under icount a guest
    nanosecond is an instruction."""
    u = unit(metric)
    return ICOUNT_UNITS.get(u, u) if clock == ICOUNT else u


def direction(metric):
    """"higher", "lower" or None (no verdict) for a metric name."""
    m = METRICS.get(metric)
    return m.direction if m else None


def unit(metric):
    m = METRICS.get(metric)
    return m.unit if m else ""


def metric_order(names, primary=None):
    """NAMES in the registry's order, the primary metric first, names the
    registry does not know last (alphabetically)."""
    order = [m for m in METRICS if m in names]
    order += sorted(m for m in names if m not in METRICS)
    if primary in order:
        order.remove(primary)
        order.insert(0, primary)
    return order
