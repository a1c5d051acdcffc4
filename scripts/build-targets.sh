#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build several targets (./run.sh build): the kernels, then the guest root
# fs and lockload of each arch built.
#
# Targets fall into groups that share no objects: one per arch and set of
# config fragments (before, after, rcu... in one; before-plain and
# after-plain in another; the @arm64 targets in a third).  Inside a group
# the targets build one after the other, fewer patches first, so that each
# finds its donor built (build-kernel.sh).  Two groups build side by side:
# a kernel build leaves a core idle while it extracts, configures and
# links (a donor target is mostly that: 33 s of wall for 38 s of CPU,
# measured on 2 cores), and the other group's compile fills it.
#
# Usage: build-targets.sh TARGET...
#
# Exit status: that of the first target that failed (lib.sh's codes: 4 a
# patch that does not apply, 5 a failed build, ...); the other group is
# stopped, and what it had not finished is rebuilt next time (a target
# is complete only with its build-meta.json).

set -euo pipefail
LB_PROG=build
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$LB_ROOT"

# --chain "T1 T2 ...": one group, in order (GNU parallel's job).
if [ "${1:-}" = --chain ]; then
	read -ra chain <<<"$2"
	for t in "${chain[@]}"; do
		scripts/build-kernel.sh "$t"
	done
	exit 0
fi

[ $# -gt 0 ] || lb_die 2 "usage: build-targets.sh TARGET..."
# Fewer patches first: a variant's donor (build-kernel.sh) before it.
targets=$(lb_py -m scripts.variant order "$@") || exit 2

# group_of T: the arch and the config fragments of T (build-kernel.sh's
# donors come from the same group only).
group_of() {
	lb_py -m scripts.variant show "$1" | grep -E '^(arch|config) ' | tr '\n' ' '
}
declare -A chain_of=()
groups=()
arches=()
for t in $targets; do
	g=$(group_of "$t") || exit 2
	[ -n "${chain_of[$g]+x}" ] || groups+=("$g")
	chain_of[$g]="${chain_of[$g]:-} $t"
	a=arm
	[[ $t != *@* ]] || a=${t#*@}
	[[ " ${arches[*]} " == *" $a "* ]] || arches+=("$a")
done

if [ ${#groups[@]} -eq 1 ]; then
	"$0" --chain "${chain_of[${groups[0]}]}"
else
	# The longest group first, so that it does not end alone.  (The
	# first to start extracts the pristine tree; the other waits for it
	# on build-kernel.sh's lock.)
	for g in "${groups[@]}"; do
		read -ra c <<<"${chain_of[$g]}"
		printf '%s\t%s\n' "${#c[@]}" "${c[*]}"
	done | sort -t $'\t' -k1,1rn -s | cut -f2 |
		parallel --will-cite -j 2 --line-buffer --halt now,fail=1 "$0" --chain {}
fi
for a in "${arches[@]}"; do
	guest/build-rootfs.sh --arch "$a"
	guest/build-lockload.sh --arch "$a"
done
