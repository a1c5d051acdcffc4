# SPDX-License-Identifier: GPL-2.0
"""The lock_stat lines of commit-msg.txt (issue #30): for the campaign's
lock class at each vCPU count of the primary cells, contentions per 1000
acquisitions and wait per acquisition, baseline -> variant, medians over
boots of each boot's sum over the class's rows (-R, -W, plain) and the
primary points.  The expected numbers are computed here from
tidy/lockstat.csv, not from samples.csv that the block reads."""

import json
import os
import re
import shutil
import statistics
import tempfile
import unittest

import pandas as pd

from analysis import analyze, report
from analysis.render import commit_msg
from analysis.verdict.table import VerdictTable
from tests.unit import synth
from tests.unit.helpers import read_csv, run_main

# a row in any of its forms (commit_msg.lock_lines: the first that fits)
ROW = re.compile(r"^  (\d+) vCPUs?( icount)?: (?:contentions )?(\S+) -> "
                 r"(\S+) (?:per 1k acq|contentions/1k acq|cont/1k acq), "
                 r"(?:wait )?(\S+) -> (\S+) (ns|us|ms|insn|k insn)"
                 r"(?:/| per )acq$")
NS = {"ns": 1, "us": 1e3, "ms": 1e6, "insn": 1, "k insn": 1e3}


def make(path, campaign=None, fail=(), **kw):
    """A synthetic run (synth.make_run(**kw)), its manifest's campaign
    updated with `campaign`, the points in `fail` ((boot, point))
    ended FAILURE; then analyze and report.  Returns commit-msg.txt."""
    synth.make_run(path, **kw)
    if campaign:
        mf = os.path.join(path, "manifest.json")
        with open(mf) as f:
            man = json.load(f)
        man["campaign"].update(campaign)
        with open(mf, "w") as f:
            json.dump(man, f)
    for boot, point in fail:
        synth.fail_point(path, boot, point, "registry")
    status, _out, err = run_main(analyze.main, [path, "--quiet"])
    assert status == 0, err
    status, _out, err = run_main(report.main, [path, "--quiet"])
    assert status == 0, err
    with open(os.path.join(path, "commit-msg.txt")) as f:
        return f.read()


def lock_block(msg):
    """The lock_stat lines of a block: its head and the rows under it."""
    lines = msg.splitlines()
    at = [i for i, x in enumerate(lines) if x.startswith("lock_stat ")]
    if not at:
        return []
    out = [lines[at[0]]]
    for x in lines[at[0] + 1:]:
        if not x.startswith("  ") or x.startswith("  ./run.sh"):
            break
        out.append(x)
    return out


def rows_of(block):
    """{cpus: (cont_base, cont_var, wait_base_ns, wait_var_ns)}."""
    got = {}
    for x in block[1:]:
        m = ROW.match(x)
        if m:
            k = NS[m.group(7)]
            got[int(m.group(1))] = (float(m.group(3)), float(m.group(4)),
                                    float(m.group(5)) * k,
                                    float(m.group(6)) * k)
    return got


def expected(path, variant, cpus, points, lock_class="mboxes_lock",
             kinds=("R", "W", "")):
    """(n, median contentions per 1k acq, median wait ns per acq) of the
    boots of variant at cpus, from tidy/lockstat.csv: per boot, the rows
    of `kinds` at `points` summed (boots whose points all ended ok)."""
    bad = {(r["cell"], r["point"]) for r in read_csv(
        os.path.join(path, "tidy", "outcomes.csv")) if r["outcome"] != "ok"}
    per = {}
    for r in read_csv(os.path.join(path, "tidy", "lockstat.csv")):
        if (r["variant"] != variant or int(r["cpus"]) != cpus
                or r["class"] != lock_class or r["point"] not in points
                or r["kind"] not in kinds
                or (r["cell"], r["point"]) in bad):
            continue
        c = per.setdefault(r["cell"], [0, 0.0, 0, set()])
        c[0] += int(r["contentions"])
        c[1] += float(r["waittime_total_us"])
        c[2] += int(r["acquisitions"])
        c[3].add(r["point"])
    per = [c for c in per.values() if c[3] == set(points)]
    return (len(per), statistics.median(1e3 * c[0] / c[2] for c in per),
            statistics.median(1e3 * c[1] / c[2] for c in per))


