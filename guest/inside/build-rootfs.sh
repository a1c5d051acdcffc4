#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the guest's root file system: an uncompressed newc cpio archive
# with Debian's busybox-static and perf for the guest's architecture
# (armhf for arm guests, arm64 for arm64 ones: the real binary, the
# closure of its ELF NEEDED libraries and the dynamic loader), unpacked
# from the Debian archive without emulation by "mmdebstrap
# --variant=extract" and pruned to what guest/inside/rootfs-files.txt lists.
# There is no /init: the harness appends its own in a second cpio archive.
#
# The packages come from the host's apt sources for the suite (the
# /etc/apt/sources.list{,.d} files that name it), else from mmdebstrap's
# default mirrors; set ROOTFS_MIRROR to pass mmdebstrap other MIRROR
# arguments (whitespace separated).  When the host's sources fail twice (a
# mirror mid-sync, or an index that does not match its Release file), the
# packages come from the suite and its -updates on deb.debian.org, without
# the security archive, and the build says so.
#
# Nothing is done when OUTDIR/inputs.sha256 matches this script, the
# guest/inside/rootfs* data files and the arch.  The unpacked packages are kept
# in ~/.cache/lockbench/rootfs (LOCKBENCH_ROOTFS_CACHE) and reused while
# the suite, package list and mirrors are the same, so a change to the
# pruning, or a fresh clone, needs no network; --force
# downloads the packages afresh (new versions) and rebuilds.
#
# Usage: build-rootfs.sh [--force] [--arch arm|arm64] [OUTDIR]
#
#	--arch is the guests' architecture (default arm: Debian armhf;
#	arm64: Debian arm64).  OUTDIR defaults to build/rootfs in the
#	repository for arm, build/rootfs-arm64 for arm64 (guest/arches.toml
#	says which).  It receives
#	rootfs.cpio, packages.txt ("name version arch" of the packages the
#	archive's files come from), rootfs.list (the archive's entries),
#	and inputs.sha256 (the cache key, written last).  Exit codes as in
#	scripts/lib.sh.

set -euo pipefail
export LC_ALL=C
LB_PROG=build-rootfs
# shellcheck source=../../scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

usage="usage: build-rootfs.sh [--force] [--arch arm|arm64] [OUTDIR]"
force=0
arch=arm
outdir=
while [ $# -gt 0 ]; do
	case $1 in
	--force) force=1 ;;
	--arch)
		lb_need_value "$1" $#
		arch=$2
		shift
		;;
	-h | --help) lb_help && exit 0 ;;
	--) shift; break ;;
	-*) lb_die 2 "unknown option '$1' ($usage)" ;;
	*) lb_set_once outdir "$1" ;;
	esac
	shift
