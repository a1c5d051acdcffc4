#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn one rwlock of the kernel tree into a spinlock, as commit
# 10d1a0028dc4 did for mboxes_lock, and write the change as the next patch
# of a series plus a variant that builds it.
#
# Usage: ./run.sh convert [OPTION...] FILE LOCK
#   FILE  the .c file of the kernel tree that defines LOCK, e.g. fs/exec.c,
#         kernel/fork.c (tasklist_lock), net/core/dev.c (dev_base_lock)
#   LOCK  the rwlock's name, e.g. binfmt_lock
#
# A lock static to FILE (or a field of a struct there) is converted in
# FILE.  A global one (DEFINE_RWLOCK(LOCK) in FILE, not static) is
# converted in every file of the tree that names it: the definition, the
# header's extern, EXPORT_SYMBOL, every read_/write_ call with its _bh,
# _irq and _irqsave form, in one patch; it prints the files it touched and
# those of them the base kernel does not build (other architectures,
# drivers not configured: converted, never compiled here).  The
# conversion is Coccinelle's (kernel-patches/cocci/rwlock-to-spinlock.cocci),
# run on the base variant's tree; where spatch cannot parse a line (a
# macro's body, an attribute), a call on &LOCK there is renamed token by
# token, and said.
#
# Refused, exit 2 with one line naming the file, the line and why:
#   - what a spinlock cannot do: read_trylock (it succeeds beside other
#     readers, spin_trylock would not), a reader nested in a reader of the
#     same lock in one function (a spinlock deadlocks on itself), the
#     lock passed or stored by address (what takes it through the
#     pointer is not converted by name), a reader API with no spinlock
#     twin (read_lock_nested);
#   - a lock FILE does not define (the line that does is named), a field
#     whose name other files use;
#   - FILE not built into the base kernel: the Kconfig option(s) that
#     build it (from the tree's Makefiles), their "depends on" lines, and
#     the shipped fragment and variant that add them (a --base that
#     builds it, or the configs = [...] line of a base variant to write).
# Whether the spinlock is safe (a reader that nests through a call, or
# runs in an interrupt, deadlocks a spinlock) is lockdep's question: boot
# the variant with lockdep (docs/convert.md).
#
# Options:
#   --base VARIANT  the variant (VARIANT[@ARCH][@VERSION])
#            whose tree and series the patch goes on (default: before)
#   --variants DIR  a folder of variant files (and their fragments) to
#            find VARIANT in, as for every command (LOCKBENCH_VARIANT_PATH);
#            may be given again
#   --name NAME  the new variant's name (default: spin-LOCK, "_" as "-")
#   --out DIR  write the patch and NAME.toml into DIR (a folder for
#            --variants DIR) instead of kernel-patches/ and
#            kernel-patches/variants/
#   --force  replace a file convert would write that is there already
#            (without it: refused, one line, nothing written)
#   --skip FILE  leave FILE out of a global lock's conversion: only a
#            file the base kernel does not build (another architecture's),
#            where the semantic patch refused a line; the changelog says
#            that the patch does not build there.  May be given again.
#   --workload W  a generic guest/inside/lockload workload that takes
#            LOCK, e.g. 'read /proc/iomem' (guest/JOB.md): its acquisitions
#            of LOCK per op are measured first by ./run.sh calibrate on the
#            base kernel (one boot; it must be built), then convert also
#            writes the target file (kernel-patches/targets/LOCK.toml, or
#            DIR/targets/ with --out) and a small campaign of it
#            (build/campaigns/my-NAME.toml, or DIR/campaigns/)
#   --locks-per-op K  with --workload: K given instead of measured
#   --lock-class C  with --workload: lock_stat's name of the lock
#            (default LOCK)
#   -h, --help  this text
#
# The commit is made without touching the tree's checkout (git plumbing
# on a throwaway index), so a built variant stays as it is; its author
# and Signed-off-by are your git identity, its changelog says what was
# converted (each file's readers and writers), what was measured, and the
# whole command.  Every file is made in a folder of its own first, then
# put in place by scripts/lock_target.py place (lockbench/safeio.py):
# through no link, an existing file refused unless --force, every
# destination checked before any is written (issue #43).  It ends with the
# next steps: the ./run.sh build and ./run.sh campaign commands (with
# --variants DIR) and the campaign file to start from.
# Exit: 0 written, 2 bad input or a refused conversion, 3 missing tool or
# kernel (the base not built, for --workload).

