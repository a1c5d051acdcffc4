#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A measurement, not a test (docs/measurements.md, "The instruction-exact
# clock under load"): the A/A campaign of issue 46, REPS boots of
# "before" (and of its control before~aa when the campaign boots one) at
# 1 vCPU under icount, one read95 point of DURATION_MS; with --hog N,
# beside N busy loops this script starts (and ends) itself.  Then
# tests/icount_spread.py prints every boot's insn_per_op, the spread of
# the boots of one kernel and what was counted differently in their
# points (what ran in some boots' windows and not in others').  The load
# average and the busiest host processes are printed at the start and
# the end: say what else ran.
#
# Usage: tests/icount-measure.sh [--hog N] DURATION_MS REPS [OUT]
#   (OUT default results/icount-aa-DURATIONms-STAMP; LOCKBENCH_BUILD is
#   honoured, so a copy of the kernels can be measured while they are
#   rebuilt)

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
usage="usage: tests/icount-measure.sh [--hog N] DURATION_MS REPS [OUT]"
hog=0
if [ "${1:-}" = --hog ]; then
	hog=${2:-}
	shift 2 || { echo "$usage" >&2; exit 2; }
	[[ $hog =~ ^[1-9][0-9]?$ ]] || { echo "icount-measure: --hog $hog: want 1..99 busy loops" >&2; exit 2; }
fi
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "$usage" >&2
	exit 2
fi
ms=$1 reps=$2
[[ $ms =~ ^[1-9][0-9]{0,5}$ ]] || { echo "icount-measure: DURATION_MS $ms: want 1..999999" >&2; exit 2; }
if ! [[ $reps =~ ^[0-9]{1,3}$ ]] || [ "$reps" -lt 2 ] || [ "$reps" -gt 100 ]; then
	echo "icount-measure: REPS $reps: want 2..100" >&2
	exit 2
fi
out=${3:-results/icount-aa-${ms}ms-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

cat >"$out/aa.toml" <<EOF
# tests/icount-measure.sh: the A/A icount campaign of issue 46.
# control = true: clock = "icount" needs it (docs/icount.md).
name = "icount-aa"
variants = ["before"]
control = true
cpus = [1]
clock = "icount"
repetitions = $reps
icount_repetitions = $reps
order = "alternate"
margin = 0.005

[perf]
stat = false

[[points]]
id = "read95"
read_pct = 95
mailboxes = 16
duration_ms = $ms
EOF

pids=()
stop_hog() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
}
trap stop_hog EXIT
for _ in $(seq "$hog"); do
	sh -c 'while :; do :; done' &
	pids+=("$!")
done

host() {
	echo "host $1: $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg), hog $hog busy loops"
	ps -eo pcpu=,comm= --sort=-pcpu | head -n 6 | awk '{printf "  %s%% %s\n", $1, $2}'
}
host start | tee "$out/host.txt"
./run.sh campaign "$out/aa.toml" --out "$out/run" >"$out/campaign.log" 2>&1 ||
	{ tail -n 20 "$out/campaign.log"; exit 1; }
host end | tee -a "$out/host.txt"
stop_hog
lb_py tests/icount_spread.py "$out/run" | tee "$out/spread.txt"
