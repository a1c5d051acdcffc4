#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel WARNING (the module's WARN() after the first point) makes the run
# exit 14, meta.json state "warning", with the WARNING line in meta.json
# problems; the guest goes on, so both points come back intact.
#
# Usage: tests/t-fault-warn.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-warn

ft_job "$out/warn.job" warn
ft_boot "$out/run" "$out/warn.job" --timeout 120 --silence 30
ft_rc_is 14
ft_verdict "$out/run" '^boot: before c2: warning: 2/2 points'
ft_no_qemu "$out/run"
ft_check "$out/run" --state warning --exit 14 --done p1 p2 --problem 'WARNING:'
