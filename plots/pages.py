# SPDX-License-Identifier: GPL-2.0
"""Write DIR/report.html and DIR/report.md: the verdict table, the setup
line, then the plots that make_plots.py drew (DIR/plots/plots.json).

Usage: /usr/bin/python3 -m plots.pages DIR   (the repository root on PYTHONPATH)

The verdicts come from DIR/tidy/comparisons.csv (analysis/TIDY.md), as
`./run.sh report` (or analyze) last judged them; the primary metric
of the campaign comes first.  DIR/observer.csv (a comparison measured with
and without lock statistics) and DIR/tidy/notes.csv (kernels without
lock_stat, lookups without a lock) are shown when present.  report.html is one static page: inline CSS,
no scripts, nothing fetched from the network; images are relative
(plots/NAME.png).  report.md is the same for a mailing-list reply or a
pull request.  What they say is read in page_content.py; this lays it
out.

Exit status: 0 done, 2 bad input (one line on stderr).
"""

import html
import os
import sys

from lockbench.cli import EXIT_OK, OneLineParser, run_cli
from lockbench import safeio
from plots.common import PlotsError, Run
from analysis.render.answer import parse_cell_line
from analysis.render.summary import answer_markdown
from plots.page_content import (Table, obs_head, obs_note, kernel_notes,
                                  load_plots, load_verdicts, observer_rows,
                                  problems, read_blocks, read_text,
                                  setup_paragraph, split_primary, title_of,
                                  vclass)

PROG = "pages"
CSS = """
body{font:15px/1.45 system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:1.5em auto;
max-width:1280px;padding:0 1em;color:#222;background:#fff}
h1{font-size:1.45em;margin:.2em 0}h2{font-size:1.15em;margin:1.6em 0 .4em;
border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:.4em 0}
th,td{padding:.2em .6em;border-bottom:1px solid #e5e5e5;text-align:right;white-space:nowrap}
th{background:#f3f3f3;position:sticky;top:0}td.l,th.l{text-align:left}
.better{background:#d9f2d9}.harm{background:#f8d0d0}.nh{background:#eef5ee}
.inc{background:#fdf0cc}table.answer td{white-space:normal}table.answer td:nth-child(-n+2){white-space:nowrap}
.answer-setup{font-size:.92em;color:#444}.setup{background:#f6f6f6;padding:.5em .8em;border-left:4px solid #0072B2}
figure{margin:1.2em 0}figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:.92em;color:#444;max-width:75em}small,.note{color:#666}
details summary{cursor:pointer;color:#0072B2}
"""


def verdicts_title(metrics):
    """The heading of the primary rows' table: their metric, or that each
    cell is on its own where they differ (per regime)."""
    if len(metrics) == 1:
        return f"Verdicts: {metrics[0]}"
    if not metrics:
        return "Verdicts: all metrics"
    return "Verdicts of the answer's cells, each on its own metric"


def answer_html(blocks):
    """answer.txt's blocks as HTML: per block its opening lines (lost
    boots, the head) bold, its cells as a table (one row per vCPU count
    and point: where, verdict, metric and ratio), the setup after them."""
    e = html.escape
    out = []
    for lines in blocks:
        cells = [parse_cell_line(x) for x in lines]
        seen = False
        for line, cell in zip(lines, cells):
            if cell:
                if not seen:
                    out.append('<table class="answer"><tr><th class="l">cell</th>'
                               '<th class="l">verdict</th><th class="l">metric, '
                               'ratio [CI]</th></tr>')
                    seen = True
                w, v, x = cell
                out.append(f'<tr><td class="l">{e(w)}</td><td class="l '
                           f'{vclass(v)}"><b>{e(v)}</b></td><td class="l">'
                           f'{e(x)}</td></tr>')
                continue
            if seen and not out[-1].endswith("</table>"):
                out.append("</table>")
            out.append(f'<p class="answer-setup">{e(line)}</p>' if seen
                       else f'<p class="answer"><b>{e(line)}</b></p>')
        if seen and not out[-1].endswith("</table>") and \
                not out[-1].startswith("<p"):
            out.append("</table>")
    return out


