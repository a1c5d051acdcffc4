#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The instruction-exact clock beside a CPU hog (issue 46): under icount a
# boot's numbers are instruction counts, and what the host does must not
# leak into them.  The test starts one busy loop per host core itself,
# then runs tests/campaigns/icount-hog.toml (6 boots of before, one
# 300 ms point, 1 vCPU under icount, two boots side by side) beside them.
# Asserts: the hog ran all along (each loop still running at the end,
# with at least a twentieth of a core over the campaign, beside 2 QEMUs
# and whatever else runs: 12% each beside a second hog and builds); every
# boot ran under icount and ended ok; and the boots of one kernel agree
# within LEAK_PPM, the bound t-icount.sh holds its idle boots to
# (tests/icount_spread.py, from their raw results.txt; a failure names
# what the guest did differently in them: the leak's fingerprint).
#
# Usage: tests/t-icount-hog.sh
# Needs: before

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/icount-hog
rm -rf "$out"
mkdir -p "$out"
# The bound of t-icount.sh (its LEAK_PPM: why 100 there).
LEAK_PPM=100

pids=()
stop_hog() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
}
trap stop_hog EXIT
for _ in $(seq "$(nproc)"); do
	sh -c 'while :; do :; done' &
	pids+=("$!")
done
# CPU ticks (utime + stime) of a hog loop so far.
ticks() {
	awk '{print $14 + $15}' "/proc/$1/stat"
}
t0=$(date +%s)
before=()
for p in "${pids[@]}"; do
	before+=("$(ticks "$p")")
done

./run.sh campaign tests/campaigns/icount-hog.toml --out "$out/run" >"$out/campaign.log" 2>&1 ||
	{ tail -n 20 "$out/campaign.log"; exit 1; }

wall=$(($(date +%s) - t0))
hz=$(getconf CLK_TCK)
i=0
for p in "${pids[@]}"; do
	got=$((($(ticks "$p") - ${before[$i]}) / hz))
	echo "hog loop $p: $got CPU s in $wall s"
	if ! kill -0 "$p" 2>/dev/null || [ $((got * 20)) -lt "$wall" ]; then
		echo "FAIL: hog loop $p ended or got under a twentieth of a core: the campaign did not run beside a hog"
		exit 1
	fi
	i=$((i + 1))
done
stop_hog

lb_py tests/icount_spread.py "$out/run" --max-ppm "$LEAK_PPM" ||
	{ echo "FAIL: the host's load leaked into the instruction count (above)"; exit 1; }

lb_py - "$out/run" <<'PY'
import glob, json, sys

metas = [json.load(open(m)) for m in glob.glob(f"{sys.argv[1]}/cells/*/meta.json")]
assert len(metas) >= 6, f"{len(metas)} boots, want 6 or more"
for m in metas:
    assert m["clock"]["kind"] == "icount", m["clock"]
    assert m["state"] == "ok", m["state"]
PY
echo "ok: beside a CPU hog on every core, the boots of one kernel agree within $LEAK_PPM ppm"
