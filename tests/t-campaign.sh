#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Campaigns for real: the smoke campaign end to end on both variants (boots
# interleaved, every boot done, a report, its plots and report.html
# rendered in headless Chromium); a campaign killed outright
# (SIGKILL) and one stopped with SIGINT, each resumed: the same set of
# completed boots, none run twice, finished boots byte-identical; 1-vCPU
# boots side by side on the 2-core host on distinct cores, each variant
# on the other core at the next repetition, 2-vCPU boots alone; a resume
# refused when the campaign file changed (every bad campaign file:
# tests/t-campaign-file.sh).
#
# Usage: tests/t-campaign.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/campaign
rm -rf "$out"
mkdir -p "$out"

boots_in() { # DIR STATE: ids of the boots in that state
	"$LB_PY" -c 'import json,sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
print(" ".join(c["id"] for c in m["cells"] if c["state"] == sys.argv[2]))' "$1" "$2"
}
n_boots() { # DIR STATE: how many boots are in that state
	boots_in "$1" "$2" | wc -w
}
hashes() { # the SHA-256 of every file of the done boots
	local id
	for id in $(boots_in "$1" "done"); do
		(cd "$1/cells" && find "$id" -type f -print0 | sort -z | xargs -0 sha256sum)
	done
}
unchanged() { # DIR HASHFILE: every file hashed before is still the same
	[ -s "$2" ] && hashes "$1" | grep -F -x -f "$2" | cmp -s - "$2"
}
no_qemu_left() { # DIR: its QEMUs gone within 10 s (a runner told to stop
	# waits up to 5 s for its QEMU to exit before killing it)
	for _ in $(seq 20); do
		pgrep -f "qemu-system-arm.*$1" >/dev/null || return 0
		sleep 0.5
	done
	pgrep -af "qemu-system-arm.*$1"
	echo "FAIL: a QEMU of $1 outlived the harness"
	exit 1
}
wait_done() { # DIR N: until N boots are done
	for _ in $(seq 300); do
		[ -f "$1/manifest.json" ] && [ "$(n_boots "$1" "done")" -ge "$2" ] && return 0
		sleep 0.5
	done
	echo "FAIL: $1: $2 boots not done in time"
	exit 1
}

# 1. --dry-run says before anything runs what each vCPU count's boots
# can decide: smoke's 3 boots a side cannot (a verdict needs 6).
./run.sh campaign campaigns/smoke.toml --dry-run >"$out/dry.log" 2>&1
grep -q "^campaign: 2 vCPUs (wall clock): up to 3 boots a side; primary: read90 throughput_run (the default)" "$out/dry.log"
grep -q "^campaign: warning: 3 boots a side at 2 vCPUs cannot reach a verdict (at least 6 a side)" "$out/dry.log"
echo "ok: --dry-run names the primary metrics and warns that 3 boots a side decide nothing"

# 2. The smoke campaign, end to end.
./run.sh campaign campaigns/smoke.toml --out "$out/smoke" >"$out/smoke.log" 2>&1 ||
	{ tail -n 20 "$out/smoke.log"; exit 1; }
# It ends with the commit block and the paths, not summary.md's hundreds
# of lines (--verbose prints those); the normal path warns of nothing
# about the tidy files.
grep -q '^Reproduce:' "$out/smoke.log"
grep -q '^campaign: verdicts in .*/summary.md' "$out/smoke.log"
if grep -q -e '^\*\*Answer' -e 'running analyze' "$out/smoke.log"; then
	echo "FAIL: smoke: the campaign printed summary.md or the analyze warning"
	exit 1
fi
"$LB_PY" - "$out/smoke" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
boots = m["cells"]
assert all(c["state"] == "done" for c in boots), [(c["id"], c["state"]) for c in boots]
c = m["campaign"]
assert len(boots) == len(c["variants"]) * len(c["cpus"]) * c["repetitions"]
# Interleaved: the variants alternate within and across repetitions,
# the A/A control (control = true) among them.
order = [x["variant"] for x in boots]
assert order[:6] == ["before", "after", "before~aa", "before~aa", "after", "before"], order
for key in ("host", "builds", "campaign", "rootfs_sha256"):
    assert m[key], key
assert set(m["builds"]) == {"before", "after", "before~aa"}
assert m["builds"]["before~aa"] == m["builds"]["before"]
# The control boots the baseline's kernel.
for x in boots:
    if x["variant"] == "before~aa":
        meta = json.load(open(f"{d}/cells/{x['id']}/meta.json"))
        assert meta["variant"] == "before", meta["variant"]
# Pinned (pin = true, the default, for boots of 2 vCPUs or more): each
# boot's vCPU threads on the two host cores the manifest names, one each.
for x in boots:
    pin = json.load(open(f"{d}/cells/{x['id']}/meta.json"))["pin"]
    got = sorted(t["cores"][0] for t in pin["threads"].values()) if pin and pin["applied"] else None
    assert got == sorted(x["pin"]) == sorted(pin["requested"]) and len(got) == 2, (x, pin)
