# SPDX-License-Identifier: GPL-2.0
"""Issue #30, "any lock userspace reaches, without C": the generic
guest/inside/lockload cases (read PATH, stat PATH, open PATH, syscall NR [ARG...])
as a job, a target file and a campaign spell them, the K acquisitions an
op that a target gives them (locks_per_op), and ./run.sh calibrate's rule
for measuring K (scripts/calibrate.py), on a run of the before kernel
kept in tests/unit/fixtures/calibrate (read /proc/iomem: points a and b,
resource_lock twice an op; stat /: point c, never).  No kernel.

Run: /usr/bin/python3 -m unittest tests.unit.test_generic_workload
"""
import os
import subprocess
import unittest

from analysis.parse import bench_results
from lockbench import workloads
from guest import job
from scripts import calibrate
from scripts.campaign import file as campaign_file
from scripts import lock_target as targetmod
from tests.unit.test_converted_lock import Folder, campaign_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests", "unit", "fixtures", "calibrate")
PY = "/usr/bin/python3"

RESOURCE_TARGET = """description = "resource_lock in kernel/resource.c"
file = "kernel/resource.c"
lock = "resource_lock"
lock_class = "resource_lock"
variants = ["before", "spin-resource-lock"]
workloads = ["read /proc/iomem"]
cross_check = "2 read_locks an op"

[locks_per_op]
"read /proc/iomem" = 2
"""

IOMEM_POINTS = """target = "resource_lock"
cpus = [1]
repetitions = 2
[[points]]
id = "iomem"
workload = "read /proc/iomem"
"""


class Spelling(unittest.TestCase):
    def test_tokens(self):
        for spelled, token in (("read /proc/iomem", "read:/proc/iomem"),
                               ("stat /proc/self", "stat:/proc/self"),
                               ("open /dev/null", "open:/dev/null"),
                               ("syscall 20", "syscall:20"),
                               ("syscall 54 -1 21505 0", "syscall:54:-1:21505:0")):
            self.assertEqual(job.workload_token(spelled), token)
            self.assertEqual(job.workload_token(token), token)
            self.assertEqual(workloads.workload_spelled(token), spelled)
        self.assertEqual(job.workload_token("proc_lookup"), "proc_lookup")
        self.assertFalse(job.is_generic("proc_lookup"))

    def test_refused(self):
        for bad in ("read", "read proc/iomem", "read /a b", "read  /a", "read /a:b",
                    "read /a/../etc", "read /a/..", "read /$(reboot)", "read /a'b",
                    "stat /" + "x" * 200, "syscall", "syscall 4096", "syscall -1",
                    "syscall 20 x", "syscall 1 2 3 4 5 6 7 8", "syscall 20 4294967296",
                    "write /proc/iomem", "read:/proc/iomem:/x", "", None, 3):
            with self.subTest(bad=bad):
                self.assertFalse(job.is_generic(bad))
                with self.assertRaisesRegex(job.JobError, "is not one of .* nor read PATH"):
                    job.workload_token(bad)


class Jobs(unittest.TestCase):
    def test_round_trip(self):
        pts = [("a", {"workload": "read:/proc/iomem", "locks_per_op": 2, "duration_ms": 300}),
               ("b", {"workload": "syscall:20:-1", "duration_ms": 300})]
        text = job.render(pts, {"perf_stat": "0"})
        self.assertIn("point a workload=read:/proc/iomem locks_per_op=2 duration_ms=300\n",
                      text)
        self.assertEqual(job.parse(text)[0], pts)

    def bad(self, params, regex):
        with self.assertRaisesRegex(job.JobError, regex):
            job.render([("p", params)], {})

    def test_job_spells_one_token(self):
        self.bad({"workload": "read /proc/iomem"}, "a job spells it 'read:/proc/iomem'")
        with self.assertRaisesRegex(job.JobError, "not KEY=INTEGER"):
            job.parse("lockbench-job v1\npoint p workload=read:/a;b\n")

    def test_locks_per_op_only_generic(self):
        self.bad({"workload": "proc_lookup", "locks_per_op": 1}, "locks_per_op is a generic")
        self.bad({"locks_per_op": 1}, "locks_per_op is a generic")
        self.bad({"workload": "read:/x", "locks_per_op": 0}, r"locks_per_op=0 must be .* 1\.\.1000")

    def test_no_writer(self):
        self.bad({"workload": "read:/x", "writer_hz": 10}, "a generic workload has no writer")

    def test_results_param_line(self):
        line = ("param read_pct=100 mailboxes=0 miss_pct=0 duration_ms=300 cpus=0 seed=1 "
                "timing=8 think_ns=0 workload=syscall:54:-1:0 writer=0")
        with open(os.path.join(FIXTURE, "points", "a", "results.txt")) as f:
            text = f.read()
        res = bench_results.parse_text(text)
        self.assertEqual(res.param["workload"], "read:/proc/iomem")
        self.assertEqual(res.lockops["lock"], "unknown")
        text = "\n".join(line if ln.startswith("param ") else ln for ln in text.splitlines())
        self.assertEqual(bench_results.parse_text(text + "\n").param["workload"],
                         "syscall:54:-1:0")

    def test_init_passes_words_and_k(self):
        with open(os.path.join(ROOT, "guest", "inside", "init.sh")) as f:
            init = f.read()
        self.assertIn("locks_per_op) locks_per_op=${kv#*=} ;;", init)
        self.assertIn("""*:*) lcase="$(echo "$workload" | tr : ' ') --locks-per-op $locks_per_op" ;;""",
                      init)


