# SPDX-License-Identifier: GPL-2.0
"""The texts report writes, from one set of facts: summary.md,
commit-msg.txt, answer.txt and legend.txt (the last two: what report.html
opens with; the plots step reads files, analysis/ never imports plots/).
Pure: the caller writes them (analysis/outputs.py)."""

import os

from analysis.render import answer as answer_mod
from analysis.render import commit_msg, run_setup, summary


def short_path(path):
    """path relative to the current directory when it lies below it."""
    path = os.path.normpath(path)
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        if not rel.startswith(".."):
            return rel
    return path


def rw_variants(ls, lock_class):
    """The variants whose lock_stat rows of lock_class include an -R row
    (an rwlock: the commit block says it sums -R and -W), from
    tidy/lockstat.csv; None when that table cannot be read as one (the
    block then leaves lock_stat out rather than say less than it sums)."""
    if ls is None or not {"variant", "class", "kind"} <= set(ls.columns):
        return None
    mine = ls[(ls["class"].astype(str) == lock_class)
              & (ls["kind"].astype(str) == "R")]
    return set(mine["variant"].astype(str))


def reproduce_args(path, rd, run_dir):
    """The arguments of the campaign command the commit block's Reproduce
    line gives: the copy of the campaign file the run directory keeps
    (the user's own file may have changed or gone since), after the
    --variants folders a campaign of them reproduces only with."""
    where = run_dir or path
    copy = os.path.join(where, "campaign.toml")
    campaign_file = (copy if os.path.isfile(os.path.join(path, "campaign.toml"))
                     else short_path(rd.campaign.get("file") or f"campaigns/{rd.name}.toml"))
    dirs = rd.manifest.get("variant_dirs")
    args = [campaign_file]
    if isinstance(dirs, list) and all(isinstance(x, str) for x in dirs):
        args = [w for x in dirs for w in ("--variants", x)] + args
    return args


def render_texts(path, f, c, table, observer, th, margin=None, run_dir=None):
    """{file name: text} of summary.md, commit-msg.txt, answer.txt and
    legend.txt: one set of facts (and one read of any lockdep report) for
    every output.  f: analyze.Frames; c: compare.Compared; table: its
    VerdictTable, the one table every text renders in its one order;
    observer: the observer-effect table; th: the thresholds; margin:
    report's --margin (an override the texts say); run_dir: the run
    directory as the Reproduce line names it (default path)."""
    rd, baseline = f.rd, c.baseline
    primary = rd.primary_metric
    notes = [f"{v}: {text}" for v, text in f.notes]
    overrides = {}
    if margin is not None and abs(margin - rd.margin) > 1e-12:
        overrides["margin"] = (rd.margin, margin)
    if baseline != rd.baseline:
        overrides["baseline"] = (rd.baseline, baseline)
    args = reproduce_args(path, rd, run_dir)
    rw = rw_variants(f.lockstat, rd.lock_class)
    done = run_setup.analysed(f.cells)
    setup = run_setup.setup_facts(rd, done)
    facts = summary.header_facts(rd, setup, f.cells, f.samples, baseline, primary,
                                 c.unsafe, c.tally, overrides, f.twins)
    md = summary.render_markdown(rd, table, facts, f.problems, baseline, th,
                                 notes, observer, f.samples)
    legend = "\n".join(summary.legend(th, table))
    msg = commit_msg.render_commit_msg(
        table, facts, th, args, run_dir or path, samples=f.samples,
        lock_class=rd.lock_class, rw_variants=rw, crosscheck=f.crosscheck)
    answer = "\n\n".join(answer_mod.answer_text(table, facts, th))
    return {"summary.md": md, "commit-msg.txt": msg,
            "answer.txt": answer + "\n", "legend.txt": legend + "\n"}
