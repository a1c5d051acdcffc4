# SPDX-License-Identifier: GPL-2.0
"""commit-msg.txt: the block a reviewer pastes into a commit message, at
most MAX_LINES lines of at most WIDTH columns: the answer in two
sentences, one table of the primary cells (vCPUs x point: baseline,
variant, ratio [CI], verdict), the boots lost, the A/A control in one
line, lock_stat's contentions and wait per acquisition of the campaign's
lock class (at most LOCK_MAX_LINES lines: lock_lines), the setup, and how
to reproduce the run from its own copy of the campaign file.  Every
table of every metric stays in summary.md.  Apart from summary.md
because its layout is a commit message's, not a report's."""

import shlex
import textwrap

import numpy as np

from analysis.estimate import stats
from analysis.render import run_setup
from analysis.render.answer import host_speed_sentence, overrides_s, short_answer
from analysis.render.formatting import number_s, pct_s, vcpus_s, verdict_s
from analysis.metrics import ICOUNT_UNITS, STEAL_FLAG_PCT
from analysis.tidy.crosscheck import CROSSCHECK_TOLERANCE
from analysis.verdict.table import aa_status, pairs_of
from lockbench import defaults
from lockbench.defaults import ICOUNT, WALL

WIDTH = 72  # commit message columns
MAX_LINES = 34  # what a commit message can carry of a benchmark
LOCK_MAX_LINES = 3  # the lock_stat lines' share of it
#: the samples.csv metrics a boot's lock_stat rates are computed from: the
#: class's rows (-R, -W, plain) summed per point (their LOCK_STAT rules in
#: analysis/metrics.py)
LOCK_TOTALS = ("lock_contentions", "lock_waittime_total_us",
               "lock_acquisitions")


def _dq_chunks(word, room_first, room):
    """A word too long for a line, double-quoted and cut into lines with
    backslash-newlines inside the quotes (which sh removes): the first
    line has room_first columns for its text, the others room (they start
    at column 0, where the word goes on).  Escaped char by char, so that
    no escape is cut in two."""
    esc = [("\\" + ch) if ch in '\\"$`' else ch for ch in word]
    lines, cur, width = [], '"', room_first - 1
    for piece in esc:
        if len(cur) + len(piece) > width - 1:  # keep a column for the \\
            lines.append(cur + "\\")
            cur, width = "", room
        cur += piece
    return lines + [cur + '"']


def shell_lines(cmd, args, width=WIDTH):
    """A command line of the block, `cmd` then each of args shell-quoted
    (shlex.quote): on one line where it fits in width columns, else as
    many args a line as fit, continued with backslashes; an argument
    longer than a line is cut inside double quotes (_dq_chunks).  Pasted
    into sh, the lines give back exactly cmd's words and args."""
    if isinstance(args, str):
        args = shlex.split(args)
    words = [shlex.quote(a) for a in args]
    line = "  " + " ".join([cmd] + words)
    if len(line) <= width:
        return [line]
    out, cur = [], "  " + cmd
    for raw, w in zip(args, words):
        if len(cur) + 1 + len(w) + 2 <= width:
            cur += " " + w
            continue
        out.append(cur + " \\")
        if 4 + len(w) + 2 <= width:
            cur = "    " + w
            continue
        chunks = _dq_chunks(raw, width - 4, width - 2)
        out += ["    " + chunks[0]] + chunks[1:-1]
        cur = chunks[-1]
    return out + [cur]


#: a metric in the block's table, where its name would not fit
SHORT = {"throughput_ops_s": "ops/s", "throughput_run": "ops/s run",
         "throughput_ref": "ops/kref", "insn_per_op": "insn/op",
         "lookup_lat_median_ns": "lookup p50", "lookup_lat_mean_ns":
         "lookup mean", "lookup_lat_p99_ns": "lookup p99",
         "lookup_lat_median_ref": "lookup p50/ref",
         "write_lat_median_ns": "write p50", "write_lat_mean_ns": "write mean",
         "write_lat_p99_ns": "write p99", "write_lat_max_ns": "write max",
         "write_lat_median_ref": "write p50/ref",
         "lock_waittime_per_acq_ns": "wait/acq"}


