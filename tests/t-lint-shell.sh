#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every shell script is shellcheck clean; the guest's init as POSIX sh.
#
# Usage: tests/t-lint-shell.sh
# Needs: -

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$LB_ROOT"
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
	'*.sh' run.sh .ci/run | grep -vx guest/inside/init.sh)
shellcheck "${files[@]}"
shellcheck -s sh guest/inside/init.sh
echo "shellcheck clean: ${#files[@]} bash files and guest/inside/init.sh"
