#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The next steps ./run.sh convert prints for the variant it wrote: the
# build command, the campaign file to start from (a shipped campaign of
# the same lock, target = "LOCK", else how to write one) and the campaign
# command, with --variants DIR when the variant went to a folder of its
# own (convert --out DIR).  ./run.sh runs from the repository root, so a
# folder inside it is named from there.  Apart from convert.sh so that it
# can be tested without a kernel tree (tests/t-convert-next.sh).
#
# Usage: convert-next.sh BASE NAME LOCK [DIR [CAMPAIGN [VARIANTS_DIR...]]]
#   BASE  the variant converted from; NAME the new variant; LOCK the lock;
#   DIR   convert's --out folder ("" or absent: kernel-patches/variants/)
#   CAMPAIGN  the campaign file convert --workload wrote: the one to run
#             ("": none)
#   VARIANTS_DIR  convert's --variants folders (where BASE may be): named
#             with --variants in the commands too, DIR's first

set -euo pipefail
LB_PROG=convert
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ $# -ge 3 ] || lb_die 2 "usage: convert-next.sh BASE NAME LOCK [DIR [CAMPAIGN [VARIANTS_DIR...]]]"
base=$1 name=$2 lock=$3 out=${4:-} mine=${5:-}
shift $(($# < 5 ? $# : 5))
# A base of another arch or kernel version (before@arm64, before@6.12):
# the new variant is built for the same, and a campaign names the files
# (variants = [...]) with that arch and version as arches and kernels.
bname=${base%%@*} suffix=${base#"${base%%@*}"}
where=
IFS=@ read -r -a parts <<<"${suffix#@}"
for p in "${parts[@]}"; do
	if [[ $p =~ ^[0-9]+\.[0-9]+$ ]]; then
		where+=", kernels = [\"$p\"]"
	else
		where+=", arches = [\"$p\"]"
	fi
done
vflag=
seen=" "
for d in "$out" "$@"; do
	[ -n "$d" ] || continue
	[ -d "$d" ] || lb_die 2 "$d: not a folder"
	vabs=$(cd "$d" && pwd)
	case $vabs in
	"$LB_ROOT"/*) vabs=${vabs#"$LB_ROOT"/} ;;
	esac
	[[ $seen != *" $vabs "* ]] || continue
	seen+="$vabs "
	vflag+="--variants $vabs "
done
# A campaign of the same lock, if one ships (its target = "LOCK"); the
# registry's own lock is the default campaign's.
camp=$(grep -l -x -F "target = \"$lock\"" "$LB_ROOT"/campaigns/*.toml 2>/dev/null | head -n 1 || true)
[ -n "$camp" ] || [ "$lock" != mboxes_lock ] || camp=$LB_ROOT/campaigns/default.toml
echo "convert: next steps:"
echo "  ./run.sh build ${vflag}$name$suffix"
if [ -n "$mine" ]; then
	[ -f "$mine" ] || lb_die 2 "$mine: no such campaign file"
	mine=$(cd "$(dirname "$mine")" && pwd)/$(basename "$mine")
	mine=${mine#"$LB_ROOT"/}
	echo "  ./run.sh campaign ${vflag}$mine --dry-run   # then without --dry-run (1 vCPU under icount, 3 boots a side; 2 vCPUs, 6)"
	exit 0
elif [ -n "$camp" ]; then
	set_base=
	[ "$bname" = before ] || set_base=" and baseline = \"$bname\""
	echo "  cp ${camp#"$LB_ROOT"/} my-$name.toml   # then set variants = [\"$bname\", \"$name\"]$set_base$where in it"
else
	echo "  write my-$name.toml as campaigns/*.toml are (docs/campaigns.md), with variants = [\"$bname\", \"$name\"]$where"
	echo "    and a [[points]] workload that takes $lock (kernel-patches/targets/, guest/JOB.md)"
fi
echo "  ./run.sh campaign ${vflag}my-$name.toml --dry-run   # then without --dry-run"
