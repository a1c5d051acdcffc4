# SPDX-License-Identifier: GPL-2.0
"""scripts/guest_paths.py: a workload's path against a kernel's .config,
and calibrate's refusals that rest on it (no boot: a missing option is
refused before one, an ENOENT run and an absent class after)."""
import os
import tempfile
import unittest

from scripts import calibrate, guest_paths


def config(*opts):
    fd, path = tempfile.mkstemp(suffix=".config")
    with os.fdopen(fd, "w") as f:
        f.write("# CONFIG_NET is not set\n")
        for o in opts:
            f.write(f"{o}=y\n")
    return path


class Missing(unittest.TestCase):
    def test_net_path_without_net(self):
        cfg = config("CONFIG_SYSFS")
        self.addCleanup(os.unlink, cfg)
        msg = guest_paths.missing("read /sys/class/net/lo/mtu", cfg)
        self.assertEqual(msg, "/sys/class/net/lo/mtu does not exist in its guest: it needs "
                         "CONFIG_NET (kernel-patches/configs/net.config)")
        # the job's spelling is the same workload
        self.assertEqual(guest_paths.missing("read:/sys/class/net/lo/mtu", cfg), msg)

    def test_net_path_with_net(self):
        cfg = config("CONFIG_SYSFS", "CONFIG_NET")
        self.addCleanup(os.unlink, cfg)
        self.assertIsNone(guest_paths.missing("read /sys/class/net/lo/mtu", cfg))

    def test_unknown_path_and_other_workloads(self):
        cfg = config()
        self.addCleanup(os.unlink, cfg)
        self.assertIsNone(guest_paths.missing("read /proc/iomem", cfg))
        self.assertIsNone(guest_paths.missing("syscall 39", cfg))
        self.assertIsNone(guest_paths.missing("tasklist", cfg))
        self.assertIsNone(guest_paths.missing("read /sys/class/net/lo/mtu", cfg + ".none"))

    def test_longest_prefix_wins(self):
        self.assertEqual(guest_paths.provider("/proc/fs/fscache/stats")[1],
                         ["CONFIG_FSCACHE", "CONFIG_FSCACHE_STATS"])
        self.assertEqual(guest_paths.provider("/proc/fs/fscache/cookies")[1],
                         ["CONFIG_FSCACHE", "CONFIG_PROC_FS"])
        self.assertIsNone(guest_paths.provider("/proc/networks"))

    def test_enoent_words(self):
        self.assertIn("CONFIG_NET (kernel-patches/configs/net.config)",
                      guest_paths.enoent("read:/proc/net/dev"))
        self.assertEqual(guest_paths.enoent("read:/no/such"),
                         "/no/such does not exist in the guest (every op failed with ENOENT)")


class CalibrateRefusals(unittest.TestCase):
    """An ENOENT run: its path and what provides it, in one line."""

    def test_enoent_point(self):
        src = os.path.join(os.path.dirname(__file__), "fixtures", "calibrate", "points", "a")
        d = tempfile.mkdtemp()
        self.addCleanup(__import__("shutil").rmtree, d)
        pd = os.path.join(d, "cal-300ms")
        os.mkdir(pd)
        with open(os.path.join(src, "results.txt")) as f:
            text = f.read()
        text = (text.replace("workload=read:/proc/iomem", "workload=read:/sys/class/net/lo/mtu")
                .replace("hits=901 misses=0 writes=0 errors=0",
                         "hits=0 misses=0 writes=0 errors=901 err_ENOENT=901")
                .replace("end status=SUCCESS", "end status=FAILURE"))
        with open(os.path.join(pd, "results.txt"), "w") as f:
            f.write(text)
        with open(os.path.join(src, "lock_stat.txt")) as f, \
                open(os.path.join(pd, "lock_stat.txt"), "w") as g:
            g.write(f.read())
        with self.assertRaises(calibrate.CalibrateError) as cm:
            calibrate.measure_point(pd, "resource_lock")
        self.assertEqual(str(cm.exception),
                         "point cal-300ms: /sys/class/net/lo/mtu does not exist in the guest "
                         "(every op failed with ENOENT): it needs CONFIG_NET "
                         "(kernel-patches/configs/net.config) and CONFIG_SYSFS")


if __name__ == "__main__":
    unittest.main()