def html_table(t, rows, with_metric=True):
    e = html.escape
    cols = t.columns(with_metric)
    out = ["<table>", "<tr>" + "".join(
        f'<th class="{"l" if c in t.LEFT else ""}">{e(t.head[c])}</th>' for c in cols) + "</tr>"]
    for r in rows:
        tds = []
        for c in cols:
            cls = "l" if c in t.LEFT else (r["class"] if c == "verdict" else "")
            text = e(r[c])
            if c == "verdict" and r["notes"]:
                text += "<sup>" + ",".join(r["notes"]) + "</sup>"
            tds.append(f'<td class="{cls}">{text}</td>' if cls else f"<td>{text}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def write_html(run, path, src, table, plots, probs):
    e = html.escape
    primary, others = split_primary(run, table)
    title = title_of(run, table.rows)
    h = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         '<meta name="viewport" content="width=device-width,initial-scale=1">',
         f"<title>{e(title)}</title><style>{CSS}</style></head><body>",
         f"<h1>{e(title)}</h1>"]
    h += answer_html(read_blocks(run, "answer.txt"))
    if table.rows:
        ms = list(dict.fromkeys(r["metric"] for r in primary))
        h.append(f"<h2>{e(verdicts_title(ms))}</h2>")
        h.append(html_table(table, primary or table.rows,
                            not primary or len(ms) > 1))
        if primary and others:
            h.append(f"<details><summary>All other metrics ({len(others)} rows)</summary>")
            h.append(html_table(table, others))
            h.append("</details>")
        h.append(f'<p class="note">From {e(src)}. * = oversubscribed (more vCPUs '
                 "than host cores). Verdict rule: analysis/README.md.</p>")
        h += [f'<p class="note">{e(x)}</p>' for x in read_text(run, "legend.txt")]
        if table.notes:
            h.append("<ol class=\"note\">" + "".join(f"<li>{e(n)}</li>" for n in table.notes)
                     + "</ol>")
    else:
        h.append('<p class="note">No comparisons (no tidy/comparisons.csv, '
                 "or no row: one variant only, or not analysed yet).</p>")
    for otitle, orows in observer_rows(run):
        h.append(f"<h2>{e(otitle)}</h2><table><tr>"
                 + "".join(f'<th class="{"l" if i < 2 else ""}">{e(c)}</th>'
                           for i, c in enumerate(obs_head(table.pct))) + "</tr>")
        for r in orows:
            h.append("<tr>" + "".join(f'<td class="l">{e(c)}</td>' if i < 2 else
                                      f"<td>{e(c)}</td>" for i, c in enumerate(r))
                     + "</tr>")
        h.append(f'</table><p class="note">{e(obs_note(table.pct))}</p>')
    h.append(f'<h2>Setup</h2><p class="setup">{e(setup_paragraph(run))}</p>')
    notes = kernel_notes(run)
    if notes:
        h.append('<ul class="note">' + "".join(f"<li>{e(n)}</li>" for n in notes)
                 + "</ul>")
    if probs:
        h.append(f"<details><summary>{len(probs)} problem(s) in tidy/problems.csv"
                 "</summary><ul>" + "".join(f"<li>{e(p)}</li>" for p in probs)
                 + "</ul></details>")
    h.append("<h2>Plots</h2>")
    if not plots:
        h.append('<p class="note">No plots: run python3 -m plots.make_plots on this directory.</p>')
    for p in plots:
        h.append(f'<figure id="{e(p["name"])}"><a href="{e(p["svg"])}">'
                 f'<img src="{e(p["png"])}" width="{int(p["width"])}" '
                 f'height="{int(p["height"])}" alt="{e(p["title"] + ": " + p["caption"])}">'
                 f'</a><figcaption><b>{e(p["title"])}.</b> {e(p["caption"])} '
                 f'<small>Data: {e(", ".join(p["data"]))}; '
                 f'<a href="{e(p["svg"])}">SVG</a>.</small></figcaption></figure>')
    h.append("</body></html>\n")
    safeio.write_atomic(path, "\n".join(h))


