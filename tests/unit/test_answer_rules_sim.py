# SPDX-License-Identifier: GPL-2.0
"""The answer's rules on the wall clock, on simulated campaigns with
known answers (issue #41): lost boots (rule R1 and the bound printed on
the variant's loss rate), the A/A control's boots pooled with the
baseline's, and the campaign-wide false-claim rate of the primary
cells.  A higher-is-better metric, boots lognormal with CV 5% (a quiet
host), margin 5%, at the default campaign's per-look level 97.5%
(Thresholds().for_looks(2)).

The verdict is stats.compare's (the Hodges-Lehmann typical boot and the
ratio of means together: stats.combine), computed for many campaigns at
once from the same pieces (mann_whitney.shift_ci_many,
stats.mean_ratio_ci, stats.verdict) and checked against stats.compare
campaign by campaign on the first rows; the A/A control's widening is
guards.widen, the lost boots' rule guards.failures, the bound
boots.loss_rate_hi: the project's own functions.

(1) Lost boots.  "host hangs h": each boot of either side hangs with
    probability h (the host's fault, not the kernel's); the rule before
    (any difference in lost boots withholds a favourable verdict)
    against R1 (only a variant that lost a larger share of its boots):
    R1 says no harm more often, and its false claims at a true 1.00
    stay within 2.5%.  "variant hangs q": the variant's kernel hangs
    with probability q, the baseline's never: both rules say the same,
    and the printed bound on the variant's loss rate (one-sided, at the
    verdicts' confidence) holds q in >= 97.5% of campaigns (asserted
    at q = 5, 10 and 30%; with none of 16 boots lost it reads 20.6%, so
    a kernel that hangs one boot in ten can still read favourable: the
    bound says how far the boots reach).
(2) Pooled control: the baseline's n boots alone against the baseline's
    with its A/A control's (2n boots of the same image; the A/A pair
    judged apart still widens): no harm at a true 1.00 more often,
    false claims at 1.00 and false `no harm` at the margin (0.95) within
    2.5% each.
(3) The campaign-wide false-claim rate: K = 4 primary cells of a vCPU
    count (the default campaign's points), none with an effect: the
    share of campaigns where some cell claims better, worse or harm,
    against the Bonferroni bound K x 2.5% = 10% that the answer states.

The tables:
  /usr/bin/python3 -m unittest -v tests.unit.test_answer_rules_sim
  LOCKBENCH_SIM_FULL=1 ...   # 4000 campaigns a row (analysis/README.md)
"""

import math
import os
import unittest

import numpy as np

from analysis.estimate import mann_whitney, stats

from analysis.estimate.thresholds import Thresholds
from analysis.tidy import boots
from analysis.verdict import guards

SIMS = 4000 if os.environ.get("LOCKBENCH_SIM_FULL") else 400
TH = Thresholds().for_looks(2)
CONF = TH.confidence
SIGMA = math.sqrt(math.log1p(0.05 ** 2))
CLAIMS = (stats.BETTER, stats.WORSE, stats.HARM)
FAV = (stats.BETTER, stats.NO_HARM)


def lognormal(rng, s, n, ratio=1.0):
    return ratio * np.exp(rng.normal(0, SIGMA, (s, n)))


def labels(b, v, e=None):
    """stats.compare's verdict for each row of b (S x n) against v (S x
    m), its CIs widened by e[i] (log) first where given (guards.widen, as
    guards.calibrate does with the A/A control's distance from 1)."""
    sh, lo, hi = mann_whitney.shift_ci_many(b, v, CONF)
    n = min(b.shape[1], v.shape[1])
    out = []
    for i in range(len(b)):
        mr, ml, mh = stats.mean_ratio_ci(b[i], v[i], CONF)
        typical, _ = stats.verdict(math.exp(sh[i]), math.exp(lo[i]),
                                   math.exp(hi[i]), "higher", TH.margin, n,
                                   TH.min_n)
        mean, _ = stats.verdict(mr, ml, mh, "higher", TH.margin, n, TH.min_n)
        label = stats.combine(typical, mean)
        if e is not None and e[i] > 0:
            r = dict(ratio=math.exp(sh[i]), ratio_ci_lo=math.exp(lo[i]),
                     ratio_ci_hi=math.exp(hi[i]), n_base=b.shape[1],
                     n_var=v.shape[1], mean_ratio=mr, mean_ci_lo=ml,
                     mean_ci_hi=mh, verdict=label)
            guards.widen(r, e[i], "higher", TH.margin, TH.min_n)
            label = r["verdict"]
        out.append(label)
    return out


