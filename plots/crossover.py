# SPDX-License-Identifier: GPL-2.0
"""The crossover heat map (plots/gnuplot/crossover.gp): where each lock pays, the
primary metric's ratio and verdict from tidy/comparisons.csv on a grid of
list lengths x shares of reads, for a campaign whose points sweep one.
"""

from analysis.metrics import direction
from plots.common import PlotsError, to_int
from plots.select import (NotApplicable, Plot, Skip, answer_entry, answer_rows,
                          cpus_text, plain)


GRID_KEYS = ("mailboxes", "read_pct", "think_ns")
#: better: "higher" or "lower", the way the tile's metric is better (the
#: colour: teal where the variant is better, whichever way that is)
CROSS_COLS = ["baseline", "variant", "cpus", "point", "read_pct", "mailboxes",
              "metric", "better", "ratio", "ratio_ci_lo", "ratio_ci_hi",
              "verdict"]
CB_STEPS = (1.1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100)


def grid_value(point, key):
    """A point's mailboxes, read_pct or think_ns (0 when the manifest,
    from before think_ns, has none)."""
    v = point.get(key)
    if key == "think_ns" and v in (None, ""):
        return 0
    return to_int(v, f"manifest.json point {point['id']} {key}")


def think_text(ns):
    return ("tight loop (think_ns 0)" if not ns
            else f"{ns / 1000:g} us pause between ops (think_ns {ns})")


def tile_lines(ratio, verdict):
    """A tile's text: the ratio (3 decimals, as report.html's table), the
    verdict, and the verdict's detail on a line of its own ('inconclusive',
    '(n≈23)')."""
    lines = [f"{float(ratio):.3f}" if ratio != "" else "no ratio"]
    verdict = verdict.strip() or "no verdict"
    cut = verdict.find(" (")
    lines += [verdict] if cut < 0 else [verdict[:cut], verdict[cut + 1:]]
    return lines


def crossover(sel, warn):
    """The crossover heat map: the primary metric's ratio and verdict of
    each compared pair (tidy/comparisons.csv), a tile per
    mailboxes x read_pct, a panel per pair x vCPU count x think_ns (x
    miss_pct when the campaign varies it).  Only for a campaign whose
    points vary over at least two of mailboxes, read_pct and think_ns."""
    run = sel.run
    rows = _primary_rows(sel)
    over = set(run.oversubscribed())
    pts = {p["id"]: p for p in run.points}
    misses = sorted({int(pts[r["point"]].get("miss_pct") or 0) for r in rows})
    pairs = list(dict.fromkeys((r["baseline"], r["variant"]) for r in rows))
    cpus = sorted({int(r["cpus"]) for r in rows})
    thinks = sorted({grid_value(pts[r["point"]], "think_ns") for r in rows})
    mbs = sorted({grid_value(pts[r["point"]], "mailboxes") for r in rows})
    rps = sorted({grid_value(pts[r["point"]], "read_pct") for r in rows})
    panels = [(b, v, c, m, t) for b, v in pairs for c in cpus for m in misses
              for t in thinks]
    var = {"variants": " ".join(run.variants),
           "oversub": " ".join(str(c) for c in cpus if c in over),
           "footer": run.setup_line(set(cpus)),
           "npan": len(panels), "ncols": len(thinks),
           "nrows": len(panels) // len(thinks),
           "mblist": " ".join(map(str, mbs)), "rplist": " ".join(map(str, rps))}
    where = _panels(run, rows, panels, over, len(misses) > 1, len(pairs) > 1, var)
    drawn = _tiles(rows, pts, where, mbs, rps, var, warn)
    ms = _colour_scale(drawn, pairs, var)
    pw = max(260, 110 * len(mbs))
    ph = max(200, 62 * len(rps))
    b0, v0 = pairs[0]
    who = (f"{v0}/{b0}" if len(pairs) == 1 else "variant/baseline")
    return Plot("crossover",
                (max(1000, len(thinks) * (pw + 100) + 220), 170 + var["nrows"] * (ph + 100)),
                "Crossover: where each lock pays",
                f"The answer of each cell: the ratio {who} of the cell's "
                f"primary metric ({', '.join(ms)}: each panel's title names "
                f"its own) and its verdict, as the answer gives them "
                f"(tidy/comparisons.csv, the primary rows; written in each "
                "tile), for each list length (mailboxes) and share of "
                "reads, a panel per vCPU count and pause between operations "
                "(think_ns), coloured on a log scale centred on 1: teal "
                "where the variant is better, brown where it is worse "
                "(whichever way its metric is better: a ratio of a metric "
                "better lower is turned round for its colour), white where they "
                "match. Look for the border between teal and brown: on one "
                "side the spinlock's cheaper acquisition pays, on the other "
                "the rwlock's readers sharing the lock do, and a pause "
                "between operations moves it.",
                var, [sel.write("crossover", drawn, CROSS_COLS)],
                [answer_entry(r) for r in drawn])