# It looked at 2 repetitions, found the primary cells undecided (n<6)
# and ran to the end.
seq = m["sequential"]
assert seq["stopped_at"] is None and [x["reps"] for x in seq["looks"]] == [2], seq
assert seq["looks"][0]["primary"] == 2 and len(seq["looks"][0]["undecided"]) == 2, seq
assert all("inconclusive (n<6)" in u for u in seq["looks"][0]["undecided"]), seq
print(f"ok: smoke: {len(boots)} boots done, interleaved {order}; the look at 2 "
      f"repetitions found {len(seq['looks'][0]['undecided'])} primary cells undecided, "
      f"it ran to {c['repetitions']}")
PY
grep -q '^campaign: look at 2 repetitions: 2 of 2 primary cells undecided' "$out/smoke.log"
for f in summary.md commit-msg.txt tidy/comparisons.csv tidy/samples.csv tidy/crosscheck.csv; do
	[ -s "$out/smoke/$f" ] || { echo "FAIL: smoke: no $f"; exit 1; }
done
grep -q 'QEMU TCG' "$out/smoke/summary.md"
"$LB_PY" tests/check_width.py --commit "$out/smoke/commit-msg.txt"
if grep -q ',0$' "$out/smoke/tidy/crosscheck.csv"; then
	echo "FAIL: module counts and lock_stat disagree:"
	cat "$out/smoke/tidy/crosscheck.csv"
	exit 1
fi
echo "ok: smoke: summary.md says QEMU TCG, commit-msg.txt within 72 columns, counts agree with lock_stat"
# The A/A pair is judged, and the real comparison carries its calibration.
"$LB_PY" - "$out/smoke" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/tidy/comparisons.csv")))
ctl = [r for r in rows if r["role"] == "control"]
assert ctl and all((r["baseline"], r["variant"]) == ("before", "before~aa") for r in ctl), ctl[:1]
prim = [r for r in rows if r["role"] == "primary"]
assert prim and all(r["calibration"] == "A/A inconclusive (n<6)" for r in prim), \
    [r["calibration"] for r in prim]
print(f"ok: smoke: {len(ctl)} A/A control rows; the primary rows carry their calibration")
PY
# Three boots a side: the answer opens every output and gives no verdict.
"$LB_PY" tests/check_answer.py "$out/smoke"
# smoke.toml names no primary metric: the default of the regime, said
# so; one row a cell, both inconclusive at 3 boots a side
grep -q '^\*\*Answer for after against before (throughput_run (the default of each regime' "$out/smoke/summary.md"
[ "$(grep -c '^| 2 vCPUs, read[0-9]* | \*\*inconclusive (n<6)\*\* | throughput_run ' "$out/smoke/summary.md")" = 2 ] ||
	{ echo "FAIL: smoke: summary.md's answer has not one inconclusive row per cell"; exit 1; }
"$LB_PY" tests/check_report.py "$out/smoke"

# 3. Killed outright mid-campaign, its runners slow to end (stopped
# across the kill, as on a loaded host), then resumed: the resume waits
# for them before it starts their boots again at the same paths (else an
# old runner unlinks the new boot's results stream: lockbench/dirlock.py).
d=$out/killed
PYTHONPATH=$LB_ROOT "$LB_PY" -m scripts.campaign tests/campaigns/resume.toml --out "$d" --no-report >"$out/killed.log" 2>&1 &
pid=$!
wait_done "$d" 2
runners=
for _ in $(seq 100); do
	runners=$(pgrep -f "guest.run_guest .*--out $d/cells/" | tr '\n' ' ') && break
	sleep 0.1
done
[ -n "$runners" ] || { echo "FAIL: killed: no runner of $d running after 2 boots"; exit 1; }
# shellcheck disable=SC2086 # a list of pids
kill -STOP $runners
kill -KILL "$pid"
wait "$pid" || true
before=$(boots_in "$d" "done")
hashes "$d" >"$out/killed.before"
./run.sh campaign --resume "$d" --no-report >"$out/killed-resume.log" 2>&1 &
rpid=$!
sleep 2
# shellcheck disable=SC2086
kill -CONT $runners
wait "$rpid" || { tail -n 20 "$out/killed-resume.log"; exit 1; }
grep -q "^campaign: waiting up to 30 s for the stopped campaign's runner in .tmp-" \
	"$out/killed-resume.log" ||
	{ echo "FAIL: killed: the resume did not wait for the stopped runners"; exit 1; }
no_qemu_left "$d"
"$LB_PY" - "$d" "$before" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
early = sys.argv[2].split()
assert all(c["state"] == "done" for c in m["cells"]), [(c["id"], c["state"]) for c in m["cells"]]
for c in m["cells"]:
    if c["id"] in early:
        assert len(c["tries"]) == 1, f"{c['id']} ran again after the kill"
