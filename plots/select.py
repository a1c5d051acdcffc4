# SPDX-License-Identifier: GPL-2.0
"""What every plot builder shares (plots/make_plots.py runs them): the
Plot a builder returns, Skip and NotApplicable for a plot without data, the
Selector that picks and orders rows of DIR/tidy/*.csv and writes them to
DIR/plots/data/, the verdict labels beside the points, and the choices of
axis (log panels, log ticks).  Nothing is computed here: every number
drawn is in a tidy file.
"""

import math
import os

from lockbench import safeio
from plots.common import PlotsError, to_int


class Skip(Exception):
    """This plot has no data in this run: a warning, not an error."""


class NotApplicable(Skip):
    """This plot does not apply to this run (a campaign that sweeps no
    grid, a run from before host steal was measured): left out without a
    warning, unless asked for by name."""


class Plot:
    """One gnuplot run: the script, its variables, and what the report says."""

    def __init__(self, name, size, title, caption, variables, data,
                 verdicts=()):
        self.name, self.size, self.title, self.caption = name, size, title, caption
        self.variables, self.data = variables, data
        #: the answer's cells the plot shows, with their verdicts and
        #: ratios as drawn (answer_entry): plots.json's "verdicts"
        self.verdicts = list(verdicts)


def wide(n, height):
    """Image size for n panels side by side."""
    return (max(1000, 330 * n + 80), height)


class Selector:
    """Rows of the tidy files, filtered and ordered for one plot each."""

    def __init__(self, run, datadir):
        self.run, self.datadir = run, datadir
        self.vorder = {v: i for i, v in enumerate(run.variants)}
        self.porder = {p["id"]: i for i, p in enumerate(run.points)}

    def known(self, r):
        return r.get("variant") in self.vorder and r.get("point") in self.porder

    def medians(self, metrics):
        cols = ("variant", "cpus", "point", "metric", "median", "ci_lo", "ci_hi")
        rows = [r for r in self.run.tidy("medians.csv", cols)
                if r["metric"] in metrics and self.known(r) and r["median"] != ""]
        for r in rows:
            r["cpus"] = str(to_int(r["cpus"], "medians.csv cpus"))
        return rows

    def write(self, name, rows, columns):
        """DIR/plots/data/NAME.csv with these columns (in their tidy order);
        safeio.write_atomic: never through a link planted at its name."""
        path = os.path.join(self.datadir, name + ".csv")
        lines = [",".join(columns)] + [
            ",".join(_csv_field(r.get(c, "")) for c in columns) for r in rows]
        try:
            safeio.write_atomic(path, "".join(x + "\n" for x in lines))
        except OSError as e:
            raise PlotsError(f"{path}: cannot write: {e.strerror}") from None
        return path

    def common(self, rows):
        """Variables every category-axis plot takes, from the rows shown."""
        cpus = sorted({int(r["cpus"]) for r in rows})
        points = [p["id"] for p in self.run.points
                  if any(r["point"] == p["id"] for r in rows)]
        over = [c for c in self.run.oversubscribed() if c in cpus]
        v = {"variants": " ".join(self.run.variants),
             "cpuslist": " ".join(map(str, cpus)),
             "points": " ".join(points),
             "oversub": " ".join(map(str, over)),
             "footer": self.run.setup_line(set(cpus)),
             "lockname": self.run.rd.lock_class}
        for i, pid in enumerate(points, 1):
            v[f"plabel{i}"] = self.run.point_label(pid)
            p = self.run.point(pid)
            v[f"pshort{i}"] = (f"{pid} ({p['read_pct']}% reads)" if "read_pct" in p
                               else pid)
        return v, points, cpus

    def key(self, *cols):
        def k(r):
            out = []
            for c in cols:
                if c == "variant":
                    out.append(self.vorder[r[c]])
                elif c == "point":
                    out.append(self.porder[r[c]])
                elif c in ("cpus", "rep", "read_pct", "bucket"):
                    out.append(to_int(r[c], f"{c}"))
                else:
                    out.append(r[c])
            return tuple(out)
        return k


