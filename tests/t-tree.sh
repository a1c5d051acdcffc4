#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernels from a developer's own git tree, and bisection (issues #29,
# #39), on real kernels of both tested versions.  A tree cloned from an
# extracted Debian tree (objects hard-linked) gets a line of
# documentation (d0: no mailbox registry), the registry (tag good) and a
# series of 8 commits on top: 7 lines of documentation and, 5th, a 5 us
# udelay() inside mboxes_lock's read side.
#
# On a 6.1 tree, ./run.sh build --tree T d0 good must build d0 from
# before's objects with patch 0001 added, good from d0's (the nearest:
# the same sources), both to before's very Image and module (the same
# sources: the donor's objects, stamped, then the commit checked out
# over them), rebuild nothing the second time, and refuse a dirty tree
# and a missing ref with one line, exit 2.
#
# On a 6.12 tree, the same build starts from before@6.12's objects (never
# a 6.1 build's) to before@6.12's Image; ./run.sh bisect --tree T good
# HEAD with tests/campaigns/bisect.toml (1 vCPU under icount, 3 boots a
# side, the A/A control) must name the 5th commit, in at most 4 steps
# (BAD's check included) and one confirmation against its parent, each
# step's class what its commit is, each in log.txt, each boot booted
# once (the steps take the icount boots earlier steps ran: 21 boots for
# 45 planned); a step's commit block must name both commits.  A commit
# that says it is Linux 6.13 (an untested version) is built anyway,
# from 6.12's objects, with one warning line naming the tested ones.
# Nothing may be written into either tree.
#
# Usage: tests/t-tree.sh
# Needs: before before@6.12

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
out=${LB_TEST_OUT:-$(mktemp -d)}/tree
rm -rf "$out"
mkdir -p "$out"
fail() {
	echo "t-tree: $*" >&2
	exit 1
}

# The trees: fixed dates, so that their commit ids are the same every run.
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.org GIT_COMMITTER_NAME=dev \
	GIT_COMMITTER_EMAIL=dev@example.org GIT_AUTHOR_DATE=2026-01-01T00:00:00Z \
	GIT_COMMITTER_DATE=2026-01-01T00:00:00Z

# make_tree VERSION DIR: a clone of VERSION's Debian repository with d0,
# good and the 8 commits.  Sparse: the files the test edits and the
# series touches (the rest of the 1.2 GB checkout would only cost the
# suite time; kernel_tree.py reads commits, not the work tree, and a
# sparse tree is still a git tree).
make_tree() {
	local t=$2 i reg
	git clone -q --no-checkout "$LB_BUILD/src/linux-source-$1" "$t"
	git -C "$t" sparse-checkout set --cone Documentation/locking drivers/mailbox include/linux
	git -C "$t" checkout -q
	echo "A line of the developer's own." >>"$t/Documentation/locking/spinlocks.rst"
	git -C "$t" commit -q -am "Documentation: locking: a line"
	git -C "$t" tag d0
	git -C "$t" am -q "$LB_ROOT"/kernel-patches/0001-*.patch
	git -C "$t" tag good
	reg=$t/drivers/mailbox/omap-mbox-registry.c
	for i in 1 2 3 4 5 6 7 8; do
		if [ $i = 5 ]; then
			sed -i 's|^#include <linux/err.h>$|#include <linux/delay.h>\n&|' "$reg"
			sed -i 's|^\tmbox = \*(find_mboxes(name));$|&\n\tudelay(5);|' "$reg"
			grep -q 'udelay(5);' "$reg" || fail "the slowdown was not planted"
			git -C "$t" commit -q -am "mailbox: omap-mbox-registry: wait 5 us in lookups (test only)"
		else
			echo "Line $i of the developer's series." >>"$t/Documentation/locking/lockdep-design.rst"
			git -C "$t" commit -q -am "Documentation: lockdep: line $i"
		fi
	done
}
state() { git -C "$1" for-each-ref; git -C "$1" worktree list --porcelain; git -C "$1" status --porcelain; }

# Both trees now, and on the 6.12 one the commit that says it is 6.13
# (branch v613, off the series): every commit id is known before
# anything builds, the same every run.
make_tree 6.1 "$out/linux61"
make_tree 6.12 "$out/linux612"
t=$out/linux612
git -C "$t" checkout -q -b v613
sed -i 's/^PATCHLEVEL = 12$/PATCHLEVEL = 13/' "$t/Makefile"
git -C "$t" commit -q -am "Makefile: say 6.13 (test only)"
git -C "$t" checkout -q -
# Built from scratch every run, and gone after it with the trees: their
# alternates and refs in build/src, the kernels of their commits
# (linux61-ID, linux612-ID: build/ and build/trees) and the campaigns.
forget() {
	local t c name v
	for t in "$out/linux61" "$out/linux612"; do
		[ -d "$t" ] || continue
		for c in $(git -C "$t" rev-list --all ^d0~1); do
			name=$(basename "$t")-${c:0:12}
			rm -rf "${LB_BUILD:?}/$name"
			rm -f "$LB_BUILD/trees/$name.toml" "$LB_BUILD/trees/campaign-$name"-*.toml
		done
	done
	for v in 6.1 6.12; do
		git -C "$LB_BUILD/src/linux-source-$v" worktree prune
		lb_py -m scripts.tree.kernel_tree detach "$LB_BUILD/src/linux-source-$v" "$out/linux${v//./}"
	done
}
forget
trap forget EXIT

