# SPDX-License-Identifier: GPL-2.0
"""Every boot counts: the verdict of stats.compare (the Hodges-Lehmann
typical boot and the ratio of the means over boots together; a
favourable claim needs both, stats.combine) against the old rule (the
Hodges-Lehmann CI alone: mann_whitney.shift_ci_many and stats.verdict,
as tests/unit/test_run_metric_sim.py judges), on simulated campaigns of a
higher-is-better metric with known answers.

Boots on either side are lognormal with CV 5% ("quiet"), or on a
"two-speed" host where each boot runs at 0.65x with probability 0.3,
else 1.0x, times the same lognormal. The variant has a share q = 0, 5,
10, 15% of its boots collapsed to 0.05x of what they would have been,
two ways: "fixed", exactly k = round(q * n) boots of the variant (the
mean loss is then 0.95 k / n: 5.9% at q = 5%, n = 16, where one boot of
16 collapses; none at q = 5%, n = 8), and "Bernoulli", each boot with
probability q (mean loss 0.95 q; every boot stays good in (1 - q)^n of
the campaigns, and no rule can see a collapse that did not happen).
n = 8 and 16 boots a side (the default campaign's two looks), margin
5%, at the per-look level 97.5% (Thresholds.for_looks(2)) and, for q = 0
and the fixed collapses, at 95%.

Printed per row: the mean loss, P(all ok) = (1 - q)^n for the Bernoulli
rows, P(no harm) (`no harm` or `better`: a claim of non-inferiority) for
the new rule and the old one, the new rule's `inconclusive (tail)`
share, the false claims (better, worse, harm) of both at q = 0, the
share of campaigns where some boot collapsed and the new rule still
said no harm, and the coverage of the true ratio of means (1 - the mean
loss) by stats.mean_ratio_ci's CI (as compare() returns it).

Asserted (Monte Carlo bounds: target + 3 standard errors), at 97.5%:
with fixed collapses, wherever the mean loss exceeds the margin, the new
rule says no harm in at most 2.5%; with Bernoulli collapses, in at most
(1 - q)^n + 2.5%, and in campaigns that drew a collapse (one boot of n
<= 16 is a loss above 5%) in at most 2.5%; at q = 0, at both levels, its
false claims are at most 5%; the typical verdict compare() reports is
the old rule's, campaign by campaign, and the new rule never makes a
favourable claim the old one did not.  Its power to say no harm at q =
0 is asserted within 5 points of the old rule's on the quiet host only:
on the two-speed host the mean over boots carries the spread of the two
speeds (CV ~18% against 5%) and the new rule says no harm 7 points
less often at n = 8 (2.9% against 10.0% at 97.5%) and 16 points less
at n = 16 (6.8% against 23.1%; 12 and 22 points at 95%), the price of
every boot counting there (printed, not asserted).  The mean CI's
coverage is printed only: with Bernoulli collapses it covers the true
ratio of means in as few as 61% (a campaign that drew no collapse has
a narrow CI about 1); with fixed ones it over-covers.

The table:
  /usr/bin/python3 -m unittest -v tests.unit.test_every_boot_sim
  LOCKBENCH_SIM_FULL=1 /usr/bin/python3 -m unittest -v \
      tests.unit.test_every_boot_sim   # also at 95%, more campaigns a row
"""

import math
import os
import unittest

import numpy as np

from analysis.estimate import mann_whitney, stats

from analysis.estimate.thresholds import Thresholds

#: simulated campaigns a row (stats.compare is per campaign: ~1 ms each),
#: and at q = 0, where the false claims and the power are asserted
SIMS = {0.975: 800, 0.95: 500}
SIMS_NULL = 1500
# The suite runs the default campaign's level only (the fast tier stays
# within its minutes); LOCKBENCH_SIM_FULL=1 adds the 95% table.
if not os.environ.get("LOCKBENCH_SIM_FULL"):
    SIMS = {0.975: 400}
    SIMS_NULL = 800
