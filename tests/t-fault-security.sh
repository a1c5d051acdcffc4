#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Security basics.  The guest has no network: every QEMU command has
# "-nic none" and no other network option, every built kernel has
# CONFIG_NET off, and in a real guest /sys/class/net is empty (init.sh
# logs netdevs=N).  Nothing can load a module into the host kernel: no file
# outside the guest's side (Markdown aside) mentions insmod/modprobe/rmmod
# or the module syscalls, and every built mbox_bench.ko is a 32-bit ARM object for a
# 6.1 kernel, not the host's.  No job value reaches a shell unchecked
# (tests/t-badinput-job.sh), and a run made under umask 000 has no
# world-writable file or folder.
#
# Usage: tests/t-fault-security.sh
# Beside: yes

set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$LB_ROOT/tests/faults/lib.sh"
ft_init fault-security

# The guest's network, in a real boot, with the caller's umask at its worst.
printf 'lockbench-job v1\npoint p1 read_pct=50 duration_ms=200\n' >"$out/one.job"
umask 000
ft_boot "$out/run" "$out/one.job" --timeout 120 --silence 30
umask 022
ft_rc_is 0
grep -Eq 'LOCKBENCH-INIT .* netdevs=0([^0-9]|$)' "$out/run/console.log" ||
	fail "the guest has network devices: $(grep LOCKBENCH-INIT "$out/run/console.log")"
ok "in the guest, /sys/class/net is empty (netdevs=0)"
ww=$(find "$out/run" -perm -o+w -printf '%m %p\n')
[ -z "$ww" ] || fail "world-writable under umask 000: $ww"
ok "run directory made under umask 000: $(find "$out/run" | wc -l) entries, none world-writable"

# Every QEMU command line: the job's, and the interactive shell's.
lb_py -m guest.run_guest before --dry-run >"$out/shell-cmd"
for cmd in "$out/run/qemu-cmd" "$out/shell-cmd"; do
	grep -q -- ' -nic none ' "$cmd" || fail "no -nic none in $cmd"
	[ "$(grep -oE -- ' -(nic|net|netdev) ' "$cmd" | wc -l)" = 1 ] ||
		fail "another network option in $cmd: $(cat "$cmd")"
done
ok "QEMU runs with -nic none and no other network option"

# Every built kernel.
n=0
for cfg in "$LB_BUILD"/*/config; do
	[ -f "$(dirname "$cfg")/build-meta.json" ] || continue
	grep -qx '# CONFIG_NET is not set' "$cfg" || fail "$cfg: CONFIG_NET is not off"
	n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n built kernels found"
ok "$n built kernels have CONFIG_NET off"

# Every built module is for its guest's kernel: 32-bit ARM, or AArch64 in
# an arm64 target's folder (VARIANT@arm64).
n=0
for ko in "$LB_BUILD"/*/mbox_bench.ko; do
	case $ko in
	*@arm64/mbox_bench.ko) re=aarch64-linux-gnu-readelf class=ELF64 machine=AArch64 ;;
	*) re=arm-linux-gnueabihf-readelf class=ELF32 machine=ARM ;;
	esac
	"$re" -h "$ko" | grep -Eq "Class: +$class" || fail "$ko is not $class"
	"$re" -h "$ko" | grep -Eq "Machine: +$machine\$" || fail "$ko is not $machine"
	vm=$("$re" -p .modinfo "$ko" | grep -o 'vermagic=[^ ]*')
	case $vm in vermagic=6.1.*) ;; *) fail "$ko: $vm" ;; esac
	[ "$vm" != "vermagic=$(uname -r)" ] || fail "$ko is for the host's kernel"
	n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n modules found"
ok "$n modules are ARM/AArch64 for 6.1 guests, not for the host's $(uname -r) ($(uname -m))"

# Only the guest's side may name module loading (documentation aside), and
# the tests that read the guest's SELFTEST lines or its shell banner
# (./run.sh boot --help reads that banner from guest/inside/init.sh) about it.
allowed='^(guest/inside/init\.sh|guest/inside/rootfs-files\.txt|tests/t-guest-job\.sh|tests/t-think\.sh|tests/t-fault-security\.sh|tests/unit/test_cli_words\.py)$'
mapfile -t hits < <(git ls-files --cached --others --exclude-standard -z -- ':!*.md' |
	xargs -0 grep -lIE 'insmod|modprobe|rmmod|f?init_module|delete_module' || true)
[ ${#hits[@]} -gt 0 ] || fail "grep found nothing, not even guest/inside/init.sh"
for h in "${hits[@]}"; do
	grep -Eq "$allowed" <<<"$h" || fail "$h names module loading: $(grep -nE 'insmod|modprobe|rmmod|init_module' "$h" | head -n 3)"
done
grep -q 'insmod /mbox_bench.ko' guest/inside/init.sh || fail "guest/inside/init.sh does not insmod"
ok "module loading is named only on the guest's side: ${hits[*]}"
