#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest that hangs (the module spins with a spinlock held, preemption off,
# after the first point) is killed by the silence limit well within the
# wall-clock limit: exit 10, meta.json state "hung", one clear verdict line,
# no QEMU left, and the point finished before the hang brought back intact.
#
# Usage: tests/t-fault-hang.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-hang

timeout=60
silence=15 # below the 21 s RCU stall timeout: the stall report is not needed
ft_job "$out/hang.job" hang
ft_boot "$out/run" "$out/hang.job" --timeout "$timeout" --silence "$silence"
ft_rc_is 10
ft_verdict "$out/run" '^boot: before c2: hung: 1/2 points'
ft_no_qemu "$out/run"
grep -q 'lockbench: injecting hang' "$out/run/console.log" || fail "the hang was not injected"
ft_check "$out/run" --state hung --exit 10 --done p1 --lost p2 \
	--problem "no console output or results for $silence s" --max-wall "$timeout"
[ "$(echo "$ft_wall < $timeout + 10" | bc)" = 1 ] || fail "the runner took $ft_wall s"
ok "the runner returned after ${ft_wall%.*} s, the limit is $timeout s"
