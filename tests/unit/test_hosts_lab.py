# SPDX-License-Identifier: GPL-2.0
"""A lab of --hosts hosts (issue #45), the parts that need no kernel:
what a host is called and what its probe says (scripts/campaign/hosts.py,
through the real GNU parallel and the stand-in ssh, tests/hosts/), which
boots are tried again after a host ended them and on which hosts
(run_groups), and what the analysis says of boots that ran on different
kinds of machine (analysis/parse/rundir.py, analysis/render/run_setup.py).
The hosts through a real sshd: tests/t-hosts.sh."""

import dataclasses
import os
import shutil
import tempfile
import unittest
from unittest import mock

from analysis.parse import rundir
from analysis.render import run_setup
from scripts.campaign import hosts
from tests.unit import synth

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STANDIN = os.path.join(ROOT, "tests", "hosts", "standin-ssh.sh")


class Quiet:
    """A progress line that keeps what it is told."""

    def __init__(self):
        self.said = []

    def say(self, msg):
        self.said.append(msg)


class Names(unittest.TestCase):
    def test_login_and_name(self):
        self.assertEqual(hosts.login_of("2/ssh -p 2222 user@h"), "ssh -p 2222 user@h")
        self.assertEqual(hosts.login_of("@lab/4/build1"), "build1")
        self.assertEqual(hosts.login_of("build1"), "build1")
        logins = ["ssh -p 1 u@a", "ssh -p 2 u@a", "ssh -F c lbhost1"]
        # one machine on two ports: the whole sshlogin tells them apart
        self.assertEqual(hosts.host_name("ssh -p 2 u@a", logins), "ssh -p 2 u@a")
        self.assertEqual(hosts.host_name("ssh -F c lbhost1", logins), "lbhost1")

    def test_tagged_output(self):
        """ssh ends its lines with \\r\\n; parallel tags each line."""
        out = ("h1\tlockbench-host\t2\tAMD\t-\n"
               "h2\tssh: connect to host 127.0.0.1 port 9: Connection refused\rh2\t\r\n"
               "untagged line\n")
        self.assertEqual(hosts.tagged(out), {
            "h1": ["lockbench-host\t2\tAMD\t-"],
            "h2": ["ssh: connect to host 127.0.0.1 port 9: Connection refused"]})
        self.assertEqual(hosts.one_line("a\x1b[2Jb\r\n  c" + "x" * 300, 20), "a [2Jb cxxxxxxxxxxxx")


