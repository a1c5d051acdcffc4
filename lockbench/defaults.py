# SPDX-License-Identifier: GPL-2.0
"""The defaults a campaign file, the manifest it becomes and the analysis
that reads the manifest share: one home, so that a manifest from before
a key existed reads as the campaign file would have filled it in, and a
verdict judged without a campaign (report --margin absent, a test's
Thresholds()) uses the campaign's own default."""

import copy

#: the smallest change that counts as harm or benefit, relative
#: (campaign key `margin`; thresholds.Thresholds.margin)
MARGIN = 0.05
#: a guest's clock: the host's wall clock, or QEMU's instruction count
#: (campaign key `clock`, the runner's --clock, a boot's and a row's
#: `clock`); a campaign, boot or row that names none keeps wall time
WALL, ICOUNT = "wall", "icount"
CLOCKS = (WALL, ICOUNT)
#: clock: (boot_s, point_s, stretch), what a boot costs when no earlier
#: campaign in results/ measured one (scripts/campaign/estimate.py;
#: docs/campaigns.md prints them).  Measured on the default campaign (4
#: points of 1 s; 2-core host): wall clock 2 vCPUs boot 3.0-4.0 s, a
#: point 1.2-1.6 s beyond its second; icount 1 vCPU boot 3.2-4.8 s,
#: 3.1-4.5 host seconds per guest second.
BOOT_TIMES = {WALL: (4.0, 1.5, 1.0), ICOUNT: (4.0, 1.5, 4.5)}
#: the confidence of a campaign judged at one look (thresholds.Thresholds)
CONFIDENCE = 0.95
#: the format of a run directory's manifest.json that
#: scripts/campaign/manifest.py writes and analysis/parse/rundir.py reads
MANIFEST_FORMAT = 1
#: the lock under test when a campaign names none (campaign key `target`,
#: kernel-patches/targets/NAME.toml): the OMAP mailbox registry's lock,
#: whose lock_stat class has the same name
TARGET = "mboxes_lock"


def look_confidence(looks, confidence=CONFIDENCE):
    """The confidence of each look of a campaign that may stop at any of
    `looks` looks: Bonferroni over the looks, so that the chance of a
    false claim at any look stays within 1 - confidence.  The level
    every verdict is judged at (thresholds.Thresholds.for_looks) and every
    output prints (report.html too, which reads no statistics)."""
    return confidence if looks <= 1 else 1 - (1 - confidence) / looks


#: every campaign key whose default is a value (the rest are required, or
#: computed: baseline, compare, primary_metric, primary_points,
#: silence_s): scripts/campaign/file.py fills them in, and the analysis
#: reads a manifest's campaign through campaign_value, so that a
#: manifest from before a key existed reads as the file would have
#: filled it in
CAMPAIGN = {"description": "", "control": False, "pin": True, "meter": True,
            "arches": ["arm"],
            # kernel-patches/kernels.toml's first (guest/variant_name.py
            # DEFAULT_KERNEL; tests/unit/test_variant.py holds them equal)
            "kernels": ["6.1"],
            "order": "alternate", "seed": 1, "mem_mb": 512, "margin": MARGIN,
            "target": TARGET, "perf": {}, "clock": WALL, "icount_repetitions": 3}
#: perf = { ... }
PERF = {"stat": True, "lock": False}


def campaign_value(campaign, key):
    """A manifest campaign's KEY, or its default when the campaign (an
    older one) does not have it: the one reading of a default."""
    v = campaign.get(key)
    return copy.deepcopy(CAMPAIGN[key]) if v is None and key in CAMPAIGN else v
