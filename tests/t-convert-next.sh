#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The next steps ./run.sh convert prints (scripts/convert/convert-next.sh) name
# the variant it wrote, its --out folder (--variants DIR) in the build and
# the campaign commands, and the campaign to start from: the shipped one
# of the same lock (target = "LOCK"), the default campaign for
# mboxes_lock, else how to write one.  No kernel tree: convert's own run
# is tests/t-convert.sh.
#
# Usage: tests/t-convert-next.sh
# Needs: -

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init convert-next
cd "$LB_ROOT"

has() { # LOG LINE: LOG has LINE whole
	grep -qxF -- "$2" "$1" || fail "no line '$2' in: $(cat "$1")"
}
mkdir -p "$out/vars"
# A folder inside the repository is named from its root (./run.sh runs
# there); the suite's own output folder is one (build/test-out).
vars=$(cd "$out/vars" && pwd)
vars=${vars#"$LB_ROOT"/}
scripts/convert/convert-next.sh before spin-binfmt-lock binfmt_lock "$out/vars" >"$out/1.log"
has "$out/1.log" "  ./run.sh build --variants $vars spin-binfmt-lock"
has "$out/1.log" "  cp campaigns/binfmt.toml my-spin-binfmt-lock.toml   # then set variants = [\"before\", \"spin-binfmt-lock\"] in it"
has "$out/1.log" "  ./run.sh campaign --variants $vars my-spin-binfmt-lock.toml --dry-run   # then without --dry-run"
ok "--out DIR: build and campaign with --variants DIR, from campaigns/binfmt.toml"

scripts/convert/convert-next.sh after spin-mboxes-lock mboxes_lock >"$out/2.log"
has "$out/2.log" "  ./run.sh build spin-mboxes-lock"
has "$out/2.log" "  cp campaigns/default.toml my-spin-mboxes-lock.toml   # then set variants = [\"after\", \"spin-mboxes-lock\"] and baseline = \"after\" in it"
has "$out/2.log" "  ./run.sh campaign my-spin-mboxes-lock.toml --dry-run   # then without --dry-run"
ok "into kernel-patches/: no --variants; mboxes_lock from campaigns/default.toml, baseline set"

# A folder inside the repository is named from its root (./run.sh runs there).
scripts/convert/convert-next.sh before spin-x-lock x_lock tests/variants >"$out/3.log"
has "$out/3.log" "  ./run.sh build --variants tests/variants spin-x-lock"
grep -qF "write my-spin-x-lock.toml as campaigns/*.toml are (docs/campaigns.md)" "$out/3.log" ||
	fail "no campaign to copy for x_lock, and no word on writing one: $(cat "$out/3.log")"
ok "a lock with no campaign: how to write one"

# A base of another kernel version or arch: the new variant is built for
# the same, and the campaign names the files with that arch and version.
scripts/convert/convert-next.sh before@arm64@6.12 spin-binfmt-lock binfmt_lock >"$out/5.log"
has "$out/5.log" "  ./run.sh build spin-binfmt-lock@arm64@6.12"
has "$out/5.log" "  cp campaigns/binfmt.toml my-spin-binfmt-lock.toml   # then set variants = [\"before\", \"spin-binfmt-lock\"], arches = [\"arm64\"], kernels = [\"6.12\"] in it"
ok "a base of 6.12 on arm64: built as such, the campaign's arches and kernels named"

rc=0
scripts/convert/convert-next.sh before n l "$out/nowhere" 2>"$out/4.err" || rc=$?
if [ $rc != 2 ] || [ "$(wc -l <"$out/4.err")" != 1 ]; then
	fail "a missing folder: rc $rc, $(cat "$out/4.err")"
fi
ok "a missing folder: exit 2, one line"
