#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ./run.sh convert, for real, on the "before" tree of linux-source-6.1:
#   1. mboxes_lock: exactly the ten changed lines of the seed commit
#      10d1a0028dc4 (as kernel-patches/0002 carries them), a patch that
#      applies to the tree and is checkpatch --strict clean, and a
#      variant file that variant.py reads with that patch last and
#      converts = ["mboxes_lock"] (before's converts, none, plus the lock);
#   2. the three live targets of 6.1 (file_systems_lock, binfmt_lock,
#      proc_subdir_lock): converted whole, no rwlock call left, clean,
#      and the same changed lines as the shipped kernel-patches/0002-*
#      that tests/t-targets.sh builds and boots, and the variant file the
#      same as the shipped kernel-patches/variants/spin-*.toml (converts
#      included);
#   2b. tasklist_lock, a global lock named in 28 files: converted in 27
#      (ia64's read_trylock left out with --skip), the files listed, the
#      changelog counting each file's readers and writers, the same as the
#      shipped kernel-patches/0002-kernel-fork-* and spin-tasklist-lock;
#   3. refused, exit 2 and one line naming the file (and line): a global
#      lock with a read_trylock in one of its files (tasklist_lock without
#      --skip), a file the base kernel does not build (binfmt_misc.c: its
#      option and the fragment; net/core/dev.c: --base before-net;
#      scsi_debug.c: its option's Kconfig dependency), a use with no
#      spinlock twin (the lock's address stored: tests/variants/addr),
#      a name that is not an rwlock, a path outside the tree, a missing file, a LOCK
#      that is not an identifier; and calibrate of a workload whose path
#      before cannot have (/sys/class/net: CONFIG_NET), before a boot;
#   4. --workload (issue #30): resource_lock (kernel/resource.c) with the
#      generic workload 'read /proc/iomem' and --locks-per-op 2 (what
#      ./run.sh calibrate measures: tests/t-lockload.sh; given here, so
#      that nothing boots) writes the target file into DIR/targets and a
#      campaign into DIR/campaigns that the campaign loader reads with
#      --variants DIR (locks_per_op filled in from the target), and the
#      next steps name that campaign; a workload that is not generic or
#      not well formed, a bad K, or K without a workload: exit 2, one
#      line, nothing written.
# The tree's checkout is never touched (the commit is made on a
# throwaway index): its status is the same before and after.
#
# Usage: tests/t-convert.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init convert
# checkpatch.pl, run in the pristine tree as tests/t-checkpatch.sh runs
# it (its SPDX check needs Debian's python3, python3-ply).
checkpatch() {
	(cd "$LB_BUILD/src/linux-source-6.1" || exit
	PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict "$1" 2>&1) || true
}
tree=$LB_BUILD/before/src
[ -d "$tree" ] || fail "no before tree in $tree: build it first (./run.sh build before)"
status0=$(git -C "$tree" status --porcelain | sha256sum)
head0=$(git -C "$tree" rev-parse HEAD)

# 1. The seed's conversion.
./run.sh convert --out "$out/seed" drivers/mailbox/omap-mbox-registry.c mboxes_lock \
	>"$out/seed.log" 2>&1 || { cat "$out/seed.log"; fail "convert mboxes_lock failed"; }
p=$(ls "$out"/seed/0002-*.patch)
diff <(grep -E '^[-+][^-+]' "$p") \
	<(grep -E '^[-+][^-+]' kernel-patches/0002-omap-mailbox-convert-rwlocks-to-spinlock.patch) ||
	fail "the generated patch's changed lines are not the seed's (diff above)"
[ "$(grep -cE '^-[^-]' "$p").$(grep -cE '^\+[^+]' "$p")" = 10.10 ] || fail "not 10 lines out, 10 in"
ok "mboxes_lock: the seed's ten changed lines, $(basename "$p")"
git -C "$tree" apply --check "$p" || fail "$(basename "$p") does not apply to the before tree"
cpout=$(checkpatch "$p")
grep -q '^total: 0 errors, 0 warnings, 0 checks' <<<"$cpout" || { echo "$cpout"; fail "checkpatch --strict is not clean"; }
grep -q '^Signed-off-by: ' "$p" || fail "no Signed-off-by"
ok "applies to the before tree; checkpatch --strict clean; signed off"
spec=$(LOCKBENCH_VARIANT_PATH=$out/seed lb_py -m scripts.variant show spin-mboxes-lock)
[ "$(grep '^patch ' <<<"$spec" | tail -n 1 | xargs -n1 basename | tail -n 1)" = "$(basename "$p")" ] ||
	fail "variant spin-mboxes-lock does not end with the new patch: $spec"
