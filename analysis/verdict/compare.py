# SPDX-License-Identifier: GPL-2.0
"""Which pairs of a run are compared, and their comparisons table: the one
computation behind tidy/comparisons.csv, whether analyze or report runs it
(analysis/README.md, "Verdicts").

Pure functions of the run directory and data frames; never prints,
never writes.
"""

from dataclasses import dataclass, field

import pandas as pd

from analysis.parse.common import ParseError
from analysis.verdict import verdicts


@dataclass
class Compared:
    """The comparisons table and what it was computed from."""
    comps: pd.DataFrame
    pairs: list  # (baseline, variant) with samples on both sides
    controls: list  # (baseline, control) A/A pairs with samples
    unsafe: dict  # lockdep.lockdep_reports(): variant -> reports
    variants: list  # the variants with samples, manifest order
    baseline: str
    warnings: list = field(default_factory=list)
    tally: dict = field(default_factory=dict)  # boots.tally(): lost boots


def compare_run(rd, samples, outcomes, thresholds, tally, unsafe,
                baseline=None, refuse=False):
    """The comparisons of run directory rd: with `baseline`, every other
    variant against it; else the campaign's pairs (rundir.comparisons).
    A pair one side of which has no samples is left out with a warning.
    samples, outcomes: the tidy tables as data frames (outcomes may be
    None or empty); thresholds: thresholds.Thresholds.for_run(); tally,
    unsafe: the boots' tally (boots.tally) and the lockdep reports
    (lockdep.lockdep_reports), analyze.Frames'.  refuse
    (report): ParseError, before anything is computed, when there is
    nothing to compare (refusal)."""
    warnings = []
    explicit = baseline is not None
    baseline = baseline or rd.baseline
    have = set(samples["variant"]) if len(samples) else set()
    # A kernel that lost every boot has no samples and is still compared:
    # its lost boots are its result (analysis/tidy/boots.py).
    lost = {v for (v, _c), t in tally.items() if t["lost"]}
    variants = [v for v in rd.variants if v in have or v in lost]
    # A kernel that deadlocked in every boot has no samples, and its
    # answer is still known: unsafe (analysis/verdict/safety.py).
    controls = [(b, c) for b, c in rd.controls
                if b in variants and c in variants]
    pairs = ([(baseline, v) for v in variants
              if v != baseline and (baseline, v) not in controls]
             if explicit else rd.comparisons)
    for b, v in pairs:
        lost = [x for x in (b, v) if x not in variants]
        if lost:
            warnings.append(f"comparison {v} vs {b} left out: no samples "
                            f"for {', '.join(lost)}"
                            + (" (unsafe: a lockdep report)"
                               if set(lost) & set(unsafe) else ""))
    pairs = [(b, v) for b, v in pairs if b in variants and v in variants]
    why = refusal(baseline, variants, pairs, controls, unsafe) if refuse else None
    if why:
        raise ParseError(rd.path, None, why)
    comps = verdicts.comparisons_table(
        samples, pairs, thresholds, rd.primary_metric, rd.primary_points,
        outcomes, controls, unsafe, plan=rd, tally=tally)
    return Compared(comps, pairs, controls, unsafe, variants, baseline,
                    warnings, tally)


def refusal(baseline, variants, pairs, controls, unsafe):
    """Why report refuses a run, or None: nothing to say (a baseline
    without samples, a single variant, no pair with samples on both
    sides).  analyze writes such a table all the same: an empty
    comparisons.csv is a fact about the run, not bad input."""
    if baseline not in variants and baseline not in unsafe:
        return (f"baseline {baseline!r} has no samples (variants: "
                f"{', '.join(variants) or 'none'})")
    if len(variants) < 2 and not unsafe:
        return "only one variant has samples: nothing to compare"
    if not pairs and not controls and not unsafe:
        return "no comparison has samples on both sides"
    return None
