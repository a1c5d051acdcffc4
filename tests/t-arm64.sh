#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# arm64 guests: the same series on a second architecture.  The arm64
# kernels (before@arm64, after@arm64, built by tests/run-all.sh's build
# step) are what they claim to be: configcheck proves their fragments,
# .config and build-meta.json say qrwlock and qspinlock (and the arm
# kernels say neither), the trees declare DEFINE_RWLOCK / DEFINE_SPINLOCK
# as on arm, the module is an AArch64 object and the root fs is Debian
# arm64.  campaigns/smoke-arm64.toml (before and after on arm and arm64,
# 2 vCPUs) runs to the end: the arm64 boots run qemu-system-aarch64 -M
# virt -cpu cortex-a57 and record it in meta.json; the module's
# self-checks pass in every guest; lock_stat agrees with the module's
# counts (before@arm64: mboxes_lock-R and -W rows; after@arm64: one row);
# analyze finds no problem or disagreement; the report compares after
# with before within each arch and never across, its setup line names
# each arch's QEMU, and the plots and report.html render with '@' in the
# variant names (check_report.py).  The runner's fault detection is the
# same in an arm64 guest: an injected panic, lockdep report, warning and
# hang (tests/faults/lib.sh's job) each give their state and exit code,
# and the point finished before the fault is kept.  guest/inside/lockload runs
# there too: its counts equal lock_stat's on the three live rwlocks.
#
# Usage: tests/t-arm64.sh
# Needs: before after before@arm64 after@arm64
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/arm64
rm -rf "$out"
mkdir -p "$out"

# 1. The kernels and the root fs.
for v in before after; do
	d=$LB_BUILD/$v@arm64
	scripts/configcheck.sh "$d/config" kernel-patches/configs/virt-arm64.config \
		kernel-patches/configs/mbox-registry.config kernel-patches/configs/lockstat.config
	for opt in CONFIG_QUEUED_RWLOCKS=y CONFIG_QUEUED_SPINLOCKS=y CONFIG_LOCK_STAT=y \
		CONFIG_NR_CPUS=16 CONFIG_OMAP_MBOX_REGISTRY=y; do
		grep -qx "$opt" "$d/config" || { echo "FAIL: $v@arm64: $opt missing from .config"; exit 1; }
	done
	grep -q '^# CONFIG_NET is not set' "$d/config"
	if grep -qE '^CONFIG_QUEUED_(RW|SPIN)LOCKS=' "$LB_BUILD/$v/config"; then
		echo "FAIL: $v (arm): .config has queued locks"
		exit 1
	fi
	[ -s "$d/Image" ] || { echo "FAIL: $v@arm64: no Image"; exit 1; }
	lb_py - "$d" "$LB_BUILD/$v" "$v" <<'PY'
import json, sys
from scripts import variant
d, twin, v = sys.argv[1:]
m = json.load(open(d + "/build-meta.json"))
t = json.load(open(twin + "/build-meta.json"))
assert m["variant"] == v + "@arm64" and m["arch"] == "arm64" and m["variant_file"] == v, m
assert (m["rwlock_impl"], m["spinlock_impl"]) == ("qrwlock", "qspinlock"), m
assert m["lock_stat"] is True and m["config_fragments"][0]["name"] == "virt-arm64.config", m
assert [p["sha256"] for p in m["patches"]] == [p["sha256"] for p in t["patches"]]
# The arm twin, from its .config (its build-meta may predate these keys).
a = variant.config_flags(twin + "/config", "arm")
assert (a["rwlock_impl"], a["spinlock_impl"]) == ("arch (reader-preferring)", "arch (ticket)"), a
assert t.get("rwlock_impl", a["rwlock_impl"]) == a["rwlock_impl"], t
print(f"ok: {v}@arm64: build-meta.json: arch arm64, qrwlock, qspinlock, the same "
      f"{len(m['patches'])} patches as {v} (arm: {a['rwlock_impl']} rwlock, "
      f"{a['spinlock_impl']} spinlock), built in {m['build_seconds']} s")
PY
	aarch64-linux-gnu-readelf -h "$d/mbox_bench.ko" | grep -q 'Machine: *AArch64$'
