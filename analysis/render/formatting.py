# SPDX-License-Identifier: GPL-2.0
"""How the text outputs write a number, a ratio with its CI, a p-value, a
verdict label or a point: the one place for it, so that summary.md,
answer.txt and commit-msg.txt say the same thing the same way.  Pure
functions of values and table rows."""

import math

from analysis.parse.rundir import point_label
from lockbench.defaults import ICOUNT


def pct_s(confidence):
    """95 for 0.95, 98.33 for a campaign's per-look 1 - 0.05/3."""
    return f"{100 * confidence:.4g}"


def looks_s(f, confidence):
    """How a campaign that may stop early stopped, or ''."""
    looks, at = f["looks"], f["stopped_at"]
    if len(looks) < 2:
        return ""
    return (f"repetitions up to {looks[-1]} with looks at "
            f"{', '.join(map(str, looks))}, each at {pct_s(confidence)}% "
            f"(Bonferroni over the looks); "
            + (f"stopped at {at}: the time budget did not cover the next look"
               if at and f.get("stopped_by") == "budget" else
               f"stopped at {at}: every primary cell decided" if at else
               "no early stop"))


def vcpus_s(cpus):
    """'1 vCPU', '1/2 vCPUs'."""
    text = "/".join(map(str, cpus))
    return f"{text} vCPU{'' if text == '1' else 's'}"


def number_s(x):
    """3-4 significant digits with an SI suffix: 99.71k, 1.234M, 305.2."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if math.isinf(x):
        return "inf"
    ax = abs(x)
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if ax >= div:
            return f"{x / div:.4g}{suf}"
    return f"{x:.4g}"


def median_ci_s(med, lo, hi):
    """benchstat's "median ± x%": the larger distance to a CI bound."""
    if any(isinstance(v, float) and math.isnan(v) for v in (med, lo, hi)):
        return number_s(med)
    if med == 0:
        return f"{number_s(med)} [{number_s(lo)}, {number_s(hi)}]"
    pct = 100 * max(hi - med, med - lo) / abs(med)
    pct_s = f"{pct:.1f}" if pct < 10 else f"{pct:.0f}"
    return f"{number_s(med)} ± {pct_s}%"


def ratio_s(r, lo, hi, digits=3):
    if isinstance(r, float) and math.isnan(r):
        return "-"
    return f"{r:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def row_ratio(row):
    """A row's ratio and CI; 4 decimals for exact (icount) rows, whose
    CIs are parts per million wide."""
    return ratio_s(row["ratio"], row["ratio_ci_lo"], row["ratio_ci_hi"],
                   4 if row.get("clock") == ICOUNT else 3)


def p_value_s(p):
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    return f"{p:.3f}" if p >= 0.001 else "<0.001"


def delta_s(row):
    if not row["significant"] or (isinstance(row["ratio"], float)
                                  and math.isnan(row["ratio"])):
        return "~"
    return f"{100 * (row['ratio'] - 1):+.1f}%"


def verdict_s(row):
    """The verdict label as the comparisons table carries it (one string,
    the same in every output); "n/a" for a metric without a direction."""
    v = row["verdict"]
    return "n/a" if missing(v) or not v else str(v)


def row_point_label(row):
    """rundir.point_label() of a table row (point, read_pct, mailboxes,
    miss_pct columns)."""
    return point_label(row["point"], row.get("read_pct"),
                       row.get("mailboxes"), row.get("miss_pct"))


def split_warnings(text):
    """The "; "-separated warnings column as a list (NaN/None: none)."""
    if missing(text) or not text:
        return []
    return [w for w in str(text).split("; ") if w]


def missing(v):
    """None or NaN: a value the table does not have."""
    return v is None or (isinstance(v, float) and math.isnan(v))