class CommitLockStat(unittest.TestCase):
    """before (rwlock, -R/-W rows) vs after (spinlock, one row), 1 and 2
    vCPUs, 2 points, 6 boots a side."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="commit-lockstat-")
        cls.dir = os.path.join(cls.tmp, "run")
        cls.msg = make(cls.dir, effects={"p1": 0.9}, cpus=(1, 2))
        cls.block = lock_block(cls.msg)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_the_block_keeps_its_limits(self):
        lines = self.msg.splitlines()
        self.assertLessEqual(len(lines), commit_msg.MAX_LINES)
        for x in lines:
            self.assertLessEqual(len(x), commit_msg.WIDTH, x)
        self.assertTrue(self.block, self.msg)
        self.assertLessEqual(len(self.block), commit_msg.LOCK_MAX_LINES)
        # above the A/A line and the setup, below the table
        self.assertLess(self.msg.index("vCPUs  "),
                        self.msg.index("lock_stat "))
        self.assertLess(self.msg.index("lock_stat "),
                        self.msg.index("mbox_bench under QEMU"))

    def test_head_says_what_the_numbers_are(self):
        head = self.block[0]
        self.assertTrue(head.startswith("lock_stat mboxes_lock, "), head)
        self.assertIn("median of 6 boots", head)
        self.assertIn("-R+-W", head)  # the rwlock side: both rows summed
        self.assertIn("2 points", head)  # both primary points, per boot
        self.assertTrue(head.endswith(":"), head)

    def test_numbers_are_medians_of_the_boots_sums(self):
        rows = rows_of(self.block)
        self.assertEqual(sorted(rows), [1, 2], self.block)
        for cpus, got in rows.items():
            nb, cb, wb = expected(self.dir, "before", cpus, {"p1", "p2"})
            nv, cv, wv = expected(self.dir, "after", cpus, {"p1", "p2"})
            self.assertEqual((nb, nv), (6, 6))
            for shown, want in zip(got, (cb, cv, wb, wv)):
                # 3 significant digits
                self.assertAlmostEqual(shown, want, delta=0.006 * want)

    def test_reads_alone_would_not_match(self):
        # the check above can tell a sum of -R alone from -R + -W
        _n, cb_r, wb_r = expected(self.dir, "before", 2, {"p1", "p2"},
                                  kinds=("R",))
        cb, _cv, wb, _wv = rows_of(self.block)[2]
        self.assertGreater(abs(cb - cb_r), 0.01 * cb)
        self.assertGreater(abs(wb - wb_r), 0.01 * wb)


class Variations(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commit-lockstat-")
        self.dir = os.path.join(self.tmp, "run")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_no_lock_stat_no_line(self):
        # kernels built without CONFIG_LOCK_STAT: nothing, not zeros
        msg = make(self.dir, variants=[
            {"name": "before", "lock": "none"},
            {"name": "after", "lock": "none"}])
        self.assertNotIn("lock_stat", msg)
        self.assertNotIn("contentions", msg)

    def test_one_side_without_lock_stat_no_line(self):
        msg = make(self.dir, variants=[
            {"name": "before", "lock": "rw"},
            {"name": "after", "lock": "none"}])
        self.assertNotIn("contentions", msg)

    def test_spinlocks_say_no_rows_summed(self):
        msg = make(self.dir, variants=[
            {"name": "before", "lock": "spin"},
            {"name": "after", "lock": "spin", "effects": {"p1": 0.9}}])
        block = lock_block(msg)
        self.assertTrue(block, msg)
        self.assertNotIn("-R", block[0])
        self.assertIn("median of 6 boots", block[0])

    def test_a_failed_point_drops_its_boot(self):
        msg = make(self.dir, fail=[("r02-after-c2", "p1")])
        block = lock_block(msg)
        self.assertIn("medians of 5-6 boots", block[0])
        nv, cv, wv = expected(self.dir, "after", 2, {"p1", "p2"})
        self.assertEqual(nv, 5)
        got = rows_of(block)[2]
        self.assertAlmostEqual(got[1], cv, delta=0.006 * cv)
        self.assertAlmostEqual(got[3], wv, delta=0.006 * wv)

    def test_one_primary_point_is_that_points_median(self):
        # a single primary point: the boot's rate is the point's, the
        # median the one tidy/medians.csv has
        msg = make(self.dir, campaign={"primary_points": ["p2"]})
        block = lock_block(msg)
        self.assertNotIn("points", block[0])
        med = {r["variant"] + r["metric"]: float(r["median"])
               for r in read_csv(os.path.join(self.dir, "tidy",
                                              "medians.csv"))
               if r["point"] == "p2" and r["metric"] in (
                   "lock_contentions_per_kacq", "lock_waittime_per_acq_ns")}
        got = rows_of(block)[2]
        for shown, key in zip(got, (
                "beforelock_contentions_per_kacq",
                "afterlock_contentions_per_kacq",
                "beforelock_waittime_per_acq_ns",
                "afterlock_waittime_per_acq_ns")):
            self.assertAlmostEqual(shown, med[key], delta=0.006 * med[key])

    def test_the_campaigns_lock_class(self):
        msg = make(self.dir, campaign={"lock_class": "&rq->__lock"})
        block = lock_block(msg)
        self.assertTrue(block[0].startswith("lock_stat &rq->__lock, "),
                        block)
        self.assertNotIn("-R", block[0])  # one plain row on both sides
        nb, cb, wb = expected(self.dir, "before", 2, {"p1", "p2"},
                              lock_class="&rq->__lock")
        got = rows_of(block)[2]
        self.assertAlmostEqual(got[0], cb, delta=0.006 * cb)
        self.assertAlmostEqual(got[2], wb, delta=0.006 * wb)


def rate(cpus, cont=(10.0, 20.0), wait=(500.0, 2500.0), clock="wall",
         b="before", v="after", n=(8, 8), points=2):
    return dict(baseline=b, variant=v, cpus=cpus, clock=clock,
                points=points, n_base=n[0], n_var=n[1], cont_base=cont[0],
                cont_var=cont[1], wait_base=wait[0], wait_var=wait[1])


class LockRates(unittest.TestCase):
    """lock_rates on a hand-made samples table: per boot the ratio of the
    sums over the primary points, then the median over boots."""

    @staticmethod
    def samples(boots):
        """boots: {(variant, boot): {point: (cont, wait_us, acq)}}."""
        rows = []
        for (v, boot), pts in boots.items():
            for p, vals in pts.items():
                for m, x in zip(commit_msg.LOCK_TOTALS, vals):
                    rows.append(dict(variant=v, cpus=2, cell=boot, point=p,
                                     metric=m, value=float(x)))
        return pd.DataFrame(rows)

    def comps(self, points=("p1", "p2")):
        return pd.DataFrame([dict(baseline="b", variant="v", cpus=2,
                                  point=p, role="primary", clock="wall")
                             for p in points] + [
            dict(baseline="b", variant="v", cpus=2, point="p1",
                 role="exploratory", clock="wall")])

    def primary(self, points=("p1", "p2")):
        """The verdict table's primary rows, as the commit block passes."""
        return VerdictTable(self.comps(points), "throughput_ops_s").primary

    def test_median_of_the_boots_ratios_of_sums(self):
        s = self.samples({
            # 1 + 3 contentions of 1000 + 1000 acq: 2 per 1k
            ("b", "b1"): {"p1": (1, 1.0, 1000), "p2": (3, 3.0, 1000)},
            # 20 of 2000: 10 per 1k (a mean of the points: 5.5)
            ("b", "b2"): {"p1": (1, 9.0, 1000), "p2": (19, 1.0, 1000)},
            ("b", "b3"): {"p1": (0, 0.0, 500), "p2": (1, 2.0, 1500)},
            # a boot without p2 (a failed point): not in the median
            ("b", "b4"): {"p1": (900, 900.0, 1000)},
            ("v", "v1"): {"p1": (10, 5.0, 100), "p2": (30, 5.0, 900)},
            # 3 points at a 2-point vCPU count cannot happen; p3 is not
            # primary and not summed
            ("v", "v2"): {"p1": (10, 5.0, 100), "p2": (30, 5.0, 900),
                          "p3": (1000, 1000.0, 1000)},
        })
        got = commit_msg.lock_rates(self.primary(), s)
        self.assertEqual(len(got), 1)
        r = got[0]
        self.assertEqual((r["baseline"], r["variant"], r["cpus"],
                          r["points"], r["n_base"], r["n_var"]),
                         ("b", "v", 2, 2, 3, 2))
        # boots b1, b2, b3: 2, 10, 0.5 per 1k acq; median 2, mean 4.17
        self.assertAlmostEqual(r["cont_base"], 2.0)
        # waits 4, 10, 2 us over 2000 acq: 2, 5, 1 ns per acq
        self.assertAlmostEqual(r["wait_base"], 2.0)
        self.assertAlmostEqual(r["cont_var"], 40.0)
        self.assertAlmostEqual(r["wait_var"], 10.0)

    def test_a_side_without_lock_stat_has_no_row(self):
        s = self.samples({("b", "b1"): {"p1": (1, 1.0, 1000),
                                        "p2": (3, 3.0, 1000)}})
        self.assertEqual(commit_msg.lock_rates(self.primary(), s), [])
        self.assertEqual(commit_msg.lock_rates(self.primary(), None), [])


