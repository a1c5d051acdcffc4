# SPDX-License-Identifier: GPL-2.0
"""The comparisons table: one verdict per compared pair, vCPU count,
workload point and metric, with the rules that keep a table of them
honest (analysis/README.md, "Verdicts"):

- each cell's primary metric (per clock and regime: analysis/primary.py)
  at the primary points is the answer, named before the run; the
  writers' tail (WRITERS) at the mixed points, 2 vCPUs or more, is a
  second answer, named by the project (role `writers`); every other
  row is exploration, Holm-corrected across the table;
- a cell whose clock is QEMU's instruction count is judged by the rule
  for exact data (analysis/estimate/exact.py), every other by the Hodges-Lehmann
  ratio of the typical boot and, before anything favourable, the ratio
  of means over every boot (analysis/estimate/stats.py);
- the guards (analysis/verdict/guards.py) run on the verdicts before Holm: lost
  boots and failed points, the A/A control's calibration, the host-speed
  probe, the steal division and the twins' conflicts;
- a variant with a lockdep report in any boot is `unsafe` in every row it
  takes part in, whatever the numbers (analysis/verdict/safety.py).

Pure functions of data frames; never prints.
"""

import math

import numpy as np
import pandas as pd

from analysis.estimate import adjusted, exact, holm, mann_whitney, paired, stats

from analysis.estimate.thresholds import Thresholds
from analysis.verdict import guards, safety
from analysis.estimate import medians
from analysis import metrics
from lockbench.defaults import ICOUNT, WALL

HOLM = stats.INCONCLUSIVE + " (Holm)"

COMPARISONS_COLUMNS = (
    "campaign", "baseline", "variant", "kernel", "cpus", "point", "read_pct",
    "mailboxes", "miss_pct", "duration_ms", "metric", "unit", "direction",
    "role", "clock", "primary_how", "n_base", "n_var", "boots_base",
    "boots_var", "lost_base", "lost_var", "p_lost", "lost_rate_hi",
    "failed_base",
    "failed_var", "starved_base", "starved_var", "median_base", "ci_lo_base",
    "ci_hi_base", "median_var", "ci_lo_var", "ci_hi_var", "mean_base",
    "mean_var", "ratio", "ratio_ci_lo", "ratio_ci_hi", "mean_ratio",
    "mean_ci_lo", "mean_ci_hi", "ci_level", "p_value", "significant",
    "p_claim", "margin", "verdict_typical", "verdict_unadjusted", "verdict",
    "n_needed", "calibration", "aa_widen", "probe_ratio", "probe_ci_lo",
    "probe_ci_hi", "warnings", "n_pairs", "paired_ratio", "paired_ci_lo",
    "paired_ci_hi", "paired_ci_level", "host_speed", "meter_slope", "meter_r2")


def _row(base_key, c, th, level):
    d = dict(base_key)
    d.update(n_base=c.n_base, n_var=c.n_var, median_base=c.base.median,
             ci_lo_base=c.base.ci_lo, ci_hi_base=c.base.ci_hi,
             median_var=c.var.median, ci_lo_var=c.var.ci_lo,
             ci_hi_var=c.var.ci_hi, ratio=c.ratio,
             ratio_ci_lo=c.ratio_ci_lo, ratio_ci_hi=c.ratio_ci_hi,
             mean_ratio=c.mean_ratio, mean_ci_lo=c.mean_ci_lo,
             mean_ci_hi=c.mean_ci_hi, verdict_typical=c.typical,
             ci_level=level, p_value=c.p_value,
             significant=int(c.significant), p_claim=c.p_claim,
             margin=th.margin, verdict=c.verdict, n_needed=c.n_needed,
             warnings="; ".join(c.warnings))
    return d


def _failures(outcomes):
    """(variant, cpus, point) -> (failed, starved): points that gave no
    sample because the module reported FAILURE (starved: a thread did no
    op) or the point's results are missing."""
    out = {}
    if outcomes is None or outcomes.empty:
        return out
    bad = outcomes[outcomes["outcome"] != "ok"]
    for (v, c, p), g in bad.groupby(["variant", "cpus", "point"]):
        out[(v, int(c), str(p))] = (len(g), int((g["outcome"]
                                                 == "starved").sum()))
    return out


