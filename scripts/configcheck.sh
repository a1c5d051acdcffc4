#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that every option the config fragments ask for is in the final
# .config, as rcutorture's configcheck.sh does: kconfig silently drops an
# option whose dependencies are not met, and a kernel without, say,
# CONFIG_LOCK_STAT would measure something else.  The fragments are read
# in the order merge_config.sh merged them, and as it does, a later
# fragment's line for an option replaces an earlier one's: a variant's
# fragment may ask for what the arch's base fragment leaves out
# (CONFIG_NET=y over "# CONFIG_NET is not set"), or turn off what it asks
# for (PREEMPT_RT's "# CONFIG_QUEUED_RWLOCKS is not set").  What did not
# stick is said with the fragment that asked for it last, and for an
# option left unset, the "depends on" lines of its Kconfig entry in the
# tree, when the tree is given: what refused it.
#
# Usage: configcheck.sh [--tree SRC] DOTCONFIG FRAGMENT...
#
# Prints one line per option that did not stick; exit 6 if any, 2 on bad
# arguments.

LB_PROG=configcheck
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

src=''
if [ "${1:-}" = --tree ]; then
	[ $# -ge 2 ] || lb_die 2 "usage: configcheck.sh [--tree SRC] DOTCONFIG FRAGMENT..."
	src=$2
	shift 2
fi
[ $# -ge 2 ] || lb_die 2 "usage: configcheck.sh [--tree SRC] DOTCONFIG FRAGMENT..."
config=$1
shift
[ -f "$config" ] || lb_die 2 "no such .config: $config"

# depends OPT: "; Kconfig: depends on A && B" from the tree, or nothing.
depends() {
	local d
	[ -n "$src" ] || return 0
	d=$(grep -rh --include='Kconfig*' -A12 -E "^(menu)?config ${1#CONFIG_}\$" "$src" 2>/dev/null |
		sed -En '2,$ { /^(menu)?config /q; /^[[:space:]]*depends on /{ s/^[[:space:]]*depends on //; p } }' |
		sort -u | paste -sd ';' | sed 's/;/; /g')
	[ -z "$d" ] || printf '; Kconfig: depends on %s' "$d"
}

declare -A want=() from=()
order=()
for frag in "$@"; do
	[ -f "$frag" ] || lb_die 2 "no such fragment: $frag"
	name=${frag##*/}
	while IFS= read -r line; do
		case $line in
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			;;
		CONFIG_*=*) opt=${line%%=*} ;;
		*) continue ;;
		esac
		[ -n "${want[$opt]+set}" ] || order+=("$opt")
		want[$opt]=$line from[$opt]=$name
	done <"$frag"
done

bad=0
for opt in "${order[@]}"; do
	line=${want[$opt]} name=${from[$opt]}
	got=$(grep -m1 "^$opt=" "$config" || true)
	case $line in
	"# "*)
		if [ -n "$got" ]; then
			lb_err "$name: $opt is not set in the fragment but $got in .config (something selects it)"
			bad=1
		fi
		;;
	*)
		if [ "$got" != "$line" ]; then
			lb_err "$name: asked for $line, .config has ${got:-$opt not set}$(depends "$opt")"
			bad=1
		fi
		;;
	esac
done
[ "$bad" = 0 ] || exit 6
