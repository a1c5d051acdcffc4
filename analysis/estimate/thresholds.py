# SPDX-License-Identifier: GPL-2.0
"""Every number a verdict depends on, in one place (Thresholds): the
confidence, the margin, the least n, the bootstrap's resamples and seed,
and the per-look level of a campaign that may stop early.  The defaults
a campaign file may change are lockbench/defaults.py's."""

from dataclasses import dataclass, replace

from lockbench import defaults

#: the fewest boots a side (and in the A/A pool) an exact (icount) cell
#: is judged with (analysis/estimate/exact.py); Thresholds.min_n is the
#: wall clock's
EXACT_MIN_N = 3


@dataclass(frozen=True)
class Thresholds:
    """Every number the verdict depends on, in one place (data, not
    arguments scattered through calls)."""
    confidence: float = defaults.CONFIDENCE  # of the median CIs and the ratio CI
    alpha: float = 0.05  # significance of the Mann-Whitney U test
    margin: float = defaults.MARGIN  # non-inferiority margin, relative
    min_n: int = 6  # fewer boots in a group: no verdict
    probe_tolerance: float = 0.02  # _ref verdicts need the probe this still
    resamples: int = 10000  # bootstrap resamples (ratio of ratios)
    seed: int = 1  # bootstrap seed

    def with_(self, **kw):
        return replace(self, **{k: v for k, v in kw.items() if v is not None})

    def for_looks(self, looks):
        """The thresholds of one look of a campaign that may stop at any of
        `looks` looks: Bonferroni over the looks, so that the chance of a
        false claim at any look stays within alpha (1 - confidence)."""
        if looks <= 1:
            return self
        return replace(self, confidence=defaults.look_confidence(
            looks, self.confidence), alpha=self.alpha / looks)

    def for_run(self, margin, looks):
        """The thresholds a run is judged by: its campaign's margin (or
        report's --margin) at the per-look level of a campaign that may
        stop at any of `looks` looks (for_looks)."""
        return self.with_(margin=margin).for_looks(looks)
