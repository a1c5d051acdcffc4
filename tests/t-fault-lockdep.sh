#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A lockdep report (the module takes two locks A-B then B-A after the first
# point) makes the run exit 13, meta.json state "lockdep", with lockdep's
# line kept in meta.json problems and console.log; the point finished before
# it is intact.
#
# Usage: tests/t-fault-lockdep.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-lockdep

ft_job "$out/lockdep.job" lockdep
ft_boot "$out/run" "$out/lockdep.job" --timeout 120 --silence 30
ft_rc_is 13
ft_verdict "$out/run" '^boot: before c2: lockdep: '
ft_no_qemu "$out/run"
ft_check "$out/run" --state lockdep --exit 13 --done p1 \
	--problem 'possible circular locking dependency'
grep -q 'possible circular locking dependency detected' "$out/run/console.log" ||
	fail "console.log lacks lockdep's report"
grep -q 'mbox_bench' "$out/run/console.log" || fail "console.log lacks the module"
ok "console.log keeps lockdep's report"