[ "$(grep -c '^patch ' <<<"$spec")" = 2 ] || fail "want before's patch and the new one: $spec"
ok "variant spin-mboxes-lock: before's series + $(basename "$p")"
grep -qx 'converts mboxes_lock' <<<"$spec" || fail "spin-mboxes-lock does not convert mboxes_lock: $spec"
grep -qxF 'converts = ["mboxes_lock"]' "$out/seed/spin-mboxes-lock.toml" ||
	fail "spin-mboxes-lock.toml: no converts = [\"mboxes_lock\"]: $(cat "$out/seed/spin-mboxes-lock.toml")"
ok "variant spin-mboxes-lock: converts = [\"mboxes_lock\"]"
# It ends with the next steps, naming the variant and the --out folder
# (from the repository's root when it is inside it, as the suite's is).
seed=$(cd "$out/seed" && pwd)
seed=${seed#"$LB_ROOT"/}
grep -qxF "  ./run.sh build --variants $seed spin-mboxes-lock" "$out/seed.log" ||
	fail "no build command for spin-mboxes-lock with --variants $seed: $(cat "$out/seed.log")"
grep -qF "./run.sh campaign --variants $seed my-spin-mboxes-lock.toml" "$out/seed.log" ||
	fail "no campaign command with --variants $seed: $(cat "$out/seed.log")"
ok "ends with the next steps: build and campaign with --variants $seed"

# 2. The live targets.
for t in "fs/filesystems.c file_systems_lock" "fs/exec.c binfmt_lock" "fs/proc/generic.c proc_subdir_lock"; do
	read -r f l <<<"$t"
	./run.sh convert --out "$out/live" "$f" "$l" >"$out/live.log" 2>&1 ||
		{ cat "$out/live.log"; fail "convert $l failed"; }
	p=$(grep -l "^+++ b/$f\$" "$out"/live/0002-*.patch | head -n 1)
	[ -n "$p" ] || fail "no patch changes $f"
	! grep -E '^\+.*(read|write)_(un)?lock' "$p" || fail "$l: an rwlock call left in"
	n=$(grep -cE '^-[^-]' "$p")
	if [ "$n" -lt 4 ] || [ "$n" != "$(grep -cE '^\+[^+]' "$p")" ]; then
		fail "$l: $n lines out, not as many in"
	fi
	grep -q "^+static DEFINE_SPINLOCK($l);" "$p" || fail "$l: the definition is not converted"
	checkpatch "$p" | grep -q '^total: 0 errors, 0 warnings, 0 checks' ||
		fail "$l: checkpatch --strict is not clean"
	# The suite builds and boots the shipped patch (tests/t-targets.sh):
	# it must be what convert writes today.
	shipped=$(grep -l "^+++ b/$f\$" kernel-patches/0002-*.patch | head -n 1)
	diff <(grep -E '^[-+][^-+]' "$p") <(grep -E '^[-+][^-+]' "$shipped") ||
		fail "$l: kernel-patches/$(basename "$shipped") is not what convert writes (diff above)"
	ok "$l ($f): $n lines converted, clean, the same as kernel-patches/$(basename "$shipped")"
	# And the variant file, converts = ["$l"] included.
	v=spin-${l//_/-}.toml
	diff "$out/live/$v" "kernel-patches/variants/$v" ||
		fail "$l: kernel-patches/variants/$v is not what convert writes (diff above)"
	ok "$l: the variant file is kernel-patches/variants/$v, converts = [\"$l\"]"
done

# 2b. tasklist_lock, the article's lock: global, named in 28 files; ia64's
# read_trylock left out (--skip: before does not build it).  The result is
# the shipped kernel-patches/0002-kernel-fork-* that tests/t-tasklist.sh
# builds and boots.
./run.sh convert --out "$out/tl" --skip arch/ia64/kernel/mca.c kernel/fork.c tasklist_lock \
	>"$out/tl.log" 2>&1 || { cat "$out/tl.log"; fail "convert tasklist_lock failed"; }
p=$(ls "$out"/tl/0002-*.patch)
shipped=kernel-patches/0002-kernel-fork-convert-tasklist_lock-to-a-spinlock.patch
diff <(grep -E '^[-+][^-+]' "$p") <(grep -E '^[-+][^-+]' "$shipped") ||
	fail "tasklist_lock: $shipped is not what convert writes (diff above)"
n=$(grep -c '^+++ b/' "$p")
[ "$n" = 27 ] || fail "tasklist_lock: $n files changed, want 27"
grep -qE '^\+\+\+ b/include/linux/sched/task\.h$' "$p" || fail "the header's extern is not converted"
! grep -E '^\+.*\b(read|write)_(lock|unlock|trylock)[a-z_]*\(&tasklist_lock' "$p" || fail "an rwlock call left in"
grep -q '^convert: 27 files touched: kernel/fork.c ' "$out/tl.log" || fail "the files touched are not listed: $(cat "$out/tl.log")"
grep -qx 'convert: left out (--skip): arch/ia64/kernel/mca.c' "$out/tl.log" || fail "the --skip is not said"
grep -q '^  kernel/exit.c: 3 readers, 4 writers$' "$p" || fail "the changelog does not count kernel/exit.c's readers and writers"
grep -q '^  kernel/pid_namespace.c: 3 readers (not built)$' "$p" || fail "the changelog does not mark an unbuilt file"
sed -n '/^Generated by/,/^Signed-off-by/p' "$p" | tr -d '\\\n' | tr -s ' ' |
	grep -qF -- "./run.sh convert --out $out/tl --skip arch/ia64/kernel/mca.c kernel/fork.c tasklist_lock" ||
	fail "the Generated by line is not the whole command: $(sed -n '/^Generated by/,/^Signed-off-by/p' "$p")"
checkpatch "$p" | grep -q '^total: 0 errors, 0 warnings, 0 checks' || fail "tasklist_lock: checkpatch --strict is not clean"
diff "$out/tl/spin-tasklist-lock.toml" kernel-patches/variants/spin-tasklist-lock.toml ||
	fail "tasklist_lock: kernel-patches/variants/spin-tasklist-lock.toml is not what convert writes"
ok "tasklist_lock: 27 files, the shipped $(basename "$shipped") and variant, clean, ia64 left out and said"

# 3. Refusals.
refused() { # WANT_RE ARGS...: exit 2, one line, matching WANT_RE
	local want=$1 rc=0
	shift
	./run.sh convert --out "$out/refused" "$@" >"$out/r.out" 2>"$out/r.err" || rc=$?
	local msg
	# (build: lines are the tree's; "is global: running" the progress
	# of a conversion across many files)
	msg=$(grep -v -e '^build:' -e '^convert: [a-z_0-9]* is global: running the semantic patch' \
		-e '^convert: configuring [a-z0-9_-]* (tinyconfig' "$out/r.err" || true)
	if [ "$rc" != 2 ] || [ "$(wc -l <<<"$msg")" != 1 ] || ! grep -qE "$want" <<<"$msg"; then
		fail "convert $*: rc $rc, want 2 and one line matching '$want': $msg"
	fi
	[ ! -e "$out/refused" ] || fail "convert $* wrote $(ls "$out/refused")"
	ok "refused: $msg"
}
# A global lock: every file that names it is converted, and a line the
# semantic patch cannot express refuses the whole, naming it (ia64's
# read_trylock; the hint: --skip, for a file the base does not build).
refused '^convert: arch/ia64/kernel/mca\.c:[0-9]+: if \(read_trylock\(&tasklist_lock\)\) \{: read_trylock has no spinlock twin .*--skip arch/ia64/kernel/mca\.c leaves it out' \
	kernel/fork.c tasklist_lock
refused '^convert: --skip kernel/exit\.c: before builds it, so a patch that leaves it out would not compile there' \
	--skip kernel/exit.c kernel/fork.c tasklist_lock
# A file the base kernel does not build: the option, and what adds it.
refused '^convert: fs/binfmt_misc\.c is not built into before: it needs CONFIG_BINFMT_MISC=y, from fs/Makefile:[0-9]+: obj-\$\(CONFIG_BINFMT_MISC\) \+= binfmt_misc\.o; a base variant with configs = \["mbox-registry\.config", "lockstat\.config", "binfmt-misc\.config"\] builds it' \
	fs/binfmt_misc.c entries_lock
refused '^convert: net/core/dev\.c is not built into before: it needs CONFIG_NET=y, from Kbuild:[0-9]+: obj-\$\(CONFIG_NET\) \+= net/; --base before-net builds it \(its fragment net\.config\)$' \
	net/core/dev.c dev_base_lock
refused 'is not an rwlock there' drivers/mailbox/omap-mbox-registry.c mbox_configured
refused 'not .\.\./' ../kernel/fork.c tasklist_lock
refused 'no such file' fs/no-such-file.c x_lock
refused 'must be a C identifier' fs/exec.c 'binfmt_lock;rm'
# A driver the base leaves out: the option, with its Kconfig dependency.
refused '^convert: drivers/scsi/scsi_debug\.c is not built into before: it needs CONFIG_SCSI_DEBUG=y \(Kconfig: depends on SCSI\), from drivers/scsi/Makefile:[0-9]+: obj-\$\(CONFIG_SCSI_DEBUG\) \+= scsi_debug\.o; write a fragment' \
	drivers/scsi/scsi_debug.c atomic_rw
# A use with no spinlock twin: the lock's address stored (6.1's one
# such rwlock, scsi_debug's atomic_rw, is in a driver no base builds, so
# the test variant "addr" plants one in the registry; only its tree is
# made).
ln=$(($(grep -n '^static DEFINE_RWLOCK(mboxes_lock);$' "$tree/drivers/mailbox/omap-mbox-registry.c" | cut -d: -f1) + 6))
LOCKBENCH_VARIANT_PATH=$LB_ROOT/tests/variants refused \
	"^convert: drivers/mailbox/omap-mbox-registry\.c:$ln: static rwlock_t \*mboxes_lock_addr __maybe_unused = &mboxes_lock;: mboxes_lock's address is passed or stored" \
	--base addr drivers/mailbox/omap-mbox-registry.c mboxes_lock
rm -rf "$LB_BUILD/addr"
git -C "$LB_BUILD/src/linux-source-6.1" worktree prune

# A workload whose path the base kernel cannot have: calibrate refuses
# it before a boot, naming the option and the fragment.
rc=0
./run.sh calibrate --lock dev_base_lock 'read /sys/class/net/lo/mtu' >"$out/cal.out" 2>"$out/cal.err" || rc=$?
if [ "$rc" != 2 ] || [ "$(wc -l <"$out/cal.err")" != 1 ] ||
	! grep -qxF 'calibrate: before: /sys/class/net/lo/mtu does not exist in its guest: it needs CONFIG_NET (kernel-patches/configs/net.config)' "$out/cal.err"; then
	fail "calibrate of a path before lacks: rc $rc: $(cat "$out/cal.err")"
fi
ok "refused: $(cat "$out/cal.err")"

# 4. --workload: the target file and a campaign of it.
./run.sh convert --out "$out/wl" --workload 'read /proc/iomem' --locks-per-op 2 \
	kernel/resource.c resource_lock >"$out/wl.log" 2>&1 || { cat "$out/wl.log"; fail "convert --workload failed"; }
t=$out/wl/targets/resource_lock.toml
grep -qxF 'workloads = ["read /proc/iomem"]' "$t" || fail "$t: no workloads = [\"read /proc/iomem\"]: $(cat "$t")"
grep -qxF '"read /proc/iomem" = 2' "$t" || fail "$t: no locks_per_op of 2: $(cat "$t")"
wl=$(cd "$out/wl" && pwd)
wl=${wl#"$LB_ROOT"/}
grep -qxF "  ./run.sh campaign --variants $wl $wl/campaigns/my-spin-resource-lock.toml --dry-run   # then without --dry-run (1 vCPU under icount, 3 boots a side; 2 vCPUs, 6)" "$out/wl.log" ||
	fail "the next steps do not name the campaign: $(cat "$out/wl.log")"
got=$(LOCKBENCH_VARIANT_PATH=$out/wl lb_py -c '
import sys
from scripts.campaign import file as campaign_file
c = campaign_file.load(sys.argv[1])
p = c["points"][0]
print(c["lock_class"], c["variants"][1], p["workload"], p["locks_per_op"])' "$out/wl/campaigns/my-spin-resource-lock.toml")
[ "$got" = "resource_lock spin-resource-lock read:/proc/iomem 2" ] || fail "the written campaign loads as: $got"
ok "--workload 'read /proc/iomem' --locks-per-op 2: targets/resource_lock.toml, a campaign that loads ($got), named in the next steps"
refused "^convert: --workload 'proc_lookup': not a generic workload" --workload proc_lookup kernel/resource.c resource_lock
refused "^convert: workload='read /proc/x y' is not one of" --workload 'read /proc/x y' kernel/resource.c resource_lock
refused "^convert: --locks-per-op '0': want an integer in 1\.\.1000" --workload 'read /proc/iomem' --locks-per-op 0 kernel/resource.c resource_lock
refused "^convert: --locks-per-op and --lock-class go with --workload" --locks-per-op 2 kernel/resource.c resource_lock

if [ "$(git -C "$tree" rev-parse HEAD)" != "$head0" ] ||
	[ "$(git -C "$tree" status --porcelain | sha256sum)" != "$status0" ]; then
	fail "the before tree changed"
fi
ok "the before tree's checkout is as it was"
