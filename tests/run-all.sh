#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole test suite, as CI runs it: install what is missing, lint, unit
# tests, build the kernels once (before, after, their lock_stat-free twins
# before-plain and after-plain, rcu, before and after for arm64 guests,
# before and after on Linux 6.12, and the PREEMPT_RT pair on 6.12
# arm64), then the end-to-end tests that boot them.
# Each tests/t-*.sh is one test: exit 0 is a pass, anything else a failure
# (there is no "skip": a test that cannot run has failed).  A test whose
# header has "# Beside: yes" may run beside another such test (below).
#
# Usage: tests/run-all.sh [--fast | TEST...]   (TEST: a t-*.sh name,
#        with or without .sh; default: all)
#
# Each test says in its header which kernels it boots ("# Needs: before
# after@arm64 slow ...", "-" for none; without the line: before and
# after); a test kernel of tests/variants may be named.
# The run builds those of the tests it runs, once (./run.sh build orders
# them), while the tests that need none run beside it at a lower priority
# (a lint error shows within seconds).  The kernels of before's group come
# first; those of the other groups (arm64, lock_stat-free: each a cold
# build) then build at nice 19, one group after the other, while the
# booting tests that need none of them run.  A test that boots one of
# them starts once its group is built; one whose header says
# "# Quiet: yes (why)" runs last, when no build is left.
#
# --fast: only what needs no kernel (the unit tests and the "Needs: -"
# tests), a few minutes: for a change to the analysis, the plots or the
# scripts.
#
# Prints one line per test and "N passed, N failed" last; exit 1 if any
# failed, 2 for a name that is not a test.

set -uo pipefail
LB_PROG="test"
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT" || exit 2

