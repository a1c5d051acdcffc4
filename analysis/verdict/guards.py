# SPDX-License-Identifier: GPL-2.0
"""The guards of the comparisons table: the rules that keep a
normalisation, the host or a lost boot from turning a harm into no harm
(analysis/README.md, "Verdicts").  Each works on the rows as
verdicts.comparisons_table builds them, before Holm's correction: a
guard that compared with a verdict Holm had already made `inconclusive
(Holm)` would rarely fire.

- failures: a side that lost more boots than its baseline (Fisher's
  exact test at the campaign's level) is `harm (failures)`; any
  difference in lost boots or failed points withholds a favourable
  verdict;
- calibrate: the A/A control's CI widens the comparison's CI by as much
  as it lies away from 1 (graded, never a switch);
- probe: a `_ref` verdict stands only where the host-speed probe itself
  held still between the kernels;
- own_threads: a favourable `throughput_run` verdict stands only where
  the variant's own QEMU threads could not have bought it (the tolerance
  shrinks with the steal it divides out), and only where the division
  holds at all (boots pinned, local, not oversubscribed);
- conflicts: a raw metric and its `_ref` or `_run` twin on opposite sides
  are both `conflict`;
- flag_steal: every row of a cell where the host kept a vCPU waiting
  says so.

Pure functions of row dicts and data frames; never print."""

import math

import numpy as np

from analysis.tidy import boots
from analysis.estimate import exact, mann_whitney, stats
from analysis import metrics
from analysis.metrics import REF_TWIN, RUN_TWIN
from lockbench.defaults import ICOUNT

PROBE = "ref_probe_ns"
#: QEMU's own other threads' run time (TIDY.md, "throughput_run"), and how
#: many points of a core more the variant's may have used than the
#: baseline's before a favourable throughput_run verdict is withheld, on
#: a host that stole nothing: 1% of the run, a fifth of the 5% margin.
#: With steal s (%) the division credits delta points as delta / (100 -
#: s) of the run, so the tolerance is OWN_TOLERANCE_PCT * (1 - s / 100).
OWN = "qemu_other_pct"
OWN_TOLERANCE_PCT = 1.0
STEAL = "steal_max_pct"
WITHHELD = "withheld (probe)"
WITHHELD_STEAL = "withheld (steal)"
CONFLICT = "conflict"


def failed_label(fb, fv):
    return f"{stats.INCONCLUSIVE} (failed {fb} vs {fv})"


def lost_label(lb, lv):
    return f"{stats.INCONCLUSIVE} (lost {lb} vs {lv} boots)"


def note(r, text):
    r["warnings"] = "; ".join(w for w in (r["warnings"], text) if w)


def failures(rows, tally, confidence, controls=()):
    """Lost boots (analysis/tidy/boots.py tally: (variant, cpus) -> counts,
    the baseline's pooled with its A/A control's: the same kernel) and
    failed points, per row: `harm (failures)` where the variant lost
    significantly more boots than the baseline at that vCPU count (Fisher,
    one-sided at half of 1 - confidence); else, where the variant lost a
    larger share of its boots than the baseline (rule R1: a baseline
    that lost more costs the variant nothing, and buys no protection),
    or the sides lost different numbers of points, no favourable
    verdict (`inconclusive (lost B vs V boots)`, `inconclusive (failed B
    vs V)`).  Every row carries `lost_rate_hi`, the one-sided upper bound
    at `confidence` on the share of boots the variant's kernel loses,
    which its favourable verdict cannot rule out.  The rows of a metric
    without a direction keep their empty verdict."""
    tally = tally or {}
    ctl = {}
    for b, c in controls:
        ctl.setdefault(b, []).append(c)
    for r in rows:
        cpus = int(r["cpus"])
        own = r["role"] == "control"
        tb = boots.pooled(tally, r["baseline"], cpus,
                          () if own else ctl.get(r["baseline"], ()))
        tv = boots.pooled(tally, r["variant"], cpus)
        r.update(boots_base=tb["boots"], boots_var=tv["boots"],
                 lost_base=tb["lost"], lost_var=tv["lost"],
                 p_lost=boots.p_more_lost(tv["lost"], tv["boots"],
                                          tb["lost"], tb["boots"]),
                 lost_rate_hi=boots.loss_rate_hi(tv["lost"], tv["boots"],
                                                 confidence))
        if r["direction"] == "none":
            continue
        open_ = r["verdict"] in stats.FAVOURABLE + (stats.TOO_FEW, "")
        more = tv["lost"] * max(tb["boots"], 1) > tb["lost"] * max(tv["boots"], 1)
        if r["p_lost"] < (1 - confidence) / 2:
            r["verdict"] = boots.FAILURES
            note(r, boots.lost_sentence(r["variant"], r["baseline"], cpus,
                                        tv, tb))
        elif more and (open_ or r["verdict"].startswith(stats.INCONCLUSIVE)):
            r["verdict"] = lost_label(tb["lost"], tv["lost"])
        elif r["failed_base"] != r["failed_var"] and open_:
            r["verdict"] = failed_label(r["failed_base"], r["failed_var"])


