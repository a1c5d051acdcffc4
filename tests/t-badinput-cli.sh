#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Command-line misuse of every ./run.sh subcommand: an unknown command,
# missing or extra arguments, unknown options, bad --cpus/--mem/--timeout,
# unknown or malformed variant names, --job without --out (and the
# reverse), files that do not exist, a directory where a file is expected
# and a file where a directory is expected.  Each exits 2 with one line on
# stderr naming the problem, never a Python traceback, and starts nothing.
# Every subcommand's --help exits 0.  (./run.sh test is the suite itself
# and is left out.)
#
# Usage: tests/t-badinput-cli.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init badinput-cli

job=$out/ok.job
printf 'lockbench-job v1\npoint p1 duration_ms=200\n' >"$job"
mkdir -p "$out/full" "$out/emptydir"
touch "$out/full/x" "$out/file"

n=0
# bad REGEX ARGS...: ./run.sh ARGS exits 2 with one stderr line matching REGEX.
bad() {
	local re=$1 rc=0
	shift
	n=$((n + 1))
	./run.sh "$@" >"$out/$n.out" 2>"$out/$n.err" || rc=$?
	[ $rc = 2 ] || fail "./run.sh $*: exit $rc, want 2: $(head -c 300 "$out/$n.err")"
	ft_one_line "$out/$n.err" "$re"
	echo "ok: ./run.sh $*: $(cat "$out/$n.err")"
}

bad "unknown command 'frobnicate'" frobnicate
bad "unknown command '--cpus'" --cpus 2
# boot
bad 'required: variant' boot
bad '--cpus 0: must be 1..16' boot before --cpus 0
bad '--cpus 17: must be 1..16' boot before --cpus 17
bad "--cpus: invalid int value: 'two'" boot before --cpus two
bad '--cpus: expected one argument' boot before --cpus
bad '--mem 64: must be 128..2048' boot before --mem 64
bad '--mem 4096: must be 128..2048' boot before --mem 4096
bad "--mem: invalid int value: '1e9'" boot before --mem 1e9
bad '--timeout -1: must be more than 0' boot before --job "$job" --out "$out/r1" --timeout -1
bad '--silence 0: must be more than 0' boot before --job "$job" --out "$out/r1" --silence 0
bad "--timeout: invalid float value: 'soon'" boot before --timeout soon
bad "unknown variant 'nosuch'" boot nosuch --dry-run
bad "variant name '../../etc' is not" boot ../../etc --dry-run
bad "variant name 'Before' is not" boot Before --dry-run
bad '--job needs --out DIR' boot before --job "$job"
bad '--out needs --job FILE' boot before --out "$out/r1"
bad "--job $out/nosuch.job: no such file" boot before --job "$out/nosuch.job" --out "$out/r1"
bad "--job $out/emptydir: is a directory" boot before --job "$out/emptydir" --out "$out/r1"
bad "--out $out/file: exists and is not a directory" boot before --job "$job" --out "$out/file"
bad "run directory $out/full is not empty" boot before --job "$job" --out "$out/full"
bad 'unrecognized arguments: --bogus' boot before --bogus
bad "--clock: invalid choice: 'cycles'" boot before --clock cycles
bad '--clock icount --cpus 2: icount takes 1 vCPU' boot before --clock icount --cpus 2 --dry-run
# overhead
bad 'required: variant' overhead
bad '--boots 0 out of range 1..20' overhead before --boots 0
bad '--rounds 51 out of range 1..50' overhead before --rounds 51
bad '--duration-ms 50 out of range 100..10000' overhead before --duration-ms 50
bad '--timing must be in 1..1024' overhead before --timing 0
bad "unknown variant 'nosuch'" overhead nosuch --out "$out/ovh"
[ ! -e "$out/ovh" ] || fail "./run.sh overhead nosuch made $out/ovh"
bad 'unrecognized arguments: after' boot before after
[ ! -e "$out/r1" ] || fail "a run directory was made"
# build
bad "unknown variant 'nosuch'" build nosuch
bad "variant name '../x' is not" build ../x
bad "unknown variant 'nosuch'" build before nosuch
# setup
bad "unknown argument '--bogus'" setup --bogus
# campaign (the runner's own tests cover bad campaign files)
bad '^campaign: ' campaign
bad "^campaign: $out/nosuch.toml: " campaign "$out/nosuch.toml"
bad "^campaign: $out/emptydir: " campaign "$out/emptydir"
bad "^campaign: $out/nosuch: " campaign --resume "$out/nosuch"
bad 'unrecognized arguments: --bogus' campaign --bogus
# analyze, report
bad 'required: DIR' analyze
bad "^analyze: $out/nosuch: no such directory" analyze "$out/nosuch"
bad "^analyze: $out/file: not a directory" analyze "$out/file"
bad "^analyze: $out/emptydir is not a run directory \(no manifest\.json; \./run\.sh campaign makes one\)\$" analyze "$out/emptydir"
bad "^report: $out/emptydir is not a run directory \(no manifest\.json; \./run\.sh campaign makes one\)\$" report "$out/emptydir"
bad 'unrecognized arguments: --bogus' analyze "$out/emptydir" --bogus
bad 'required: DIR' report
bad "^report: $out/nosuch: no such directory" report "$out/nosuch"
bad '^report: --margin 2 must be between 0 and 1' report "$out/emptydir" --margin 2
bad "^report: --margin 'x' is not a number" report "$out/emptydir" --margin x
# lockstat (tests/t-badinput-lockstat.sh feeds it bad files)
bad 'required: FILE' lockstat
bad "^lockstat: $out/nosuch: No such file or directory" lockstat "$out/nosuch"
bad "^lockstat: $out/emptydir: is a directory" lockstat "$out/emptydir"
bad 'unrecognized arguments: --bogus' lockstat a --bogus
# Several files: one line for each bad one, exit 2.
rc=0
./run.sh lockstat "$out/nosuch" "$out/emptydir" >"$out/two.out" 2>"$out/two.err" || rc=$?
if ! { [ $rc = 2 ] && [ "$(wc -l <"$out/two.err")" = 2 ] && [ ! -s "$out/two.out" ] &&
	grep -q "^lockstat: $out/nosuch: No such file or directory$" "$out/two.err" &&
	grep -q "^lockstat: $out/emptydir: is a directory$" "$out/two.err"; }; then
	fail "./run.sh lockstat NOSUCH EMPTYDIR: exit $rc, want 2 and a line each: $(cat "$out/two.err")"
fi
echo "ok: ./run.sh lockstat NOSUCH EMPTYDIR: a line each, exit 2"
bad "invalid --class regex '\('" lockstat "$job" --class '('
bad '^bench-harness: unknown option --bogus' bench --bogus
bad 'the following arguments are required: DIR' recheck
bad "^recheck: $out/nosuch: not a directory" recheck "$out/nosuch"
bad "^recheck: $out/emptydir: no meta.json \\(a regular file\\): not a run directory" recheck "$out/emptydir"
bad "^bench-harness: $out is not empty" bench "$out"
ok "$n misuses: exit 2, one line each"
! pgrep -f "qemu-system-arm.*$out" || fail "a QEMU was started"

for c in setup build boot campaign analyze report lockstat recheck convert overhead bench help; do
	./run.sh "$c" --help >"$out/help-$c.out" 2>&1 || fail "./run.sh $c --help failed"
	[ -s "$out/help-$c.out" ] || fail "./run.sh $c --help printed nothing"
done
ok "every subcommand's --help exits 0"