set -euo pipefail
LB_PROG=convert
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

usage="usage: ./run.sh convert [--base VARIANT] [--variants DIR] [--name NAME] [--out DIR] [--force] [--skip FILE] [--workload W [--locks-per-op K] [--lock-class C]] FILE LOCK (--help: every option)"
# The whole command, for the changelog's "Generated by" line.
cmdline=(./run.sh convert "$@")
base=before
name=
out=
workload=
k=
class=
force=()
skip=()
vdirs=()
while [ $# -gt 0 ]; do
	case $1 in
	--force)
		force=(--force)
		shift
		;;
	--base | --name | --out | --workload | --locks-per-op | --lock-class | --variants | --skip)
		lb_need_value "$1" $#
		case $1 in
		--base) base=$2 ;;
		--name) name=$2 ;;
		--out) out=$2 ;;
		--workload) workload=$2 ;;
		--locks-per-op) k=$2 ;;
		--lock-class) class=$2 ;;
		--variants)
			[ -d "$2" ] || lb_die 2 "--variants: '$2' is not a folder (of variant files, such as ./run.sh convert --out DIR writes)"
			vdirs+=("$(cd "$2" && pwd)")
			;;
		--skip) skip+=("$2") ;;
		esac
		shift 2
		;;
	-h | --help)
		lb_help
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
for s in "${skip[@]}"; do
	[[ $s =~ ^[A-Za-z0-9_][A-Za-z0-9_./-]*\.[ch]$ && $s != *..* ]] ||
		lb_die 2 "--skip '$s': not a source file's path inside the kernel tree"
