# SPDX-License-Identifier: GPL-2.0
"""commit-msg.txt: the block for a commit message, lines of at most WIDTH
columns, the answer first, then the primary metric's rows (and its twin's)
and how to reproduce the run.  Apart from summary.md because its layout
is a commit message's, not a table's."""

import textwrap

from analysis import metrics, verdicts
from analysis.answer import answer_text, comparison_pairs
from analysis.formatting import (p_s, pct_s, ratio_s, row_ratio,
                                 split_warnings, verdict_s, vcpus_s)

WIDTH = 72  # commit message columns


def render_commit_msg(comps, f, thresholds, primary, campaign_file,
                      run_dir):
    """The block for a commit message: lines of at most 72 columns, the
    answer first; f: summary.setup_facts()."""
    w = textwrap.TextWrapper(width=WIDTH, break_on_hyphens=False)
    out = []
    for para in answer_text(comps, f, thresholds, primary):
        out += w.wrap(para) + [""]
    out += w.wrap(f"Measured with the mbox_bench module in QEMU "
                  f"{f['accel']} emulation ({f['guests']}; "
                  f"{vcpus_s(f['cpus'])} on {f['cores']} "
                  f"host cores), Linux {f['kernels']}. Absolute times are "
                  f"emulation times; the ratio is the result.")
    pct = pct_s(thresholds.confidence)
    shown = [primary]
    # the primary metric's twin beside it: raw throughput beside the one
    # with the host's steal divided out, the _ref one beside the raw
    raw = {t: r for r, t in verdicts.RUN_TWIN.items()}
    twin = verdicts.REF_TWIN.get(primary) or raw.get(primary)
    if twin and len(comps) and (comps["metric"] == twin).any():
        shown.append(twin)
    for metric in shown:
        out += _commit_msg_metric(w, comps, metric, thresholds, pct)
    out += ["", "Reproduce:", f"  ./run.sh campaign {campaign_file}",
            f"  ./run.sh report {run_dir}"]
    return "\n".join(out) + "\n"


def _commit_msg_metric(w, comps, metric, thresholds, pct):
    out = []
    rows = comps[comps["metric"] == metric] if len(comps) else comps
    ref = metric in verdicts.REF_TWIN.values()
    for baseline, variant in comparison_pairs(rows):
        out.append("")
        what = (" (divided by the host speed the module measured during "
                "each run; probe = the probe's own ratio)" if ref else
                f" ({metrics.PLAIN[metric]})"
                if metric in verdicts.RUN_TWIN.values() else "")
        out += w.wrap(f"{metric}{what}, {variant}/{baseline}: ratio "
                      f"[{pct}% CI], p, verdict at a "
                      f"{100 * thresholds.margin:g}% margin:")
        out.append("")
        mine = rows[(rows["variant"] == variant)
                    & (rows["baseline"] == baseline)]
        for _, row in mine.iterrows():
            probe = (f", probe {ratio_s(row['probe_ratio'], row['probe_ci_lo'], row['probe_ci_hi'])}"
                     if ref else "")
            line = (f"  {int(row['cpus'])} vCPUs, {row['point']}: "
                    f"{row_ratio(row)}, p={p_s(row['p_value'])}{probe}, "
                    f"{verdict_s(row)}")
            out += textwrap.wrap(line, WIDTH, subsequent_indent="      ",
                                 break_on_hyphens=False)
        notes = dict.fromkeys(
            w for ws in mine["warnings"] for w in split_warnings(ws))
        for note in notes:
            out += w.wrap(f"Warning: {note}.")
    return out
