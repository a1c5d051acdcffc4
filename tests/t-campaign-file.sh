#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every bad campaign file in tests/campaigns/bad/ is refused by the
# campaign runner with exit 2 and one line naming the file and the
# problem (each file's first line, "# expect: ...", says which), and no
# results directory is made.  No kernel is needed: a campaign file is
# checked before anything is built or booted (./run.sh test --fast).
#
# Usage: tests/t-campaign-file.sh
# Needs: -

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/campaign-file
rm -rf "$out"
mkdir -p "$out"

for f in tests/campaigns/bad/*.toml; do
	want=$(sed -n '1s/^# expect: //p' "$f")
	rc=0
	msg=$(lb_py -m scripts.campaign "$f" --out "$out/never" 2>&1) || rc=$?
	case $msg in
	*"$f: "*"$want"*) ;;
	*) echo "FAIL: $f: want '$want', got: $msg"; exit 1 ;;
	esac
	if [ "$rc" != 2 ] || [ "$(echo "$msg" | wc -l)" != 1 ]; then
		echo "FAIL: $f: exit $rc, $msg"
		exit 1
	fi
	[ ! -e "$out/never" ] || { echo "FAIL: $f: created a results directory"; exit 1; }
done
echo "ok: $(find tests/campaigns/bad -name '*.toml' | wc -l) bad campaign files refused, one line each, exit 2"

