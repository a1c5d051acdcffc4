#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Commit subjects of at most 72 columns (issue #28), as the commit blocks
# the harness writes for its users: every commit after f0a232a, the last
# one over (the 146 older ones stay as they are).  A subject is measured
# in characters, as `git log --format=%s` prints it.  In a shallow clone
# the commits it holds are checked; a history where f0a232a is not an
# ancestor of HEAD (rewritten) fails with one line.
#
# Usage: tests/t-commit-subjects.sh
# Needs: -

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
base=f0a232a
max=72

[ "$(git rev-parse --is-inside-work-tree 2>/dev/null)" = true ] ||
	{ echo "t-commit-subjects: $LB_ROOT is not a git work tree" >&2; exit 1; }
if git merge-base --is-ancestor "$base" HEAD 2>/dev/null; then
	range=$base..HEAD
	what="commits after $base"
elif [ "$(git rev-parse --is-shallow-repository)" = true ]; then
	range=HEAD
	what="commits of this shallow clone"
else
	echo "t-commit-subjects: $base is not an ancestor of HEAD (a rewritten history?)" >&2
	exit 1
fi
n=$(git rev-list --count "$range")
long=$(git log --format='%h%x09%s' "$range" |
	awk -F '\t' -v max=$max 'length($2) > max { printf "  %s (%d columns): %s\n", $1, length($2), $2 }')
if [ -n "$long" ]; then
	echo "t-commit-subjects: subjects over $max columns (git commit --amend, or rebase -i and reword):" >&2
	echo "$long" >&2
	exit 1
fi
echo "ok: $n $what, every subject at most $max columns"
