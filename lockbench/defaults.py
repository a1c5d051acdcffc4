# SPDX-License-Identifier: GPL-2.0
"""The defaults a campaign file, the manifest it becomes and the analysis
that reads the manifest share: one home, so that a manifest from before
a key existed reads as the campaign file would have filled it in, and a
verdict judged without a campaign (report --margin absent, a test's
Thresholds()) uses the campaign's own default."""

#: the smallest change that counts as harm or benefit, relative
#: (campaign key `margin`; stats.Thresholds.margin)
MARGIN = 0.05
#: the format of a results directory's manifest.json that
#: scripts/campaign/manifest.py writes and analysis/parse/rundir.py reads
MANIFEST_FORMAT = 1
#: the lock under test when a campaign names none (campaign key `target`,
#: kernel-patches/targets/NAME.toml): the OMAP mailbox registry's lock,
#: whose lock_stat class has the same name
TARGET = "mboxes_lock"