done
if [ $# -gt 0 ]; then
	if [ -n "$outdir" ] || [ $# -gt 1 ]; then
		lb_die 2 "more than one OUTDIR ($usage)"
	fi
	outdir=$1
fi
# The Debian architecture, the GNU triplet (library folders, readelf) and
# the folder: guest/arches.toml.
lb_arch_info "$arch"
debarch=${lb_archinfo[debian]} triplet=${lb_archinfo[triplet]}
outdir=${outdir:-$LB_BUILD/${lb_archinfo[rootfs]}}
[ -n "$outdir" ] || lb_die 2 "empty OUTDIR ($usage)"
[ ! -e "$outdir" ] || [ -d "$outdir" ] ||
	lb_die 2 "OUTDIR '$outdir' exists and is not a directory"

readelf=$triplet-readelf
lb_need mmdebstrap dpkg-deb cpio "$readelf" tar sha256sum flock

datafile=$LB_ROOT/guest/inside/rootfs-files.txt
[ -f "$datafile" ] || lb_die 2 "missing data file $datafile"

mkdir -p "$outdir" || lb_die 2 "cannot create OUTDIR '$outdir'"
outdir=$(cd "$outdir" && pwd)
exec 9>"$outdir/.lock"
flock 9

# The cache key: the SHA-256 of this script and of every guest/inside/rootfs*
# data file, as sha256sum lines with paths relative to the repository,
# and the arch with what guest/arches.toml says of it.
key=$(
	cd "$LB_ROOT" && sha256sum guest/inside/build-rootfs.sh guest/inside/rootfs*
	echo "arch $arch"
	echo "$lb_archspec"
)

report() {
	local size entries
	size=$(stat -c %s "$outdir/rootfs.cpio")
	entries=$(wc -l <"$outdir/rootfs.list")
	printf '%s: %s: %d bytes (%d.%d MiB), %d entries%s\n' "$LB_PROG" \
		"$outdir/rootfs.cpio" "$size" $((size >> 20)) \
		$(((size & 1048575) * 10 >> 20)) "$entries" "$1"
}

if [ "$force" = 0 ] && [ -f "$outdir/inputs.sha256" ] &&
	[ "$(cat "$outdir/inputs.sha256")" = "$key" ] &&
	[ -f "$outdir/rootfs.cpio" ] && [ -f "$outdir/rootfs.list" ] &&
	[ -f "$outdir/packages.txt" ]; then
	report " (up to date)"
	exit 0
fi
rm -f "$outdir/inputs.sha256"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/build-rootfs.XXXXXX")
cleanup() {
	chmod -R u+w "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- Read the data file. ---------------------------------------------

suite=
packages=()
dirs=()
applets=()
files=()
lineno=0
bad() { lb_die 2 "guest/inside/rootfs-files.txt:$lineno: $*"; }
while read -r word rest || [ -n "$word" ]; do
	lineno=$((lineno + 1))
	rest=${rest%%#*}
	read -ra args <<<"$rest"
	case $word in
	'' | '#'*) continue ;;
	suite) [ ${#args[@]} -eq 1 ] || bad "usage: suite SUITE"; suite=${args[0]} ;;
	package) packages+=("${args[@]}") ;;
	dir)
		if ! [[ ${#args[@]} -ge 1 && ${#args[@]} -le 2 &&
			${args[0]} == /?* && ${args[1]:-755} =~ ^[0-7]{3,4}$ ]]; then
			bad "usage: dir /PATH [OCTAL-MODE]"
		fi
		dirs+=("${args[0]#/} ${args[1]:-755}")
		;;
	applet) applets+=("${args[@]}") ;;
	file)
		for f in "${args[@]}"; do
			[[ $f == /?* ]] || bad "not an absolute path: $f"
			files+=("${f#/}")
		done
		;;
	*) bad "unknown directive '$word'" ;;
	esac
