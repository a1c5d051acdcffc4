# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Common definitions for the harness's shell scripts; source it, don't run it.
#
# Exit codes used by every script:
#   0 ok, 1 a test or check failed, 2 bad input or usage, 3 a missing
#   package (run ./run.sh setup), 4 a patch that does not apply, 5 a build
#   that failed, 6 a config option that did not stick, 7 too little disk
#   space for a new kernel tree.

LB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LB_BUILD=${LOCKBENCH_BUILD:-$LB_ROOT/build}
LB_PY=/usr/bin/python3
# ccache lives outside the repository so that a fresh clone (and CI) reuses
# it; CCACHE_BASEDIR makes the build paths relative, so hits carry over
# between variants and clones.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lockbench/ccache}
export CCACHE_BASEDIR=$LB_BUILD
export CCACHE_NOHASHDIR=true
# Depend mode: a miss compiles once and takes its include list from the
# compiler's own -MMD output (Kbuild passes -Wp,-MMD) instead of running
# the preprocessor a second time to hash its output.  A cold kernel
# compiles in about two thirds of the time (docs/measurements.md); hits
# are direct-mode hits as before.
export CCACHE_DEPEND=true
# The inode cache: a header's hash is kept by its inode, size and mtime,
# so the ~500 headers every kernel object includes are hashed once, not
# once per object (120 objects cold, 3 runs each: 52.2 s against 55.1 s).
export CCACHE_INODECACHE=true
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# Nothing the harness writes (build/, results, reports) is writable by
# another local user, whatever the caller's umask: a world-writable
# run directory lets anyone plant the links that --resume and the
# report refuse (issue #27).  Stricter umasks (077) are kept.
umask "$(printf '%04o' $(($(umask) | 8#022)))"
# A new kernel tree and its objects (build/TARGET): 1.5 GB measured for
# an arm tinyconfig target (du -sh build/before), with room to spare.
# shellcheck disable=SC2034 # used by build-kernel.sh
LB_TREE_MB=${LOCKBENCH_TREE_MB:-2048}

lb_err() {
	printf '%s: %s\n' "${LB_PROG:-lockbench}" "$*" >&2
}

lb_die() {
	local code=$1
	shift
	lb_err "$@"
	exit "$code"
}

# lb_help : a script's --help, its header comment from line 4 to the
# first blank line.
lb_help() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0"
}

# lb_need_value OPTION ARGC : exit 2 unless OPTION (one of "$@", ARGC of
# them left) has a value after it; $usage says how to call the script.
lb_need_value() {
	[ "$2" -ge 2 ] || lb_die 2 "$1 needs a value (${usage:-see --help})"
}

# lb_set_once NAME VALUE : a positional argument into the variable NAME,
# exit 2 if an earlier one set it already.
lb_set_once() {
	[ -z "${!1}" ] || lb_die 2 "more than one ${1^^} (${usage:-see --help})"
	printf -v "$1" '%s' "$2"
}

# lb_need CMD... : exit 3 naming the first missing command.
lb_need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			lb_die 3 "missing '$c': run ./run.sh setup"
	done
}

# lb_need_file PATH PACKAGE : exit 3 if a file a package provides is absent.
lb_need_file() {
	[ -e "$1" ] || lb_die 3 "missing $1 (package $2): run ./run.sh setup"
}

# lb_py ARGS... : Debian's python3 with the repository root on its module
# path, for the harness's packages from any directory: lb_py -m
# scripts.variant list.  Python runs as the function's child: where $!
# must be Python's pid (a runner sent to the background and signalled),
# write PYTHONPATH=$LB_ROOT "$LB_PY" -m ... instead.
lb_py() {
	PYTHONPATH=$LB_ROOT "$LB_PY" "$@"
}

lb_need_py() {
	lb_need_file "$LB_PY" python3
	"$LB_PY" -c 'import pandas, scipy' 2>/dev/null ||
		lb_die 3 "missing python3-pandas or python3-scipy: run ./run.sh setup"
}

# lb_arch_info ARCH: what builds and boots ARCH (guest/arches.toml) into
# the associative array lb_archinfo (kernel_arch, cross_prefix, triplet,
# libc_package, kernel, load_address, debian, rootfs, qemu, ...), and its
# "KEY VALUE" lines, in the table's order, into lb_archspec; exit 2 with
# one line for an unknown arch.
declare -gA lb_archinfo=()
# shellcheck disable=SC2034 # lb_archinfo is the caller's
lb_arch_info() {
	local spec key val
	lb_need_file "$LB_PY" python3
	spec=$(lb_py -m scripts.variant arch "$1") || exit 2
	lb_archinfo=() lb_archspec=$spec
	while read -r key val; do
		lb_archinfo[$key]=$val
	done <<<"$spec"
}

# lb_kernel_info VERSION: the source of a kernel version (kernel-patches/
# kernels.toml) into the associative array lb_kernelinfo (package,
# tarball, rt_arches); exit 2 with one line for an unknown version.
declare -gA lb_kernelinfo=()
# shellcheck disable=SC2034 # lb_kernelinfo is the caller's
lb_kernel_info() {
	local spec key val
	lb_need_file "$LB_PY" python3
	spec=$(lb_py -m scripts.variant kernel "$1") || exit 2
	lb_kernelinfo=()
	while read -r key val; do
		lb_kernelinfo[$key]=$val
	done <<<"$spec"
}

# lb_variant TARGET : read a variant (scripts/variant.py show) into
# lb_arch, lb_kernel (its kernel version; empty for a tree's commit),
# lb_label, lb_tree and lb_ref (a variant of a git tree; empty for
# Debian's tarball) and the arrays lb_patches and lb_configs; exit 2 (its
# one line said) for a bad target.
# shellcheck disable=SC2034 # the lb_* variables are the caller's
lb_variant() {
	local spec key val
	lb_need_file "$LB_PY" python3
	spec=$(lb_py -m scripts.variant show "$1") || exit 2
	lb_arch='' lb_kernel='' lb_label='' lb_tree='' lb_ref='' lb_patches=() lb_configs=()
	while read -r key val; do
		case $key in
		arch) lb_arch=$val ;;
		kernel) lb_kernel=$val ;;
		label) lb_label=$val ;;
		tree) lb_tree=$val ;;
		ref) lb_ref=$val ;;
		patch) lb_patches+=("$val") ;;
		config) lb_configs+=("$val") ;;
		esac
	done <<<"$spec"
}
