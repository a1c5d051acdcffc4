#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Both kernels, 2 vCPUs, for real: each boots in QEMU, /proc/lock_stat is
# readable and the registry is in kallsyms; the module runs at read_pct 0,
# 50 and 100 with non-zero counts, passing self-checks, no lockdep, WARNING
# or BUG line; its counts agree with lock_stat's mboxes_lock (-R/-W rows
# before, one row after) within 1%; bad parameters are refused with the
# documented line; and a second boot with perf lock record brings perf.data
# back byte-identical (SHA-256 checked); that run's rerun script boots
# the same job again.
#
# Alone, not beside another test: perf lock record in the guest loses
# events when the host's two cores are shared (2026-12-06, beside
# another test: "lost 34.06%" of its samples, mboxes_lock's among them,
# and the check that the report names mboxes_lock failed).
#
# Usage: tests/t-guest-job.sh
# Quiet: yes (perf lock record loses events on a shared host)

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
out=${LB_TEST_OUT:-$(mktemp -d)}/guest-job
rm -rf "$out"
mkdir -p "$out"

cat >"$out/points.job" <<'JOB'
lockbench-job v1
option selftest 1
point r0 read_pct=0 mailboxes=16 duration_ms=400
point r50 read_pct=50 mailboxes=16 duration_ms=400
point r100 read_pct=100 mailboxes=16 duration_ms=400
JOB
cat >"$out/perf.job" <<'JOB'
lockbench-job v1
option perf_lock 1
point r50 read_pct=50 mailboxes=16 duration_ms=200
JOB

for v in before after; do
	lock=rwlock
	[ "$v" = after ] && lock=spinlock
	lb_py -m guest.run_guest "$v" --cpus 2 --job "$out/points.job" --out "$out/$v-points"
	"$LB_PY" tests/check_run.py "$out/$v-points" --lock "$lock"
	con=$out/$v-points/console.log
	grep -q 'SELFTEST insmod read_pct=101 rejected' "$con"
	grep -q 'mbox_bench: read_pct=101 out of range 0..100' "$con"
	grep -q 'SELFTEST run mailboxes=5000 rejected' "$con"
	grep -q 'mbox_bench: mailboxes=5000 out of range 1..4096' "$con"
	echo "ok: $v: read_pct=101 at load and mailboxes=5000 at run start refused with one pr_err line"
	lb_py -m guest.run_guest "$v" --cpus 2 --job "$out/perf.job" --out "$out/$v-perf"
	"$LB_PY" tests/check_run.py "$out/$v-perf" --lock "$lock" --perf-data
done

# A run can be done again: qemu-cmd's initrd is gone, rerun rebuilds it.
"$out/before-perf/rerun" "$out/before-rerun"
"$LB_PY" tests/check_run.py "$out/before-rerun" --lock rwlock --perf-data
cmp "$out/before-perf/job.conf" "$out/before-rerun/job.conf"
echo "ok: before-perf/rerun booted the same job again"
