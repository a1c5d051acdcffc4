# SPDX-License-Identifier: GPL-2.0
"""throughput_run (raw throughput / (1 - steal_pct/100)) on simulated
campaigns with known answers.

The host model is what the fresh-clone default campaign of 2026-12-05
measured on this 2-core machine with other work beside it: a boot's
vCPUs wait on a host run queue for 0-4% of the run (quiet, 55% of boots)
or 10-58% (busy, 45%), independently of the kernel; the kernel's own
rate per running second varies by 6% (lognormal) from boot to boot, the
steal-corrected spread measured there. Raw throughput is that rate times
the share of the run the vCPUs ran.

Checked, at n = 8 and 16 boots a side and the default campaign's
per-look confidence (97.5%): the false-claim rate at a true 1.00 and the
CI's coverage of throughput_run; how often it decides where raw
throughput cannot; and the case that would make it lie, a kernel that
keeps its own vCPUs off the host: its own QEMU threads run 5 points of a
core more (0.5% +- 0.2 otherwise) and its steal is that much higher (5
and 10 points). The `withheld (steal)` guard (guards.own_threads, its
tolerance shrinking as 1 - steal) must catch the
favourable verdict the division would give it, and must not withhold
where nothing of the kind happens. Printed as a table.
"""

import math
import unittest

import numpy as np

from analysis.verdict import guards
from analysis.estimate import mann_whitney, stats

SIMS = 2000
MARGIN = 0.05
CONF = 0.975
CV = 0.06
OWN_SD = 0.2


def host_steal(rng, size, quiet=False):
    busy = rng.random(size) < (0 if quiet else 0.45)
    return np.where(busy, rng.uniform(10, 58, size), rng.uniform(0, 4, size))


def labels(base, var, conf=CONF):
    shift, lo, hi = mann_whitney.shift_ci_many(base, var, conf)
    n = base.shape[1]
    out = [stats.verdict(math.exp(s), math.exp(a), math.exp(c), "higher",
                         MARGIN, n)[0].split(" (")[0]
           for s, a, c in zip(shift, lo, hi)]
    return np.array(out, dtype=object), np.exp(lo), np.exp(hi)


def campaign(n, ratio, self_steal, seed, own_visible=True, quiet=False):
    """Verdicts of raw and run throughput, the run CI, and whether the
    share guard fires, for SIMS simulated campaigns; own_visible=False:
    the kernel's extra steal does not show in its own QEMU threads."""
    rng = np.random.default_rng(seed)
    rb = np.exp(rng.normal(0, CV, (SIMS, n)))
    rv = ratio * np.exp(rng.normal(0, CV, (SIMS, n)))
    sb = host_steal(rng, (SIMS, n), quiet)
    sv = np.minimum(host_steal(rng, (SIMS, n), quiet) + self_steal, 99)
    raw, _, _ = labels(rb * (1 - sb / 100), rv * (1 - sv / 100))
    run, lo, hi = labels(rb, rv)
    # QEMU's own other threads, % of a core: the difference's CI, as
    # guards.own_threads takes it (exp: shift_ci_many works on logs)
    ob = 0.5 + rng.normal(0, OWN_SD, (SIMS, n))
    ov = 0.5 + (self_steal if own_visible else 0) + rng.normal(0, OWN_SD, (SIMS, n))
    _, _, own_hi = mann_whitney.shift_ci_many(np.exp(ob), np.exp(ov), CONF)
    # the tolerance shrinks with the steal the division credits
    # (guards.own_tolerance: the larger side's median steal)
    steal = np.maximum(np.median(sb, axis=1), np.median(sv, axis=1))
    guarded = own_hi > np.vectorize(guards.own_tolerance)(steal)
    return raw, run, lo, hi, guarded


def share(x, which):
    return float(np.isin(x, which).mean())