# 1. ./run.sh build --tree of a 6.1 tree: from before's objects, before's kernel.
t=$out/linux61
d0=$(git -C "$t" rev-parse d0) good=$(git -C "$t" rev-parse good)
a=linux61-${d0:0:12} b=linux61-${good:0:12}
state "$t" >"$out/tree-before"
./run.sh build --tree "$t" d0 good >"$out/build.log" 2>&1 || {
	tail -n 20 "$out/build.log"
	fail "build --tree failed"
}
grep -q "^build: $a: ${d0:0:12} has no mailbox registry: patch 0001 first" "$out/build.log" ||
	fail "$a: no word of patch 0001"
! grep -q "^build: $b: .* has no mailbox registry" "$out/build.log" || fail "$b got 0001 again"
! grep -q "warning" "$out/build.log" || fail "a 6.1 tree got a warning: $(grep warning "$out/build.log")"
# good's sources are d0's with 0001: d0's build is the nearest donor.
grep -q "^build: $a: objects from before," "$out/build.log" || fail "$a: not from before's objects"
grep -q "^build: $b: objects from $a," "$out/build.log" || fail "$b: not from $a's objects"
for v in "$a" "$b"; do
	cmp -s "$LB_BUILD/before/src/obj/arch/arm/boot/Image" "$LB_BUILD/$v/src/obj/arch/arm/boot/Image" ||
		fail "$v's Image differs from before's: the same sources must make the same kernel"
	cmp -s "$LB_BUILD/before/mbox_bench.ko" "$LB_BUILD/$v/mbox_bench.ko" || fail "$v's module differs from before's"
done
"$LB_PY" - "$LB_BUILD/$b/build-meta.json" "$t" "$good" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
want = {"tree": sys.argv[2], "ref": sys.argv[3], "commit": sys.argv[3],
        "subject": "mailbox: add the 2.6.34 OMAP mailbox name registry for lock benchmarks"}
assert m["source"] == want, m["source"]
assert m["debian_package"] is None and m["patches"] == [], m
assert m["kernel"] == "6.1", m["kernel"]
PY
grep -q "^next: ./run.sh campaign build/trees/campaign-$a-${good:0:12}.toml" "$out/build.log" ||
	[ "$LB_BUILD" != "$LB_ROOT/build" ] || fail "no campaign named after the build"
./run.sh build --tree "$t" good >"$out/rebuild.log" 2>&1 || fail "a second build of good failed"
! grep -q "objects from\|registry" "$out/rebuild.log" || fail "a second build of good started again"

# Refused with one line, exit 2: a ref that is not there, a dirty tree.
refused() {
	local want=$1 rc=0
	shift
	./run.sh build --tree "$t" "$@" >"$out/refused.log" 2>&1 || rc=$?
	if [ $rc != 2 ] || [ "$(wc -l <"$out/refused.log")" -gt 2 ] || ! grep -q "$want" "$out/refused.log"; then
		fail "build --tree $*: exit $rc, want 2 and '$want': $(cat "$out/refused.log")"
	fi
}
refused "'v9.9' is not a commit" v9.9
echo dirt >>"$t/Makefile"
refused "uncommitted changes" HEAD
git -C "$t" checkout -q Makefile
state "$t" >"$out/tree-after"
cmp -s "$out/tree-before" "$out/tree-after" || fail "the build wrote into the user's 6.1 tree"
echo "t-tree: ok: 6.1: build --tree: before's kernel from two commits; refusals"

# 2. A 6.12 tree: from before@6.12's objects; ./run.sh bisect good..HEAD.
t=$out/linux612
d0=$(git -C "$t" rev-parse d0) good=$(git -C "$t" rev-parse good)
planted=$(git -C "$t" rev-parse HEAD~3)
a=linux612-${d0:0:12}
state "$t" >"$out/tree-before"
./run.sh build --tree "$t" d0 >"$out/build-612.log" 2>&1 || {
	tail -n 20 "$out/build-612.log"
	fail "build --tree of the 6.12 tree failed"
}
grep -q "^build: $a: objects from before@6.12," "$out/build-612.log" ||
	fail "$a: not from before@6.12's objects: $(grep objects "$out/build-612.log")"