def widen(r, e, direction, margin, min_n):
    """Widen the row's CIs (the typical boot's and the mean's) by e (log)
    on both sides and judge them again, combined as stats.compare does."""
    if not e or math.isnan(r["ratio"]) or not r["verdict"]:
        return
    n = min(r["n_base"], r["n_var"])
    lo, hi = r["ratio_ci_lo"] * math.exp(-e), r["ratio_ci_hi"] * math.exp(e)
    typical, need = stats.verdict(r["ratio"], lo, hi, direction, margin, n,
                                  min_n)
    r.update(ratio_ci_lo=lo, ratio_ci_hi=hi, verdict_typical=typical,
             n_needed=need)
    mean = ""
    if not math.isnan(r.get("mean_ratio", math.nan)):
        r.update(mean_ci_lo=r["mean_ci_lo"] * math.exp(-e),
                 mean_ci_hi=r["mean_ci_hi"] * math.exp(e))
        mean, _ = stats.verdict(r["mean_ratio"], r["mean_ci_lo"],
                                r["mean_ci_hi"], direction, margin, n, min_n)
    r["verdict"] = stats.combine(typical, mean)
    if r["verdict"] == stats.TAIL:
        r["n_needed"] = None


def calibrate(rows, controls, th):
    """Each row whose baseline has an A/A control (the same kernel booted
    again) gets the control's verdict at the same vCPU count, point and
    metric (`calibration`), and its CI widened by the A/A CI's distance
    from 1 (`aa_widen`, log): an A/A pair whose CI holds 1 changes
    nothing (its noise is already in the comparison's own CI), one that
    lies away from 1 shows a bias of the host at least that large in
    either direction, and the comparison's CI grows by it on both sides
    before it is judged again.  A graded answer, not a switch: an A/A
    pair that barely misses 1 costs a sliver, not the row."""
    ctl = dict(controls)
    aa = {(r["baseline"], r["cpus"], r["point"], r["metric"]): r
          for r in rows if r["role"] == "control"}
    for r in rows:
        r["aa_widen"] = 0.0
        if r["role"] == "control" or r["baseline"] not in ctl:
            r["calibration"] = ""
            continue
        a = aa.get((r["baseline"], r["cpus"], r["point"], r["metric"]))
        if a is None:
            r["calibration"] = ""
            continue
        e = 0.0
        if not math.isnan(a["ratio"]) and a["ratio_ci_lo"] > 0:
            e = max(0.0, math.log(a["ratio_ci_lo"]),
                    -math.log(a["ratio_ci_hi"]))
        r["calibration"] = f"A/A {a['verdict'] or 'n/a'}" + (
            f", CI widened by ±{_pct(e)}" if e else "")
        r["aa_widen"] = e
        if e and r["direction"] != "none":
            icount = r.get("clock") == ICOUNT
            widen(r, e, r["direction"], th.margin,
                  exact.MIN_N if icount else th.min_n)
            if icount and r["verdict"] == stats.TOO_FEW:
                r["verdict"] = f"{stats.INCONCLUSIVE} (n<{exact.MIN_N})"


def _pct(e):
    """A widening in words: '±1.2%', '±0.0031%' (icount's are ppm)."""
    x = 100 * (math.exp(e) - 1)
    return f"{x:.1f}%" if x >= 0.1 else f"{x:.2g}%"


def probe(rows, samples, th):
    """The host-speed probe's own ratio beside every _ref row; a _ref
    verdict only where the probe's CI lies within +-probe_tolerance."""
    pr = samples[samples["metric"] == PROBE]
    for r in rows:
        if r["metric"] not in REF_TWIN.values():
            continue
        sel = pr[(pr["cpus"] == r["cpus"]) & (pr["point"] == r["point"])]
        c = stats.compare(sel.loc[sel["variant"] == r["baseline"], "value"],
                          sel.loc[sel["variant"] == r["variant"], "value"],
                          None, th)
        r.update(probe_ratio=c.ratio, probe_ci_lo=c.ratio_ci_lo,
                 probe_ci_hi=c.ratio_ci_hi)
        tol = th.probe_tolerance
        steady = (c.ratio_ci_lo >= 1 - tol and c.ratio_ci_hi <= 1 + tol)
        if r["verdict"] in stats.DECIDED and not steady:
            r["verdict"] = WITHHELD


def _median(samples, metric, r, side):
    sel = samples[(samples["metric"] == metric)
                  & (samples["cpus"] == r["cpus"])
                  & (samples["point"] == r["point"])
                  & (samples["variant"] == r[side])]["value"]
    return float(sel.median()) if len(sel) else math.nan


def own_tolerance(steal_pct):
    """The points of a core a variant's own QEMU threads may run more
    than the baseline's before a favourable throughput_run verdict is
    withheld, at host steal steal_pct (%)."""
    s = min(max(steal_pct if not math.isnan(steal_pct) else 0.0, 0.0), 99.0)
    return OWN_TOLERANCE_PCT * (1 - s / 100)


