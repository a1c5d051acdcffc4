#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The instruction-exact clock, on real boots: tests/campaigns/icount.toml
# boots before, its A/A control (before~aa), slow (5 us inside
# mboxes_lock on every call) and slow1pct (a short loop inside it, about
# 1% of a lookup) with clock = "icount" (-icount shift=0,sleep=off,
# single-threaded TCG), 3 boots a side, at a 0.5% margin, with a look
# at 3 repetitions of up to 6.  Asserts: every boot ran under icount
# (meta.json, qemu-cmd); the campaign stopped at the look, every primary
# cell decided, the boots after it unneeded; the A/A pair reads 1
# within the leak bound and is harm on no metric (judged on each side's
# own range it may read better or worse by chance); slow and
# slow1pct are harm on the primary metric (insn_per_op) from 3 boots a
# side, slow1pct between 0.5% and 2% more instructions; and summary.md,
# answer.txt, commit-msg.txt and report.html say what an icount number is.
# Its controls tell a leak from a harness bug: first the raw boots
# (tests/icount_spread.py, from results.txt, not the analysis' tables):
# the 6 boots of before and before~aa, one kernel, must agree within
# LEAK_PPM, or the clock leaks (the line names what the guest did
# differently in them); then the tables must say what the raw boots say
# (each row's means the raw boots' means, its ratio theirs), or the
# harness is wrong; only then the verdicts above.  t-icount-hog.sh checks the same
# beside a CPU hog.
#
# Usage: tests/t-icount.sh
# Needs: before slow

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
export LOCKBENCH_VARIANT_PATH=$LB_ROOT/tests/variants
out=${LB_TEST_OUT:-$(mktemp -d)}/icount
rm -rf "$out"
mkdir -p "$out"

./run.sh campaign tests/campaigns/icount.toml --out "$out/run" >"$out/campaign.log" 2>&1 ||
	{ tail -n 20 "$out/campaign.log"; exit 1; }

PYTHONPATH=$LB_ROOT "$LB_PY" - "$out/run" <<'PY'
import csv, glob, json, os, sys

run = sys.argv[1]
metas = [json.load(open(m)) for m in glob.glob(f"{run}/cells/*/meta.json")]
assert len(metas) == 12, f"{len(metas)} boots, want 12 (4 variants x 3)"
# Every primary cell decided at the look at 3: the 12 boots after it unneeded.
man = json.load(open(f"{run}/manifest.json"))
assert man["sequential"]["stopped_at"] == 3, man["sequential"]
states = sorted({(c["rep"] <= 3, c["state"]) for c in man["cells"]})
assert states == [(False, "unneeded"), (True, "done")], states
for m in metas:
    assert m["clock"] == {"kind": "icount", "shift": 0, "sleep": False,
                          "means": "instructions (QEMU icount): 1 guest ns = 1 instruction"}, m["clock"]
    assert m["state"] == "ok", m["state"]
for q in glob.glob(f"{run}/cells/*/qemu-cmd"):
    text = open(q).read()
    assert "-icount shift=0,sleep=off" in text and "tcg,thread=single" in text, text

# A leak or a harness bug?  First the raw boots: before and its control
# are one kernel booted 6 times; under icount they must agree to parts
# per million (docs/icount.md, "What makes the clock exact").
from tests.icount_spread import boots, fingerprint, ppm
# 100 ppm: one kernel's boots agree within 2-11 ppm at 300 ms; the leaks
# of issue 46 moved them 160-190 ppm (a grace period or a tick at the
# window's edge) and 2700 ppm (the module loader's deferred free in the
# window): docs/measurements.md.
LEAK_PPM = 100
raw = boots([run])["read95"]
same = raw["before"] + raw["before~aa"]
vals = [x for _, x, _ in same]
print(f"raw: before and before~aa, {len(vals)} boots of one kernel: insn_per_op "
      f"{min(vals):.3f}..{max(vals):.3f}, spread {ppm(vals):.1f} ppm")
if ppm(vals) > LEAK_PPM:
    what = "; ".join(f"{n}: " + ", ".join(f"{c} in {len(v)}" for c, v in sorted(by.items()))
                     for n, by in fingerprint(same, "mboxes_lock")) or "nothing counted"
    sys.exit(f"FAIL (leak, not the harness): boots of one kernel spread {ppm(vals):.0f} ppm "
             f"> {LEAK_PPM}: {', '.join(f'{x:.2f}' for x in sorted(vals))} insn per op; "
             f"what differed in their points: {what}")