def _ratio(r):
    d = 4 if r.get("clock") == ICOUNT else 3
    if r["ratio"] != r["ratio"]:  # NaN: a side without samples
        return "-"
    return f"{r['ratio']:.{d}f} [{r['ratio_ci_lo']:.{d}f},{r['ratio_ci_hi']:.{d}f}]"


def stat_of(r):
    """(baseline, variant, word): the statistic a row's ratio is of:
    the means under icount (the ratio of means), else the medians."""
    if r.get("clock") == ICOUNT:
        return r.get("mean_base"), r.get("mean_var"), "mean"
    return r["median_base"], r["median_var"], "median"


def _table(rows, pct, many):
    """The primary cells as aligned lines of at most WIDTH columns, in the
    table's order (vCPUs, then the campaign's points), each naming its
    metric and the statistic its ratio is of (means under icount,
    medians else); the statistics go first when the line would be too
    wide."""
    body = []
    for _, r in rows.iterrows():
        cpus = f"{int(r['cpus'])}" + (" icount" if r.get("clock") == ICOUNT
                                      else "")
        # the variant alone: its pair's paragraph names the baseline
        who = f"{r['variant']} " if many else ""
        b, v, word = stat_of(r)
        body.append([cpus, who + str(r["point"]),
                     SHORT.get(r["metric"], r["metric"]),
                     number_s(b) + ("" if word == "median" else f" ({word})"),
                     number_s(v), _ratio(r),
                     verdict_s(r)])
    b, v = (rows["baseline"].iloc[0], rows["variant"].iloc[0]) if not many \
        else ("base", "variant")
    head = ["vCPUs", "point", "metric", b[:10], v[:10], f"ratio [{pct}% CI]",
            "verdict"]

    def lay(cols):
        w = [max(len(x[i]) for x in [[head[j] for j in cols]] +
                 [[row[j] for j in cols] for row in body])
             for i in range(len(cols))]
        return ["  ".join(x.ljust(w[i]) for i, x in enumerate(
            [row[j] for j in cols])).rstrip() for row in [head] + body]
    lines = lay([0, 1, 2, 3, 4, 5, 6])
    if max(map(len, lines)) > WIDTH:
        lines = lay([0, 1, 2, 5, 6])
    if max(map(len, lines)) > WIDTH:
        # "inconclusive (n≈12)" as "inconclusive": summary.md has the N
        for row in body:
            row[6] = row[6].split(" (n≈")[0]
        lines = lay([0, 1, 2, 5, 6])
    if max(map(len, lines)) > WIDTH:
        # the metric last: the answer's head line in summary.md names it
        lines = lay([0, 1, 5, 6])
    return [x if len(x) <= WIDTH else x[:WIDTH - 1] + "…" for x in lines]


# Which rows of a table too long for the block leave it first: those
# the answer's counts already carry ("no harm in 4"), then the undecided;
# a harm, a worse, a better, an unsafe or a lost-boots row stays longest.
_GIVES_WAY = (stats.NO_HARM, "inconclusive")


def _cut(table, verdicts, keep):
    """TABLE (a header line, then a line per row of VERDICTS) cut to KEEP
    lines, the last of them saying how many rows summary.md has beyond:
    the rows whose verdict gives way first (_GIVES_WAY, the last such
    row first) leave, the rest keep their order."""
    body = list(range(len(table) - 1))
    drop = len(table) - keep
    order = []
    for word in _GIVES_WAY:
        order += [i for i in reversed(body) if str(verdicts[i]).startswith(word)
                  and i not in order]
    order += [i for i in reversed(body) if i not in order]
    gone = set(order[:drop])
    kept = [table[0]] + [table[i + 1] for i in body if i not in gone]
    return kept + [f"(+{drop} more rows in summary.md)"]