def aa_widen(b, a):
    """The A/A pair's distance from 1 (log) per row: guards.calibrate's e."""
    _sh, lo, hi = mann_whitney.shift_ci_many(b, a, CONF)
    return np.maximum(0.0, np.maximum(lo, -hi))


def share(xs, want):
    return sum(x in want for x in xs) / len(xs)


def lost_rule(label, lb, nb, lv, nv, r1):
    """The verdict after the lost boots: guards.failures (R1), or the rule
    before it (any difference withholds a favourable verdict)."""
    row = dict(cpus=2, baseline="b", variant="v", role="primary",
               direction="higher", verdict=label, failed_base=0,
               failed_var=0, warnings="")
    tally = {("b", 2): {"boots": nb, "lost": lb, "states": {"hung": lb}},
             ("v", 2): {"boots": nv, "lost": lv, "states": {"hung": lv}}}
    guards.failures([row], tally, CONF)
    if not r1 and lb != lv and label in FAV and row["verdict"] in FAV:
        row["verdict"] = guards.lost_label(lb, lv)
    return row["verdict"], row["lost_rate_hi"]


def campaigns_with_hangs(rng, n, hb, hv, ratio=1.0):
    """(verdict R1, verdict before, bound, lost_v) per campaign: boots
    hang with probability hb (baseline), hv (variant); the rest judged."""
    lb = rng.binomial(n, hb, SIMS)
    lv = rng.binomial(n, hv, SIMS)
    out = [None] * SIMS
    for key in set(zip(lb, lv)):
        idx = [i for i in range(SIMS) if (lb[i], lv[i]) == key]
        nb, nv = n - key[0], n - key[1]
        labs = (labels(lognormal(rng, len(idx), nb),
                       lognormal(rng, len(idx), nv, ratio))
                if nb >= 2 and nv >= 2 else [""] * len(idx))
        for i, lab in zip(idx, labs):
            new, bound = lost_rule(lab, key[0], n, key[1], n, True)
            old, _ = lost_rule(lab, key[0], n, key[1], n, False)
            out[i] = (new, old, bound, key[1])
    return out