def own_threads(rows, samples, th, refusal=None):
    """throughput_run divides each boot by the share of the run its vCPUs
    were on a host core (1 - steal_pct/100), crediting the kernel with
    the time the host took.  It holds only where each vCPU thread owns a
    host core (refusal(variant, cpus) -> why not, or None: unpinned,
    oversubscribed or --hosts boots), and the one part of that time a
    kernel could cause itself is its own QEMU's other threads (main loop,
    RCU, workers) running on its vCPUs' cores.  A favourable verdict
    stands only where they are measured on both sides and the variant's
    ran at most own_tolerance(steal) points more than the baseline's
    (the upper bound of the Hodges-Lehmann CI of the difference), steal
    the larger side's median worst-vCPU steal; else `withheld (steal)`.
    Worse and harm stand: the raw loss is larger still."""
    own = samples[samples["metric"] == OWN]
    for r in rows:
        if r["metric"] not in RUN_TWIN.values():
            continue
        why = None
        if refusal is not None:
            why = refusal(r["baseline"], r["cpus"]) or refusal(
                r["variant"], r["cpus"])
        if why and r["verdict"] in stats.DECIDED:
            r["verdict"] = WITHHELD_STEAL
            note(r, f"throughput_run is not judged in {why}: the host's "
                 f"steal is not the kernel's own there")
            continue
        if r["verdict"] not in stats.FAVOURABLE:
            continue
        sel = own[(own["cpus"] == r["cpus"]) & (own["point"] == r["point"])]
        b = sel.loc[sel["variant"] == r["baseline"], "value"].to_numpy()
        v = sel.loc[sel["variant"] == r["variant"], "value"].to_numpy()
        steal = max(_median(samples, STEAL, r, "baseline"),
                    _median(samples, STEAL, r, "variant"))
        tol = own_tolerance(steal)
        if len(b) < th.min_n or len(v) < th.min_n:
            text = (f"{OWN} not measured on both sides ({len(b)} and "
                    f"{len(v)} boots): the variant may have kept its own "
                    f"vCPUs off the host")
        else:
            d, lo, hi = own_shift(b, v, th.confidence)
            if hi <= tol:
                continue
            text = (f"the variant's own QEMU threads ran {d:+.2f} "
                    f"[{lo:+.2f}, {hi:+.2f}] points of a core more than the "
                    f"baseline's (tolerance {tol:.2g} at "
                    f"{0 if math.isnan(steal) else steal:.0f}% steal)")
        r["verdict"] = WITHHELD_STEAL
        note(r, text)


def own_shift(b, v, confidence):
    """(shift, lo, hi): the Hodges-Lehmann difference v - b of QEMU's
    other threads, in points of a core, with its CI."""
    # log(exp(x - c)) = x - c: the shift and its CI are differences in
    # points of a core (c keeps exp finite; a file's absurd values give
    # inf or nan, and nan withholds)
    c = float(np.median(np.concatenate([b, v])))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return tuple(float(x[0]) for x in mann_whitney.shift_ci_many(
            np.exp(b - c)[None], np.exp(v - c)[None], confidence))


def conflicts(rows):
    """A raw metric and its `_ref` or `_run` twin on opposite sides
    (favourable against unfavourable): both `conflict`, so that no
    normalisation turns a harm into no harm."""
    by_key = {(r["baseline"], r["variant"], r["cpus"], r["point"],
               r["metric"]): r for r in rows}
    for raw, twin in list(REF_TWIN.items()) + list(RUN_TWIN.items()):
        for r in rows:
            if r["metric"] != raw:
                continue
            t = by_key.get((r["baseline"], r["variant"], r["cpus"],
                            r["point"], twin))
            if t is None:
                continue
            pair = {r["verdict"], t["verdict"]}
            if (pair & set(stats.FAVOURABLE)
                    and pair & set(stats.UNFAVOURABLE)):
                r["verdict"] = t["verdict"] = CONFLICT


def steal_note(nb, kb, nv, kv):
    return (f"host steal above {metrics.STEAL_FLAG_PCT:g}% in {kb} of {nb} "
            f"baseline and {kv} of {nv} variant boots")


def flag_steal(rows, samples):
    """Every row of a cell where the host kept a vCPU thread waiting
    (steal_max_pct above metrics.STEAL_FLAG_PCT) in some boot says so in
    its warnings, so that the flag follows the cell into every table;
    not under icount, where the host's waits do not reach the count."""
    st = samples[samples["metric"] == STEAL]
    if st.empty:
        return
    hot = {}
    for (v, c, p), g in st.groupby(["variant", "cpus", "point"]):
        hot[(v, int(c), str(p))] = (len(g), int(
            (g["value"] > metrics.STEAL_FLAG_PCT).sum()))
    for r in rows:
        if r.get("clock") == ICOUNT:
            continue
        key = (int(r["cpus"]), str(r["point"]))
        nb, kb = hot.get((r["baseline"],) + key, (0, 0))
        nv, kv = hot.get((r["variant"],) + key, (0, 0))
        if kb or kv:
            note(r, steal_note(nb, kb, nv, kv))