def md_table(t, rows, with_metric=True):
    cols = t.columns(with_metric)
    body = []
    for r in rows:
        b = {c: r[c].replace("|", "\\|") for c in cols}
        if r["notes"]:
            b["verdict"] += " [" + ",".join(r["notes"]) + "]"
        body.append(b)
    width = {c: max([len(t.head[c])] + [len(b[c]) for b in body]) for c in cols}

    def line(cells):
        return "| " + " | ".join(cells[c].ljust(width[c]) if c in t.LEFT
                                 else cells[c].rjust(width[c]) for c in cols) + " |"
    sep = "|" + "|".join("-" * (width[c] + 2) if c in t.LEFT
                         else "-" * (width[c] + 1) + ":" for c in cols) + "|"
    return "\n".join([line(t.head), sep] + [line(b) for b in body])


def write_md(run, path, src, table, plots, probs):
    primary, others = split_primary(run, table)
    title = title_of(run, table.rows)
    m = [f"# {title}", ""]
    for block in read_blocks(run, "answer.txt"):
        m += answer_markdown("\n".join(block))
    if table.rows:
        ms = list(dict.fromkeys(r["metric"] for r in primary))
        m += [f"## {verdicts_title(ms)}", "",
              md_table(table, primary or table.rows, not primary or len(ms) > 1),
              ""]
        if primary and others:
            m += ["## Other metrics", "", md_table(table, others), ""]
        m += [f"From {src}. * = oversubscribed (more vCPUs than host cores).", ""]
        m += [f"- {x}" for x in read_text(run, "legend.txt")] + [""]
        m += [f"[{i}] {n}" for i, n in enumerate(table.notes, 1)]
        if table.notes:
            m.append("")
    else:
        m += ["No comparisons (no tidy/comparisons.csv, or no row).", ""]
    for otitle, orows in observer_rows(run):
        m += [f"## {otitle}", "", "| " + " | ".join(obs_head(table.pct)) + " |",
              "|---:|---|---|---|---|---|---|---|"]
        m += ["| " + " | ".join(r) + " |" for r in orows]
        m += ["", obs_note(table.pct), ""]
    m += ["## Setup", "", setup_paragraph(run), ""]
    m += [f"- {n}" for n in kernel_notes(run)]
    if kernel_notes(run):
        m.append("")
    if probs:
        m += [f"{len(probs)} problem(s) in tidy/problems.csv:", ""]
        m += [f"- {p}" for p in probs] + [""]
    if plots:
        m += ["## Plots", ""]
        for p in plots:
            m += [f"![{p['title']}]({p['png']})", "",
                  f"*{p['title']}.* {p['caption']} (Data: {', '.join(p['data'])}; "
                  f"[SVG]({p['svg']}).)", ""]
    safeio.write_atomic(path, "\n".join(m))


def write_reports(run_dir):
    """Write run_dir/report.html and run_dir/report.md from its verdicts
    and plots; returns (html_path, md_path).  Raises PlotsError on bad
    input.  Call make_plots() first for the plots to be in it."""
    run = Run(run_dir)
    src, rows = load_verdicts(run)
    table = Table(run, rows)
    plots = load_plots(run)
    probs = problems(run)
    html_path = os.path.join(run.dir, "report.html")
    md_path = os.path.join(run.dir, "report.md")
    try:
        write_html(run, html_path, src, table, plots, probs)
        write_md(run, md_path, src, table, plots, probs)
    except OSError as e:  # safeio.Unsafe too: a directory at its name
        raise PlotsError(f"{run.dir}: cannot write the report: {e.strerror}") from None
    return html_path, md_path


def make_parser():
    ap = OneLineParser(prog=PROG, description="Write DIR/report.html and DIR/report.md.")
    ap.add_argument("dir", metavar="DIR", help="a run directory (with tidy/)")
    return ap


def main(argv=None):
    def body(args):
        for path in write_reports(args.dir):
            print(path)
        return EXIT_OK
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