def _primary_rows(sel):
    """The answer's rows to draw: each compared cell's primary row, on
    the metric of its regime, with the way that metric is better; in
    plot order.  NotApplicable when the points make no grid."""
    run = sel.run
    if any(p.get("workload") for p in run.points):
        # guest/inside/lockload's points (guest/JOB.md) have no mailboxes or read_pct
        raise NotApplicable("the campaign's points run a lockload workload: "
                            "no mailboxes x read_pct grid")
    vary = [k for k in GRID_KEYS if len({grid_value(p, k) for p in run.points}) > 1]
    if len(vary) < 2:
        raise NotApplicable("the campaign's points vary over "
                            f"{' and '.join(vary) or 'none'} of {', '.join(GRID_KEYS)}, "
                            "not two")
    rows = [dict(r, better=direction(r["metric"]) or "higher")
            for r in answer_rows(run)
            if sel.known(r) and r["baseline"] in sel.vorder
            and (r.get("role") or "").strip() != "control"]
    if not rows:
        raise Skip("no primary row in tidy/comparisons.csv")
    for r in rows:
        r["cpus"] = str(to_int(r["cpus"], "comparisons.csv cpus"))
        if r["ratio"] != "":
            try:
                if float(r["ratio"]) <= 0:
                    raise ValueError
            except ValueError:
                raise PlotsError(f"comparisons.csv: ratio {r['ratio']!r} is not a "
                                 "positive number") from None
    rows.sort(key=sel.key("variant", "baseline", "cpus", "point"))
    return rows


def _panels(run, rows, panels, over, by_miss, by_pair, var):
    """Each panel's points, vCPU count, pair and title into VAR (pp1,
    pc1, pb1, pv1, ptitle1, ...; empty: the panels no row lands on);
    returns {(baseline, variant, cpus, point): its panel}."""
    where, empty = {}, []
    for j, (b, v, c, m, t) in enumerate(panels, 1):
        ids = [p["id"] for p in run.points if grid_value(p, "think_ns") == t
               and int(p.get("miss_pct") or 0) == m]
        var[f"pp{j}"], var[f"pc{j}"] = " ".join(ids), str(c)
        var[f"pb{j}"], var[f"pv{j}"] = b, v
        title = f"{cpus_text(c, over)}, {think_text(t)}"
        ms = list(dict.fromkeys(r["metric"] for r in rows if r["cpus"] == str(c)
                                and (r["baseline"], r["variant"]) == (b, v)
                                and r["point"] in ids))
        if ms and len({r["metric"] for r in rows}) > 1:
            title += ": " + ", ".join(ms)
        if by_miss:
            title += f", {m}% misses"
        if by_pair:
            title = f"{v} vs {b}: {title}"
        var[f"ptitle{j}"] = title
        have = False
        for pid in ids:
            where[(b, v, str(c), pid)] = j
        for r in rows:
            have |= where.get((r["baseline"], r["variant"], r["cpus"], r["point"])) == j
        if not have:
            empty.append(str(j))
    var["empty"] = " ".join(empty)
    return where


def _tiles(rows, pts, where, mbs, rps, var, warn):
    """Each row's tile (panel, column, row) and text into VAR (tl1, ta1,
    tb1, ..., ntl, tlen); returns the rows drawn.  Two points on one
    tile (the same mailboxes, read_pct, think_ns and miss_pct) would lie
    on each other: the first is drawn."""
    seen, drawn, tlen = set(), [], 1
    for r in rows:
        p = pts[r["point"]]
        j = where[(r["baseline"], r["variant"], r["cpus"], r["point"])]
        xi = mbs.index(grid_value(p, "mailboxes")) + 1
        yi = rps.index(grid_value(p, "read_pct")) + 1
        if (j, xi, yi) in seen:
            warn(f"crossover plot: {r['point']} is on the tile of another point "
                 "(same mailboxes, read_pct, think_ns, miss_pct): left out")
            continue
        seen.add((j, xi, yi))
        drawn.append(r)
        i = len(drawn)
        lines = tile_lines(r["ratio"], r["verdict"])
        var[f"tl{i}"] = f"{j} {xi} {yi}"
        for k, text in zip("abc", lines):
            var[f"t{k}{i}"] = text
        tlen = max([tlen] + [len(x) for x in lines])
    var["ntl"], var["tlen"] = len(drawn), tlen
    return drawn


def _colour_scale(drawn, pairs, var):
    """The colour scale into VAR (cbmax, cbtics, cblab): symmetric about
    1 on a log scale, to the next step past the largest ratio either way
    (a choice of axis).  Returns the metrics drawn."""
    far = max([1.0] + [max(float(r["ratio"]), 1 / float(r["ratio"]))
                       for r in drawn if r["ratio"] != ""])
    cbmax = next((x for x in CB_STEPS if x >= far), CB_STEPS[-1])
    steps = [x for x in CB_STEPS if x <= cbmax]
    steps = steps[-2:] if len(steps) > 2 else steps
    var["cbmax"] = plain(cbmax)
    var["cbtics"] = " ".join([f"{1 / x:.3g}" for x in reversed(steps)] + ["1"] +
                             [f"{x:g}" for x in steps])
    ms = list(dict.fromkeys(r["metric"] for r in drawn))
    b0, v0 = pairs[0]
    who = (f"{v0} / {b0}" if len(pairs) == 1 else "variant / baseline")
    var["cblab"] = (f"{who} (log scale)" if all(direction(m) != "lower" for m in ms)
                    else f"{who}, better up (log scale)")
    return ms