class Probe(unittest.TestCase):
    """The probe through the real GNU parallel and the stand-in ssh."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hosts-lab-")
        self.file = os.path.join(self.tmp, "hosts")
        with open(self.file, "w") as fh:
            fh.write(f"2/{STANDIN} -p 22 user@one\n{STANDIN} -p 22 user@two\n")
        self.env = mock.patch.dict(os.environ, LB_STANDIN_HOME=os.path.join(self.tmp, "home"))
        self.env.start()

    def tearDown(self):
        self.env.stop()
        shutil.rmtree(self.tmp)

    def test_what_each_host_is(self):
        """Read there: the CPU model as the runner reads it, the cores."""
        got = hosts.probe(self.file, ["arm"], self.tmp)
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh
                          if ln.startswith("model name")), "unknown")
        want = {"cpu_model": " ".join(model.split()), "cores": os.cpu_count()}
        self.assertEqual(got, {f"{STANDIN} -p 22 user@one": want,
                               f"{STANDIN} -p 22 user@two": want})

    def test_a_host_without_a_qemu(self):
        """A host that lacks the QEMU of an arch: exit 3, one line naming
        it and ./run.sh setup."""
        with mock.patch.object(hosts.qemu, "arch_info",
                               lambda a: {"qemu": "qemu-system-lockbench-none"}):
            with self.assertRaises(hosts.HostsRefused) as e:
                hosts.probe(self.file, ["arm"], self.tmp)
        self.assertEqual(e.exception.exit_code, 3)
        self.assertEqual(str(e.exception), f"--hosts {self.file}: user@one lacks "
                         "qemu-system-lockbench-none; user@two lacks qemu-system-lockbench-none: "
                         "run ./run.sh setup there; no boot was run")

    def test_a_host_that_does_not_answer(self):
        """A host whose ssh fails (255, as a refused connection): exit 2, one
        line naming it and what ssh said."""
        bad = os.path.join(self.tmp, "refusing-ssh")
        with open(bad, "w") as fh:
            fh.write("#!/bin/sh\necho 'ssh: connect to host x port 9: Connection refused' >&2\n"
                     "exit 255\n")
        os.chmod(bad, 0o755)
        with open(self.file, "a") as fh:
            fh.write(f"{bad} user@three\n")
        with self.assertRaises(hosts.HostsRefused) as e:
            hosts.probe(self.file, ["arm"], self.tmp)
        self.assertEqual(e.exception.exit_code, 2)
        self.assertEqual(str(e.exception), f"--hosts {self.file}: user@three did not answer "
                         "(ssh: connect to host x port 9: Connection refused): no boot was run "
                         "(bring it up, or leave it out of the hosts file)")
        found, gone = hosts.probe_live(self.file, ["arm"], self.tmp)
        self.assertEqual((sorted(found), list(gone)), (
            [f"{STANDIN} -p 22 user@one", f"{STANDIN} -p 22 user@two"], [f"{bad} user@three"]))


class Man:
    def __init__(self, boots):
        self.data = {"campaign": {"arches": ["arm"]}, "cells": boots}


class FakeRun:
    """Run.one_pass without parallel: each pass ends each boot as SCRIPT
    says for the host it lands on (round robin over the pass's hosts):
    script(boot id, host, pass number) -> a state, or "gone" (its host
    went away: state error, ssh exit 255)."""

    def __init__(self, script):
        self.script, self.passes = script, []

    def one_pass(self, path, cpus, boots):
        with open(path) as fh:
            use = [hosts.login_of(x) for x in fh.read().splitlines()]
        self.passes.append(([x["id"] for x in boots], use))
        ended = []
        for i, x in enumerate(boots):
            host = use[i % len(use)]
            got = self.script(x["id"], host, len(self.passes))
            x["state"] = "error" if got == "gone" else got
            if x["state"] in hosts.HOST_FAULTS:
                ended.append((x, host, got == "gone"))
        return ended


class Retries(unittest.TestCase):
    """run_groups: after a host ended tries, which boots go again, where."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hosts-retry-")
        self.lines = {"h1": "1/h1", "h2": "1/h2"}

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def go(self, script, boots=4, cpus=(1,)):
        man = Man([{"id": f"c{c}-{i}", "cpus": c, "state": "planned"}
                   for c in cpus for i in range(boots)])
        run, prog = FakeRun(script), Quiet()
        hosts.run_groups(self.tmp, man, self.lines, run, prog, [])
        return man, run.passes, prog.said

    def test_host_gone(self):
        """h2 goes away in the first pass: its boots go again on h1 alone,
        and the next vCPU count runs on h1 alone."""
        man, passes, said = self.go(lambda c, h, n: "gone" if h == "h2" else "done",
                                    cpus=(1, 2))
        self.assertEqual(passes, [(["c1-0", "c1-1", "c1-2", "c1-3"], ["h1", "h2"]),
                                  (["c1-1", "c1-3"], ["h1"]),
                                  (["c2-0", "c2-1", "c2-2", "c2-3"], ["h1"])])
        self.assertEqual({x["state"] for x in man.data["cells"]}, {"done"})
        self.assertEqual(said, ["campaign: h2 went away (ssh exit 255): left out for the rest "
                                "of this run", "campaign: 2 boot(s) that h2 ended: again on h1"])

    def test_qemu_killed_on_a_host_that_answers(self):
        """h2 killed one QEMU and still answers: that boot goes again on the
        others only; the next vCPU count uses both again."""
        man, passes, _said = self.go(
            lambda c, h, n: "killed" if (c, n) == ("c1-1", 1) else "done", cpus=(1, 2))
        self.assertEqual([p[1] for p in passes], [["h1", "h2"], ["h1"], ["h1", "h2"]])
        self.assertEqual(passes[1][0], ["c1-1"])
        self.assertEqual({x["state"] for x in man.data["cells"]}, {"done"})

    def test_kernel_loss_is_never_retried(self):
        """A hung boot is the kernel's: no second pass."""
        man, passes, said = self.go(lambda c, h, n: "hung" if c == "c1-0" else "done")
        self.assertEqual((len(passes), said), (1, []))
        self.assertEqual(man.data["cells"][0]["state"], "hung")

    def test_no_other_host(self):
        """Every host ended a try: the boots wait for --resume, said once."""
        man, passes, said = self.go(lambda c, h, n: "error")
        self.assertEqual(len(passes), 1)
        self.assertEqual(said, ["campaign: 4 boot(s) that h1, h2 ended wait for --resume: "
                                "no other host is left"])
        self.assertEqual({x["state"] for x in man.data["cells"]}, {"error"})

    def test_every_host_gone(self):
        """No host left for the next vCPU count: its boots wait, said."""
        man, passes, said = self.go(lambda c, h, n: "gone", cpus=(1, 2))
        self.assertEqual(len(passes), 1)
        self.assertEqual(said[-1], "campaign: the 4 boot(s) of 2 vCPU(s) wait for --resume: "
                         "no host answers")
        self.assertEqual({x["state"] for x in man.data["cells"]}, {"error", "planned"})

    def test_bounded(self):
        """A boot that every host ends in turn stops after MAX_HOST_FAULTS."""
        self.lines = {f"h{i}": f"h{i}" for i in range(6)}
        _man, passes, _said = self.go(lambda c, h, n: "failed", boots=1)
        self.assertEqual(len(passes), hosts.MAX_HOST_FAULTS)
        hs = list(self.lines)
        self.assertEqual([u for _c, u in passes], [hs, hs[1:], hs[2:]])