#: the collapses simulated at each level (95%: the fixed ones only)
MODES = {0.975: ("fixed", "Bernoulli"), 0.95: ("fixed",)}
NS = (8, 16)
QS = (0.0, 0.05, 0.10, 0.15)
HOSTS = ("quiet", "two-speed")
MARGIN = 0.05
COLLAPSE = 0.05  # a collapsed boot runs at this share of its speed
SIGMA = math.sqrt(math.log1p(0.05 ** 2))  # lognormal with CV 5%
FALSE_AT_ONE = (stats.BETTER, stats.WORSE, stats.HARM)


def thresholds(conf):
    th = Thresholds().for_looks(2)  # the default campaign's looks
    return th if conf == th.confidence else th.with_(confidence=conf)


def draw(rng, host, size):
    x = np.exp(rng.normal(0, SIGMA, size))
    if host == "two-speed":
        x = x * np.where(rng.random(size) < 0.3, 0.65, 1.0)
    return x


def collapsed(rng, mode, q, sims, n):
    """Which variant boots collapse (sims x n booleans)."""
    if mode == "fixed":
        k = round(q * n)
        return np.broadcast_to(np.arange(n) < k, (sims, n))
    return rng.random((sims, n)) < q


def short(label):
    """The label without its (n≈N) suffix; TAIL is kept whole."""
    return label if label == stats.TAIL else label.split(" (")[0]


def loss(mode, q, n):
    """The variant's true mean loss (1 - the true ratio of means)."""
    return (1 - COLLAPSE) * (round(q * n) / n if mode == "fixed" else q)


def simulate(host, n, mode, q, conf, seed):
    sims = SIMS_NULL if q == 0 else SIMS[conf]
    th = thresholds(conf)
    rng = np.random.default_rng(seed)
    b = draw(rng, host, (sims, n))
    v = draw(rng, host, (sims, n))
    down = collapsed(rng, mode, q, sims, n)
    v = np.where(down, COLLAPSE * v, v)
    shift, lo, hi = mann_whitney.shift_ci_many(b, v, conf)
    old = np.array([short(stats.verdict(math.exp(s), math.exp(x),
                                        math.exp(y), "higher", th.margin,
                                        n, th.min_n)[0])
                    for s, x, y in zip(shift, lo, hi)], dtype=object)
    cs = [stats.compare(b[i], v[i], "higher", th) for i in range(sims)]
    new = np.array([short(c.verdict) for c in cs], dtype=object)
    typical = np.array([short(c.typical) for c in cs], dtype=object)
    mlo = np.array([c.mean_ci_lo for c in cs])
    mhi = np.array([c.mean_ci_hi for c in cs])
    truth = 1 - loss(mode, q, n)
    return dict(sims=sims, new=new, old=old, typical=typical,
                hit=down.any(axis=1),
                cover=float(np.mean((mlo <= truth) & (truth <= mhi))),
                all_good=(1 - q) ** n if mode == "Bernoulli" else math.nan)


def share(x, which):
    return float(np.isin(x, which).mean())


def hit_fav(r):
    """P(some boot collapsed and the new rule says no harm or better)."""
    return float((r["hit"] & np.isin(r["new"], (stats.BETTER,
                                                stats.NO_HARM))).mean())


def mc_bound(p, sims):
    """target p plus 3 Monte Carlo standard errors."""
    return p + 3 * math.sqrt(p * (1 - p) / sims)