done
grep -qx 'static DEFINE_RWLOCK(mboxes_lock);' "$LB_BUILD/before@arm64/src/drivers/mailbox/omap-mbox-registry.c"
grep -qx 'static DEFINE_SPINLOCK(mboxes_lock);' "$LB_BUILD/after@arm64/src/drivers/mailbox/omap-mbox-registry.c"
echo "ok: before@arm64 declares DEFINE_RWLOCK(mboxes_lock), after@arm64 DEFINE_SPINLOCK; both modules are AArch64"
rootfs=$LB_BUILD/rootfs-arm64
grep -q '^busybox-static .* arm64$' "$rootfs/packages.txt"
grep -q '^linux-perf .* arm64$' "$rootfs/packages.txt"
if grep -qv ' arm64$\| all$' "$rootfs/packages.txt"; then
	echo "FAIL: $rootfs/packages.txt has packages of another arch"
	exit 1
fi
echo "ok: $rootfs: Debian arm64 busybox-static and perf, $(wc -l <"$rootfs/packages.txt") packages"

# 2. The smoke campaign, one boot at a time (2 vCPUs on 2 cores).
start=$(date +%s)
./run.sh campaign campaigns/smoke-arm64.toml --jobs 1 --out "$out/run" --no-report \
	>"$out/campaign.log" 2>&1 || { tail -n 20 "$out/campaign.log"; exit 1; }
echo "ok: smoke-arm64 campaign: $(find "$out/run/cells" -mindepth 1 -maxdepth 1 -name 'r*' | wc -l) boots in $(($(date +%s) - start)) s"
"$LB_PY" - "$out/run" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
c = m["campaign"]
assert c["arches"] == ["arm", "arm64"], c["arches"]
assert c["variants"] == ["before", "after", "before@arm64", "after@arm64"], c["variants"]
assert c["compare"] == [["before", "after"], ["before@arm64", "after@arm64"]], c["compare"]
assert all(x["state"] == "done" for x in m["cells"]), [(x["id"], x["state"]) for x in m["cells"]]
assert set(m["builds"]) == set(c["variants"])
assert set(m["rootfs_sha256_by_arch"]) == {"arm", "arm64"}
assert m["rootfs_sha256"] == m["rootfs_sha256_by_arch"]["arm"]
assert m["host"]["qemu_guests"]["arm64"] == "qemu-system-aarch64 -M virt, cortex-a57", m["host"]
for x in m["cells"]:
    meta = json.load(open(f"{d}/cells/{x['id']}/meta.json"))
    cmd = open(f"{d}/cells/{x['id']}/qemu-cmd").read()
    arm64 = x["variant"].endswith("@arm64")
    want = ("qemu-system-aarch64 -M virt -cpu cortex-a57" if arm64
            else "qemu-system-arm -M virt -cpu cortex-a15")
    assert cmd.startswith(want), cmd
    assert meta["arch"] == ("arm64" if arm64 else "arm"), meta["arch"]
    assert meta["qemu"]["binary"] == want.split()[0], meta["qemu"]
    assert meta["build"]["variant"] == x["variant"], meta["build"]["variant"]
    kernel = f"/{x['variant']}/" + ("Image" if arm64 else "uImage")
    assert kernel in cmd, cmd
print(f"ok: manifest: {len(m['cells'])} boots done, targets {c['variants']}, pairs "
      f"{c['compare']}; every boot booted its arch's QEMU and kernel")
PY
for boot in r01-before@arm64-c2 r01-after@arm64-c2; do
	lock=rwlock
	[[ $boot != *after* ]] || lock=spinlock
	"$LB_PY" tests/check_run.py "$out/run/cells/$boot" --lock "$lock" | sed 's/^/    /'
	grep -q '^Linux version .*(aarch64-linux-gnu-gcc ' "$out/run/cells/$boot/console.log"
	echo "ok: $boot: an arm64 kernel booted; module self-checks pass; lock_stat ($lock) == module counts"
done
"$LB_PY" tests/check_run.py "$out/run/cells/r01-before-c2" --lock rwlock >/dev/null
"$LB_PY" tests/check_run.py "$out/run/cells/r01-after-c2" --lock spinlock >/dev/null
echo "ok: r01-before-c2, r01-after-c2: the arm boots of the same campaign pass the same checks"

# 3. Analysis, report, plots.
./run.sh analyze "$out/run" >"$out/analyze.log" 2>&1 || { cat "$out/analyze.log"; exit 1; }
grep -q ', 0 problems, 0 crosscheck disagreements' "$out/analyze.log" ||
	{ cat "$out/analyze.log"; exit 1; }
