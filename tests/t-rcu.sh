#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The RCU variant (patch 0003): its .config has LOCK_STAT and PROVE_RCU,
# its tree looks mailboxes up under rcu_read_lock() and waits for a grace
# period in omap_mbox_unregister(), and build-meta.json carries the
# variant file's lookup_lock "none".  Booted twice with 2 vCPUs under a
# churn-heavy job (10% lookups: a grace period in nearly every op; a
# 256-mailbox list; and 90% lookups, half of them misses that walk the
# whole list over the private mailboxes the other CPU unlinks and
# relinks), the module's
# self-checks pass (no lookup returned a wrong mailbox), no lockdep or RCU
# splat and no RCU stall is on the console, and lock_stat's mboxes_lock
# shows one row whose acquisitions are the module's writes alone
# (check_run.py --lock rcu); analyze's cross-check expects exactly that.
#
# Usage: tests/t-rcu.sh
# Needs: rcu
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/rcu
rm -rf "$out"
mkdir -p "$out"
d=$LB_BUILD/rcu

# 1. The kernel is what it claims to be.
# (CONFIG_PROVE_RCU is in lockstat.config, checked here.)
scripts/configcheck.sh "$d/config" kernel-patches/configs/lockstat.config
grep -qx 'CONFIG_PROVE_RCU=y' "$d/config"
src=$d/src/drivers/mailbox/omap-mbox-registry.c
grep -qx 'static DEFINE_SPINLOCK(mboxes_lock);' "$src"
grep -qx 'static struct omap_mbox __rcu \*mboxes;' "$src"
# omap_mbox_get() takes no lock: its body has rcu_read_lock() and no spin_lock.
body=$(sed -n '/^struct omap_mbox \*omap_mbox_get(/,/^}/p' "$src")
grep -q 'rcu_read_lock();' <<<"$body"
if grep -q 'spin_lock' <<<"$body"; then
	echo "FAIL: omap_mbox_get() still takes mboxes_lock"
	exit 1
fi
sed -n '/^int omap_mbox_unregister(/,/^}/p' "$src" | grep -q 'synchronize_rcu();'
"$LB_PY" -c 'import json, sys
m = json.load(open(sys.argv[1]))
assert m["lookup_lock"] == "none" and m["lock_stat"] is True, m
print("ok: rcu: build-meta.json: lookup_lock none, lock_stat true, "
      + str(len(m["patches"])) + " patches")' "$d/build-meta.json"
echo "ok: rcu: LOCK_STAT and PROVE_RCU on; lookups under rcu_read_lock(), unregister waits for a grace period"

# 2. Churn: two boots, every registry path at once.
cat >"$out/churn.job" <<'JOB'
lockbench-job v1
option selftest 1
point churn read_pct=10 mailboxes=16 miss_pct=50 duration_ms=1500
point churn-long read_pct=10 mailboxes=256 miss_pct=50 duration_ms=1000
point walks read_pct=90 mailboxes=16 miss_pct=50 duration_ms=1500
JOB
for boot in 1 2; do
	r=$out/boot$boot
	lb_py -m guest.run_guest rcu --cpus 2 --job "$out/churn.job" --out "$r"
	"$LB_PY" tests/check_run.py "$r" --lock rcu
	if grep -nE 'rcu.*(stall|detected stalls)|suspicious RCU usage|lockdep|WARNING:|BUG:' "$r/console.log"; then
		echo "FAIL: boot $boot: a lockdep or RCU report on the console"
		exit 1
	fi
	grep -q 'SELFTEST run mailboxes=5000 rejected' "$r/console.log"
	grep -h '^total \|^lockops \|^check ' "$r"/points/*/results.txt | sed 's/^/    /'
done
echo "ok: rcu: 2 churn boots, self-checks ok, no lockdep/RCU splat or stall, lock_stat == writes"

# 3. analyze's cross-check reads lookup_lock from build-meta.json.
PYTHONPATH=$LB_ROOT "$LB_PY" - "$out/boot1" "$d/build-meta.json" <<'PY'
import json, os, sys
from analysis.parse import lockstat, bench_results
from analysis.tidy import crosscheck
run, meta = sys.argv[1], json.load(open(sys.argv[2]))
for pid in sorted(os.listdir(run + "/points")):
    pd = f"{run}/points/{pid}"
    res = bench_results.parse_file(pd + "/results.txt")
    rows = lockstat.parse_file(pd + "/lock_stat.txt").select(exact="mboxes_lock")
    cc = crosscheck.crosscheck_row(res.lockops, rows, lookup_lock=meta["lookup_lock"])
    assert cc["relation"] == "writes" and cc["ok"] == 1, cc
    wrong = crosscheck.crosscheck_row(res.lockops, rows)
    assert wrong["ok"] == 0, wrong
    print(f"ok: {pid}: cross-check 'writes': lock_stat {cc['observed']} == write "
          f"{cc['lockops_write']} (read {cc['lockops_read']} took no lock; the "
          f"spinlock relation would be off by {100 * wrong['rel_diff']:.0f}%)")
PY
