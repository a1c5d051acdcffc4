#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A stand-in for qemu-system-arm for the campaign tests that start cells
# on this host without booting: first on PATH, the runner
# (guest/run_guest.py) runs it as its QEMU.  "--version" says a version;
# otherwise, by LB_QEMU:
#
#   fail   (default) exits 1 at once: the cell ends at once, in error;
#   sleep  prints nothing and sleeps until the runner stops it (a cell
#          still running; its pid in LB_QEMU_PIDS/ when set).
#
# Usage: standin-qemu.sh --version | standin-qemu.sh QEMU-ARGS...

set -euo pipefail
if [ "${1:-}" = --version ]; then
	echo "QEMU emulator version 7.2.0 (stand-in)"
	exit 0
fi
case ${LB_QEMU:-fail} in
sleep)
	[ -z "${LB_QEMU_PIDS:-}" ] || : >"$LB_QEMU_PIDS/$$"
	exec sleep 600
	;;
*) exit 1 ;;
esac
