#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ./run.sh overhead for real, small: one boot of "before", two rounds of
# timing=0 and timing=8.  The table states its setup (QEMU TCG, vCPUs,
# host cores, n), has a row per setting and says n=2 gives no 95% CI;
# overhead.csv has every point, with no op timed at timing=0 and exactly
# one lookup in 8 timed at timing=8.
#
# Usage: tests/t-overhead.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/overhead
rm -rf "$out"
mkdir -p "$(dirname "$out")"

./run.sh overhead before --boots 1 --rounds 2 --duration-ms 200 --timing 8 --out "$out" \
	>"$out.txt" 2>"$out.err" || { cat "$out.err" "$out.txt"; exit 1; }
cat "$out.txt"
grep -Eq '^# before: QEMU TCG, 1 vCPU on [0-9]+ host cores, .* n=2 \(1 boot\(s\) x 2 round\(s\)\)$' "$out.txt"
grep -q '^note: n=2 is too few for a 95% CI of a median: .* a 50% CI' "$out.txt"
grep -Eq '^ +0 +[0-9]+ +1\.000 ' "$out.txt"
grep -Eq '^ +8 +[0-9]+ +[0-9.]+ +[0-9.]+-[0-9.]+ +-?[0-9.]+%' "$out.txt"
PYTHONPATH=$LB_ROOT "$LB_PY" - "$out" <<'PY'
import csv, sys
from analysis.parse import bench_results
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/overhead.csv")))
assert len(rows) == 4, f"{len(rows)} rows, want 4"
for r in rows:
    assert float(r["ops_per_sec"]) > 0, r
    res = bench_results.parse_file(f"{out}/boot1/points/t{r['timing']}-r{r['round']}/results.txt")
    lookups, timed = res.total["lookups"], int(r["timed_lookups"])
    if r["timing"] == "0":
        assert timed == 0, f"timing=0 timed {timed} lookups"
    else:
        # One op in 8 per thread, the first one timed; 1 vCPU, one thread.
        assert timed == (lookups + 7) // 8, (timed, lookups)
print(f"ok: overhead.csv: {len(rows)} points; timing=0 times nothing, timing=8 one op in 8")
PY
