# SPDX-License-Identifier: GPL-2.0
"""Lock targets are data (kernel-patches/targets/*.toml, scripts/lock_target.py):
each names a lock its variants really convert, workloads the guest really
runs, and every lockload workload belongs to exactly one target; what
lockload's case table and fs_writer's modes say of a target's lock
agrees with its file; a campaign takes its lock class from its target
and refuses points no workload of the target drives."""

import os
import re
import sys
import tempfile
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from lockbench import workloads
from guest import job  # noqa: E402
from scripts import variant  # noqa: E402
from scripts.campaign import file as campaign_file  # noqa: E402
from scripts import lock_target as target  # noqa: E402


class ShippedTargets(unittest.TestCase):
    def test_each_names_a_lock_its_spinlock_variant_converts(self):
        names = target.names()
        self.assertIn("mboxes_lock", names)
        for name in names:
            with self.subTest(name):
                t = target.load(name)
                rw, spin = (variant.load(v) for v in t["variants"])
                # The conversion is the spinlock side's last patch, the one
                # patch it has beyond the rwlock side's series.
                self.assertEqual(spin["patches"][:-1], rw["patches"])
                with open(spin["patches"][-1]) as f:
                    diff = f.read()
                self.assertIn(f"+++ b/{t['file']}\n", diff)
                lk = re.escape(t["lock"])
                # static, or global with an attribute (tasklist_lock's
                # "__cacheline_aligned DEFINE_RWLOCK(tasklist_lock);",
                # spelled out as a spinlock_t so that checkpatch reads it)
                self.assertRegex(diff, rf"\n-(static |__\w+ )?DEFINE_RWLOCK\({lk}\);")
                self.assertRegex(diff, rf"\n\+(static DEFINE_SPINLOCK\({lk}\);|DEFINE_SPINLOCK"
                                 rf"\({lk}\);|spinlock_t {lk} __\w+ = __SPIN_LOCK_UNLOCKED\({lk}\);)")

    def test_workloads_are_the_guests_and_each_has_one_target(self):
        owner = {}
        for name in target.names():
            for w in target.load(name)["workloads"]:
                self.assertIn(w, job.WORKLOADS, name)
                self.assertNotIn(w, owner, f"{w}: {owner.get(w)} and {name}")
                owner[w] = name
        self.assertEqual(set(owner), set(job.WORKLOADS))

    def test_a_writer_point_carries_its_targets_writer(self):
        """A point's writer_hz loads fs_writer.ko in the mode its target
        names: the job line the host renders says it (writer=MODE), and
        guest/inside/init.sh passes it through, naming no case nor mode
        itself."""
        with open(os.path.join(ROOT, "guest", "inside", "init.sh")) as f:
            code = "".join(ln for ln in f if not ln.lstrip().startswith("#"))
        self.assertIn('lock="$writer"', code)
        for name in target.names():
            t = target.load(name)
            for w in t["workloads"]:
                if w == "module" or job.is_generic(w):
                    continue
                with self.subTest(w):
                    self.assertNotRegex(code, rf"\b({w}|{t['writer']})\b")
                    text = job.render([("p", {"workload": w, "writer_hz": 10})], {})
                    self.assertIn(f"point p workload={w} writer_hz=10 writer={t['writer']}\n",
                                  text)


def c_source(*parts):
    """A C file of the repository, its comments left out."""
    with open(os.path.join(ROOT, *parts)) as f:
        return re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)


class OneSource(unittest.TestCase):
    """What drives a lock is said in its target file; the C code that
    does it cannot drift from it: lockload's case table (ll_cases) has
    exactly the targets' cases, each counting its target's lock class
    and counting writer pairs only where the target names a writer, and
    fs_writer.ko's lock= modes are exactly the targets' writers."""

    # { "name", op, setup, "lock", exec_locks, writer_reads,
    #   writer_writes, thread_writes, min_args, max_args }
    CASE_RE = re.compile(r'\{ "(\w+)", \w+, \w+, "([^"]+)", \w+, (\d+), (\d+), \d+, '
                         r'\d+, [^}]+ \}')

    def test_lockload_cases_are_the_targets(self):
        table = re.search(r"ll_cases\[\] = \{(.*?)\n\};", c_source(
            "guest", "inside", "lockload", "lockload.c"), re.S).group(1)
        rows = self.CASE_RE.findall(table)
        self.assertEqual(len(rows), len(re.findall(r"\{ \"", table)), table)
        named = {n: (lk, int(r) + int(w)) for n, lk, r, w in rows if n not in workloads.GENERIC}
        self.assertEqual(set(named), set(job.WORKLOADS) - {"module"})
        for name in target.names():
            t = target.load(name)
            for w in t["workloads"]:
                if w in named:
                    with self.subTest(w):
                        lock, per_pair = named[w]
                        self.assertEqual(lock, t["lock_class"])
                        self.assertEqual(per_pair > 0, "writer" in t)

    def test_fs_writer_modes_are_the_targets_writers(self):
        src = c_source("bench-module", "fs_writer.c")
        modes = set(re.findall(r'strcmp\(lock, "(\w+)"\)', src))
        modes.add(re.search(r'static char \*lock = "(\w+)";', src).group(1))
        writers = {target.load(n).get("writer") for n in target.names()} - {None}
        self.assertEqual(modes, writers)