def spans_decade(values):
    """Whether a panel drawing these values (medians, CI ends, boots) wants
    a log y axis: all positive (a log axis cannot draw 0) and the largest
    more than 10 times the smallest.  A choice of axis, not a drawn number."""
    vals = []
    for x in values:
        try:
            vals.append(float(x))
        except (TypeError, ValueError):
            continue
    return bool(vals) and min(vals) > 0 and max(vals) > 10 * min(vals)


def log_panels(rows, panel, cols=("median", "ci_lo", "ci_hi")):
    """The panels (panel(row) -> name) whose rows' values span a decade,
    in first-seen order: the plot scripts' logpanels variable."""
    by = {}
    for r in rows:
        by.setdefault(panel(r), []).extend(r.get(c, "") for c in cols)
    return " ".join(p for p, vals in by.items() if spans_decade(vals))


VERDICT_COLS = ["baseline", "variant", "cpus", "point", "metric",
                "median_var", "ratio", "verdict"]


def compared_rows(run, cols):
    """The rows of tidy/comparisons.csv, as the last analyze or report
    judged them ([] when it is not there); PlotsError when the file lacks
    one of cols."""
    if not run.has("comparisons.csv"):
        return []
    rows = run.tidy("comparisons.csv", cols)
    missing = [c for c in cols if rows and c not in rows[0]]
    if missing:   # read before with other columns required
        raise PlotsError(f"{os.path.join(run.tidy_dir, 'comparisons.csv')}: "
                         f"no column {', '.join(missing)} (see analysis/TIDY.md)")
    return rows


#: the columns of a primary cell in plots.json's "verdicts" (what a
#: figure says of the answer: tests/check_verdicts.py holds every output
#: to comparisons.csv's)
ANSWER_COLS = ["baseline", "variant", "cpus", "point", "metric", "ratio",
               "ratio_ci_lo", "ratio_ci_hi", "verdict"]


def answer_rows(run):
    """The answer's cells: the primary rows of tidy/comparisons.csv (role
    `primary`), each on the metric its cell is answered on (per regime:
    analysis/primary.py), with the verdict the answer gives; a file
    without the role column: the campaign's primary metric's rows.  []
    without comparisons.csv."""
    rows = compared_rows(run, ANSWER_COLS)
    if rows and "role" in rows[0]:
        return [r for r in rows if r["role"].strip() == "primary"]
    return [r for r in rows if r["metric"] == run.rd.primary_metric]


def answer_entry(r):
    """A cell of the answer as plots.json's "verdicts" lists it, with its
    role (`primary`, or `writers`: the writers' answer)."""
    return dict({c: r.get(c, "") for c in ANSWER_COLS},
                role=(r.get("role") or "primary").strip())


def verdict_rows(sel, drawn, answers, cpus, meds):
    """The answer's verdict of each primary cell a figure shows: the
    primary rows (answer_rows) whose metric is one of `answers` (the
    metrics the figure stands for), of known variants, points and vCPU
    counts in `cpus`, and not the A/A control.  drawn(row) -> the metric
    the figure draws at that cell (and op); meds: the medians.csv rows
    drawn, whose variant's median places the label.  Each row gets
    `label`: the verdict, with the cell's metric named where it is not
    the one drawn ('insn_per_op: no harm'), and `median_var`: the drawn
    median."""
    at = {(r["variant"], str(r["cpus"]), r["point"], r["metric"]): r["median"]
          for r in meds}
    out = []
    for r in answer_rows(sel.run):
        if (r["metric"] not in answers or not sel.known(r)
                or r["baseline"] not in sel.vorder or not r["verdict"].strip()):
            continue
        try:
            c = int(r["cpus"])
        except ValueError:
            continue
        if c not in cpus:
            continue
        m = drawn(r)
        y = at.get((r["variant"], str(c), r["point"], m), "")
        if y == "":
            continue
        out.append(dict(r, cpus=str(c), median_var=y, drawn=m,
                        label=(r["verdict"].strip() if m == r["metric"]
                               else None)))
    out.sort(key=lambda r: sel.key("point", "cpus", "variant")(r)
             + (sel.vorder[r["baseline"]],))
    return out


