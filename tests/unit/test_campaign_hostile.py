# SPDX-License-Identifier: GPL-2.0
"""The campaign runner against hostile input, through its real command
line (./run.sh campaign) and no boot: an edited manifest given to
--resume, and remote hosts that lie or outlive the harness, run with the
real GNU parallel and rsync through a stand-in ssh (tests/hosts/).

The kernels are a stand-in build tree (LOCKBENCH_BUILD): the runner only
hashes them, and the hosts' runner is tests/hosts/lying_runner.py."""

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
sys.path.insert(0, ROOT)
from scripts import campaign_hosts  # noqa: E402

CAMPAIGN = """name = "hostile"
variants = ["before", "after"]
cpus = [1]
repetitions = 2
[[points]]
id = "p"
read_pct = 50
mailboxes = 16
"""
HAVE_PARALLEL = bool(shutil.which("parallel") and shutil.which("rsync"))


def lstat_walk(top):
    """Every path under TOP (not following links) with its lstat mode."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, top)] = os.lstat(p).st_mode
    return out


class Hostile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="campaign-hostile-")
        build = os.path.join(cls.tmp, "build")
        for v in ("before", "after"):
            os.makedirs(os.path.join(build, v))
            for f, text in (("build-meta.json", json.dumps({"kernel_version": "6.1", "variant": v})),
                            ("mbox_bench.ko", v), ("uImage", v)):
                with open(os.path.join(build, v, f), "w") as fh:
                    fh.write(text)
        os.makedirs(os.path.join(build, "rootfs"))
        with open(os.path.join(build, "rootfs", "rootfs.cpio"), "w") as fh:
            fh.write("rootfs")
        cls.toml = os.path.join(cls.tmp, "hostile.toml")
        with open(cls.toml, "w") as fh:
            fh.write(CAMPAIGN)
        cls.env = dict(os.environ, LOCKBENCH_BUILD=build)
        # A results directory as `./run.sh campaign` creates it, no cell run.
        cls.pristine = os.path.join(cls.tmp, "pristine")
        subprocess.run([PY, "-c", "import argparse, sys; from scripts import campaign; "
                        "campaign.create(argparse.Namespace("
                        "file=sys.argv[1], out=sys.argv[2], dry_run=False))",
                        cls.toml, cls.pristine], cwd=ROOT, env=cls.env, check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def setUp(self):
        self.case = tempfile.mkdtemp(dir=self.tmp)
        # The results directory one level down, so that ../ leads to a
        # folder of this test (the sentinel), never anywhere else.
        self.d = os.path.join(self.case, "res", "hostile-1")
        shutil.copytree(self.pristine, self.d)
        self.sentinel = os.path.join(self.case, "victim")
        os.makedirs(self.sentinel)
        with open(os.path.join(self.sentinel, "keep"), "w") as fh:
            fh.write("keep\n")
        self.home = os.path.join(self.case, "hosts-home")
        self.pids = os.path.join(self.case, "pids")
        os.makedirs(self.pids)
        self.liar_log = os.path.join(self.case, "runner-args.jsonl")
        self.secret = os.path.join(self.sentinel, "shadow")
        with open(self.secret, "w") as fh:
            fh.write("root:SECRET-HASH:19000::::::\n")
        self.hosts = os.path.join(self.case, "hosts")
        with open(self.hosts, "w") as fh:
            fh.write(f"2/{ROOT}/tests/hosts/standin-ssh.sh -p 22 user@liar\n")

    def manifest(self, edit=None):
        path = os.path.join(self.d, "manifest.json")
        with open(path) as fh:
            m = json.load(fh)
        if edit:
            edit(m)
            with open(path, "w") as fh:
                json.dump(m, fh)
        return m

    def host_env(self, mode):
        # No SHELL, as in a CI job: the stand-in sets it as sshd does.
        env = {k: v for k, v in self.env.items() if k != "SHELL"}
        return dict(env, LB_STANDIN_HOME=self.home, LB_LIAR=mode,
                    LB_STANDIN_RUNNER=os.path.join(ROOT, "tests", "hosts", "lying_runner.py"),
                    LB_LIAR_LOG=self.liar_log, LB_LIAR_SECRET=self.secret, LB_LIAR_PIDS=self.pids)

    def campaign(self, *args, env=None, timeout=60):
        cp = subprocess.run(["./run.sh", "campaign", *args, "--no-report"], cwd=ROOT,
                            env=env or self.env, capture_output=True, text=True, timeout=timeout)
        return cp.returncode, cp.stdout, cp.stderr

    def refused(self, want, *extra, env=None):
        """--resume refuses the directory: exit 2, one line, WANT in it,
        and nothing outside the results directory touched."""
        rc, out, err = self.campaign("--resume", self.d, *extra, env=env)
        self.assertEqual((rc, out), (2, ""), err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("campaign: ", err)
        self.assertIn(want, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(sorted(os.listdir(self.sentinel)), ["keep", "shadow"])
        self.assertEqual(sorted(os.listdir(self.case)), ["hosts", "pids", "res", "victim"])
        self.assertEqual(os.listdir(os.path.dirname(self.d)), ["hostile-1"])

    # --- item 4: --resume trusts nothing in manifest.json ---

    def test_cell_id_with_dotdot(self):
        # The old runner renamed cells/.tmp-ID aside: ../../../victim.
        evil = "x/../../../victim"
        os.makedirs(os.path.join(self.d, "cells", ".tmp-x"))
        self.manifest(lambda m: m["cells"][0].update(id=evil))
        self.refused("is not the planned cell 'r01-before-c1'")
        self.assertTrue(os.path.isdir(os.path.join(self.d, "cells", ".tmp-x")))

    def test_builds_empty(self):
        self.manifest(lambda m: m.update(builds={}))
        self.refused("builds do not name every variant's kernel")

    def test_manifest_empty_object(self):
        self.manifest(lambda m: (m.clear(), None))
        self.refused("manifest.json has no campaign")

    def test_manifest_not_json_object_or_fifo(self):
        with open(os.path.join(self.d, "manifest.json"), "w") as fh:
            fh.write("[" * 100000 + "]" * 100000)
        self.refused("no readable manifest.json")
        os.unlink(os.path.join(self.d, "manifest.json"))
        os.mkfifo(os.path.join(self.d, "manifest.json"))
        self.refused("no readable manifest.json (not a regular file)")

    def test_campaign_toml_missing(self):
        os.unlink(os.path.join(self.d, "campaign.toml"))
        self.refused("campaign.toml: cannot read")

    def test_edited_campaign_and_cells(self):
        self.manifest(lambda m: m["campaign"].update(repetitions=1, looks=[1]))
        self.refused("manifest.json's campaign is not campaign.toml's (differs in looks, repetitions)")
        shutil.rmtree(self.d)
        shutil.copytree(self.pristine, self.d)
        self.manifest(lambda m: m["cells"].pop())
        self.refused("cells are not the 4 cells campaign.toml plans")
        shutil.rmtree(self.d)
        shutil.copytree(self.pristine, self.d)
        self.manifest(lambda m: m["cells"][1].update(state=["done"]))
        self.refused("cell r01-after-c1: state")
        shutil.rmtree(self.d)
        shutil.copytree(self.pristine, self.d)
        # It would be removed on every host at the end of the run.
        self.manifest(lambda m: m.update(hosts_remote=["lockbench-x-0123456789ab", "../.."]))
        self.refused("hosts_seq or hosts_remote is not what --hosts writes")

    def test_mem_mb_shell_on_a_host(self):
        pwned = os.path.join(self.case, "PWNED")
        self.manifest(lambda m: m["campaign"].update(mem_mb=f"99$(touch {pwned})"))
        self.refused("differs in mem_mb", "--hosts", self.hosts, env=self.host_env("honest"))
        self.assertFalse(os.path.exists(pwned))
        self.assertFalse(os.path.exists(self.home), "a host was contacted")

    def test_input_files_that_are_not_files(self):
        """A campaign or hosts file that is a FIFO or /dev/zero (would block
        or never end), a hosts file not in UTF-8 or with a control
        character: one line, exit 2, before anything is created."""
        fifo = os.path.join(self.case, "fifo")
        os.mkfifo(fifo)
        latin1 = os.path.join(self.case, "hosts-latin1")
        with open(latin1, "wb") as fh:
            fh.write(b"2/ssh caf\xe9\n")
        escape = os.path.join(self.case, "hosts-escape")
        with open(escape, "w") as fh:
            fh.write("2/ssh host\x1b[2J\n")
        out = os.path.join(self.case, "never")
        for args, want in (([fifo], f"{fifo}: cannot read: not a regular file"),
                           (["/dev/zero"], "/dev/zero: cannot read: not a regular file"),
                           ([self.toml, "--hosts", fifo], "cannot read: not a regular file"),
                           ([self.toml, "--hosts", "/dev/zero"], "cannot read: not a regular file"),
                           ([self.toml, "--hosts", latin1], "cannot read: 'utf-8' codec"),
                           ([self.toml, "--hosts", escape], "control character in sshlogin")):
            rc, stdout, err = self.campaign(*args, "--out", out, timeout=20)
            self.assertEqual((rc, stdout, len(err.splitlines())), (2, "", 1), (args, err))
            self.assertIn(want, err)
            self.assertFalse(os.path.exists(out))

    # --- items 8 and 9: hosts that lie, or outlive the harness ---

    @unittest.skipUnless(HAVE_PARALLEL, "needs GNU parallel and rsync")
    def test_lying_host(self):
        d = os.path.join(self.case, "res", "lied")
        rc, out, err = self.campaign(self.toml, "--hosts", self.hosts, "--out", d,
                                     env=self.host_env("lie"), timeout=120)
        self.assertEqual(rc, 1, out + err)
        self.assertNotIn("Traceback", out + err)
        with open(self.liar_log) as fh:
            self.assertEqual(len(fh.readlines()), 4, "the lying runner ran every cell")
        found = lstat_walk(d)
        odd = {p: m for p, m in found.items() if not (stat.S_ISREG(m) or stat.S_ISDIR(m))}
        self.assertEqual(odd, {}, "a link, FIFO or device came back")
        came = [p for p in found if p.endswith("/ok.txt")]
        self.assertEqual(len(came), 4, f"the cells' regular files came back: {sorted(found)}")
        for p, m in found.items():
            if stat.S_ISREG(m):
                with open(os.path.join(d, p), "rb") as fh:
                    self.assertNotIn(b"SECRET-HASH", fh.read(), p)
        with open(os.path.join(d, "manifest.json")) as fh:
            m = json.load(fh)
        self.assertEqual({c["state"] for c in m["cells"]}, {"error"}, m["cells"])
        self.assertEqual(sorted(os.listdir(self.sentinel)), ["keep", "shadow"])
        self.assertEqual(os.listdir(os.path.join(self.home, "liar")), [],
                         "the remote folder was not removed at the end")

    @unittest.skipUnless(HAVE_PARALLEL, "needs GNU parallel and rsync")
    def test_killed_then_resumed(self):
        env = self.host_env("sleep")
        proc = subprocess.Popen(["./run.sh", "campaign", "--resume", self.d, "--hosts", self.hosts,
                                 "--no-report"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 30
            while len(os.listdir(self.pids)) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            runners = [int(p) for p in os.listdir(self.pids)]
            self.assertEqual(len(runners), 2, "two 1-vCPU cells on a host of 2 jobs")
            par = [p for p in all_pids() if "parallel" in cmdline(p) and self.d in cwd(p)]
            self.assertTrue(par, "no parallel running")
            # SIGKILL: the harness gets no chance to stop anything itself.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            deadline = time.monotonic() + 15
            while any(alive(p) for p in par + runners) and time.monotonic() < deadline:
                time.sleep(0.2)
            self.assertEqual([p for p in par + runners if alive(p)], [],
                             "parallel or a remote runner outlived the harness")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            for p in [int(x) for x in os.listdir(self.pids)]:
                if alive(p):
                    os.kill(p, signal.SIGKILL)
        m = self.manifest()
        first = m["hosts_remote"]
        self.assertEqual(len(first), 1)
        rc, out, err = self.campaign("--resume", self.d, "--hosts", self.hosts,
                                     env=self.host_env("honest"), timeout=120)
        self.assertEqual(rc, 0, out + err)
        m = self.manifest()
        self.assertEqual({c["state"] for c in m["cells"]}, {"done"})
        self.assertEqual(len(m["hosts_remote"]), 2)
        self.assertEqual(m["hosts_remote"][0], first[0])
        self.assertNotEqual(m["hosts_remote"][1], first[0])
        with open(self.liar_log) as fh:
            runs = [json.loads(x) for x in fh]
        outs = [a[a.index("--out") + 1] for a in runs]
        self.assertEqual(len(outs), len(set(outs)), f"a cell name was used twice: {outs}")
        self.assertEqual(sorted(outs[-4:]), [f"cells/.tmp-c1-{i:05d}" for i in range(5, 9)])
        self.assertTrue(all(a[a.index("--mem") + 1] == "512" for a in runs))
        # This run's folder is gone, and the killed run's too.
        self.assertEqual(os.listdir(os.path.join(self.home, "liar")), [])

    def test_scrub(self):
        """The walk over a returned cell (campaign_hosts.scrub), on what a
        host could send if rsync let it through."""
        cell = os.path.join(self.case, "cell")
        os.makedirs(os.path.join(cell, "points", "p"))
        with open(os.path.join(cell, "points", "p", "results.txt"), "w") as fh:
            fh.write("ok\n")
        os.symlink(self.secret, os.path.join(cell, "meta.json"))
        os.symlink(self.sentinel, os.path.join(cell, "points", "outside"))
        os.mkfifo(os.path.join(cell, "points", "p", "fifo"))
        want = ["meta.json", "points/outside", "points/p/fifo"]
        if os.geteuid() == 0:
            os.mknod(os.path.join(cell, "null"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
            want.append("null")
        deep = os.path.join(cell, *["d"] * 20)
        os.makedirs(deep)
        got = campaign_hosts.scrub(cell)
        self.assertEqual(sorted(got), sorted(["cell/" + w for w in want]
                                             + ["cell/" + "/".join(["d"] * 17) + "/ (too deep)"]))
        self.assertEqual(sorted(lstat_walk(cell)),
                         sorted(["points", "points/p", "points/p/results.txt"]
                                + ["/".join(["d"] * k) for k in range(1, 17)]))
        self.assertEqual(sorted(os.listdir(self.sentinel)), ["keep", "shadow"])
        link = os.path.join(self.case, "cell.log")
        os.symlink(self.secret, link)
        self.assertEqual(campaign_hosts.scrub(link), ["cell.log"])
        self.assertFalse(os.path.lexists(link))

    def test_refused_cell_fails(self):
        """A cell the walk had to clean fails, whatever its meta.json says,
        and is kept aside, not counted."""
        cp = subprocess.run([PY, "-c", """if True:
            import json, os, sys
            from scripts import campaign_cell, campaign_manifest
            d = sys.argv[1]
            man = campaign_manifest.Manifest.load(d)
            cell = man.data["cells"][0]
            tmp = os.path.join(d, "cells", ".tmp-" + cell["id"])
            os.makedirs(tmp)
            with open(os.path.join(tmp, "meta.json"), "w") as f:
                json.dump({"state": "ok", "wall_s": "a lot", "problems": [1, {"line": "x"}]}, f)
            campaign_cell.finish_cell(d, man, cell, tmp, False, "refused: the host sent 1 file(s) ...")
            """, self.d], cwd=ROOT, env=self.env, capture_output=True, text=True, check=False)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        cell = self.manifest()["cells"][0]
        self.assertEqual(cell["state"], "failed")
        self.assertEqual(cell["problems"], ["refused: the host sent 1 file(s) ...", "None: x"])
        self.assertIsNone(cell["wall_s"])
        self.assertEqual(os.listdir(os.path.join(self.d, "cells")), [cell["kept"]])


def all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def cwd(pid):
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def alive(pid):
    """Running (a zombie waiting for its parent to reap it is not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


if __name__ == "__main__":
    unittest.main()