class BadTargets(unittest.TestCase):
    def refused(self, text, want):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "t_lock.toml"), "w") as f:
                f.write(text)
            with mock.patch.object(target, "TARGET_DIR", d):
                with self.assertRaises(target.TargetError) as cm:
                    target.load("t_lock")
        msg = str(cm.exception)
        self.assertEqual(len(msg.splitlines()), 1, msg)
        self.assertIn(want, msg)

    GOOD = ('description = "d"\nfile = "fs/x.c"\nlock = "x_lock"\nlock_class = "x_lock"\n'
            'variants = ["before", "after"]\nworkloads = ["module"]\ncross_check = "1:1"\n')

    def test_refused(self):
        self.refused(self.GOOD + 'extra = 1\n', "unknown key 'extra'")
        self.refused(self.GOOD.replace('lock_class = "x_lock"', 'lock_class = "a b"'),
                     "lock_class: must be")
        self.refused(self.GOOD.replace('variants = ["before", "after"]', 'variants = ["before"]'),
                     "variants: must be [rwlock variant, spinlock variant]")
        self.refused(self.GOOD.replace('workloads = ["module"]\n', ''), "workloads: must be")
        self.refused("not toml [", "t_lock.toml")
        self.refused(self.GOOD + 'writer = "x lock"\n', "writer: must be an fs_writer.ko "
                     "lock= mode")
        self.refused(self.GOOD + 'writer = "x_lock"\n', "writer: only for a target with a "
                     "lockload case of its own")
        with self.assertRaises(target.TargetError) as cm:
            target.load("../variants/before")
        self.assertIn("unknown target", str(cm.exception))


class CampaignTarget(unittest.TestCase):
    def load(self, body):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write('name = "t"\nvariants = ["before"]\ncpus = [2]\nrepetitions = 1\n' + body)
        self.addCleanup(os.unlink, f.name)
        return campaign_file.load(f.name)

    def test_lock_class_comes_from_the_target(self):
        camp = self.load('[[points]]\nid = "p"\nread_pct = 90\nmailboxes = 16\n')
        self.assertEqual((camp["target"], camp["lock_class"]), ("mboxes_lock", "mboxes_lock"))
        camp = self.load('target = "binfmt_lock"\n[[points]]\nid = "p"\nworkload = "execve"\n')
        self.assertEqual(camp["lock_class"], "binfmt_lock")

    def test_points_must_drive_the_target(self):
        for body, want in (
                ('target = "binfmt_lock"\n[[points]]\nid = "p"\nworkload = "proc_lookup"\n',
                 "points[1].workload: 'proc_lookup' does not drive target binfmt_lock"),
                ('[[points]]\nid = "p"\nworkload = "execve"\n',
                 "points[1].workload: 'execve' does not drive target mboxes_lock"),
                ('lock_class = "binfmt_lock"\n[[points]]\nid = "p"\nread_pct = 1\nmailboxes = 1\n',
                 "unknown key 'lock_class'")):
            with self.subTest(want), self.assertRaises(campaign_file.CampaignError) as cm:
                self.load(body)
            self.assertIn(want, str(cm.exception))


if __name__ == "__main__":
    unittest.main()


class ConvertCampaign(unittest.TestCase):
    """The campaign ./run.sh convert --workload writes names variant
    files, whatever variant the base was: on a base of another arch
    or kernel version it carries that arch and version as its arches and
    kernels (a campaign's variants are files, not targets)."""

    def load(self, base):
        import tomllib
        text = target.campaign("my-spin-x", "x_lock", (base, "spin-x"), "read /proc/iomem")
        return tomllib.loads(text)

    def test_default_base(self):
        c = self.load("before")
        self.assertEqual(c["variants"], ["before", "spin-x"])
        self.assertNotIn("arches", c)
        self.assertNotIn("kernels", c)

    def test_versioned_base(self):
        c = self.load("before@6.12")
        self.assertEqual((c["variants"], c["kernels"]), (["before", "spin-x"], ["6.12"]))
        self.assertNotIn("arches", c)
        c = self.load("before@arm64@6.12")
        self.assertEqual((c["variants"], c["arches"], c["kernels"]),
                         (["before", "spin-x"], ["arm64"], ["6.12"]))


class Contexts(unittest.TestCase):
    """The answer's contexts line: only for a target the kernel also
    takes from interrupts; which points reached them, or that none did."""

    def test_sentence(self):
        from analysis.render import summary
        camp = {"lock_class": "tasklist_lock", "lock_interrupt": "the sysrq handlers",
                "points": [{"id": "a", "workload": "tasklist"},
                           {"id": "b", "workload": "tasklist", "writer_hz": 200}]}
        self.assertEqual(summary.contexts_s(camp),
                         "Contexts: process (every point), hard interrupt and softirq "
                         "(at b: the sysrq handlers).")
        camp["points"] = camp["points"][:1]
        self.assertEqual(summary.contexts_s(camp),
                         "Contexts: process only. The kernel also takes tasklist_lock in "
                         "interrupt context (the sysrq handlers), which no point drove: "
                         "lockdep has not seen that use, so no verdict here says the "
                         "conversion is safe there.")
        self.assertEqual(summary.contexts_s({"lock_class": "binfmt_lock", "points": []}), "")

    def test_campaign_carries_the_targets_interrupt(self):
        c = campaign_file.load(os.path.join(os.path.dirname(__file__), "..", "..",
                                            "campaigns", "tasklist.toml"))
        self.assertIn("sysrq", c["lock_interrupt"])
        c = campaign_file.load(os.path.join(os.path.dirname(__file__), "..", "..",
                                            "campaigns", "binfmt.toml"))
        self.assertNotIn("lock_interrupt", c)
