# SPDX-License-Identifier: GPL-2.0
"""Is a variant safe at all?  Before any number: a conversion from rwlock
to spinlock is also a lockdep question (readers may nest, or run in
interrupt context, where a spinlock deadlocks), and every lock_stat
kernel runs with PROVE_LOCKING (kernel-patches/configs/lockstat.config).

A boot whose console had a lockdep report (guest/run_guest.py records it
as a "lockdep: LINE" problem of the boot, whatever state the boot ended
in: lockdep, or hung when the deadlock then happened) makes its variant
unsafe: every comparison the variant takes part in is `unsafe`, and the
report shows the splat before the numbers.  A variant with no such boot
is not thereby proven safe: lockdep sees only the paths the workload
took.

The reports themselves are read in the parse stage
(analysis/parse/lockdep.py); this marks the comparisons they decide.
Pure functions."""

UNSAFE = "unsafe"


def mark(rows, unsafe, controls=()):
    """Every comparison row (a dict) whose baseline or variant is unsafe
    (a control: its baseline's kernel, from controls' (baseline, control)
    pairs) gets the verdict `unsafe`, whatever its numbers say."""
    booted = {c: b for b, c in controls}
    for r in rows:
        if booted.get(r["baseline"], r["baseline"]) in unsafe or \
                booted.get(r["variant"], r["variant"]) in unsafe:
            r["verdict"] = UNSAFE
