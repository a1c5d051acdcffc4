#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ./run.sh lockstat on what is not a lock_stat dump: an empty file, blank
# lines, garbage text, binary data (with and without NUL bytes), version
# 0.5, a header only, a dump cut before its column header or in mid-row, a
# row with a field too few or a letter in a count, and a line of dashes
# outside a class.  Each: exit 2, one line "lockstat: FILE[:LINE]: what",
# no CSV on stdout, no traceback.  A real dump converts (exit 0).
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
for g in field-missing letter-in-count; do
	! cmp -s "$real" "$f/$g.txt" || fail "$g.txt is not changed"
done

cnt=0
for t in "$f"/*.txt; do
	name=$(basename "$t" .txt)
	ft_refused "$out/$name.csv" "$out/$name.err" "^lockstat: $t(:[0-9]+)?: " ./run.sh lockstat "$t"
	[ ! -s "$out/$name.csv" ] || fail "$name: CSV on stdout"
	echo "ok: $name: $(cat "$out/$name.err")"
	cnt=$((cnt + 1))
done
ok "$cnt bad dumps refused: exit 2, one line, no CSV"
