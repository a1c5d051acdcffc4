# SPDX-License-Identifier: GPL-2.0
"""The bottom line of a run in words (answer.txt, the top of summary.md
and report.html, the first paragraph of commit-msg.txt): per compared
pair the boots each side lost, a head, one line per primary cell
(cell_line: where, verdict, metric and ratio, the same words in every
output), then the A/A control, the campaign-wide false-claim bound, the
regime the points load the lock with, and the setup; the commit block's
one clause per vCPU count (cpus_clause).  Generated from the comparisons
table's primary rows, never written by hand."""

import re

from analysis.tidy import boots
from analysis.estimate import adjusted, exact, stats
from analysis.verdict import safety
from analysis.verdict.table import aa_status, by_pair, pairs_of
from analysis import metrics
from analysis.render import run_setup
from analysis.render.formatting import (looks_s, missing, pct_s, row_point_label,
                                 row_ratio, verdict_s, vcpus_s)
from lockbench.defaults import ICOUNT, WALL


def exact_difference(r):
    """'+8.1 insn (+0.37%)': an icount row's difference of the means in
    its unit, or ''."""
    if r.get("clock") != ICOUNT or missing(r.get("mean_base")) \
            or missing(r.get("mean_var")):
        return ""
    unit = str(r.get("unit") or "")
    per = " per op" if r["metric"] == "insn_per_op" else (
        " per lookup" if r["metric"].startswith("lookup_") else
        " per write" if r["metric"].startswith("write_") else "")
    return exact.difference_s(float(r["mean_base"]), float(r["mean_var"]),
                              unit.split("/")[0] + per)


def cpus_head(cpus, clock, over=()):
    """'1 vCPU (icount)', '2 vCPUs', '4 vCPUs (oversubscribed)'."""
    return (f"{cpus} vCPU{'s' if cpus > 1 else ''}"
            + (" (icount)" if clock == ICOUNT else "")
            + (" (oversubscribed)" if cpus in over else ""))


def cell_parts(r, over=()):
    """One primary cell of the answer as (where, verdict, what): '2 vCPUs,
    read95', 'harm', 'throughput_run 0.818 [0.800, 0.831]' (an icount
    row with its exact difference; the cell's failed points and host
    steal in brackets).  The one way every output names a cell's answer
    (answer.txt, summary.md, report.html, the commit block's rows)."""
    clock = r.get("clock") or WALL
    where = f"{cpus_head(int(r['cpus']), clock, over)}, {r['point']}"
    what = f"{r['metric']} {row_ratio(r)}"
    d = exact_difference(r)
    if d:
        what += f", {d}"
    flags = []
    if r.get("failed_var") or r.get("failed_base"):
        flags.append(f"{int(r['failed_var'])} failed point(s) in "
                     f"{r['variant']} ({int(r['starved_var'])} starved), "
                     f"{int(r['failed_base'])} in {r['baseline']}")
    if r.get("host_speed") == "adjusted":
        flags.append(f"read at one host speed, r2 {float(r['meter_r2']):.2f}")
    if "host steal above" in str(r.get("warnings") or ""):
        flags.append(f"host steal above {metrics.STEAL_FLAG_PCT:g}% in some "
                     f"boots")
    if flags:
        what += " [" + "; ".join(flags) + "]"
    hi = r.get("lost_rate_hi")
    if verdict_s(r) in stats.FAVOURABLE and not missing(hi) and hi == hi:
        # what a favourable verdict cannot rule out: how often the
        # variant's kernel could lose a boot, its boots seen
        what += (f"; {r['variant']} lost {int(r['lost_var'])} of "
                 f"{int(r['boots_var'])} boots: it may lose up to "
                 f"{100 * hi:.0f}%")
    return where, verdict_s(r), what


def decided_s(r, f):
    """'; decided at the look at 8 repetitions' for a primary cell a look
    decided while the campaign went on for others (their later boots ran
    the open points only: scripts/campaign/run.py narrow), else ''."""
    if (r.get("clock") or WALL) == ICOUNT:
        return ""  # its boots are icount_repetitions, whatever the looks
    key = (int(r["cpus"]), str(r["point"]))
    at = next((reps for reps, still in f.get("look_open") or [] if key not in still), None)
    last = f.get("stopped_at") or (f.get("looks") or [None])[-1]
    if at is None or last is None or at >= last:
        return ""
    return f"; decided at the look at {at} repetitions"


