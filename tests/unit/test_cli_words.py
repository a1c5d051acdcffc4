# SPDX-License-Identifier: GPL-2.0
"""What the commands say to the user: the state of an interrupted boot said
once, a folder that is not a run directory named as such, several
lock_stat captures at once, fairness.png's starvation mark in words, and
how to run the benchmark module in the guest's shell (./run.sh boot
--help and the shell's banner).

Run: /usr/bin/python3 -m unittest tests.unit.test_cli_words
"""

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from guest import judge
from scripts.campaign import boot as campaign_boot
from scripts.campaign import run as campaign_run
from tests.unit.helpers import fixture, read

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PLOTS_RUN = fixture(os.path.join("plots", "run"))


def run(*argv, cwd=ROOT):
    """Run a module of this repository as ./run.sh does: (status, stdout,
    stderr)."""
    p = subprocess.run([sys.executable, "-m", *argv], cwd=cwd,
                       env=dict(os.environ, PYTHONPATH=ROOT),
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


class Manifest:
    """What finish_boot needs of scripts.campaign.manifest's Manifest."""

    def __init__(self):
        self.saved = 0

    def save(self):
        self.saved += 1


class InterruptedOnce(unittest.TestCase):
    """Ctrl-C: 'campaign: boot ID: interrupted: harness got SIGINT', not
    'interrupted: interrupted: harness got SIGINT'."""

    def test_state_said_once(self):
        boot = {"state": "interrupted", "problems": ["interrupted: harness got SIGINT"]}
        self.assertEqual(campaign_boot.ended_words(boot), "interrupted: harness got SIGINT")

    def test_other_state_kept(self):
        # a boot stopped by Ctrl-C whose guest had hung first: both states
        boot = {"state": "interrupted", "problems": ["hung: no console output for 60 s"]}
        self.assertEqual(campaign_boot.ended_words(boot),
                         "interrupted: hung: no console output for 60 s")
        self.assertEqual(campaign_boot.ended_words({"state": "interrupted"}), "interrupted")
        self.assertEqual(campaign_boot.ended_words({"state": "lockdep", "problems": []}),
                         "lockdep")

    def test_manifest_keeps_state_and_line(self):
        """The manifest's problems stay "STATE: LINE" (analysis/tidy/boots.py
        and parse/lockdep.py read them so); only the progress line drops the
        repeated state."""
        with tempfile.TemporaryDirectory() as d:
            tmp = os.path.join(d, "cells", ".tmp-r01-before-c1")
            os.makedirs(tmp)
            with open(os.path.join(tmp, "meta.json"), "w") as f:
                json.dump({"state": "interrupted", "wall_s": 3.0, "problems": [
                    {"state": "interrupted", "t": 3.0, "line": "harness got SIGINT"}]}, f)
            man, boot = Manifest(), {"id": "r01-before-c1", "state": "running"}
            campaign_boot.finish_boot(d, man, boot, tmp, True)
            self.assertEqual(boot["state"], "interrupted")
            self.assertEqual(boot["problems"], ["interrupted: harness got SIGINT"])
            words = campaign_boot.ended_words(boot)
            self.assertEqual(words, "interrupted: harness got SIGINT")
            self.assertNotIn("interrupted: interrupted", words)

    def test_progress_line_uses_it(self):
        src = inspect.getsource(campaign_run)
        self.assertIn('prog.say(f"campaign: boot {cid}: {campaign_boot.ended_words(boot)}")', src)


class NotAResultsDir(unittest.TestCase):
    """./run.sh report DIR on a folder no campaign made."""

    def test_report_says_what_is_wrong(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = run("plots.pipeline", d)
            self.assertEqual(rc, 2, err)
            self.assertEqual(out, "")
            self.assertEqual(err, f"report: {d} is not a run directory "
                             "(no manifest.json; ./run.sh campaign makes one)\n")
            self.assertNotIn("No such file", err)

    def test_one_boot_folder_gets_recheck_hint(self):
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "meta.json"), "w").close()
            rc, _, err = run("plots.pipeline", d, "--no-plots")
            self.assertEqual(rc, 2, err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn("is not a run directory", err)
            self.assertIn(f"./run.sh recheck {d}", err)

    def test_results_folder_names_a_run_in_it(self):
        """./run.sh report results: the runs are one folder down."""
        with tempfile.TemporaryDirectory() as d:
            for name, t in (("old-run", 1000), ("new-run", 2000)):
                os.mkdir(os.path.join(d, name))
                m = os.path.join(d, name, "manifest.json")
                open(m, "w").close()
                os.utime(m, (t, t))
            rc, _, err = run("plots.pipeline", d)
            self.assertEqual(rc, 2, err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(f"is not a run directory (no manifest.json; ./run.sh campaign "
                          f"makes one; the newest in it: ./run.sh report "
                          f"{os.path.join(d, 'new-run')})", err)

    def test_missing_folder_still_said_so(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "nope")
            rc, _, err = run("plots.pipeline", missing)
            self.assertEqual((rc, err), (2, f"report: {missing}: no such directory\n"))


class LockstatFiles(unittest.TestCase):
    """./run.sh lockstat FILE...: each capture's table under its name."""

    A = fixture("lockstat-0.3.txt")
    B = fixture("lockstat-0.4-busy.txt")

    def test_one_file_unchanged(self):
        rc, out, err = run("analysis.lockstat_cli", self.A)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out, read("lockstat-0.3.csv"))
        self.assertNotIn("==>", out)

    def test_two_files(self):
        rc, out, err = run("analysis.lockstat_cli", self.A, self.B)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out, f"==> {self.A} <==\n" + read("lockstat-0.3.csv") + "\n"
                         + f"==> {self.B} <==\n" + read("lockstat-0.4-busy.csv"))

    def test_class_applies_to_each(self):
        rc, out, _ = run("analysis.lockstat_cli", "--class", "^nothing$", self.A, self.B)
        self.assertEqual(rc, 0)
        self.assertEqual(out.count("class,kind,"), 2)
        self.assertNotIn("mboxes_lock", out)

    def test_bad_files_one_line_each(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "missing")
            empty = os.path.join(d, "empty")
            open(empty, "w").close()
            rc, out, err = run("analysis.lockstat_cli", missing, self.A, empty)
            self.assertEqual(rc, 2)
            lines = err.splitlines()
            self.assertEqual(len(lines), 2, err)
            self.assertTrue(lines[0].startswith(f"lockstat: {missing}: "), err)
            self.assertTrue(lines[1].startswith(f"lockstat: {empty}: "), err)
            self.assertNotIn("Traceback", err)
            # the good one still converted, under its name; no header for
            # the bad ones
            self.assertEqual(out, f"==> {self.A} <==\n" + read("lockstat-0.3.csv"))
            rc, out, err = run("analysis.lockstat_cli", missing, empty)
            self.assertEqual((rc, out, len(err.splitlines())), (2, "", 2))


