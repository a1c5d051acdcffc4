# SPDX-License-Identifier: GPL-2.0
"""Which metric answers a campaign at a cell: its clock (the host's wall
clock, or QEMU's instruction count) and its regime (a tight loop, or a
pause between operations) decide what can move.

- Where a pause sets the rate (a point's think_ns > 0), throughput barely
  moves whatever an operation costs: the answer is the cost of an
  operation, never throughput (scripts/campaign/file.py refuses one).
- Under icount (QEMU `-icount shift=0`: 1 guest ns = 1 instruction) a
  metric is an instruction count: throughput becomes instructions per
  operation (exact to parts per million), and a latency its mean (the
  fine histograms' medians step by up to 6%; the mean, `sum_ns / count`,
  averages timed ops that the 62.5 MHz arch timer counts in steps of 16
  instructions, and spreads 0.01-0.15% between boots: docs/icount.md).
- A campaign that names no primary metric gets the one the default
  campaign uses in that regime, and its answer says so.

Shared by the campaign file's checks and the analysis: pure functions of
a campaign as scripts/campaign/file.py resolves it (a dict)."""

from analysis.metrics import ICOUNT_EQUIV, RATE_METRICS
from lockbench import defaults
from lockbench.defaults import CLOCKS, ICOUNT, WALL

#: the default campaign's choices (campaigns/default.toml), per regime:
#: (clock, paced) -> metric; a tight wall-clock loop is judged on
#: throughput_run only where the steal division holds (pinned boots;
#: else UNPINNED_DEFAULT)
DEFAULTS = {
    (ICOUNT, False): "insn_per_op",
    (ICOUNT, True): "lookup_lat_mean_ns",
    (WALL, False): "throughput_run",
    (WALL, True): "lookup_lat_median_ref",
}
#: a tight wall-clock loop whose vCPUs are not pinned one a core
UNPINNED_DEFAULT = "throughput_ops_s"
#: what a campaign from before the per-regime defaults (a manifest
#: without `clock`) that named no metric was judged on; also the answer
#: of a campaign that names metrics per point only
BEFORE_DEFAULTS = "throughput_ops_s"
#: a paced wall-clock point of 2 vCPUs or more.  The host-speed probe
#: (the `_ref` divisor) runs on a vCPU beside the others, whose load is
#: the kernel's: there the kernel under test moves the probe (the
#: spinlock kernel by 0.85 at read95-paced and 1.12 at read95-long, 2
#: vCPUs; docs/measurements.md), so `_ref` would divide the kernel's
#: own effect out, and its guard withholds the verdict.  The raw
#: latency is the kernel's alone; the host's speed is noise in it,
#: spread over both sides by the counterbalanced order.
SHARED_PROBE_DEFAULT = "lookup_lat_median_ns"


def clock_of(campaign, cpus):
    """"wall" or "icount": the clock of the campaign's boots of `cpus`
    vCPUs (campaigns from before the key: wall)."""
    clocks = campaign.get("clock")
    if isinstance(clocks, dict):
        c = clocks.get(str(cpus), WALL)
        return c if c in CLOCKS else WALL
    return WALL


def pinned(campaign, cpus):
    """Whether the campaign pins the vCPU threads of its boots of `cpus`
    vCPUs: pin = true (the default) and 2 vCPUs or more (measured:
    docs/measurements.md, "Pinning vCPU threads"; scripts/campaign/run.py
    pin_for hands out the cores)."""
    return defaults.campaign_value(campaign, "pin") is not False and cpus >= 2


def default_metric(clock, paced, is_pinned=True, cpus=1):
    if clock == WALL and not paced and not is_pinned:
        return UNPINNED_DEFAULT
    if clock == WALL and paced and cpus >= 2:
        return SHARED_PROBE_DEFAULT
    return DEFAULTS[(clock, paced)]


def named(campaign, point):
    """The metric the campaign file named for a point (its own
    primary_metric, else the campaign's), or None."""
    return point.get("primary_metric") or campaign.get("primary_metric")


def metric_for(campaign, cpus, point):
    """(metric, how) for the point (a dict of the campaign's points) at
    `cpus` vCPUs: how is "named" or "default"; under icount a named
    metric reads as its instruction-count equivalent."""
    clock = clock_of(campaign, cpus)
    paced = bool(point.get("think_ns"))
    name = named(campaign, point)
    if name is None:
        return default_metric(clock, paced, pinned(campaign, cpus),
                              cpus), "default"
    if clock == ICOUNT:
        name = ICOUNT_EQUIV.get(name, name)
    return name, "named"


def named_nothing(campaign):
    """True when the campaign named no primary metric at all (its cells
    take the default of their regime, and the answer says so)."""
    return "clock" in campaign and not campaign.get("primary_metric") \
        and not any(isinstance(p, dict) and p.get("primary_metric")
                    for p in campaign.get("points") or [])


def metric_at(campaign, cpus, pid):
    """(metric, "named" | "default") that answers point pid at `cpus`
    vCPUs; a manifest from before per-point metrics (no `clock`): the
    campaign's one metric."""
    if "clock" not in campaign:
        return str(campaign.get("primary_metric") or BEFORE_DEFAULTS), \
            "named"
    p = next((p for p in campaign.get("points") or []
              if isinstance(p, dict) and p.get("id") == pid), {})
    return metric_for(campaign, int(cpus), p)


def campaign_metric(campaign, cpus_list, point_ids):
    """The metric named before the run as the campaign's answer, or the
    one most of its primary cells (cpus_list x point_ids) use when it
    named none (the default per regime: metric_at)."""
    named = campaign.get("primary_metric")
    if named:
        return str(named)
    if not named_nothing(campaign):
        return BEFORE_DEFAULTS
    got = [metric_at(campaign, c, p)[0] for c in cpus_list
           for p in point_ids]
    return max(dict.fromkeys(got), key=got.count) if got \
        else BEFORE_DEFAULTS


def paced_refusal(metric, point):
    """Why `metric` cannot answer the point, or None: a rate metric at a
    point whose pause between operations sets the rate."""
    if point.get("think_ns") and metric in RATE_METRICS:
        return (f"{metric} cannot move at a paced point (think_ns = "
                f"{point['think_ns']}: the pause sets the rate); name the "
                f"cost of an operation, e.g. lookup_lat_median_ref or "
                f"lookup_lat_median_ns")
    return None