class AnswerRules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rng = np.random.default_rng(4141)
        cls.lost, cls.pool, cls.family = {}, {}, {}
        n = 16
        for h in (0.0, 0.01, 0.03, 0.05):
            cls.lost[("host", h)] = campaigns_with_hangs(rng, n, h, h)
        for q in (0.05, 0.10, 0.30):
            cls.lost[("variant", q)] = campaigns_with_hangs(rng, n, 0.0, q)
        for n in (8, 16):
            for ratio in (1.0, 0.95):
                b, a = lognormal(rng, SIMS, n), lognormal(rng, SIMS, n)
                v = lognormal(rng, SIMS, n, ratio)
                e = aa_widen(b, a)
                cls.pool[(n, ratio)] = (labels(b, v, e),
                                        labels(np.concatenate([b, a], 1), v, e))
                if ratio == 1.0:
                    cls.check = (b[:20], v[:20])
        for n in (8, 16):
            cells = [labels(lognormal(rng, SIMS, n), lognormal(rng, SIMS, n))
                     for _ in range(4)]
            cls.family[n] = [share(c, CLAIMS) for c in cells] + [
                float(np.mean([any(c[i] in CLAIMS for c in cells)
                               for i in range(SIMS)]))]
        print(f"\n(1) lost boots, {SIMS} campaigns a row, n = 16 a side, "
              f"{100 * CONF:g}%, true ratio 1.00:")
        print("| hangs | no harm, rule before | no harm, R1 | false claims, "
              "R1 | bound holds q | median bound, 0 lost |")
        print("|---|--:|--:|--:|--:|--:|")
        for (who, h), rows in cls.lost.items():
            new = [r[0] for r in rows]
            old = [r[1] for r in rows]
            holds = np.mean([r[2] >= h for r in rows])
            zero = [r[2] for r in rows if r[3] == 0]
            print(f"| {who} {100 * h:g}% | {100 * share(old, FAV):.1f}% | "
                  f"{100 * share(new, FAV):.1f}% | "
                  f"{100 * share(new, CLAIMS):.1f}% | {100 * holds:.1f}% | "
                  + (f"{100 * np.median(zero):.1f}% |" if zero else "- |"))
        print(f"\n(2) the A/A control pooled with the baseline ({SIMS} "
              f"campaigns a row, n boots each of baseline, control, variant):")
        print("| n | true ratio | no harm, baseline alone | no harm, pooled | "
              "false claims alone | false claims pooled |")
        print("|--:|--:|--:|--:|--:|--:|")
        for (n, ratio), (alone, pooled) in cls.pool.items():
            print(f"| {n} | {ratio:.2f} | {100 * share(alone, FAV):.1f}% | "
                  f"{100 * share(pooled, FAV):.1f}% | "
                  + (f"{100 * share(alone, CLAIMS):.1f}% | "
                     f"{100 * share(pooled, CLAIMS):.1f}% |" if ratio == 1.0
                     else "- | - |"))
        print(f"\n(3) 4 null cells a campaign ({SIMS} campaigns): false "
              f"claims per cell, and in some cell")
        for n, f in cls.family.items():
            print(f"n = {n}: " + ", ".join(f"{100 * x:.1f}%" for x in f[:4])
                  + f"; some cell: {100 * f[4]:.1f}% (Bonferroni bound "
                  f"{4 * 100 * (1 - CONF):g}%)")

    def se(self, p):
        return 3 * math.sqrt(max(p * (1 - p), 1e-4) / SIMS)

    def test_the_vectorised_verdict_is_compare(self):
        b, v = self.check
        self.assertEqual(labels(b, v),
                         [stats.compare(x, y, "higher", TH).verdict
                          for x, y in zip(b, v)])

    def test_r1_costs_no_power_to_the_hosts_hangs(self):
        for h in (0.01, 0.03, 0.05):
            rows = self.lost[("host", h)]
            new = share([r[0] for r in rows], FAV)
            old = share([r[1] for r in rows], FAV)
            self.assertGreater(new, old, h)
            self.assertLessEqual(share([r[0] for r in rows], CLAIMS),
                                 0.025 + self.se(0.025), h)

    def test_r1_is_the_rule_before_when_the_baseline_loses_none(self):
        for q in (0.05, 0.10, 0.30):
            rows = self.lost[("variant", q)]
            self.assertEqual([r[0] for r in rows], [r[1] for r in rows])

    def test_the_printed_bound_holds_the_loss_rate(self):
        for q in (0.05, 0.10, 0.30):
            rows = self.lost[("variant", q)]
            self.assertGreaterEqual(np.mean([r[2] >= q for r in rows]),
                                    CONF - self.se(1 - CONF))
        # 0 of 16 lost at 97.5%: at most about 21% (the figure)
        self.assertAlmostEqual(boots.loss_rate_hi(0, 16, 0.975), 0.206, places=3)

    def test_pooling_the_control_adds_power_not_errors(self):
        for n in (8, 16):
            alone, pooled = self.pool[(n, 1.0)]
            self.assertGreater(share(pooled, FAV), share(alone, FAV), n)
            self.assertLessEqual(share(pooled, CLAIMS),
                                 0.025 + self.se(0.025), n)
            # at the margin, a false no harm stays within 2.5%
            _alone, pooled = self.pool[(n, 0.95)]
            self.assertLessEqual(share(pooled, FAV), 0.025 + self.se(0.025), n)

    def test_the_campaign_wide_rate_within_the_stated_bound(self):
        for n, f in self.family.items():
            self.assertLessEqual(f[4], 4 * (1 - CONF) + self.se(0.1), n)


if __name__ == "__main__":
    unittest.main()
