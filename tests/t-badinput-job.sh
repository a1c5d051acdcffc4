#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad job files never reach a guest: unknown options and values, point ids
# with '/', '..', spaces, glob or shell metacharacters (';', '$(...)',
# backticks), duplicate ids, unknown keys, values that are not plain
# integers or out of the module's ranges, overlong numbers, binary data,
# non-ASCII text, and a writer= other than the one the host writes from
# the workload's target.  Each is refused by ./run.sh boot with exit 2 and one
# line naming the file, no traceback, before any run directory or QEMU.
# The campaign path (job.render) refuses the same, and a trailing newline
# in an id.
#
# Usage: tests/t-badinput-job.sh
# Needs: -

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init badinput-job

# NAME|printf format of the lines after the magic line.  The shell
# metacharacters are meant literally: they must never expand anywhere.
# shellcheck disable=SC2016
cases=(
	'unknown-option|option frobnicate 1\npoint p1 duration_ms=200'
	'bad-perf-stat|option perf_stat 2\npoint p1 duration_ms=200'
	'bad-inject|option inject reboot\npoint p1 duration_ms=200'
	'inject-semicolon|option inject none;reboot\npoint p1 duration_ms=200'
	'option-no-value|option inject\npoint p1 duration_ms=200'
	'option-extra-word|option inject none now\npoint p1 duration_ms=200'
	'unknown-line|run p1 duration_ms=200'
	'no-points|option perf_stat 0'
	'id-slash|point a/b duration_ms=200'
	'id-dotdot|point .. duration_ms=200'
	'id-dotdot-slash|point ../../etc duration_ms=200'
	'id-space|point "a b" duration_ms=200'
	'id-semicolon|point a;reboot duration_ms=200'
	'id-subst|point $(reboot) duration_ms=200'
	'id-backtick|point `reboot` duration_ms=200'
	'id-glob|point * duration_ms=200'
	'id-dash|point -rf duration_ms=200'
	'id-33-chars|point aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa duration_ms=200'
	'id-duplicate|point p1 duration_ms=200\npoint p1 duration_ms=300'
	'id-non-ascii|point p\xd9\xa3 duration_ms=200'
	'key-unknown|point p1 cpus=0'
	'key-subst|point p1 read_pct$(reboot)=5'
	'value-subst|point p1 read_pct=$(reboot)'
	'value-backtick|point p1 read_pct=`reboot`'
	'value-semicolon|point p1 read_pct=5;reboot'
	'value-negative|point p1 read_pct=-1'
	'value-float|point p1 read_pct=1.5'
	'value-hex|point p1 read_pct=0x10'
	'value-empty|point p1 read_pct='
	'value-no-equals|point p1 read_pct'
	'value-arabic-digit|point p1 read_pct=\xd9\xa3'
	'value-5000-digits|point p1 seed=%05000d'
	'read_pct-101|point p1 read_pct=101'
	'mailboxes-0|point p1 mailboxes=0'
	'mailboxes-4097|point p1 mailboxes=4097'
	'miss_pct-101|point p1 miss_pct=101'
	'duration_ms-0|point p1 duration_ms=0'
	'duration_ms-600001|point p1 duration_ms=600001'
	'seed-2-32|point p1 seed=4294967296'
	'timing-1025|point p1 timing=1025'
	'think_ns-1000001|point p1 think_ns=1000001'
	'writer-subst|point p1 workload=execve writer_hz=5 writer=$(reboot)'
	'writer-other|point p1 workload=execve writer_hz=5 writer=file_systems_lock'
	'writer-no-hz|point p1 workload=execve writer=binfmt_lock'
	'nul-byte|point p1 duration_ms=200\0'
	'nbsp|point p1\xc2\xa0duration_ms=200'
)
n=0
for c in "${cases[@]}"; do
	name=${c%%|*}
	f=$out/$name.job
	# shellcheck disable=SC2059 # the case is a printf format on purpose
	printf "lockbench-job v1\n${c#*|}\n" 0 >"$f"
	ft_refused "$out/$name.out" "$out/$name.err" "^boot: (--job )?$f" \
		./run.sh boot before --job "$f" --out "$out/$name.run"
	[ ! -e "$out/$name.run" ] || fail "$name: a run directory was made"
	echo "ok: $name: $(cat "$out/$name.err")"
	n=$((n + 1))
done
ok "$n bad job files refused with exit 2 and one line, no run directory"

# Whole-file problems.
: >"$out/empty.job"
printf 'lockbench-job v2\npoint p1\n' >"$out/v2.job"
printf 'point p1 duration_ms=200\n' >"$out/no-magic.job"
# Binary data (every byte value): no kernel image needed, so that the
# test runs in ./run.sh test --fast.
"$LB_PY" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 16)' >"$out/binary.job"
printf 'lockbench-job v1\npoint p1\xff duration_ms=200\n' >"$out/latin1.job"
for name in empty v2 no-magic binary latin1; do
	ft_refused "$out/$name.out" "$out/$name.err" "^boot: (--job )?$out/$name.job" \
		./run.sh boot before --job "$out/$name.job" --out "$out/$name.run"
	[ ! -e "$out/$name.run" ] || fail "$name: a run directory was made"
	echo "ok: $name: $(cat "$out/$name.err")"
done
! pgrep -f "qemu-system-arm.*$out" || fail "a QEMU was started"
ok "no QEMU was started"

# The campaign runner's path: job.render() checks what campaign files give.
PYTHONPATH=$LB_ROOT "$LB_PY" - <<'PY'
from guest import job
bad = [
    ([("p1\n", {})], {}, "trailing newline in an id"),
    ([("p1\nreboot", {})], {}, "newline in an id"),
    ([("a b", {})], {}, "space in an id"),
    ([("$(x)", {})], {}, "command substitution in an id"),
    ([("p1", {"read_pct": "5; reboot"})], {}, "a string value"),
    ([("p1", {"read_pct": True})], {}, "a bool value"),
    ([("p1", {"read_pct": 5.0})], {}, "a float value"),
    ([("p1", {"read_pct": 101})], {}, "read_pct 101"),
    ([("p1", {"x y": 1})], {}, "a key with a space"),
    ([("p1", {})], {"inject": "none\npoint p2"}, "a newline in an option"),
    ([("p1", {})], {"perf_stat\n": "1"}, "a newline in an option key"),
    ([], {}, "no points"),
]
for points, options, what in bad:
    try:
        job.render(points, options)
    except job.JobError as e:
        print(f"ok: render refuses {what}: {e}")
    else:
        raise SystemExit(f"FAIL: render accepted {what}")
PY
