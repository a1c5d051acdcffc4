# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# lock_calls TARGET: the lock functions omap_mbox_get() calls in TARGET's
# linked kernel (build/TARGET/src/obj/vmlinux, disassembled with its
# arch's objdump), one "<name>" each, sorted, on one line: what a
# conversion made of the lookup, whichever objects it started from
# (tests/t-kernel.sh, t-versions.sh, t-rt.sh).  "<_raw_read_lock>
# <_raw_read_unlock> " for an rwlock, "<_raw_spin_lock> ..." for a
# spinlock, "<rt_read_lock> ..." and "<rt_spin_lock> ..." under
# PREEMPT_RT.  Source it after scripts/lib.sh.

lock_calls() {
	local arch
	arch=$(lb_py -c 'import json, sys; print(json.load(open(sys.argv[1]))["arch"])' \
		"$LB_BUILD/$1/build-meta.json") || return 1
	lb_arch_info "$arch"
	# shellcheck disable=SC2154 # lb_archinfo: set by lib.sh's lb_arch_info
	"${lb_archinfo[cross_prefix]}objdump" -d --no-show-raw-insn --disassemble=omap_mbox_get \
		"$LB_BUILD/$1/src/obj/vmlinux" | grep -oE '<(_raw|rt)_[a-z_]*lock>' | sort -u | tr '\n' ' '
}
