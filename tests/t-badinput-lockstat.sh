#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ./run.sh lockstat on what is not a lock_stat dump: an empty file, blank
# lines, garbage text, binary data (with and without NUL bytes), version
# 0.5, a header only, a dump cut before its column header or in mid-row, a
# row with a field too few or a letter in a count, and a line of dashes
# outside a class; and hostile ones (issue #17): a 1 MB line that took the
# old contention-point pattern minutes, a count of 5000 digits (over the
# line limit), of 21 digits (over a u64's 20), a '²' as a count (passes
# str.isdigit()), a FIFO (waits for a writer) and /dev/zero (never ends).
# Each: exit 2, one line "lockstat: FILE[:LINE]: what", no CSV on stdout,
# no traceback, within 10 s and 1 GB of memory.  A real dump converts
# (exit 0).
#
# Usage: tests/t-badinput-lockstat.sh

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init badinput-lockstat

real=$LB_ROOT/tests/unit/fixtures/real/lock_stat-before-r50.txt
./run.sh lockstat "$real" >"$out/real.csv"
[ "$(head -n 1 "$out/real.csv" | cut -d, -f1-2)" = class,kind ] || fail "no CSV header"
grep -q '^mboxes_lock,R,' "$out/real.csv" || fail "no mboxes_lock R row"
ok "a real dump converts: $(($(wc -l <"$out/real.csv") - 1)) rows"

f=$out/files
mkdir -p "$f"
: >"$f/empty.txt"
printf '\n\n   \n' >"$f/blank.txt"
printf 'hello world\nthis is not lock_stat\n' >"$f/garbage.txt"
head -c 2048 "$LB_BUILD/before/uImage" >"$f/binary-nul.txt"
printf 'lock_stat version 0.4\n\xff\xfe\xfd\x80\n' >"$f/binary-utf8.txt"
sed '1s/0\.4/0.5/' "$real" >"$f/version-0.5.txt"
printf 'lock_stat version 0.4\n' >"$f/header-only.txt"
head -n 3 "$real" >"$f/cut-in-header.txt"
n=$(grep -bo 'mboxes_lock-W' "$real" | head -n 1 | cut -d: -f1)
head -c $((n + 40)) "$real" >"$f/cut-mid-row.txt"
sed '0,/mboxes_lock-W:/s/\(mboxes_lock-W: *[0-9]*\) *[0-9]*/\1/' "$real" >"$f/field-missing.txt"
sed '0,/mboxes_lock-W:/s/\(mboxes_lock-W: *\)[0-9]/\1x/' "$real" >"$f/letter-in-count.txt"
{ head -n 5 "$real"; echo '----------'; tail -n +6 "$real"; } >"$f/dashes-outside.txt"
{ head -n 6 "$real"; printf x; printf '%*s\n' 210000 '' | sed 's/ / 1 [</g'; } >"$f/long-line.txt"
[ "$(wc -c <"$f/long-line.txt")" -gt 1048576 ] || fail "long-line.txt is not over 1 MB"
sed "0,/mboxes_lock-W:/s/\(mboxes_lock-W: *\)[0-9]*/\1$(printf '%05000d' 9)/" "$real" >"$f/count-5000-digits.txt"
sed '0,/mboxes_lock-W:/s/\(mboxes_lock-W: *\)[0-9]*/\1123456789012345678901/' "$real" >"$f/count-21-digits.txt"
sed '0,/mboxes_lock-W:/s/\(mboxes_lock-W: *\)[0-9]*/\1\xc2\xb2/' "$real" >"$f/count-superscript.txt"
mkfifo "$f/fifo.txt"
ln -s /dev/zero "$f/dev-zero.txt"
for g in field-missing letter-in-count count-5000-digits count-21-digits count-superscript; do
	! cmp -s "$real" "$f/$g.txt" || fail "$g.txt is not changed"
done

# bounded CMD...: CMD in 1 GB of address space for at most 10 s, so that a
# read that blocks (the FIFO) or never ends (/dev/zero) fails the test
# (exit 124, or not 2) instead of hanging it or eating the host's memory.
bounded() {
	(
		ulimit -v 1048576
		exec timeout 10 "$@"
	)
}

cnt=0
for t in "$f"/*.txt; do
	name=$(basename "$t" .txt)
	ft_refused "$out/$name.csv" "$out/$name.err" "^lockstat: $t(:[0-9]+)?: " bounded ./run.sh lockstat "$t"
	[ ! -s "$out/$name.csv" ] || fail "$name: CSV on stdout"
	echo "ok: $name: $(cat "$out/$name.err")"
	cnt=$((cnt + 1))
done
ok "$cnt bad dumps refused: exit 2, one line, no CSV"
