#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The three live targets of 6.1 end to end (docs/targets.md): for each of
# file_systems_lock, binfmt_lock and proc_subdir_lock, its smoke campaign
# (tests/campaigns/smoke-*.toml: the rwlock kernel "before" against the
# conversion ./run.sh convert wrote, which tests/t-convert.sh checks is
# what it writes today, one boot a side at 2 vCPUs, a reader point and a
# reader + writer point) runs to a report:
#   - every boot done, no lockdep report on either side (the converted
#     kernels run PROVE_LOCKING under their workload);
#   - tidy/crosscheck.csv: a row per point and boot, every one within 1%
#     (lockload's counts against lock_stat's acquisitions of the target's
#     class: read and write rows on the rwlock side, one plain row on the
#     spinlock side), writes seen where the writer ran;
#   - the answer names the conversion, no verdict (one boot a side) and
#     nothing unsafe, and the setup says QEMU TCG.
#
# Usage: tests/t-targets.sh
# Needs: before spin-file-systems-lock spin-binfmt-lock spin-proc-subdir-lock
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init targets

for t in file-systems:file_systems_lock binfmt:binfmt_lock proc-subdir:proc_subdir_lock; do
	name=${t%%:*} class=${t#*:}
	spin=spin-${class//_/-}
	d=$out/$name
	./run.sh campaign "tests/campaigns/smoke-$name.toml" --out "$d" >"$out/$name.log" 2>&1 ||
		{ tail -n 20 "$out/$name.log"; fail "$name: the campaign failed"; }
	"$LB_PY" - "$d" "$class" "$spin" <<'PY' || fail "$name: the run directory (above)"
import csv, json, sys
d, cls, spin = sys.argv[1:]
m = json.load(open(d + "/manifest.json"))
assert m["campaign"]["lock_class"] == cls, f"manifest lock_class {m['campaign']['lock_class']}, want {cls}"
boots = m["cells"]
assert {c["variant"] for c in boots} == {"before", spin}, [c["variant"] for c in boots]
for c in boots:
    assert c["state"] == "done", f"{c['id']}: {c['state']} {c['problems']}"
    assert not any(p.startswith("lockdep: ") for p in c["problems"]), c["problems"]
rows = list(csv.DictReader(open(d + "/tidy/crosscheck.csv")))
have = {(r["variant"], r["point"]) for r in rows}
points = [p["id"] for p in m["campaign"]["points"]]
want = {(v, p) for v in ("before", spin) for p in points}
assert have == want, f"cross-check rows for {sorted(have)}, want {sorted(want)}"
for r in rows:
    assert r["ok"] == "1", f"cross-check off: {r}"
    if r["variant"] == spin:
        assert int(r["lockstat_r_acq"]) == int(r["lockstat_w_acq"]) == 0, f"rwlock rows on the spinlock: {r}"
    else:
        assert int(r["lockstat_plain_acq"]) == 0 and int(r["lockstat_r_acq"]) > 0, f"{r}"
    if "writer" in r["point"]:
        assert int(r["lockops_write"]) > 0, f"no writes where the writer ran: {r}"
print(f"ok: {cls}: {len(boots)} boots done, no lockdep report; {len(rows)} cross-check rows within 1%: "
      + "; ".join(f"{r['variant']} {r['point']} {r['expected']}={r['observed']}" for r in rows))
PY
	answer=$(cat "$d/answer.txt")
	# the smoke campaigns name no primary metric: the default of the regime
	grep -q "^Answer for $spin against before (throughput_run (the default of each regime" <<<"$answer" ||
		fail "$name: answer.txt: $answer"
	grep -q 'QEMU TCG, 2 vCPUs on [0-9]* host core' <<<"$answer" || fail "$name: no setup line: $answer"
	! grep -qiE 'unsafe|no harm|better|worse|harm ' <<<"$answer" || fail "$name: a verdict from one boot: $answer"
	for f in report.html commit-msg.txt; do
		[ -s "$d/$f" ] || fail "$name: no $f"
	done
	ok "$name: $(cut -c1-150 <<<"$answer")"
done