def host_speed_sentence(rows):
    """How the wall-clock cells of rows were read against the host's
    speed (verdicts' host_speed column: analysis/estimate/adjusted.py),
    in one sentence; '' where no row has a say (icount cells only, or a
    table from before the meter)."""
    if "host_speed" not in rows:
        return ""
    hs = [str(x) for x in rows["host_speed"].fillna("") if str(x)]
    if not hs:
        return ""
    adj = rows[rows["host_speed"] == "adjusted"]
    why = sorted({x[len("raw: "):] for x in hs if x.startswith("raw: ")})
    if adj.empty:
        if why == [adjusted.NONE.why]:
            return ("Host speed: not measured (no host speed meter in these runs), so the "
                    "wall-clock cells are judged on raw values.")
        return ("Host speed: every wall-clock cell judged on raw values: "
                + "; ".join(_short_why(w) for w in why) + ".")
    r2 = adj["meter_r2"].astype(float)
    r2s = f"{r2.min():.2f}" if r2.min() == r2.max() else f"{r2.min():.2f}-{r2.max():.2f}"
    out = (f"Host speed: {len(adj)} of {len(hs)} wall-clock cells read at the mean host "
           f"speed of their boots, the host speed meter explaining {r2s} of the spread "
           f"between boots there (guest/meter/README.md)")
    if why:
        out += "; the rest on raw values: " + "; ".join(_short_why(w) for w in why)
    return out + "."


def _short_why(why):
    """A raw cell's reason without its numbers (a sentence names many)."""
    return why.split(" (")[0]


def cell_line(r, over=(), twin=None):
    """answer.txt's line of a primary cell: '- WHERE: VERDICT; WHAT';
    twin: the same cell's row of the pair's production twins (no
    lockdep, no lock_stat), whose difference is said beside it."""
    where, verdict, what = cell_parts(r, over)
    d = exact_difference(twin) if twin is not None else ""
    if d:
        what += (f"; production kernels ({twin['variant']} vs "
                 f"{twin['baseline']}): {d}, {verdict_s(twin)}")
    return f"- {where}: {verdict}; {what}"


def twin_rows(prim, f, b, v):
    """{(cpus, point): row} of the production twins of the pair (b, v)
    (f["twins"]), {} without."""
    t = (f.get("twins") or {}).get((b, v))
    if not t or not len(prim):
        return {}
    rows = prim[(prim["baseline"] == t[0]) & (prim["variant"] == t[1])]
    return {(int(r["cpus"]), str(r["point"])): r for _, r in rows.iterrows()}


def parse_cell_line(line):
    """(where, verdict, what) of a cell_line, None for another line: how
    summary.md and report.html lay answer.txt's cells out as a table."""
    if not line.startswith("- ") or ": " not in line:
        return None
    where, rest = line[2:].split(": ", 1)
    verdict, _, what = rest.partition("; ")
    return where, verdict, what


#: the writers' metrics (verdicts.WRITERS) in words
WRITER_WORDS = {"write_lat_p99_ns": "p99", "write_lat_max_ns": "max"}


def writers_sentence(rows, v):
    """The writers' answer of a pair in one sentence ('' without writer
    rows): whether the conversion helps or hurts the tail of a writer's
    wait (write latency p99 and maximum, role `writers`), then each
    verdict with its cells: 'Writers (write latency p99 and max, 2
    vCPUs, the points that mix reads and writes): after helps writers:
    p99 better at read95 (0.544) and read95-long (0.680), ...'."""
    if rows is None or not len(rows):
        return ""
    kinds = [str(x).split(" (")[0] for x in rows["verdict"]]
    good = stats.BETTER in kinds
    bad = any(k in (stats.WORSE, stats.HARM, "harm") for k in kinds)
    if good and not bad:
        says = f"{v} helps writers"
    elif bad and not good:
        says = f"{v} hurts writers"
    elif good and bad:
        says = f"{v} helps writers in some cells and hurts them in others"
    elif kinds and all(k == stats.NO_HARM for k in kinds):
        says = f"{v} leaves writers as they were (no harm)"
    else:
        says = f"no verdict decides whether {v} helps or hurts writers"
    bits = []
    for m in dict.fromkeys(rows["metric"]):
        block = rows[rows["metric"] == m]
        by = {}
        for _, r in block.iterrows():
            cpus = int(r["cpus"])
            where = (f"{r['point']}" + ("" if block["cpus"].nunique() == 1
                                        else f" ({cpus} vCPUs)"))
            if verdict_s(r).startswith((stats.BETTER, stats.WORSE, stats.HARM)):
                where += f" ({row_ratio(r).split(' [')[0]})"
            by.setdefault(verdict_s(r), []).append(where)
        bits.append(f"{WRITER_WORDS.get(m, m)} " + ", ".join(
            f"{k} at {' and '.join(w)}" for k, w in by.items()))
    cpus = sorted({int(c) for c in rows["cpus"]})
    return (f"Writers (write latency p99 and max at {vcpus_s(cpus)}, the "
            f"points that mix reads and writes: can readers starve a "
            f"writer?): {says}: " + "; ".join(bits) + ".")


