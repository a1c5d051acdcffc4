# SPDX-License-Identifier: GPL-2.0
"""One answer, told the same way everywhere (issue #41): on a run shaped
like the default campaign (tests/unit/synth.py make_default_run: 1 vCPU
under icount, 2 pinned vCPUs on the wall clock, four points, the A/A
control), `./run.sh report` and the plots give every primary cell the
same verdict and ratio in answer.txt, summary.md, report.html,
commit-msg.txt and plots.json (tests/check_verdicts.py), the figures
label each cell with the answer's verdict on its own metric, and the
commit block reads by vCPUs then point.  Negative controls: the checker
fails on an output changed by one verdict or one ratio digit."""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from analysis import report
from plots import make_plots, pages
from tests.unit import synth
from tests.unit.helpers import run_main

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "..", "check_verdicts.py")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check(d):
    return subprocess.run([sys.executable, CHECK, d], capture_output=True,
                          text=True)


class OneAnswer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="one-answer-")
        cls.dir = os.path.join(cls.tmp, "default-20260101T000000Z")
        synth.make_default_run(cls.dir)
        status, _out, err = run_main(report.main, [cls.dir, "--quiet"])
        assert status == 0, err
        make_plots.make_plots(cls.dir, warn=lambda m: None)
        pages.write_reports(cls.dir)
        with open(os.path.join(cls.dir, "tidy", "comparisons.csv")) as f:
            cls.prim = [r for r in csv.DictReader(f) if r["role"] == "primary"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def copy(self):
        d = tempfile.mkdtemp(prefix="one-answer-copy-", dir=self.tmp)
        shutil.rmtree(d)
        shutil.copytree(self.dir, d)
        return d

    def test_every_output_tells_the_same_answer(self):
        p = check(self.dir)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.count("ok: "), 6, p.stdout)

    def test_the_cells_are_each_on_their_regimes_metric(self):
        got = {(int(r["cpus"]), r["point"]): r["metric"] for r in self.prim}
        self.assertEqual(got[(1, "read95")], "insn_per_op")
        self.assertEqual(got[(1, "read95-paced")], "lookup_lat_mean_ns")
        self.assertEqual(got[(2, "read95")], "throughput_run")
        self.assertEqual(got[(2, "read95-paced")], "lookup_lat_median_ns")
        # the known effects: 2 vCPUs harmed on the tight loops with lists
        v = {k: r["verdict"] for k, r in zip(got, self.prim)}
        self.assertEqual(v[(2, "read95")], "harm")
        self.assertEqual(v[(2, "read95-long")], "harm")
        self.assertEqual(v[(1, "read95")], "no harm")

    def test_the_writers_figure_is_their_answer(self):
        with open(os.path.join(self.dir, "plots", "plots.json")) as f:
            plots = {p["name"]: p for p in json.load(f)["plots"]}
        got = {(e["point"], e["verdict"]) for e in plots["starvation"]["verdicts"]}
        self.assertIn(("read95-long", "better"), got)
        self.assertEqual({e["role"] for e in plots["starvation"]["verdicts"]},
                         {"writers"})
        self.assertTrue(plots["starvation"]["title"].startswith("Writers"))

    def test_crossover_tiles_are_the_answer(self):
        with open(os.path.join(self.dir, "plots", "data", "crossover.csv")) as f:
            tiles = list(csv.DictReader(f))
        self.assertEqual(len(tiles), len(self.prim))
        want = {(r["cpus"], r["point"]): (r["metric"], r["ratio"], r["verdict"])
                for r in self.prim}
        for t in tiles:
            self.assertEqual((t["metric"], t["ratio"], t["verdict"]),
                             want[(t["cpus"], t["point"])])
        # lower is better for insn_per_op: the colour inverts its ratio
        self.assertEqual({t["better"] for t in tiles if t["metric"] ==
                          "insn_per_op"}, {"lower"})

    def test_figure_labels_name_a_metric_not_drawn(self):
        cmds = read(os.path.join(self.dir, "plots", "gnuplot-commands.txt"))
        line = next(x for x in cmds.splitlines() if "throughput.gp" in x)
        self.assertIn("after, insn_per_op: no harm", line)
        self.assertIn("after: harm", line)
        lat = next(x for x in cmds.splitlines() if "latency.gp" in x)
        # the paced point's answer: the median at 2 vCPUs, the mean under icount
        self.assertIn("read95-paced (95% reads), 1 vCPU: mean, 2: median", lat)
        with open(os.path.join(self.dir, "plots", "data", "latency.csv")) as f:
            rows = list(csv.DictReader(f))
        stats = {(r["cpus"], r["metric"].split("_")[2]) for r in rows
                 if r["point"] == "read95-paced"}
        self.assertEqual(stats, {("1", "mean"), ("2", "median")})

    def test_commit_block_by_vcpus_then_point(self):
        msg = read(os.path.join(self.dir, "commit-msg.txt"))
        rows = [x for x in msg.splitlines() if re.match(r"^[12] ", x)
                and len(re.split(r"\s{2,}", x)) >= 4]
        keys = [(x.split()[0], re.split(r"\s{2,}", x)[1]) for x in rows]
        points = [p["id"] for p in synth.DEFAULT_POINTS]
        self.assertEqual(keys, [(c, p) for c in ("1", "2") for p in points])
        first = msg.split("\n\n")[0]
        self.assertIn("1 vCPU (icount): no harm at all 4 points", " ".join(
            first.split()))
        self.assertIn("2 vCPUs: harm at read95", " ".join(first.split()))
        self.assertIn("Kernels: lockdep + lock_stat builds", msg)
        self.assertIn("lock_stat cross-check: exact in all", msg)

    def test_report_opens_with_a_table_of_the_cells(self):
        page = read(os.path.join(self.dir, "report.html"))
        self.assertLess(page.index('<table class="answer">'),
                        page.index("<h2>Verdicts"))
        self.assertEqual(page.count('<td class="l"><b>') +
                         len(re.findall(r'<td class="l [a-z]+"><b>', page)),
                         len(self.prim))
        self.assertNotIn("Verdict: throughput_ops_s", page)
        # icount rows show the means their ratio is of
        self.assertIn("insn/op (mean)", page)

    def test_checker_fails_on_one_changed_verdict(self):
        d = self.copy()
        path = os.path.join(d, "plots", "plots.json")
        with open(path) as f:
            j = json.load(f)
        e = next(e for p in j["plots"] for e in p["verdicts"]
                 if e["verdict"] == "harm")
        e["verdict"] = "no harm"
        with open(path, "w") as f:
            json.dump(j, f)
        p = check(d)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("plots.json", p.stdout)

    def test_checker_fails_on_one_changed_ratio(self):
        d = self.copy()
        path = os.path.join(d, "commit-msg.txt")
        text = read(path)
        r = next(r for r in self.prim if r["verdict"] == "harm")
        old = f"{float(r['ratio']):.3f}"
        new = f"{float(r['ratio']) + 0.001:.3f}"
        row = next(x for x in text.splitlines()
                   if x.startswith(r["cpus"] + " ") and old in x)
        with open(path, "w") as f:
            f.write(text.replace(row, row.replace(old, new)))
        p = check(d)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("commit-msg.txt", p.stdout)

    def test_checker_fails_on_a_plot_of_another_metric(self):
        # what the issue measured: the crossover map of raw throughput
        d = self.copy()
        path = os.path.join(d, "plots", "plots.json")
        with open(path) as f:
            j = json.load(f)
        cross = next(p for p in j["plots"] if p["name"] == "crossover")
        cross["verdicts"][-2]["metric"] = "throughput_ops_s"
        with open(path, "w") as f:
            json.dump(j, f)
        self.assertEqual(check(d).returncode, 1)


