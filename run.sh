#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The one entry point of the lock benchmark harness.
#
# Usage: ./run.sh [COMMAND [ARGS...]]   (./run.sh help for the list)

set -euo pipefail
LB_PROG=run.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/scripts/lib.sh"
cd "$LB_ROOT"

usage() {
	cat <<'EOF'
usage: ./run.sh [COMMAND [ARGS...]]

With no command: install what is missing, build both kernels, run the
default campaign and print its verdict and where the plots are.

commands:
  setup                       install the Debian packages the harness needs
  build [--variants DIR] [VARIANT...]
                              build kernels + module (default: every variant,
                              arm, 6.1), the guest root fs and lockload of
                              each arch built;
                              VARIANT: NAME[@ARCH][@VERSION]: before (arm,
                              Linux 6.1), before@arm64, before@6.12,
                              before@arm64@6.12 (kernel-patches/kernels.toml);
                              DIR: variant files (./run.sh convert --out)
  build --tree PATH [--like V] REF...
                              build commits of your own git tree, Linux 6.1
                              or later (tested: 6.1, 6.12; a variant file
                              each in build/trees, configs as V's: before),
                              and a campaign for two or more
  bisect --tree PATH GOOD BAD --campaign FILE [--out DIR]
  bisect --resume DIR         the first commit of GOOD..BAD (first parents)
                              that the campaign judges harm or worse
  bisect --judge --tree PATH GOOD [REF] --campaign FILE
                              one step for git bisect run (0 good, 1 bad,
                              125 skip)
  boot VARIANT [--cpus N] [--mem MB] [--job FILE] [--out DIR]
                              boot a variant in QEMU: a shell, or one job
  campaign FILE [--jobs N] [--hosts FILE] [--variants DIR]
  campaign --resume DIR       run a campaign (campaigns/*.toml), or finish one
  analyze DIR                 raw results -> DIR/tidy/*.csv, cross-checks
  report DIR [--no-plots]     verdict table, summary.md, commit-msg.txt, then
                              the plots and report.html
  lockstat FILE... [--class RE]
                              /proc/lock_stat dumps -> tidy CSV
  compare DIR1 DIR2           two runs of one campaign: per primary cell
                              both ratios and their ratio with a CI
  recheck DIR...              judge saved runs (a boot's or a campaign's)
                              again from their console and files, offline
  convert [--base V] [--name N] [--out DIR] [--force] [--workload W [--locks-per-op K]] FILE LOCK
                              turn the rwlock LOCK of FILE into a spinlock:
                              a patch (Coccinelle) and a variant to build;
                              with --workload (e.g. 'read /proc/iomem'), also
                              the target file, K measured by calibrate
  calibrate [--variant V] [--cpus N] --lock CLASS WORKLOAD
                              boot V (before) once: how many times a generic
                              lockload workload takes the lock an op
  overhead VARIANT [--boots B] [--rounds R]
                              what the module's timing costs (timing=0 vs on)
  test [--fast]               the whole test suite (what CI runs); --fast:
                              what needs no kernel (unit tests, lint), minutes
  bench [--rows LIST]         time the first hour (tree, cold and second
                              build, clone to report, suite, a lock
                              converted to a smoke report) in scratch
                              directories and print the table
  help                        this text

Every command takes --help.  Bad input exits 2 with one line.
EOF
}

# Python parts run on Debian's interpreter, which has pandas and scipy,
# as modules of the packages at the root (analysis, plots, guest, scripts).
py() {
	lb_need_file "$LB_PY" python3
	PYTHONPATH=$LB_ROOT exec "$LB_PY" "$@"
}

cmd=${1:-all}
[ $# -eq 0 ] || shift
case $cmd in
help | -h | --help)
	usage
	;;
setup)
	exec scripts/setup.sh "$@"
	;;
build)
	case ${1:-} in -h | --help)
		echo "usage: ./run.sh build [--variants DIR] [VARIANT...]  (VARIANT: NAME[@ARCH][@VERSION]: NAME for an arm guest of Linux 6.1, @arm64 for an arm64 one, @6.12 for Linux 6.12 (kernel-patches/kernels.toml); variants: $(lb_py -m scripts.variant list | tr '\n' ' '); --variants DIR: a folder of variant files, such as ./run.sh convert --out DIR writes, searched first, as LOCKBENCH_VARIANT_PATH=DIR); or: ./run.sh build --tree PATH [--like VARIANT] REF...  (commits of your own git tree, Linux 6.1 or later, tested on 6.1 and 6.12, any other version built with one warning line, each a variant in build/trees with the configs of VARIANT, before by default; two or more refs also get a campaign; docs/trees.md)"
		exit 0
		;;
	esac
	targets=() src_tree='' like=before
	while [ $# -gt 0 ]; do
		case $1 in
		--tree)
			[ $# -ge 2 ] || lb_die 2 "--tree needs the path of a git tree (usage: ./run.sh build --help)"
			src_tree=$(realpath -m -- "$2")
			shift 2
			;;
		--like)
			[ $# -ge 2 ] || lb_die 2 "--like needs a variant (usage: ./run.sh build --help)"
			like=$2
			shift 2
			;;
		--variants)
			[ -d "${2:-}" ] || lb_die 2 "--variants: '${2:-}' is not a folder (of variant files, such as ./run.sh convert --out DIR writes)"
			LOCKBENCH_VARIANT_PATH=$(realpath "$2")${LOCKBENCH_VARIANT_PATH:+:$LOCKBENCH_VARIANT_PATH}
			export LOCKBENCH_VARIANT_PATH
			shift 2
			;;
		-*) lb_die 2 "unknown option '$1' (usage: ./run.sh build --help)" ;;
		*)
			targets+=("$1")
			shift
			;;
		esac
	done
	scripts/setup.sh --check
	camp=''
	if [ -n "$src_tree" ]; then
		# The targets are refs of the tree: a variant file for each
		# (scripts/tree/kernel_tree.py), named for its commit.
		[ ${#targets[@]} -gt 0 ] || lb_die 2 "--tree $src_tree: name the refs to build (e.g. HEAD~1 HEAD)"
		made=$(lb_py -m scripts.tree.kernel_tree variants "$src_tree" "${targets[@]}" --like "$like") || exit 2
		mapfile -t targets < <(sed -n 's/^variant //p' <<<"$made")
		camp=$(sed -n 's/^campaign //p' <<<"$made")
		echo "build: ${#targets[@]} commits of $src_tree: ${targets[*]}"
	fi
	[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(lb_py -m scripts.variant list)
	# Fewer patches first: a variant's donor (build-kernel.sh) before it.
	# One at a time: two groups of targets side by side (two make -j3)
	# took 874 s on 2 cores where one after the other takes about 826 s
	# (docs/measurements.md).
	order=$(lb_py -m scripts.variant order "${targets[@]}") || exit 2
	arches=()
	for v in $order; do
		scripts/build-kernel.sh "$v"
		lb_variant "$v"
		[[ " ${arches[*]} " == *" $lb_arch "* ]] || arches+=("$lb_arch")
	done
	for a in "${arches[@]}"; do
		guest/inside/build-rootfs.sh --arch "$a"
		guest/inside/build-lockload.sh --arch "$a"
	done
	[ -z "$camp" ] || echo "next: ./run.sh campaign ${camp#"$LB_ROOT"/}"
	;;
boot)
	py -m guest.run_guest "$@"
	;;
campaign)
	py -m scripts.campaign "$@"
	;;
analyze)
	py -m analysis.analyze "$@"
	;;
report)
	py -m plots.pipeline "$@"
	;;
lockstat)
	py -m analysis.lockstat_cli "$@"
	;;
compare)
	py -m analysis.across "$@"
	;;
recheck)
	py -m guest.recheck "$@"
	;;
convert)
	exec scripts/convert/convert.sh "$@"
	;;
calibrate)
	py -m scripts.calibrate "$@"
	;;
bisect)
	py -m scripts.tree.bisect "$@"
	;;
overhead)
	py -m scripts.overhead "$@"
	;;
test)
	exec tests/run-all.sh "$@"
	;;
bench)
	exec scripts/bench-harness.sh "$@"
	;;
all)
	scripts/setup.sh
	# Only what the default campaign needs (the pair, and its
	# lockdep-free twins for the 1-vCPU production cost): ./run.sh build
	# alone builds every variant.
	"$0" build before after before-plain after-plain
	"$0" campaign campaigns/default.toml
	;;
*)
	lb_die 2 "unknown command '$cmd' (./run.sh help lists them)"
	;;
esac