def lock_rates(prim, samples):
    """lock_stat of the class per primary pair x vCPU count (prim: the
    verdict table's primary rows), from samples
    (samples.csv as a data frame): per boot (column `cell`), the class's
    contentions, wait time and acquisitions summed over the primary
    points of that vCPU count, as contentions per 1000 acquisitions and
    wait (ns) per acquisition; then the median over boots, per side.
    Only the boots with lock_stat totals at every one of those points (a
    point that failed, or a kernel without lock_stat, gives none: a
    boot's sum is over the same points on both sides); a pair x vCPU
    count with no such boot on a side has no row.  Returns dicts:
    baseline, variant, cpus, clock, points (how many), n_base, n_var,
    cont_base, cont_var, wait_base, wait_var (ns)."""
    if samples is None or not len(prim) or not len(samples):
        return []
    s = samples[samples["metric"].isin(LOCK_TOTALS)]
    if not len(prim) or not len(s):
        return []
    wide = s.pivot_table(index=["variant", "cpus", "cell", "point"],
                         columns="metric", values="value", aggfunc="first")
    if any(m not in wide.columns for m in LOCK_TOTALS):
        return []
    wide = wide.dropna(subset=list(LOCK_TOTALS)).reset_index()
    wide["point"] = wide["point"].astype(str)
    wide["cpus"] = wide["cpus"].astype(int)
    out = []
    keys = []
    for _, r in prim.iterrows():
        k = (r["baseline"], r["variant"], int(r["cpus"]))
        if k not in keys:
            keys.append(k)
    for b, v, cpus in keys:
        rows = prim[(prim["baseline"] == b) & (prim["variant"] == v)
                    & (prim["cpus"].astype(int) == cpus)]
        points = set(rows["point"].astype(str))
        side = {}
        for who in (b, v):
            w = wide[(wide["variant"] == who) & (wide["cpus"] == cpus)
                     & wide["point"].isin(points)]
            per = w.groupby("cell").agg(
                n=("point", "nunique"),
                **{m: (m, "sum") for m in LOCK_TOTALS})
            per = per[(per["n"] == len(points))
                      & (per["lock_acquisitions"] > 0)]
            if not len(per):
                break
            acq = per["lock_acquisitions"]
            side[who] = (len(per),
                         float(np.median(1e3 * per["lock_contentions"] / acq)),
                         float(np.median(1e3 * per["lock_waittime_total_us"]
                                         / acq)))
        if len(side) < 2:
            continue
        clock = rows["clock"].iloc[0] if "clock" in rows else WALL
        out.append(dict(baseline=b, variant=v, cpus=cpus, clock=clock,
                        points=len(points),
                        n_base=side[b][0], n_var=side[v][0],
                        cont_base=side[b][1], cont_var=side[v][1],
                        wait_base=side[b][2], wait_var=side[v][2]))
    return out


def _num(x):
    """3 significant digits, no exponent above 1: 0.553, 3.10, 620."""
    if x == 0:
        return "0"
    return f"{x:.0f}" if abs(x) >= 99.95 else f"{x:#.3g}".rstrip(".")


def _wait_s(a, b, clock):
    """Two waits in ns as 'a -> b UNIT', one unit for both (the larger's);
    under icount a guest ns is an instruction."""
    div, unit = 1, "ns"
    for d, u in ((1e6, "ms"), (1e3, "us")):
        if max(abs(a), abs(b)) >= d:
            div, unit = d, u
            break
    if clock == ICOUNT:
        unit = ICOUNT_UNITS[unit]
    return f"{_num(a / div)} -> {_num(b / div)} {unit}"


def _fit(cands):
    """The first of cands (texts) within WIDTH, else the last cut to it."""
    for c in cands:
        if len(c) <= WIDTH:
            return c
    return cands[-1][:WIDTH - 1] + "…"