class Targets(Folder):
    def write_target(self, text, name="resource_lock"):
        d = os.path.join(self.vdir, "targets")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".toml"), "w") as f:
            f.write(text)

    def test_found_in_variant_folder(self):
        self.write_target(RESOURCE_TARGET)
        t = targetmod.load("resource_lock")
        self.assertEqual(t["workloads"], ["read:/proc/iomem"])
        self.assertEqual(t["locks_per_op"], {"read:/proc/iomem": 2})
        self.assertIn("resource_lock", targetmod.names())

    def refused(self, text, regex):
        self.write_target(text)
        with self.assertRaisesRegex(targetmod.TargetError, regex):
            targetmod.load("resource_lock")

    def test_k_missing_or_wrong(self):
        self.refused(RESOURCE_TARGET.replace('"read /proc/iomem" = 2\n', ""),
                     "locks_per_op: missing for the generic workload 'read /proc/iomem'")
        self.refused(RESOURCE_TARGET.replace("= 2\n", "= 0\n"), r"must be an integer 1\.\.1000")
        self.refused(RESOURCE_TARGET.replace("= 2\n", "= 2\n\"stat /x\" = 1\n"),
                     "'stat /x' is not a generic workload of workloads")
        self.refused(RESOURCE_TARGET.replace('["read /proc/iomem"]', '["read /proc/x y"]'),
                     "workloads: workload=")

    def test_campaign_fills_k(self):
        self.write_target(RESOURCE_TARGET)
        c = campaign_file.load(self.write_campaign(
            campaign_text(["before", "spin-resource-lock"], IOMEM_POINTS)))
        self.assertEqual(c["lock_class"], "resource_lock")
        p = c["points"][0]
        self.assertEqual((p["workload"], p["locks_per_op"]), ("read:/proc/iomem", 2))
        self.assertIn("\npoint iomem workload=read:/proc/iomem duration_ms=1000 seed=1 timing=8 "
                      "locks_per_op=2\n",
                      campaign_file.job_text(c))

    def test_campaign_k_other_than_target(self):
        self.write_target(RESOURCE_TARGET)
        msg = self.refused_campaign(IOMEM_POINTS + "locks_per_op = 1\n")
        self.assertIn("points[1].locks_per_op: 1, but target resource_lock says 2", msg)

    def test_campaign_workload_not_the_targets(self):
        self.write_target(RESOURCE_TARGET)
        msg = self.refused_campaign(IOMEM_POINTS.replace("/proc/iomem", "/proc/ioports"))
        self.assertIn("'read /proc/ioports' does not drive target resource_lock "
                      "(its workloads: read /proc/iomem)", msg)

    def refused_campaign(self, points):
        return Folder.refused(self, campaign_text(["before", "spin-resource-lock"], points))

    def test_written_by_convert_reads_back(self):
        d = os.path.join(self.vdir, "targets")
        camp = os.path.join(self.tmp, "campaigns", "my-spin-resource-lock.toml")
        cp = subprocess.run([PY, "-m", "scripts.lock_target", "write", d, "resource_lock",
                             "kernel/resource.c", "resource_lock", "resource_lock", "before",
                             "spin-resource-lock", "read /proc/iomem", "2", camp],
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                            capture_output=True, text=True)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        t = targetmod.load("resource_lock")
        self.assertEqual(t["locks_per_op"], {"read:/proc/iomem": 2})
        c = campaign_file.load(camp)
        self.assertEqual(c["points"][0]["locks_per_op"], 2)
        # the A/A control joins: the 1-vCPU cells count instructions
        self.assertEqual(c["variants"], ["before", "spin-resource-lock", "before~aa"])
        self.assertEqual(c["clock"], {"1": "icount", "2": "wall"})


