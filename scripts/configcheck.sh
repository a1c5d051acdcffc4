#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that every option a config fragment asks for is in the final
# .config, as rcutorture's configcheck.sh does: kconfig silently drops an
# option whose dependencies are not met, and a kernel without, say,
# CONFIG_LOCK_STAT would measure something else.
#
# Usage: configcheck.sh DOTCONFIG FRAGMENT...
#
# Prints one line per option that did not stick; exit 6 if any, 2 on bad
# arguments.

LB_PROG=configcheck
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || lb_die 2 "usage: configcheck.sh DOTCONFIG FRAGMENT..."
config=$1
shift
[ -f "$config" ] || lb_die 2 "no such .config: $config"

bad=0
for frag in "$@"; do
	[ -f "$frag" ] || lb_die 2 "no such fragment: $frag"
	name=${frag##*/}
	while IFS= read -r line; do
		case $line in
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			if grep -q "^$opt=" "$config"; then
				lb_err "$name: $opt is not set in the fragment but $(grep "^$opt=" "$config") in .config"
				bad=1
			fi
			;;
		CONFIG_*)
			if ! grep -qxF "$line" "$config"; then
				opt=${line%%=*}
				got=$(grep "^$opt=" "$config" || echo "$opt is not set")
				lb_err "$name: asked for $line, .config has $got"
				bad=1
			fi
			;;
		esac
	done <"$frag"
done
[ "$bad" = 0 ] || exit 6
