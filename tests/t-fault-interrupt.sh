#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The runner itself interrupted: SIGINT while the second point runs, SIGTERM
# while the guest boots, and SIGTERM before QEMU even started each end with
# exit 130, state "interrupted" in meta.json (when the guest had started),
# no traceback and no QEMU left; the point finished before SIGINT is kept.
# SIGKILL to the runner leaves no orphan QEMU either (PR_SET_PDEATHSIG),
# nor its scratch initrd once the guest has started.
#
# Usage: tests/t-fault-interrupt.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-interrupt

ft_job "$out/int.job" none 3000

# start NAME: the runner in the background, pid in $runner.
start() {
	PYTHONPATH=$LB_ROOT "$LB_PY" -m guest.run_guest before --cpus 2 --job "$out/int.job" --out "$out/$1" \
		>"$out/$1.stdout" 2>"$out/$1.stderr" &
	runner=$!
}

# finish NAME: wait for the runner; sets ft_rc.
finish() {
	ft_rc=0
	wait "$runner" || ft_rc=$?
	ft_wall=0
	sed 's/^/    | /' "$out/$1.stderr" "$out/$1.stdout"
}

echo "== SIGINT while p2 runs"
start int
ft_wait_for "$out/int/console.log" 'lockbench: point p2 start' 90
kill -INT "$runner"
finish int
ft_rc_is 130
ft_verdict "$out/int" '^boot: before c2: interrupted: 1/2 points'
ft_no_qemu "$out/int"
ft_check "$out/int" --state interrupted --exit 130 --done p1 --lost p2 \
	--problem 'harness got SIGINT'

echo "== SIGTERM while the guest boots"
start term
ft_qemu_pid "$out/term" >/dev/null
kill -TERM "$runner"
finish term
ft_rc_is 130
ft_verdict "$out/term" '^boot: before c2: interrupted: 0/2 points'
ft_no_qemu "$out/term"
ft_check "$out/term" --state interrupted --exit 130 --lost p1 p2 --problem 'harness got SIGTERM'

echo "== SIGTERM as soon as the run directory exists (before or just after QEMU starts)"
start early
ft_wait_for "$out/early/job.conf" '' 30
kill -TERM "$runner"
finish early
ft_rc_is 130
ft_verdict "$out/early" 'interrupted'
ft_no_qemu "$out/early"

echo "== SIGKILL to the runner once the guest talks"
start kill9
qemu=$(ft_qemu_pid "$out/kill9")
ft_wait_for "$out/kill9/console.log" . 60
initrd=$(sed -n 's/.* -initrd \([^ ]*\) .*/\1/p' "$out/kill9/qemu-cmd")
[ -n "$initrd" ] || fail "no -initrd in $out/kill9/qemu-cmd"
kill -KILL "$runner"
wait "$runner" 2>/dev/null || true
ft_no_qemu "$out/kill9"
# Dead or a zombie waiting for its new parent to reap it.
st=$(ps -o stat= -p "$qemu" || true)
[ -z "$st" ] || [ "${st#Z}" != "$st" ] || fail "QEMU $qemu outlived its killed runner ($st)"
ok "QEMU died with its runner"
[ ! -e "$initrd" ] || fail "the 21 MB scratch initrd $initrd was left behind"
ok "no scratch initrd left behind"
