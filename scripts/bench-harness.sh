#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Time a newcomer's first hour (issue #18) and print it as the table the
# docs/measurements.md carries (its builds table), so that the next change to the
# build can be judged by the same numbers.  Each row runs in a scratch
# directory: the repository's own build/ and results/ are never touched.
#
#   tree      linux-source extracted and imported into git, the target's
#             worktree and series (build-kernel.sh --tree-only before)
#   cold      the rest of before with an empty ccache (kernel + modules);
#             the "first variant" row is tree + cold
#   second    after, from before's objects and the ccache before filled
#   nochange  after again, nothing to do
#   clone     git clone, then ./run.sh: the default campaign and its
#             report, with the user's (warm) ccache; the time to the first
#             guest console is taken on the way
#   suite     git clone, then ./run.sh test, warm ccache
#   convert   git clone, then a lock made a spinlock and judged as a
#             newcomer would (issue #15): ./run.sh convert fs/filesystems.c
#             file_systems_lock as a new variant, ./run.sh build of it
#             (before first: the clone has no tree), and a smoke campaign
#             of it against before (tests/campaigns/smoke-file-systems.toml
#             with the new variant), warm ccache
#
# Timings mean something only on a quiet machine: the load average is
# printed beside each row (two builds side by side double both).
#
# Usage: scripts/bench-harness.sh [--rows LIST] [--keep] [WORKDIR]
#
#	LIST: rows, comma separated (default tree,cold,second,nochange:
#	about 10 minutes; clone takes about 20 more, suite 30, convert 7).  second
#	and nochange need cold, cold needs tree.
#	WORKDIR (default: a new directory under /var/tmp) holds the scratch
#	builds, clones and logs; it is removed at the end unless --keep.
#	The table goes to standard output, progress to standard error.

set -euo pipefail
LB_PROG=bench-harness
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage="usage: scripts/bench-harness.sh [--rows LIST] [--keep] [WORKDIR]"
want=tree,cold,second,nochange keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--rows)
		[ $# -ge 2 ] || lb_die 2 "--rows needs a list ($usage)"
		want=$2
		shift
		;;
	--keep) keep=1 ;;
	-h | --help)
		echo "$usage"
		exit 0
		;;
	-*) lb_die 2 "unknown option $1 ($usage)" ;;
	*) break ;;
	esac
	shift
done
[ $# -le 1 ] || lb_die 2 "$usage"
[[ ,$want, =~ ^(,(tree|cold|second|nochange|clone|suite|convert))+,$ ]] ||
	lb_die 2 "--rows $want: a comma-separated list of tree, cold, second, nochange, clone, suite, convert"
for r in cold:tree second:cold nochange:cold; do
	[[ ,$want, != *,${r%:*},* || ,$want, == *,${r#*:},* ]] ||
		lb_die 2 "--rows: ${r%:*} needs ${r#*:}"
done
# wants ROW: was ROW asked for?
wants() { [[ ,$want, == *,$1,* ]]; }
work=${1:-$(mktemp -d /var/tmp/lockbench-bench.XXXXXX)}
mkdir -p "$work" || lb_die 2 "cannot create $work"
[ -z "$(ls -A "$work")" ] || lb_die 2 "$work is not empty: give a new or empty directory"
# Removed at the end, unless --keep or a row failed (its log is there).
watcher=
trap '[ $? -eq 0 ] && [ $keep = 0 ] && rm -rf "$work"; [ -z "$watcher" ] || kill "$watcher" 2>/dev/null; true' EXIT

rows=()
load() { cut -d' ' -f1 /proc/loadavg; }

# row NAME TARGET CMD... : run CMD (its output in WORKDIR/NAME.log), keep
# "| NAME | seconds | target | load before | load after |".
row() {
	local name=$1 target=$2 start end l0
	shift 2
	l0=$(load)
	echo "bench-harness: $name ..." >&2
	start=$(date +%s.%N)
	"$@" >"$work/$name.log" 2>&1 ||
		lb_die 1 "$name failed (exit $?): see $work/$name.log (kept)"
	end=$(date +%s.%N)
	rows+=("$(printf '| %s | %.1f s | %s | %s | %s |' "$name" \
		"$(echo "$end - $start" | bc)" "$target" "$l0" "$(load)")")
}

lb_need bc git
kb=$LB_ROOT/scripts/build-kernel.sh
scratch=(env LOCKBENCH_BUILD="$work/build" CCACHE_DIR="$work/ccache")
! wants tree || row tree "<= 60 s; with cold, the first variant: <= 8 min" "${scratch[@]}" "$kb" --tree-only before
! wants cold || row cold "(tree + cold) <= 8 min" "${scratch[@]}" "$kb" before
! wants second || row second "<= 90 s" "${scratch[@]}" "$kb" after
! wants nochange || row nochange "<= 20 s" "${scratch[@]}" "$kb" after

# clone_run NAME CMD... : a fresh clone of HEAD in WORKDIR/NAME, CMD run
# in it with the user's ccache.
clone_run() {
	local name=$1
	shift
	git clone -q "$LB_ROOT" "$work/$name" && (cd "$work/$name" && "$@")
}
if wants clone; then
	start=$(date +%s)
	# The first guest console of the campaign: the end of "before the
	# first boot" (build, root fs, setup).
	(
		while [ -z "$(find "$work/clone/results" -name console.log -print -quit 2>/dev/null)" ]; do
			sleep 1
		done
		echo $(($(date +%s) - start)) >"$work/first-boot"
	) &
	watcher=$!
	row clone "clone to report <= 20 min" clone_run clone ./run.sh
	kill "$watcher" 2>/dev/null || true
	watcher=
	[ -s "$work/first-boot" ] &&
		rows+=("| clone to first boot | $(cat "$work/first-boot") s | <= 12 min | (within clone) | |")
fi
! wants suite || row suite "<= 30 min" clone_run suite ./run.sh test
# convert_smoke: in a fresh clone, the new lock's whole way to a report.
convert_smoke() {
	./run.sh convert --name spin-bench fs/filesystems.c file_systems_lock &&
		./run.sh build before spin-bench &&
		sed -e 's/"spin-file-systems-lock"/"spin-bench"/' -e 's/^name = .*/name = "bench-convert"/' \
			tests/campaigns/smoke-file-systems.toml >bench-convert.toml &&
		grep -q '"spin-bench"' bench-convert.toml &&
		./run.sh campaign bench-convert.toml --out results/bench-convert
}
! wants convert || row convert "convert + build + smoke campaign <= 15 min" clone_run convert convert_smoke

echo "Measured by scripts/bench-harness.sh on $(nproc) cores, $(git -C "$LB_ROOT" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| step | time | target | load at start | load at end |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
