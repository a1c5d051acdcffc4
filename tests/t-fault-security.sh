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

# Every built kernel has networking off unless its variant asked for it
# (a fragment such as kernel-patches/configs/net.config; QEMU's -nic none
# above still gives that guest no device but lo).
n=0
for meta in "$LB_BUILD"/*/build-meta.json; do
	cfg=$(dirname "$meta")/config
	# "on": a shipped fragment asks for networking; "own": a fragment of
	# the user's own, which the build's configcheck already held to.
	asked=$(lb_py -c 'import json, os, sys
m = json.load(open(sys.argv[1]))
paths = [os.path.join(sys.argv[2], f["name"]) for f in m["config_fragments"]]
if any(not os.path.isfile(p) for p in paths):
    print("own")
elif any("CONFIG_NET=y" in open(p).read().split() for p in paths):
    print("on")' "$meta" "$LB_ROOT/kernel-patches/configs")
	case $asked in
	own) continue ;;
	on)
		grep -qx 'CONFIG_NET=y' "$cfg" || fail "$cfg: its fragments ask for CONFIG_NET, not set"
		continue
		;;
	esac
	grep -qx '# CONFIG_NET is not set' "$cfg" || fail "$cfg: CONFIG_NET is not off"
	n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n built kernels found"
ok "$n built kernels that did not ask for networking have CONFIG_NET off"

# Every built module is for its guest's kernel: the arch and the kernel
# release its build-meta.json records (a folder's name is not parsed:
# VARIANT@ARCH@KERNEL has several shapes), never the host's.
n=0
for meta in "$LB_BUILD"/*/build-meta.json; do
	ko=$(dirname "$meta")/mbox_bench.ko
	[ -f "$ko" ] || continue
	read -r arch release < <(lb_py -c 'import json, sys
m = json.load(open(sys.argv[1]))
print(m["arch"], m["kernel_version"])' "$meta")
	case $arch in
	arm64) re=aarch64-linux-gnu-readelf class=ELF64 machine=AArch64 ;;
	arm) re=arm-linux-gnueabihf-readelf class=ELF32 machine=ARM ;;
	*) fail "$meta: arch $arch" ;;
	esac
	"$re" -h "$ko" | grep -Eq "Class: +$class" || fail "$ko is not $class"
	"$re" -h "$ko" | grep -Eq "Machine: +$machine\$" || fail "$ko is not $machine"
	vm=$("$re" -p .modinfo "$ko" | grep -o 'vermagic=[^ ]*')
	[ "${vm#vermagic=}" = "$release" ] || fail "$ko: $vm, but the build says $release"
	[ "$vm" != "vermagic=$(uname -r)" ] || fail "$ko is for the host's kernel"
	n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n modules found"
ok "$n modules are ARM/AArch64 for their guests' kernels, not for the host's $(uname -r) ($(uname -m))"

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
