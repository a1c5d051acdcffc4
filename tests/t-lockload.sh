#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest/lockload on a real boot of the before kernel (file_systems_lock an
# rwlock), 2 vCPUs: a job of lockload points (guest/JOB.md, workload=)
# brings back results in the module's format, and lockload's count of
# file_systems_lock acquisitions agrees with /proc/lock_stat's within 1%:
# reads (open + read + close of /proc/filesystems, and mount(2) of sysfs
# where it is mounted already: one read_lock per op) against the -R row, and with the fs_writer module running, writes (two
# write_lock per register + unregister pair) against the -W row.  The same
# for binfmt_lock (fs/exec.c) in the same boot: execve points (vfork +
# execve of lockload --exit0: three read_lock(&binfmt_lock) per exec, and
# as many for each exec outside the workload that lock_stat sees, which
# guest/init.sh tells lockload), alone and with fs_writer lock=binfmt_lock
# registering a dummy binary format.  And proc_subdir_lock
# (fs/proc/generic.c): proc_lookup points (stat of a name /proc has not:
# one read_lock), alone and with fs_writer lock=proc_subdir_lock creating
# and removing a /proc file (one read_lock + two write_lock a pair).  The
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
guest/build-lockload.sh --arch arm

cat >"$out/fs.job" <<'JOB'
lockbench-job v1
point reads workload=proc_filesystems duration_ms=1000 timing=8 seed=1
point writer workload=proc_filesystems duration_ms=1000 timing=8 writer_hz=1000
point mounts workload=mount_sysfs duration_ms=500 timing=8
point execs workload=execve duration_ms=1000 timing=8
point execs-writer workload=execve duration_ms=1000 timing=8 writer_hz=1000
point lookups workload=proc_lookup duration_ms=500 timing=8
point lookups-writer workload=proc_lookup duration_ms=500 timing=8 writer_hz=1000
JOB
lb_py -m guest.run_guest before --cpus 2 --job "$out/fs.job" --out "$out/run"
"$LB_PY" tests/check_lockload.py "$out/run" --writer-point writer \
	--writer-point execs-writer --writer-point lookups-writer

# The check catches a count that is off: 2% more reads claimed.
cp -r "$out/run" "$out/bad"
chmod -R u+w "$out/bad"
res=$out/bad/points/reads/results.txt
n=$(sed -n 's/^lockops read=\([0-9]*\) .*/\1/p' "$res")
sed -i "s/^lockops read=$n /lockops read=$((n + n / 50 + 1)) /" "$res"
if "$LB_PY" tests/check_lockload.py "$out/bad" >"$out/bad.log"; then
	cat "$out/bad.log"
	echo "FAIL: check_lockload.py passed reads off by 2%"
	exit 1
fi
grep -q "^FAIL: reads: lock_stat file_systems_lock read acquisitions $n vs lockload's $((n + n / 50 + 1)): more than 1% apart" "$out/bad.log"
echo "ok: check_lockload.py refuses lockload read=$((n + n / 50 + 1)) against lock_stat's $n"
