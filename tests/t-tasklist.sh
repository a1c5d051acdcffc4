#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tasklist_lock, the article's lock, end to end (docs/targets.md): the
# shipped conversion (kernel-patches/0002-kernel-fork-*: the 27 files
# that name it, which tests/t-convert.sh checks is what ./run.sh convert
# writes today) is built and booted against "before" in
# tests/campaigns/smoke-tasklist.toml, one boot a side at 2 vCPUs:
#   - fork-wait (lockload's tasklist: fork, exit, wait, a group signal;
#     process context only): done on both kernels, a cross-check row per
#     kernel within 1% (lockload's reads and writes against lock_stat's
#     tasklist_lock rows; one plain row on the spinlock), writes seen;
#   - fork-wait-irq (the same beside fs_writer.ko lock=tasklist_lock: the
#     sysrq 'n' handler, a reader of tasklist_lock, called from a hard
#     interrupt and from a softirq): the rwlock kernel runs it with no
#     lockdep report and says on its console that both contexts were
#     reached; the spinlock kernel gets lockdep's "inconsistent lock
#     state" report, and the answer opens "unsafe" with it, no verdict.
#
# Usage: tests/t-tasklist.sh
# Needs: before spin-tasklist-lock
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init tasklist

d=$out/run
rc=0
./run.sh campaign tests/campaigns/smoke-tasklist.toml --out "$d" >"$out/campaign.log" 2>&1 || rc=$?
"$LB_PY" - "$d" <<'PY' || { tail -n 20 "$out/campaign.log"; fail "the run directory (above)"; }
import csv, glob, json, re, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
assert m["campaign"]["lock_class"] == "tasklist_lock", m["campaign"]["lock_class"]
by = {c["variant"]: c for c in m["cells"]}
assert set(by) == {"before", "spin-tasklist-lock"}, list(by)
good, bad = by["before"], by["spin-tasklist-lock"]
assert good["state"] == "done", f"before: {good['state']} {good['problems']}"
assert not any(p.startswith("lockdep: ") for p in good["problems"]), good["problems"]
assert bad["state"] != "done", f"spin-tasklist-lock: {bad['state']}"
splat = [p for p in bad["problems"] if p.startswith("lockdep: ")]
assert splat and "inconsistent lock state" in splat[0], bad["problems"]
# The rwlock kernel's console: the sysrq reader ran in both contexts.
con = "".join(open(f, errors="replace").read()
              for f in glob.glob(f"{d}/cells/{good['id']}/**/console*.log", recursive=True))
mm = re.search(r"tasklist_lock: handle_sysrq\('n'\) called (\d+) times in hardirq, (\d+) in softirq", con)
assert mm and int(mm.group(1)) > 0 and int(mm.group(2)) > 0, f"no hardirq + softirq calls on before's console: {mm and mm.group(0)}"
rows = list(csv.DictReader(open(d + "/tidy/crosscheck.csv")))
fw = {r["variant"]: r for r in rows if r["point"] == "fork-wait"}
assert "before" in fw, f"no cross-check row of before's fork-wait: {rows}"
for v, r in fw.items():
    assert r["ok"] == "1", f"cross-check off: {r}"
    assert int(r["lockops_write"]) > 0, f"no writes: {r}"
    if v == "before":
        assert int(r["lockstat_r_acq"]) > 0 and int(r["lockstat_plain_acq"]) == 0, r
    else:
        assert int(r["lockstat_r_acq"]) == int(r["lockstat_w_acq"]) == 0, r
irq = [r for r in rows if r["point"] == "fork-wait-irq" and r["variant"] == "before"]
assert irq and irq[0]["ok"] == "1", f"before's fork-wait-irq cross-check: {irq}"
print(f"ok: before done, hardirq {mm.group(1)} + softirq {mm.group(2)} sysrq reads; "
      f"spin-tasklist-lock {bad['state']}: {splat[0][:90]}; cross-check "
      + "; ".join(f"{r['variant']} {r['point']} {r['expected']}={r['observed']}" for r in rows))
PY
ok "campaign exit $rc"
./run.sh report "$d" >"$out/report.log" 2>&1 || { cat "$out/report.log"; fail "report failed"; }
grep -q '^Answer for spin-tasklist-lock against before: unsafe\. spin-tasklist-lock had a lockdep report ("WARNING: inconsistent lock state")' \
	"$d/answer.txt" || fail "answer.txt: $(cat "$d/answer.txt")"
! grep -qiE 'no harm|better|worse' "$d/answer.txt" || fail "a verdict beside unsafe: $(cat "$d/answer.txt")"
grep -q 'QEMU TCG emulation.*: 2 vCPUs on [0-9]* host core' "$d/summary.md" || fail "summary.md: no setup line"
# lockdep's report, first: a process-context spin_lock with interrupts
# on, then the sysrq reader in a hard interrupt.
grep -q '^inconsistent {HARDIRQ-ON-W} -> {IN-HARDIRQ-W} usage\.$' "$d/summary.md" ||
	fail "summary.md: not the hardirq report"
grep -q 'tasklist_lock.*normalize_rt_tasks' "$d/summary.md" || fail "summary.md: the report does not name tasklist_lock in normalize_rt_tasks"
grep -qF '**Contexts: process (every point), hard interrupt and softirq (at fork-wait-irq: the sysrq handlers' "$d/summary.md" ||
	fail "summary.md does not say the contexts exercised"
grep -q '^Contexts: process (every point), hard interrupt and softirq' "$d/commit-msg.txt" ||
	fail "commit-msg.txt does not say the contexts exercised"
ok "answer: $(head -c 200 "$d/answer.txt")"
