# SPDX-License-Identifier: GPL-2.0
"""Issue #30, "the lock measured is the lock converted": a variant file
says which locks its series converts (converts = [...], scripts/
variant.py, copied into build-meta.json), and a campaign whose compared
variants differ in a converted lock that none of its points drives is
refused when it is loaded (scripts/campaign/file.py), in one line naming
the pair, the lock and the workloads that would drive it.  No kernel:
the variants are a temporary folder (--variants DIR, variant.add_dirs)
and the builds, where a dry run needs them, a stand-in tree
(LOCKBENCH_BUILD), as in test_campaign_estimate.py.

Also the small follow-ups of the same change: ./run.sh analyze on a
folder that is not a run directory, the hosts' progress line, the
runner's and the campaign's hints for a variant of a folder of its own.

Run: /usr/bin/python3 -m unittest tests.unit.test_converted_lock
"""

import glob
import inspect
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from guest import variant_name, judge, qemu
from scripts.campaign import file as campaign_file
from scripts.campaign import hosts as campaign_hosts
from scripts.campaign import manifest as campaign_manifest
from scripts import variant as variantmod
from tests.unit import campaign_stand_ins as standin

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
BEFORE_0001 = "0001-mailbox-add-the-2.6.34-OMAP-mailbox-name-registry-fo.patch"

# What ./run.sh convert --out DIR kernel/resource.c resource_lock writes
# (its patch stands in as before's own: the check reads the file only).
RESOURCE = f"""# before with resource_lock (kernel/resource.c) a spinlock: written by ./run.sh convert.
description = "resource_lock in kernel/resource.c as a spinlock (on before)"
patches = ["{BEFORE_0001}"]
configs = ["mbox-registry.config", "lockstat.config"]
converts = ["resource_lock"]
"""

MODULE_POINTS = """cpus = [1]
repetitions = 2
[[points]]
id = "p"
read_pct = 50
mailboxes = 16
"""

FS_POINTS = """target = "file_systems_lock"
cpus = [1]
repetitions = 2
[[points]]
id = "procfs"
workload = "proc_filesystems"
"""


def campaign_text(variants, points, compare=None):
    out = f'name = "conv"\nvariants = {json.dumps(variants)}\n'
    if compare:
        out += f"compare = {json.dumps(compare)}\n"
    return out + points