assert [x["reps"] for x in m["sequential"]["looks"]] == [2], m["sequential"]
print(f"ok: killed: {len(early)} boots done before SIGKILL kept, none run twice, "
      f"all {len(m['cells'])} done after --resume, across the look at 2 repetitions")
PY
unchanged "$d" "$out/killed.before" ||
	{ echo "FAIL: a boot finished before the kill changed after resume"; exit 1; }
echo "ok: killed: finished boots byte-identical after resume"

# 4. SIGINT (Ctrl-C) mid-campaign, then resumed; boots side by side.
d=$out/sigint
PYTHONPATH=$LB_ROOT "$LB_PY" -m scripts.campaign tests/campaigns/resume.toml --out "$d" --no-report >"$out/sigint.log" 2>&1 &
pid=$!
wait_done "$d" 1
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 130 ] || { echo "FAIL: SIGINT: exit $rc, want 130"; cat "$out/sigint.log"; exit 1; }
grep -q 'stopped by SIGINT' "$out/sigint.log"
no_qemu_left "$d"
[ -n "$(boots_in "$d" interrupted)" ] || { echo "FAIL: SIGINT: no boot marked interrupted"; exit 1; }
hashes "$d" >"$out/sigint.before"
./run.sh campaign --resume "$d" --no-report >"$out/sigint-resume.log" 2>&1 ||
	{ tail -n 20 "$out/sigint-resume.log"; exit 1; }
[ -z "$(boots_in "$d" interrupted)" ] && [ "$(n_boots "$d" "done")" = 6 ]
unchanged "$d" "$out/sigint.before" ||
	{ echo "FAIL: a boot finished before SIGINT changed after resume"; exit 1; }
"$LB_PY" - "$d" <<'PY'
import datetime, json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
spans = []
for c in m["cells"]:
    meta = json.load(open(f"{d}/cells/{c['id']}/meta.json"))
    t = datetime.datetime.fromisoformat
    spans.append((t(meta["start"]), t(meta["end"])))
overlap = any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1:])
assert overlap, "1-vCPU boots never ran side by side on a 2-core host"
print("ok: sigint: exit 130, boots marked interrupted, resumed to 6 done; 1-vCPU boots ran side by side")
# 1-vCPU boots are left to the host's scheduler even with pin = true (the
# default): pinning them widened the A/A CI (scripts/campaign/run.py pin_for).
for c in m["cells"]:
    pin = json.load(open(f"{d}/cells/{c['id']}/meta.json"))["pin"]
    assert pin is None and not c.get("pin"), (c, pin)
print("ok: 1-vCPU boots unpinned (pin = true pins boots of 2 vCPUs or more)")
PY

# 4b. Two runs of one campaign (the killed and the stopped one, each
# resumed to all its boots): ./run.sh compare gives the primary cell's
# ratio in both runs and their ratio with a CI; two campaigns that ask
# different things are refused in one line.
./run.sh analyze "$out/killed" >/dev/null
./run.sh analyze "$d" >/dev/null
cmp=$(./run.sh compare "$out/killed" "$d") || { echo "FAIL: compare exited $?"; exit 1; }
if ! grep -q '^| after vs before | 1 | read50 | throughput_' <<<"$cmp" ||
	! grep -q '^[01] of 1 cells have the same verdict in both runs; the ratio moved' <<<"$cmp"; then
	echo "FAIL: compare: no row for the campaign's cell: $cmp"
	exit 1
fi
rc=0
msg=$(./run.sh compare "$out/smoke" "$d" 2>&1) || rc=$?
if [ "$rc" != 2 ] || [ "$(wc -l <<<"$msg")" != 1 ] || ! grep -q 'not the campaign of' <<<"$msg"; then
	echo "FAIL: compare of two campaigns: exit $rc: $msg"
	exit 1
fi
echo "ok: compare: two runs of resume.toml cell by cell; two campaigns refused in one line"

# 5. A changed campaign file: resume refused.
cp tests/campaigns/resume.toml "$out/changed.toml"
d=$out/changed
PYTHONPATH=$LB_ROOT "$LB_PY" -m scripts.campaign "$out/changed.toml" --out "$d" --no-report >/dev/null 2>&1 &
pid=$!
wait_done "$d" 1
kill -TERM "$pid"
wait "$pid" || true
echo "# changed" >>"$out/changed.toml"
rc=0
msg=$(./run.sh campaign --resume "$d" 2>&1) || rc=$?
case $rc:$msg in
2:*"refusing to resume: campaign file"*"changed"*) ;;
*) echo "FAIL: resume after a campaign change: exit $rc: $msg"; exit 1 ;;
esac
echo "ok: resume refused after the campaign file changed: $msg"
