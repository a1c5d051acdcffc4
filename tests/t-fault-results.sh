#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Damaged results never pass for good ones.  In the guest, after the first
# point: "inject garble" changes results.txt of the second point after the
# guest checksummed it, "inject truncate" streams only half of its archive,
# "inject refuse" has the module refuse the second point's run (its
# results must not be the first point's again).  Each run exits 15, state
# "incomplete", names the damage in one line, and keeps the other points
# intact.  On the host, results.txt and lock_stat.txt
# cut short or garbled are refused by the analysis parsers with one line and
# exit 2 (lock_stat through ./run.sh lockstat), never read as partial data.
#
# Usage: tests/t-fault-results.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-results

echo "== garbled after the guest's checksum"
ft_job "$out/garble.job" garble
ft_boot "$out/garble" "$out/garble.job" --timeout 120 --silence 30
ft_rc_is 15
ft_verdict "$out/garble" '^boot: before c2: incomplete: 1/2 points'
ft_check "$out/garble" --state incomplete --exit 15 --done p1 --lost p2 \
	--problem "^point p2: results.txt does not match the guest's SHA-256$"

echo "== results stream cut in the middle of a point"
ft_job "$out/truncate.job" truncate
ft_boot "$out/truncate" "$out/truncate.job" --timeout 120 --silence 30
ft_rc_is 15
ft_verdict "$out/truncate" '^boot: before c2: incomplete: 1/2 points'
ft_check "$out/truncate" --state incomplete --exit 15 --done p1 --lost p2 \
	--problem '^results stream cut or garbled'

echo "== a refused run never passes an earlier run's results for its own"
# p2's run is refused by the module (inject refuse): the module emptied
# its results as the run started, so the guest sends nothing for p2 (before
# issue #17: p1's results again, checksummed, taken as p2's); p3 runs on
# and is kept (run id 2 after p1's 1: the refused run took no id).
cat >"$out/refuse.job" <<'JOB'
lockbench-job v1
option perf_stat 0
option inject refuse
point p1 read_pct=50 mailboxes=16 duration_ms=200
point p2 read_pct=50 mailboxes=16 duration_ms=200
point p3 read_pct=50 mailboxes=16 duration_ms=200
JOB
ft_boot "$out/refuse" "$out/refuse.job" --timeout 120 --silence 30
ft_rc_is 15
ft_verdict "$out/refuse" '^boot: before c2: incomplete: 2/3 points'
ft_check "$out/refuse" --state incomplete --exit 15 --done p1 p3 --lost p2 \
	--problem '^points not brought back: p2$'
grep -q 'lockbench: point p2 has no results: not sent' "$out/refuse/console.log" ||
	fail "the guest did not say that p2 had no results"
for p in p1 p3; do
	grep -E '^run id=' "$out/refuse/points/$p/results.txt" | cut -d' ' -f2
done | tr '\n' ' ' | grep -qx 'id=1 id=2 ' || fail "run ids of p1 and p3 are not 1 and 2"
ok "p2's refused run sent nothing; p1 and p3 kept with run ids 1 and 2"

echo "== the parsers on damaged copies of a real point"
p1=$out/garble/points/p1
bad=$out/bad
mkdir -p "$bad"
# lock_stat.txt cut in the middle of the mboxes_lock row; a row with a
# letter in a count; a NUL byte in the middle.
n=$(grep -bo 'mboxes_lock' "$p1/lock_stat.txt" | head -n 1 | cut -d: -f1)
[ -n "$n" ] || fail "no mboxes_lock in $p1/lock_stat.txt"
head -c $((n + 60)) "$p1/lock_stat.txt" >"$bad/lock_stat-cut.txt"
sed '0,/mboxes_lock/s/\(mboxes_lock[^:]*: *[0-9]*\) /\1x /' "$p1/lock_stat.txt" >"$bad/lock_stat-garbled.txt"
cmp -s "$p1/lock_stat.txt" "$bad/lock_stat-garbled.txt" && fail "sed did not garble"
{ head -c 2000 "$p1/lock_stat.txt"; printf '\0\0\0'; tail -c +2001 "$p1/lock_stat.txt"; } >"$bad/lock_stat-nul.txt"
./run.sh lockstat "$p1/lock_stat.txt" >"$bad/good.csv" || fail "the intact lock_stat.txt was refused"
for f in cut garbled nul; do
	ft_refused "$bad/$f.csv" "$bad/$f.err" "^lockstat: $bad/lock_stat-$f.txt(:[0-9]+)?: " \
		./run.sh lockstat "$bad/lock_stat-$f.txt"
	[ ! -s "$bad/$f.csv" ] || fail "lockstat wrote CSV for lock_stat-$f.txt"
	ok "lock_stat.txt $f: exit 2, no CSV: $(cat "$bad/$f.err")"
done
# results.txt cut before its end record, in mid-line, and garbled.
head -n 5 "$p1/results.txt" >"$bad/results-cut.txt"
head -c 300 "$p1/results.txt" >"$bad/results-midline.txt"
sed 's/^total ops=/total ops=12x/' "$p1/results.txt" >"$bad/results-garbled.txt"
for f in cut midline garbled; do
	rc=0
	PYTHONPATH=$LB_ROOT "$LB_PY" - "$bad/results-$f.txt" 2>"$bad/r-$f.err" <<'PY' || rc=$?
import sys
from analysis.parse import bench_results
from analysis.parse.common import ParseError
try:
    bench_results.parse_file(sys.argv[1])
except ParseError as e:
    print(f"results: {e}", file=sys.stderr)
    sys.exit(2)
PY
	[ $rc = 2 ] || fail "results-$f.txt: exit $rc, want 2 (parsed as good)"
	ft_one_line "$bad/r-$f.err" "^results: $bad/results-$f.txt(:[0-9]+)?: "
	ok "results.txt $f refused: $(cat "$bad/r-$f.err")"
done
