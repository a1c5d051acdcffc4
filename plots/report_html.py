#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Write DIR/report.html and DIR/report.md: the verdict table, the setup
line, then the plots that make_plots.py drew (DIR/plots/plots.json).

Usage: report_html.py DIR

The verdicts come from DIR/tidy/comparisons.csv (analysis/TIDY.md), as
`./run.sh report` (or analyze) last judged them; the primary metric
of the campaign comes first.  DIR/observer.csv (a comparison measured with
and without lock statistics) and DIR/tidy/notes.csv (kernels without
lock_stat, lookups without a lock) are shown when present.  report.html is one static page: inline CSS,
no scripts, nothing fetched from the network; images are relative
(plots/NAME.png).  report.md is the same for a mailing-list reply or a
pull request.

Exit status: 0 done, 2 bad input (one line on stderr).
"""

import html
import json
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from plots.common import (EXIT_OK, OneLineParser, PlotsError, Run,  # noqa: E402
                          read_csv, run_cli)

PROG = "report_html"
NEEDED = ("baseline", "variant", "metric", "cpus", "point", "ratio",
          "ratio_ci_lo", "ratio_ci_hi", "p_value", "verdict")
# after the primary metric, in this order; then the rest alphabetically
METRIC_ORDER = (
    "throughput_ops_s", "lookup_lat_median_ref", "throughput_ref",
    "write_lat_median_ref", "lookup_lat_mean_ns", "write_lat_mean_ns",
    "lookup_lat_median_ns", "write_lat_median_ns", "lookup_lat_p99_ns",
    "write_lat_p99_ns", "lookup_lat_max_ns", "write_lat_max_ns",
    "fairness_spread", "lock_contentions_per_kacq", "lock_waittime_per_acq_ns",
    "lock_waittime_avg_us",
    "lock_waittime_max_us", "lock_holdtime_avg_us")
CSS = """
body{font:15px/1.45 system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:1.5em auto;
max-width:1280px;padding:0 1em;color:#222;background:#fff}
h1{font-size:1.45em;margin:.2em 0}h2{font-size:1.15em;margin:1.6em 0 .4em;
border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:.4em 0}
th,td{padding:.2em .6em;border-bottom:1px solid #e5e5e5;text-align:right;white-space:nowrap}
th{background:#f3f3f3;position:sticky;top:0}td.l,th.l{text-align:left}
.better{background:#d9f2d9}.harm{background:#f8d0d0}.nh{background:#eef5ee}
.inc{background:#fdf0cc}.setup{background:#f6f6f6;padding:.5em .8em;border-left:4px solid #0072B2}
figure{margin:1.2em 0}figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:.92em;color:#444;max-width:75em}small,.note{color:#666}
details summary{cursor:pointer;color:#0072B2}
"""
VCLASS = {"better": "better", "harm": "harm", "worse": "harm", "conflict": "harm",
          "unsafe": "harm",
          "no harm": "nh", "inconclusive": "inc", "withheld": "inc"}


def vclass(verdict):
    """The CSS class of a verdict label ("inconclusive (n≈14)" -> inc)."""
    return VCLASS.get(verdict.split(" (")[0], "")


def num(x, digits=4):
    """A tidy number for a table: 612345.6 -> '612,346', 12.345 -> '12.35',
    '' -> ''."""
    if x in ("", None):
        return ""
    try:
        f = float(x)
    except ValueError:
        return str(x)
    if abs(f) >= 10 ** digits:
        return f"{f:,.0f}"
    return f"{f:.{digits}g}"


def ratio_text(x):
    return "" if x in ("", None) else f"{float(x):.3f}"


def load_verdicts(run):
    """(source file name, rows) of tidy/comparisons.csv (None, [] when it
    is not there), sorted: primary metric first, then METRIC_ORDER,
    variant, vCPUs, point."""
    if not run.has("comparisons.csv"):
        return None, []
    src, rows = "tidy/comparisons.csv", run.tidy("comparisons.csv", NEEDED)
    order = [run.rd.primary_metric] + [m for m in METRIC_ORDER if m != run.rd.primary_metric]
    vorder = {v: i for i, v in enumerate(run.variants)}
    porder = {p["id"]: i for i, p in enumerate(run.points)}

    def key(r):
        m = r["metric"]
        try:
            cpus = int(r["cpus"])
        except ValueError:
            cpus = 0
        return (order.index(m) if m in order else len(order), m,
                vorder.get(r["variant"], len(vorder)), r["variant"], cpus,
                porder.get(r["point"], len(porder)), r["point"])
    return src, sorted(rows, key=key)


class Table:
    """The verdict rows as text cells, shared by the HTML and Markdown
    writers; warnings become numbered footnotes."""

    HEAD = {"comparison": "comparison", "metric": "metric", "cpus": "vCPUs",
            "point": "point", "base": "baseline", "var": "variant",
            "ratio": "ratio [95% CI]", "p": "p", "verdict": "verdict"}
    LEFT = ("comparison", "metric", "cpus", "point")

    def __init__(self, run, rows):
        self.notes = []
        over = set(run.oversubscribed())
        self.rows = []
        for r in rows:
            marks = []
            for w in filter(None, (s.strip() for s in r.get("warnings", "").split(";"))):
                if w not in self.notes:
                    self.notes.append(w)
                marks.append(str(self.notes.index(w) + 1))
            unit = r.get("unit", "")
            cpus = r["cpus"] + ("*" if r["cpus"].isdigit() and int(r["cpus"]) in over else "")
            ratio = ratio_text(r["ratio"])
            if ratio and r["ratio_ci_lo"] != "":
                ratio += f" [{ratio_text(r['ratio_ci_lo'])}, {ratio_text(r['ratio_ci_hi'])}]"
            p = num(r["p_value"], 2)
            if p and r.get("significant") == "0":
                p += " ~"
            # the label is whole in the table (analysis/verdicts.py)
            verdict = r["verdict"] or "n/a"
            point = r["point"] + (f" ({r['read_pct']}% reads)" if r.get("read_pct") else "")
            self.rows.append({
                "comparison": f"{r['variant']} vs {r['baseline']}",
                "metric": r["metric"], "cpus": cpus, "point": point,
                "base": f"{num(r.get('median_base'))} {unit}".strip(),
                "var": f"{num(r.get('median_var'))} {unit}".strip(),
                "ratio": ratio, "p": p, "verdict": verdict,
                "class": vclass(r["verdict"]), "notes": marks,
                "role": r.get("role", "")})
        pairs = {(r["baseline"], r["variant"]) for r in rows}
        self.several = len(pairs) > 1
        self.head = dict(self.HEAD)
        if len(pairs) == 1:
            base, var = pairs.pop()
            self.head.update(base=f"{base} median", var=f"{var} median")

    def columns(self, with_metric):
        cols = list(self.HEAD)
        if not self.several:
            cols.remove("comparison")
        if not with_metric:
            cols.remove("metric")
        return cols


def title_of(run, table_rows):
    """"NAME: after vs before", or every pair when they have several
    baselines: "NAME: after vs before, rcu vs after"."""
    pairs = list(dict.fromkeys(r["comparison"] for r in table_rows))
    if len({p.split(" vs ")[1] for p in pairs}) > 1:
        return f"{run.rd.name}: {', '.join(pairs)}"
    return f"{run.rd.name}: {', '.join(run.variants[1:]) or run.rd.baseline} vs {run.rd.baseline}"


def kernel_notes(run):
    """["before-plain: no lock_stat (...)", ...] from tidy/notes.csv."""
    if not run.has("notes.csv"):
        return []
    return [f"{r['variant']}: {r['note']}"
            for r in run.tidy("notes.csv", ("variant", "note"))]


OBS_HEAD = ("vCPUs", "point", "with LOCK_STAT", "verdict", "without",
            "verdict", "ratio of ratios [95% CI]", "LOCK_STAT cost (base, variant)")


def observer_rows(run):
    """(title, rows of text cells) per twin from DIR/observer.csv."""
    path = os.path.join(run.dir, "observer.csv")
    if not os.path.isfile(path):
        return []

    def rci(r, a, lo, hi):
        return (f"{ratio_text(r[a])} [{ratio_text(r[lo])}, {ratio_text(r[hi])}]"
                if r[a] != "" else "-")
    out = {}
    for r in read_csv(path, ("metric", "baseline", "variant", "baseline_plain",
                             "variant_plain", "ratio_of_ratios")):
        title = (f"Observer effect: {r['variant']}/{r['baseline']} with LOCK_STAT vs "
                 f"{r['variant_plain']}/{r['baseline_plain']} without ({r['metric']})")
        cost = ", ".join("-" if r[k] == "" else f"×{float(r[k]):.2f}"
                         for k in ("lockstat_cost_base", "lockstat_cost_var"))
        out.setdefault(title, []).append((
            r["cpus"], r["point"], rci(r, "ratio", "ratio_ci_lo", "ratio_ci_hi"),
            r["verdict"] or "-",
            rci(r, "ratio_plain", "ratio_plain_ci_lo", "ratio_plain_ci_hi"),
            r["verdict_plain"] or "-",
            rci(r, "ratio_of_ratios", "rr_ci_lo", "rr_ci_hi"), cost))
    return list(out.items())


OBS_NOTE = ("Ratio of ratios = the ratio without lock statistics / the ratio "
            "with them, bootstrap 95% CI: 1 = lockdep leaves the comparison as "
            "it is. LOCK_STAT cost = median with / median without lock "
            "statistics. Details: summary.md.")


def setup_paragraph(run):
    host, extra = run.rd.host, []
    if host.get("cpu_model"):
        extra.append(f"host CPU {host['cpu_model']}")
    if host.get("qemu_version"):
        extra.append(f"QEMU {host['qemu_version']}")
    if run.guests():
        extra.append("guests: " + "; ".join(run.guests()))
    margin = f"; non-inferiority margin {run.rd.margin:.0%}"
    return (f"{run.setup_line()}. Campaign {run.rd.name}: baseline {run.rd.baseline}, "
            f"variants {', '.join(run.variants[1:]) or '(none)'}{margin}"
            f"{'; ' + ', '.join(extra) if extra else ''}. Absolute times are "
            "emulation times: only the ratio between variants measured side "
            "by side is a result.")


def load_plots(run):
    path = os.path.join(run.dir, "plots", "plots.json")
    try:
        with open(path, encoding="utf-8") as f:
            plots = json.load(f)["plots"]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PlotsError(f"{path}: unreadable ({e}); run plots/make_plots.py again") from None
    return [p for p in plots if os.path.isfile(os.path.join(run.dir, p["png"]))]


def problems(run):
    out = []
    if run.has("problems.csv"):
        for r in run.tidy("problems.csv", ("cell", "problem")):
            where = " ".join(x for x in (r["cell"], r.get("point", ""), r.get("file", "")) if x)
            out.append(f"{where}: {r['problem']}" if where else r["problem"])
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


def split_primary(run, table):
    """(primary rows, the others): by the role column analysis wrote, else
    by the campaign's primary metric."""
    if any(r["role"] for r in table.rows):
        prim = [r for r in table.rows if r["role"] == "primary"]
    else:
        prim = [r for r in table.rows if r["metric"] == run.rd.primary_metric]
    return prim, [r for r in table.rows if r not in prim]


def read_text(run, name):
    """DIR/answer.txt or DIR/legend.txt as `./run.sh report` wrote them
    (paragraphs / lines), [] when absent."""
    try:
        with open(os.path.join(run.dir, name), encoding="utf-8") as f:
            return [x.strip() for x in f.read().split("\n") if x.strip()]
    except FileNotFoundError:
        return []


def write_html(run, path, src, table, plots, probs):
    e = html.escape
    primary, others = split_primary(run, table)
    title = title_of(run, table.rows)
    h = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         '<meta name="viewport" content="width=device-width,initial-scale=1">',
         f"<title>{e(title)}</title><style>{CSS}</style></head><body>",
         f"<h1>{e(title)}</h1>"]
    h += [f'<p class="answer"><b>{e(a)}</b></p>' for a in read_text(run, "answer.txt")]
    if table.rows:
        h.append(f"<h2>Verdict: {e(run.rd.primary_metric or 'all metrics')}</h2>")
        h.append(html_table(table, primary or table.rows, not primary))
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
                           for i, c in enumerate(OBS_HEAD)) + "</tr>")
        for r in orows:
            h.append("<tr>" + "".join(f'<td class="l">{e(c)}</td>' if i < 2 else
                                      f"<td>{e(c)}</td>" for i, c in enumerate(r))
                     + "</tr>")
        h.append(f'</table><p class="note">{e(OBS_NOTE)}</p>')
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
        h.append('<p class="note">No plots: run plots/make_plots.py on this directory.</p>')
    for p in plots:
        h.append(f'<figure id="{e(p["name"])}"><a href="{e(p["svg"])}">'
                 f'<img src="{e(p["png"])}" width="{int(p["width"])}" '
                 f'height="{int(p["height"])}" alt="{e(p["title"] + ": " + p["caption"])}">'
                 f'</a><figcaption><b>{e(p["title"])}.</b> {e(p["caption"])} '
                 f'<small>Data: {e(", ".join(p["data"]))}; '
                 f'<a href="{e(p["svg"])}">SVG</a>.</small></figcaption></figure>')
    h.append("</body></html>\n")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(h))


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
    for a in read_text(run, "answer.txt"):
        m += [f"**{a}**", ""]
    if table.rows:
        m += [f"## Verdict: {run.rd.primary_metric or 'all metrics'}", "",
              md_table(table, primary or table.rows, not primary), ""]
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
        m += [f"## {otitle}", "", "| " + " | ".join(OBS_HEAD) + " |",
              "|---:|---|---|---|---|---|---|---|"]
        m += ["| " + " | ".join(r) + " |" for r in orows]
        m += ["", OBS_NOTE, ""]
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
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(m))


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
    except OSError as e:
        raise PlotsError(f"{run.dir}: cannot write the report: {e.strerror}") from None
    return html_path, md_path


def make_parser():
    ap = OneLineParser(prog=PROG, description="Write DIR/report.html and DIR/report.md.")
    ap.add_argument("dir", metavar="DIR", help="a results directory (with tidy/)")
    return ap


def main(argv=None):
    def body(args):
        for path in write_reports(args.dir):
            print(path)
        return EXIT_OK
    return run_cli(PROG, make_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