def lock_lines(rates, lock_class, rw_variants, max_lines=LOCK_MAX_LINES):
    """At most max_lines lines of lock_stat for the block, from
    lock_rates(): a line naming the class, the boots the medians are over
    and what each boot's numbers sum (the -R and -W rows of an rwlock
    side, the points), then a line per pair x vCPU count: contentions
    per 1000 acquisitions and wait per acquisition, baseline -> variant.
    A row whose medians are all 0 (1 vCPU: nothing to contend) says
    nothing and is left out; no rows, no lines (a kernel without
    lock_stat is not a zero)."""
    rows = [r for r in rates if any(r[k] for k in (
        "cont_base", "cont_var", "wait_base", "wait_var"))]
    if not rows:
        return []
    ns = sorted({r[k] for r in rows for k in ("n_base", "n_var")})
    n_s = f"median of {ns[0]}" if len(ns) == 1 else \
        f"medians of {ns[0]}-{ns[-1]}"
    ks = sorted({r["points"] for r in rows})
    rw = any(r[k] in rw_variants for r in rows
             for k in ("baseline", "variant"))
    pts = "" if ks == [1] else (f"{ks[0]} points" if len(ks) == 1
                                else "its points")
    pairs = list(dict.fromkeys((r["baseline"], r["variant"]) for r in rows))
    names = f", {pairs[0][0]} -> {pairs[0][1]}" if len(pairs) == 1 else ""
    long = [x for x in ("rwlock -R+-W rows" if rw else "",
                        f"{pts} summed per boot" if pts else "") if x]
    short = [x for x in ("-R+-W" if rw else "",
                         f"{pts} per boot" if pts else "") if x]
    tiny = [x for x in ("-R+-W" if rw else "",
                        f"{pts}/boot" if pts else "") if x]

    def say(nm, n_text, notes):
        return (f"lock_stat {lock_class}{nm}, {n_text} boots"
                + (f" ({', '.join(notes)})" if notes else "") + ":")
    cands = [say(nm, n_s, notes) for notes in (long, short, tiny)
             for nm in (names, "")]
    cands += [say("", "medians over", tiny)]
    forms = []
    for r in rows:
        label = f"{r['cpus']} vCPU{'' if r['cpus'] == 1 else 's'}" + (
            " icount" if r["clock"] == ICOUNT else "") + (
            f" {r['baseline']} -> {r['variant']}" if len(pairs) > 1 else "")
        c = f"{_num(r['cont_base'])} -> {_num(r['cont_var'])}"
        w = _wait_s(r["wait_base"], r["wait_var"], r["clock"])
        forms.append([
            f"  {label}: contentions {c} per 1k acq, wait {w} per acq",
            f"  {label}: contentions {c} per 1k acq, wait {w}/acq",
            f"  {label}: {c} contentions/1k acq, wait {w}/acq",
            f"  {label}: {c} cont/1k acq, {w}/acq"])
    # one form for every row: the first that fits them all
    i = next((i for i in range(len(forms[0]))
              if all(len(f[i]) <= WIDTH for f in forms)), -1)
    body = [_fit([f[i]]) for f in forms]
    head = [h for h in cands if len(h) <= WIDTH][:1]
    if head:
        room = max_lines - 1
        if len(body) > room:
            cut = len(body) - (room - 1)
            body = body[:room - 1] + [
                f"  (+{cut} more; summary.md has lock_* per point)"]
        return head + body
    # a class name too long for one line: the head wrapped on two, and
    # the rows it leaves out said in it
    text = cands[-1]
    if len(body) > max_lines - 2:
        text = text[:-1] + (f"; {len(body) - 1} more rows in summary.md's "
                            f"lock_* per point:")
    head = textwrap.wrap(text, WIDTH, break_on_hyphens=False)
    return (head[:max_lines - 1] + body)[:max_lines]