class Calibrate(unittest.TestCase):
    def judge(self, measured):
        return calibrate.judge("resource_lock", "read:/proc/iomem", measured)

    def refused(self, measured, regex):
        with self.assertRaisesRegex(calibrate.CalibrateError, regex) as cm:
            self.judge(measured)
        self.assertEqual(cm.exception.exit_code, 2)
        self.assertEqual(len(str(cm.exception).splitlines()), 1)

    def test_rule(self):
        self.assertEqual(self.judge([("a", 901, 1802), ("b", 2485, 4970)])[0], 2)
        self.assertEqual(self.judge([("a", 10, 10), ("b", 30, 30)])[0], 1)
        self.refused([("a", 10, 0), ("b", 30, 0)], "takes resource_lock 0 times an op")
        self.refused([("a", 10, 21), ("b", 30, 61)], "varying or non-integer")
        self.refused([("a", 10, 20), ("b", 30, 90)], "varying or non-integer")
        self.refused([("a", 10, 5), ("b", 30, 15)], "varying or non-integer")
        self.refused([("a", 10, 20), ("b", 10, 20)], "two runs of different op counts")
        self.refused([("a", 10, 20)], "two runs of different op counts")

    def run_cli(self, *args):
        return subprocess.run([PY, "-m", "scripts.calibrate", *args], cwd=ROOT,
                              env=dict(os.environ, PYTHONPATH=ROOT),
                              capture_output=True, text=True)

    def test_from_run(self):
        cp = self.run_cli("--from-run", FIXTURE, "--lock", "resource_lock", "--points", "a,b")
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertEqual(cp.stdout, "calibrate: resource_lock: 'read /proc/iomem' takes it 2 "
                         "times an op, exactly (1802 acquisitions in 901 ops, 4970 acquisitions "
                         "in 2485 ops): locks_per_op=2\n")
        cp = self.run_cli("--from-run", FIXTURE, "--lock", "file_systems_lock", "--points", "a,b")
        self.assertEqual((cp.returncode, cp.stdout), (2, ""))
        self.assertRegex(cp.stderr, r"^calibrate: read /proc/iomem takes file_systems_lock 0 "
                         r"times an op \(0 acquisitions in 901 ops, 0 acquisitions in 2485 ops; "
                         r"lock_stat has no file_systems_lock row after either run\): not a "
                         r"workload of this lock, or lock_stat names it otherwise \(--lock: "
                         r"the class name /proc/lock_stat shows\)\n\Z")
        cp = self.run_cli("--from-run", FIXTURE, "--lock", "resource_lock", "--points", "a,c")
        self.assertEqual(cp.returncode, 2)
        self.assertIn("varying or non-integer", cp.stderr)

    def test_bad_input(self):
        for args, want in ((["--lock", "resource_lock", "read /x y"], "is not one of"),
                           (["--lock", "resource_lock", "proc_lookup"], "not a generic workload"),
                           (["--lock", "resource_lock"], "missing WORKLOAD"),
                           (["--lock", "a b", "read /x"], "not a lock_stat class name"),
                           (["--lock", "resource_lock", "--cpus", "0", "read /x"], "--cpus 0")):
            with self.subTest(args=args):
                cp = self.run_cli(*args)
                self.assertEqual(cp.returncode, 2, cp.stderr)
                self.assertEqual(len(cp.stderr.splitlines()), 1, cp.stderr)
                self.assertIn(want, cp.stderr)

    def test_missing_kernel_one_line(self):
        cp = self.run_cli("--variant", "no-such-variant", "--lock", "resource_lock",
                          "read /proc/iomem")
        self.assertEqual(cp.returncode, 3, cp.stderr)
        self.assertEqual(len(cp.stderr.splitlines()), 1, cp.stderr)
        self.assertIn("needs the no-such-variant kernel built", cp.stderr)


if __name__ == "__main__":
    unittest.main()
