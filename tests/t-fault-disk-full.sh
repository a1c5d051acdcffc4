#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A results disk that fills up: the run directory on a 2 MiB tmpfs (in a
# private mount namespace) and a job whose perf.data does not fit.  QEMU
# then blocks the guest's results port, which must not pass for a hang: the
# run stops within seconds with exit 17 and one line saying the results
# disk is full, no traceback, no "ok", no QEMU left, and the raw results
# stream kept.
#
# Usage: tests/t-fault-disk-full.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
if [ -z "${FT_IN_NS:-}" ]; then
	ns=(unshare --mount --propagation private)
	[ "$(id -u)" = 0 ] || ns=(unshare --user --map-root-user --mount --propagation private)
	exec "${ns[@]}" env FT_IN_NS=1 "$0" "$@"
fi
ft_init fault-disk-full

# The run directory is the tmpfs; the runner's own output is not on it.
mkdir -p "$out/run"
mount -t tmpfs -o size=2m lockbench-test "$out/run"
cat >"$out/big.job" <<'JOB'
lockbench-job v1
option perf_lock 1
point p1 read_pct=50 mailboxes=16 duration_ms=200
JOB
ft_boot "$out/run" "$out/big.job" --timeout 120 --silence 60
ft_rc_is 17
ft_verdict "$out/run" 'nospace: no space left on the results disk'
[ "$(echo "$ft_wall < 60" | bc)" = 1 ] || fail "took $ft_wall s: waited for the silence limit"
ok "stopped after ${ft_wall%.*} s, before the 60 s silence limit"
ft_no_qemu "$out/run"
[ -s "$out/run/results-stream.tar" ] || fail "the raw results stream was not kept"
ok "the raw results stream is kept: $(du -k "$out/run/results-stream.tar" | cut -f1) KiB"
if [ -f "$out/run/meta.json" ]; then
	ft_check "$out/run" --state nospace --exit 17 --lost p1
fi
