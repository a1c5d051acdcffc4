#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# QEMU killed from outside (SIGKILL while the second point runs): the run
# exits 16, meta.json state "killed" (never "ok"), and the point finished
# before the kill is brought back intact.
#
# Usage: tests/t-fault-qemu-killed.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-qemu-killed

# p2 runs 3 s, so that the kill lands in it.
ft_job "$out/kill.job" none 3000
PYTHONPATH=$LB_ROOT "$LB_PY" -m guest.run_guest before --cpus 2 --job "$out/kill.job" --out "$out/run" \
	>"$out/run.stdout" 2>"$out/run.stderr" &
runner=$!
qemu=$(ft_qemu_pid "$out/run")
ft_wait_for "$out/run/console.log" 'lockbench: point p2 start' 90
kill -KILL "$qemu"
ok "sent SIGKILL to QEMU (pid $qemu) while p2 ran"
ft_rc=0
wait "$runner" || ft_rc=$?
ft_wall=0
sed 's/^/    | /' "$out/run.stderr" "$out/run.stdout"
ft_rc_is 16
ft_verdict "$out/run" '^boot: before c2: killed: 1/2 points'
ft_no_qemu "$out/run"
ft_check "$out/run" --state killed --exit 16 --done p1 --lost p2 \
	--problem 'QEMU died from signal 9'