done
if [ ${#vdirs[@]} -gt 0 ]; then
	LOCKBENCH_VARIANT_PATH=$(
		IFS=:
		echo "${vdirs[*]}"
	)${LOCKBENCH_VARIANT_PATH:+:$LOCKBENCH_VARIANT_PATH}
	export LOCKBENCH_VARIANT_PATH
fi
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
# A base of a --variants folder with a patch or fragment of its own: the
# new variant is written beside copies of them (--out), or it could not
# be built.
if [ -z "$out" ]; then
	for p in "${patches[@]}" "${configs[@]}"; do
		if [ ! -f "$LB_ROOT/kernel-patches/$(basename "$p")" ] &&
			[ ! -f "$LB_ROOT/kernel-patches/configs/$(basename "$p")" ]; then
			lb_die 2 "$base has a file of its own, $p: give --out DIR (the new variant is written there with a copy of it)"
		fi
	done
fi
"$LB_ROOT/scripts/build-kernel.sh" --tree-only "$base" >&2
tree=$LB_BUILD/$label/src
[ -f "$tree/$file" ] || lb_die 2 "$file: no such file in the $base tree ($tree)"
grep -qw -- "$lock" "$tree/$file" || lb_die 2 "$file: $lock is not mentioned there"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# mentions FILE...: the lines of the files that name LOCK as code (not in
# a comment), "file:line:text".
mentions() {
	git -C "$tree" grep -n -w -I -e "$lock" -- "$@" |
		grep -v -E "^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)" || true
}
# What kind of lock FILE has: global (DEFINE_RWLOCK or rwlock_t at file
# scope, not static), static, or a field (rwlock_t LOCK; indented).
attrs='((__cacheline_aligned(_in_smp)?|__read_mostly|__maybe_unused)[[:space:]]+)*'
if grep -q -E "^${attrs}static[[:space:]]+${attrs}(DEFINE_RWLOCK\($lock\)|rwlock_t[[:space:]]+${lock}[[:space:];=])" "$tree/$file"; then
	kind=static
elif grep -q -E "^${attrs}(DEFINE_RWLOCK\($lock\)|rwlock_t[[:space:]]+${lock}[[:space:];=])" "$tree/$file"; then
	kind=global
elif grep -q -E "^[[:space:]]+rwlock_t[[:space:]]+([a-z_0-9]+,[[:space:]]*)*${lock}[[:space:];,]" "$tree/$file"; then
	kind=field
else
	def=$(git -C "$tree" grep -n -E "^${attrs}(static[[:space:]]+)?(DEFINE_RWLOCK\($lock\)|rwlock_t[[:space:]]+${lock}[[:space:];=])" -- '*.c' | head -n 1 || true)
	if [ -n "$def" ]; then
		lb_die 2 "$file: does not define $lock, ${def%%:*}:$(cut -d: -f2 <<<"$def") does: ./run.sh convert ${def%%:*} $lock"
	fi
	kind=none # not an rwlock here: spatch finds nothing to convert below
fi

# The files to convert: FILE alone for a static lock or a field; every
# file that names a global one (a file with a static lock of the same
# name has its own, another lock).
files=("$file")
if [ "$kind" = field ]; then
	other=$(mentions "*.[chS]" ":!$file" | head -n 1 || true)
	[ -z "$other" ] ||
		lb_die 2 "$file: $lock is a field of a struct there, and other files name $lock (${other%%:*}:$(cut -d: -f2 <<<"$other")): a field is converted in its own file only, where no other file names it"
elif [ "$kind" = global ]; then
	asm=$(mentions "*.S" | head -n 1 || true)
	[ -z "$asm" ] || lb_die 2 "${asm%%:*}:$(cut -d: -f2 <<<"$asm"): assembly names $lock: not something a semantic patch converts"
	while IFS= read -r f; do
		[ "$f" != "$file" ] || continue
		if grep -q -E "^${attrs}static[[:space:]]+${attrs}(DEFINE_(RW|SPIN)LOCK\($lock\)|(rw|spin)lock_t[[:space:]]+${lock}[[:space:];=])" "$tree/$f"; then
			continue
		fi
		# Named only as a field (->LOCK, .LOCK): another lock.
		if ! awk -v re="(^|[^.>A-Za-z0-9_])$lock([^A-Za-z0-9_]|\$)" \
			'!/^[[:space:]]*(\/?\*|\/\/)/ && $0 ~ re { found = 1; exit } END { exit !found }' "$tree/$f"; then
			continue
		fi
		files+=("$f")
	done < <(mentions "*.[ch]" | cut -d: -f1 | sort -u)
fi
for s in "${skip[@]}"; do
	[[ " ${files[*]} " == *" $s "* ]] || lb_die 2 "--skip $s: not a file that names $lock (the files: ${files[*]})"
	[ "$s" != "$file" ] || lb_die 2 "--skip $s: the file that defines $lock cannot be left out"
done

# Which of them the base kernel builds (scripts/kbuild_where.py, from the
# Makefiles), against its .config: the built one's, else one made now.
lb_arch_info "$lb_arch"
srcarch=${lb_archinfo[kernel_arch]}
where=$(lb_py -m scripts.kbuild_where check --tree "$tree" --arch "$srcarch" "${files[@]}") || exit 2
if grep -q ' needs ' <<<"$where"; then
	dotconfig=$LB_BUILD/$label/config
	if [ ! -f "$LB_BUILD/$label/build-meta.json" ] || [ ! -f "$dotconfig" ]; then
		echo "convert: configuring $base (tinyconfig + its fragments, as ./run.sh build does) to see which files it builds" >&2
		dotconfig=$work/cfg/.config
		mkdir "$work/cfg"
		{
			make -s -C "$tree" O="$work/cfg" ARCH="$srcarch" tinyconfig &&
				"$tree/scripts/kconfig/merge_config.sh" -m -O "$work/cfg" "$dotconfig" "${configs[@]}" &&
				make -s -C "$tree" O="$work/cfg" ARCH="$srcarch" olddefconfig
		} >"$work/cfg.log" 2>&1 || lb_die 2 "configuring $base failed: $(tail -n 1 "$work/cfg.log")"
	fi
	where=$(lb_py -m scripts.kbuild_where check --tree "$tree" --arch "$srcarch" \
		--config "$dotconfig" "${files[@]}") || exit 2
fi
declare -A built=()
unbuilt=()
while read -r f state rest; do
	built[$f]=$state
	case $state in builtin | header) ;; *) [[ " ${skip[*]} " == *" $f "* ]] || unbuilt+=("$f") ;; esac
	[ "$f" = "$file" ] || continue
	case $state in
	builtin) ;;
	no | module)
		opts=${rest%% *} line=${rest#* }
		if [ "$opts" = "-" ] || [[ $opts != *CONFIG_* ]]; then
			lb_die 2 "$file is not built into $base: $line"
		fi
		IFS=, read -r -a optlist <<<"$opts"
		adv=$(lb_py -m scripts.kbuild_where advise --tree "$tree" --variants-of "$base" \
			"${vdirs[@]/#/--fragments=}" "${optlist[@]}") || exit 2
		want=${opts//,/=y, }=y
		[ "$state" = no ] || want="$want (built in, not a module)"
		deps=$(sed -n 's/^[^ ]* depends //p' <<<"$adv" | grep -v '^-$' | paste -sd';' || true)
		frag=$(sed -n 's/^[^ ]* fragments //p' <<<"$adv" | grep -v '^-$' | head -n 1 | cut -d' ' -f1 || true)
		vars=$(sed -n 's/^[^ ]* variants //p' <<<"$adv" | grep -v '^-$' | head -n 1 | cut -d' ' -f1 || true)
		how="write a fragment with $want beside a base variant of your own (docs/convert.md)"
		if [ -n "$vars" ]; then
			how="--base ${vars%%:*} builds it (its fragment ${vars#*:})"
		elif [ -n "$frag" ]; then
			line_cfgs=$(for c in "${configs[@]}"; do
				[[ $(basename "$c") == virt-*.config ]] || printf '"%s", ' "$(basename "$c")"
			done)
			how="a base variant with configs = [${line_cfgs}\"$frag\"] builds it (kernel-patches/configs/$frag; docs/convert.md)"
		fi
		lb_die 2 "$file is not built into $base: it needs $want${deps:+ (Kconfig: depends on $deps)}, from $line; $how"
		;;
	*) lb_die 2 "$file: cannot tell from the Makefiles whether $base builds it (${rest#* }): not converted" ;;
	esac
done <<<"$where"
for s in "${skip[@]}"; do
	case ${built[$s]:-} in builtin | header)
		lb_die 2 "--skip $s: $base builds it, so a patch that leaves it out would not compile there: only a file the base does not build can be left out" ;;
	esac
