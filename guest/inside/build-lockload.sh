#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cross-build guest/inside/lockload/lockload.c, the userspace load generator, as a
# static binary for the guests' architecture: arm (Debian armhf,
# arm-linux-gnueabihf-gcc) or arm64 (aarch64-linux-gnu-gcc).  Static, so
# that it needs nothing from the guest's root file system; the runner
# (guest/qemu.py make_initrd) puts it in every job's initrd as
# /lockload.
#
# Nothing is done when OUTDIR/inputs.sha256 matches the source, this
# script and the compiler's version.
#
# Usage: build-lockload.sh [--arch arm|arm64] [OUTDIR]
#
#	OUTDIR defaults to build/lockload/ARCH; it receives lockload and
#	inputs.sha256 (the cache key, written last).  Exit codes as in
#	scripts/lib.sh.

set -euo pipefail
export LC_ALL=C
LB_PROG=build-lockload
# shellcheck source=../../scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

usage="usage: build-lockload.sh [--arch arm|arm64] [OUTDIR]"
arch=arm
outdir=
while [ $# -gt 0 ]; do
	case $1 in
	--arch)
		lb_need_value "$1" $#
		arch=$2
		shift
		;;
	-h | --help) lb_help && exit 0 ;;
	-*) lb_die 2 "unknown option '$1' ($usage)" ;;
	*) lb_set_once outdir "$1" ;;
	esac
	shift
done
# The compiler and its static libc: guest/arches.toml.
lb_arch_info "$arch"
cc=${lb_archinfo[cross_prefix]}gcc
libc=/usr/${lb_archinfo[triplet]}/lib/libc.a pkg=${lb_archinfo[libc_package]}
lb_need "$cc" sha256sum
lb_need_file "$libc" "$pkg"
outdir=${outdir:-$LB_BUILD/lockload/$arch}
src=$LB_ROOT/guest/inside/lockload/lockload.c

key=$({
	cd "$LB_ROOT" && sha256sum guest/inside/lockload/lockload.c bench-module/lat_hist.h \
		bench-module/results_out.h guest/inside/build-lockload.sh
	echo "$arch"
	"$cc" --version | head -n 1
} | sha256sum | cut -d' ' -f1)
if [ -f "$outdir/lockload" ] && [ "$(cat "$outdir/inputs.sha256" 2>/dev/null)" = "$key" ]; then
	exit 0
fi
mkdir -p "$outdir"
rm -f "$outdir/inputs.sha256"
# The histograms, the host-speed probe and the lines that carry them are
# the module's own (bench-module/lat_hist.h, results_out.h).
if ! "$cc" -O2 -Wall -Wextra -Werror -static -pthread -I"$LB_ROOT/bench-module" \
	-o "$outdir/lockload.tmp" "$src" \
	>"$outdir/build.log" 2>&1; then
	cat "$outdir/build.log" >&2
	lb_die 5 "lockload for $arch did not build: see $outdir/build.log"
fi
mv "$outdir/lockload.tmp" "$outdir/lockload"
echo "$key" >"$outdir/inputs.sha256"
echo "build-lockload: $arch: $outdir/lockload"
