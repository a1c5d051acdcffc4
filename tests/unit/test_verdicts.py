# SPDX-License-Identifier: GPL-2.0
"""analysis.verdict.verdicts: the rules that keep a table of verdicts honest, on
synthetic samples with known answers."""

import math
import unittest

import numpy as np
import pandas as pd

from analysis.estimate import holm, mann_whitney, stats

from analysis.estimate.thresholds import Thresholds
from analysis.verdict import verdicts

TH = Thresholds()


def boots(center, n, rel_sd, seed):
    rng = np.random.default_rng(seed)
    return center * np.exp(rng.normal(0, rel_sd, n))


def frame(groups, cpus=2, point="p1"):
    """groups: {(variant, metric): values} -> a samples.csv frame."""
    rows = []
    for (variant, metric), values in groups.items():
        for v in values:
            rows.append({"campaign": "c", "variant": variant, "cpus": cpus,
                         "point": point, "read_pct": 90, "mailboxes": 16,
                         "miss_pct": 0, "duration_ms": 1000,
                         "metric": metric, "unit": "x", "value": v})
    return pd.DataFrame(rows)


def verdict_of(comps, metric, variant="after"):
    r = comps[(comps["metric"] == metric) & (comps["variant"] == variant)]
    return r.iloc[0]


PAIR = [("before", "after")]


class Holm(unittest.TestCase):
    def test_known_table(self):
        # sorted 0.005 <= .05/4, 0.01 <= .05/3, 0.03 > .05/2: stop there
        self.assertEqual(holm.holm([0.01, 0.04, 0.03, 0.005]),
                         [True, False, False, True])
        self.assertEqual(holm.holm([0.001, 0.002]), [True, True])
        self.assertEqual(holm.holm([]), [])
        self.assertEqual(holm.holm_levels([0.01, 0.04, 0.03, 0.005]),
                         [1 - 0.05 / 3, 1 - 0.05 / 1, 1 - 0.05 / 2,
                          1 - 0.05 / 4])

    def test_exploratory_rows_are_corrected(self):
        # a 4% latency change at CV 1%, n = 8: `worse` on its own, at the
        # 95% level; among 40 exploratory rows its CI widens to its Holm
        # level, the primary keeps 95%
        g = {("before", "throughput_ops_s"): boots(100, 8, 0.01, 1),
             ("after", "throughput_ops_s"): boots(100, 8, 0.01, 2)}
        for i in range(40):
            m = "lookup_lat_median_ns" if i == 0 else f"x{i}"
            g[("before", m)] = boots(100, 8, 0.01, 10 + i)
            g[("after", m)] = boots(104 if i == 0 else 100, 8, 0.01, 60 + i)
        samples = frame(g)
        # unknown metrics have no direction: give them one for the test
        from analysis import metrics
        saved = dict(metrics.METRICS)
        try:
            for i in range(1, 40):
                metrics.METRICS[f"x{i}"] = metrics.Metric(
                    "x", "lower", metrics.Rule(metrics.RESULTS, "total", "ops"))
            comps = verdicts.comparisons_table(samples, PAIR, TH)
        finally:
            metrics.METRICS.clear()
            metrics.METRICS.update(saved)
        prim = verdict_of(comps, "throughput_ops_s")
        self.assertEqual(prim["role"], "primary")
        self.assertAlmostEqual(prim["ci_level"],
                               mann_whitney.ci_level(8, 8, 0.95))
        expl = comps[comps["role"] == "exploratory"]
        self.assertEqual(len(expl), 40)
        # Holm's levels, 1 - 0.05 / k for k = 40..1 (each CI's actual
        # coverage is at least its nominal level)
        nominal = sorted(1 - 0.05 / k for k in range(1, 41))
        for got, want in zip(sorted(expl["ci_level"]), nominal):
            self.assertGreaterEqual(got, want - 1e-12)
        alone = stats.compare(g[("before", "lookup_lat_median_ns")],
                              g[("after", "lookup_lat_median_ns")], "lower")
        row = verdict_of(comps, "lookup_lat_median_ns")
        self.assertLess(row["ratio_ci_lo"], alone.ratio_ci_lo)
        self.assertGreater(row["ratio_ci_hi"], alone.ratio_ci_hi)

    def test_the_step_down_stops_at_an_undecided_row(self):
        """Holm rejects nothing after the first hypothesis it cannot
        reject, whatever that row's label: a row a guard withheld, whose
        p exceeds its level, stops it, and a `worse` after it (that the
        step-down skipping it would have kept) is inconclusive (Holm)."""
        def row(verdict, p):
            return dict(role="exploratory", direction="lower", verdict=verdict,
                        clock="wall", p_claim=p, ratio=1.0, ratio_ci_lo=0.9,
                        ratio_ci_hi=1.1, mean_ci_lo=0.9, mean_ci_hi=1.1,
                        n_needed=None, ci_level=0.95, aa_widen=0.0,
                        n_base=8, n_var=8, mean_ratio=1.0)
        strong = (boots(100, 8, 0.01, 1), boots(130, 8, 0.01, 2), "lower")
        mild = (boots(100, 8, 0.02, 3), boots(106, 8, 0.02, 4), "lower")
        # K = 3; sorted: 1e-4 (alpha/3), 0.03 (alpha/2: not reached), 0.04
        rows = [row("harm", 1e-4), row("withheld (probe)", 0.03),
                row("worse", 0.04)]
        self.assertEqual(stats.compare(*mild).verdict, "worse")
        verdicts._holm(rows, [strong, mild, mild], TH)
        self.assertEqual([r["verdict"] for r in rows],
                         ["harm", "withheld (probe)", verdicts.HOLM])
        # a withheld row whose p reaches its level does not stop it
        rows = [row("harm", 1e-4), row("withheld (probe)", 0.001),
                row("worse", 0.04)]
        verdicts._holm(rows, [strong, mild, mild], TH)
        self.assertEqual(rows[2]["verdict"], "worse")

    def test_primary_points(self):
        g = {("before", "throughput_ops_s"): boots(100, 6, 0.01, 1),
             ("after", "throughput_ops_s"): boots(100, 6, 0.01, 2)}
        s = pd.concat([frame(g, point="p1"), frame(g, point="p2")])
        comps = verdicts.comparisons_table(s, PAIR, TH,
                                           primary_points=["p2"])
        self.assertEqual(dict(zip(comps["point"], comps["role"])),
                         {"p1": "exploratory", "p2": "primary"})