done

# The conversion, file by file (two at a time): spatch's output, and the
# nested readers its rule nested_read reports.
mkdir "$work/a" "$work/b"
todo=()
for f in "${files[@]}"; do
	[[ " ${skip[*]} " != *" $f "* ]] || continue
	todo+=("$f")
	mkdir -p "$work/a/$(dirname "$f")" "$work/b/$(dirname "$f")"
	cp "$tree/$f" "$work/a/$f"
done
log=$LB_BUILD/convert-spatch.log
[ ${#todo[@]} -eq 1 ] || echo "convert: $lock is global: running the semantic patch on the ${#todo[@]} files that name it" >&2
printf '%s\n' "${todo[@]}" | (cd "$work" && xargs -P 2 -I{} \
	spatch --sp-file "$cocci" -D lock="$lock" --no-includes --include-headers --very-quiet \
	-o "b/{}" "a/{}") >"$work/spatch.out" 2>"$log" ||
	lb_die 2 "$file: spatch could not convert $lock: see $log"
for f in "${todo[@]}"; do
	[ -f "$work/b/$f" ] || cp "$work/a/$f" "$work/b/$f"
done

# refuse FILE LINE WHY: one line, with a --skip hint for a file the base
# does not build.
refuse() {
	local hint=
	if [ "${built[$1]:-}" != builtin ] && [ "${built[$1]:-}" != header ] && [ "$1" != "$file" ]; then
		hint=" ($1 is not built into $base: --skip $1 leaves it out, and the changelog says the patch does not build there)"
	fi
	lb_die 2 "$1:$2: $3: not converted$hint"
}
nested=$(grep -m1 '^LOCKBENCH-NESTED ' "$work/spatch.out" || true)
if [ -n "$nested" ]; then
	nested=${nested#LOCKBENCH-NESTED a/}
	nf=${nested%%:*} rest=${nested#*:}
	refuse "$nf" "${rest%%:*}" "${rest#*: } of $lock: a spinlock deadlocks on itself there"
fi

# Nothing converted (a global lock's lines may still be renamed below):
# not an rwlock, whatever else its name is used for.
if [ "$kind" != global ]; then
	same=1
	for f in "${todo[@]}"; do
		cmp -s "$work/a/$f" "$work/b/$f" || same=0
	done
	[ "$same" = 0 ] || lb_die 2 "$file: $lock is not an rwlock there: nothing to convert"
fi

# What is left must be a spinlock's: its definition or declaration,
# spinlock calls, EXPORT_SYMBOL, lockdep assertions, sparse's context
# annotations (__acquires() and friends hold for either kind of lock),
# or a comment.  A global lock's call on &LOCK that spatch left (a line
# it could not parse) is renamed token by token first, and said.
ok_re=(
	-e "^[0-9]+:[[:space:]]*(/?\*|//)"
	-e "DEFINE_SPINLOCK\($lock\)"
	-e "spinlock_t[[:space:]]+${lock}[[:space:]]*;"
	-e "spinlock_t[[:space:]]+${lock}[[:space:]][^;]*= __SPIN_LOCK_UNLOCKED\($lock\);"
	-e "EXPORT_SYMBOL(_GPL)?\($lock\)"
	-e "(spin_[a-z_]+|lockdep_[a-z_]+|assert_spin_locked)\(&[^;,]*\b$lock\b[^;]*\)"
	-e "__(acquires|releases|must_hold|acquire|release)\(&?[^;,()]*\b$lock\)"
)
renamed=()
for f in "${todo[@]}"; do
	if [ "$kind" = global ]; then
		while IFS=: read -r n _; do
			# "__cacheline_aligned DEFINE_SPINLOCK(x);" reads to
			# checkpatch as a function's prototype: an attributed
			# definition is spelled out instead.
			sed -i -E "${n}{s/^(static[[:space:]]+)?((__[a-z_]+[[:space:]]+)+)DEFINE_RWLOCK\($lock\)/\1spinlock_t $lock \2= __SPIN_LOCK_UNLOCKED($lock)/; s/\bDEFINE_RWLOCK\($lock\)/DEFINE_SPINLOCK($lock)/; s/\brwlock_t([[:space:]]+$lock\b)/spinlock_t\1/; s/\b(read|write)_(lock|unlock)(_irq|_bh|_irqsave|_irqrestore)?\(&$lock\b/spin_\2\3(\&$lock/g; s/\bwrite_trylock(_irqsave)?\(&$lock\b/spin_trylock\1(\&$lock/g}" "$work/b/$f"
			renamed+=("$f:$n")
		done < <(grep -n -E "\bDEFINE_RWLOCK\($lock\)|\brwlock_t[[:space:]]+$lock\b|\b((read|write)_(lock|unlock)(_irq|_bh|_irqsave|_irqrestore)?|write_trylock(_irqsave)?)\(&$lock\b" "$work/b/$f" |
			grep -v -E "^[0-9]+:[[:space:]]*(/?\*|//)" || true)
	fi
	left=$(grep -n -w -- "$lock" "$work/b/$f" | grep -v -E "${ok_re[@]}" | head -n 1 || true)
	[ -n "$left" ] || continue
	n=${left%%:*} text=$(sed -E 's/^[0-9]+:[[:space:]]*//' <<<"$left")
	if grep -q -E "\bread_trylock\(" <<<"$text"; then
		why="read_trylock has no spinlock twin (it succeeds beside other readers, where spin_trylock fails)"
	elif grep -q -E "&[[:space:]]*([A-Za-z_][A-Za-z0-9_]*(->|\.))*$lock\b" <<<"$text"; then
		why="$lock's address is passed or stored (a lock passed by pointer: what takes it through the pointer is not converted by name)"
	else
		why="no spinlock twin for this use of $lock"
	fi
	refuse "$f" "$n" "$text: $why"
done
changed_files=()
for f in "${todo[@]}"; do
	cmp -s "$work/a/$f" "$work/b/$f" || changed_files+=("$f")
done
[ ${#changed_files[@]} -gt 0 ] || lb_die 2 "$file: $lock is not an rwlock there: nothing to convert"

# --workload: its acquisitions of the lock per op, measured on one boot of
# the base kernel (the rwlock) before anything is written.
measured=
if [ -n "$workload" ] && [ -z "$k" ]; then
	echo "convert: measuring how many times '$workload' takes $class an op: one boot of $base (./run.sh calibrate)" >&2
	rc=0
	cal=$(lb_py -m scripts.calibrate --variant "$base" --lock "$class" "$workload") || rc=$?
	[ "$rc" = 0 ] || exit "$rc"
	echo "$cal" >&2
	k=${cal##*locks_per_op=}
	[[ $k =~ ^[0-9]+$ ]] || lb_die 1 "calibrate printed no locks_per_op: $cal"
	seen=$(sed -E 's/.*, exactly \((.*)\): locks_per_op=.*/\1/' <<<"$cal")
	measured="Measured on $base, the rwlock kernel, by ./run.sh calibrate: '$workload' takes $class $k time$([ "$k" = 1 ] || echo s) an op, exactly ($seen)."
elif [ -n "$workload" ]; then
	measured="Given, not measured (--locks-per-op): '$workload' takes $class $k time$([ "$k" = 1 ] || echo s) an op."
fi

# The changelog: each file's readers and writers (its read_ and write_
# lock calls, before the conversion), what is not built here, what was
# measured, and the whole command.
count() { # FILE PREFIX: its PREFIX_lock*/PREFIX_trylock* calls on LOCK, outside comments
	grep -v -E "^[[:space:]]*(/?\*|//)" "$work/a/$1" |
		grep -c -E "\b$2_(lock|trylock)(_irq|_bh|_irqsave)?\((&[^;,]*\b)?$lock\b" || true
}
table=
for f in "${changed_files[@]}"; do
	r=$(count "$f" read) w=$(count "$f" write)
	what=
	[ "$r" = 0 ] || what="$r reader$([ "$r" = 1 ] || echo s)"
	[ "$w" = 0 ] || what="${what:+$what, }$w writer$([ "$w" = 1 ] || echo s)"
	if grep -q -E "DEFINE_RWLOCK\($lock\)" "$work/a/$f"; then
		what="${what:+$what, }the definition"
	elif grep -q -E "rwlock_t[[:space:]]+$lock\b" "$work/a/$f"; then
		what="${what:+$what, }the declaration"
	fi
	case ${built[$f]:-} in
	builtin | header) ;;
	unknown) what="$what (built? its Makefile line was not understood)" ;;
	*) what="$what (not built)" ;;
	esac
	table+="  $f: $what"$'\n'
done
nfiles=${#changed_files[@]}
if [ "$nfiles" = 1 ]; then
	intro="$lock, in $file, is an rwlock: its readers share it and its writers take it alone.  This makes it a spinlock, so that readers too take it alone, each in the context it took the rwlock in (the _bh, _irq and _irqsave forms are kept):"
else
	intro="$lock, defined in $file, is an rwlock: its readers share it and its writers take it alone.  This makes it a spinlock in the $nfiles files that name it, so that readers too take it alone, each in the context it took the rwlock in (the _bh, _irq and _irqsave forms are kept):"
fi
notes=
[ ${#unbuilt[@]} -eq 0 ] || notes+="The files marked \"not built\" are converted but were not compiled by lockbench: $base does not build them (another architecture's, or an option it leaves out)."$'\n\n'
[ ${#skip[@]} -eq 0 ] || notes+="Left out (--skip, where the semantic patch refused a line): $(printf '%s, ' "${skip[@]}" | sed 's/, $//'); this patch does not build there."$'\n\n'
[ ${#renamed[@]} -eq 0 ] || notes+="Renamed token by token where spatch could not parse the line: $(printf '%s, ' "${renamed[@]}" | sed 's/, $//')."$'\n\n'
[ -z "$measured" ] || notes+="$measured"$'\n\n'
notes=$(fmt -w 72 <<<"$notes")
[ -z "$notes" ] || notes+=$'\n\n'
# The command, wrapped at 72 columns with a backslash.
cmdtext=
linelen=2
for a in "${cmdline[@]}"; do
	q=$a
	[[ $a =~ ^[A-Za-z0-9_./@=:,+-]+$ ]] || q="'${a//\'/\'\\\'\'}'"
	if [ -n "$cmdtext" ] && [ $((linelen + ${#q} + 3)) -gt 72 ]; then
		cmdtext+=" \\"$'\n'"    "
		linelen=4
	elif [ -n "$cmdtext" ]; then
		cmdtext+=" "
		linelen=$((linelen + 1))
	fi
	cmdtext+=$q
	linelen=$((linelen + ${#q}))
done
body="$(fmt -w 72 <<<"$intro")

$table
${notes}$(fmt -w 72 <<EOF
rwlocks cost more than spinlocks and let a stream of readers starve a
writer (https://lwn.net/Articles/364583/).  Whether this conversion is
safe (lockdep, with the workloads that reach the lock) and whether it
pays is what lockbench measures on this patch.
EOF
)

Generated by lockbench's kernel-patches/cocci/rwlock-to-spinlock.cocci:

  $cmdtext"
# The subject's prefix: the folder and the file, as in "proc: generic:".
subject="$(basename "$(dirname "$file")"): $(basename "$file" .c)"
who_name=$(git -C "$LB_ROOT" config user.name || echo lockbench)
who_mail=$(git -C "$LB_ROOT" config user.email || echo lockbench@localhost)
msg="$subject: convert $lock to a spinlock

$body

Signed-off-by: $who_name <$who_mail>"
GIT_INDEX_FILE=$work/index git -C "$tree" read-tree HEAD
for f in "${changed_files[@]}"; do
	blob=$(git -C "$tree" hash-object -w "$work/b/$f")
	mode=$(git -C "$tree" ls-files -s -- "$f" | cut -d' ' -f1)
	GIT_INDEX_FILE=$work/index git -C "$tree" update-index --cacheinfo "$mode,$blob,$f"
done
treeobj=$(GIT_INDEX_FILE=$work/index git -C "$tree" write-tree)
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
# With --out, the variant is self-contained: a base patch or fragment
# that is not shipped (a test variant's own, a user's) is copied beside it.
if [ -n "$out" ]; then
	for p in "${patches[@]}"; do
		[ -f "$LB_ROOT/kernel-patches/$(basename "$p")" ] || put+=("$(basename "$p")=$p")
	done
	for c in "${configs[@]}"; do
		[ -f "$LB_ROOT/kernel-patches/configs/$(basename "$c")" ] || put+=("$(basename "$c")=$c")
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
where_txt=$file
[ "$nfiles" = 1 ] || where_txt="$file and $((nfiles - 1)) more file$([ "$nfiles" = 2 ] || echo s)"
cat >"$work/$name.toml" <<EOF
# $base with $lock ($where_txt) a spinlock: written by ./run.sh convert.
description = "$lock in $where_txt as a spinlock (on $base)"
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
changed=$(git -C "$tree" diff --numstat HEAD "$commit" | awk '{ a += $1; d += $2 } END { print a "+" d }')
echo "convert: $lock in $file: $changed lines (+added, removed): $patch; variant $name: $vdir/$name.toml"
if [ "$nfiles" -gt 1 ]; then
	echo "convert: $nfiles files touched: ${changed_files[*]}"
	[ ${#unbuilt[@]} -eq 0 ] || echo "convert: not built in $base (converted, not compiled here): ${unbuilt[*]}"
	[ ${#skip[@]} -eq 0 ] || echo "convert: left out (--skip): ${skip[*]}"
fi
[ ${#renamed[@]} -eq 0 ] || echo "convert: renamed token by token where spatch could not parse the line: ${renamed[*]}"

if [ -n "$workload" ]; then
	t=$(lb_py -m scripts.lock_target write "${force[@]}" "$tdir" "$tname" "$file" "$lock" "$class" "$base" "$name" \
		"$workload" "$k" "$camp") || exit 2
	echo "convert: target $tname: '$workload' takes $class $k times an op: $t; campaign $camp"
fi

"$LB_ROOT/scripts/convert/convert-next.sh" "$base" "$name" "$lock" "$out" "$camp" "${vdirs[@]}"