class LockLines(unittest.TestCase):
    def lines(self, rates, cls="mboxes_lock", rw=("before",)):
        out = commit_msg.lock_lines(rates, cls, set(rw))
        self.assertLessEqual(len(out), commit_msg.LOCK_MAX_LINES)
        for x in out:
            self.assertLessEqual(len(x), commit_msg.WIDTH, x)
        return out

    def test_a_row(self):
        out = self.lines([rate(2, (1.0, 2.0), (120.0, 850.0))])
        self.assertEqual(out, [
            "lock_stat mboxes_lock, median of 8 boots (-R+-W, 2 points per "
            "boot):",
            "  2 vCPUs: contentions 1.00 -> 2.00 per 1k acq, wait 120 -> "
            "850 ns/acq"])
        self.assertEqual(rows_of(out)[2], (1.0, 2.0, 120.0, 850.0))
        # wider numbers: a shorter form
        out = self.lines([rate(2, (1.5, 2.5))])
        self.assertEqual(out[1], "  2 vCPUs: 1.50 -> 2.50 contentions/1k "
                                 "acq, wait 0.500 -> 2.50 us/acq")
        self.assertEqual(rows_of(out)[2], (1.5, 2.5, 500.0, 2500.0))

    def test_every_row_in_one_form(self):
        out = self.lines([rate(2, (1.0, 2.0), (120.0, 850.0)),
                          rate(4, (10.5, 12.5), (1250.0, 500.0))])
        self.assertEqual(out[1:], [
            "  2 vCPUs: 1.00 -> 2.00 contentions/1k acq, wait 120 -> 850 "
            "ns/acq",
            "  4 vCPUs: 10.5 -> 12.5 contentions/1k acq, wait 1.25 -> 0.500 "
            "us/acq"])

    def test_medians_of_unequal_boots(self):
        out = self.lines([rate(2, n=(16, 14)), rate(4, n=(16, 16))])
        self.assertEqual(out[0], "lock_stat mboxes_lock, medians of 14-16 "
                                 "boots (-R+-W, 2 points/boot):")
        out = self.lines([rate(2, points=1)], rw=())
        self.assertEqual(out[0], "lock_stat mboxes_lock, before -> after, "
                                 "median of 8 boots:")

    def test_one_unit_for_both_sides(self):
        out = self.lines([rate(2, wait=(120.0, 850.0))])
        self.assertIn("wait 120 -> 850 ns", out[1])

    def test_nothing_to_contend_is_left_out(self):
        out = self.lines([rate(1, (0.0, 0.0), (0.0, 0.0), "icount"),
                          rate(2)])
        self.assertEqual(len(out), 2)
        self.assertNotIn("1 vCPU", "\n".join(out))
        self.assertEqual(self.lines([rate(1, (0.0, 0.0), (0.0, 0.0))]), [])
        self.assertEqual(self.lines([]), [])

    def test_icount_waits_are_instructions(self):
        out = self.lines([rate(2, wait=(300.0, 4000.0), clock="icount")])
        self.assertIn("2 vCPUs icount:", out[1])
        self.assertIn("0.300 -> 4.00 k insn", out[1])
        self.assertEqual(rows_of(out)[2], (10.0, 20.0, 300.0, 4000.0))

    def test_more_rows_than_room(self):
        out = self.lines([rate(c) for c in (2, 4, 8, 16)])
        self.assertEqual(len(out), 3)
        self.assertTrue(out[1].startswith("  2 vCPUs:"))
        self.assertIn("+3 more", out[2])

    def test_many_pairs_name_them(self):
        out = self.lines([rate(2), rate(2, v="rcu")])
        self.assertIn("before -> after", out[1])
        self.assertIn("before -> rcu", out[2])

    def test_a_long_class_name(self):
        out = self.lines([rate(2), rate(4)],
                         cls="some_very_long_lock_class_name_lock")
        self.assertEqual(len(out), 3)
        self.assertIn("some_very_long_lock_class_name_lock", out[0])
        self.assertIn("more", " ".join(out[:2]))
        self.assertTrue(out[2].startswith("  2 vCPUs:"))