cmp -s "$LB_BUILD/before@6.12/src/obj/arch/arm/boot/Image" "$LB_BUILD/$a/src/obj/arch/arm/boot/Image" ||
	fail "$a's Image differs from before@6.12's: the same sources must make the same kernel"
"$LB_PY" -c 'import json, sys; m = json.load(open(sys.argv[1])); assert m["kernel"] == "6.12" and m["kernel_version"].startswith("6.12."), m' \
	"$LB_BUILD/$a/build-meta.json"
rc=0
./run.sh bisect --tree "$t" good HEAD --campaign tests/campaigns/bisect.toml \
	--out "$out/run" >"$out/bisect.log" 2>&1 || rc=$?
[ $rc = 0 ] || {
	tail -n 30 "$out/bisect.log"
	fail "bisect exited $rc, want 0"
}
state "$t" >"$out/tree-after"
cmp -s "$out/tree-before" "$out/tree-after" || fail "the build or the bisection wrote into the user's 6.12 tree"
grep -q "first bad commit: ${planted:0:12}" "$out/run/log.txt" || {
	cat "$out/run/log.txt"
	fail "the first bad commit is not ${planted:0:12}"
}
"$LB_PY" - "$out/run" "$planted" "$good" <<'PY'
import json, os, sys
run, planted, good = sys.argv[1:]
s = json.load(open(f"{run}/bisect.json"))
assert s["result"]["first_bad"] == planted, s["result"]
ids = [c["id"] for c in s["commits"]]
assert len(ids) == 8 and ids[4] == planted, ids
steps = [x for x in s["steps"] if x["kind"] != "confirm"]
confirm = [x for x in s["steps"] if x["kind"] == "confirm"]
assert len(steps) <= 4 and len(confirm) == 1, s["steps"]
for x in s["steps"]:
    want = "bad" if x["index"] >= 4 else "good"
    assert x["class"] == want, x
assert confirm[0]["index"] == 4 and confirm[0]["base"] == 3, confirm
# A step's commit block names GOOD's commit and the step's.
x = steps[-1]
msg = open(os.path.join(run, x["run"], "commit-msg.txt")).read()
assert good[:12] in msg and ids[x["index"]][:12] in msg, msg
assert "6.12." in msg, msg
log = open(f"{run}/log.txt").read()
assert log.count(" -> ") == len(s["steps"]), log
# Under icount each boot runs once a bisection (campaign --reuse): BAD's
# check boots GOOD, its control and BAD (9); each step its commit (3);
# the confirmation only the parent's control (3): 21 boots of 45 planned.
booted = reused = 0
for x in s["steps"]:
    with open(f"{run}/{x['run']}/manifest.json") as f:
        m = json.load(f)
    boots = m["cells"]
    r = sum(1 for c in boots if c.get("reused_from"))
    assert all(c["state"] == "done" for c in boots), x
    assert all(b["kernel"] == "6.12" for b in m["builds"].values()), m["builds"]
    reused, booted = reused + r, booted + len(boots) - r
assert (booted, reused) == (21, 24), (booted, reused)
print(f"t-tree: bisect: {len(steps)} steps and a confirmation over 8 commits of a 6.12 "
      f"tree, {booted} boots for {booted + reused} planned")
PY

# 3. An untested version: built anyway, from 6.12's objects, with one
# warning line.
v613=$(git -C "$t" rev-parse v613)
./run.sh build --tree "$t" v613 >"$out/build-613.log" 2>&1 || {
	tail -n 20 "$out/build-613.log"
	fail "an untested version was not built"
}
[ "$(grep -c warning "$out/build-613.log")" = 1 ] || fail "want one warning line: $(cat "$out/build-613.log")"
grep -qF "build: warning: linux612-${v613:0:12}: ${v613:0:12} is Linux 6.13.118, not a tested version (6.1, 6.12): building it anyway, from 6.12's objects (docs/trees.md)" \
	"$out/build-613.log" || fail "the warning line: $(grep warning "$out/build-613.log")"
grep -q "^build: linux612-${v613:0:12}: objects from linux612-" "$out/build-613.log" ||
	fail "6.13 not from a 6.12 build's objects: $(grep objects "$out/build-613.log")"
"$LB_PY" -c 'import json, sys; m = json.load(open(sys.argv[1])); assert m["kernel_version"].startswith("6.13.") and m["kernel"] == "6.13", m' \
	"$LB_BUILD/linux612-${v613:0:12}/build-meta.json"
echo "t-tree: ok (6.1: build --tree: before's kernel; 6.12: bisect found ${planted:0:12}, the planted one; 6.13: built with its warning)"
