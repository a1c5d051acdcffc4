#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A measurement, not a test (docs/measurements.md: the probe gate on
two-speed data): what would let the 1-vCPU tight loops of the default
campaign be decided, read from saved campaign runs.

For each run directory (a default campaign with its A/A control):

1. the host-speed probe's ratio (after/before and before~aa/before) per
   cell with two estimators: the Hodges-Lehmann ratio and Moses CI the
   gate uses (tidy/comparisons.csv probe_ci_lo/hi), and the ratio of the
   lower quartiles with a bootstrap CI, which ignores the slow boots of a
   two-speed host as long as they are under a quarter: a gate at
   +-probe_tolerance (2%) passes only where the CI lies within it;
2. whether longer points would help: the spread (IQR/1.349 and sd of the
   log probe over the baseline's boots) of one 1-s tight point against
   the mean of a boot's three consecutive tight points (about a 3-s
   point): if the host's slow phases were short, the mean would spread
   less by about sqrt(3);
3. whether the host's slow phases are shared by the two 1-vCPU cells
   that run side by side (then a paired estimate would cancel them): the
   correlation of their log probes at the same point.

Usage: tests/probe-measure.py RUN_DIR...
"""
import datetime
import json
import sys

import numpy as np
import pandas as pd

TIGHT = ["read95", "read50", "read95-long"]


def q25_ratio(base, var, rng, resamples=4000, confidence=0.95):
    b, v = np.log(base), np.log(var)
    est = np.quantile(v, 0.25) - np.quantile(b, 0.25)
    boot = (np.quantile(rng.choice(v, (resamples, len(v))), 0.25, axis=1)
            - np.quantile(rng.choice(b, (resamples, len(b))), 0.25, axis=1))
    lo, hi = np.quantile(boot, [(1 - confidence) / 2, (1 + confidence) / 2])
    return np.exp([est, lo, hi])


def spread(x):
    q1, q3 = np.quantile(x, [0.25, 0.75])
    return (q3 - q1) / 1.349, float(np.std(x))


def side_by_side(run, probe):
    """Pairs of log probes of 1-vCPU cells that overlapped by >= 80%."""
    man = json.load(open(f"{run}/manifest.json"))
    t = datetime.datetime.fromisoformat
    spans = {}
    for c in man["cells"]:
        if c["cpus"] == 1 and c["state"] == "done":
            meta = json.load(open(f"{run}/cells/{c['id']}/meta.json"))
            spans[c["id"]] = (t(meta["start"]), t(meta["end"]))
    ids = sorted(spans)
    x, y = [], []
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            (a0, a1), (b0, b1) = spans[a], spans[b]
            if (min(a1, b1) - max(a0, b0)).total_seconds() < 0.8 * (a1 - a0).total_seconds():
                continue
            for p in TIGHT:
                va = probe[(probe.cell == a) & (probe.point == p)].value
                vb = probe[(probe.cell == b) & (probe.point == p)].value
                if len(va) and len(vb):
                    x.append(np.log(va.iloc[0]))
                    y.append(np.log(vb.iloc[0]))
    return len(x), (float(np.corrcoef(x, y)[0, 1]) if len(x) > 2 else float("nan"))


def main(runs):
    rng = np.random.default_rng(1)
    for run in runs:
        s = pd.read_csv(f"{run}/tidy/samples.csv")
        cmp = pd.read_csv(f"{run}/tidy/comparisons.csv")
        probe = s[s.metric == "ref_probe_ns"]
        print(f"{run}")
        print("  probe ratio, HL [Moses CI] | lower quartiles [bootstrap CI]")
        for (cpus, point), g in probe.groupby(["cpus", "point"]):
            base = g[g.variant == "before"].value.to_numpy()
            for var in ("after", "before~aa"):
                v = g[g.variant == var].value.to_numpy()
                if len(base) < 6 or len(v) < 6:
                    continue
                row = cmp[(cmp.cpus == cpus) & (cmp.point == point) & (cmp.variant == var)
                          & (cmp.metric == "throughput_ref")]
                hl = (f"{row.probe_ratio.iloc[0]:.3f} [{row.probe_ci_lo.iloc[0]:.3f}, "
                      f"{row.probe_ci_hi.iloc[0]:.3f}]" if len(row) else "-")
                q, qlo, qhi = q25_ratio(base, v, rng)
                print(f"  {cpus} vCPU {point:13s} {var:9s} {hl} | {q:.3f} [{qlo:.3f}, {qhi:.3f}]")
        b1 = probe[(probe.cpus == 1) & (probe.variant == "before")]
        wide = np.log(b1.pivot_table(index="rep", columns="point", values="value")[TIGHT])
        single = ", ".join(f"{p} {spread(wide[p])[0]:.3f}/{spread(wide[p])[1]:.3f}" for p in TIGHT)
        r, sd = spread(wide.mean(axis=1))
        print(f"  1 vCPU before, spread of the log probe (IQR/1.349 / sd): {single}; "
              f"mean of the three in a boot {r:.3f}/{sd:.3f}")
        n, corr = side_by_side(run, probe)
        print(f"  1-vCPU cells side by side: {n} point pairs, correlation of their log probes {corr:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or sys.exit(__doc__.strip().splitlines()[-1]))