class TableCut(unittest.TestCase):
    """A table too long for the block loses the rows the answer's counts
    carry first (no harm, then inconclusive); harm, worse, better and
    the rest stay, in their order."""

    def test_no_harm_rows_leave_first(self):
        verdicts = ["no harm", "no harm", "worse", "inconclusive (n≈40)",
                    "harm", "no harm", "better"]
        table = ["head"] + [f"row{i} {v}" for i, v in enumerate(verdicts)]
        out = commit_msg._cut(table, verdicts, 5)
        self.assertEqual(out, ["head", "row2 worse", "row3 inconclusive (n≈40)",
                               "row4 harm", "row6 better",
                               "(+3 more rows in summary.md)"])

    def test_then_the_undecided(self):
        verdicts = ["inconclusive (n≈9)", "harm", "inconclusive", "worse"]
        table = ["head"] + [f"row{i}" for i in range(4)]
        out = commit_msg._cut(table, verdicts, 3)
        self.assertEqual(out, ["head", "row1", "row3", "(+2 more rows in summary.md)"])

    def test_decisive_rows_go_last_from_the_end(self):
        verdicts = ["harm", "worse", "harm"]
        table = ["head", "a", "b", "c"]
        self.assertEqual(commit_msg._cut(table, verdicts, 2),
                         ["head", "a", "(+2 more rows in summary.md)"])


