#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole test suite, as CI runs it: install what is missing, lint, unit
# tests, build the kernels once (before, after, their lock_stat-free twins
# before-plain and after-plain, rcu, and before and after for arm64
# guests), then the end-to-end tests that boot them.
# Each tests/t-*.sh is one test: exit 0 is a pass, anything else a failure
# (there is no "skip": a test that cannot run has failed).
#
# Usage: tests/run-all.sh [--fast | TEST...]   (TEST: a t-*.sh name;
#        default: all)
#
# --fast: only what needs no kernel (the unit tests and shellcheck), a
# few minutes: for a change to the analysis, the plots or the scripts.
# The full run starts with the same tests, so that a lint error shows
# before the kernels build.  (t-badinput-cli is not among them: one of
# its refusals comes after the check that the kernel is built.)
#
# Prints one line per test and "N passed, N failed" last; exit 1 if any
# failed.

set -uo pipefail
LB_PROG="test"
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT" || exit 2

export LB_TEST_OUT=${LB_TEST_OUT:-$LB_BUILD/test-out}
rm -rf "$LB_TEST_OUT"
mkdir -p "$LB_TEST_OUT"
passed=0
failed=0
failures=()

# run_test NAME CMD... : one test, its output kept in $LB_TEST_OUT/NAME.log.
run_test() {
	local name=$1 start rc
	shift
	start=$(date +%s)
	"$@" >"$LB_TEST_OUT/$name.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		printf 'ok     %-34s %4ss\n' "$name" "$(($(date +%s) - start))"
	else
		failed=$((failed + 1))
		failures+=("$name")
		printf 'FAILED %-34s %4ss (exit %s)\n' "$name" "$(($(date +%s) - start))" "$rc"
		sed 's/^/    | /' "$LB_TEST_OUT/$name.log" | tail -n 25
	fi
}

# The tests that need no kernel built.
fast_tests=(t-lint-shell.sh)
fast=0
if [ "${1:-}" = --fast ]; then
	fast=1
	tests=()
elif [ $# -gt 0 ]; then
	tests=("$@")
else
	mapfile -t tests < <(cd tests && ls t-*.sh)
fi

scripts/setup.sh || exit 1
run_test unit-python "$LB_PY" -m unittest discover -s tests/unit -t .
for t in "${fast_tests[@]}"; do
	if [ $fast = 1 ] || [[ " ${tests[*]} " == *" $t "* ]]; then
		run_test "${t%.sh}" "tests/${t%.sh}.sh"
	fi
done
if [ $fast = 0 ]; then
	run_test build ./run.sh build before after before-plain after-plain rcu before@arm64 after@arm64
fi
for t in "${tests[@]}"; do
	[[ " ${fast_tests[*]} " == *" $t "* ]] || run_test "${t%.sh}" "tests/${t%.sh}.sh"
done

echo
[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]} (logs in $LB_TEST_OUT)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
