#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict on the series and on the module.  The one remark
# allowed is 0001's "Unknown commit id '10d1a0028dc4'": Debian's tarball has
# no git history to look the commit up in (README.md, "checkpatch").
#
# Usage: tests/t-checkpatch.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cp=$LB_BUILD/src/linux-source-6.1/scripts/checkpatch.pl
# checkpatch's SPDX check needs Debian's python3 (python3-ply).
export PATH=/usr/bin:$PATH
cd "$LB_BUILD/src/linux-source-6.1"

for p in "$LB_ROOT"/kernel-patches/0*.patch; do
	out=$("$cp" --strict --terse --showfile "$p" || true)
	echo "$out"
	remarks=$(echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' |
		grep -vF "WARNING: Unknown commit id '10d1a0028dc4'" || true)
	[ -z "$remarks" ] || { echo "unexpected remarks in $(basename "$p")"; exit 1; }
	echo "$out" | grep -q "total: 0 errors" || exit 1
done
out=$("$cp" --strict --terse --no-tree --file "$LB_ROOT"/bench-module/mbox_bench.c || true)
echo "$out"
echo "$out" | grep -qx '.*total: 0 errors, 0 warnings, 0 checks, [0-9]* lines checked'
