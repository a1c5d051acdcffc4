#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build faults, with the test-only variants of tests/faults/variants: a
# series with a patch that does not apply stops build-kernel.sh with exit 4
# and one line naming the patch; a patch that breaks the compile (a syntax
# error in init/version.c, compiled first) stops it with exit 5 and a last
# line naming build.log.  Neither leaves a build-meta.json, so the runner
# refuses the variant as not built (exit 3), and the "before" build is
# untouched.  Each fault variant gets its own worktree in build/ (1.5 GB),
# removed when the test ends so that the suite's disk stays bounded.  A
# new tree with too little disk free stops at once with exit 7 and one
# line (simulated by asking for more than the disk has).
#
# Usage: tests/t-fault-build.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-build
export LOCKBENCH_VARIANT_PATH=$FT_DIR/variants

before=$(sha256sum "$LB_BUILD/before/uImage" "$LB_BUILD/before/build-meta.json")
drop_trees() {
	rm -rf "$LB_BUILD/fault-badpatch" "$LB_BUILD/fault-buildfail"
	git -C "$LB_BUILD/src/linux-source-6.1" worktree prune
}
trap drop_trees EXIT
drop_trees

echo "== too little disk for a new tree"
rc=0
LOCKBENCH_TREE_MB=$((1 << 40)) scripts/build-kernel.sh fault-badpatch \
	>"$out/disk.out" 2>"$out/disk.err" || rc=$?
sed 's/^/    | /' "$out/disk.err"
[ $rc = 7 ] || fail "exit $rc, want 7"
ft_one_line "$out/disk.err" "^build: [0-9]+ MB free in $LB_BUILD, a new kernel tree needs [0-9]+ MB: .*"
[ ! -e "$LB_BUILD/fault-badpatch/src" ] || fail "a tree was made anyway"
ok "exit 7, one line, no tree"

echo "== a patch that does not apply"
rc=0
scripts/build-kernel.sh fault-badpatch >"$out/badpatch.out" 2>"$out/badpatch.err" || rc=$?
sed 's/^/    | /' "$out/badpatch.err"
[ $rc = 4 ] || fail "exit $rc, want 4"
ft_one_line "$out/badpatch.err" \
	"^build: patch 0901-fault-test-a-patch-that-does-not-apply.patch does not apply .*: see $LB_BUILD/fault-badpatch/am.log$"
grep -q 'patch does not apply' "$LB_BUILD/fault-badpatch/am.log" || fail "am.log does not say why"
ok "exit 4, one line naming the patch and am.log"

echo "== a build that fails"
rc=0
scripts/build-kernel.sh fault-buildfail >"$out/buildfail.out" 2>"$out/buildfail.err" || rc=$?
sed 's/^/    | /' "$out/buildfail.err"
[ $rc = 5 ] || fail "exit $rc, want 5"
! grep -q Traceback "$out/buildfail.err" || fail "a traceback"
last=$(tail -n 1 "$out/buildfail.err")
[ "$last" = "build: kernel build of variant fault-buildfail failed: see $LB_BUILD/fault-buildfail/build.log" ] ||
	fail "last line: $last"
grep -q "init/version.c:.*error" "$LB_BUILD/fault-buildfail/build.log" || fail "build.log lacks the error"
ok "exit 5, last line names build.log (the compiler's error is above it)"

for v in fault-badpatch fault-buildfail; do
	[ ! -e "$LB_BUILD/$v/build-meta.json" ] || fail "$v has a build-meta.json"
	rc=0
	lb_py -m guest.run_guest "$v" --dry-run 2>"$out/$v-boot.err" || rc=$?
	[ $rc = 3 ] || fail "boot $v: exit $rc, want 3"
	ft_one_line "$out/$v-boot.err" "^boot: variant '$v' is not built .*: run ./run.sh build $v$"
	ok "boot $v: refused as not built: $(cat "$out/$v-boot.err")"
done
[ "$(sha256sum "$LB_BUILD/before/uImage" "$LB_BUILD/before/build-meta.json")" = "$before" ] ||
	fail "the before build changed"
ok "the before build is untouched"