# cpu_now: the CPU seconds (user + sys) this shell's finished children
# used, in $cpu (bash's times; not in a subshell, which starts at 0).
cpu_now() {
	local _self u s
	times >"$LB_TEST_OUT/.times.$BASHPID"
	{ read -r _self && read -r u s; } <"$LB_TEST_OUT/.times.$BASHPID"
	u=${u%%.*} s=${s%%.*}
	cpu=$((10#${u%%m*} * 60 + 10#${u#*m} + 10#${s%%m*} * 60 + 10#${s#*m}))
}

# run_test NAME CMD... : one test, its output kept in $LB_TEST_OUT/NAME.log
# and its outcome in NAME.rc (counted at the end: a test may run in the
# background, beside the kernel build).  The line gives its wall time and
# the CPU time it used (on 2 cores, a test far under 2x its wall time left
# a core idle).
run_test() {
	local name=$1 start rc cpu cpu0
	shift
	start=$(date +%s)
	cpu_now
	cpu0=$cpu
	"$@" >"$LB_TEST_OUT/$name.log" 2>&1
	rc=$?
	cpu_now
	echo "$rc" >"$LB_TEST_OUT/$name.rc"
	if [ $rc -eq 0 ]; then
		printf 'ok     %-34s %4ss  cpu %4ss\n' "$name" "$(($(date +%s) - start))" "$((cpu - cpu0))"
	else
		printf 'FAILED %-34s %4ss  cpu %4ss (exit %s)\n' "$name" "$(($(date +%s) - start))" "$((cpu - cpu0))" "$rc"
		sed 's/^/    | /' "$LB_TEST_OUT/$name.log" | tail -n 25
	fi
}

# unit_tests SET: the tests/unit/test_*.py modules of SET, each in its own
# process, as many at once as there are cores (GNU parallel), the slowest
# first so that they do not end last; output in module order, then, for
# each module that failed, the end of its own output again (the failure
# line shows the last lines of the whole log, another module's).  SET is
# "timed" for the modules marked "# Timed: ..." (they bound a run's wall
# time: a hang guard, which a niced process starved by a kernel build can
# overrun), "untimed" for the rest.  Exit non-zero when a module fails or
# does not import: no test is dropped silently.
unit_tests() {
	local set=$1 slow=tests.unit.test_plots f m t rc
	local dir=$LB_TEST_OUT/unit-$set
	rm -rf "$dir"
	mkdir -p "$dir"
	{
		[ "$set" = timed ] || echo "$slow"
		for f in tests/unit/test_*.py; do
			m=${f%.py}
			m=${m//\//.}
			[ "$m" != "$slow" ] || continue
			if grep -q '^# Timed: ' "$f"; then
				t=timed
			else
				t=untimed
			fi
			if [ "$t" = "$set" ]; then
				echo "$m"
			fi
		done
	} | parallel --will-cite -j "$(nproc)" --keep-order --halt never \
		--joblog "$dir/joblog" \
		"$LB_PY" -m unittest {} ">$dir/{}.log" "2>&1;" "rc=\$?;" \
		cat "$dir/{}.log;" "exit \$rc"
	rc=$?
	# The joblog's columns: Seq Host Starttime JobRuntime Send Receive
	# Exitval Signal Command; the module is the command's 4th word.
	awk 'NR > 1 && ($7 != 0 || $8 != 0) { print $12 }' "$dir/joblog" |
		sort | while read -r m; do
		echo "=== failed: $m (its last lines; all of it in $dir/$m.log)"
		tail -n 20 "$dir/$m.log"
	done
	return $rc
}

usage() {
	sed -n 's/^# Usage: \(.*\)/usage: \1/p; /^#        /s/^# //p' "$0"
}
case ${1:-} in -h | --help)
	usage
	exit 0
	;;
esac
fast=0
tests=()
if [ "${1:-}" = --fast ]; then
	fast=1
	mapfile -t all < <(cd tests && ls t-*.sh)
elif [ $# -gt 0 ]; then
	for t in "$@"; do
		t=${t%.sh}.sh
		if ! [[ $t =~ ^t-[a-z0-9-]+\.sh$ ]] || [ ! -f "tests/$t" ]; then
			lb_die 2 "no test '${t%.sh}' (tests/t-*.sh lists them; usage: ./run.sh test --help)"
		fi
		tests+=("$t")
	done
	all=("${tests[@]}")
else
	mapfile -t all < <(cd tests && ls t-*.sh)
	tests=("${all[@]}")
fi

# needs T: the kernels test T boots, one a line ("-": none).
needs() {
	local line
	line=$(sed -n 's/^# Needs: //p' "tests/$1")
	tr ' ' '\n' <<<"${line:-before after}" | grep -v '^$'
}
kernelless=()
wanted=()
for t in "${all[@]}"; do
	if [ "$(needs "$t")" = - ]; then
		kernelless+=("$t")
	elif [ $fast = 0 ]; then
		mapfile -t -O "${#wanted[@]}" wanted < <(needs "$t")
	fi
done
# Each once; ./run.sh build puts every donor before its variants.
build=()
for v in "${wanted[@]}"; do
	[[ " ${build[*]} " == *" $v "* ]] || build+=("$v")
done
# The kernels of the first one's group (before's: arch and config
# fragments, each other's donors) are built first.  Those of the other
# groups (arm64, the lock_stat-free pair: each group starts with a cold
# build) are built after, one group after the other, at nice 19, while
# the booting tests that need none of them run: those tests leave about a
# third of the two cores idle (a 1-vCPU guest and its analysis), which
# the build takes, though not for free: a test beside it took 25-45%
# longer, and the cold suite 48 minutes where it took 54
# (docs/measurements.md, 2026-12-06).  A test starts once the group of
# every kernel it boots is built.
test_variants=${LOCKBENCH_VARIANT_PATH:-$LB_ROOT/tests/variants}
declare -A kgroup
ngroups=1
if [ ${#build[@]} -gt 0 ]; then
	groups=$(LOCKBENCH_VARIANT_PATH=$test_variants lb_py -m scripts.variant order --groups "${build[@]}") || exit 2
	while read -r g v; do
		kgroup[$v]=$g
		[ "$g" -lt "$ngroups" ] || ngroups=$((g + 1))
	done <<<"$groups"
fi
# kernels_of G: the kernels of group G, one a line.
kernels_of() {
	local k
	for k in "${build[@]}"; do
		[ "${kgroup[$k]}" != "$1" ] || echo "$k"
	done
}
# group_of T: the last group of the kernels test T boots.
group_of() {
	local k g=0
	for k in $(needs "$1"); do
		[ "${kgroup[$k]:-0}" -le "$g" ] || g=${kgroup[$k]}
	done
	echo "$g"
}

export LB_TEST_OUT=${LB_TEST_OUT:-$LB_BUILD/test-out}
rm -rf "$LB_TEST_OUT"
mkdir -p "$LB_TEST_OUT"
# Ctrl-C or a kill: the jobs in the background (a build, the tests
# beside it) go too.  Without job control they share this shell's
# process group, and they ignore SIGINT.
trap 'trap "" INT TERM; kill -TERM 0 2>/dev/null; exit 130' INT TERM
scripts/setup.sh || exit 1
# kernelless: the tests that boot nothing (the lint among them: seconds),
# then the unit tests (the whole suite and --fast).
kernelless() {
	for t in "${kernelless[@]}"; do
		run_test "${t%.sh}" "tests/$t"
	done
	if [ $# -eq 0 ] || [ $fast = 1 ]; then
		run_test unit-python unit_tests untimed
		# Beside the build, the timed ones run later (below).
		[ ${#build[@]} -gt 0 ] || run_test unit-timed unit_tests timed
	fi
}
# build_kernels NAME TARGET...: one ./run.sh build, its line NAME.  A
# test may need the tests' own kernels (tests/variants: the planted
# faults, the nested reader): built here with the rest, once.
build_kernels() {
	local name=$1
	shift
	run_test "$name" env LOCKBENCH_VARIANT_PATH="$test_variants" ./run.sh build "$@"
}
latepid=
if [ ${#build[@]} -eq 0 ]; then
	kernelless "$@"
else
	# The tests that boot nothing run beside the build, at the lowest
	# priority: they fill the cores a build leaves idle while it
	# configures and links, and the build, which the rest waits for, is
	# slowed less (at nice 10 the unit tests took 260 s of CPU in 552 s,
	# and before, cold, 598 s where it takes about 456 s alone).  Their
	# lines print as they end; the booting tests start when both are
	# done.
	(
		renice -n 19 -p "$BASHPID" >/dev/null
		kernelless "$@"
	) &
	bg=$!
	mapfile -t ks < <(kernels_of 0)
	build_kernels build "${ks[@]}"
	if [ "$ngroups" -gt 1 ]; then
		(
			renice -n 19 -p "$BASHPID" >/dev/null
			for ((g = 1; g < ngroups; g++)); do
				mapfile -t ks < <(kernels_of $g)
				build_kernels "build-$g" "${ks[@]}"
			done
		) &
		latepid=$!
	fi
	wait "$bg"
fi

# run_phase TEST...: the booting tests given, alone, one after the other,
# except those whose header says "# Beside: yes" (no timing, core or load
# in what they assert, no kernel build, nothing shared with another
# test): those run two at a time after the others, since a guest's boot
# and the analysis after it leave a core idle much of the time.  The
# timed unit tests ("unit-timed") are among them, at the normal priority:
# beside one other test, their hang guards' bounds hold.
run_phase() {
	local beside=() t
	for t in "$@"; do
		if [ "$t" = unit-timed ] || grep -qx '# Beside: yes' "tests/$t"; then
			beside+=("$t")
		else
			run_test "${t%.sh}" "tests/$t"
		fi
	done
	for t in "${beside[@]}"; do
		while [ "$(jobs -rp | grep -cvx "${latepid:-none}")" -ge 2 ]; do
			wait -n
		done
		if [ "$t" = unit-timed ]; then
			run_test unit-timed unit_tests timed &
		else
			run_test "${t%.sh}" "tests/$t" &
		fi
	done
	while [ "$(jobs -rp | grep -cvx "${latepid:-none}")" -gt 0 ]; do
		wait -n
	done
}
# The booting tests by the group they wait for; the quiet ones last,
# when every build is over.
declare -A phase
quiet=()
[ ${#build[@]} -eq 0 ] || { [ $# -gt 0 ] && [ $fast = 0 ]; } || phase[0]=unit-timed
for t in "${tests[@]}"; do
	[[ " ${kernelless[*]} " != *" $t "* ]] || continue
	if [ -n "$latepid" ] && grep -q '^# Quiet: yes' "tests/$t"; then
		quiet+=("$t")
	else
		g=$(group_of "$t")
		phase[$g]="${phase[$g]:-} $t"
	fi
done
for ((g = 0; g < ngroups; g++)); do
	while [ $g -gt 0 ] && [ ! -e "$LB_TEST_OUT/build-$g.rc" ] && kill -0 "$latepid" 2>/dev/null; do
		sleep 2
	done
	# shellcheck disable=SC2086 # test names have no blanks
	run_phase ${phase[$g]:-}
done
[ -z "$latepid" ] || wait "$latepid"
run_phase "${quiet[@]}"

passed=0
failures=()
for f in "$LB_TEST_OUT"/*.rc; do
	[ -e "$f" ] || continue
	n=$(basename "$f" .rc)
	if [ "$(cat "$f")" = 0 ]; then
		passed=$((passed + 1))
	else
		failures+=("$n")
	fi
done
echo
[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]} (logs in $LB_TEST_OUT)"
echo "$passed passed, ${#failures[@]} failed"
[ ${#failures[@]} -eq 0 ]