echo "ok: analyze: no problem, no cross-check disagreement"
./run.sh report "$out/run" >"$out/summary.md" 2>"$out/report.err" ||
	{ cat "$out/report.err"; exit 1; }
md=$out/summary.md
grep -q '^## throughput_ops_s (ops/s, higher is better): after@arm64 vs before@arm64$' "$md"
grep -q '^## throughput_ops_s (ops/s, higher is better): after vs before$' "$md"
grep -qF '(arm guests: qemu-system-arm -M virt, cortex-a15; arm64 guests: qemu-system-aarch64 -M virt, cortex-a57)' "$md"
tr '\n' ' ' <"$out/run/commit-msg.txt" | grep -qF 'arm64 guests: qemu-system-aarch64 -M virt, cortex-a57'
"$LB_PY" tests/check_width.py --commit "$out/run/commit-msg.txt"
"$LB_PY" - "$out/run" <<'PY'
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/tidy/comparisons.csv")))
pairs = {(r["baseline"], r["variant"]) for r in rows}
assert pairs == {("before", "after"), ("before@arm64", "after@arm64")}, pairs
for r in rows:
    if r["metric"] == "throughput_ops_s" and r["variant"] == "after@arm64":
        print(f"ok: report: after@arm64/before@arm64 throughput at {r['cpus']} vCPUs, "
              f"{r['point']}: {float(r['ratio']):.3f} ({r['verdict']})")
    if r["metric"] == "throughput_ops_s" and r["variant"] == "after":
        print(f"ok: report: after/before (arm) throughput at {r['cpus']} vCPUs, "
              f"{r['point']}: {float(r['ratio']):.3f} ({r['verdict']})")
PY
grep -q 'after@arm64' "$out/run/report.html"
echo "ok: report: after vs before per arch, never across; the setup lines name each arch's QEMU"
"$LB_PY" tests/check_report.py "$out/run"

. "$LB_ROOT/tests/faults/lib.sh"

# 4. guest/inside/lockload, cross-built for arm64, on the three live rwlocks
# (queued rwlocks here): its counts equal lock_stat's, with and without
# the fs_writer module (tests/t-lockload.sh does the same on arm).
cat >"$out/lockload.job" <<'JOB'
lockbench-job v1
point reads workload=proc_filesystems duration_ms=500 timing=8
point writer workload=proc_filesystems duration_ms=500 timing=8 writer_hz=1000
point execs workload=execve duration_ms=500 timing=8
point lookups-writer workload=proc_lookup duration_ms=500 timing=8 writer_hz=1000
JOB
lb_py -m guest.run_guest before@arm64 --cpus 2 --job "$out/lockload.job" --out "$out/lockload" \
	>"$out/lockload.log" 2>&1 || { tail -n 20 "$out/lockload.log"; fail "the lockload boot failed"; }
"$LB_PY" tests/check_lockload.py "$out/lockload" --writer-point writer --writer-point lookups-writer \
	>"$out/check-lockload.log" || { cat "$out/check-lockload.log"; fail "check_lockload.py on before@arm64"; }
sed 's/^/    /' "$out/check-lockload.log"
ok "before@arm64: lockload's counts equal lock_stat's (file_systems_lock, binfmt_lock, proc_subdir_lock)"

# 5. Faults in an arm64 guest: the same states and exit codes as on arm.
for f in panic:11 lockdep:13 warn:14 hang:10; do
	inj=${f%:*}
	ft_job "$out/$inj.job" "$inj"
	rc=0
	lb_py -m guest.run_guest before@arm64 --cpus 2 --job "$out/$inj.job" \
		--out "$out/fault-$inj" --silence 15 >"$out/fault-$inj.log" 2>&1 || rc=$?
	[ "$rc" = "${f#*:}" ] || { cat "$out/fault-$inj.log"; fail "inject $inj: exit $rc, want ${f#*:}"; }
	"$LB_PY" - "$out/fault-$inj/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["arch"] == "arm64" and "p1" in m["points_done"], m
PY
	state=$(tail -n 1 "$out/fault-$inj.log" | cut -d: -f3)
	ok "before@arm64: inject $inj:${state} (exit $rc), point p1 kept"
done
