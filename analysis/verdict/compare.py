# SPDX-License-Identifier: GPL-2.0
"""Which pairs of a run are compared, and their comparisons table: the one
computation behind tidy/comparisons.csv, whether analyze or report runs it
(analysis/README.md, "Verdicts").

Pure functions of the run directory and data frames; never prints,
never writes.
"""

from dataclasses import dataclass, field

import pandas as pd

from analysis.tidy import boots
from analysis.verdict import safety, verdicts
from analysis.parse.common import ParseError


@dataclass
class Compared:
    """The comparisons table and what it was computed from."""
    comps: pd.DataFrame
    pairs: list  # (baseline, variant) with samples on both sides
    controls: list  # (baseline, control) A/A pairs with samples
    unsafe: dict  # safety.lockdep_reports(): variant -> reports
    variants: list  # the variants with samples, manifest order
    baseline: str
    warnings: list = field(default_factory=list)
    tally: dict = field(default_factory=dict)  # boots.tally(): lost boots


def compare_run(rd, samples, outcomes, thresholds, baseline=None):
    """The comparisons of run directory rd: with `baseline`, every other
    variant against it; else the campaign's pairs (rundir.comparisons).
    A pair one side of which has no samples is left out with a warning.
    samples, outcomes: the tidy tables as data frames (outcomes may be
    None or empty); thresholds: analyze.run_thresholds() (Frames.th)."""
    warnings = []
    explicit = baseline is not None
    baseline = baseline or rd.baseline
    have = set(samples["variant"]) if len(samples) else set()
    tally = boots.tally(boots.boot_rows(rd))
    # A kernel that lost every boot has no samples and is still compared:
    # its lost boots are its result (analysis/tidy/boots.py).
    lost = {v for (v, _c), t in tally.items() if t["lost"]}
    variants = [v for v in rd.variants if v in have or v in lost]
    # A kernel that deadlocked in every boot has no samples, and its
    # answer is still known: unsafe (analysis/verdict/safety.py).
    unsafe = safety.lockdep_reports(rd)
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
    comps = verdicts.comparisons_table(
        samples, pairs, thresholds, rd.primary_metric, rd.primary_points,
        outcomes, controls, unsafe, plan=rd, tally=tally)
    return Compared(comps, pairs, controls, unsafe, variants, baseline,
                    warnings, tally)


def check(path, c):
    """report's refusals: ParseError when a Compared has nothing to say
    (a baseline without samples, a single variant, no pair with samples
    on both sides). analyze writes such a table all the same: an empty
    comparisons.csv is a fact about the run, not bad input."""
    if c.baseline not in c.variants and c.baseline not in c.unsafe:
        raise ParseError(path, None, f"baseline {c.baseline!r} has no "
                         f"samples (variants: "
                         f"{', '.join(c.variants) or 'none'})")
    if len(c.variants) < 2 and not c.unsafe:
        raise ParseError(path, None, "only one variant has samples: nothing "
                         "to compare")
    if not c.pairs and not c.controls and not c.unsafe:
        raise ParseError(path, None, "no comparison has samples on both "
                         "sides")