class Failures(unittest.TestCase):
    def outcomes(self, failed):
        rows = []
        for v, k in (("before", 0), ("after", failed)):
            for i in range(8):
                rows.append({"variant": v, "cpus": 2, "point": "p1",
                             "outcome": "starved" if i < k else "ok"})
        return pd.DataFrame(rows)

    def test_failed_points_withhold_no_harm(self):
        g = {("before", "throughput_ops_s"): boots(100, 8, 0.01, 1),
             ("after", "throughput_ops_s"): boots(100, 6, 0.01, 2)}
        comps = verdicts.comparisons_table(frame(g), PAIR, TH,
                                           outcomes=self.outcomes(2))
        r = verdict_of(comps, "throughput_ops_s")
        self.assertEqual((r["failed_base"], r["failed_var"],
                          r["starved_var"]), (0, 2, 2))
        self.assertEqual(r["verdict"], "inconclusive (failed 0 vs 2)")
        # the same boots without failures: no harm
        comps = verdicts.comparisons_table(frame(g), PAIR, TH,
                                           outcomes=self.outcomes(0))
        self.assertEqual(verdict_of(comps, "throughput_ops_s")["verdict"],
                         "no harm")

    def test_harm_stays_harm(self):
        g = {("before", "throughput_ops_s"): boots(100, 8, 0.01, 1),
             ("after", "throughput_ops_s"): boots(80, 6, 0.01, 2)}
        comps = verdicts.comparisons_table(frame(g), PAIR, TH,
                                           outcomes=self.outcomes(2))
        self.assertEqual(verdict_of(comps, "throughput_ops_s")["verdict"],
                         "harm")


