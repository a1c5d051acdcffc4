#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The verdict itself is tested on real boots.  A/A: "before" against an
# identical copy of itself must come out "no harm", not significantly
# different (p >= 0.01), on the campaign's primary metric, the lookup
# median read against the host's speed (the _ref metrics: this host's
# cores change speed, analysis/TIDY.md).  On every metric the procedure
# is checked for calibration on these boots: over 300 random re-splits
# (exchangeable data), a false "harm"/"better" in at most 10% and
# p < 0.05 in at most 12% (nominal: about 5%); the rates are printed.
# Only the primary metric's single verdict is asserted: each verdict at
# a 95% CI is wrong now and then by design, and asserting all four made
# this test fail in 17 of 200 re-splits of one CI run's boots; the
# primary alone fails in 3 of 200 (tests/RELIABILITY.md).
# Harm: "before" against a kernel with a deliberate 5 us slowdown inside
# mboxes_lock (tests/variants/0099-*.patch) must come out "harm" on all
# four metrics.
#
# Usage: tests/t-verdicts.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
export LOCKBENCH_VARIANT_PATH=$LB_ROOT/tests/variants
out=${LB_TEST_OUT:-$(mktemp -d)}/verdicts
rm -rf "$out"
mkdir -p "$out"

./run.sh build before-copy slow >"$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
# One cell at a time: side-by-side guests would add each other's noise.
for c in aa slowdown; do
	./run.sh campaign "tests/campaigns/$c.toml" --jobs 1 --out "$out/$c" --no-report \
		>"$out/$c.log" 2>&1 || { tail -n 20 "$out/$c.log"; exit 1; }
	./run.sh report "$out/$c" --no-plots >/dev/null
done

PYTHONPATH=$LB_ROOT "$LB_PY" - "$out" <<'PY'
import csv, sys
import pandas as pd
from analysis import stats

out = sys.argv[1]
def rows(c):
    with open(f"{out}/{c}/summary.csv") as f:
        return {r["metric"]: r for r in csv.DictReader(f)}

aa = rows("aa")
RAW = ("lookup_lat_median_ns", "throughput_ops_s")
REF = ("lookup_lat_median_ref", "throughput_ref")
for m in RAW + REF:
    r = aa[m]
    print(f"A/A {m}: ratio {float(r['ratio']):.3f} [{float(r['ratio_ci_lo']):.3f}, "
          f"{float(r['ratio_ci_hi']):.3f}], p={float(r['p_value']):.3f}: {r['verdict']} "
          f"(margin {float(r['margin']):.0%}, n={r['n_base']}+{r['n_var']})")
# The claim itself: read against the host's speed, an identical kernel is
# "no harm" (at aa.toml's 10% margin; the rate at 5% is printed below)
# and not significantly different.  p >= 0.01, not 0.05: a true A/A is
# "significant" at 0.05 one time in twenty by definition.  The raw
# metrics carry the host's two speeds (tests/RELIABILITY.md) and may stay
# "inconclusive" with 12 boots.
prim = aa["lookup_lat_median_ref"]
assert prim["verdict"] == "no harm", f"A/A lookup_lat_median_ref: {prim['verdict']}"
assert float(prim["p_value"]) >= 0.01, f"A/A lookup_lat_median_ref: p={prim['p_value']}"
samples = pd.read_csv(f"{out}/aa/tidy/samples.csv")
for m in RAW + REF:
    direction = "higher" if m.startswith("throughput") else "lower"
    vals = samples[samples.metric == m]["value"].to_numpy()
    cv = vals.std(ddof=1) / vals.mean()
    for margin in (0.05, 0.10):
        th = stats.Thresholds().with_(margin=margin)
        fa = stats.aa_false_alarm_rate(vals, direction, th, splits=300)
        nh = fa["verdicts"].get("no harm", 0) / fa["splits"]
        print(f"A/A re-splits, {m} (cv {cv:.3f}), margin {margin:.0%}: false alarms "
              f"{fa['rate']:.1%}, 'no harm' {nh:.1%} of {fa['splits']} splits "
              f"{fa['group_size']} vs {fa['group_size']} (significant at 0.05: "
              f"{fa['significant_rate']:.1%}; verdicts {fa['verdicts']})")
        if margin == 0.10:  # aa.toml's
            v = fa["verdicts"]
            false_diff = (v.get("harm", 0) + v.get("better", 0)) / fa["splits"]
            assert false_diff <= 0.10, f"A/A {m}: false harm/better in {false_diff:.1%} of splits"
            assert fa["significant_rate"] <= 0.12, \
                f"A/A {m}: p < 0.05 in {fa['significant_rate']:.1%} of splits"
slow = rows("slowdown")
for m in RAW + REF:
    r = slow[m]
    print(f"slowdown {m}: ratio {float(r['ratio']):.3f} [{float(r['ratio_ci_lo']):.3f}, "
          f"{float(r['ratio_ci_hi']):.3f}]: {r['verdict']}")
    assert r["verdict"] == "harm", f"slowdown {m}: {r['verdict']}"
print("ok: A/A: no harm on the primary metric, false differences within bounds on all; the 5 us slowdown is harm")
PY
# The commit message carries the primary metric and, read against the
# host's speed, its _ref twin.
grep -q '^lookup_lat_median_ns, slow/before' "$out/slowdown/commit-msg.txt"
grep -q '^lookup_lat_median_ref (divided by the host speed' "$out/slowdown/commit-msg.txt"
awk 'length > 72 { print "over 72 columns: " $0; bad = 1 } END { exit bad }' "$out/slowdown/commit-msg.txt"
echo "ok: commit-msg.txt has the primary metric and its _ref twin, within 72 columns"
