#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The verdict itself is tested on real boots.
# A/A: "before" against itself, the campaign's A/A control (before~aa:
# the same image booted again, interleaved).  Its primary metric
# (aa.toml: the raw lookup median) must not come out `harm` (the whole
# CI beyond the margin) nor `conflict`, and the procedure is checked for
# calibration on these boots on every metric: over 300 random re-splits
# (exchangeable data), `better`/`worse`/`harm` in at most 10% (nominal:
# 5%), p < 0.05 in at most 12%.  A single `better` or `worse` is not
# asserted against: a 95% CI says it of an A/A pair one time in twenty
# by design (tests/RELIABILITY.md), the re-split rate is what can fail.
# Harm: "before" against a kernel with a deliberate 5 us slowdown inside
# mboxes_lock (tests/variants/0099-*.patch) must come out `harm` on the
# raw metrics; each `_ref` twin `harm`, or `withheld (probe)` with the
# probe's own ratio CI (printed) really beyond +-2%: the slowdown moves
# the host-speed probe too, and a moved probe must not vouch for a ratio.
# The slowdown campaign may stop early (looks at 8 and 12 repetitions):
# decided at 8, its last 4 repetitions are `unneeded`.
#
# Usage: tests/t-verdicts.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
export LOCKBENCH_VARIANT_PATH=$LB_ROOT/tests/variants
out=${LB_TEST_OUT:-$(mktemp -d)}/verdicts
rm -rf "$out"
mkdir -p "$out"

./run.sh build slow >"$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
# One cell at a time: side-by-side guests would add each other's noise.
for c in aa slowdown; do
	./run.sh campaign "tests/campaigns/$c.toml" --jobs 1 --out "$out/$c" --no-report \
		>"$out/$c.log" 2>&1 || { tail -n 20 "$out/$c.log"; exit 1; }
	./run.sh report "$out/$c" >/dev/null
done

PYTHONPATH=$LB_ROOT "$LB_PY" - "$out" <<'PY'
import csv, sys
import pandas as pd
from analysis import stats

out = sys.argv[1]
def rows(c):
    with open(f"{out}/{c}/tidy/comparisons.csv") as f:
        return {r["metric"]: r for r in csv.DictReader(f)}

aa = rows("aa")
RAW = ("lookup_lat_median_ns", "throughput_ops_s")
REF = ("lookup_lat_median_ref", "throughput_ref")
FALSE = ("better", "worse", "harm")


def show(tag, m, r):
    probe = (f", probe {float(r['probe_ratio']):.3f} [{float(r['probe_ci_lo']):.3f}, "
             f"{float(r['probe_ci_hi']):.3f}]" if r["probe_ratio"] else "")
    print(f"{tag} {m}: ratio {float(r['ratio']):.3f} [{float(r['ratio_ci_lo']):.3f}, "
          f"{float(r['ratio_ci_hi']):.3f}], p={float(r['p_value']):.3f}{probe}: "
          f"{r['verdict']} (margin {float(r['margin']):.0%}, n={r['n_base']}+{r['n_var']}, "
          f"{r['role']})")


for m in RAW + REF:
    show("A/A", m, aa[m])
assert all(r["role"] == "control" and r["variant"] == "before~aa" for r in aa.values()), \
    "the A/A campaign compares before with its control before~aa only"
prim = aa["lookup_lat_median_ns"]  # aa.toml's primary metric
assert prim["verdict"] not in ("harm", "conflict"), f"A/A primary: {prim['verdict']}"
samples = pd.read_csv(f"{out}/aa/tidy/samples.csv")
for m in RAW + REF:
    direction = "higher" if m.startswith("throughput") else "lower"
    vals = samples[samples.metric == m]["value"].to_numpy()
    cv = vals.std(ddof=1) / vals.mean()
    for margin in (0.05, 0.10):
        th = stats.Thresholds().with_(margin=margin)
        fa = stats.aa_false_alarm_rate(vals, direction, th, splits=300)
        nh = fa["verdicts"].get("no harm", 0) / fa["splits"]
        print(f"A/A re-splits, {m} (cv {cv:.3f}), margin {margin:.0%}: false "
              f"better/worse/harm {fa['rate']:.1%}, 'no harm' {nh:.1%} of {fa['splits']} "
              f"splits {fa['group_size']} vs {fa['group_size']} (significant at 0.05: "
              f"{fa['significant_rate']:.1%}; verdicts {fa['verdicts']})")
        if margin == 0.10:  # aa.toml's
            assert fa["rate"] <= 0.10, f"A/A {m}: false verdicts in {fa['rate']:.1%} of splits"
            assert fa["significant_rate"] <= 0.12, \
                f"A/A {m}: p < 0.05 in {fa['significant_rate']:.1%} of splits"
slow = rows("slowdown")
for m in RAW + REF:
    show("slowdown", m, slow[m])
for m in RAW:
    assert slow[m]["verdict"] == "harm", f"slowdown {m}: {slow[m]['verdict']}"
for m in REF:
    r = slow[m]
    lo, hi = float(r["probe_ci_lo"]), float(r["probe_ci_hi"])
    moved = lo < 0.98 or hi > 1.02
    assert r["verdict"] == "harm" or (r["verdict"] == "withheld (probe)" and moved), \
        f"slowdown {m}: {r['verdict']} with the probe at [{lo:.3f}, {hi:.3f}]"
print("ok: A/A: no harm or conflict on the primary, false verdicts within bounds on all "
      "metrics; the 5 us slowdown is harm, its _ref twins harm or withheld by a moved probe")
# Stopping early: decided at the first look, the rest not run.
import json
m = json.load(open(f"{out}/slowdown/manifest.json"))
assert m["sequential"]["stopped_at"] == 8, m["sequential"]
states = {x["id"]: x["state"] for x in m["cells"]}
assert all(s == ("done" if int(i[1:3]) <= 8 else "unneeded") for i, s in states.items()), states
assert slow["lookup_lat_median_ns"]["ci_level"] and float(slow["lookup_lat_median_ns"]["ci_level"]) >= 0.975
print(f"ok: slowdown stopped at the look at 8 repetitions; "
      f"{sum(s == 'unneeded' for s in states.values())} cells unneeded; CIs at 97.5%")
PY
# A calibration campaign (no compared pair) opens with its A/A answer.
grep -q '^\*\*A/A calibration only, before~aa (before booted a second time) against before' \
	"$out/aa/summary.md"
grep -q 'stopped at 8: every primary cell decided' "$out/slowdown/summary.md"
# The commit message carries the primary metric and, read against the
# host's speed, its _ref twin.
grep -q '^lookup_lat_median_ns, slow/before' "$out/slowdown/commit-msg.txt"
grep -q '^lookup_lat_median_ref (divided by the host speed' "$out/slowdown/commit-msg.txt"
grep -q 'probe [0-9.]* \[' "$out/slowdown/commit-msg.txt"
"$LB_PY" tests/check_answer.py "$out/slowdown"
awk 'length > 72 { print "over 72 columns: " $0; bad = 1 } END { exit bad }' "$out/slowdown/commit-msg.txt"
echo "ok: commit-msg.txt has the primary metric and its _ref twin, within 72 columns"