def writers_short(rows, v):
    """The commit block's sentence on writers: 'Writers (p99, max):
    after helps them (better at read95, read95-long).'"""
    full = writers_sentence(rows, v)
    says = full.split("?): ", 1)[1].split(": ", 1)[0]
    better = list(dict.fromkeys(
        str(r["point"]) for _, r in rows.iterrows()
        if verdict_s(r) == stats.BETTER))
    worse = list(dict.fromkeys(
        str(r["point"]) for _, r in rows.iterrows()
        if verdict_s(r).startswith((stats.WORSE, stats.HARM))))
    bits = ([f"better at {', '.join(better)}"] if better else []) + (
        [f"worse or harm at {', '.join(worse)}"] if worse else [])
    return (f"Writers (write latency p99, max): {says}"
            + (f" ({'; '.join(bits)})" if bits else "") + ".")


def cpus_clause(cpus, block, over=()):
    """One clause of a vCPU count's answer: '1 vCPU (icount): no harm at
    all 4 points', '2 vCPUs: harm at read95 (0.818) and read95-long
    (0.653), no harm at read50 and read95-paced'."""
    clock = str(block["clock"].iloc[0]) if "clock" in block else WALL
    kinds = {}
    for _, r in block.iterrows():
        v = verdict_s(r)
        kinds.setdefault(v, []).append(r)
    bits = []
    for v, rs in kinds.items():
        if len(kinds) == 1 and len(rs) > 1:
            bits.append(f"{v} at all {len(rs)} points")
            continue
        named = [str(r["point"]) + (
            f" ({row_ratio(r).split(' [')[0]})"
            if v.startswith((stats.HARM, stats.WORSE, stats.BETTER))
            and not missing(r["ratio"]) and r["ratio"] == r["ratio"] else "")
            for r in rs]
        bits.append(f"{v} at " + (" and ".join(named) if len(named) < 3
                                  else ", ".join(named[:-1])
                                  + " and " + named[-1]))
    return f"{cpus_head(cpus, clock, over)}: " + ", ".join(bits)


def regime(labels, think):
    """What the points load the lock with: each point's parameters, and
    whether its threads loop on the lock or pause between operations."""
    tight = [p for p in labels if not think.get(p)]
    out = []
    for p, label in labels.items():
        t = think.get(p)
        out.append(label if not t else
                   f"{label}, a {t / 1000:g} us pause between operations")
    text = "; ".join(out)
    if tight:
        text += (f"; {'every' if len(tight) == len(labels) else 'at ' + ', '.join(tight) + ' every'}"
                 f" thread loops on the lock with no pause (a tight loop)")
    return text


def metric_words(metric):
    """A metric's name and the separator before the ratio, with what it
    is in words where the name does not say it (metrics.PLAIN)."""
    plain = metrics.PLAIN.get(metric)
    return f"{metric} = {plain}; " if plain and metric != "throughput_ops_s" \
        else f"{metric}, "


def lost_lines(b, v, tally, cpus_list):
    """One sentence per vCPU count where either side lost boots:
    'after: 2 of 16 boots lost at 2 vCPUs (2 hung), before: 0 of 16'."""
    out = []
    empty = {"boots": 0, "lost": 0, "states": {}}
    for c in cpus_list:
        tb, tv = tally.get((b, c), empty), tally.get((v, c), empty)
        if tb["lost"] or tv["lost"]:
            out.append(boots.lost_sentence(v, b, c, tv, tb))
    return out


def clock_sentence(f):
    """The one sentence on what an icount number is, or ''."""
    ic = [c for c, k in (f.get("clock") or {}).items() if k == ICOUNT]
    if not ic:
        return ""
    return (f"At {vcpus_s(sorted(ic))} the guest's clock counted "
            f"{metrics.ICOUNT_MEANS}.")


