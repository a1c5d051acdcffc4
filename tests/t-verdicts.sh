#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The verdict itself, tested on real boots: tests/campaigns/controls.toml
# boots "before" against its A/A control (before~aa, the same image
# again), slow (5 us inside mboxes_lock on every call), hangs (hangs at
# late init in about 40% of its boots) and slowsome (lookups about 2x
# slower in about 40% of its boots), 16 repetitions at 1 vCPU, two boots
# side by side.  It is judged twice: on its first 8 repetitions (a copy of
# the run whose later boots are marked unneeded and their tries dropped)
# and on all 16.  At both:
# - the A/A pair's primary (the raw lookup median) is never `harm` nor
#   `conflict` (a single `better` or `worse` is not asserted against: a
#   95% CI says it of an A/A pair one time in twenty by design); on the
#   16, over 300 random re-splits of before's and before~aa's boots, the
#   procedure claims better/worse/harm in at most 10% (nominal: 5%);
# - slow is `harm`, and its `_ref` twin `harm` or `withheld (probe)`
#   with the probe's own CI really beyond +-2%;
# - hangs and slowsome are never `no harm` (nor `better`) wherever their
#   planted fault hit a boot of the data; hangs' lost boots are counted
#   in the row and open the answer.  At 16 repetitions each fault must
#   have hit at least one boot (a miss has probability 0.6^16 = 0.03%).
#
# Usage: tests/t-verdicts.sh
# Needs: before slow
# Quiet: yes (a 12 s silence limit; its controls at 1 vCPU side by side)

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
export LOCKBENCH_VARIANT_PATH=$LB_ROOT/tests/variants
out=${LB_TEST_OUT:-$(mktemp -d)}/verdicts
rm -rf "$out"
mkdir -p "$out"

./run.sh campaign tests/campaigns/controls.toml --out "$out/n16" --no-report \
	>"$out/campaign.log" 2>&1 || true
# hangs' lost boots make the campaign end with exit 1: every other boot
# must be done.
PYTHONPATH=$LB_ROOT "$LB_PY" - "$out" <<'PY'
import json, shutil, sys
out = sys.argv[1]
m = json.load(open(f"{out}/n16/manifest.json"))
bad = [c["id"] for c in m["cells"] if c["state"] != "done" and c["variant"] != "hangs"]
assert not bad, f"boots not done: {bad} (see {out}/campaign.log)"
# The first 8 repetitions alone, as a look at 8 would have judged them.
shutil.copytree(f"{out}/n16", f"{out}/n8", symlinks=True)
for c in m["cells"]:
    if c["rep"] > 8:
        c["state"] = "unneeded"
        c.pop("tries", None)
json.dump(m, open(f"{out}/n8/manifest.json", "w"), indent=2)
PY
./run.sh report "$out/n8" --no-plots >"$out/n8.report" 2>&1 || { tail "$out/n8.report"; exit 1; }
./run.sh report "$out/n16" >"$out/n16.report" 2>&1 || { tail "$out/n16.report"; exit 1; }

PYTHONPATH=$LB_ROOT "$LB_PY" - "$out" <<'PY'
import csv, glob, os, sys
import pandas as pd
from analysis.estimate import stats
from analysis.estimate.thresholds import Thresholds

out = sys.argv[1]


def rows(n):
    with open(f"{out}/{n}/tidy/comparisons.csv") as f:
        return list(csv.DictReader(f))


def row(rs, variant, metric):
    got = [r for r in rs if r["variant"] == variant and r["metric"] == metric]
    assert len(got) == 1, (variant, metric, len(got))
    return got[0]


def show(n, r):
    rat = (f"{float(r['ratio']):.3f} [{float(r['ratio_ci_lo']):.3f}, "
           f"{float(r['ratio_ci_hi']):.3f}]" if r["ratio"] else "-")
    print(f"{n}: {r['variant']} {r['metric']}: {rat}, mean over boots "
          f"{r['mean_ratio'] or '-'}, boots lost {r['lost_base']}/{r['boots_base']} vs "
          f"{r['lost_var']}/{r['boots_var']}: {r['verdict']} ({r['role']})")