class HostKinds(unittest.TestCase):
    """Boots of one vCPU count on different kinds of machine: said."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hosts-kinds-")
        cls.dir = os.path.join(cls.tmp, "run")
        synth.make_run(cls.dir, reps=2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def rd(self, kinds):
        """The run with its boots on --hosts, the i-th boot's machine
        kinds[i % len(kinds)] ((model, cores), or None: this host)."""
        rd = rundir.load(self.dir)
        rd.host = dict(rd.host, cpu_model="Local CPU", cores=2)
        boots = []
        for i, c in enumerate(rd.boots):
            k = kinds[i % len(kinds)]
            boots.append(c if k is None else dataclasses.replace(c, host=f"ssh h{i}", host_cpu=k))
        rd.boots = boots
        return rd

    def facts(self, rd):
        return run_setup.setup_facts(rd, [(c.variant, c.cpus, c.oversubscribed)
                                          for c in rd.boots if c.state == "done"])

    def test_one_kind(self):
        rd = self.rd([("AMD EPYC", 16)])
        f = self.facts(rd)
        self.assertEqual((f["cores"], f["cpu_model"]), ("16", "AMD EPYC"))
        self.assertEqual(run_setup.mixed_hosts(f), "")
        self.assertIn("on 16 host cores", run_setup.setup_line(rd, [(c.variant, c.cpus, False)
                                                                     for c in rd.boots]))

    def test_two_kinds(self):
        rd = self.rd([("AMD EPYC", 16), ("Intel Xeon", 4)])
        f = self.facts(rd)
        self.assertEqual((f["cores"], f["cpu_model"]), ("4-16", "2 kinds of CPU"))
        self.assertEqual(run_setup.mixed_hosts(f),
                         "The boots ran on different kinds of host at 2 vCPUs on 2 kinds "
                         "(AMD EPYC, 16 cores: before 2; Intel Xeon, 4 cores: after 2): a ratio "
                         "across machine kinds is not a ratio on one machine.")
        self.assertTrue(run_setup.setup_line(rd, [(c.variant, c.cpus, False) for c in rd.boots])
                        .endswith(", 2 vCPUs on several kinds of host (--hosts)"))

    def test_hosts_and_this_host(self):
        """Boots of this host (a --reuse'd run) beside --hosts ones: this
        host's kind is its manifest's."""
        rd = self.rd([None, ("AMD EPYC", 16)])
        self.assertEqual(rd.host_kinds(2), {"Local CPU, 2 cores": {"before": 2},
                                            "AMD EPYC, 16 cores": {"after": 2}})
        self.assertEqual(self.facts(rd)["cores"], "2-16")

    def test_the_answer_says_so(self):
        """Through the real report: answer.txt (and summary.md with it)
        and the commit block say that the ratio is across machine kinds,
        and the setup gives the hosts' cores, not this machine's."""
        import json
        import subprocess
        d = os.path.join(self.tmp, "mixed")
        shutil.copytree(self.dir, d)
        path = os.path.join(d, "manifest.json")
        with open(path) as fh:
            m = json.load(fh)
        for i, c in enumerate(m["cells"]):
            c["host"] = f"ssh -F lab.conf lbhost{1 + i % 2}"
            c["host_cpu"] = [{"cpu_model": "AMD EPYC", "cores": 16},
                             {"cpu_model": "Intel Xeon", "cores": 4}][i % 2]
        with open(path, "w") as fh:
            json.dump(m, fh)
        cp = subprocess.run([os.path.join(ROOT, "run.sh"), "report", d, "--no-plots"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
        self.assertEqual(cp.returncode, 0, cp.stdout + cp.stderr)
        with open(os.path.join(d, "answer.txt")) as fh:
            answer = " ".join(fh.read().split())
        self.assertIn("The boots ran on different kinds of host at 2 vCPUs on 2 kinds "
                      "(AMD EPYC, 16 cores: ", answer)
        self.assertIn("a ratio across machine kinds is not a ratio on one machine.", answer)
        self.assertIn("2 vCPUs on 4-16 host cores", answer)
        with open(os.path.join(d, "commit-msg.txt")) as fh:
            block = " ".join(fh.read().split())
        self.assertIn("The boots ran on different kinds of host at 2 vCPUs on 2 kinds: a "
                      "ratio across machine kinds is not a ratio on one machine (summary.md "
                      "names them).", block)

    def test_local_run_unchanged(self):
        rd = self.rd([None])
        f = self.facts(rd)
        self.assertEqual((f["cores"], f["cpu_model"]), (2, "Local CPU"))
        self.assertEqual(run_setup.mixed_hosts(f), "")


if __name__ == "__main__":
    unittest.main()
