# SPDX-License-Identifier: GPL-2.0
"""Variants are arch-neutral data (scripts/variant.py): a variant is
VARIANT or VARIANT@ARCH, the arch's base fragment is merged first, the
optional arches key limits a variant, build-meta's lock implementations
come from the .config; a campaign's arches key (scripts/campaign/file.py)
expands variants, baseline and compare pairs per arch, never across."""

import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from guest import variant_name  # noqa: E402
from scripts import variant  # noqa: E402
from scripts.campaign import file as campaign_file  # noqa: E402

POINT = '\n[[points]]\nid = "p1"\nread_pct = 90\nmailboxes = 16\n'


class Targets(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(variant.split_name("before"), ("before", "arm", "6.1"))
        self.assertEqual(variant.split_name("before@arm"), ("before", "arm", "6.1"))
        self.assertEqual(variant.split_name("before@arm64"), ("before", "arm64", "6.1"))
        self.assertEqual(variant.split_name("before@6.12"), ("before", "arm", "6.12"))
        self.assertEqual(variant.split_name("before@arm64@6.12"),
                         ("before", "arm64", "6.12"))
        self.assertEqual(variant.split_name("before@6.12@arm64"),
                         ("before", "arm64", "6.12"))
        for bad in ("before@x86", "before@", "Before", "../x", "@arm64", "a@arm64@arm",
                    "a@6.12@6.1", "a@6.6", "a@6.12@", "a@6.12.1"):
            with self.subTest(bad), self.assertRaises(variant.VariantError):
                variant.split_name(bad)

    def test_names_are_variant_files_only(self):
        """build/trees holds the campaigns ./run.sh build --tree writes
        beside its variant files: those are no variants."""
        import tempfile as tf
        with tf.TemporaryDirectory() as d:
            for f in ("linux-1a2b3c4d5e6f.toml", "campaign-linux-1a2b3c4d5e6f-0123456789ab.toml",
                      "campaign-x.toml", "notes.txt"):
                open(os.path.join(d, f), "w").close()
            variant_name.VARIANT_DIRS.insert(0, d)
            try:
                names = variant.variant_names()
            finally:
                variant_name.VARIANT_DIRS.remove(d)
        self.assertIn("linux-1a2b3c4d5e6f", names)
        self.assertFalse([n for n in names if n.startswith("campaign-")], names)

    def test_kernel_table(self):
        """kernel-patches/kernels.toml names the default kernel first, the
        one lockbench/defaults.py's campaign default must name too, and a
        package for each (setup.sh installs it, build-kernel.sh extracts
        /usr/src/PACKAGE.tar.xz)."""
        from lockbench import defaults
        self.assertEqual(variant_name.DEFAULT_KERNEL, "6.1")
        self.assertEqual(defaults.CAMPAIGN["kernels"], [variant_name.DEFAULT_KERNEL])
        self.assertEqual({v: k["package"] for v, k in variant_name.KERNELS.items()},
                         {"6.1": "linux-source-6.1", "6.12": "linux-source-6.12"})
        # 32-bit ARM selects ARCH_SUPPORTS_RT only from 6.13 on.
        self.assertEqual(variant_name.KERNELS["6.12"]["rt_arches"], ["arm64"])

    def test_build_order_puts_donors_first(self):
        """./run.sh build's order (variant.py order): a variant whose series
        extends another's comes after it, whatever order it was named in."""
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = variant.main(["order", "after@arm64", "after", "rcu", "before",
                               "before@arm64", "after"])
        self.assertEqual(rc, 0)
        got = out.getvalue().split()
        self.assertEqual(sorted(got), ["after", "after@arm64", "before", "before@arm64", "rcu"])
        for late, early in (("after", "before"), ("after@arm64", "before@arm64"),
                            ("rcu", "before")):
            self.assertLess(got.index(early), got.index(late), got)

    def test_build_groups(self):
        """variant.py order --groups (tests/run-all.sh: which kernels build
        first): one group per arch and config fragments, numbered in build
        order, so before's group is 0 when before is named first; every
        name given gets its own line, in the order given."""
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = variant.main(["order", "--groups", "before", "after@arm64", "before-plain",
                               "rcu", "after", "before@arm64", "after-plain", "after",
                               "after@6.12", "before@6.12"])
        self.assertEqual(rc, 0)
        got = [line.split() for line in out.getvalue().splitlines()]
        names = [n for _, n in got]
        self.assertEqual(names, ["before", "after@arm64", "before-plain", "rcu", "after",
                                 "before@arm64", "after-plain", "after@6.12", "before@6.12"])
        g = {n: int(k) for k, n in got}
        self.assertEqual(g["before"], 0)
        self.assertEqual({g["after"], g["rcu"]}, {0})
        self.assertEqual(g["after@arm64"], g["before@arm64"])
        self.assertEqual(g["after-plain"], g["before-plain"])
        self.assertEqual(g["after@6.12"], g["before@6.12"])
        # Another kernel version is another group: never each other's donor.
        self.assertEqual(len({g["before"], g["before@arm64"], g["before-plain"],
                              g["before@6.12"]}), 4)

    def test_label_and_dirs(self):
        self.assertEqual(variant.join_name("before", "arm"), "before")
        self.assertEqual(variant.join_name("before", "arm64"), "before@arm64")
        self.assertEqual(variant.join_name("before", "arm", "6.12"), "before@6.12")
        self.assertEqual(variant.join_name("before", "arm64", "6.12"), "before@arm64@6.12")
        for t in ("before", "before@arm64", "before@6.12", "before@arm64@6.12"):
            self.assertEqual(variant.join_name(*variant.split_name(t)), t)
        self.assertEqual(variant_name.rootfs_dir("arm"), "rootfs")
        self.assertEqual(variant_name.rootfs_dir("arm64"), "rootfs-arm64")
        self.assertEqual(variant_name.guest_desc("arm64"), "qemu-system-aarch64 -M virt, cortex-a57")

    def test_one_arch_table(self):
        """guest/arches.toml is what builds and boots an arch, for the
        Python code (ARCHES, the QEMU command) and the shell scripts
        (variant.py arch, lib.sh's lb_arch_info) alike."""
        import contextlib
        import io
        from guest import qemu
        self.assertEqual(variant_name.DEFAULT_ARCH, "arm")
        for arch, info in variant.ARCHES.items():
            with self.subTest(arch=arch):
                self.assertEqual(set(info) - {"triplet"}, set(variant_name.ARCH_KEYS))
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    self.assertEqual(variant.main(["arch", arch]), 0)
                lines = dict(line.split(" ", 1) if " " in line else (line, "")
                             for line in out.getvalue().splitlines())
                self.assertEqual(lines["cross_prefix"], info["cross_prefix"])
                self.assertEqual(lines["triplet"] + "-", info["cross_prefix"])
                for cpus, gic in ((2, False), (info["gicv2_max_cpus"] + 1, True)):
                    cmd = qemu.qemu_cmd({"arch": arch, "kernel": "K"}, cpus, 256, "I")
                    self.assertEqual(cmd[:5], [info["qemu"], "-M", info["machine"]
                                               + (",gic-version=3" if gic else ""),
                                               "-cpu", info["cpu"]])
                    self.assertIn(f"console={info['console']} ", cmd[cmd.index("-append") + 1])
        self.assertEqual(variant.main(["arch", "x86"]), 2)

    def test_base_fragment_first(self):
        for arch in variant.ARCHES:
            v = variant.load(variant.join_name("before", arch))
            self.assertEqual(v["arch"], arch)
            names = [os.path.basename(c) for c in v["configs"]]
            self.assertEqual(names[0], f"virt-{arch}.config")
            self.assertEqual(names[1:], ["mbox-registry.config", "lockstat.config"])
        # arm: the fragments as before the arch became a dimension, in order
        self.assertEqual(variant.load("before")["label"], "before")
        self.assertEqual(variant.load("before@arm64")["label"], "before@arm64")

    def test_every_variant_file_is_arch_and_version_neutral(self):
        """Every shipped variant builds on every arch and kernel, but the
        PREEMPT_RT ones (arm64 selects ARCH_SUPPORTS_RT in 6.12, arm only
        from 6.13): those load where they fit and are refused elsewhere
        with the target that fits."""
        rt = {"before-rt", "after-rt"}
        shipped = os.path.join(variant_name.ROOT, "kernel-patches", "variants")
        # The shipped ones: build/trees holds a tree's commits, whose
        # kernel is the commit's (and the suite's t-tree writes some).
        for name in sorted(f[:-5] for f in os.listdir(shipped) if f.endswith(".toml")):
            for arch in variant.ARCHES:
                for kernel in variant.KERNELS:
                    target = variant.join_name(name, arch, kernel)
                    with self.subTest(target=target):
                        fits = name not in rt or (arch, kernel) == ("arm64", "6.12")
                        if fits:
                            self.assertEqual(variant.load(target)["kernel"], kernel)
                            continue
                        with self.assertRaises(variant.VariantError) as cm:
                            variant.load(target)
                        self.assertIn(f"build {name}@arm64@6.12", str(cm.exception))


class VariantFiles(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        # The one list guest/variant_name.py searches (variant.py shares it).
        variant_name.VARIANT_DIRS.insert(0, self.tmp.name)
        self.addCleanup(variant_name.VARIANT_DIRS.remove, self.tmp.name)

    def write(self, name, body):
        with open(os.path.join(self.tmp.name, name + ".toml"), "w") as f:
            f.write('description = "test"\npatches = []\n' + body)

    def error(self, target):
        with self.assertRaises(variant.VariantError) as cm:
            variant.load(target)
        return str(cm.exception)

    def test_arches_limits(self):
        self.write("onlyarm", 'configs = []\narches = ["arm"]\n')
        self.assertEqual(variant.load("onlyarm")["arches"], ["arm"])
        self.assertIn("is not for arm64 (its arches: arm; build onlyarm)", self.error("onlyarm@arm64"))

    def test_bad_arches(self):
        for val in ('[]', '["x86"]', '"arm"', '["arm", "arm"]'):
            with self.subTest(val):
                self.write("badarches", f"configs = []\narches = {val}\n")
                self.assertIn("arches must be a non-empty list", self.error("badarches"))

    def test_old_arch_key_and_base_in_configs(self):
        self.write("oldarch", 'arch = "arm"\nconfigs = []\n')
        self.assertIn("key 'arch' is gone", self.error("oldarch"))
        self.write("oldbase", 'configs = ["virt-arm.config"]\n')
        self.assertIn("merged first by itself", self.error("oldbase"))


class ConfigFlags(unittest.TestCase):
    def flags(self, text, arch):
        with tempfile.NamedTemporaryFile("w", suffix=".config", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return variant.config_flags(f.name, arch)

    def test_arm64_queued(self):
        f = self.flags("CONFIG_LOCK_STAT=y\nCONFIG_QUEUED_RWLOCKS=y\n"
                       "CONFIG_QUEUED_SPINLOCKS=y\n", "arm64")
        self.assertEqual((f["rwlock_impl"], f["spinlock_impl"]), ("qrwlock", "qspinlock"))
        self.assertTrue(f["lock_stat"])
        self.assertFalse(f["lockdep"])

    def test_preempt_rt(self):
        """Under PREEMPT_RT both locks sleep on rt_mutex, whatever the
        arch's own or queued locks would be; the model is recorded."""
        f = self.flags("CONFIG_LOCK_STAT=y\nCONFIG_PREEMPT_RT=y\nCONFIG_PREEMPTION=y\n"
                       "CONFIG_QUEUED_SPINLOCKS=y\n", "arm64")
        self.assertEqual(f["preempt"], "rt")
        self.assertEqual((f["rwlock_impl"], f["spinlock_impl"]),
                         ("rwbase_rt (sleeping, on rt_mutex)",
                          "rt_mutex (sleeping, priority inheritance)"))
        self.assertEqual(self.flags("CONFIG_PREEMPT=y\n", "arm")["preempt"], "full")
        self.assertEqual(self.flags("CONFIG_PREEMPT_VOLUNTARY=y\n", "arm")["preempt"],
                         "voluntary")
        self.assertEqual(self.flags("CONFIG_SMP=y\n", "arm")["preempt"], "none")

    def test_arm_own_locks(self):
        f = self.flags("CONFIG_LOCKDEP=y\n# CONFIG_QUEUED_RWLOCKS is not set\n", "arm")
        self.assertEqual((f["rwlock_impl"], f["spinlock_impl"]),
                         ("arch (reader-preferring)", "arch (ticket)"))


class CampaignArches(unittest.TestCase):
    def load(self, body):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write('name = "t"\ncpus = [2]\nrepetitions = 1\n' + body + POINT)
        self.addCleanup(os.unlink, f.name)
        return campaign_file.load(f.name)

    def test_default_is_arm(self):
        c = self.load('variants = ["before", "after"]\n')
        self.assertEqual(c["arches"], ["arm"])
        self.assertEqual(c["variants"], ["before", "after"])
        self.assertEqual(c["compare"], [["before", "after"]])

    def test_expanded_per_arch(self):
        c = self.load('variants = ["before", "after", "rcu"]\narches = ["arm", "arm64"]\n'
                      'compare = [["before", "after"], ["after", "rcu"]]\n')
        self.assertEqual(c["variants"], ["before", "after", "rcu", "before@arm64",
                                         "after@arm64", "rcu@arm64"])
        self.assertEqual(c["baseline"], "before")
        self.assertEqual(c["compare"], [["before", "after"], ["after", "rcu"],
                                        ["before@arm64", "after@arm64"],
                                        ["after@arm64", "rcu@arm64"]])

    def test_expanded_per_kernel(self):
        """kernels = [...] as arches: every variant on each version, pairs
        within a version, kernel by kernel; the A/A control of each
        compared baseline on each version."""
        c = self.load('variants = ["before", "after"]\nkernels = ["6.1", "6.12"]\n'
                      'control = true\n')
        self.assertEqual(c["kernels"], ["6.1", "6.12"])
        self.assertEqual(c["variants"], ["before", "after", "before@6.12", "after@6.12",
                                         "before~aa", "before@6.12~aa"])
        self.assertEqual(c["compare"], [["before", "after"], ["before@6.12", "after@6.12"]])
        self.assertEqual(c["controls"], {"before~aa": "before", "before@6.12~aa": "before@6.12"})
        c = self.load('variants = ["before-rt", "after-rt"]\narches = ["arm64"]\n'
                      'kernels = ["6.12"]\n')
        self.assertEqual(c["baseline"], "before-rt@arm64@6.12")
        with self.assertRaises(campaign_file.CampaignError) as cm:
            self.load('variants = ["before-rt", "after-rt"]\nkernels = ["6.12"]\n')
        self.assertIn("variants: variant 'before-rt' is not for arm (its arches: arm64; "
                      "build before-rt@arm64@6.12)", str(cm.exception))
        with self.assertRaises(campaign_file.CampaignError) as cm:
            self.load('variants = ["before"]\nkernels = ["6.6"]\n')
        self.assertIn("kernels: must be a non-empty list of distinct kernel versions from "
                      "6.1, 6.12", str(cm.exception))

    def test_a_control_per_compared_baseline(self):
        """Two pairs with their own baselines: each calibrated by its own
        A/A control (the PREEMPT_RT campaign: before/after beside
        before-rt/after-rt)."""
        c = self.load('variants = ["before", "after", "before-plain", "after-plain"]\n'
                      'compare = [["before", "after"], ["before-plain", "after-plain"]]\n'
                      'control = true\n')
        self.assertEqual(c["controls"], {"before~aa": "before",
                                         "before-plain~aa": "before-plain"})
        self.assertEqual(c["variants"][-2:], ["before~aa", "before-plain~aa"])
        # The baseline alone (a calibration run): its own control.
        c = self.load('variants = ["before"]\ncontrol = true\n')
        self.assertEqual((c["variants"], c["controls"]),
                         (["before", "before~aa"], {"before~aa": "before"}))

    def test_variant_cpus(self):
        """variant_cpus: a variant (and its A/A control) boots at its vCPU
        counts only, on every arch and kernel; the plan has no other cell
        of it, and the variants left at a vCPU count keep a balanced
        order among themselves."""
        from scripts.campaign import manifest
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write('name = "t"\ncpus = [1, 2]\nvariants = ["before", "after", '
                    '"before-plain", "after-plain"]\ncompare = [["before", "after"], '
                    '["before-plain", "after-plain"]]\ncontrol = true\n'
                    'clock = { 1 = "icount", 2 = "wall" }\nrepetitions = 4\n'
                    'icount_repetitions = 3\norder = "balanced"\n'
                    'variant_cpus = { before-plain = [1], after-plain = [1] }\n' + POINT)
        self.addCleanup(os.unlink, f.name)
        c = campaign_file.load(f.name)
        self.assertEqual(c["variant_cpus"], {"before-plain": [1], "after-plain": [1],
                                             "before-plain~aa": [1]})
        cells = manifest.plan(c)
        at2 = {x["variant"] for x in cells if x["cpus"] == 2}
        self.assertEqual(at2, {"before", "after", "before~aa"})
        at1 = [x["variant"] for x in cells if x["cpus"] == 1]
        self.assertEqual(sorted(set(at1)), sorted(c["variants"]))
        self.assertEqual(len(at1), 3 * 6)
        firsts = [x["variant"] for x in cells if x["cpus"] == 2 and x["pos"] == 1]
        self.assertEqual(len(set(firsts)), 3, firsts)
        for bad, words in (('variant_cpus = { rcu = [1] }\n', "not one of the campaign's"),
                           ('variant_cpus = { after = [4] }\n', "must be a non-empty list"),
                           ('variant_cpus = { after = [] }\n', "must be a non-empty list")):
            with self.subTest(bad), self.assertRaises(campaign_file.CampaignError) as cm:
                self.load('variants = ["before", "after"]\n' + bad)
            self.assertIn(words, str(cm.exception))

    def test_arm64_only_default_pairs(self):
        c = self.load('variants = ["before", "after", "rcu"]\narches = ["arm64"]\n')
        self.assertEqual(c["baseline"], "before@arm64")
        self.assertEqual(c["compare"], [["before@arm64", "after@arm64"],
                                        ["before@arm64", "rcu@arm64"]])

    def test_bad_arches(self):
        for val in ('[]', '["x86"]', '"arm64"', '["arm64", "arm64"]', '[64]'):
            with self.subTest(val), self.assertRaises(campaign_file.CampaignError) as cm:
                self.load(f'variants = ["before"]\narches = {val}\n')
            self.assertIn(": arches: must be a ", str(cm.exception))

    def test_target_names_are_not_variants(self):
        with self.assertRaises(campaign_file.CampaignError) as cm:
            self.load('variants = ["before@arm64"]\n')
        self.assertIn("unknown variant 'before@arm64'", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