class Folder(unittest.TestCase):
    """A temporary folder of variant files made known to this process
    (variant.add_dirs) and to its children, undone after each test."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="converted-lock-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.vdir = os.path.join(self.tmp, "vars")
        os.mkdir(self.vdir)
        self.write_variant("spin-resource-lock", RESOURCE)
        saved = list(variant_name.VARIANT_DIRS)
        self.addCleanup(variant_name.VARIANT_DIRS.__setitem__, slice(None), saved)
        env = mock.patch.dict(os.environ)
        env.start()
        self.addCleanup(env.stop)
        variantmod.add_dirs([self.vdir])

    def write_variant(self, name, text):
        with open(os.path.join(self.vdir, name + ".toml"), "w") as f:
            f.write(text)

    def write_campaign(self, text, name="c.toml"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def refused(self, text):
        with self.assertRaises(campaign_file.CampaignError) as cm:
            campaign_file.load(self.write_campaign(text))
        msg = str(cm.exception)
        self.assertEqual(len(msg.splitlines()), 1, msg)
        self.assertEqual(cm.exception.exit_code, 2)
        return msg


class Converts(Folder):
    """The variant file's converts key."""

    def test_shipped_variants(self):
        want = {"before": [], "before-plain": [], "after": ["mboxes_lock"],
                "after-plain": ["mboxes_lock"], "rcu": ["mboxes_lock"],
                "rcu-plain": ["mboxes_lock"], "spin-binfmt-lock": ["binfmt_lock"],
                "spin-file-systems-lock": ["file_systems_lock"],
                "spin-proc-subdir-lock": ["proc_subdir_lock"],
                "before-rt@arm64@6.12": [], "after-rt@arm64@6.12": ["mboxes_lock"],
                "before-net": [], "spin-tasklist-lock": ["tasklist_lock"]}
        shipped = sorted(os.path.basename(f)[:-5] for f in
                         glob.glob(os.path.join(ROOT, "kernel-patches", "variants", "*.toml")))
        self.assertEqual(shipped, sorted(t.split("@")[0] for t in want))
        for name, locks in want.items():
            self.assertEqual(variantmod.load(name)["converts"], locks, name)

    def test_default_empty_and_read(self):
        self.write_variant("plain", RESOURCE.replace('converts = ["resource_lock"]\n', ""))
        self.assertEqual(variantmod.load("plain")["converts"], [])
        self.assertEqual(variantmod.load("spin-resource-lock")["converts"], ["resource_lock"])
        self.assertEqual(variantmod.load("spin-resource-lock@arm64")["converts"],
                         ["resource_lock"])

    def test_show_prints_them(self):
        cp = subprocess.run([PY, "-m", "scripts.variant", "show", "spin-resource-lock"],
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                            capture_output=True, text=True)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertIn("converts resource_lock\n", cp.stdout)

    def test_copied_into_build_meta(self):
        config = os.path.join(self.tmp, ".config")
        with open(config, "w") as f:
            f.write("CONFIG_LOCK_STAT=y\n")
        cp = subprocess.run(
            [PY, "-m", "scripts.variant", "meta", "spin-resource-lock", "--kernel-version",
             "6.1", "--package-version", "6.1.1", "--config", config, "--compiler", "gcc",
             "--build-seconds", "1", "--tree-commit", "t", "--harness-commit", "h"],
            cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        meta = json.loads(cp.stdout)
        self.assertEqual(meta["converts"], ["resource_lock"])
        self.assertEqual(meta["lookup_lock"], "lock")

    def test_bad_value_refused_in_one_line(self):
        for bad in ('"resource_lock"', '["resource-lock"]', "[1]", '["a", "a"]',
                    '["x;rm -rf"]', "true"):
            with self.subTest(converts=bad):
                self.write_variant("bad-conv", RESOURCE.replace('["resource_lock"]', bad))
                with self.assertRaises(variantmod.VariantError) as cm:
                    variantmod.load("bad-conv")
                msg = str(cm.exception)
                self.assertEqual(len(msg.splitlines()), 1, msg)
                self.assertIn("bad-conv.toml: converts must be a list of distinct C "
                              "identifiers", msg)
        # The CLI and a campaign naming it: one line, exit 2, no traceback.
        cp = subprocess.run([PY, "-m", "scripts.variant", "show", "bad-conv"], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True,
                            text=True)
        self.assertEqual(cp.returncode, 2, cp.stderr)
        self.assertEqual(len(cp.stderr.splitlines()), 1, cp.stderr)
        self.assertRegex(cp.stderr, r"^variant: .*bad-conv\.toml: converts must be ")
        msg = self.refused(campaign_text(["before", "bad-conv"], MODULE_POINTS))
        self.assertIn("bad-conv.toml: converts must be", msg)


class Rule(Folder):
    """The campaign loader's rule."""

    def test_module_points_vs_resource_lock_refused(self):
        msg = self.refused(campaign_text(["before", "spin-resource-lock"], MODULE_POINTS))
        self.assertIn("variants: compared variants before and spin-resource-lock differ in "
                      "the converted lock resource_lock, which none of the campaign's points "
                      "drives (their workloads: module); no workload ships for resource_lock",
                      msg)
        self.assertIn("docs/targets.md", msg)

    def test_module_points_vs_after_accepted(self):
        c = campaign_file.load(self.write_campaign(campaign_text(["before", "after"],
                                                                 MODULE_POINTS)))
        self.assertEqual(c["compare"], [["before", "after"]])

    def test_proc_filesystems_vs_spin_file_systems_lock_accepted(self):
        c = campaign_file.load(self.write_campaign(
            campaign_text(["before", "spin-file-systems-lock"], FS_POINTS)))
        self.assertEqual(c["lock_class"], "file_systems_lock")

    def test_proc_filesystems_vs_after_refused(self):
        msg = self.refused(campaign_text(["before", "after"], FS_POINTS))
        self.assertIn("compared variants before and after differ in the converted lock "
                      "mboxes_lock, which none of the campaign's points drives (their "
                      "workloads: proc_filesystems); the workloads that drive it: module "
                      "(kernel-patches/targets/mboxes_lock.toml)", msg)

    def test_compare_pairs_only(self):
        # after and spin-resource-lock both in the campaign, but only
        # before/after compared: accepted; the pair named when compared.
        variants = ["before", "after", "spin-resource-lock"]
        campaign_file.load(self.write_campaign(
            campaign_text(variants, MODULE_POINTS, [["before", "after"]])))
        msg = self.refused(campaign_text(variants, MODULE_POINTS,
                                         [["before", "after"], ["after", "spin-resource-lock"]]))
        self.assertIn("compare: compared variants after and spin-resource-lock differ in the "
                      "converted lock resource_lock", msg)

    def test_module_points_vs_converted_target_names_its_workloads(self):
        msg = self.refused(campaign_text(["before", "spin-file-systems-lock"], MODULE_POINTS))
        self.assertIn("file_systems_lock, which none of the campaign's points drives (their "
                      "workloads: module); the workloads that drive it: proc_filesystems, "
                      "mount_sysfs, sysfs_index (kernel-patches/targets/file_systems_lock.toml)",
                      msg)

    def test_same_converts_not_checked(self):
        # rcu and after convert the same lock: the rule has nothing to say.
        campaign_file.load(self.write_campaign(campaign_text(["after", "rcu"], MODULE_POINTS)))

    def test_every_arch(self):
        text = campaign_text(["before", "spin-resource-lock"], 'arches = ["arm", "arm64"]\n'
                             + MODULE_POINTS)
        msg = self.refused(text)
        self.assertIn("before and spin-resource-lock differ", msg)
        self.assertNotIn("@arm64", msg)


class ShippedCampaigns(unittest.TestCase):
    """Every campaign of campaigns/ and tests/campaigns/ (not bad/) passes
    the rule (the tests' own variants, tests/variants/, known as the
    suite knows them)."""

    def setUp(self):
        self.files = sorted(glob.glob(os.path.join(ROOT, "campaigns", "*.toml"))
                            + glob.glob(os.path.join(ROOT, "tests", "campaigns", "*.toml")))
        self.assertGreater(len(self.files), 15)
        saved = list(variant_name.VARIANT_DIRS)
        self.addCleanup(variant_name.VARIANT_DIRS.__setitem__, slice(None), saved)
        env = mock.patch.dict(os.environ)
        env.start()
        self.addCleanup(env.stop)
        variantmod.add_dirs([os.path.join(ROOT, "tests", "variants")])

    def test_all_pass_the_rule(self):
        for path in self.files:
            with self.subTest(campaign=os.path.relpath(path, ROOT)):
                seen = []
                real = campaign_file._converted_locks

                def check(*args, seen=seen, real=real):
                    try:
                        real(*args)
                    except campaign_file.CampaignError as e:
                        seen.append(str(e))
                        raise
                    seen.append(None)

                with mock.patch.object(campaign_file, "_converted_locks", check):
                    try:
                        campaign_file.load(path)
                    except campaign_file.CampaignError as e:
                        # Refused by another rule, after this one.
                        self.assertTrue(seen, f"refused before the rule: {e}")
                self.assertEqual(seen, [None])

    def test_all_load(self):
        """Every shipped campaign loads whole: a rule added later (a paced
        point's primary metric) must not leave one refused unnoticed, as
        campaigns/crossover.toml was."""
        for path in self.files:
            with self.subTest(campaign=os.path.relpath(path, ROOT)):
                try:
                    campaign_file.load(path)
                except campaign_file.CampaignError as e:
                    self.fail(str(e))


class DryRun(Folder):
    """./run.sh campaign FILE --variants DIR --dry-run, on stand-in builds:
    refused in one line before any build is looked at; accepted runs on."""

    def setUp(self):
        super().setUp()
        build = standin.build_tree(self.tmp, ("before", "after", "spin-resource-lock"))
        self.env = dict(os.environ, LOCKBENCH_BUILD=build, PYTHONPATH=ROOT)
        self.env.pop("LOCKBENCH_VARIANT_PATH", None)

    def dry_run(self, variants):
        path = self.write_campaign(campaign_text(variants, MODULE_POINTS))
        return path, subprocess.run(
            [PY, "-m", "scripts.campaign", path, "--variants", self.vdir, "--dry-run"],
            cwd=ROOT, env=self.env, capture_output=True, text=True)

    def test_refused(self):
        path, cp = self.dry_run(["before", "spin-resource-lock"])
        self.assertEqual(cp.returncode, 2, cp.stderr)
        self.assertEqual(cp.stdout, "")
        self.assertEqual(len(cp.stderr.splitlines()), 1, cp.stderr)
        self.assertNotIn("Traceback", cp.stderr)
        self.assertTrue(cp.stderr.startswith(
            f"campaign: {path}: variants: compared variants before and spin-resource-lock "
            "differ in the converted lock resource_lock"), cp.stderr)

    def test_accepted(self):
        _path, cp = self.dry_run(["before", "after"])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertIn("r01-after-c1: after 1 vCPUs", cp.stdout)


class FollowUps(unittest.TestCase):
    """The small follow-ups of the earlier helpers' work."""

    def test_analyze_not_a_results_dir(self):
        with tempfile.TemporaryDirectory() as d:
            cp = subprocess.run([PY, "-m", "analysis.analyze", d], cwd=ROOT,
                                env=dict(os.environ, PYTHONPATH=ROOT),
                                capture_output=True, text=True)
            self.assertEqual(cp.returncode, 2, cp.stderr)
            self.assertEqual(cp.stderr, f"analyze: {d} is not a run directory "
                             "(no manifest.json; ./run.sh campaign makes one)\n")
            # A folder of run directories names the newest for analyze.
            os.mkdir(os.path.join(d, "run-1"))
            open(os.path.join(d, "run-1", "manifest.json"), "w").close()
            cp = subprocess.run([PY, "-m", "analysis.analyze", d], cwd=ROOT,
                                env=dict(os.environ, PYTHONPATH=ROOT),
                                capture_output=True, text=True)
            self.assertEqual(cp.returncode, 2, cp.stderr)
            self.assertIn(f"the newest in it: ./run.sh analyze {os.path.join(d, 'run-1')})",
                          cp.stderr)

    def test_hosts_progress_line_says_the_state_once(self):
        src = inspect.getsource(campaign_hosts)
        self.assertIn("campaign_boot.ended_words(x)", src)
        self.assertNotIn("x['problems'][0]", src)

    def test_runner_unknown_variant_hint(self):
        with self.assertRaises(judge.RunError) as cm:
            qemu.artifacts("no-such-variant")
        self.assertEqual(cm.exception.exit_code, 2)
        self.assertIn("--variants DIR", str(cm.exception))
        self.assertIn("LOCKBENCH_VARIANT_PATH", str(cm.exception))

    def test_build_command_names_the_folder(self):
        self.assertEqual(campaign_manifest.build_command("after"), "./run.sh build after")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "zz-mine.toml"), "w") as f:
                f.write(RESOURCE)
            saved = list(variant_name.VARIANT_DIRS)
            self.addCleanup(variant_name.VARIANT_DIRS.__setitem__, slice(None), saved)
            with mock.patch.dict(os.environ):
                variantmod.add_dirs([d])
                self.assertEqual(campaign_manifest.build_command("zz-mine@arm64"),
                                 f"./run.sh build --variants {d} zz-mine@arm64")


if __name__ == "__main__":
    unittest.main()