class Probe(unittest.TestCase):
    def run_case(self, probe_after, ref_after, raw_after):
        g = {("before", "ref_probe_ns"): boots(100, 8, 0.005, 1),
             ("after", "ref_probe_ns"): boots(probe_after, 8, 0.005, 2),
             ("before", "throughput_ref"): boots(100, 8, 0.01, 3),
             ("after", "throughput_ref"): boots(ref_after, 8, 0.01, 4),
             ("before", "throughput_ops_s"): boots(100, 8, 0.01, 5),
             ("after", "throughput_ops_s"): boots(raw_after, 8, 0.01, 6)}
        return verdicts.comparisons_table(frame(g), PAIR, TH)

    def test_steady_probe_shows_the_ref_verdict(self):
        comps = self.run_case(100, 100, 100)
        r = verdict_of(comps, "throughput_ref")
        self.assertEqual(r["verdict"], "no harm")
        self.assertAlmostEqual(r["probe_ratio"], 1.0, delta=0.01)

    def test_moved_probe_withholds_it(self):
        # the kernel slows the probe by 8%: throughput_ref would read a
        # true 0.90 as ~0.97 ("no harm"); it is withheld instead
        comps = self.run_case(108, 97, 90)
        r = verdict_of(comps, "throughput_ref")
        self.assertEqual(r["verdict"], "withheld (probe)")
        self.assertGreater(r["probe_ci_lo"], 1.02)
        self.assertEqual(verdict_of(comps, "throughput_ops_s")["verdict"],
                         "harm")

    def test_disagreement_is_conflict(self):
        comps = self.run_case(100, 100, 90)
        self.assertEqual(verdict_of(comps, "throughput_ops_s")["verdict"],
                         "conflict")
        self.assertEqual(verdict_of(comps, "throughput_ref")["verdict"],
                         "conflict")


class RunTwin(unittest.TestCase):
    """throughput_run: raw throughput / (1 - steal_pct/100), per boot."""

    def run_case(self, rate_after, own_after, own_n=12, seed=0):
        """A host that steals 0-50% of random boots; the kernels' true
        rate per running second 100 and rate_after; QEMU's other threads
        of the variant run own_after points of a core more than the
        baseline's 0.5 (and take that much from its vCPUs)."""
        rng = np.random.default_rng(seed)
        g = {}
        for variant, rate, extra, s in (("before", 100, 0, 1),
                                        ("after", rate_after, own_after,
                                         2)):
            host = np.where(rng.random(12) < 0.4,
                            rng.uniform(20, 50, 12), rng.uniform(0, 3, 12))
            steal = host + extra
            run = boots(rate, 12, 0.01, s)
            g[(variant, "qemu_other_pct")] = (
                0.5 + extra + rng.uniform(-0.1, 0.1, 12))[:own_n]
            g[(variant, "throughput_run")] = run
            g[(variant, "throughput_ops_s")] = run * (1 - steal / 100)
        return verdicts.comparisons_table(frame(g), PAIR, TH)

    def test_the_host_divided_out_decides(self):
        comps = self.run_case(100, 0)
        self.assertEqual(verdict_of(comps, "throughput_run")["verdict"],
                         "no harm")
        self.assertTrue(verdict_of(comps, "throughput_ops_s")["verdict"]
                        .startswith("inconclusive"))

    def test_a_kernel_whose_own_qemu_steals_is_withheld(self):
        # the variant's own QEMU threads run 5 points of a core more and
        # keep its vCPUs off: divided out, its true 0.95x of raw
        # throughput would read "no harm"
        comps = self.run_case(100, 5)
        r = verdict_of(comps, "throughput_run")
        self.assertEqual(r["verdict"], "withheld (steal)")
        self.assertIn("own QEMU threads ran +5.", r["warnings"])

    def test_unmeasured_own_threads_withhold(self):
        comps = self.run_case(100, 0, own_n=0)
        r = verdict_of(comps, "throughput_run")
        self.assertEqual(r["verdict"], "withheld (steal)")
        self.assertIn("qemu_other_pct not measured", r["warnings"])

    def test_absurd_own_thread_values_withhold_without_error(self):
        rng = np.random.default_rng(3)
        g = {("before", "throughput_run"): boots(100, 8, 0.01, 1),
             ("after", "throughput_run"): boots(100, 8, 0.01, 2),
             ("before", "qemu_other_pct"): rng.uniform(0.3, 0.6, 8),
             ("after", "qemu_other_pct"): [1e6] * 8}
        comps = verdicts.comparisons_table(frame(g), PAIR, TH)
        self.assertEqual(verdict_of(comps, "throughput_run")["verdict"],
                         "withheld (steal)")

    def test_harm_stands_whatever_the_own_threads(self):
        comps = self.run_case(80, 5)
        self.assertEqual(verdict_of(comps, "throughput_run")["verdict"],
                         "harm")

    def test_disagreement_is_conflict(self):
        g = {("before", "throughput_ops_s"): boots(100, 8, 0.01, 1),
             ("after", "throughput_ops_s"): boots(80, 8, 0.01, 2),
             ("before", "throughput_run"): boots(100, 8, 0.01, 3),
             ("after", "throughput_run"): boots(100, 8, 0.01, 4),
             ("before", "qemu_other_pct"): [0.5] * 8,
             ("after", "qemu_other_pct"): [0.5] * 8}
        comps = verdicts.comparisons_table(frame(g), PAIR, TH)
        for m in ("throughput_ops_s", "throughput_run"):
            self.assertEqual(verdict_of(comps, m)["verdict"], "conflict")