def overrides_s(f):
    """What report's options changed from the campaign, or ''."""
    o = f.get("overrides") or {}
    bits = []
    if "margin" in o:
        bits.append(f"margin {100 * o['margin'][1]:g}% set by report "
                    f"--margin (the campaign named {100 * o['margin'][0]:g}%)")
    if "baseline" in o:
        bits.append(f"baseline {o['baseline'][1]} set by report --baseline "
                    f"(the campaign's: {o['baseline'][0]})")
    return "; ".join(bits)


def metrics_s(rows, f):
    """The primary metrics of a pair's rows, and whether the campaign
    named them or they are the default of their regime."""
    ms = list(dict.fromkeys(rows["metric"]))
    text = ", ".join(ms)
    if f.get("primary_default"):
        text += (" (the default of each regime: the campaign named no "
                 "primary metric; analysis/primary.py)")
    elif len(ms) == 1:
        text = metric_words(ms[0]).rstrip(", ").rstrip("; ")
    return text


#: a variant's kernel suffix (guest/variant_name.py label: before@6.12)
KERNEL_SUFFIX = re.compile(r"@[0-9]+\.[0-9]+$")


def kernels_of(rows):
    """The kernel versions of rows (their `kernel` column), in order."""
    if "kernel" not in rows or not len(rows):
        return []
    return [k for k in dict.fromkeys(rows["kernel"].fillna("").astype(str)) if k]


def on_kernel(v, f):
    """' on Linux 6.12.118': the kernel a pair's variant booted, for a run
    of several kernel versions."""
    return f" on Linux {(f.get('kernel_of') or {}).get(v) or '?'}"


def regime_s(v, f):
    """' under PREEMPT_RT' for a variant whose kernel is PREEMPT_RT
    (build-meta.json "preempt"), where spinlock_t and rwlock_t sleep on
    rt_mutex: another trade-off than on the kernels the conversion was
    written for; '' otherwise."""
    return " under PREEMPT_RT" if (f.get("preempt_of") or {}).get(v) == "rt" else ""


def _decided(verdict):
    """A verdict that answers (better, no harm, worse, harm, harm
    (failures), unsafe), not one still open (inconclusive, withheld,
    conflict, n/a)."""
    v = str(verdict)
    return not v.startswith((stats.INCONCLUSIVE, "withheld", "conflict", "n/a", "nan"))


def across_kernels(prim):
    """One sentence per compared pair of variant files whose rows span
    several kernel versions (campaign kernels = [...]): at how many
    primary cells every version gives the same verdict, where they
    differ (what each version says) and where no version decides.  []
    for a run of one kernel."""
    kernels = kernels_of(prim)
    if len(kernels) < 2:
        return []
    cells = {}
    for _, r in prim.iterrows():
        pair = (KERNEL_SUFFIX.sub("", r["baseline"]), KERNEL_SUFFIX.sub("", r["variant"]))
        cells.setdefault(pair, {}).setdefault(
            (int(r["cpus"]), str(r["point"])), {})[str(r["kernel"])] = r
    versions = " and ".join(f"Linux {k}" for k in kernels)
    out = []
    for (b, v), by_cell in cells.items():
        same, differ, open_ = [], [], []
        for (cpus, point), by_k in by_cell.items():
            where = f"{vcpus_s([cpus])} {point}"
            kinds = {k: str(r["verdict"]).split(" (")[0] for k, r in by_k.items()}
            if len(by_k) == len(kernels) and not any(map(_decided, kinds.values())):
                open_.append(where)
            elif len(by_k) == len(kernels) and len(set(kinds.values())) == 1:
                same.append(f"{where} {kinds[kernels[0]]}")
            else:
                differ.append(f"{where} (" + ", ".join(
                    f"{k}: {verdict_s(by_k[k])} {row_ratio(by_k[k])}" if k in by_k
                    else f"{k}: not measured" for k in kernels) + ")")
        n = len(by_cell)
        text = f"Across {versions}, {v} against {b}: "
        if len(same) == n:
            text += (f"the same verdict at every primary cell ({'; '.join(same)})")
        else:
            bits = [f"the same verdict at {len(same)} of {n} primary cells"
                    + (f" ({'; '.join(same)})" if same else "")]
            if differ:
                bits.append("a different one at " + "; ".join(differ))
            if open_:
                bits.append("undecided on every version at " + ", ".join(open_))
            text += "; ".join(bits)
        out.append(text + ".")
    return out


