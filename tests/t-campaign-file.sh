#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every bad campaign file in tests/campaigns/bad/ is refused by the
# campaign runner with exit 2 and one line naming the file and the
# problem (each file's first line, "# expect: ...", says which), and no
# run directory is made.  No kernel is needed: a campaign file is
# checked before anything is built or booted (./run.sh test --fast).
# An unknown key's line lists every allowed key and docs/campaigns.md; an
# unknown variant's says how to add a folder (--variants DIR).
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
	[ ! -e "$out/never" ] || { echo "FAIL: $f: created a run directory"; exit 1; }
done
echo "ok: $(find tests/campaigns/bad -name '*.toml' | wc -l) bad campaign files refused, one line each, exit 2"


# An unknown key names every allowed key and the reference; an unknown
# variant says how to add a folder of variants.
refused() { # TOML WANT...: refused with exit 2, one line holding each WANT
	local f=$out/$1 rc=0 msg
	shift
	msg=$(lb_py -m scripts.campaign "$f" --dry-run 2>&1) || rc=$?
	if [ "$rc" != 2 ] || [ "$(echo "$msg" | wc -l)" != 1 ]; then
		echo "FAIL: $f: exit $rc, $msg"
		exit 1
	fi
	for w in "$@"; do
		case $msg in
		*"$w"*) ;;
		*) echo "FAIL: $f: want '$w', got: $msg"; exit 1 ;;
		esac
	done
}
head='name = "x"
variants = ["before", "after"]
cpus = [2]
repetitions = 2'
printf '%s\n[[points]]\nid = "p"\nread_pct = 5\nmailboxes = 4\ncolour = 1\n' "$head" >"$out/point-key.toml"
refused point-key.toml "unknown key 'colour' (allowed: id, workload, primary_metric, read_pct," \
	"writer_hz, locks_per_op): see docs/campaigns.md"
printf '%s\ncolour = 1\n[[points]]\nid = "p"\nread_pct = 5\nmailboxes = 4\n' "$head" >"$out/top-key.toml"
refused top-key.toml "unknown key 'colour' (allowed: name, description," "points): see docs/campaigns.md"
sed 's/"after"/"nosuch"/' "$out/top-key.toml" | grep -v colour >"$out/variant.toml"
refused variant.toml "unknown variant 'nosuch'" "--variants DIR" "LOCKBENCH_VARIANT_PATH"
echo "ok: an unknown key lists every allowed key and docs/campaigns.md; an unknown variant, --variants DIR"

# A variant of a --variants folder that converts a lock no target names
# (./run.sh convert --out DIR kernel/resource.c resource_lock): module
# points drive mboxes_lock, the same rwlock in both kernels.
mkdir -p "$out/vars"
printf '%s\n' 'description = "resource_lock as a spinlock (on before)"' \
	'patches = ["0001-mailbox-add-the-2.6.34-OMAP-mailbox-name-registry-fo.patch"]' \
	'configs = ["mbox-registry.config", "lockstat.config"]' \
	'converts = ["resource_lock"]' >"$out/vars/spin-resource-lock.toml"
sed 's/"after"/"spin-resource-lock"/' "$out/top-key.toml" | grep -v colour >"$out/resource.toml"
rc=0
msg=$(lb_py -m scripts.campaign "$out/resource.toml" --variants "$out/vars" --dry-run 2>&1) || rc=$?
want="$out/resource.toml: variants: compared variants before and spin-resource-lock differ in the converted lock resource_lock, which none of the campaign's points drives (their workloads: module); no workload ships for resource_lock"
case $msg in
"campaign: $want"*"see docs/targets.md") ;;
*) echo "FAIL: resource.toml: want '$want ... see docs/targets.md', got: $msg"; exit 1 ;;
esac
if [ "$rc" != 2 ] || [ "$(echo "$msg" | wc -l)" != 1 ]; then
	echo "FAIL: resource.toml: exit $rc, $msg"
	exit 1
fi
echo "ok: a converted lock no point drives is refused, naming the pair, the lock and its workloads"
