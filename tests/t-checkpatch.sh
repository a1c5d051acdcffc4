#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict on the series (0001, 0002 and the RCU patch 0003,
# the conversions ./run.sh convert wrote, and the test kernels' patches
# in tests/variants) and on the module, the
# fs_writer module, guest/inside/lockload and guest/meter/host_meter.
# The one remark allowed is "Unknown commit id
# '10d1a0028dc4'" in 0001 and 0003, which cite that commit: Debian's
# tarball has no git history to look it up in (docs/kernels.md, "checkpatch").
#
# Usage: tests/t-checkpatch.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cp=$LB_BUILD/src/linux-source-6.1/scripts/checkpatch.pl
# checkpatch's SPDX check needs Debian's python3 (python3-ply).
export PATH=/usr/bin:$PATH
cd "$LB_BUILD/src/linux-source-6.1"

n=0
# The tests' own kernels' patches (tests/variants) too: test code is code.
for p in "$LB_ROOT"/kernel-patches/0*.patch "$LB_ROOT"/tests/variants/0*.patch; do
	n=$((n + 1))
	out=$("$cp" --strict --terse --showfile "$p" || true)
	echo "$out"
	remarks=$(echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' |
		grep -vF "WARNING: Unknown commit id '10d1a0028dc4'" || true)
	[ -z "$remarks" ] || { echo "unexpected remarks in $(basename "$p")"; exit 1; }
	# --terse prints nothing at all for a clean patch.
	[ -z "$out" ] || echo "$out" | grep -q "total: 0 errors" || exit 1
done
ls "$LB_ROOT"/kernel-patches/0003-*.patch >/dev/null
[ "$n" -ge 3 ] || { echo "only $n patches checked"; exit 1; }
echo "ok: $n patches checkpatch --strict clean (but for the unknown commit id)"
# Exit 0 and no output: no error, warning or check (--terse is silent then).
for f in bench-module/mbox_bench.c bench-module/fs_writer.c bench-module/lat_hist.h \
	bench-module/results_out.h guest/inside/lockload/lockload.c guest/meter/host_meter.c; do
	rc=0
	out=$("$cp" --strict --terse --no-tree --file "$LB_ROOT/$f") || rc=$?
	echo "$out"
	if [ "$rc" != 0 ] || [ -n "$out" ]; then
		echo "$f: checkpatch --strict remarks (exit $rc)"
		exit 1
	fi
	echo "ok: $f checkpatch --strict clean"
done
