#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian package the harness needs, and nothing else.
# Idempotent: packages already installed are left alone, and it says what it
# installs.  Needs root (or sudo) and Debian 12's package archive.
#
# Usage: setup.sh [--check]
#   --check  only list what is missing; exit 3 if anything is.

set -euo pipefail
LB_PROG=setup
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# What each group is for, so that a package can be traced to its user.
pkgs=(
	# kernels: kbuild's host tools (Debian's sources and each guest
	# arch's cross compiler: below)
	gcc libc6-dev make bc bison flex libssl-dev cpio kmod perl git xz-utils
	ccache
	# the kernel's Image in a uImage header, for a fast guest boot
	u-boot-tools
	# checkpatch.pl's SPDX check
	python3-ply python3-git
	# ./run.sh convert: an rwlock turned into a spinlock by a semantic patch
	coccinelle
	# guests: their Debian root file systems without emulation
	mmdebstrap
	# analysis and plots
	python3 python3-pandas python3-scipy gnuplot-nox
	# campaigns over several hosts; the server for tests/t-hosts.sh, which
	# starts its own sshd on 127.0.0.1 as two "hosts" (Debian's package
	# also enables its ssh service on port 22, which a lab host needs)
	parallel openssh-client openssh-server rsync
	# the report test: headless Chromium renders report.html
	chromium
	# the test suite's shell lint
	shellcheck
)
# Each guest arch's cross compiler (readelf for the root fs too), the
# static libc of its load generator (guest/inside/build-lockload.sh) and its
# QEMU, from guest/arches.toml, the one place an arch is described (read
# here with awk: python3 may not be installed yet).
mapfile -t -O "${#pkgs[@]}" pkgs < <(awk -F' *= *' '
	{ gsub(/"/, "", $2) }
	$1 == "cross_prefix" { sub(/-$/, "", $2); print "gcc-" $2; print "binutils-" $2 }
	$1 == "libc_package" || $1 == "qemu_package" { print $2 }' "$LB_ROOT/guest/arches.toml" | sort -u)

# The kernel sources, from kernel-patches/kernels.toml (linux-source-6.1,
# and linux-source-6.12 from bookworm-security).
mapfile -t -O "${#pkgs[@]}" pkgs < <(awk -F' *= *' '$1 == "package" { gsub(/"/, "", $2); print $2 }' \
	"$LB_ROOT/kernel-patches/kernels.toml")

check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
-h | --help)
	sed -n '3,10s/^# \{0,1\}//p' "$0"
	exit 0
	;;
*) lb_die 2 "unknown argument '$1' (usage: setup.sh [--check])" ;;
esac

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#pkgs[@]} packages are installed"
	exit 0
fi
if [ "$check" = 1 ]; then
	lb_die 3 "missing packages: ${missing[*]}: run ./run.sh setup"
fi
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
echo "setup: installing ${missing[*]}"
"${sudo[@]}" apt-get update -q
# Through env: sudo drops a variable set in front of it.
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	--no-install-recommends "${missing[@]}"
echo "setup: done"