class _Plan:
    """What a table without a run directory knows: one primary metric,
    every clock the wall's."""

    class _Every:
        def __contains__(self, _point):
            return True

    def __init__(self, primary, primary_points):
        self.primary = primary
        self.primary_points = primary_points or self._Every()

    def primary_for(self, _cpus, _point):
        return self.primary, "named"

    def clock(self, _cpus):
        return WALL

    def kernel(self, _variant):
        return ""


def comparisons_table(samples, pairs, thresholds=Thresholds(),
                      primary="throughput_ops_s", primary_points=None,
                      outcomes=None, controls=(), unsafe=(), plan=None,
                      tally=None):
    """One row per (baseline, variant) pair x cpus x point x metric
    (COMPARISONS_COLUMNS), in the outputs' order (_in_order); `controls`: (baseline,
    control) A/A pairs, judged alike with role `control`; `unsafe`: the
    variants with a lockdep report (lockdep.lockdep_reports); `plan`: the
    run directory (analysis/parse/rundir.py: primary_for, clock, steal_refusal,
    primary_points), else `primary` at `primary_points` on the wall
    clock; `tally`: the lost boots (analysis/tidy/boots.py tally).  A metric
    that one side of a pair never measured gets no row for that pair,
    but a primary cell always has its row: a kernel that lost every boot
    there is still judged, on its lost boots."""
    th = thresholds
    plan = plan or _Plan(primary, primary_points)
    if samples.empty:
        return pd.DataFrame([], columns=COMPARISONS_COLUMNS)
    every = list(pairs) + list(controls)
    cells = _Cells(samples, outcomes, controls, plan, th)
    measured = set(zip(samples["variant"], samples["metric"]))
    for k, g in samples.groupby(list(medians.GROUP), sort=False, dropna=False):
        d0 = dict(zip(medians.GROUP, k))
        here = set(g["variant"])
        for b, v in every:
            # a pair neither of whose sides ran here (the production
            # twins at 1 vCPU only) has no row here
            if (b, d0["metric"]) in measured and (v, d0["metric"]) in measured \
                    and (b in here or v in here):
                cells.add(d0, b, v, g)
    rows, groups = cells.rows, cells.groups
    _primary_cells(rows, groups, samples, every, plan, cells.campaign, cells.add, tally)
    _guard(rows, groups, samples, controls, unsafe, plan, tally, th)
    return pd.DataFrame(_in_order(rows, samples, every, primary),
                        columns=COMPARISONS_COLUMNS)


