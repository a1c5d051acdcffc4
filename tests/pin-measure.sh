#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A measurement, not a test (docs/measurements.md, "Pinning vCPU threads"):
# tests/campaigns/pin-aa.toml pinned and unpinned, interleaved by
# repetition in ABBA order (round k is one repetition of each mode, as a
# 1-repetition campaign with order = "random" and seed = k), so that
# what else the host does falls on both modes alike.  Then the rounds of
# each mode are merged into one campaign directory (OUT/merged-pin,
# OUT/merged-nopin; cells renumbered r01..rNN), each is reported
# (./run.sh report), and the figures are printed: the A/A (before~aa)
# ratio CI width of throughput_ops_s and lookup_lat_median_ns per point,
# the CV of each per variant and point, the collapses (a boot's
# throughput under 1/3 of its variant x point median) and the host steal.
# About 45 s of guest time per round and mode; the load average is
# printed at each campaign's start and end.
#
# Usage: tests/pin-measure.sh [ROUNDS (default 8)] [OUT (default results/pin-measure-STAMP)] [CPUS (default 2)]
#
# With CPUS = 1 the 1-vCPU cells run side by side (two at a time), each
# pinned to one core or left to the host scheduler.

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
rounds=${1:-8}
out=${2:-results/pin-measure-$(date -u +%Y%m%dT%H%M%SZ)}
cpus=${3:-2}
mkdir -p "$out"
for k in $(seq "$rounds"); do
	if [ $((k % 2)) = 1 ]; then modes="pin nopin"; else modes="nopin pin"; fi
	for m in $modes; do
		p=true
		[ "$m" = pin ] || p=false
		sed -e "s/^pin = true\$/pin = $p/" -e "s/^name = \"pin-aa\"\$/name = \"$m-aa\"/" \
			-e "s/^cpus = \[2\]\$/cpus = [$cpus]/" -e "s/^repetitions = 8\$/repetitions = 1\norder = \"random\"\nseed = $k/" \
			tests/campaigns/pin-aa.toml >"$out/$m-$k.toml"
		echo "round $k $m: load $(cut -d' ' -f1-3 /proc/loadavg)"
		./run.sh campaign "$out/$m-$k.toml" --out "$out/$m-$k" --no-report | tail -n 1
	done
done
echo "end: load $(cut -d' ' -f1-3 /proc/loadavg)"
for m in pin nopin; do
	"$LB_PY" tests/merge_rounds.py "$out" "$m" "$rounds" >/dev/null
	./run.sh report "$out/merged-$m" >"$out/merged-$m.report.log" 2>&1 ||
		{ tail -n 5 "$out/merged-$m.report.log"; exit 1; }
done
"$LB_PY" - "$out" <<'PY'
import os, sys
import numpy as np
import pandas as pd
for mode in ("pin", "nopin"):
    d = os.path.join(sys.argv[1], f"merged-{mode}")
    c = pd.read_csv(f"{d}/tidy/comparisons.csv")
    s = pd.read_csv(f"{d}/tidy/samples.csv")
    print(f"== {mode}: {d}")
    for m in ("throughput_ops_s", "lookup_lat_median_ns"):
        aa = c[c.variant.str.endswith("~aa") & (c.metric == m)]
        w = aa.ratio_ci_hi - aa.ratio_ci_lo
        print(f"  A/A {m}: CI width median {np.median(w):.3f}; "
              + "; ".join(f"{r.point} {r.ratio:.3f} [{r.ratio_ci_lo:.3f}, {r.ratio_ci_hi:.3f}] "
                          f"{r.verdict}" for _, r in aa.iterrows()))
        x = s[s.metric == m].groupby(["variant", "point"]).value
        print(f"  CV of {m}:\n" + (x.std() / x.mean()).unstack().round(3).to_string())
    t = s[s.metric == "throughput_ops_s"]
    low = t.value < t.groupby(["variant", "point"]).value.transform("median") / 3
    print(f"  collapses: {int(low.sum())} of {len(t)} boot-points "
          + str(t[low].groupby(["variant", "point"]).size().to_dict()))
    st = s[s.metric == "steal_max_pct"].value
    print(f"  steal_max_pct: median {st.median():.1f}, above 10% in {(st > 10).sum()} of {len(st)}")
PY
