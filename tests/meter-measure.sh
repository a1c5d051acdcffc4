#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A measurement, not a test (docs/measurements.md, "The host speed
# meter"): tests/campaigns/meter-aa.toml with the meter on and off,
# interleaved by repetition in ABBA order (round k is one repetition of
# each mode, a 1-repetition campaign with order = "random" and seed = k),
# so that what else the host does falls on both modes alike.  The rounds
# of each mode are merged (tests/merge_rounds.py), analysed
# (./run.sh analyze), and tests/meter_fit.py prints what the meter
# explains of each point's spread between boots, how it narrows the A/A
# ratio's CI, whether the kernels move it, and its cost.  About 75 s of
# guest time a round and mode; the load average is printed at each
# campaign's start and at the end.
#
# Usage: tests/meter-measure.sh [ROUNDS (default 8)] [OUT (default results/meter-measure-STAMP)]

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
rounds=${1:-8}
out=${2:-results/meter-measure-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
for k in $(seq "$rounds"); do
	if [ $((k % 2)) = 1 ]; then modes="on off"; else modes="off on"; fi
	for m in $modes; do
		v=true
		[ "$m" = on ] || v=false
		sed -e "s/^meter = true\$/meter = $v/" -e "s/^name = \"meter-aa\"\$/name = \"meter-$m\"/" \
			-e "s/^repetitions = 8\$/repetitions = 1\norder = \"random\"\nseed = $k/" \
			tests/campaigns/meter-aa.toml >"$out/$m-$k.toml"
		echo "round $k meter $m: load $(cut -d' ' -f1-3 /proc/loadavg)"
		./run.sh campaign "$out/$m-$k.toml" --out "$out/$m-$k" --no-report | tail -n 1
	done
done
echo "end: load $(cut -d' ' -f1-3 /proc/loadavg)"
for m in on off; do
	"$LB_PY" tests/merge_rounds.py "$out" "$m" "$rounds" >/dev/null
	./run.sh analyze "$out/merged-$m" >"$out/merged-$m.analyze.log" 2>&1 ||
		{ tail -n 5 "$out/merged-$m.analyze.log"; exit 1; }
done
"$LB_PY" tests/meter_fit.py "$out/merged-on" "$out/merged-off"