class FairnessLegend(unittest.TestCase):
    """fairness.png's dashed line at 2 is named in words, not '???'."""

    def test_gnuplot_key_title(self):
        with open(os.path.join(ROOT, "plots", "gnuplot", "fairness.gp")) as f:
            gp = f.read()
        titles = re.findall(r'title "([^"]*)"', gp) + re.findall(r'^\w+ = "([^"]*)"', gp, re.M)
        self.assertFalse([t for t in titles if "???" in t], titles)
        self.assertIn('starved = "starved: idlest < half busiest"', gp)

    def test_drawn_key_and_caption(self):
        # Not skipped without gnuplot: a skipped test would pass unseen.
        self.assertTrue(shutil.which("gnuplot"),
                        "gnuplot is not installed: run ./run.sh setup (this test draws "
                        "fairness.png's key with it)")
        with tempfile.TemporaryDirectory() as d:
            rdir = os.path.join(d, "run")
            shutil.copytree(PLOTS_RUN, rdir)
            rc, _, err = run("plots.make_plots", rdir, "--only", "fairness")
            self.assertEqual(rc, 0, err)
            with open(os.path.join(rdir, "plots", "fairness.svg")) as f:
                svg = f.read()
            self.assertIn("starved: idlest &lt; half busiest", svg)
            self.assertNotIn("???", svg)
            with open(os.path.join(rdir, "plots", "plots.json")) as f:
                caption = json.load(f)["plots"][0]["caption"]
            self.assertIn("starved, the idlest thread did under half the busiest's", caption)


def banner():
    """The guest shell's banner, as guest/inside/init.sh's busybox sh prints it
    (the here-document of the no-job branch, run by this host's sh)."""
    with open(os.path.join(ROOT, "guest", "inside", "init.sh")) as f:
        text = f.read()
    m = re.search(r"^if \[ ! -f /job/job\.conf \]; then\n(.*?)^fi$", text, re.M | re.S)
    branch = m.group(1)
    doc = re.search(r"^\tcat <<-'EOF'\n.*?^\tEOF$", branch, re.M | re.S).group(0)
    return branch, subprocess.run(["sh", "-c", doc], capture_output=True, text=True,
                                  check=True, timeout=60).stdout


class GuestShellHowto(unittest.TestCase):
    """./run.sh boot --help and the guest's banner say how to run the
    benchmark module by hand."""

    WORDS = ("insmod /mbox_bench.ko read_pct=90", "rmmod mbox_bench",
             "echo 1 >/sys/kernel/debug/mbox_bench/run",
             "cat /sys/kernel/debug/mbox_bench/results",
             "/sys/module/mbox_bench/parameters", "grep mboxes_lock /proc/lock_stat",
             "no mboxes_lock row until a run")

    def test_boot_help(self):
        rc, out, err = run("guest.run_guest", "--help")
        self.assertEqual((rc, err), (0, ""))
        flat = " ".join(out.replace("> ", ">").split())
        for w in self.WORDS + ("poweroff -f", "plain kernel has no /proc/lock_stat"):
            self.assertIn(w, flat)

    def test_banner(self):
        branch, text = banner()
        flat = " ".join(text.split())
        for w in self.WORDS + ("poweroff -f",):
            self.assertIn(w, flat)
        # the path the banner names is where init loads the module from
        self.assertIn("insmod /mbox_bench.ko ||", branch)
        self.assertLessEqual(max(len(ln) for ln in text.splitlines()), 100)
        # nothing in it looks like a kernel problem to the console's judge
        for state, pattern in judge.CONSOLE_PATTERNS:
            self.assertIsNone(pattern.search(text), state)


if __name__ == "__main__":
    unittest.main()