class Calibration(unittest.TestCase):
    def run_case(self, control_center):
        g = {("before", "throughput_ops_s"): boots(100, 8, 0.01, 1),
             ("after", "throughput_ops_s"): boots(99, 8, 0.01, 2),
             ("before~aa", "throughput_ops_s"): boots(control_center, 8,
                                                      0.01, 3)}
        return verdicts.comparisons_table(
            frame(g), PAIR, TH, controls=[("before", "before~aa")])

    def test_calibrated(self):
        comps = self.run_case(100)
        self.assertEqual(verdict_of(comps, "throughput_ops_s", "before~aa")
                         ["role"], "control")
        r = verdict_of(comps, "throughput_ops_s")
        self.assertEqual((r["verdict"], r["calibration"]),
                         ("no harm", "A/A no harm"))

    def test_an_undecided_control_leaves_the_verdict(self):
        g = {("before", "throughput_ops_s"): boots(100, 8, 0.01, 1),
             ("after", "throughput_ops_s"): boots(70, 8, 0.01, 2),
             ("before~aa", "throughput_ops_s"): boots(100, 8, 0.3, 3)}
        comps = verdicts.comparisons_table(
            frame(g), PAIR, TH, controls=[("before", "before~aa")])
        r = verdict_of(comps, "throughput_ops_s")
        self.assertEqual(r["verdict"], "harm")
        self.assertTrue(r["calibration"].startswith("A/A inconclusive"))

    def test_a_host_made_difference_widens_the_ci(self):
        comps = self.run_case(90)  # the same image, 10% apart: the host
        r = verdict_of(comps, "throughput_ops_s")
        aa = verdict_of(comps, "throughput_ops_s", "before~aa")
        # the A/A CI lies wholly below 1: the comparison's CI grows by
        # that distance on both sides, and no harm is out of reach
        self.assertLess(aa["ratio_ci_hi"], 1)
        self.assertAlmostEqual(r["aa_widen"], -math.log(aa["ratio_ci_hi"]))
        self.assertLess(r["ratio_ci_lo"], 0.99 * aa["ratio_ci_hi"])
        self.assertNotIn(r["verdict"], ("no harm", "better"))
        self.assertIn("CI widened by", r["calibration"])
        self.assertEqual(r["verdict_unadjusted"], "no harm")

    def test_a_slight_host_difference_costs_a_sliver(self):
        comps = self.run_case(99.2)  # an A/A that barely misses 1
        r = verdict_of(comps, "throughput_ops_s")
        self.assertLess(r["aa_widen"], 0.01)
        self.assertEqual(r["verdict"], "no harm")


class Steal(unittest.TestCase):
    def test_a_stolen_cell_is_flagged_in_every_row(self):
        g = {("before", "throughput_ops_s"): boots(100, 6, 0.01, 1),
             ("after", "throughput_ops_s"): boots(100, 6, 0.01, 2),
             ("before", "steal_max_pct"): [1, 2, 1, 2, 1, 2],
             ("after", "steal_max_pct"): [1, 2, 35, 2, 1, 60]}
        comps = verdicts.comparisons_table(frame(g), PAIR, TH)
        for _, r in comps.iterrows():
            self.assertIn("host steal above 10% in 0 of 6 baseline and 2 of "
                          "6 variant boots", r["warnings"])

    def test_a_quiet_cell_is_not(self):
        g = {("before", "throughput_ops_s"): boots(100, 6, 0.01, 1),
             ("after", "throughput_ops_s"): boots(100, 6, 0.01, 2),
             ("before", "steal_max_pct"): [1] * 6,
             ("after", "steal_max_pct"): [2] * 6}
        comps = verdicts.comparisons_table(frame(g), PAIR, TH)
        self.assertFalse(comps["warnings"].str.contains("steal").any())