def kernels_line(f):
    """What the kernels were built with, in one sentence: lockdep and
    lock_stat price their own paths into every lock operation, so the
    reader must know (f["debug_of"]: {variant: (lockdep, lock_stat)})."""
    debug = {v: x for v, x in (f.get("debug_of") or {}).items() if "~" not in v}
    if not debug:
        return ""
    kinds = {}
    for v, (dep, ls) in debug.items():
        word = ("lockdep + lock_stat" if dep and ls else "lock_stat" if ls
                else "lockdep" if dep else "production")
        kinds.setdefault(word, []).append(v)
    if len(kinds) == 1:
        word = next(iter(kinds))
        return (f"Kernels: {word} builds" + (
            " (debug paths in every number)."
            if word == "lockdep + lock_stat" else
            " (no lockdep, no lock statistics)." if word == "production"
            else "."))
    return "Kernels: " + "; ".join(f"{', '.join(vs)}: {word} builds"
                                   for word, vs in kinds.items()) + "."


def crosscheck_line(xc):
    """The lock_stat cross-check in one sentence (crosscheck.csv as a data
    frame, None: not read): exact where lock_stat's acquisitions equal
    the module's own count of the calls that take the lock."""
    if xc is None or not len(xc) or "rel_diff" not in xc:
        return ""
    d = xc["rel_diff"].astype(float).dropna()
    if not len(d):
        return ""
    n, exact = len(d), int((d == 0).sum())
    within = int((d <= CROSSCHECK_TOLERANCE).sum())
    if exact == n:
        return f"lock_stat cross-check: exact in all {n} boot points."
    return (f"lock_stat cross-check: exact in {exact} of {n} boot points, "
            f"within 1% in {within - exact}, off in {n - within} "
            f"(tidy/crosscheck.csv).")


def steal_line(samples, f):
    """Where the host kept a vCPU waiting (steal_max_pct above
    metrics.STEAL_FLAG_PCT at some point of a boot), per vCPU count of
    the wall clock: '' where it never did."""
    if samples is None or not len(samples):
        return ""
    st = samples[samples["metric"] == "steal_max_pct"]
    bits = []
    for cpus, g in st.groupby("cpus", sort=True):
        if (f.get("clock") or {}).get(int(cpus)) == ICOUNT:
            continue
        hot = g[g["value"].astype(float) > STEAL_FLAG_PCT]["cell"].nunique()
        if hot:
            bits.append(f"{hot} of {g['cell'].nunique()} boots at "
                        f"{vcpus_s([int(cpus)])}")
    if not bits:
        return ""
    return (f"Host steal above {STEAL_FLAG_PCT:g}% in " + ", ".join(bits)
            + ": their rows say so in summary.md.")


#: the block's one sentence on icount (answer.clock_sentence, shorter)
def icount_line(f):
    ic = [c for c, k in (f.get("clock") or {}).items() if k == ICOUNT]
    if not ic:
        return []
    # each part wrapped on its own, so that the phrases a reader (and
    # t-icount) looks for stay on one line: what the unit is, and what
    # it prices
    return [f"{vcpus_s(sorted(ic))} under icount, 1 guest ns = 1 instruction:",
            "it prices path length, not cache misses.",
            "The icount interval is the boots' range (the variant's 1.5x), "
            "not a CI."]


def render_commit_msg(table, f, thresholds, campaign_file,
                      run_dir, samples=None, lock_class=defaults.TARGET,
                      rw_variants=None, crosscheck=None):
    """The block for a commit message (module docstring); table: the
    verdict table (verdict.table.VerdictTable), its primary rows in its
    order; f:
    summary.header_facts(); campaign_file: the campaign file as the run
    directory keeps it (what Reproduce names); samples (samples.csv),
    lock_class and rw_variants (the variants whose class has -R rows in
    lockstat.csv): the lock_stat lines, none when samples or rw_variants
    is None; crosscheck (crosscheck.csv): its line.  campaign_file: a
    path, or the list of `./run.sh campaign`'s arguments."""
    w = textwrap.TextWrapper(width=WIDTH, break_on_hyphens=False)
    head = []
    for text in short_answer(table, f, thresholds):
        head += w.wrap(text)
    prim = table.primary
    # the production twins' cells are said in their sentence above (the
    # answer's differences); the table keeps the pairs' own, and says
    # where the others are
    twins = set((f.get("twins") or {}).values())
    shown = prim[[(b, v) not in twins for b, v in
                  zip(prim["baseline"], prim["variant"])]] if len(prim) else prim
    many = len(pairs_of(shown)) > 1
    rows_text = _table(shown, pct_s(thresholds.confidence), many) if len(shown) else []
    tail = facts_lines(w, prim, shown, f, samples, lock_class, rw_variants, crosscheck)
    repro = reproduce_lines(f, campaign_file, run_dir)
    # The table gives way first: its rows are all in summary.md.
    rows_text = fit_rows(rows_text, shown, len(prim) - len(shown),
                         MAX_LINES - len(head) - len(tail) - len(repro) - 3)
    out = head + [""] + rows_text + [""] + tail + [""] + repro
    return "\n".join(out[:MAX_LINES]) + "\n"