def hit(n, variant, marker):
    """Reps of the variant's boots in view n whose console shows the
    planted fault (a hung boot's console is kept aside with its boot)."""
    reps = set()
    for log in glob.glob(f"{out}/{n}/cells/r*-{variant}-c1*/console.log"):
        rep = int(os.path.basename(os.path.dirname(log))[1:3])
        if (n == "n8" and rep > 8) or marker not in open(log, errors="replace").read():
            continue
        reps.add(rep)
    return reps


PRIM = "lookup_lat_median_ns"
for n in ("n8", "n16"):
    rs = rows(n)
    aa = row(rs, "before~aa", PRIM)
    show(n, aa)
    assert aa["verdict"] not in ("harm", "conflict", "harm (failures)"), aa["verdict"]
    slow = row(rs, "slow", PRIM)
    show(n, slow)
    assert slow["verdict"] == "harm", f"{n} slow: {slow['verdict']}"
    for v, marker in (("hangs", "planted hang of this boot"),
                      ("slowsome", "planted slowdown of this boot")):
        r = row(rs, v, PRIM)
        show(n, r)
        got = hit(n, v, marker)
        print(f"{n}: {v}: the fault hit {len(got)} boots (reps {sorted(got)})")
        if n == "n16":
            assert got, f"{v}: the planted fault hit no boot of 16"
        if got:
            assert r["verdict"] not in ("no harm", "better"), f"{n} {v}: {r['verdict']}"
        if v == "hangs":
            assert int(r["lost_var"]) == len(got), (r["lost_var"], got)
            if got:
                answer = open(f"{out}/{n}/answer.txt").read()
                assert answer.startswith("Lost boots: hangs: "), answer[:200]

rs = rows("n16")
for m in ("lookup_lat_median_ref", "throughput_ref"):
    r = row(rs, "slow", m)
    show("n16", r)
    lo, hi = float(r["probe_ci_lo"]), float(r["probe_ci_hi"])
    assert r["verdict"] == "harm" or (r["verdict"] == "withheld (probe)"
                                      and (lo < 0.98 or hi > 1.02)), \
        f"slow {m}: {r['verdict']} with the probe at [{lo:.3f}, {hi:.3f}]"
samples = pd.read_csv(f"{out}/n16/tidy/samples.csv")
samples = samples[samples.variant.isin(["before", "before~aa"])]
for m in ("lookup_lat_median_ns", "throughput_ops_s", "lookup_lat_median_ref"):
    direction = "higher" if m.startswith("throughput") else "lower"
    vals = samples[samples.metric == m]["value"].to_numpy()
    th = Thresholds().with_(margin=0.10)
    fa = stats.aa_false_alarm_rate(vals, direction, th, splits=300)
    kinds = {}
    for label, k in fa["verdicts"].items():
        kinds[label.split(" (n≈")[0]] = kinds.get(label.split(" (n≈")[0], 0) + k
    print(f"A/A re-splits, {m}: false better/worse/harm {fa['rate']:.1%} of "
          f"{fa['splits']} splits {fa['group_size']} vs {fa['group_size']} "
          f"(verdicts {kinds})")
    assert fa["rate"] <= 0.10, f"A/A {m}: false verdicts in {fa['rate']:.1%} of splits"
print("ok: at 8 and 16 repetitions the A/A pair claims no harm, slow is harm, and "
      "hangs and slowsome are never no harm where their fault hit a boot")
PY
"$LB_PY" tests/check_width.py --commit "$out/n8/commit-msg.txt" "$out/n16/commit-msg.txt"
"$LB_PY" tests/check_answer.py "$out/n16"
echo "ok: commit-msg.txt within the commit block's lines and columns"
