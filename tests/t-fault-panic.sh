#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel panic (sysrq-c after the first point) ends the run with exit 11,
# meta.json state "panic" and the panic line among its problems, no QEMU
# left, and the point finished before the panic brought back intact.
#
# Usage: tests/t-fault-panic.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-panic

ft_job "$out/panic.job" panic
ft_boot "$out/run" "$out/panic.job" --timeout 120 --silence 30
ft_rc_is 11
ft_verdict "$out/run" '^boot: before c2: panic: 1/2 points'
ft_no_qemu "$out/run"
ft_check "$out/run" --state panic --exit 11 --done p1 --lost p2 \
	--problem 'Kernel panic - not syncing'