class Writers(unittest.TestCase):
    """The writers' answer (role `writers`: write latency p99 and max at
    the points that mix reads and writes, 2 vCPUs or more): the spinlock
    kernel's writers wait less where reads dominate (synth's
    DEFAULT_WRITERS) and the answer says it helps them; with the effect
    turned round, that it hurts them."""

    def run_with(self, writers):
        tmp = tempfile.mkdtemp(prefix="writers-")
        self.addCleanup(shutil.rmtree, tmp)
        d = os.path.join(tmp, "run")
        synth.make_default_run(d, writers=writers)
        status, _out, err = run_main(report.main, [d, "--quiet"])
        self.assertEqual(status, 0, err)
        with open(os.path.join(d, "tidy", "comparisons.csv")) as f:
            rows = [r for r in csv.DictReader(f) if r["role"] == "writers"]
        return d, rows, read(os.path.join(d, "answer.txt")), \
            read(os.path.join(d, "commit-msg.txt"))

    def test_helps_writers(self):
        d, rows, answer, msg = self.run_with(None)
        self.assertEqual({(r["cpus"], r["metric"]) for r in rows},
                         {("2", "write_lat_p99_ns"), ("2", "write_lat_max_ns")})
        self.assertEqual(len(rows), 8)  # 4 mixed points x p99, max
        v = {(r["point"], r["metric"]): r["verdict"] for r in rows}
        self.assertEqual(v[("read95-long", "write_lat_p99_ns")], "better")
        self.assertIn("after helps writers: p99 better at read95 (", answer)
        self.assertIn("Writers (write latency p99, max): after helps writers "
                      "(better at read95, read95-long).", " ".join(msg.split()))
        # the writers' rows are a named answer, not in Holm's table
        self.assertTrue(all(r["verdict"] != "inconclusive (Holm)" for r in rows))

    def test_hurts_writers(self):
        _d, rows, answer, msg = self.run_with({(2, "read95"): 2.0,
                                               (2, "read95-long"): 2.0})
        self.assertIn("harm", {r["verdict"] for r in rows})
        self.assertIn("after hurts writers", answer)
        self.assertIn("after hurts writers (worse or harm at read95, "
                      "read95-long)", " ".join(msg.split()))


