# SPDX-License-Identifier: GPL-2.0
"""Holm's step-down procedure for the exploratory rows of the comparisons
table: which hypotheses it rejects, and the confidence level it tests each
at.  Separate from analysis.estimate.stats because it is about a family of
comparisons, not one (analysis.verdict.verdicts applies it across the table)."""


def holm(pvalues, alpha=0.05):
    """Holm's step-down: a list of booleans, True where the hypothesis is
    rejected with the family-wise error rate held at alpha."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out = [False] * len(pvalues)
    k = len(pvalues)
    for rank, i in enumerate(order):
        if not pvalues[i] <= alpha / (k - rank):
            break
        out[i] = True
    return out


def holm_levels(pvalues, alpha=0.05):
    """Per hypothesis, the confidence level Holm's step-down tests it at:
    1 - alpha / (K - rank), rank = its place among the sorted p-values."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out = [1 - alpha] * len(pvalues)
    for rank, i in enumerate(order):
        out[i] = 1 - alpha / (len(pvalues) - rank)
    return out