class _Cells:
    """The rows of comparisons_table as each compared cell adds its own
    (add): its role, its estimate by the rule of its clock, and the
    values each side pooled (groups, for Holm)."""

    def __init__(self, samples, outcomes, controls, plan, th):
        self.controls, self.plan, self.th = controls, plan, th
        self.campaign = samples["campaign"].iloc[0]
        self.fails = _failures(outcomes)
        self.ctl_of = dict(controls)
        self.meter = _meter(samples)
        self.rows, self.groups = [], []

    def covariate(self, sel, cpus, point):
        """The host meter's reading of each boot of sel (None without one)."""
        if not self.meter:
            return [None] * len(sel)
        return [self.meter.get((v, cpus, point, boot))
                for v, boot in zip(sel["variant"], sel["cell"])]

    def role(self, d0, b, v, cpus, clock):
        want, _how = self.plan.primary_for(cpus, d0["point"])
        primary_points = self.plan.primary_points
        return ("control" if (b, v) in self.controls else "primary"
                if d0["metric"] == want and d0["point"] in primary_points
                else "writers" if _writers_cell(d0["metric"], cpus, clock, d0,
                                                primary_points)
                else "exploratory")

    def estimate(self, d0, b, v, g, role, clock, direction):
        """(the comparison, the host speed's fit or None, the baseline's
        values as pooled, the variant's) of pair b, v in the cell's
        samples g."""
        th, cpus = self.th, int(d0["cpus"])
        gb, gv = g[g["variant"] == b], g[g["variant"] == v]
        base, var = gb["value"].to_numpy(), gv["value"].to_numpy()
        # The verdict pools the A/A control's boots with the baseline's:
        # boots of the same kernel.  The A/A pair itself is judged on the
        # two apart, the diagnostic that widens (guards.calibrate).
        ga = (g[g["variant"] == self.ctl_of[b]]
              if b in self.ctl_of and (b, v) not in self.controls else None)
        aa = ga["value"].to_numpy() if ga is not None else None
        fit = None
        if clock == ICOUNT and direction:
            c = exact.compare(base, var, direction, th, aa,
                              control=(b, v) in self.controls)
        else:
            if aa is not None and len(aa):
                base = np.concatenate([base, aa])
                gb = pd.concat([gb, ga])
            if direction and role in ("primary", "control"):
                # The answer's cells: read at one host speed where the
                # host meter explains the boots (estimate/adjusted.py).
                point = str(d0["point"])
                c, fit = adjusted.compare(base, self.covariate(gb, cpus, point), var,
                                          self.covariate(gv, cpus, point), direction, th)
            else:
                c = stats.compare(base, var, direction, th)
        pooled = base if aa is None or clock != ICOUNT else np.concatenate([base, aa])
        return c, fit, pooled, var

    def add(self, d0, b, v, g):
        """The row of pair b, v in the cell d0 (GROUP's values), whose
        samples are g."""
        th, plan = self.th, self.plan
        metric, cpus = d0["metric"], int(d0["cpus"])
        direction = metrics.direction(metric)
        _want, how = plan.primary_for(cpus, d0["point"])
        clock = plan.clock(cpus)
        role = self.role(d0, b, v, cpus, clock)
        c, fit, pooled, var = self.estimate(d0, b, v, g, role, clock, direction)
        fb, sb = self.fails.get((b, cpus, str(d0["point"])), (0, 0))
        fv, sv = self.fails.get((v, cpus, str(d0["point"])), (0, 0))
        key = dict(campaign=self.campaign, baseline=b, variant=v, kernel=plan.kernel(v),
                   **d0, direction=direction or "none", role=role, clock=clock,
                   primary_how=how if role == "primary" else "",
                   failed_base=fb, failed_var=fv, starved_base=sb,
                   starved_var=sv)
        level = math.nan if clock == ICOUNT else _level(c, th.confidence)
        row = _row(key, c, th, level)
        row.update(_paired(g, b, v, th.confidence))
        row.update(host_speed=("adjusted" if fit.used else "raw: " + fit.why)
                   if fit else "", meter_slope=fit.slope if fit else math.nan,
                   meter_r2=fit.r2 if fit else math.nan)
        row.update(mean_base=_mean(pooled), mean_var=_mean(var))
        self.rows.append(row)
        self.groups.append((pooled, var, direction))


def _guard(rows, groups, samples, controls, unsafe, plan, tally, th):
    """The guards on the rows' verdicts, in their order: those that judge
    what the data say come before any multiplicity correction
    (guards.py), then Holm, then the lost boots, the steal flag and the
    lockdep reports."""
    for r in rows:
        r["verdict_unadjusted"] = r["verdict"]
    guards.calibrate(rows, controls, th)
    guards.probe(rows, samples, th)
    guards.own_threads(rows, samples, th,
                       getattr(plan, "steal_refusal", None))
    guards.conflicts(rows)
    _holm(rows, groups, th)
    guards.failures(rows, tally, th.confidence, controls)
    guards.flag_steal(rows, samples)
    safety.mark(rows, unsafe, controls)


