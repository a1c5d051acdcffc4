# SPDX-License-Identifier: GPL-2.0
"""The verdict table: comparisons.csv's rows in their one order, and the
views of them that every output renders.  The order is set once, when
the table is made (verdicts.comparisons_table: the answer's primary
cells first, by pair, vCPUs and point; then the others by metric,
pair, vCPUs, point).  answer.txt, summary.md and the commit block
(analysis/render/) take their rows from here and never select or sort
them themselves; report.html (plots/page_content.py) reads the same
rows in the same order from comparisons.csv.  So every output shows the
same rows, in the same order, and counts the A/A control alike."""

from analysis.estimate import stats
from analysis.verdict import guards

#: an A/A verdict that says the two boots of one kernel differ
AA_CLAIMS = tuple(f"A/A {x}" for x in (stats.BETTER, stats.WORSE,
                                        stats.HARM, guards.CONFLICT))


class VerdictTable:
    """comparisons.csv as a data frame (`rows`) with the campaign's
    primary metric; read-only views, each in the table's order."""

    def __init__(self, rows, primary_metric):
        self.rows = rows
        self.primary_metric = primary_metric

    def __len__(self):
        return len(self.rows)

    @property
    def primary(self):
        """The primary cells: the rows that answer the campaign."""
        r = self.rows
        return r[r["role"] == "primary"] if len(r) else r

    def writers(self, baseline, variant):
        """The writers' answer of a pair (role `writers`: the write
        latency tail at the mixed points, verdicts.WRITERS)."""
        r = self.rows
        if not len(r) or "role" not in r:
            return r
        return r[(r["role"] == "writers") & (r["baseline"] == baseline)
                 & (r["variant"] == variant)]

    def controls(self):
        """The A/A control's rows of the primary metric (what a campaign
        of the baseline and its control alone answers with)."""
        r = self.rows
        return r[(r["role"] == "control")
                 & (r["metric"] == self.primary_metric)] if len(r) else r

    def pairs(self):
        """[(baseline, variant), ...] in the table's order."""
        return pairs_of(self.rows)

    def blocks(self):
        """[(metric, (baseline, variant), rows)]: summary.md's tables, one
        per metric and pair, in the table's order."""
        if not len(self.rows):
            return []
        return [(m, (b, v), g) for (m, b, v), g in self.rows.groupby(
            ["metric", "baseline", "variant"], sort=False)]


def pairs_of(rows):
    """[(baseline, variant), ...] of a table's rows, in their order."""
    if not len(rows):
        return []
    return list(dict.fromkeys(zip(rows["baseline"], rows["variant"])))


def by_pair(rows):
    """[((baseline, variant), rows)] in the rows' order."""
    return [(k, g) for k, g in rows.groupby(["baseline", "variant"],
                                             sort=False)] if len(rows) else []


def aa_status(rows):
    """(cells with an A/A control, of them A/A no harm, of them where the
    control differs from its baseline: its verdict claims a difference,
    or its CI excludes 1, which widened the comparison's) over rows'
    calibration column: the one count of the answer and the commit
    block."""
    cal = rows[rows["calibration"].fillna("") != ""] if len(rows) else rows
    if not len(cal):
        return 0, 0, 0
    verd = cal["calibration"].str.split(",").str[0]
    differs = verd.isin(AA_CLAIMS) | cal["calibration"].str.contains(
        "widened", regex=False)
    return (len(cal), int((verd == f"A/A {stats.NO_HARM}").sum()),
            int(differs.sum()))
