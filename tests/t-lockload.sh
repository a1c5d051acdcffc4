#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest/inside/lockload on a real boot of the before kernel (file_systems_lock an
# rwlock), 2 vCPUs: a job of lockload points (guest/JOB.md, workload=)
# brings back results in the module's format, and lockload's count of
# file_systems_lock acquisitions agrees with /proc/lock_stat's within 1%:
# reads (open + read + close of /proc/filesystems, and mount(2) of sysfs
# where it is mounted already: one read_lock per op) against the -R row, and with the fs_writer module running, writes (two
# write_lock per register + unregister pair) against the -W row.  The same
# for binfmt_lock (fs/exec.c) in the same boot: execve points (vfork +
# execve of lockload --exit0: three read_lock(&binfmt_lock) per exec, and
# as many for each exec outside the workload that lock_stat sees, which
# guest/inside/init.sh tells lockload), alone and with fs_writer lock=binfmt_lock
# registering a dummy binary format.  And proc_subdir_lock
# (fs/proc/generic.c): proc_lookup points (stat of a name /proc has not:
# one read_lock), alone and with fs_writer lock=proc_subdir_lock creating
# and removing a /proc file (one read_lock + two write_lock a pair).  And
# a generic workload (issue #30), resource_lock (kernel/resource.c) under
# read /proc/iomem (workload=read:/proc/iomem): lockload counts the
# locks_per_op K given in the job, here the K that ./run.sh calibrate
# measures on this kernel (2: the seq_file's start, r_start(), runs once
# for the text and once more for the read at EOF), and in the same boot
# ./run.sh calibrate --from-run must measure that K from its two points
# (300 and 900 ms) and their cross-check be exact; a workload that does
# not take the lock (stat /) must be refused, exit 2.  The
# check must fail when the counts disagree: it is run again on a copy
# whose results.txt claims 2% more reads.
#
# Usage: tests/t-lockload.sh
# Needs: before
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
out=${LB_TEST_OUT:-$(mktemp -d)}/lockload
rm -rf "$out"
mkdir -p "$out"
guest/inside/build-lockload.sh --arch arm

# resource_lock's acquisitions per read of /proc/iomem (./run.sh calibrate).
iomem_k=2
cat >"$out/fs.job" <<JOB
lockbench-job v1
point reads workload=proc_filesystems duration_ms=1000 timing=8 seed=1
point writer workload=proc_filesystems duration_ms=1000 timing=8 writer_hz=1000
point mounts workload=mount_sysfs duration_ms=500 timing=8
point execs workload=execve duration_ms=1000 timing=8
point execs-writer workload=execve duration_ms=1000 timing=8 writer_hz=1000
point lookups workload=proc_lookup duration_ms=500 timing=8
point lookups-writer workload=proc_lookup duration_ms=500 timing=8 writer_hz=1000
point iomem-a workload=read:/proc/iomem locks_per_op=$iomem_k duration_ms=300 timing=8
point iomem-b workload=read:/proc/iomem locks_per_op=$iomem_k duration_ms=900 timing=8
point none-a workload=stat:/ locks_per_op=1 duration_ms=200 timing=8
point none-b workload=stat:/ locks_per_op=1 duration_ms=400 timing=8
JOB
lb_py -m guest.run_guest before --cpus 2 --job "$out/fs.job" --out "$out/run"
checks=(--writer-point writer --writer-point execs-writer --writer-point lookups-writer
	--point-lock iomem-a=resource_lock --point-lock iomem-b=resource_lock
	--skip-point none-a --skip-point none-b)
"$LB_PY" tests/check_lockload.py "$out/run" "${checks[@]}" | tee "$out/check.log"
# The generic workload: K calibrated in this boot, its cross-check exact.
cal=$(./run.sh calibrate --from-run "$out/run" --lock resource_lock --points iomem-a,iomem-b)
echo "$cal"
[[ $cal == *" takes it $iomem_k times an op, exactly ("*"): locks_per_op=$iomem_k" ]] ||
	{ echo "FAIL: calibrate did not measure locks_per_op=$iomem_k: $cal"; exit 1; }
for p in iomem-a iomem-b; do
	grep -q "^ok: $p: lock_stat resource_lock read acquisitions [0-9]* == lockload's [0-9]* (within 1%, exactly)\$" "$out/check.log" ||
		{ echo "FAIL: $p: the cross-check of read /proc/iomem is not exact"; exit 1; }
done
echo "ok: read /proc/iomem: resource_lock $iomem_k times an op, calibrated in this boot; cross-check exact"
rc=0
./run.sh calibrate --from-run "$out/run" --lock resource_lock --points none-a,none-b \
	>"$out/none.out" 2>"$out/none.err" || rc=$?
if [ "$rc" != 2 ] || [ "$(wc -l <"$out/none.err")" != 1 ] ||
	! grep -q "^calibrate: stat / takes resource_lock 0 times an op (" "$out/none.err"; then
	echo "FAIL: calibrate of stat / on resource_lock: rc $rc, want 2 and one line: $(cat "$out/none.err")"
	exit 1
fi
echo "ok: refused: $(cat "$out/none.err")"

# The check catches a count that is off: 2% more reads claimed.
cp -r "$out/run" "$out/bad"
chmod -R u+w "$out/bad"
res=$out/bad/points/reads/results.txt
n=$(sed -n 's/^lockops read=\([0-9]*\) .*/\1/p' "$res")
sed -i "s/^lockops read=$n /lockops read=$((n + n / 50 + 1)) /" "$res"
if "$LB_PY" tests/check_lockload.py "$out/bad" "${checks[@]}" >"$out/bad.log"; then
	cat "$out/bad.log"
	echo "FAIL: check_lockload.py passed reads off by 2%"
	exit 1
fi
grep -q "^FAIL: reads: lock_stat file_systems_lock read acquisitions $n vs lockload's $((n + n / 50 + 1)): more than 1% apart" "$out/bad.log"
echo "ok: check_lockload.py refuses lockload read=$((n + n / 50 + 1)) against lock_stat's $n"