class Edges(unittest.TestCase):
    def test_one_side_missing_and_nan(self):
        g = {("before", "throughput_ops_s"): [100.0] * 6 + [math.nan],
             ("after", "throughput_ops_s"): [100.0] * 6}
        comps = verdicts.comparisons_table(frame(g), PAIR, TH)
        r = verdict_of(comps, "throughput_ops_s")
        self.assertEqual((r["n_base"], r["verdict"]), (6, "no harm"))


if __name__ == "__main__":
    unittest.main()


class LostBoots(unittest.TestCase):
    """Every boot counts (analysis/guards.failures, analysis/tidy/boots.py): a
    side that lost boots is judged on them."""

    def tally(self, lost_var, boots_var=8, lost_base=0, boots_base=8):
        return {("before", 2): {"boots": boots_base, "lost": lost_base,
                                "states": {"hung": lost_base} if lost_base else {}},
                ("after", 2): {"boots": boots_var, "lost": lost_var,
                               "states": {"hung": lost_var} if lost_var else {}}}

    def table(self, tally, after=None):
        g = {("before", "throughput_ops_s"): boots(100, 8, 0.01, 1)}
        if after is not False:
            g[("after", "throughput_ops_s")] = boots(100, 8 - tally[("after", 2)]["lost"],
                                                     0.01, 2)
        return verdicts.comparisons_table(frame(g), PAIR, TH, tally=tally)

    def test_significantly_more_lost_is_harm(self):
        # 6 of 8 hung against 0 of 8: Fisher one-sided p = 0.0035
        r = verdict_of(self.table(self.tally(6)), "throughput_ops_s")
        self.assertEqual(r["verdict"], "harm (failures)")
        self.assertEqual((r["lost_var"], r["boots_var"]), (6, 8))
        self.assertIn("after: 6 of 8 boots (6 hung) lost at 2 vCPUs", r["warnings"])

    def test_the_variant_losing_more_withholds_no_harm(self):
        # 1 of 8: not significant, but the good boots' no harm may not stand
        r = verdict_of(self.table(self.tally(1)), "throughput_ops_s")
        self.assertEqual(r["verdict_unadjusted"], "no harm")
        self.assertEqual(r["verdict"], "inconclusive (lost 0 vs 1 boots)")
        # rule R1: the baseline losing one buys no protection against the
        # variant and costs it nothing (tests/unit/test_lost_boots_sim.py)
        r = verdict_of(self.table(self.tally(0, lost_base=1)), "throughput_ops_s")
        self.assertEqual(r["verdict"], "no harm")
        # by share, not count: 1 of 4 is more than 1 of 8
        r = verdict_of(self.table(self.tally(1, boots_var=4, lost_base=1)),
                       "throughput_ops_s")
        self.assertEqual(r["verdict"], "inconclusive (lost 1 vs 1 boots)")

    def test_the_bound_on_the_variants_loss_rate(self):
        # 0 of 8 lost: at 95% (one-sided, Clopper-Pearson) at most 31.2%
        r = verdict_of(self.table(self.tally(0)), "throughput_ops_s")
        self.assertAlmostEqual(r["lost_rate_hi"], 1 - 0.05 ** (1 / 8), places=6)
        r = verdict_of(self.table(self.tally(1)), "throughput_ops_s")
        self.assertGreater(r["lost_rate_hi"], 1 - 0.05 ** (1 / 8))

    def test_equal_losses_leave_the_verdict(self):
        r = verdict_of(self.table(self.tally(1, lost_base=1)), "throughput_ops_s")
        self.assertEqual(r["verdict"], "no harm")

    def test_a_kernel_that_lost_every_boot_keeps_its_primary_row(self):
        comps = self.table(self.tally(8), after=False)
        r = verdict_of(comps, "throughput_ops_s")
        self.assertEqual((r["role"], r["n_var"], r["verdict"]),
                         ("primary", 0, "harm (failures)"))


