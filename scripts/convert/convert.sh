#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn one rwlock of the kernel tree into a spinlock, as commit
# 10d1a0028dc4 did for mboxes_lock, and write the change as the next patch
# of a series plus a variant that builds it.
#
# The conversion is Coccinelle's (kernel-patches/cocci/rwlock-to-spinlock.cocci,
# run on FILE of the base variant's tree); this script refuses what the
# semantic patch cannot make whole, one line naming the file and line:
#   - a lock that other files mention (a global, or a field name used
#     elsewhere): converting one file of it would not build, or would mix
#     rwlock and spinlock calls on one lock;
#   - any mention of the lock left after the conversion that is not a
#     spinlock call, its definition or a comment (the lock's address
#     taken, a reader API with no spinlock twin such as read_lock_nested).
# Whether the spinlock is safe (readers that nest, or that run in
# interrupts, deadlock a spinlock) is lockdep's question: boot the variant
# with lockdep (docs/variants.md).
#
# The commit is made without touching the tree's checkout (git plumbing
# on a throwaway index), so a built variant stays as it is.
#
# Usage: convert.sh [--base VARIANT] [--name NAME] [--out DIR] [--force]
#                   [--workload W [--locks-per-op K] [--lock-class C]] FILE LOCK
#   FILE  path in the kernel tree, e.g. fs/filesystems.c
#   LOCK  the rwlock's name, e.g. file_systems_lock
#   --base   the variant whose tree and series the patch goes on (before)
#   --name   the new variant's name (default: spin-LOCK, "_" as "-")
#   --out    write the patch and NAME.toml into DIR (a variant folder for
#            --variants DIR or LOCKBENCH_VARIANT_PATH) instead of
#            kernel-patches/ and kernel-patches/variants/
#   --force  replace a file convert would write that is there already
#            (without it: refused, one line, nothing written)
#   --workload  a generic guest/inside/lockload workload that takes LOCK, e.g.
#            'read /proc/iomem' (guest/JOB.md): also write the target file
#            (kernel-patches/targets/LOCK.toml, or DIR/targets/ with --out,
#            where --variants DIR finds it) and a small campaign of it
#            (build/campaigns/my-NAME.toml, or DIR/campaigns/), its
#            acquisitions of LOCK per op measured first by ./run.sh
#            calibrate on the base kernel (one boot; it must be built), or
#            given with --locks-per-op K; --lock-class: lock_stat's name
#            of the lock (default LOCK)
# Every file is made in a folder of its own first, then put in place by
# scripts/lock_target.py place (lockbench/safeio.py): through no link, an
# existing file refused unless --force, every destination checked before
# any is written (issue #43).
# It ends with the next steps for what it wrote: the ./run.sh build and
# ./run.sh campaign commands (with --variants DIR after --out DIR) and the
# campaign file to start from.
# Exit: 0 written, 2 bad input or a refused conversion, 3 missing tool.

set -euo pipefail
LB_PROG=convert
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

usage="usage: ./run.sh convert [--base VARIANT] [--name NAME] [--out DIR] [--force] [--workload W [--locks-per-op K] [--lock-class C]] FILE LOCK"
base=before
name=
out=
workload=
k=
class=
force=()
while [ $# -gt 0 ]; do
	case $1 in
	--force)
		force=(--force)
		shift
		;;
	--base | --name | --out | --workload | --locks-per-op | --lock-class)
		lb_need_value "$1" $#
		case $1 in
		--base) base=$2 ;;
		--name) name=$2 ;;
		--out) out=$2 ;;
		--workload) workload=$2 ;;
		--locks-per-op) k=$2 ;;
		--lock-class) class=$2 ;;
		esac
		shift 2
		;;
	-h | --help)
		echo "$usage"
		exit 0
		;;
	-*) lb_die 2 "unknown option $1; $usage" ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || lb_die 2 "$usage"
file=$1
lock=$2
[[ $file =~ ^[A-Za-z0-9_][A-Za-z0-9_./-]*\.c$ && $file != *..* ]] ||
	lb_die 2 "FILE must be a .c file's path inside the kernel tree (like fs/exec.c), not '$file'"
