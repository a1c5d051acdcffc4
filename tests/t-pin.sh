#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Pinning (guest/run_guest.py --pin), for real.  Boot 1: "before" at 2
# vCPUs with --pin 1,0 (the reverse order, so that "vCPU N gets the Nth
# core listed" is what is checked, not "vCPU N gets core N"); while the
# guest's point runs, /proc/PID/task/TID/status of QEMU's "CPU 0/TCG"
# and "CPU 1/TCG" threads says Cpus_allowed_list 1 and 0, and QEMU's main
# thread still has every core the runner had; the run is ok, meta.json's
# pin record says applied with those cores, and the runner printed one
# "pinned" line.  Boot 2: --pin 1 for 2 vCPUs cannot be applied: one
# "pin not applied" line naming why, exit 0, meta.json applied false with
# the reason, and the vCPU threads keep every core.
#
# Usage: tests/t-pin.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
cd "$LB_ROOT"
ft_init pin

runner=''
cleanup() {
	[ -z "$runner" ] || kill "$runner" 2>/dev/null || true
}
trap cleanup EXIT

# The cores this shell may use, as the kernel prints a list ("0-1").
all=$(awk '/^Cpus_allowed_list:/{print $2}' /proc/self/status)
[ "$(nproc)" -ge 2 ] || fail "this test needs 2 host cores, the runner has $(nproc) ($all)"
ok "the runner may use cores $all"

cat >"$out/pin.job" <<'JOB'
lockbench-job v1
point p1 read_pct=90 mailboxes=16 duration_ms=2000
JOB

# allowed PID NAME: Cpus_allowed_list of QEMU PID's thread named NAME.
allowed() {
	local comm
	for comm in /proc/"$1"/task/*/comm; do
		if [ "$(cat "$comm" 2>/dev/null)" = "$2" ]; then
			awk '/^Cpus_allowed_list:/{print $2}' "${comm%/comm}/status"
			return 0
		fi
	done
	fail "no thread '$2' in QEMU $1: $(cat /proc/"$1"/task/*/comm | tr '\n' ,)"
}

# boot DIR PIN: start a 2-vCPU guest in the background, pinned by PIN;
# sets runner and qemu, and waits until its point runs.
boot() {
	PYTHONPATH=$LB_ROOT "$LB_PY" -m guest.run_guest before --cpus 2 --pin "$2" --job "$out/pin.job" --out "$1" \
		>"$1.stdout" 2>"$1.stderr" &
	runner=$!
	qemu=$(ft_qemu_pid "$1")
	ft_wait_for "$1/console.log" 'lockbench: point p1 run-begin' 120
}

# finish DIR: wait for the runner; it must exit 0 without a traceback.
finish() {
	local rc=0
	wait "$runner" || rc=$?
	runner=''
	sed 's/^/    | /' "$1.stderr" "$1.stdout"
	[ "$rc" = 0 ] || fail "runner exit $rc, want 0"
	! grep -q Traceback "$1.stderr" || fail "a Python traceback from the runner"
}

# Boot 1: pinned, vCPU 0 to core 1 and vCPU 1 to core 0.
boot "$out/pinned" 1,0
c0=$(allowed "$qemu" "CPU 0/TCG") c1=$(allowed "$qemu" "CPU 1/TCG")
main=$(awk '/^Cpus_allowed_list:/{print $2}' "/proc/$qemu/status")
[ "$c0.$c1" = 1.0 ] ||
	fail "while p1 ran: CPU 0/TCG may run on '$c0', CPU 1/TCG on '$c1'; want 1 and 0"
ok "while p1 ran: CPU 0/TCG pinned to core $c0, CPU 1/TCG to core $c1"
[ "$main" = "$all" ] || fail "QEMU's main thread may run on '$main', want every core ($all)"
ok "QEMU's main thread unpinned (cores $main)"
finish "$out/pinned"
n=$(grep -c 'pinned CPU 0/TCG (tid [0-9]*) to core 1, CPU 1/TCG (tid [0-9]*) to core 0' \
	"$out/pinned.stderr" || true)
[ "$n" = 1 ] || fail "$n 'pinned' lines from the runner, want 1"
ok "the runner said it once: $(grep pinned "$out/pinned.stderr")"
"$LB_PY" - "$out/pinned/meta.json" <<'PY'
import json, sys
pin = json.load(open(sys.argv[1]))["pin"]
cores = {k: v["cores"] for k, v in pin.get("threads", {}).items()}
if not (pin["applied"] and pin["requested"] == [1, 0]
        and cores == {"CPU 0/TCG": [1], "CPU 1/TCG": [0]}):
    print(f"FAIL: meta.json pin {pin}")
    sys.exit(1)
print(f"ok: meta.json pin: applied {pin['after_s']} s after QEMU started, {cores}")
PY
"$LB_PY" tests/check_run.py "$out/pinned" --lock rwlock

# Boot 2: one core for two vCPUs: not applied, said once, no failure.
boot "$out/short" 1
c0=$(allowed "$qemu" "CPU 0/TCG") c1=$(allowed "$qemu" "CPU 1/TCG")
[ "$c0.$c1" = "$all.$all" ] ||
	fail "--pin 1 for 2 vCPUs: CPU 0/TCG may run on '$c0', CPU 1/TCG on '$c1'; want $all"
ok "--pin 1 for 2 vCPUs: both vCPU threads keep cores $all"
finish "$out/short"
want='pin not applied, running unpinned: 2 vCPUs but 1 host core given (--pin 1)'
n=$(grep -cF "$want" "$out/short.stderr" || true)
[ "$n.$(grep -c ': pin' "$out/short.stderr")" = 1.1 ] ||
	fail "want exactly one line '$want' from the runner"
ok "one line: $(grep ': pin' "$out/short.stderr")"
"$LB_PY" - "$out/short/meta.json" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))
pin = meta["pin"]
if meta["state"] != "ok" or pin["applied"] or "1 host core given" not in pin.get("why", ""):
    print(f"FAIL: state {meta['state']}, meta.json pin {pin}")
    sys.exit(1)
print(f"ok: state ok; meta.json pin: {pin}")
PY
