# SPDX-License-Identifier: GPL-2.0
"""What report.html and report.md say, read from one run directory (the
writers in pages.py lay it out): the verdict rows of
tidy/comparisons.csv as text cells with numbered warnings, the title, the
setup paragraph, the kernel notes, the observer-effect rows, the plots
make_plots.py drew, the problems, and the answer and legend analysis
wrote.
"""

import os

from analysis.render.formatting import pct_s
from lockbench.defaults import ICOUNT
from lockbench import safeio
from plots.common import TOKEN, PlotsError, read_csv

NEEDED = ("baseline", "variant", "metric", "cpus", "point", "ratio",
          "ratio_ci_lo", "ratio_ci_hi", "p_value", "verdict")
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


def ratio_text(x, digits=3):
    """A ratio as every output writes it: 3 decimals, 4 for an icount
    row's (analysis/render/formatting.py row_ratio)."""
    return "" if x in ("", None) else f"{float(x):.{digits}f}"


def load_verdicts(run):
    """(source file name, rows) of tidy/comparisons.csv (None, [] when it
    is not there), in the file's order: the verdict table's one order
    (analysis/verdict/table.py), which every output keeps."""
    if not run.has("comparisons.csv"):
        return None, []
    return "tidy/comparisons.csv", run.tidy("comparisons.csv", NEEDED)


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
            # the statistic the ratio is of: the means under icount (the
            # ratio of means, analysis/estimate/exact.py), else the medians
            icount = r.get("clock") == ICOUNT
            sb, sv = (("mean_base", "mean_var") if icount
                      else ("median_base", "median_var"))
            stat = " (mean)" if icount else ""
            dg = 4 if r.get("clock") == ICOUNT else 3
            ratio = ratio_text(r["ratio"], dg)
            if ratio and r["ratio_ci_lo"] != "":
                ratio += (f" [{ratio_text(r['ratio_ci_lo'], dg)}, "
                          f"{ratio_text(r['ratio_ci_hi'], dg)}]")
            p = num(r["p_value"], 2)
            if p and r.get("significant") == "0":
                p += " ~"
            # the label is whole in the table (analysis/verdict/verdicts.py)
            verdict = r["verdict"] or "n/a"
            point = r["point"] + (f" ({r['read_pct']}% reads)" if r.get("read_pct") else "")
            self.rows.append({
                "comparison": f"{r['variant']} vs {r['baseline']}",
                "metric": r["metric"], "cpus": cpus, "point": point,
                "base": f"{num(r.get(sb))} {unit}{stat}".strip(),
                "var": f"{num(r.get(sv))} {unit}{stat}".strip(),
                "ratio": ratio, "p": p, "verdict": verdict,
                "class": vclass(r["verdict"]), "notes": marks,
                "role": r.get("role", "")})
        pairs = {(r["baseline"], r["variant"]) for r in rows}
        self.several = len(pairs) > 1
        self.head = dict(self.HEAD)
        # the level the run was judged at, as summary.md prints it
        self.pct = pct_s(run.rd.confidence)
        self.head["ratio"] = f"ratio [{self.pct}% CI]"
        if len(pairs) == 1:
            base, var = pairs.pop()
            self.head.update(base=base, var=var)

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


def obs_head(pct):
    """The observer table's head; pct: the run's level (Table.pct)."""
    return ("vCPUs", "point", "with LOCK_STAT", "verdict", "without",
            "verdict", f"ratio of ratios [{pct}% CI]", "LOCK_STAT cost (base, variant)")


def observer_rows(run):
    """(title, rows of text cells) per twin from DIR/observer.csv."""
    if not os.path.lexists(os.path.join(run.dir, "observer.csv")):
        return []

    def rci(r, a, lo, hi):
        return (f"{ratio_text(r[a])} [{ratio_text(r[lo])}, {ratio_text(r[hi])}]"
                if r[a] != "" else "-")
    out = {}
    for r in read_csv(run.dir, "observer.csv",
                      ("metric", "baseline", "variant", "baseline_plain",
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


def obs_note(pct):
    return ("Ratio of ratios = the ratio without lock statistics / the ratio "
            f"with them, bootstrap {pct}% CI: 1 = lockdep leaves the comparison as "
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


#: what each entry of plots/plots.json has (make_plots.py writes it)
PLOT_KEYS = {"name": str, "png": str, "svg": str, "title": str,
             "caption": str, "width": int, "height": int, "data": list}


def load_plots(run):
    """The entries of DIR/plots/plots.json whose PNG is there; [] without
    the file.  Read as every file of the run (safeio: regular, bounded,
    no link, JSON nested at most a few levels) and checked entry by
    entry: the page is made of what it says."""
    rel = os.path.join("plots", "plots.json")
    path = os.path.join(run.dir, rel)
    if not os.path.lexists(path):
        return []
    again = "run python3 -m plots.make_plots again"
    try:
        plots = safeio.read_json(rel, root=run.dir)["plots"]
        if not isinstance(plots, list):
            raise TypeError("plots is not a list")
    except safeio.Unsafe as e:
        raise PlotsError(f"{path}: unreadable ({e.why}); {again}") from None
    except (KeyError, TypeError) as e:
        raise PlotsError(f"{path}: unreadable ({e}); {again}") from None
    for p in plots:
        if not _plot_entry(p):
            raise PlotsError(f"{path}: an entry is not a plot of make_plots "
                             f"({', '.join(PLOT_KEYS)}); {again}")
    return [p for p in plots if os.path.isfile(os.path.join(run.dir, p["png"]))]


def _plot_entry(p):
    """Is p an entry as make_plots writes it: the keys of PLOT_KEYS, and
    images at plots/NAME.png and .svg (the page links nothing else)?"""
    return (isinstance(p, dict)
            and all(isinstance(p.get(k), t) and not isinstance(p.get(k), bool)
                    for k, t in PLOT_KEYS.items())
            and all(isinstance(d, str) for d in p["data"])
            and TOKEN.match(p["name"]) is not None
            and p["png"] == f"plots/{p['name']}.png"
            and p["svg"] == f"plots/{p['name']}.svg")


def problems(run):
    out = []
    if run.has("problems.csv"):
        for r in run.tidy("problems.csv", ("cell", "problem")):
            where = " ".join(x for x in (r["cell"], r.get("point", ""), r.get("file", "")) if x)
            out.append(f"{where}: {r['problem']}" if where else r["problem"])
    return out


def split_primary(run, table):
    """(primary rows, the others): by the role column analysis wrote, else
    by the campaign's primary metric."""
    if any(r["role"] for r in table.rows):
        prim = [r for r in table.rows if r["role"] == "primary"]
    else:
        prim = [r for r in table.rows if r["metric"] == run.rd.primary_metric]
    return prim, [r for r in table.rows if r not in prim]


def read_blocks(run, name):
    """DIR/answer.txt's blocks (split at blank lines), each a list of its
    lines, [] when absent."""
    text = run.text(name)
    if not text:
        return []
    return [[x.strip() for x in b.split("\n") if x.strip()]
            for b in text.split("\n\n") if b.strip()]


def read_text(run, name):
    """DIR/answer.txt or DIR/legend.txt as `./run.sh report` wrote them
    (paragraphs / lines), [] when absent; PlotsError for anything but a
    regular file of bounded size (Run.text)."""
    text = run.text(name)
    return [x.strip() for x in text.split("\n") if x.strip()] if text else []
