# SPDX-License-Identifier: GPL-2.0
"""summary.md's section on the position effect: the rows of
analysis.estimate.position.position_table, and what its Kruskal-Wallis
test says, in words."""

import math

from analysis.estimate.position import ALPHA
from analysis.render.formatting import p_value_s


def _p_text(p):
    """"p = 0.012", "p < 0.001"."""
    text = p_value_s(p)
    return f"p < {text[1:]}" if text.startswith("<") else f"p = {text}"


def _n_s(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) \
        else f"{x:.3f}"


def position_lines(table, metric_name_for_cpus, confidence=0.95):
    """summary.md's section on the position effect (rows of
    position_table); [] when the table is empty. metric_name_for_cpus(cpus)
    -> the metric's name as the section shows it."""
    if table is None or table.empty:
        return []
    pct = f"{100 * confidence:.4g}"
    out = ["## Position in the repetition", "",
           "Each boot's primary metric divided by the median of its own "
           "variant's boots at the same vCPU count and point (1 = that "
           "variant's typical boot; inverted for a lower-is-better metric, "
           "so that below 1 is worse everywhere), by the boot's place in its "
           "repetition's order (1 = first). If the place moves the numbers "
           "(the host warming, a neighbour's tail), only orders that give "
           "every variant every place equally often (order = \"balanced\") "
           "compare fairly.", "",
           f"| vCPUs | metric | position | boots | median [{pct}% CI] | "
           "held by |",
           "|---:|---|---:|---:|---|---|"]
    for _, r in table.iterrows():
        out.append(f"| {int(r['cpus'])} | {metric_name_for_cpus(int(r['cpus']))}"
                   f" | {int(r['pos'])} | {int(r['n'])} | {_n_s(r['median'])} "
                   f"[{_n_s(r['ci_lo'])}, {_n_s(r['ci_hi'])}] | "
                   f"{r['variants']} |")
    out.append("")
    for cpus, block in table.groupby("cpus", sort=True):
        p = block["p_kruskal"].iloc[0]
        head = f"- {int(cpus)} vCPU{'' if int(cpus) == 1 else 's'}: "
        if isinstance(p, float) and math.isnan(p):
            out.append(head + "too few positions with data (or no spread) "
                       "to test whether the position matters.")
        elif p < ALPHA:
            out.append(head + f"Kruskal-Wallis {_p_text(p)} across "
                       "positions: the position moved the numbers: compare "
                       "only counterbalanced orders.")
        else:
            out.append(head + f"Kruskal-Wallis {_p_text(p)} across "
                       "positions: no sign that the position moved the "
                       "numbers at this n.")
    out.append("")
    return out