done <"$datafile"
[ -n "$suite" ] || lb_die 2 "guest/inside/rootfs-files.txt: no suite"
[ ${#packages[@]} -gt 0 ] || lb_die 2 "guest/inside/rootfs-files.txt: no package"

# --- Download and unpack the packages (or reuse them). ------------------

# Where from: ROOTFS_MIRROR, else the host's apt source files that name the
# suite (or one of its -updates, -security... suites), else nothing, which
# makes mmdebstrap use deb.debian.org plus the updates and security archives.
mirrors=()
if [ -n "${ROOTFS_MIRROR:-}" ]; then
	read -ra mirrors <<<"$ROOTFS_MIRROR"
else
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		grep -Eq "^[^#]*[[:space:]]$suite(-[a-z]+)?([[:space:]]|\$)" "$f" &&
			mirrors+=("$f")
	done
fi
# Second choice, when those fail (not with ROOTFS_MIRROR): the suite and
# its -updates from deb.debian.org, without the security archive.  Seen on
# this project's machines: a mirror whose bookworm-security armhf index did
# not match its Release file for hours (apt refuses it), which took every
# boot of a CI run with it.  A guest that runs only the benchmark needs no
# security update; the build says when it used this.
fallback=()
[ -n "${ROOTFS_MIRROR:-}" ] ||
	fallback=("deb http://deb.debian.org/debian $suite main"
		"deb http://deb.debian.org/debian $suite-updates main")

mmdebstrap_args=(--variant=extract "--architectures=$debarch"
	"--include=$(
		IFS=,
		echo "${packages[*]}"
	)" "$suite")
# The package cache lives outside the repository, beside ccache, one
# folder per key (the mmdebstrap command, its mirrors and the source files
# they name), so that a fresh clone (and CI) downloads nothing that an
# earlier build already has.  A folder is complete or absent: it is filled
# under another name and renamed into place.
cachebase=${LOCKBENCH_ROOTFS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lockbench/rootfs}
key_of() {
	local m
	{
		echo "mmdebstrap ${mmdebstrap_args[*]} OUT.tar $*"
		for m in "$@"; do
			[ ! -f "$m" ] || cat "$m"
		done
	} | sha256sum
}
dir_of() {
	echo "$cachebase/debian-$debarch-${1:0:16}"
}
cached() {
	local c
	c=$(dir_of "$1")/debian
	[ -f "$c.tar" ] && [ -f "$c.debs" ] && [ -f "$c.files" ] &&
		[ "$(cat "$c.key" 2>/dev/null)" = "$1" ]
}

# The extract variant leaves no dpkg database: a hook records the packages
# and their files from the .debs while they are still there.
mkdir "$tmp/hooks"
cat >"$tmp/hooks/extract-list-debs" <<'HOOK'
#!/bin/sh
set -e
for deb in "$1"/var/cache/apt/archives/*.deb; do
	pkg=$(dpkg-deb --show --showformat='${Package}' "$deb")
	dpkg-deb --show --showformat='${Package} ${Version} ${Architecture}\n' \
		"$deb" >>"$ROOTFS_DEBS"
	dpkg-deb --fsys-tarfile "$deb" | tar -t |
		sed -e 's|^\./||' -e '/^$/d' -e "s|^|$pkg |" >>"$ROOTFS_FILES"
done
HOOK
chmod +x "$tmp/hooks/extract-list-debs"

# download KEY MIRROR... : the packages into KEY's cache folder, a second
# try after 30 s (a mirror caught mid-sync); 1 when both fail.
download() {
	local pkey=$1 pause staged
	shift
	echo "$LB_PROG: mmdebstrap ${mmdebstrap_args[*]} $*"
	for pause in 30 -; do
		: >"$tmp/debs"
		: >"$tmp/files"
		rm -f "$tmp/debian.tar"
		if ROOTFS_DEBS=$tmp/debs ROOTFS_FILES=$tmp/files mmdebstrap \
			--hook-directory="$tmp/hooks" "${mmdebstrap_args[@]}" \
			"$tmp/debian.tar" "$@" >"$tmp/mmdebstrap.log" 2>&1; then
			break
		fi
		tail -n 12 "$tmp/mmdebstrap.log" >&2
		[ "$pause" != - ] || return 1
		lb_err "mmdebstrap failed (log above); trying again in $pause s"
		sleep "$pause"
	done
	[ -s "$tmp/debs" ] || lb_die 1 "mmdebstrap's extract hook listed no packages"
	sort -o "$tmp/debs" "$tmp/debs"
	mkdir -p "$cachebase"
	staged=$(mktemp -d "$cachebase/.new.XXXXXX")
	mv "$tmp/debian.tar" "$staged/debian.tar"
	mv "$tmp/debs" "$staged/debian.debs"
	mv "$tmp/files" "$staged/debian.files"
	echo "$pkey" >"$staged/debian.key"
	rm -rf "$(dir_of "$pkey")"
	# Another build that got there first has put the same packages.
	mv -T "$staged" "$(dir_of "$pkey")" 2>/dev/null || rm -rf "$staged"
}

pkey=$(key_of "${mirrors[@]}")
pkey2=$(key_of "${fallback[@]}")
[ "$force" = 0 ] || rm -rf "$(dir_of "$pkey")" "$(dir_of "$pkey2")"
if cached "$pkey"; then
	echo "$LB_PROG: reusing $(dir_of "$pkey")/debian.tar (--force downloads afresh)"
elif [ ${#fallback[@]} -gt 0 ] && cached "$pkey2"; then
	pkey=$pkey2
	echo "$LB_PROG: reusing $(dir_of "$pkey")/debian.tar, from $suite and" \
		"$suite-updates without the security archive (--force tries the host's sources again)"
elif download "$pkey" "${mirrors[@]}"; then
	:
elif [ ${#fallback[@]} -gt 0 ] && download "$pkey2" "${fallback[@]}"; then
	pkey=$pkey2
	lb_err "the host's apt sources failed (log above): the root fs comes from" \
		"$suite and $suite-updates on deb.debian.org, without the security archive"
else
	lb_die 1 "mmdebstrap failed (log above)"
fi
cache=$(dir_of "$pkey")/debian

full=$tmp/full
root=$tmp/root
mkdir "$full" "$root"
# Skip the bulky trees that hold no ELF file perf needs (two thirds of
# the bytes), unless a "file" directive asks for something in them.
excludes=(--exclude=./dev)
for x in ./usr/share ./usr/include './usr/lib/python3*' './usr/lib/*/perl*'; do
	for f in "${files[@]}"; do
		# shellcheck disable=SC2053 # $x is a pattern
		[[ ./$f != $x && ./$f != $x/* ]] || continue 2
	done
	excludes+=("--exclude=$x")
done
tar -C "$full" -xf "$cache.tar" --no-same-owner "${excludes[@]}" ||
	lb_die 1 "cannot unpack $cache.tar"

# --- Stage the pruned tree in $root. ----------------------------------

declare -A staged=() # paths taken from the packages, for packages.txt

# normpath PATH: PATH relative to /, without ".", ".." and empty parts.
normpath() {
	local -a in out=()
	local c
	IFS=/ read -ra in <<<"$1"
	for c in "${in[@]}"; do
		case $c in
		'' | .) ;;
		..) [ ${#out[@]} -eq 0 ] || out=("${out[@]:0:${#out[@]}-1}") ;;
		*) out+=("$c") ;;
		esac
	done
	(
		IFS=/
		echo "${out[*]}"
	)
}

# stage PATH: copy PATH from $full to $root, resolving every symlink on the
# way inside $full and recreating it in $root; set $staged_to to the path
# of the file (or directory) that PATH resolves to.  Fails if there is none.
stage() {
	local todo cur='' comp next target hops=0
	todo=$(normpath "$1")
	while [ -n "$todo" ]; do
		comp=${todo%%/*}
		if [[ $todo == */* ]]; then todo=${todo#*/}; else todo=; fi
		next=${cur:+$cur/}$comp
		if [ -L "$full/$next" ]; then
			hops=$((hops + 1))
			[ $hops -le 40 ] || lb_die 1 "too many symlinks in /$1"
			target=$(readlink "$full/$next")
			[ -L "$root/$next" ] || ln -s "$target" "$root/$next"
			staged[$next]=1
			[[ $target == /* ]] || target=${cur:+$cur/}$target
			todo=$(normpath "$target${todo:+/$todo}")
			cur=
		elif [ -d "$full/$next" ]; then
			[ -d "$root/$next" ] || mkdir "$root/$next"
			cur=$next
		elif [ -e "$full/$next" ] && [ -z "$todo" ]; then
			[ -e "$root/$next" ] || cp -p "$full/$next" "$root/$next"
			staged[$next]=1
			cur=$next
		else
			return 1
		fi
	done
	staged_to=$cur
}

is_elf() {
	[ -f "$1" ] && [ "$(head -c 4 "$1")" = $'\x7fELF' ]
}

# closure PATH...: stage the dynamic loader and NEEDED libraries of the
# staged ELF files PATH..., recursively.
declare -A seen=()
closure() {
	local -a queue=("$@") needed rpath
	local f lib d found interp dyn
	while [ ${#queue[@]} -gt 0 ]; do
		f=${queue[0]}
		queue=("${queue[@]:1}")
		[ -z "${seen[$f]:-}" ] || continue
		seen[$f]=1
		is_elf "$root/$f" || continue
		interp=$("$readelf" -lW "$root/$f" |
			sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
		if [ -n "$interp" ]; then
			stage "$interp" ||
				lb_die 1 "/$f: program interpreter $interp not found"
			queue+=("$staged_to")
		fi
		dyn=$("$readelf" -dW "$root/$f")
		mapfile -t needed < <(sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' <<<"$dyn")
		# DT_RUNPATH or DT_RPATH first, with $ORIGIN; then the default
		# paths of Debian's loader for the arch (there is no ld.so.cache).
		rp=$(sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p' <<<"$dyn" | head -n 1)
		rp=${rp//"\${ORIGIN}"/"\$ORIGIN"}
		rp=${rp//"\$ORIGIN"//${f%/*}}
		IFS=: read -ra rpath <<<"$rp"
		for lib in "${needed[@]}"; do
			found=
			for d in "${rpath[@]}" "/lib/$triplet" \
				"/usr/lib/$triplet" /lib /usr/lib; do
				[[ $lib != */* ]] || d=
				if [ -e "$full/$d/$lib" ] || [ -L "$full/$d/$lib" ]; then
					stage "$d/$lib" && found=$staged_to && break
				fi
			done
			[ -n "$found" ] || lb_die 1 "/$f: library $lib not found"
			queue+=("$found")
		done
	done
}

# busybox and the applets it has.
stage bin/busybox || lb_die 1 "no /bin/busybox in the packages"
busybox=$staged_to
# The applet names are one block of NUL-terminated strings, "[", "[[",
# "acpid", ... in busybox's data; the ARM binary cannot run here.
mapfile -t have < <(tr '\0' '\n' <"$full/$busybox" | awk '
	p == "[" && $0 == "[[" { on = 1; print "["; print; next }
	on && !/^[a-z0-9][a-z0-9_.-]*$/ { exit }
	on { print }
	{ p = $0 }')
declare -A has=()
for a in "${have[@]}"; do has[$a]=1; done
[ ${#have[@]} -gt 100 ] ||
	lb_die 1 "cannot find busybox's applet list in /$busybox"
absent=()
for a in "${applets[@]}"; do
	if [ -n "${has[$a]:-}" ]; then
		[ -L "$root/bin/$a" ] || ln -s /bin/busybox "$root/bin/$a"
	else
		absent+=("$a")
	fi
done
[ ${#absent[@]} -eq 0 ] ||
	echo "$LB_PROG: busybox-static lacks these applets: ${absent[*]}"

# perf: Debian's /usr/bin/perf is either the binary or (before 6.1) a
# script that runs perf_<version> for the running kernel: take the binary.
perf=
if is_elf "$full/usr/bin/perf" && [ ! -L "$full/usr/bin/perf" ]; then
	perf=usr/bin/perf
else
	for f in "$full"/usr/bin/perf_[0-9]*; do
		if is_elf "$f" && [ ! -L "$f" ]; then perf=${f#"$full"/}; fi
	done
fi
[ -n "$perf" ] || lb_die 1 "no perf binary in the packages"
mkdir -p "$root/usr/bin"
rm -f "$root/usr/bin/perf"
cp -p "$full/$perf" "$root/usr/bin/perf"
staged[$perf]=1
elves=(usr/bin/perf)

for f in "${files[@]}"; do
	mapfile -t matches < <(cd "$full" || exit; compgen -G "$f" || true)
	[ ${#matches[@]} -gt 0 ] || lb_die 1 "/$f: not in the packages"
	for m in "${matches[@]}"; do
		stage "$m" || lb_die 1 "/$m: not in the packages"
		elves+=("$staged_to")
	done
done
closure "${elves[@]}"

for d in "${dirs[@]}"; do
	mkdir -p "$root/${d% *}"
	chmod "${d#* }" "$root/${d% *}"
done

# --- packages.txt: the packages the staged files come from. ------------

for p in "${!staged[@]}"; do
	echo "$p"
done | awk '
	FILENAME == ARGV[1] { ver[$1] = $2 " " $3; next }
	FILENAME == ARGV[2] {
		f = substr($0, length($1) + 2)
		sub(/\/$/, "", f)
		owner[f] = $1
		next
	}
	{
		p = $0
		if (!(p in owner)) {	# merged /usr: a /lib path is /usr/lib
			if (p ~ /^usr\//) p = substr(p, 5); else p = "usr/" p
		}
		if (!(p in owner)) { print "no package owns /" $0 > "/dev/stderr"; bad = 1; next }
		if (!(owner[p] in done)) print owner[p], ver[owner[p]]
		done[owner[p]] = 1
	}
	END { exit bad }' "$cache.debs" "$cache.files" - | sort >"$tmp/packages.txt" ||
	lb_die 1 "cannot tell which packages the files come from"

# --- Write the archive. -----------------------------------------------

# GNU cpio writes it, as it writes each boot's initrd (guest/qemu.py
# make_initrd): entries root's (-R 0:0), inodes renumbered and no device
# numbers (--reproducible), every mtime the same, names in C order, so
# that the same packages give the same bytes.  No device node, so no
# mknod and no root: the kernel unpacks its built-in initramfs
# (usr/default_cpio_list: /dev/console for init's stdio) before this
# archive, and init mounts devtmpfs on /dev.
epoch=${SOURCE_DATE_EPOCH:-0}
find "$root" -mindepth 1 -exec touch -h -d "@$epoch" {} +
(cd "$root" && find . -mindepth 1 -printf '%P\n' | sort) >"$tmp/names"
(cd "$root" && cpio -o -H newc -R 0:0 --reproducible --quiet) <"$tmp/names" >"$tmp/rootfs.cpio" ||
	lb_die 1 "cpio could not write the archive"
(cd "$root" && find . -mindepth 1 -printf '%M %s /%P\n' | sort -k 3) >"$tmp/rootfs.list"

count=$(cpio -it --quiet <"$tmp/rootfs.cpio" | wc -l) ||
	lb_die 1 "cpio cannot read the archive written"
[ "$count" -eq "$(wc -l <"$tmp/rootfs.list")" ] ||
	lb_die 1 "cpio reads $count entries in the archive, not $(wc -l <"$tmp/rootfs.list")"

mv "$tmp/rootfs.cpio" "$outdir/rootfs.cpio"
mv "$tmp/rootfs.list" "$outdir/rootfs.list"
mv "$tmp/packages.txt" "$outdir/packages.txt"
echo "$key" >"$outdir/inputs.sha256"
report ", from $(wc -l <"$outdir/packages.txt") packages (packages.txt)"
