#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check that every output of a reported run tells one answer: for every
primary cell of DIR/tidy/comparisons.csv (role `primary`), answer.txt,
summary.md, report.html, commit-msg.txt and the plots' data
(plots/plots.json "verdicts") carry the same verdict and the same ratio
with its interval (as the table writes them: 3 decimals, 4 under
icount), and no output gives a primary cell another verdict.

Usage: check_verdicts.py DIR

- answer.txt: each pair's block ("Answer for V against B ..."), one
  line per cell (analysis/render/answer.py cell_line);
- summary.md: the same cells as a table under each bold head;
- report.html: the answer's table, and the verdict table of the primary
  rows;
- commit-msg.txt: a row per cell (vCPUs, point, metric, ratio [CI],
  verdict), unless the block says how many rows it left to summary.md;
  its first paragraph names every vCPU count;
- plots/plots.json (when the plots were drawn): every primary cell in
  the "verdicts" of some plot, each entry the table's verdict and
  ratio (a writers' entry, role `writers`, its row's).

Prints one line per output checked; exit 1 with "FAIL: ..." at the
first disagreement.
"""
import csv
import html
import json
import os
import re
import sys

CELL = re.compile(r"^(\d+) vCPUs?(?: \(icount\))?(?: \(oversubscribed\))?, (\S+)$")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def ratio_s(r):
    """The ratio and its interval as every text writes them."""
    if r["ratio"] == "":
        return "-"
    d = 4 if r.get("clock") == "icount" else 3
    lo, hi = float(r["ratio_ci_lo"]), float(r["ratio_ci_hi"])
    return f"{float(r['ratio']):.{d}f} [{lo:.{d}f}, {hi:.{d}f}]"


def squash(text):
    return re.sub(r"\s+", "", text)


def load_primary(d, role="primary"):
    with open(os.path.join(d, "tidy", "comparisons.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["role"] == role]
    if not rows and role == "primary":
        fail("tidy/comparisons.csv has no primary row")
    if role != "primary":
        return {(r["baseline"], r["variant"], int(r["cpus"]), r["point"],
                 r["metric"]): r for r in rows}
    return {(r["baseline"], r["variant"], int(r["cpus"]), r["point"]): r
            for r in rows}


def cells_of_block(lines, pair_of_head):
    """{(b, v, cpus, point): (verdict, rest)} from answer lines: a head
    'Answer for V against B' sets the pair, '- WHERE: VERDICT; REST'
    lines are its cells."""
    out, pair = {}, None
    for line in lines:
        m = re.match(r"^(?:\*\*)?Answer for (\S+) against (\S+)", line)
        if m:
            pair = pair_of_head(m.group(2), m.group(1))
            continue
        if line.startswith("- ") and pair:
            where, _, rest = line[2:].partition(": ")
            verdict, _, what = rest.partition("; ")
            c = CELL.match(where)
            if c:
                out[pair + (int(c.group(1)), c.group(2))] = (verdict, what)
    return out


def same(name, key, r, verdict, what):
    if verdict != r["verdict"]:
        fail(f"{name}: {key}: verdict {verdict!r}, comparisons.csv says "
             f"{r['verdict']!r}")
    if squash(ratio_s(r)) not in squash(what):
        fail(f"{name}: {key}: {what!r} does not carry the ratio "
             f"{ratio_s(r)}")


def check_cells(name, found, prim):
    missing = [k for k in prim if k not in found]
    if missing:
        fail(f"{name}: no line for the primary cell {missing[0]}")
    for k, (verdict, what) in found.items():
        if k in prim:
            same(name, k, prim[k], verdict, what)
    print(f"ok: {name}: {len(prim)} primary cells, the same verdicts and ratios")


def md_cells(md):
    """summary.md's answer tables as answer lines."""
    lines = []
    for line in md.splitlines():
        if line.startswith("**"):
            lines.append(line.strip("*"))
            continue
        m = re.match(r"^\| (.+?) \| \*\*(.+?)\*\* \| (.+) \|$", line)
        if m:
            lines.append(f"- {m.group(1)}: {m.group(2)}; {m.group(3)}")
    return lines


def html_cells(page):
    """report.html's answer tables (table.answer) as answer lines."""
    lines = []
    for m in re.finditer(r'<p class="answer"><b>(.*?)</b></p>|<tr><td class="l">'
                         r'(.*?)</td><td class="l [^"]*"><b>(.*?)</b></td>'
                         r'<td class="l">(.*?)</td></tr>', page, re.S):
        if m.group(1) is not None:
            lines.append(html.unescape(m.group(1)))
        else:
            w, v, x = (html.unescape(m.group(i)) for i in (2, 3, 4))
            lines.append(f"- {w}: {v}; {x}")
    return lines