def answer_text(table, f, th):
    """The bottom line, generated from the primary rows of table (a
    verdict.table.VerdictTable): per compared pair a block of lines, the
    boots it lost first, then its head ('Answer for V against B (...):'),
    one line per primary cell in the table's order (vCPUs, then the
    campaign's points: cell_line), and a paragraph on the A/A control,
    the regime (the points) and the setup.  Blocks, ready to paste:
    answer.txt keeps them apart by a blank line."""
    prim = table.primary
    paras = unsafe_paras(prim, f)
    control_only = False
    if prim.empty and not paras and len(table):
        # A campaign of the baseline and its A/A control alone (a
        # calibration run): the control's primary rows are its answer.
        prim = table.controls()
        control_only = not prim.empty
    if prim.empty:
        return paras or [f"No answer: no comparison of the primary metric "
                         f"{table.primary_metric} has samples on both sides."]
    tally = f.get("tally") or {}
    groups = [((b, v), rows, lost_lines(b, v, tally,
                                        sorted({int(c) for c in rows["cpus"]})))
              for (b, v), rows in by_pair(prim)]
    # The pairs whose boots were lost first: the answer opens with them.
    for (b, v), rows, lost in sorted(groups, key=lambda g: not g[2]):
        if b in f["unsafe"] or v in f["unsafe"]:
            continue
        lines = ([f"Lost boots: {'; '.join(lost)}."] if lost else []) + [
            pair_head(b, v, rows, f, th, control_only, len(kernels_of(prim)) > 1)]
        over = set(f["over_cpus"])
        tw = twin_rows(prim, f, b, v)
        lines += [cell_line(r, over, tw.get((int(r["cpus"]), str(r["point"]))))
                  + decided_s(r, f) for _, r in rows.iterrows()]
        w = writers_sentence(table.writers(b, v), v)
        if w:
            lines.append(w)
        lines.append(" ".join(pair_notes(b, rows, f, th)))
        paras.append("\n".join(lines))
    if not control_only:
        paras += across_kernels(prim)
    return paras


def unsafe_paras(prim, f):
    """The answer of each compared pair with an unsafe side: its lockdep
    report instead of a performance verdict.  Every pair of the campaign
    and of prim, whether or not the unsafe side has any samples (a kernel
    that deadlocked in every boot has none)."""
    paras = []
    for b, v in dict.fromkeys(list(f["pairs"]) + pairs_of(prim)):
        bad = [x for x in (v, b) if x in f["unsafe"]]
        if bad:
            rep = f["unsafe"][bad[0]]
            paras.append(
                f"Answer for {v} against {b}: {safety.UNSAFE}. {bad[0]} "
                f"had a lockdep report (\"{rep['line'][:120]}\") in "
                f"{rep['boots']} boot{'s' if rep['boots'] > 1 else ''}, "
                f"first in {rep['boot']}: that kernel can deadlock, so no "
                f"performance verdict is given.")
    return paras


def pair_head(b, v, rows, f, th, control_only, several):
    """The head line of pair (b, v)'s answer: 'Answer for V against B'
    (or the A/A calibration's), its kernel (where the run has several)
    and regime, then the metrics, the ratio's CI and margin it is judged
    by, and report's overrides."""
    head = (f"A/A calibration only, {v} ({b} booted a second time) "
            f"against {b}" if control_only else f"Answer for {v} against {b}")
    if (b, v) in (f.get("twins") or {}).values():
        head += " (production kernels: no lockdep, no lock_stat)"
    if several:
        head += on_kernel(v, f)
    head += regime_s(v, f)
    ov = overrides_s(f)
    return (f"{head} ({metrics_s(rows, f)}; ratio "
            f"{v}/{b} [{pct_s(th.confidence)}% CI"
            + ("; under icount the boots' range, the variant's 1.5x"
               if (rows["clock"] == ICOUNT).any() else "") + "], margin "
            f"{100 * th.margin:g}%" + (f"; {ov}" if ov else "") + "):")