def _in_order(rows, samples, pairs, primary):
    """The rows in the one order every output shows them (comparisons.csv,
    summary.md, the commit block, report.html: analysis/verdict/table.py):
    the answer first, its primary cells by pair (the campaign's order),
    vCPUs and point (the campaign's order), whatever metric each cell is
    answered on; then the writers' answer (role `writers`: WRITERS) by
    pair, vCPUs, point and metric; then every other row by metric (the campaign's primary
    metric first, then the registry's order,
    analysis.metrics.metric_order), pair (the A/A controls last), vCPUs,
    point.  Sorted after every verdict: Holm's ranking never sees it."""
    morder = {m: i for i, m in enumerate(
        metrics.metric_order({r["metric"] for r in rows}, primary))}
    porder = {p: i for i, p in enumerate(dict.fromkeys(
        samples["point"].astype(str)))}
    pair_at = {p: i for i, p in enumerate(pairs)}

    def key(r):
        at = (pair_at.get((r["baseline"], r["variant"]), len(pair_at)),
              int(r["cpus"]), porder.get(str(r["point"]), len(porder)))
        if r["role"] == "primary":
            return (0, 0) + at
        if r["role"] == "writers":
            return (1, 0) + at + (morder[r["metric"]],)
        return (2, morder[r["metric"]]) + at
    return sorted(rows, key=key)


#: the writers' answer (role `writers`): the tail of a writer's wait, at
#: every primary point that mixes reads and writes, at 2 vCPUs or more on
#: the wall clock (one vCPU runs one benchmark thread: no reader can keep
#: a writer waiting; under icount a wait is not a time).  The LWN
#: article's case against rwlocks is that readers starve writers: this is
#: where a campaign measures it.
WRITERS = ("write_lat_p99_ns", "write_lat_max_ns")


def _writers_cell(metric, cpus, clock, d0, points):
    """Whether a (non-control) row answers for the writers (WRITERS)."""
    try:
        reads = float(d0.get("read_pct"))
    except (TypeError, ValueError):
        return False
    return (metric in WRITERS and cpus >= 2 and clock == WALL
            and 0 < reads < 100 and d0["point"] in points)


def _meter(samples):
    """{(variant, cpus, point, boot): host_meter_ns} of the samples (the
    boot's id: samples.csv's column `cell`)."""
    if "cell" not in samples.columns:  # samples without boots: no meter
        return {}
    m = samples[samples["metric"] == adjusted.METER]
    return {(v, int(c), str(p), boot): float(x) for v, c, p, boot, x in
            zip(m["variant"], m["cpus"], m["point"], m["cell"], m["value"])}


def _mean(x):
    x = stats._clean(x)
    return float(x.mean()) if len(x) else math.nan


def _primary_cells(rows, groups, samples, pairs, plan, campaign, add,
                   tally=None):
    """A primary cell without a row (one side has no sample of its metric
    there: every boot lost, or none run) gets one, judged on what there
    is: its lost boots (guards.failures); not at a vCPU count where
    neither side of the pair booted at all (a pair the campaign runs at
    some vCPU counts only: the production twins at 1 vCPU)."""
    booted = {(str(v), int(c)) for v, c in zip(samples["variant"],
                                               samples["cpus"])}
    booted |= {k for k, t in (tally or {}).items() if t.get("boots")}
    have = {(r["baseline"], r["variant"], int(r["cpus"]), str(r["point"]))
            for r in rows if r["role"] in ("primary", "control")
            and r["metric"] == plan.primary_for(int(r["cpus"]),
                                                r["point"])[0]}
    cols = [c for c in medians.GROUP if c not in ("metric", "unit")]
    for k, g in samples.groupby(["cpus", "point"], sort=False):
        cpus, point = int(k[0]), str(k[1])
        if point not in plan.primary_points:
            continue
        metric, _how = plan.primary_for(cpus, point)
        d0 = {c: g[c].iloc[0] for c in cols}
        d0.update(metric=metric, unit=metrics.unit_of(
            metric, plan.clock(cpus)))
        for b, v in pairs:
            if (b, v, cpus, point) in have:
                continue
            if (b, cpus) not in booted and (v, cpus) not in booted:
                continue
            sel = g[g["metric"] == metric]
            add(d0, b, v, sel if len(sel) else g.iloc[0:0])