class DriverAndReproduce(unittest.TestCase):
    """The setup line names what drove the lock; a campaign of --variants
    folders reproduces with them."""

    def test_driver(self):
        from analysis.parse import rundir
        from analysis.render import run_setup

        def pt(w):
            return rundir.Point(id="p", read_pct=None, mailboxes=None, miss_pct=None,
                                duration_ms=None, workload=w)
        self.assertEqual(run_setup.driver_s([pt(None), pt("module")]), "mbox_bench")
        self.assertEqual(run_setup.driver_s([pt("read:/proc/iomem"), pt("read:/proc/iomem"),
                                             pt("proc_lookup")]),
                         "lockload (read /proc/iomem, proc_lookup)")

    def test_reproduce_names_the_variant_folders(self):
        tmp = tempfile.mkdtemp(prefix="commit-repro-")
        self.addCleanup(shutil.rmtree, tmp)
        d = os.path.join(tmp, "run")
        synth.make_run(d)
        mf = os.path.join(d, "manifest.json")
        with open(mf) as f:
            man = json.load(f)
        man["variant_dirs"] = ["/x/my vars"]
        with open(mf, "w") as f:
            json.dump(man, f)
        with open(os.path.join(d, "campaign.toml"), "w") as f:
            f.write("# stand-in\n")
        status, _out, err = run_main(report.main, [d, "--quiet"])
        self.assertEqual(status, 0, err)
        with open(os.path.join(d, "commit-msg.txt")) as f:
            msg = f.read()
        self.assertEqual(reproduce_args(msg),
                         ["--variants", "/x/my vars", os.path.join(d, "campaign.toml")])

    def test_reproduce_lines_paste_back_into_the_words(self):
        # an argument longer than a line is cut inside double quotes
        long = "/very/long/" + "x" * 150 + '/with "quotes" $HOME `and` \\ too'
        for args in (["c.toml"], ["--variants", "/x/my vars", "/tmp/c.toml"],
                     ["--variants", long, "--variants", "b c", "/y/" + "z" * 80]):
            lines = commit_msg.shell_lines("./run.sh campaign", args)
            for x in lines:
                self.assertLessEqual(len(x), commit_msg.WIDTH, x)
            self.assertEqual(reproduce_args("Reproduce:\n" + "\n".join(lines)),
                             args)


