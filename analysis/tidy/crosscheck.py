# SPDX-License-Identifier: GPL-2.0
"""The cross-check of a point (crosscheck.csv): the module's own count of
the calls that take the lock (results.txt lockops) against lock_stat's
acquisitions of the class, by the relation the variant's kernel implies.
A disagreement beyond CROSSCHECK_TOLERANCE means one of the two counts
is not what it claims to be."""

CROSSCHECK_TOLERANCE = 0.01  # relative; more is a disagreement


def crosscheck_row(lockops, rows, tolerance=CROSSCHECK_TOLERANCE,
                   lookup_lock="lock"):
    """Compare the module's lockops with the lock_stat rows of the class.

    The module counts calls that would take the lock; which of them do is
    a property of the kernel (lookup_lock, from the variant file):
    lookups take no lock ("none", e.g. RCU): R + W + plain == write;
    else rwlock-style (an -R row exists): R == read and W + plain == write;
    else (one plain row, a spinlock): plain + W == read + write."""
    read, write = int(lockops["read"]), int(lockops["write"])
    r = sum(x.acquisitions for x in rows if x.kind == "R")
    w = sum(x.acquisitions for x in rows if x.kind == "W")
    p = sum(x.acquisitions for x in rows if x.kind == "")
    expected = read + write
    if lookup_lock == "none":
        relation = "writes"
        expected = write
        rel = abs(r + w + p - write) / max(write, 1)
    elif any(x.kind == "R" for x in rows):
        relation = "rw"
        rel = max(abs(r - read) / max(read, 1),
                  abs(w + p - write) / max(write, 1))
    else:
        relation = "total"
        rel = abs(w + p - (read + write)) / max(read + write, 1)
    return {"lockops_read": read, "lockops_write": write,
            "lockstat_r_acq": r, "lockstat_w_acq": w, "lockstat_plain_acq": p,
            "relation": relation, "expected": expected,
            "observed": r + w + p, "rel_diff": rel,
            "ok": 1 if rel <= tolerance else 0}
