#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build one kernel variant for one architecture, and its benchmark module.
#
# A target is VARIANT (32-bit ARM, the default: built in build/VARIANT) or
# VARIANT@ARCH (built in build/VARIANT@ARCH; ARCH arm or arm64, see
# scripts/variant.py), or VARIANT@VERSION for a kernel version other than
# the default (kernel-patches/kernels.toml: 6.1, 6.12).  The version's
# Debian tarball (linux-source-6.1, linux-source-6.12) is extracted once
# into build/src/PACKAGE as a git repository (tag "base"); each target gets a
# git worktree of it, build/TARGET/src, with its series applied by "git
# am", and its own O= directory inside it, build/TARGET/src/obj: Kbuild
# then names the sources "../" in every command it records, the same in
# every target's objects.  The config is tinyconfig with the arch's base
# fragment (configs/virt-ARCH.config) and the variant's fragments merged
# by the kernel's merge_config.sh, then checked by configcheck.sh.  Steps
# whose inputs did not change are skipped, and ccache (outside the
# repository, shared by all targets) makes the other variants cheap.
#
# A new target starts from the objects of a built one when it can (a
# "donor": same arch, same config fragments, a series that is a prefix of
# its own, e.g. before for after), so that make rebuilds only what its
# own patches touch: after from before in 55 s instead of 126 s of ccache
# hits, the same Image byte for byte.  Its .config is the donor's too
# unless a patch after the donor's touches a Kconfig file (33 s then).
#
# A variant of a kernel developer's own git tree (tree = "PATH", ref =
# "COMMIT" in its file: scripts/tree/kernel_tree.py) builds that commit
# instead: the tree's objects are read through build/src's alternates, its
# worktree is build/TARGET/src as for the others, and its donor is the
# complete build nearest its commit (same arch and fragments, fewest files
# differing): the donor's sources are checked out, its objects copied and
# stamped, then the commit checked out over them.  A tree without the
# mailbox registry gets patch 0001 first when its fragments ask for it.
#
# Usage: build-kernel.sh [--tree-only] TARGET
#
# --tree-only stops after step 2: the target's tree, series applied, for
# scripts/convert/convert.sh, which writes a patch on top of it; it
# refuses (exit 2) a complete build whose series changed, rather than
# leave it unbuilt.
#
# Output, in build/TARGET: the kernel (arm: uImage; arm64: Image), config,
# mbox_bench.ko, fs_writer.ko, build.log and build-meta.json, which is
# written last: its presence means a complete build.  Exit codes as in lib.sh.

set -euo pipefail
LB_PROG=build
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

