#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every variant's series (kernel-patches/variants/*.toml) applies, in
# order, to the pristine Debian tree; the seed's conversion,
# 0002-omap-mailbox-convert-rwlocks-to-spinlock.patch, changes exactly the
# lines commit 10d1a0028dc4 changed (the seed patch in ../shared/seeds), in
# one file, under the original author; every patch is signed off.  (Other
# 0002-* patches are ./run.sh convert's conversions of other locks, each
# the second patch of its own variant's series.)
#
# Usage: tests/t-series.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
repo=$LB_BUILD/src/linux-source-6.1
seed=$(ls "$LB_ROOT"/../shared/seeds/001-commit-10d1a0028dc4-*.patch)
kp=$LB_ROOT/kernel-patches

conv=$kp/0002-omap-mailbox-convert-rwlocks-to-spinlock.patch
# Apply to a scratch index built from the pristine tree: no checkout needed.
idx=$(mktemp)
trap 'rm -f "$idx"' EXIT
for v in $(lb_py -m scripts.variant list); do
	GIT_INDEX_FILE=$idx git -C "$repo" read-tree base
	n=0
	while read -r kind p; do
		[ "$kind" = patch ] || continue
		GIT_INDEX_FILE=$idx git -C "$repo" apply --cached "$p"
		n=$((n + 1))
	done < <(lb_py -m scripts.variant show "$v")
	echo "applies: $v ($n patches)"
done

changed() { # the -/+ lines of the diff, without headers and signature
	awk '/^diff --git/ { d = 1; next } /^-- $/ { d = 0 }
		d && /^[-+]/ && !/^(\+\+\+|---) / { print }' "$1"
}
diff <(changed "$seed") <(changed "$conv")
echo "0002 changes the seed's $(changed "$seed" | wc -l) lines and no others"
files=$(grep -c '^diff --git' "$conv")
[ "$files" = 1 ] || { echo "0002 touches $files files"; exit 1; }
grep -q '^From: Ohad Ben-Cohen <ohad@wizery.com>$' "$conv"
grep -q '^Subject: \[PATCH 2/2\] omap: mailbox: convert rwlocks to spinlock$' "$conv"
for p in "$kp"/0*.patch; do
	grep -q '^Signed-off-by: ' "$p" || { echo "$p: no Signed-off-by"; exit 1; }
done
echo "0002 keeps its author and subject; every patch is signed off"