class Simulation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = {}
        seed = 500
        for n in (8, 16):
            for ratio, self_steal in ((1.00, 0), (0.90, 0), (1.00, 5),
                                      (1.00, 10)):
                seed += 1
                cls.rows[(n, ratio, self_steal)] = campaign(
                    n, ratio, self_steal, seed)
            # 10 points of steal the kernel makes where its own QEMU
            # threads do not show it: only raw throughput can see it
            seed += 1
            cls.rows[(n, 1.00, -10)] = campaign(n, 1.00, 10, seed,
                                                own_visible=False)
            seed += 1
            cls.quiet = getattr(cls, "quiet", {})
            cls.quiet[n] = campaign(n, 1.00, 10, seed, own_visible=False,
                                    quiet=True)
        print(f"\nthroughput_run on simulated campaigns ({SIMS} a row, "
              f"{100 * CONF:g}% CIs, margin {100 * MARGIN:g}%):")
        print("  n  ratio  self-steal | raw decided | run decided | run "
              "false | run coverage | favourable let through")
        for (n, ratio, st), (raw, run, lo, hi, g) in cls.rows.items():
            false = (("better", "worse", "harm") if ratio == 1 and not st
                     else ("better", "no harm"))
            fav = np.isin(run, ("better", "no harm"))
            print(f" {n:2d}  {ratio:.2f}  {st:3d}        | "
                  f"{share(raw, stats.DECIDED):10.3f} | "
                  f"{share(run, stats.DECIDED):10.3f} | "
                  f"{share(run, false):9.3f} | "
                  f"{float(((lo <= ratio) & (ratio <= hi)).mean()):11.3f} | "
                  f"{float((fav & ~g).mean()):.3f}")

    def bound(self, p):
        return p + 3 * math.sqrt(p * (1 - p) / SIMS)

    def test_no_false_claims_at_one(self):
        for n in (8, 16):
            _, run, lo, hi, _ = self.rows[(n, 1.00, 0)]
            self.assertLessEqual(share(run, ("better", "worse", "harm")),
                                 self.bound(1 - CONF))
            self.assertGreaterEqual(float(((lo <= 1) & (1 <= hi)).mean()),
                                    CONF - 3 * math.sqrt(
                                        CONF * (1 - CONF) / SIMS))

    def test_decides_where_raw_cannot(self):
        raw, run, _, _, _ = self.rows[(16, 1.00, 0)]
        self.assertGreater(share(run, (stats.NO_HARM,)), 0.4)
        self.assertGreater(share(run, stats.DECIDED),
                           3 * share(raw, stats.DECIDED))
        raw, run, _, _, _ = self.rows[(16, 0.90, 0)]
        self.assertGreater(share(run, (stats.WORSE, stats.HARM)), 0.9)
        self.assertGreater(share(run, (stats.WORSE, stats.HARM)),
                           3 * share(raw, (stats.WORSE, stats.HARM)))
        self.assertLessEqual(share(run, ("better", "no harm")),
                             self.bound(1 - CONF))

    def test_a_kernel_that_steals_from_itself_is_withheld(self):
        # 5 and 10 points of its own: raw throughput truly ~0.95 and
        # ~0.90 of the baseline's, which the division alone would hide
        for n, st in ((8, 5), (16, 5), (8, 10), (16, 10)):
            _, run, _, _, guarded = self.rows[(n, 1.00, st)]
            fav = np.isin(run, ("better", "no harm"))
            self.assertGreater(float(fav.mean()), 0.1)
            self.assertLessEqual(float((fav & ~guarded).mean()),
                                 self.bound(1 - CONF))

    def test_steal_the_guard_cannot_see(self):
        # The conflict with raw throughput is judged on raw's own verdict
        # before Holm (analysis/verdict/guards.py): a favourable run verdict where
        # raw is worse or harm is `conflict`.  Judged against a raw verdict
        # Holm had made inconclusive, run kept no harm in 26% of such
        # campaigns (issue 25); here it must be within the CI's error.
        # Steal a kernel made that its own QEMU threads do not show can
        # only come from vCPU threads sharing cores, which is why
        # throughput_run is refused in unpinned, oversubscribed and
        # --hosts boots (guards.own_threads): printed, not asserted, to
        # show what the conflict with raw throughput judged before Holm
        # still catches there.
        print("\n10 points of hidden self-steal (own QEMU threads show "
              "none): shares of campaigns where run says better/no harm, "
              "raw (unadjusted) says worse/harm, and run's favourable "
              "verdict survives the guards")
        for n in (8, 16):
            for host, (raw, run, _, _, guarded) in (
                    ("quiet", self.quiet[n]),
                    ("busy", self.rows[(n, 1.00, -10)])):
                fav = np.isin(run, ("better", "no harm"))
                clash = fav & np.isin(raw, (stats.WORSE, stats.HARM))
                left = fav & ~clash & ~guarded
                print(f" n={n:2d} {host:5}: run favourable "
                      f"{float(fav.mean()):.3f}, conflict "
                      f"{float(clash.mean()):.3f}, left "
                      f"{float(left.mean()):.3f}")
                if host == "quiet":
                    # before Holm raw is unadjusted: the conflict fires
                    self.assertGreater(float(clash.mean()), 0.0)

    def test_the_guard_does_not_withhold_an_honest_kernel(self):
        for n in (8, 16):
            _, _, _, _, guarded = self.rows[(n, 1.00, 0)]
            self.assertLessEqual(float(guarded.mean()),
                                 self.bound(1 - CONF))


if __name__ == "__main__":
    unittest.main()