def pair_notes(b, rows, f, th):
    """The sentences after a pair's cell lines: its A/A control, the
    chance of a false claim among a vCPU count's wall-clock cells, the
    regime and setup, the host's speed and mixed --hosts machines."""
    ns = sorted(set(rows["n_var"]))
    n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
    nb = sorted(set(rows["n_base"]))
    pool = ""
    if nb != ns:  # the baseline's boots pooled with its A/A control's
        pool = (f", {b}'s pooled with its A/A control's ("
                + (f"{nb[0]}" if len(nb) == 1 else f"{nb[0]}-{nb[-1]}")
                + ")")
    pts = {r["point"]: row_point_label(r) for _, r in rows.iterrows()}
    out = []
    ncal, nh, bad = aa_status(rows)
    if ncal:
        out.append(f"The A/A control ({b} booted twice) is no harm "
                   f"in {nh} of {ncal} cells and differs from {b} "
                   f"(its interval excludes 1) in {bad}"
                   + (" (the comparison's CI widened by it there)"
                      if bad else "") + ".")
    wall = rows[rows["clock"] != ICOUNT] if "clock" in rows else rows
    k = int(wall.groupby("cpus").size().max()) if len(wall) else 0
    if k > 1:
        out.append(
            f"Each wall-clock cell is judged at {pct_s(th.confidence)}%: "
            f"where nothing changed, some of a vCPU count's {k} cells "
            f"claims a difference in at most "
            f"{100 * k * (1 - th.confidence):.3g}% of campaigns "
            f"(Bonferroni; analysis/README.md, \"The answer's rules\").")
    clock = clock_sentence(f)
    out.append(
        f"Regime: {regime(pts, f['think_ns'])}. Setup: QEMU "
        f"{f['accel']}, {vcpus_s(f['cpus'])} on "
        f"{f['cores']} host cores, n = {n} boots a side{pool}, interleaved"
        + (f"; {looks_s(f, th.confidence)}" if looks_s(f, th.confidence)
           else "") + "." + (f" {clock}" if clock else ""))
    hsp = host_speed_sentence(rows)
    if hsp:
        out.append(hsp)
    mixed = run_setup.mixed_hosts(f)
    if mixed:  # --hosts boots of one vCPU count on different machines
        out.append(mixed)
    return out


def short_answer(table, f, th):
    """At most two sentences per compared pair for the commit block: what
    the primary cells of table say, one clause per vCPU count
    (cpus_clause: each verdict with its points, a harm, worse or better
    with its ratio), and the boots each side lost."""
    prim = table.primary
    out = []
    tally = f.get("tally") or {}
    cpus = sorted({int(c) for c in prim["cpus"]}) if len(prim) else []
    # the pairs that lost boots first, as in the answer
    pairs = sorted(dict.fromkeys(list(f["pairs"])),
                   key=lambda p: not lost_lines(p[0], p[1], tally, cpus))
    for b, v in pairs:
        bad = [x for x in (v, b) if x in f["unsafe"]]
        if bad:
            out.append(f"{v} vs {b}: unsafe: {bad[0]} had a lockdep report; "
                       f"no performance verdict.")
            continue
        rows = prim[(prim["baseline"] == b) & (prim["variant"] == v)] \
            if len(prim) else prim
        if rows.empty:
            continue
        over = set(f.get("over_cpus") or ())
        said = "; ".join(cpus_clause(int(c), blk, over)
                         for c, blk in rows.groupby("cpus", sort=True))
        cells = f"{len(rows)} primary cell{'s' if len(rows) != 1 else ''}"
        twin = (b, v) in (f.get("twins") or {}).values()
        text = (("Production kernels (no lockdep, no lock_stat), " if twin
                 else "")
                + f"{v} vs {b}" + (on_kernel(v, f) if len(kernels_of(prim)) > 1 else "")
                + regime_s(v, f)
                + f" ({cells}, "
                f"{pct_s(th.confidence)}% CIs, margin {100 * th.margin:g}%): "
                f"{said}.")
        # the exact differences, relative (the answer has them in units)
        diffs = [f"{r['point']} {exact_difference(r).rsplit('(', 1)[-1][:-1]}"
                 for _, r in rows.iterrows() if twin and exact_difference(r)]
        if diffs:
            text += " Differences: " + ", ".join(diffs) + "."
        lost = lost_lines(b, v, tally, sorted({int(c) for c in rows["cpus"]}))
        if lost:
            text += " Lost boots: " + "; ".join(lost) + "."
        w = table.writers(b, v)
        if w is not None and len(w):
            text += " " + writers_short(w, v)
        out.append(text)
    return out + across_kernels(prim)
