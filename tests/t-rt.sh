#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The conversion on PREEMPT_RT (issue #39): Linux 6.12 on arm64, the one
# arch whose 6.12 Kconfig selects ARCH_SUPPORTS_RT.  The RT kernels
# (before-rt@arm64@6.12, after-rt@arm64@6.12) are what they claim to be:
# configcheck proves their fragments (PREEMPT_RT on, the queued rwlock
# off) on the 6.12 tree, build-meta.json says preempt "rt" with rt_mutex
# locks, and the linked omap_mbox_get() calls rt_read_lock() on
# before-rt and rt_spin_lock() on after-rt: sleeping locks.
# tests/campaigns/rt.toml boots both at 1 vCPU (icount) and 2 vCPUs
# (wall clock) with the A/A control: every boot ends ok, with no lockdep,
# might_sleep or "BUG: sleeping function" report (the module and the
# registry take only sleeping-safe paths under RT: a report there would
# be the state "unsafe" or "warn"), the module's self-checks pass and
# lock_stat's acquisitions equal the module's counts on both; analyze
# finds no problem; the answer judges the pair at both vCPU counts and
# says it ran under PREEMPT_RT.
#
# Usage: tests/t-rt.sh
# Needs: before-rt@arm64@6.12 after-rt@arm64@6.12
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/rt
rm -rf "$out"
mkdir -p "$out"
fail() {
	echo "FAIL: t-rt: $*"
	exit 1
}

# 1. The kernels.
for v in before-rt after-rt; do
	d=$LB_BUILD/$v@arm64@6.12
	scripts/configcheck.sh --tree "$d/src" "$d/config" kernel-patches/configs/virt-arm64.config \
		kernel-patches/configs/mbox-registry.config kernel-patches/configs/lockstat.config \
		kernel-patches/configs/preempt-rt.config || fail "$v: its fragments did not stick"
	grep -qx 'CONFIG_PREEMPT_RT=y' "$d/config" || fail "$v: no CONFIG_PREEMPT_RT=y"
	lb_py - "$d/build-meta.json" "$v" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
v = sys.argv[2]
assert m["variant"] == v + "@arm64@6.12" and m["arch"] == "arm64" and m["kernel"] == "6.12", m
assert m["preempt"] == "rt", m["preempt"]
assert m["rwlock_impl"].startswith("rwbase_rt") and m["spinlock_impl"].startswith("rt_mutex"), m
assert m["lock_stat"] and m["lockdep"], m
print(f"ok: {v}@arm64@6.12: build-meta.json: Linux {m['kernel_version']}, PREEMPT_RT, "
      f"rwlock {m['rwlock_impl']}, spinlock {m['spinlock_impl']}")
PY
done
. "$LB_ROOT/tests/lockcalls.sh"
got=$(lock_calls before-rt@arm64@6.12)
[ "$got" = "<rt_read_lock> <rt_read_unlock> " ] || fail "before-rt's omap_mbox_get calls: $got"
got=$(lock_calls after-rt@arm64@6.12)
[ "$got" = "<rt_spin_lock> <rt_spin_unlock> " ] || fail "after-rt's omap_mbox_get calls: $got"
echo "ok: vmlinux: before-rt's omap_mbox_get takes rt_read_lock, after-rt's rt_spin_lock"

# 2. Booted at 1 and 2 vCPUs.
./run.sh campaign tests/campaigns/rt.toml --out "$out/run" --no-report \
	>"$out/campaign.log" 2>&1 || { tail -n 20 "$out/campaign.log"; fail "the campaign failed"; }
lb_py - "$out/run" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
bad = [(x["id"], x["state"]) for x in m["cells"] if x["state"] != "done"]
assert not bad, bad
for x in m["cells"]:
    meta = json.load(open(f"{d}/cells/{x['id']}/meta.json"))
    assert meta["state"] == "ok", (x["id"], meta["state"], meta.get("problems"))
    con = open(f"{d}/cells/{x['id']}/console.log", errors="replace").read()
    for bad in ("BUG: sleeping function", "WARNING: possible", "lockdep", "Call trace"):
        assert bad not in con, (x["id"], bad)
print(f"ok: {len(m['cells'])} boots at 1 and 2 vCPUs, every one ok, no lockdep or "
      f"might_sleep report")
PY
for boot in r01-before-rt@arm64@6.12-c2 r01-after-rt@arm64@6.12-c2 \
	r01-before-rt@arm64@6.12-c1 r01-after-rt@arm64@6.12-c1; do
	lock=rwlock
	[[ $boot != *after* ]] || lock=spinlock
	"$LB_PY" tests/check_run.py "$out/run/cells/$boot" --lock "$lock" | sed 's/^/    /'
	echo "ok: $boot: PREEMPT_RT booted; module self-checks pass; lock_stat ($lock) == module counts"
done

# 3. Judged.
./run.sh analyze "$out/run" >"$out/analyze.log" 2>&1 || { cat "$out/analyze.log"; fail "analyze"; }
grep -q ', 0 problems, 0 crosscheck disagreements' "$out/analyze.log" ||
	{ cat "$out/analyze.log"; fail "analyze found problems"; }
./run.sh report "$out/run" --no-plots >"$out/summary.md" 2>"$out/report.err" ||
	{ cat "$out/report.err"; fail "report"; }
lb_py - "$out/run" <<'PY'
import csv, sys
d = sys.argv[1]
rows = [r for r in csv.DictReader(open(d + "/tidy/comparisons.csv")) if r["role"] == "primary"]
got = {(r["cpus"], r["clock"]) for r in rows}
assert got == {("1", "icount"), ("2", "wall")}, got
# At 1 vCPU the exact rule decides from 3 boots a side.
one = [r for r in rows if r["cpus"] == "1"]
assert all(not r["verdict"].startswith("inconclusive") for r in one), one
answer = open(d + "/answer.txt").read()
assert "Answer for after-rt@arm64@6.12 against before-rt@arm64@6.12 under PREEMPT_RT (" in answer, answer
print("ok: judged at 1 vCPU (" + "; ".join(f"{r['point']} {r['verdict']} {float(r['ratio']):.4f}"
                                           for r in one) + ") and 2 vCPUs, under PREEMPT_RT")
PY
echo "t-rt: ok"