def verdict_labels(sel, rows, panel):
    """The scripts' label variables (plots/gnuplot/style.gp: nvl, vl<i>, vt<i>):
    'after: no harm' (or 'rcu vs after: ...' for a pair whose baseline is
    not the campaign's; 'after, insn_per_op: no harm' where the cell's
    answer is on another metric than the one drawn) right of the
    variant's point; the labels of more
    than one pair at a vCPU count form a list centred on the first one's
    point (plots/gnuplot/style.gp moves it inside the panel), so that they never
    overlap however close the medians are."""
    count, first, v = {}, {}, {"nvl": len(rows)}
    for r in rows:
        at = (panel(r), r["cpus"])
        count[at] = count.get(at, 0) + 1
    for i, r in enumerate(rows, 1):
        k = sel.vorder[r["variant"]] + 1
        at = (panel(r), r["cpus"])
        if at not in first:
            first[at] = [k, r["median_var"], 0]
        else:
            first[at][2] += 1
        ak, y, n = first[at]
        who = (r["variant"] if r["baseline"] == sel.run.rd.baseline
               else f"{r['variant']} vs {r['baseline']}")
        if r.get("label") is None and r.get("drawn", r["metric"]) != r["metric"]:
            who += f", {r['metric']}"
        v[f"vl{i}"] = f"{at[0]} {r['cpus']} {k} {n} {count[at]} {y}"
        v[f"vt{i}"] = f"{who}: {r['verdict'].strip()}"
    return v


def _csv_field(x):
    x = str(x)
    if any(ch in x for ch in ',"\n'):
        return '"' + x.replace('"', '""') + '"'
    return x


MED_COLS = ["variant", "cpus", "point", "read_pct", "metric", "unit", "n",
            "median", "ci_lo", "ci_hi", "ci_level"]


def log_note(v):
    """The caption's word on log axes."""
    return "; log y axis where a panel spans more than 10x" if v.get("logpanels") else ""


NICE = {1: (1, 1.5, 2, 3, 5, 7), 2: (1, 2, 5), 3: (1, 3), 99: (1,)}


def log_ticks(values):
    """(low, high, ticks) of a log axis showing these positive values: the
    ticks at 1, 1.5, 2, 3, 5, 7 times a power of ten when the values span
    less than a decade (so that the narrow range of a steady cell still has
    labelled ticks), fewer a decade when they span more; the range from the
    tick below the smallest value to the tick above the largest, with 8%
    to spare.  A choice of axis, not a drawn number."""
    lo, hi = min(values) / 1.08, max(values) * 1.08
    span = math.log10(hi / lo)
    mant = next(m for d, m in sorted(NICE.items()) if span <= d)
    ticks = [m * 10.0 ** e
             for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
             for m in mant]
    low = max(t for t in ticks if t <= lo * (1 + 1e-9))
    high = min(t for t in ticks if t >= hi * (1 - 1e-9))
    return low, high, [t for t in ticks if low <= t <= high]


def plain(x):
    """A number for a gnuplot word list, which reads no exponent: 1e6 ->
    '1000000', 1.5 -> '1.5'."""
    return f"{x:.6f}".rstrip("0").rstrip(".")


def cpus_text(c, over):
    """'1 vCPU', '4 vCPUs*' (* = oversubscribed)."""
    return f"{c} vCPU{'s' if c != 1 else ''}{'*' if c in over else ''}"