class EveryBoot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = {}
        seed = 700
        for conf in SIMS:
            for host in HOSTS:
                for n in NS:
                    for q in QS:
                        for mode in MODES[conf] if q else ("none",):
                            seed += 1
                            cls.rows[(conf, host, n, mode, q)] = simulate(
                                host, n, mode, q, conf, seed)
        fav = (stats.BETTER, stats.NO_HARM)
        for conf, sims in SIMS.items():
            print(f"\nevery boot counts: {sims} simulated campaigns a row "
                  f"({SIMS_NULL} at q = 0), {100 * conf:g}% CIs, margin "
                  f"{MARGIN:.0%}, higher is better; a collapsed boot runs "
                  f"at {COLLAPSE:g}x")
            print(f"{'host':9} {'n':>2} {'collapse':9} {'q':>4} "
                  f"{'loss':>6} {'P(all ok)':>9} | {'no harm':>7} "
                  f"{'old':>6} {'tail':>6} | {'false':>6} {'old':>6} | "
                  f"{'hit & no harm':>13} | {'mean CI cover':>13}")
            for (c, host, n, mode, q), r in cls.rows.items():
                if c != conf:
                    continue
                allok = ("" if math.isnan(r["all_good"])
                         else f"{100 * r['all_good']:8.1f}%")
                false = (f"{100 * share(r['new'], FALSE_AT_ONE):5.1f}% "
                         f"{100 * share(r['old'], FALSE_AT_ONE):5.1f}%"
                         if q == 0 else f"{'-':>6} {'-':>6}")
                print(f"{host:9} {n:2d} {mode:9} {100 * q:3.0f}% "
                      f"{100 * loss(mode, q, n):5.1f}% {allok:>9} | "
                      f"{100 * share(r['new'], fav):6.1f}% "
                      f"{100 * share(r['old'], fav):5.1f}% "
                      f"{100 * share(r['new'], (stats.TAIL,)):5.1f}% | "
                      f"{false} | {100 * hit_fav(r):12.1f}% | "
                      f"{100 * r['cover']:12.1f}%")

    def each(self, conf=0.975, mode=None):
        for (c, host, n, m, q), r in self.rows.items():
            if c == conf and (mode is None or m == mode):
                yield host, n, q, r

    def test_fixed_collapses_beyond_the_margin_are_not_no_harm(self):
        fav = (stats.BETTER, stats.NO_HARM)
        checked = 0
        for host, n, q, r in self.each(mode="fixed"):
            if loss("fixed", q, n) <= MARGIN:
                continue
            checked += 1
            got = share(r["new"], fav)
            self.assertLessEqual(got, mc_bound(0.025, r["sims"]),
                                 f"{host} n={n} q={q}: {got:.1%}")
        self.assertEqual(checked, 2 * 5)  # q = 10, 15% at n = 8; 5-15% at 16

    def test_bernoulli_no_harm_only_when_no_boot_collapsed(self):
        fav = (stats.BETTER, stats.NO_HARM)
        for host, n, q, r in self.each(mode="Bernoulli"):
            got = share(r["new"], fav)
            self.assertLessEqual(
                got, mc_bound(r["all_good"] + 0.025, r["sims"]),
                f"{host} n={n} q={q}: {got:.1%}")
            # one collapsed boot of n <= 16 is a loss of 0.95 / n > 5%:
            # a campaign that drew one is beyond the margin
            self.assertLessEqual(hit_fav(r), mc_bound(0.025, r["sims"]),
                                 f"{host} n={n} q={q}: {hit_fav(r):.1%}")

    def test_false_claims_at_no_difference(self):
        for conf in SIMS:
            for host, n, q, r in self.each(conf, "none"):
                got = share(r["new"], FALSE_AT_ONE)
                self.assertLessEqual(got, mc_bound(0.05, r["sims"]),
                                     f"{conf} {host} n={n}: {got:.1%}")

    def test_power_at_no_difference_close_to_the_old_rule(self):
        # on the quiet host only: on the two-speed host the mean over
        # boots carries the speed mixture's spread (CV ~18%), and the new
        # rule says no harm 7-16 points less often than the old one
        # (printed; module docstring)
        fav = (stats.BETTER, stats.NO_HARM)
        for host, n, q, r in self.each(mode="none"):
            if host != "quiet":
                continue
            new, old = share(r["new"], fav), share(r["old"], fav)
            self.assertGreaterEqual(new, old - 0.05,
                                    f"{host} n={n}: {new:.1%} vs {old:.1%}")

    def test_typical_is_the_old_rule(self):
        # compare()'s Hodges-Lehmann verdict is the old rule, and the new
        # rule only ever takes a favourable claim away from it
        for conf in SIMS:
            for host, n, q, r in self.each(conf):
                self.assertTrue(np.array_equal(r["typical"], r["old"]),
                                (conf, host, n, q))
                gained = (np.isin(r["new"], (stats.BETTER, stats.NO_HARM))
                          & ~np.isin(r["old"], (stats.BETTER,
                                                stats.NO_HARM)))
                self.assertFalse(gained.any(), (conf, host, n, q))


if __name__ == "__main__":
    unittest.main()
