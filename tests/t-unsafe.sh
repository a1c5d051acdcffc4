#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Safety before speed, for real: a conversion that deadlocks must be
# judged "unsafe", with lockdep's report, and never get a number.
# The test variant "nest" (tests/variants/nest.toml) is "before" whose
# lookup takes mboxes_lock as a reader again while holding it (an rwlock
# allows that).  ./run.sh convert turns it into a spinlock, the converted
# kernel is built (lock_stat kernels have PROVE_LOCKING) and booted
# against "before" in a one-point campaign: the lookup deadlocks on
# itself, lockdep reports recursive locking, the boot hangs, and the
# report's answer must open "unsafe" with the splat in summary.md, every
# row of the converted kernel (none: it has no samples) or a warning
# saying so, and the campaign's other boots kept.
#
# Usage: tests/t-unsafe.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init unsafe
export LOCKBENCH_VARIANT_PATH=$LB_ROOT/tests/variants:$out/v

# 1. Convert the nested reader's rwlock, build the result.
./run.sh convert --base nest --name nest-spin --out "$out/v" \
	drivers/mailbox/omap-mbox-registry.c mboxes_lock >"$out/convert.log" 2>&1 ||
	{ cat "$out/convert.log"; fail "convert failed"; }
grep -q '^+	spin_lock(&mboxes_lock);$' "$out"/v/0003-*.patch ||
	fail "the nested reader was not converted: $(ls "$out/v")"
ok "converted: $(tail -n 1 "$out/convert.log")"
./run.sh build nest-spin >"$out/build.log" 2>&1 || { tail -n 20 "$out/build.log"; fail "build failed"; }
ok "built nest-spin: $(grep -o 'done in [0-9]* s' "$out/build.log")"

# 2. One point, one boot a side; the converted kernel hangs.
cat >"$out/unsafe.toml" <<'EOF'
name = "unsafe"
description = "a conversion that deadlocks: must be unsafe"
variants = ["before", "nest-spin"]
baseline = "before"
cpus = [2]
repetitions = 1
primary_metric = "throughput_ops_s"
# The deadlock is reported at once; below RCU's 21 s stall warning, whose
# output would restart the wait (60 s a boot where this takes ~20).
silence_s = 15

[[points]]
id = "read95"
read_pct = 95
mailboxes = 16
duration_ms = 300
EOF
rc=0
./run.sh campaign "$out/unsafe.toml" --out "$out/run" >"$out/campaign.log" 2>&1 || rc=$?
d=$out/run
"$LB_PY" - "$d" <<'PY' || { tail -n 20 "$out/campaign.log"; fail "campaign boots"; }
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
by = {c["variant"]: c for c in m["cells"]}
assert by["before"]["state"] == "done", by["before"]
bad = by["nest-spin"]
assert bad["state"] != "done", bad
assert any(p.startswith("lockdep: ") and "recursive locking" in p for p in bad["problems"]), bad
print(f"ok: before done; nest-spin {bad['state']}: {bad['problems'][:2]}")
PY
ok "campaign exit $rc"

# 3. The report: unsafe first, the splat, no number judged.
./run.sh report "$d" >"$out/report.log" 2>&1 || { cat "$out/report.log"; fail "report failed"; }
grep -q '^Answer for nest-spin against before: unsafe\. nest-spin had a lockdep report ("WARNING: possible recursive locking detected")' \
	"$d/answer.txt" || fail "answer.txt: $(cat "$d/answer.txt")"
ok "answer: $(cut -c1-160 "$d/answer.txt")"
grep -q '^\*\*Answer for nest-spin against before: unsafe' <(sed -n 3p "$d/summary.md") ||
	fail "summary.md does not open with the unsafe answer"
grep -q 'omap_mbox_get' "$d/summary.md" || fail "summary.md lacks the splat's omap_mbox_get frames"
[ "$(grep -n '^```$' "$d/summary.md" | head -n 1 | cut -d: -f1)" -lt \
	"$(grep -n 'QEMU TCG' "$d/summary.md" | head -n 1 | cut -d: -f1)" ] ||
	fail "the splat is not before the numbers in summary.md"
ok "summary.md: the answer, then lockdep's report (omap_mbox_get in it), then the setup"
grep -q '^nest-spin vs before: unsafe' "$d/commit-msg.txt" ||
	fail "commit-msg.txt does not open with unsafe"
! grep -q 'nest-spin.*\(no harm\|better\)' "$d/summary.md" || fail "a favourable verdict for nest-spin"
ok "commit-msg.txt opens with unsafe; no favourable verdict anywhere"
rm -rf "$LB_BUILD/nest" "$LB_BUILD/nest-spin"
git -C "$LB_BUILD/src/linux-source-6.1" worktree prune