[[ $lock =~ ^[A-Za-z_][A-Za-z0-9_]{0,63}$ ]] || lb_die 2 "LOCK must be a C identifier, not '$lock'"
[ -n "$name" ] || name=spin-${lock//_/-}
[[ $name =~ ^[a-z0-9][a-z0-9_-]{0,31}$ ]] ||
	lb_die 2 "variant name '$name' is not a variant name ([a-z0-9][a-z0-9_-]*, 32 at most): give --name"
# The target file of --workload: its name is the lock's, in lower case.
tname=${lock,,}
tdir=$LB_ROOT/kernel-patches/targets
cdir=$LB_BUILD/campaigns
[ -z "$out" ] || tdir=$out/targets cdir=$out/campaigns
if [ -n "$workload" ]; then
	workload=$(lb_py -m scripts.lock_target check-workload "$workload") || exit 2
	[ -n "$class" ] || class=$lock
	[[ -z $k || $k =~ ^[1-9][0-9]{0,2}$|^1000$ ]] || lb_die 2 "--locks-per-op '$k': want an integer in 1..1000"
	[ -n "$out" ] || [ ! -e "$tdir/$tname.toml" ] ||
		lb_die 2 "kernel-patches/targets/$tname.toml exists: give --out DIR to write another"
elif [ -n "$k$class" ]; then
	lb_die 2 "--locks-per-op and --lock-class go with --workload"
fi
lb_need spatch git
cocci=$LB_ROOT/kernel-patches/cocci/rwlock-to-spinlock.cocci

# The base variant's series, and its tree with that series applied.
lb_variant "$base"
label=$lb_label patches=("${lb_patches[@]}") configs=("${lb_configs[@]}")
# The locks the base's series converts already (its converts key): the
# new variant converts those and LOCK.
read -r -a converts <<<"$(lb_py -m scripts.variant show "$base" | sed -n 's/^converts *//p')"
"$LB_ROOT/scripts/build-kernel.sh" --tree-only "$base" >&2
tree=$LB_BUILD/$label/src
[ -f "$tree/$file" ] || lb_die 2 "$file: no such file in the $base tree ($tree)"
grep -qw -- "$lock" "$tree/$file" || lb_die 2 "$file: $lock is not mentioned there"

# A lock that is not static to FILE and that other files name (outside
# comments) cannot be converted in one file.  A static one is FILE's own,
# whatever other files call their locks.
if ! grep -q -E "^static[[:space:]]+(DEFINE_RWLOCK\($lock\)|rwlock_t[[:space:]]+${lock}[[:space:];=])" "$tree/$file"; then
	other=$(git -C "$tree" grep -n -w -I -e "$lock" -- "*.[chS]" ":!$file" |
		grep -v -E "^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)" | head -n 1 || true)
	[ -z "$other" ] || lb_die 2 "$file: $lock is shared beyond this file (${other%%:*}:$(cut -d: -f2 <<<"$other")): not converted"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/a"
src=$work/a/$(basename "$file")
cp "$tree/$file" "$src"
log=$LB_BUILD/convert-spatch.log
if ! spatch --sp-file "$cocci" -D lock="$lock" --no-includes --very-quiet \
	-o "$work/new.c" "$src" >"$log" 2>&1; then
	lb_die 2 "$file: spatch could not convert $lock: see $log"
fi
if [ ! -f "$work/new.c" ] || cmp -s "$src" "$work/new.c"; then
	lb_die 2 "$file: $lock is not an rwlock there: nothing to convert"
fi

# What is left must be a spinlock's: its definition, spinlock calls,
# lockdep assertions, sparse's context annotations (__acquires() and
# friends hold for either kind of lock), or a comment.
left=$(grep -n -w -- "$lock" "$work/new.c" | grep -v -E \
	-e "^[0-9]+:[[:space:]]*(/?\*|//)" \
	-e "DEFINE_SPINLOCK\($lock\)" \
	-e "spinlock_t[[:space:]]+$lock;" \
	-e "(spin_[a-z_]+|lockdep_[a-z_]+|assert_spin_locked)\(&[^;,]*\b$lock\b[^;]*\)" \
	-e "__(acquires|releases|must_hold|acquire|release)\(&?[^;,()]*\b$lock\)" |
	head -n 1 || true)
[ -z "$left" ] ||
	lb_die 2 "$file:${left%%:*}: cannot convert this use of $lock: $(sed -E 's/^[0-9]+:[[:space:]]*//' <<<"$left")"

# --workload: its acquisitions of the lock per op, measured on one boot of
# the base kernel (the rwlock) before anything is written.
if [ -n "$workload" ] && [ -z "$k" ]; then
	echo "convert: measuring how many times '$workload' takes $class an op: one boot of $base (./run.sh calibrate)" >&2
	rc=0
	cal=$(lb_py -m scripts.calibrate --variant "$base" --lock "$class" "$workload") || rc=$?
	[ "$rc" = 0 ] || exit "$rc"
	echo "$cal" >&2
	k=${cal##*locks_per_op=}
	[[ $k =~ ^[0-9]+$ ]] || lb_die 1 "calibrate printed no locks_per_op: $cal"
fi

# The commit: the base series' HEAD with FILE replaced, on a throwaway
# index; author and Signed-off-by are whoever runs this (git config).
who_name=$(git -C "$LB_ROOT" config user.name || echo lockbench)
who_mail=$(git -C "$LB_ROOT" config user.email || echo lockbench@localhost)
# The subject's prefix: the folder and the file, as in "proc: generic:".
subject="$(basename "$(dirname "$file")"): $(basename "$file" .c)"
# The prose is wrapped by fmt (the lock's name varies its length).
body=$(fmt -w 72 <<EOF
rwlocks are slower than spinlocks and let a stream of readers starve
writers (https://lwn.net/Articles/364583/), which is why the OMAP
mailbox registry's rwlock became a spinlock in 2010 ("omap: mailbox:
convert rwlocks to spinlock").  Readers and writers of $lock now take
it as a spinlock, in the same context they took the rwlock in.

Generated by lockbench's kernel-patches/cocci/rwlock-to-spinlock.cocci:

  ./run.sh convert $file $lock

Whether the conversion is safe (lockdep) and whether it pays is what
lockbench then measures.
EOF
)
msg="$subject: convert $lock to a spinlock

$body

Signed-off-by: $who_name <$who_mail>"
blob=$(git -C "$tree" hash-object -w "$work/new.c")
mode=$(git -C "$tree" ls-files -s -- "$file" | cut -d' ' -f1)
treeobj=$(GIT_INDEX_FILE=$work/index sh -c '
	git -C "$1" read-tree HEAD &&
	git -C "$1" update-index --cacheinfo "$2,$3,$4" &&
	git -C "$1" write-tree' sh "$tree" "$mode" "$blob" "$file")
commit=$(GIT_AUTHOR_NAME=$who_name GIT_AUTHOR_EMAIL=$who_mail \
	GIT_COMMITTER_NAME=$who_name GIT_COMMITTER_EMAIL=$who_mail \
	git -C "$tree" commit-tree "$treeobj" -p HEAD -m "$msg")

# The patch, numbered after the base series, and the variant: made in
# $work, then put in place (lock_target.py place) under $pdir, the
# variant at $vrel.
pdir=${out:-$LB_ROOT/kernel-patches}
vdir=${out:-$LB_ROOT/kernel-patches/variants}
vrel=$name.toml
[ -n "$out" ] || vrel=variants/$name.toml
mkdir "$work/out"
made=$(git -C "$tree" format-patch --start-number $((${#patches[@]} + 1)) \
	-o "$work/out" -1 "$commit")
patch=$pdir/$(basename "$made")
put=("$(basename "$made")=$made")
# With --out, the variant is self-contained: a base patch that is not in
# kernel-patches/ (a test variant's own) is copied beside it.
if [ -n "$out" ]; then
	for p in "${patches[@]}"; do
		[ -f "$LB_ROOT/kernel-patches/$(basename "$p")" ] || put+=("$(basename "$p")=$p")
	done
fi
quoted() {
	local sep=
	for f in "$@"; do
		printf '%s"%s"' "$sep" "$(basename "$f")"
		sep=", "
	done
}
# The arch's base fragment (virt-ARCH.config) is merged by the build
# itself and is not listed.
keep=()
for c in "${configs[@]}"; do
	[[ $(basename "$c") == virt-*.config ]] || keep+=("$c")
done
# converts: the base's locks and LOCK, each once (a campaign checks that
# its points drive the locks its compared variants differ in).
conv=()
for c in "${converts[@]}"; do
	[ "$c" = "$lock" ] || conv+=("$c")
done
conv+=("$lock")
cat >"$work/$name.toml" <<EOF
# $base with $lock ($file) a spinlock: written by ./run.sh convert.
description = "$lock in $file as a spinlock (on $base)"
patches = [$(quoted "${patches[@]}" "$patch")]
configs = [$(quoted "${keep[@]}")]
converts = [$(quoted "${conv[@]}")]
EOF
put+=("$vrel=$work/$name.toml")
# Every destination checked before anything is written: a file there
# (without --force) or a link on the way refuses the whole conversion.
lb_py -m scripts.lock_target place --check "${force[@]}" "$pdir" "${put[@]}" || exit 2
camp=
if [ -n "$workload" ]; then
	camp=$cdir/my-$name.toml
	lb_py -m scripts.lock_target place --check "${force[@]}" "$tdir" "$tname.toml=-" || exit 2
	lb_py -m scripts.lock_target place --check "${force[@]}" "$cdir" "my-$name.toml=-" || exit 2
fi
lb_py -m scripts.lock_target place "${force[@]}" "$pdir" "${put[@]}" || exit 2
changed=$(git -C "$tree" diff --numstat HEAD "$commit" | cut -f1-2 | tr '\t' '+')
echo "convert: $lock in $file: $changed lines (+added, removed): $patch; variant $name: $vdir/$name.toml"

if [ -n "$workload" ]; then
	t=$(lb_py -m scripts.lock_target write "${force[@]}" "$tdir" "$tname" "$file" "$lock" "$class" "$base" "$name" \
		"$workload" "$k" "$camp") || exit 2
	echo "convert: target $tname: '$workload' takes $class $k times an op: $t; campaign $camp"
fi

"$LB_ROOT/scripts/convert/convert-next.sh" "$base" "$name" "$lock" "$out" "$camp"