tree_only=
[ "${1:-}" != --tree-only ] || { tree_only=1 && shift; }
[ $# -eq 1 ] || lb_die 2 "usage: build-kernel.sh [--tree-only] TARGET"
lb_variant "$1"
arch=$lb_arch kernel=$lb_kernel variant=$lb_label patches=("${lb_patches[@]}") configs=("${lb_configs[@]}")
src_tree=$lb_tree src_ref=$lb_ref

# The compiler and the image to boot: guest/arches.toml.
lb_arch_info "$arch"
export ARCH=${lb_archinfo[kernel_arch]} CROSS_COMPILE=${lb_archinfo[cross_prefix]}
image=${lb_archinfo[kernel]}
lb_need make gcc ccache "${CROSS_COMPILE}gcc" bison flex bc git xz perl flock
[ "$image" != uImage ] || lb_need mkimage
# Reproducible version strings: a rebuild with nothing changed relinks
# nothing.
export KBUILD_BUILD_TIMESTAMP="2010-05-05 00:00:00 UTC" KBUILD_BUILD_USER=lockbench KBUILD_BUILD_HOST=lockbench
# The "#N" of uname -v: 1, not a count of the links made in this O= folder
# (a target that starts from a donor's objects would carry on its count).
export KBUILD_BUILD_VERSION=1
# The release is the tarball's version, never "6.12.118+": from 6.3 on
# scripts/setlocalversion appends "+" to a git tree not at a tag unless
# LOCALVERSION is set (empty is enough).
export LOCALVERSION=
# ccache hashes the locale (LANG, LC_ALL, LC_CTYPE, LC_MESSAGES): one for
# every caller, so that a terminal's builds and CI's (a job with no LANG)
# hit the same cache.
unset LANG LC_ALL LC_CTYPE LC_MESSAGES
export GIT_COMMITTER_NAME=lockbench GIT_COMMITTER_EMAIL=lockbench@localhost
kmake=(make -s "CC=ccache ${CROSS_COMPILE}gcc" "HOSTCC=ccache gcc" -j"$(($(nproc) + 1))")
mkdir -p "$LB_BUILD" "$CCACHE_DIR"
start=$(date +%s.%N)

# share_objects: fill the empty $obj with the objects of the best donor
# (see the top), the tree being at "base".  Every copied file is stamped
# with one time, a second before "git am" stamps what the series changes:
# make rebuilds exactly what differs from the donor's sources, since the
# donor's series is a prefix of this one.  Donors are complete builds
# (build-meta.json) not building now (their lock).
share_objects() {
	local d best='' best_len=-1 theirs
	for d in "$LB_BUILD"/*/; do
		d=${d%/}
		if [ "$d" = "$vdir" ] || [ ! -f "$d/build-meta.json" ] || [ ! -f "$d/src/obj/vmlinux" ] ||
			[ "$(cat "$d/group.id" 2>/dev/null)" != "$group_id" ]; then
			continue
		fi
		theirs=$(cat "$d/series.list" 2>/dev/null) || continue
		if [[ "$series_list"$'\n' == "$theirs"$'\n'* ]] && [ "${#theirs}" -gt "$best_len" ]; then
			best=$d best_len=${#theirs}
		fi
	done
	# None: the nearest build of the same kernel and arch whose fragments
	# are a subset of this one's (before for before-net, which adds
	# net.config): its objects, reconfigured, and Kbuild rebuilds what the
	# options it adds change (fixdep's per-option dependencies).
	if [ -z "$best" ]; then
		local best_cfgs=-1 n
		for d in "$LB_BUILD"/*/; do
			d=${d%/}
			if [ "$d" = "$vdir" ] || [ ! -f "$d/build-meta.json" ] || [ ! -f "$d/src/obj/vmlinux" ] ||
				[ "$(cat "$d/base.id" 2>/dev/null)" != "$base_id" ] || [ ! -s "$d/configs.list" ] ||
				[ -n "$(comm -23 "$d/configs.list" <(echo "$configs_list"))" ]; then
				continue
			fi
			theirs=$(cat "$d/series.list" 2>/dev/null) || continue
			n=$(wc -l <"$d/configs.list")
			[[ "$series_list"$'\n' == "$theirs"$'\n'* ]] || continue
			if [ "${#theirs}" -gt "$best_len" ] || { [ "${#theirs}" = "$best_len" ] && [ "$n" -gt "$best_cfgs" ]; }; then
				best=$d best_len=${#theirs} best_cfgs=$n
			fi
		done
		[ -z "$best" ] || donor_regroup=1
	fi
	[ -n "$best" ] || return 0
	# Busy (building now): no donor, a full ccache build instead.
	(
		flock -n 7 || exit 1
		rm -rf "$obj"
		cp -a "$best/src/obj" "$obj.tmp" && mv "$obj.tmp" "$obj"
	) 7<"$best/.build.lock" || {
		rm -rf "$obj" "$obj.tmp"
		return 0
	}
	# One time for all: stamped one by one, a header would be newer than
	# the objects stamped before it.
	find "$obj" -exec touch -h -d "@$(date +%s)" {} +
	sleep 1
	basename "$best" >"$vdir/objects-from"
	donor_patches=$(wc -l <"$best/series.list")
	if [ -n "$donor_regroup" ]; then
		echo "build: $variant: objects from $(basename "$best") (its fragments are a subset of these: reconfigured), rebuilding what the options and the series change"
	else
		echo "build: $variant: objects from $(basename "$best"), rebuilding what its series changes"
	fi
}

# kconfig_untouched: none of the series' patches after the donor's
# changes a Kconfig file, so the donor's .config (same arch and
# fragments: its group) is this target's too, and step 3 has nothing to
# do (tinyconfig + merge_config + olddefconfig: ~20 s).
kconfig_untouched() {
	local p
	[ -z "$donor_regroup" ] || return 1 # other fragments than the donor's
	if [ -n "$donor_head" ]; then
		if git -C "$tree" diff --name-only "$donor_head" HEAD | grep -qE '(^|/)Kconfig'; then
			return 1
		fi
		return 0
	fi
	[ -n "$donor_patches" ] || return 1
	for p in "${patches[@]:donor_patches}"; do
		! grep -qE '^\+\+\+ b/(.*/)?Kconfig' "$p" || return 1
	done
}

# apply_series: the variant's patches onto the worktree's HEAD, by git am.
apply_series() {
	local p
	for p in "${patches[@]}"; do
		if ! git -C "$tree" am -q --keep-cr "$p" >"$vdir/am.log" 2>&1; then
			git -C "$tree" am --abort >/dev/null 2>&1 || true
			lb_die 4 "patch $(basename "$p") does not apply to ${src_commit:+$src_tree at ${src_commit:0:12}}${src_commit:-$pkg $pkgver} (variant $variant): see $vdir/am.log"
		fi
	done
}

# share_tree_objects: for a variant of a git tree, its series applied,
# fill the empty $obj with the objects of the complete build whose sources
# are nearest (scripts/tree/kernel_tree.py donor): the donor's sources checked
# out, its objects copied and stamped newer than them, then this
# variant's commit checked out again, which rewrites exactly the files
# that differ.
share_tree_objects() {
	local found best head stamp final
	final=$(git -C "$tree" rev-parse HEAD)
	# shellcheck disable=SC2046 # one sha256 a word
	found=$(lb_py -m scripts.tree.kernel_tree donor "$LB_BUILD" "$repo" "$vdir" "$final" \
		"$arch" $(sha256sum "${configs[@]}" | cut -d' ' -f1)) || return 0
	[ -n "$found" ] || return 0
	read -r best head <<<"$found"
	git -C "$tree" checkout -q -f --detach "$head"
	(
		flock -n 7 || exit 1
		rm -rf "$obj"
		cp -a "$best/src/obj" "$obj.tmp" && mv "$obj.tmp" "$obj"
	) 7<"$best/.build.lock" || {
		rm -rf "$obj" "$obj.tmp"
		git -C "$tree" checkout -q -f --detach "$final"
		return 0
	}
	# Newer than every file the checkout above wrote (sub-second times).
	sleep 1
	stamp=$(date +%s)
	find "$obj" -exec touch -h -d "@$stamp" {} +
	sleep 1
	git -C "$tree" checkout -q -f --detach "$final"
	donor_head=$head
	basename "$best" >"$vdir/objects-from"
	echo "build: $variant: objects from $(basename "$best"), rebuilding what differs from its sources"
}

# 1. The source: a tarball variant's kernel version (kernel-patches/
# kernels.toml); a tree's commit (checked: one line and exit 2 for a
# missing ref, a dirty tree, not a kernel, a version before 6.1) is
# hosted by the repository of the tested version nearest its own, whose
# builds are its donors, and its own objects are read from the tree.
src_commit='' src_subject=''
if [ -n "$src_tree" ]; then
	info=$(lb_py -m scripts.tree.kernel_tree resolve "$src_tree" "$src_ref") || exit 2
	src_commit=$(sed -n 's/^commit //p' <<<"$info")
	src_subject=$(sed -n 's/^subject //p' <<<"$info")
	kernel=$(sed -n 's/^base //p' <<<"$info")
	warning=$(sed -n 's/^warning //p' <<<"$info")
	[ -z "$warning" ] || lb_err "warning: $variant: $warning"
	if [ "$(sed -n 's/^registry //p' <<<"$info")" = no ] &&
		[[ " ${configs[*]} " == *"/mbox-registry.config "* ]]; then
		patches=("$(sed -n 's/^registry_patch //p' <<<"$info")" "${patches[@]}")
		echo "build: $variant: ${src_commit:0:12} has no mailbox registry: patch 0001 first"
	fi
fi
lb_kernel_info "$kernel"
pkg=${lb_kernelinfo[package]}
lb_need_file "${lb_kernelinfo[tarball]}" "$pkg"
pkgver=$(dpkg-query -W -f='${Version}' "$pkg")

# 1b. The pristine tree, extracted once per Debian package version, as
# a git repository of its own (build/src/PACKAGE, tag "base").
srcdir=$LB_BUILD/src
repo=$srcdir/$pkg
exec 9>"$LB_BUILD/.src.lock"
flock 9
# Before 6.12 the one tree's stamp was build/src/.stamp.
[ "$pkg" != linux-source-6.1 ] || [ ! -f "$srcdir/.stamp" ] || [ -e "$repo.stamp" ] ||
	mv "$srcdir/.stamp" "$repo.stamp"
if [ "$(cat "$repo.stamp" 2>/dev/null)" != "$pkgver" ]; then
	echo "build: extracting $pkg $pkgver into $repo"
	rm -rf "$repo" "$repo.stamp"
	mkdir -p "$srcdir"
	tar -C "$srcdir" -xf "${lb_kernelinfo[tarball]}"
	[ -d "$repo" ] || lb_die 5 "${lb_kernelinfo[tarball]} has no top folder $pkg"
	# Debian's top-level .gitignore ignores everything: add with -f.
	(cd "$repo" &&
		git init -q -b debian . &&
		git add -A -f . &&
		git -c user.name=lockbench -c user.email=lockbench@localhost \
			commit -q -m "Debian $pkg $pkgver" &&
		git tag base)
	echo "$pkgver" >"$repo.stamp"
fi
# A tree whose variants were built here and that is gone since (a test's
# scratch tree): git would complain of its folder in every command.
[ ! -s "$repo/.git/objects/info/alternates" ] || lb_py -m scripts.tree.kernel_tree prune "$repo"
# A variant of the user's git tree: its commit made readable here, never
# written there.
if [ -n "$src_tree" ]; then
	lb_py -m scripts.tree.kernel_tree attach "$repo" "$src_tree" || exit 2
	git -C "$repo" update-ref "refs/lockbench/commits/$src_commit" "$src_commit"
fi
flock -u 9
first=${src_commit:-base}

# 2. The variant's tree: a worktree with its series applied.
donor_patches='' donor_head='' donor_regroup='' # set by share_objects and share_tree_objects
vdir=$LB_BUILD/$variant
tree=$vdir/src
obj=$tree/obj
mkdir -p "$vdir"
# Held while this target builds: a target that takes it as its donor
# copies no half-built objects.
exec 8>"$vdir/.build.lock"
if ! flock -n 8; then
	echo "build: $variant is being built by another command: waiting for it to end" >&2
	flock 8
fi
rm -rf "$vdir/obj" # the objects' folder before they moved into src/
# The series, one patch hash a line: a donor's must be a prefix of it.
# (None for a tree's commit that needs no patch: sha256sum with no file
# would read standard input, a terminal's.)
series_list=
[ ${#patches[@]} -eq 0 ] || series_list=$(sha256sum "${patches[@]}" | cut -d' ' -f1)
series_id=$(printf '%s\n%s\n' "${src_commit:-$pkgver}" "$series_list" | sha256sum | cut -d' ' -f1)
# What a donor must share besides: the arch and the config fragments (a
# tree's commits are never a tarball variant's donor: share_tree_objects).
base_id="${src_commit:+tree }$pkgver $arch"
group_id=$({
	echo "$base_id"
	sha256sum "${configs[@]}" | cut -d' ' -f1
} | sha256sum | cut -d' ' -f1)
# The fragments as a set (sorted hashes): a donor of another group must
# have a subset of them (share_objects).
configs_list=$(sha256sum "${configs[@]}" | cut -d' ' -f1 | sort -u)
# --tree-only (convert) needs the tree only: it never leaves a complete
# build unbuilt (issue #43), so it refuses one of another series.
if [ -n "$tree_only" ] && [ -f "$vdir/build-meta.json" ] &&
	[ "$(cat "$vdir/series.sha256" 2>/dev/null)" != "$series_id" ]; then
	lb_die 2 "$variant was built from another series than its variant file names now: build it first (./run.sh build $variant); a command that needs only its tree leaves a built kernel as it is"
fi
# A tree left from an earlier extraction is not a worktree of this one;
# a worktree whose folder was removed (rm -rf build/VARIANT) is still
# listed until pruned, and is made again.
if [ ! -e "$tree/.git" ] ||
	! git -C "$repo" worktree list --porcelain | grep -qxF "worktree $tree"; then
	# A tree and its objects take ~1.8 GB: say so now rather than with
	# git's or the compiler's "No space left on device" minutes later.
	free_kb=$(df -Pk "$LB_BUILD" | awk 'NR == 2 { print $4 }')
	[ "$free_kb" -ge $((LB_TREE_MB * 1024)) ] ||
		lb_die 7 "$((free_kb / 1024)) MB free in $LB_BUILD, a new kernel tree needs $LB_TREE_MB MB: free some space (old trees: rm -rf $LB_BUILD/VARIANT)"
	rm -rf "$tree" "$vdir/series.sha256"
	git -C "$repo" worktree prune
	git -C "$repo" worktree add -q --detach "$tree" "$first"
fi
if [ "$(cat "$vdir/series.sha256" 2>/dev/null)" != "$series_id" ]; then
	rm -f "$vdir/series.sha256" "$vdir/objects-from"
	# (--tree-only: the same series as the complete build, checked above)
	[ -n "$tree_only" ] || rm -f "$vdir/build-meta.json"
	git -C "$tree" am --abort >/dev/null 2>&1 || true
	donor_patches='' donor_head='' donor_regroup=''
	if [ -n "$src_commit" ]; then
		git -C "$tree" checkout -q -f --detach "$src_commit"
		apply_series
		[ -n "$tree_only" ] || [ -f "$obj/vmlinux" ] || share_tree_objects
	else
		git -C "$tree" checkout -q -f --detach base
		[ -n "$tree_only" ] || [ -f "$obj/vmlinux" ] || share_objects
		apply_series
	fi
	echo "$series_id" >"$vdir/series.sha256"
fi
echo "$group_id" >"$vdir/group.id"
echo "$base_id" >"$vdir/base.id"
echo "$configs_list" >"$vdir/configs.list"
echo "$series_list" >"$vdir/series.list"
[ -z "$tree_only" ] || exit 0
mkdir -p "$obj"

# 3. The config: tinyconfig + fragments, checked.
config_id=$({
	echo "$series_id"
	sha256sum "${configs[@]}" | cut -d' ' -f1
} | sha256sum | cut -d' ' -f1)
if [ -f "$obj/.config" ] && kconfig_untouched; then
	echo "$config_id" >"$vdir/config.sha256"
fi
if [ ! -f "$obj/.config" ] || [ "$(cat "$vdir/config.sha256" 2>/dev/null)" != "$config_id" ]; then
	rm -f "$vdir/config.sha256"
	{
		"${kmake[@]}" -C "$tree" O="$obj" tinyconfig &&
			"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${configs[@]}" &&
			"${kmake[@]}" -C "$tree" O="$obj" olddefconfig
	} >"$vdir/config.log" 2>&1 || lb_die 5 "configuring $variant failed: see $vdir/config.log"
	"$LB_ROOT/scripts/configcheck.sh" --tree "$tree" "$obj/.config" "${configs[@]}" ||
		lb_die 6 "variant $variant: requested config options did not stick (see above)"
	echo "$config_id" >"$vdir/config.sha256"
fi

# 4. The kernel.
echo "build: $variant: kernel ($(basename "$obj"))"
if ! "${kmake[@]}" -C "$tree" O="$obj" Image modules >"$vdir/build.log" 2>&1; then
	tail -n 15 "$vdir/build.log" >&2
	lb_die 5 "kernel build of variant $variant failed: see $vdir/build.log"
fi

# 5. The benchmark module, built out of the source folder (Kbuild writes
# its objects beside the sources).
mod=$vdir/module
rm -rf "$mod"
mkdir -p "$mod"
cp "$LB_ROOT"/bench-module/Kbuild "$LB_ROOT"/bench-module/*.[ch] "$mod"/
if ! "${kmake[@]}" -C "$obj" M="$mod" modules >"$vdir/module.log" 2>&1; then
	tail -n 15 "$vdir/module.log" >&2
	lb_die 5 "module build for variant $variant failed: see $vdir/module.log"
fi

# 6. Artifacts and build-meta.json, last.
if [ "$image" = uImage ]; then
	# The uncompressed Image in a legacy uImage header: QEMU loads it where
	# the kernel expects to run (arm: RAM + 0x8000 on -M virt), so the
	# guest skips the zImage decompressor, ~2 s under TCG.
	la=${lb_archinfo[load_address]}
	mkimage -A "$ARCH" -O linux -T kernel -C none -a "$la" -e "$la" \
		-n "lockbench $variant" -d "$obj/arch/$ARCH/boot/Image" "$vdir/uImage" >/dev/null
else
	# The kernel's own Image (arm64 carries its own header: QEMU places it
	# as the boot protocol says, nothing to decompress).
	cp "$obj/arch/$ARCH/boot/Image" "$vdir/Image.tmp"
	mv "$vdir/Image.tmp" "$vdir/Image"
fi
cp "$obj/.config" "$vdir/config"
cp "$mod/mbox_bench.ko" "$vdir/mbox_bench.ko"
# The file system writer of guest/inside/lockload (bench-module/fs_writer.c).
cp "$mod/fs_writer.ko" "$vdir/fs_writer.ko"
harness=$(git -C "$LB_ROOT" rev-parse -q --verify HEAD 2>/dev/null || echo none)
[ -z "$(git -C "$LB_ROOT" status --porcelain 2>/dev/null)" ] || harness="$harness-dirty"
end=$(date +%s.%N)
lb_py -m scripts.variant meta "$variant" \
	--kernel-version "$("${kmake[@]}" -C "$tree" O="$obj" kernelrelease)" \
	--package-version "$pkgver" \
	--config "$obj/.config" \
	--compiler "$("${CROSS_COMPILE}gcc" --version | head -n 1)" \
	--build-seconds "$(echo "$end - $start" | bc)" \
	--tree-commit "$(git -C "$tree" rev-parse HEAD)" \
	--source-commit "$src_commit" --source-subject "$src_subject" \
	"${patches[@]/#/--patch=}" \
	--harness-commit "$harness" \
	--objects-from "$(cat "$vdir/objects-from" 2>/dev/null || true)" >"$vdir/build-meta.json.tmp"
mv "$vdir/build-meta.json.tmp" "$vdir/build-meta.json"
printf 'build: %s: done in %.0f s: %s\n' "$variant" "$(echo "$end - $start" | bc)" "$vdir"