def facts_lines(w, prim, shown, f, samples, lock_class, rw_variants, crosscheck):
    """The paragraph under the table, wrapped by w: the lock_stat lines,
    the A/A control, report's overrides, the kernels, contexts,
    crosscheck, steal, host speed and hosts, the setup, icount and the
    commits the variants were built from."""
    tail = []
    if samples is not None and rw_variants is not None:
        tail += lock_lines(lock_rates(prim, samples), lock_class,
                           rw_variants)
    ncal, _nh, claims = aa_status(prim)
    if ncal:
        tail += w.wrap(f"A/A control (the baseline booted twice): differs "
                       f"in {claims} of {ncal} cells"
                       + (", which widened those CIs." if claims else "."))
    ov = overrides_s(f)
    if ov:
        tail += w.wrap(f"Judged with {ov}.")
    for line in (kernels_line(f), f.get("contexts", ""), crosscheck_line(crosscheck),
                 steal_line(samples, f), host_speed_sentence(shown),
                 run_setup.mixed_hosts(f, short=True)):
        if line:
            tail += w.wrap(line)
    tail += w.wrap(
        f"{f.get('driver', 'mbox_bench')} under QEMU {f['accel']} ({f['guests']}), "
        f"{vcpus_s(f['cpus'])} on {f['cores']} host cores, Linux "
        f"{f['kernels']}, n = {f['n']} boots a side: emulation, so the "
        f"ratio is the result.")
    for line in icount_line(f) or []:
        tail += w.wrap(line)
    commits = f.get("commits") or {}
    if commits:
        trees = sorted({t for _c, t in commits.values()})
        tail += w.wrap("Commits: " + ", ".join(
            f"{v} = {c[:12]}" for v, (c, _t) in commits.items())
            + f" (git tree {', '.join(trees)}).")
    return tail


def reproduce_lines(f, campaign_file, run_dir):
    """'Reproduce:' and the command lines that make the run again: the
    campaign, then the report with its --margin and --baseline where
    report's options changed them."""
    repro = ["Reproduce:"] + shell_lines("./run.sh campaign", campaign_file)
    if overrides_s(f):
        opts = []
        o = f.get("overrides") or {}
        if "margin" in o:
            opts.append(f"--margin {o['margin'][1]:g}")
        if "baseline" in o:
            opts.append(f"--baseline {o['baseline'][1]}")
        repro += shell_lines("./run.sh report", [run_dir] + " ".join(opts).split())
    return repro


def fit_rows(rows_text, shown, left, room):
    """The table's lines (rows_text: a header and the rows of shown) in
    room lines, with a line saying where the rest are: the left rows not
    shown (the production twins'), and those cut, the least telling
    first (_cut)."""
    if room < 3:
        # no room for a header and a row: no header alone (a campaign of
        # several pairs, whose paragraphs took the room)
        return [f"(the {len(rows_text) - 1 + left} rows of the primary cells: "
                "summary.md)"]
    if len(rows_text) + (1 if left else 0) > room:
        rows_text = _cut(rows_text, list(shown["verdict"]), max(room - 1, 1))
        n = int(rows_text[-1].split()[0].lstrip("(+"))
        rows_text[-1] = f"(+{n + left} more rows in summary.md)"
    elif left:
        rows_text.append(f"(+{left} more rows in summary.md)")
    return rows_text