def _paired(g, b, v, confidence):
    """The paired ratio's columns: the two sides' boots matched by
    repetition (analysis/estimate/paired.py), beside the unpaired verdict."""
    if "rep" not in g.columns:  # samples without repetitions: no pairs
        r = paired.NONE
        return dict(n_pairs=0, paired_ratio=r.ratio, paired_ci_lo=r.ci_lo,
                    paired_ci_hi=r.ci_hi, paired_ci_level=r.level)

    def by_rep(variant):
        sel = g[g["variant"] == variant]
        return dict(zip(sel["rep"].astype(int), sel["value"].astype(float)))
    r = paired.paired(by_rep(b), by_rep(v), confidence)
    return dict(n_pairs=r.n, paired_ratio=r.ratio, paired_ci_lo=r.ci_lo,
                paired_ci_hi=r.ci_hi, paired_ci_level=r.level)


def _level(c, confidence):
    if c.n_base == 0 or c.n_var == 0 or math.isnan(c.ratio):
        return math.nan
    return mann_whitney.ci_level(c.n_base, c.n_var, confidence)


def _holm(rows, groups, th):
    """Holm's step-down over the exploratory rows that claim something:
    ranked by the p of the claim their verdict makes (for an undecided
    row, the smallest over the claims), each is re-judged on its CI at
    its Holm level (1 - alpha / (K - rank)), widened by its A/A control
    as before (guards.calibrate); a row still decided there, before the
    step-down stopped, keeps that judgement (CI at that level,
    `ci_level`).  The step-down stops at the first row whose p exceeds
    its level and that is not decided there: a row Holm leaves
    undecided, and a row that was undecided or withheld already (a
    guard's `withheld`, `conflict`, `inconclusive`) whose p does not
    reach its level; Holm rejects nothing after the first hypothesis it
    cannot reject, whatever label that row wears.  Every decided row
    after the stop says `inconclusive (Holm)` (with its 95% CIs).  Rows
    that claimed nothing keep their label: they count in K all the
    same, as hypotheses tested.  Rows of exact data (icount) are
    bounds, not tests: none is in K.  Rows change in place."""
    idx = [i for i, r in enumerate(rows)
           if r["role"] == "exploratory" and r["direction"] != "none"
           and r["verdict"] not in ("", stats.TOO_FEW)
           and r.get("clock") != ICOUNT
           and not math.isnan(r["p_claim"])]
    if not idx:
        return
    levels = holm.holm_levels([rows[i]["p_claim"] for i in idx], th.alpha)
    stopped = False
    for i, level in sorted(zip(idx, levels), key=lambda x: -x[1]):
        r = rows[i]
        if r["verdict"] not in stats.DECIDED:
            if r["p_claim"] > 1 - level:
                stopped = True
            continue
        base, var, direction = groups[i]
        c = stats.compare(base, var, direction, th.with_(confidence=level))
        was = dict(r)
        r.update(ratio_ci_lo=c.ratio_ci_lo, ratio_ci_hi=c.ratio_ci_hi,
                 mean_ci_lo=c.mean_ci_lo, mean_ci_hi=c.mean_ci_hi,
                 verdict=c.verdict, n_needed=c.n_needed,
                 ci_level=_level(c, level))
        guards.widen(r, r.get("aa_widen", 0.0), direction, th.margin,
                     th.min_n)
        if stopped or r["verdict"] not in stats.DECIDED:
            stopped = True
            # the 95% CIs stay, with the label
            for k in ("ratio_ci_lo", "ratio_ci_hi", "mean_ci_lo",
                      "mean_ci_hi", "n_needed", "ci_level"):
                r[k] = was[k]
            r["verdict"] = HOLM


def primary_rows(comps):
    """The rows that are the campaign's answer."""
    if comps.empty:
        return comps
    return comps[comps["role"] == "primary"]