def html_table_rows(page, prim):
    """The primary verdict table of report.html (the first table after
    the answer's): each primary cell's verdict and ratio."""
    start = page.find("<h2>Verdict")
    if start < 0:
        fail("report.html: no verdict table")
    table = page[start:page.find("</table>", start)]
    found = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
        tds = [html.unescape(re.sub(r"<[^>]+>", "", x))
               for x in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        found[len(found)] = tds
    rows = list(prim.values())
    if len(found) != len(rows):
        fail(f"report.html: the verdict table has {len(found)} rows, "
             f"{len(rows)} primary cells")
    for (i, tds), r in zip(found.items(), rows):
        verdict = re.sub(r"\d+(,\d+)*$", "", tds[-1]).strip()  # footnotes
        if r["verdict"] not in (tds[-1], verdict) or squash(ratio_s(r)) \
                not in squash(" ".join(tds)):
            fail(f"report.html: verdict table row {i + 1} ({tds}) is not "
                 f"{r['verdict']!r} {ratio_s(r)}")
    print(f"ok: report.html verdict table: {len(rows)} rows in order")


def commit_cells(msg, prim):
    lines = msg.splitlines()
    first = " ".join(msg.split("\n\n")[0].split())
    for cpus in sorted({k[2] for k in prim}):
        if not re.search(rf"\b{cpus} vCPUs?\b", first):
            fail(f"commit-msg.txt: the first paragraph names no answer for "
                 f"{cpus} vCPU(s): {first!r}")
    long = [x for x in lines if len(x) > 72]
    if long:
        fail(f"commit-msg.txt: over 72 columns: {long[0]!r}")
    head = next((i for i, x in enumerate(lines) if x.startswith("vCPUs ")), None)
    gone = [re.match(r"^\(the (\d+) rows of the primary cells: summary\.md\)$", x)
            for x in lines]
    gone = [int(m.group(1)) for m in gone if m]
    if head is None and gone:
        # no room for a row: the block says where all of them are
        if gone != [len(prim)]:
            fail(f"commit-msg.txt: says {gone[0]} rows are in summary.md, "
                 f"{len(prim)} primary cells")
        print(f"ok: commit-msg.txt: no room for the table; the line names "
              f"all {len(prim)} rows")
        return
    if head is None:
        fail("commit-msg.txt: no table of the primary cells")
    found, left = {}, 0
    for line in lines[head + 1:]:
        if not line.strip():
            break
        m = re.match(r"^\(\+(\d+) more rows in summary\.md\)$", line)
        if m:
            left = int(m.group(1))
            continue
        cols = re.split(r"\s{2,}", line.strip())
        cpus = int(cols[0].split()[0])
        point = cols[1].split()[-1]
        who = cols[1].split()
        if len(who) > 1 and "/" in who[0]:
            v, b = who[0].split("/", 1)
        elif len(who) > 1:  # the variant: its pair's baseline
            v = who[0]
            b = next((k[0] for k in prim if k[1] == v), "?")
        else:  # one pair in the table: the first of the answer's
            b, v = next(iter(prim))[:2]
        ratio = next((c for c in cols if "[" in c), "-")
        found[(b, v, cpus, point)] = (cols[-1], ratio)
    for k, (verdict, ratio) in found.items():
        r = prim.get(k)
        if r is None:
            fail(f"commit-msg.txt: a row for {k}, not a primary cell")
        full = r["verdict"]
        if verdict not in (full, full.split(" (n≈")[0]) and not (
                verdict.endswith("…") and full.startswith(verdict[:-1])):
            fail(f"commit-msg.txt: {k}: verdict {verdict!r}, comparisons.csv "
                 f"says {full!r}")
        if squash(ratio) != squash(ratio_s(r)):
            fail(f"commit-msg.txt: {k}: ratio {ratio!r}, comparisons.csv "
                 f"says {ratio_s(r)}")
    if len(found) + left != len(prim):
        fail(f"commit-msg.txt: {len(found)} rows and {left} left to "
             f"summary.md, {len(prim)} primary cells")
    print(f"ok: commit-msg.txt: {len(found)} rows (+{left} in summary.md), "
          "every vCPU count in its first paragraph")
    # the rows by vCPUs then the campaign's point order (the table's)
    order = [k for k in prim if k in found]
    if list(found) != order:
        fail(f"commit-msg.txt: rows not in the table's order: {list(found)}")


def plots_cells(d, prim, writers):
    path = os.path.join(d, "plots", "plots.json")
    if not os.path.exists(path):
        print("ok: no plots drawn")
        return
    with open(path) as f:
        plots = json.load(f)["plots"]
    seen = set()
    for p in plots:
        for e in p.get("verdicts") or []:
            k = (e["baseline"], e["variant"], int(e["cpus"]), e["point"])
            if e.get("role", "primary") == "writers":
                r = writers.get(k + (e["metric"],))
                if r is None or (e["verdict"], e["ratio"]) != (r["verdict"],
                                                               r["ratio"]):
                    fail(f"plots.json {p['name']}: the writers' {k} is not "
                         f"comparisons.csv's")
                continue
            r = prim.get(k)
            if r is None:
                fail(f"plots.json {p['name']}: {k} is not a primary cell")
            for c in ("metric", "verdict", "ratio", "ratio_ci_lo", "ratio_ci_hi"):
                if str(e[c]) != r[c]:
                    fail(f"plots.json {p['name']}: {k}: {c} {e[c]!r}, "
                         f"comparisons.csv says {r[c]!r}")
            seen.add(k)
    missing = [k for k in prim if k not in seen]
    if missing:
        fail(f"plots.json: no plot shows the primary cell {missing[0]}")
    print("ok: plots.json: every primary cell shown, as the table says")


def main(argv):
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    d = argv[0]
    prim = load_primary(d)
    pairs = {(k[0], k[1]) for k in prim}

    def pair_of(b, v):
        return (b, v) if (b, v) in pairs else (b, v)
    with open(os.path.join(d, "answer.txt"), encoding="utf-8") as f:
        check_cells("answer.txt", cells_of_block(f.read().splitlines(), pair_of),
                    prim)
    with open(os.path.join(d, "summary.md"), encoding="utf-8") as f:
        check_cells("summary.md", cells_of_block(md_cells(f.read()), pair_of), prim)
    with open(os.path.join(d, "report.html"), encoding="utf-8") as f:
        page = f.read()
    check_cells("report.html", cells_of_block(html_cells(page), pair_of), prim)
    html_table_rows(page, prim)
    with open(os.path.join(d, "commit-msg.txt"), encoding="utf-8") as f:
        commit_cells(f.read(), prim)
    plots_cells(d, prim, load_primary(d, "writers"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