def reproduce_args(msg):
    """The words sh reads from a block's Reproduce lines, after
    `./run.sh campaign`."""
    import subprocess
    lines = msg.split("Reproduce:\n", 1)[1].split("\n")
    cmd = "\n".join(x for x in lines if x.strip()).replace(
        "./run.sh campaign", "printf '%s\\0'", 1)
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True,
                         check=True).stdout
    return out.split("\0")[:-1]


class BootsRange(unittest.TestCase):
    """n in the setup lines: boots per variant, vCPU count and point,
    from the primary's samples where it has them, else from the boots
    with any sample (a regime whose primary is another metric)."""

    def frame(self):
        rows = []
        for v in ("before", "after"):
            for rep in range(1, 4):  # 1 vCPU: 3 boots, insn_per_op only
                rows.append((v, 1, f"r{rep}-{v}-c1", "p", "insn_per_op", 1.0))
            for rep in range(1, 7):  # 2 vCPUs: 6 boots, no insn_per_op
                for m in ("throughput_run", "throughput_ops_s"):
                    rows.append((v, 2, f"r{rep}-{v}-c2", "p", m, 1.0))
        return pd.DataFrame(rows, columns=["variant", "cpus", "cell", "point",
                                           "metric", "value"])

    def test_each_regime_counts_its_boots(self):
        from analysis.render import summary
        self.assertEqual(summary.boots_range(self.frame(), "insn_per_op"), (3, 6))
        self.assertEqual(summary.boots_range(self.frame(), "throughput_run"), (3, 6))

    def test_the_primary_counts_where_it_has_samples(self):
        from analysis.render import summary
        f = self.frame()
        # one 2-vCPU boot lost its primary: 5 there, though 6 boots ran
        f = f[~((f["cell"] == "r6-after-c2") & (f["metric"] == "throughput_run"))]
        self.assertEqual(summary.boots_range(f, "throughput_run"), (3, 6))
        self.assertEqual(summary.boots_range(f[f["cpus"] == 2], "throughput_run"), (5, 6))
        self.assertEqual(summary.boots_range(f.iloc[0:0], "throughput_run"), (0, 0))


if __name__ == "__main__":
    unittest.main()