with open(f"{run}/tidy/comparisons.csv") as f:
    rows = list(csv.DictReader(f))

# Then the harness: its tables must say what the raw boots say: each
# row's means those of the raw boots (the baseline's alone, or pooled
# with its A/A control's as the exact rule may take it, analysis/README.md
# "Exact data"), its ratio theirs.
def mean(xs):
    return sum(xs) / len(xs)
def close(a, b):
    return abs(a / b - 1) < 1e-8
base = [x for _, x, _ in raw["before"]]
for v in ("before~aa", "slow", "slow1pct"):
    got = [r for r in rows if r["variant"] == v and r["metric"] == "insn_per_op"]
    assert len(got) == 1, f"FAIL (harness, not a leak): {len(got)} insn_per_op rows of {v}"
    r = got[0]
    bases = [mean(base)] + ([] if v == "before~aa" else [mean(base + [x for _, x, _ in raw["before~aa"]])])
    want = mean([x for _, x, _ in raw[v]])
    assert (close(float(r["mean_var"]), want) and any(close(float(r["mean_base"]), b) for b in bases)
            and close(float(r["ratio"]), float(r["mean_var"]) / float(r["mean_base"]))), \
        f"FAIL (harness, not a leak): {v}/before insn_per_op reads means {r['mean_base']}, " \
        f"{r['mean_var']} and ratio {r['ratio']} in comparisons.csv; the raw boots' means " \
        f"are {', '.join(f'{b:.6f}' for b in bases)} and {want:.6f}"
print("ok: the raw boots agree (no leak) and the tables say what they say (no harness bug)")
def row(variant, metric):
    got = [r for r in rows if r["variant"] == variant and r["metric"] == metric]
    assert len(got) == 1, (variant, metric, len(got))
    return got[0]
def show(r):
    print(f"{r['variant']}/{r['baseline']} {r['metric']} ({r['role']}, {r['clock']}): "
          f"{float(r['ratio']):.5f} [{float(r['ratio_ci_lo']):.5f}, "
          f"{float(r['ratio_ci_hi']):.5f}] n={r['n_base']}+{r['n_var']}: {r['verdict']}")

aa = row("before~aa", "insn_per_op")
show(aa)
assert aa["role"] == "control" and aa["clock"] == "icount"
lo, hi = float(aa["ratio_ci_lo"]), float(aa["ratio_ci_hi"])
assert hi - lo < 1e-3, f"an A/A spread of {hi - lo:.2g}: not instruction-exact"
# The A/A pair is judged on each side's own range, so that it can flag
# an offset of parts per million (analysis/README.md, "Exact data"): at
# 3 boots a side it reads better or worse by chance in about 5% of
# boots, and that is no failure here.  What one kernel booted twice can
# never be is harm, nor away from 1 by more than the leak bound above.
assert abs(float(aa["ratio"]) - 1) < LEAK_PPM * 1e-6, \
    f"the A/A pair reads {float(aa['ratio']):.6f}, more than {LEAK_PPM} ppm from 1"
harms = [r for r in rows if r["variant"] == "before~aa" and r["verdict"].startswith("harm")]
assert not harms, [(r["metric"], r["verdict"]) for r in harms]
for v in ("slow", "slow1pct"):
    r = row(v, "insn_per_op")
    show(r)
    # The baseline's boots pooled with its A/A control's (the same
    # kernel): 3 or 6 of them, the variant's 3.
    assert r["role"] == "primary" and r["n_var"] == "3" and r["n_base"] in ("3", "6"), r
    assert r["verdict"] == "harm", f"{v}: {r['verdict']}"
r = row("slow1pct", "insn_per_op")
assert 1.005 < float(r["ratio"]) < 1.02, f"slow1pct is {float(r['ratio']):.4f}x, not ~1%"
print("ok: icount A/A reads 1 within the leak bound and is no harm; the 5 us and the "
      "~1% slowdowns are harm from 3 boots a side at a 0.5% margin")
PY
for f in summary.md answer.txt commit-msg.txt report.html; do
	grep -q '1 guest ns = 1 instruction' "$out/run/$f" ||
		{ echo "FAIL: $f does not say what an icount number is"; exit 1; }
done
grep -q 'prices path length, not cache misses' "$out/run/commit-msg.txt"
"$LB_PY" tests/check_width.py --commit "$out/run/commit-msg.txt"
grep -q '^## Position in the repetition' "$out/run/summary.md"
echo "ok: every output says what an icount number is; the commit block fits its bounds"
