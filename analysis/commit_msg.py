# SPDX-License-Identifier: GPL-2.0
"""commit-msg.txt: the block a reviewer pastes into a commit message, at
most MAX_LINES lines of at most WIDTH columns: the answer in two
sentences, one table of the primary cells (vCPUs x point: baseline,
variant, ratio [CI], verdict), the boots lost, the A/A control in one
line, the setup, and how to reproduce the run from its own copy of the
campaign file.  Every table of every metric stays in summary.md.  Apart
from summary.md because its layout is a commit message's, not a
report's."""

import textwrap

from analysis import stats
from analysis.answer import clock_sentence, overrides_s, short_answer
from analysis.formatting import pct_s, si, vcpus_s, verdict_s

WIDTH = 72  # commit message columns
MAX_LINES = 25  # what a commit message can carry of a benchmark


def shell_lines(cmd, arg):
    """A command line of the block: split as a shell continuation when it
    would pass WIDTH columns."""
    line = f"  {cmd} {arg}"
    if len(line) <= WIDTH:
        return [line]
    return [f"  {cmd} \\", f"    {arg}"]


def _ratio(r):
    d = 4 if r.get("clock") == "icount" else 3
    if r["ratio"] != r["ratio"]:  # NaN: a side without samples
        return "-"
    return f"{r['ratio']:.{d}f} [{r['ratio_ci_lo']:.{d}f},{r['ratio_ci_hi']:.{d}f}]"


def _table(rows, pct, many):
    """The primary cells as aligned lines of at most WIDTH columns: the
    medians go first when the line would be too wide."""
    body = []
    for _, r in rows.iterrows():
        cpus = f"{int(r['cpus'])}" + (" icount" if r.get("clock") == "icount"
                                      else "")
        who = f"{r['variant']}/{r['baseline']} " if many else ""
        body.append([cpus, who + str(r["point"]), si(r["median_base"]),
                     si(r["median_var"]), _ratio(r), verdict_s(r)])
    b, v = (rows["baseline"].iloc[0], rows["variant"].iloc[0]) if not many \
        else ("base", "variant")
    head = ["vCPUs", "point", b[:10], v[:10], f"ratio [{pct}% CI]", "verdict"]

    def lay(cols):
        w = [max(len(x[i]) for x in [[head[j] for j in cols]] +
                 [[row[j] for j in cols] for row in body])
             for i in range(len(cols))]
        return ["  ".join(x.ljust(w[i]) for i, x in enumerate(
            [row[j] for j in cols])).rstrip() for row in [head] + body]
    lines = lay([0, 1, 2, 3, 4, 5])
    if max(map(len, lines)) > WIDTH:
        lines = lay([0, 1, 4, 5])
    if max(map(len, lines)) > WIDTH:
        # "inconclusive (n≈12)" as "inconclusive": summary.md has the N
        for row in body:
            row[5] = row[5].split(" (n≈")[0]
        lines = lay([0, 1, 4, 5])
    return [x if len(x) <= WIDTH else x[:WIDTH - 1] + "…" for x in lines]


def render_commit_msg(comps, f, thresholds, primary, campaign_file,
                      run_dir):
    """The block for a commit message (module docstring); f:
    summary.setup_facts(); campaign_file: the campaign file as the run
    directory keeps it (what Reproduce names)."""
    w = textwrap.TextWrapper(width=WIDTH, break_on_hyphens=False)
    pct = pct_s(thresholds.confidence)
    head = []
    for text in short_answer(comps, f, thresholds):
        head += w.wrap(text)
    prim = comps[comps["role"] == "primary"] if len(comps) else comps
    many = len(prim) and len(set(zip(prim["baseline"], prim["variant"]))) > 1
    table = _table(prim, pct, many) if len(prim) else []
    tail = []
    cal = prim[prim["calibration"].fillna("") != ""] if len(prim) else prim
    if len(cal):
        verd = cal["calibration"].str.split(",").str[0]
        claims = int(verd.isin([f"A/A {x}" for x in (
            stats.BETTER, stats.WORSE, stats.HARM)]).sum())
        tail += w.wrap(f"A/A control (the baseline booted twice): a claim "
                       f"in {claims} of {len(cal)} cells"
                       + (", which widened those CIs." if claims else "."))
    ov = overrides_s(f)
    if ov:
        tail += w.wrap(f"Judged with {ov}.")
    tail += w.wrap(
        f"mbox_bench under QEMU {f['accel']} ({f['guests']}), "
        f"{vcpus_s(f['cpus'])} on {f['cores']} host cores, Linux "
        f"{f['kernels']}, n = {f['n']} boots a side: emulation, so the "
        f"ratio is the result." + (f" {clock_sentence(f)}"
                                   if clock_sentence(f) else ""))
    repro = ["Reproduce:"] + shell_lines("./run.sh campaign", campaign_file)
    if ov:
        opts = []
        o = f.get("overrides") or {}
        if "margin" in o:
            opts.append(f"--margin {o['margin'][1]:g}")
        if "baseline" in o:
            opts.append(f"--baseline {o['baseline'][1]}")
        repro += shell_lines("./run.sh report", f"{run_dir} {' '.join(opts)}")
    # The table gives way first: its rows are all in summary.md.
    room = MAX_LINES - len(head) - len(tail) - len(repro) - 3
    if len(table) > room:
        cut = len(table) - max(room - 1, 1)
        table = table[:max(room - 1, 1)] + [f"(+{cut} more rows in summary.md)"]
    out = head + [""] + table + [""] + tail + [""] + repro
    return "\n".join(out[:MAX_LINES]) + "\n"