class ProductionTwins(unittest.TestCase):
    """The production kernels beside the lockdep ones (issue #41 item
    5): a run with before-plain and after-plain (no lockdep, no
    lock_stat) at 1 vCPU only gives their difference beside the lockdep
    pair's in the answer and in the commit block, and no row at 2
    vCPUs, where they did not boot."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="twins-")
        cls.dir = os.path.join(cls.tmp, "run")
        synth.make_default_run(cls.dir, plain=True)
        status, _out, err = run_main(report.main, [cls.dir, "--quiet"])
        assert status == 0, err
        pages.write_reports(cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_both_differences_in_the_answer(self):
        answer = read(os.path.join(self.dir, "answer.txt"))
        line = next(x for x in answer.splitlines()
                    if x.startswith("- 1 vCPU (icount), read95:"))
        # the lockdep kernels' +0.37% and the production kernels' +0.94%
        self.assertIn("(+0.37%)", line)
        self.assertIn("production kernels (after-plain vs before-plain): "
                      "+8.1 insn per op (+0.94%), no harm", line)
        self.assertIn("Answer for after-plain against before-plain (production "
                      "kernels: no lockdep, no lock_stat)", answer)

    def test_no_row_where_the_twins_did_not_boot(self):
        with open(os.path.join(self.dir, "tidy", "comparisons.csv")) as f:
            rows = [r for r in csv.DictReader(f)
                    if r["variant"] == "after-plain"]
        self.assertTrue(rows)
        self.assertEqual({r["cpus"] for r in rows}, {"1"})

    def test_the_commit_block_says_both(self):
        msg = " ".join(read(os.path.join(self.dir, "commit-msg.txt")).split())
        self.assertIn("Production kernels (no lockdep, no lock_stat), "
                      "after-plain vs before-plain", msg)
        self.assertIn("Differences: read95 +0.94%", msg)
        # the rows that do not fit (how many: check_verdicts counts them)
        self.assertRegex(msg, r"\(\+\d+ more rows in summary\.md\)")
        p = check(self.dir)
        self.assertEqual(p.returncode, 0, p.stdout)


if __name__ == "__main__":
    unittest.main()
