# SPDX-License-Identifier: GPL-2.0
"""The sample metrics of one point from its parsed files: every metric of
the registry (analysis/metrics.py METRICS), each by its rule, the
statistic named there computed here (STATS, keyed by the rule's source
and stat).  Pure functions of parsed objects; analysis.tidy.tables
decides which files a point has and whether they count.
"""

from analysis import metrics as registry
from analysis.metrics import (HOST_METER, HOST_STEAL, LOCK_STAT, PERF_LOCK,
                              PERF_STAT, RESULTS)
from analysis.parse.host_steal import VCPU_THREAD
from lockbench.defaults import WALL


def compute(sources, clock=WALL, given=None):
    """{metric: value} of one point: every metric of the registry whose
    source is in `sources` (rule.source -> its parsed object; a source
    that is absent or does not count is left out or None), whose clock
    is the boot's and whose derived_from metrics were computed, in the
    registry's order.  `given`: metrics known already (kept as they
    are).  A statistic without a value (no timed op, a zero amount of
    work) gives no metric, never a zero or inf."""
    got = dict(given or {})
    tried = set(got)

    def one(name):
        if name in tried:
            return name in got
        tried.add(name)
        rule = registry.METRICS[name].rule
        if rule.clock is not None and rule.clock != clock:
            return False
        if not all([one(d) for d in rule.derived_from]):
            return False
        src = sources.get(rule.source) if rule.source else None
        if rule.source and src is None:
            return False
        value = STATS[(rule.source, rule.stat)](src, rule, got)
        if value is not None:
            got[name] = value
        return value is not None

    for name in registry.METRICS:
        one(name)
    return got


# results.txt (analysis/parse/bench_results.py Results), only of a run
# that passed

def _lat(res, op):
    """An op's timed operations, None when it timed none."""
    lat = res.lat.get(op)
    return lat if lat is not None and lat.count != 0 else None


def _lat_stat(how):
    def stat(res, rule, _got):
        lat = _lat(res, rule.field)
        return how(lat, rule) if lat is not None else None
    return stat


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


def _per_probe(res, rule, got):
    """A latency in probe times: a host core that slows down slows the
    workload and the probe alike.  A median (an op's typical latency)
    against the probe's median: when the host changed speed during the
    run, both come from the same, longer phase."""
    ref = ref_ns(res, rule.field)
    return got[rule.derived_from[0]] / ref if ref is not None else None


def _work(res, per):
    """results.txt's amount of work: "ops" = `total ops`, "lockops" =
    `lockops read + write` (the module's calls that take the lock on a
    locking kernel)."""
    if per == "ops":
        return res.total["ops"]
    return res.lockops["read"] + res.lockops["write"]


def _rate(res, rule, got):
    """scale * total / work.  A total scales with the work a run did (a
    kernel that collapses to a few ops has few contentions), a rate does
    not.  Only from an ok results.txt (also the lock_stat rates, whose
    totals alone do not need one): the work of a failed run is not the
    work its counters saw.  A zero amount of work gives no rate, not
    inf."""
    total = rule.derived_from[0]
    work = got[rule.derived_from[1]] if len(rule.derived_from) > 1 \
        else _work(res, rule.per)
    return rule.scale * got[total] / work if work > 0 else None


def _insn_per_op(res, _rule, _got):
    """elapsed_ns * threads / ops, read under QEMU's icount (shift 0: a
    guest ns is an instruction; the pause of a paced point, the probes
    and the timer ticks included); none without ops."""
    elapsed, threads = res.run.get("elapsed_ns"), res.run.get("threads")
    ops = res.total.get("ops")
    if not isinstance(elapsed, int) or not isinstance(threads, int) \
            or not ops:
        return None
    return elapsed * threads / ops


# lock_stat.txt: the rows (R, W, plain) of the lock class, summed

def _lock_mean(rows, rule, _got):
    total = sum(getattr(r, rule.field) for r in rows)
    n = sum(getattr(r, rule.per) for r in rows)
    return total / n if n else rule.zero


# host-steal.txt: a row per QEMU thread (analysis/parse/host_steal.py)

def _vcpu_steal(rows, field):
    return [r[field] for r in rows if VCPU_THREAD.fullmatch(r["thread"])]


def _others_pct(rows, rule, _got):
    """The run time of QEMU's other threads (main loop, RCU, workers) in
    percent of one core over the run, where the file has them (files
    from before it list the vCPU threads only)."""
    others = [r for r in rows if not VCPU_THREAD.fullmatch(r["thread"])]
    if not others:
        return None
    wall = max(_vcpu_steal(rows, "wall_ns"))
    return 100 * sum(r[rule.field] for r in others) / wall


def _weighted_mean(rows, rule, _got):
    """The mean of a field over the rows weighted by `per` (host-meter:
    the cores' medians by their samples)."""
    n = sum(r[rule.per] for r in rows)
    return sum(r[rule.field] * r[rule.per] for r in rows) / n


def _per_run(_src, rule, got):
    """Throughput per second that the vCPUs were on a host core,
    throughput / (1 - steal_pct / 100): the host, not the kernel, decides
    how much of a second a TCG guest gets (TIDY.md, "throughput_run");
    none where the vCPUs never ran."""
    thr, st = (got[m] for m in rule.derived_from)
    return thr / (1 - st / 100) if 0 <= st < 100 else None


def _event(ps, rule, _got):
    c = ps.get(rule.field)
    return c.value if c is not None else None


#: (source, stat) -> f(the parsed source, the rule, the metrics so far)
STATS = {
    (RESULTS, "total"): lambda res, r, _: res.total[r.field],
    (RESULTS, "fairness"): lambda res, r, _: res.fairness[r.field],
    (RESULTS, "quantile"): _lat_stat(lambda lat, r: lat.quantile(r.q)),
    (RESULTS, "max"): _lat_stat(lambda lat, r: lat.max_ns),
    (RESULTS, "mean"): _lat_stat(lambda lat, r: lat.mean_ns),
    (RESULTS, "probe"): lambda res, r, _: ref_ns(res, r.field),
    (RESULTS, "per_probe"): _per_probe,
    (RESULTS, "rate"): _rate,
    (RESULTS, "insn_per_op"): _insn_per_op,
    (LOCK_STAT, "sum"): lambda rows, r, _: sum(getattr(x, r.field)
                                               for x in rows),
    (LOCK_STAT, "max"): lambda rows, r, _: max(getattr(x, r.field)
                                               for x in rows),
    (LOCK_STAT, "mean"): _lock_mean,
    (PERF_STAT, "event"): _event,
    (PERF_LOCK, "field"): lambda row, r, _: getattr(row, r.field),
    (HOST_STEAL, "mean"): lambda rows, r, _: (
        sum(_vcpu_steal(rows, r.field)) / len(_vcpu_steal(rows, r.field))),
    (HOST_STEAL, "max"): lambda rows, r, _: max(_vcpu_steal(rows, r.field)),
    (HOST_STEAL, "others_pct"): _others_pct,
    (HOST_METER, "weighted_mean"): _weighted_mean,
    (None, "product"): lambda _, r, got: (got[r.derived_from[0]]
                                          * got[r.derived_from[1]] / r.scale),
    (None, "per_run"): _per_run,
}