class MeanOverBoots(unittest.TestCase):
    def test_a_minority_of_collapsed_boots_is_not_no_harm(self):
        # 15 good boots and one at a twentieth: the typical boot says no
        # harm, the mean over boots does not
        var = list(boots(100, 15, 0.01, 2)) + [5.0]
        g = {("before", "throughput_ops_s"): boots(100, 16, 0.01, 1),
             ("after", "throughput_ops_s"): var}
        r = verdict_of(verdicts.comparisons_table(frame(g), PAIR, TH),
                       "throughput_ops_s")
        self.assertEqual(r["verdict_typical"], "no harm")
        self.assertEqual(r["verdict"], "inconclusive (tail)")
        self.assertLess(r["mean_ratio"], 0.95)


class HostSpeed(unittest.TestCase):
    """The primary rows read at one host speed where the meter explains
    the boots (analysis/estimate/adjusted.py), raw where it does not."""

    def samples(self, meter=True, explains=True):
        rng, other = np.random.default_rng(7), np.random.default_rng(8)
        rows = []
        for variant, level in (("before", 1.0), ("after", 1.0)):
            slow = rng.random(16) < 0.4
            speed = np.where(slow, 1.3, 1.0) * np.exp(rng.normal(0, 0.01, 16))
            for i in range(16):
                thr = 1000 * level * np.exp(rng.normal(0, 0.01)) / (
                    speed[i] if explains else float(other.choice([1.0, 1.3])))
                boot = f"c{i:02d}-{variant}"
                for metric, v in [("throughput_ops_s", thr)] + (
                        [("host_meter_ns", 13000 * speed[i])] if meter else []):
                    rows.append({"campaign": "c", "variant": variant, "cpus": 2,
                                 "point": "p1", "read_pct": 90, "mailboxes": 16,
                                 "miss_pct": 0, "duration_ms": 1000, "rep": i + 1,
                                 "cell": boot, "metric": metric, "unit": "x",
                                 "value": v})
        return pd.DataFrame(rows)

    def test_adjusted_where_it_explains(self):
        prim = verdict_of(verdicts.comparisons_table(self.samples(), PAIR, TH),
                          "throughput_ops_s")
        self.assertEqual(prim["host_speed"], "adjusted")
        self.assertLess(prim["meter_slope"], -0.8)
        self.assertGreater(prim["meter_r2"], 0.9)
        # The two-speed host hides a harmless kernel in the raw values;
        # read at one speed it is `no harm`.
        self.assertEqual(prim["verdict"], stats.NO_HARM)
        raw = stats.compare(*(self.samples().query(
            f"metric == 'throughput_ops_s' and variant == '{v}'")["value"]
            for v in ("before", "after")), "higher", TH)
        self.assertNotIn(raw.verdict, stats.FAVOURABLE)

    def test_raw_without_meter_or_where_it_explains_nothing(self):
        none = verdict_of(verdicts.comparisons_table(self.samples(meter=False), PAIR, TH),
                          "throughput_ops_s")
        self.assertEqual(none["host_speed"], "raw: no host speed meter")
        other = verdict_of(verdicts.comparisons_table(
            self.samples(explains=False), PAIR, TH), "throughput_ops_s")
        self.assertTrue(other["host_speed"].startswith(
            "raw: the host's speed does not explain the spread"), other["host_speed"])
        # exploratory rows are never adjusted
        comps = verdicts.comparisons_table(self.samples(), PAIR, TH)
        self.assertEqual(set(comps[comps["role"] == "exploratory"]["host_speed"]), {""})

    def test_the_answer_says_so(self):
        from analysis.render import answer
        comps = verdicts.comparisons_table(self.samples(), PAIR, TH)
        prim = comps[comps["role"] == "primary"]
        self.assertTrue(answer.host_speed_sentence(prim).startswith(
            "Host speed: 1 of 1 wall-clock cells read at the mean host speed of their "
            "boots, the host speed meter explaining 1.00 of the spread"),
            answer.host_speed_sentence(prim))
        self.assertIn("[read at one host speed, r2 1.00]", answer.cell_parts(prim.iloc[0])[2])
        none = verdicts.comparisons_table(self.samples(meter=False), PAIR, TH)
        self.assertEqual(answer.host_speed_sentence(none[none["role"] == "primary"]),
                         "Host speed: not measured (no host speed meter in these runs), so "
                         "the wall-clock cells are judged on raw values.")
        other = verdicts.comparisons_table(self.samples(explains=False), PAIR, TH)
        self.assertEqual(answer.host_speed_sentence(other[other["role"] == "primary"]),
                         "Host speed: every wall-clock cell judged on raw values: the host's "
                         "speed does not explain the spread between boots here.")
