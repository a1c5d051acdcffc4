#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The one stand-in for qemu-system-arm, for the tests that start the real
# runner (guest/run_guest.py) without booting: first on PATH, the runner
# runs it as its QEMU (tests/unit/campaign_stand_ins.py qemu_path).
# "--version" says a version; otherwise, by LB_QEMU:
#
#   fail   (default) exits 1 at once: the boot ends at once, in error;
#   sleep  prints nothing and sleeps until the runner stops it (a boot
#          still running; its pid in LB_QEMU_PIDS/ when set);
#   stream plays a guest that sends a crafted results stream
#          (tests/unit/test_collect_hostile.py): copies the file
#          $LB_QEMU_STREAM to the results chardev of its command line
#          (-chardev file,id=results,path=..., as guest/qemu.py's
#          qemu_cmd() gives it), prints the console markers of the
#          points $LB_QEMU_POINTS (default p1) and of a finished job,
#          then exits; with LB_QEMU_STAY=1 it stays instead (a guest
#          still running) until it is stopped.
#
# Usage: standin-qemu.sh --version | standin-qemu.sh QEMU-ARGS...

set -euo pipefail
if [ "${1:-}" = --version ]; then
	echo "QEMU emulator version 7.2.0 (stand-in)"
	exit 0
fi

# The path of -chardev file,id=results,path=P (QEMU doubles a comma in
# an option value).
results_path() {
	local prev='' a
	for a in "$@"; do
		if [ "$prev" = -chardev ] && [[ $a == file,id=results,path=* ]]; then
			a=${a#file,id=results,path=}
			printf '%s\n' "${a//,,/,}"
			return 0
		fi
		prev=$a
	done
	echo "standin-qemu: no results chardev in the command line" >&2
	return 1
}

case ${LB_QEMU:-fail} in
sleep)
	[ -z "${LB_QEMU_PIDS:-}" ] || : >"$LB_QEMU_PIDS/$$"
	exec sleep 600
	;;
stream)
	results=$(results_path "$@")
	cp -- "$LB_QEMU_STREAM" "$results"
	echo "LOCKBENCH-INIT stand-in"
	for pid in ${LB_QEMU_POINTS:-p1}; do
		printf 'lockbench: point %s start\nlockbench: point %s done\n' "$pid" "$pid"
	done
	if [ "${LB_QEMU_STAY:-0}" = 1 ]; then
		echo "stand-in: results sent, staying"
		exec sleep 600
	fi
	echo "LOCKBENCH-JOB-END status=ok"
	;;
*) exit 1 ;;
esac
