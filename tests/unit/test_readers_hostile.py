# SPDX-License-Identifier: GPL-2.0
# Timed: bounds the wall time of runs (hang guards): tests/run-all.sh runs
# this module at the normal priority, not niced beside a kernel build.
"""The readers of a run directory on hostile files (issue #27, items 7
and 8): the report, the plots and recheck, each through its real entry
point (./run.sh report, python3 -m plots.*, ./run.sh recheck), on a small
valid run directory (tests/unit/synth.py) with one file planted in it.

A run directory may come from anywhere (a copy, a --hosts host,
another local user): a link in it is refused, never followed, a FIFO
never waited on, a device or a huge file never read whole, a JSON file
nested 100,000 deep never recursed into.  Each case checks: the exit
status (2 with one line on stderr, no traceback; the report goes on past
one unreadable console.log, with one line saying so), a secret file
outside the run directory in no output, nothing written outside the run
directory, and the time (under BOUND_S)."""

import csv
import json
import os
import resource
import shutil
import stat
import subprocess
import tempfile
import time
import unittest

from tests.unit import synth

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PY = "/usr/bin/python3"
#: each refusal takes well under a second; the whole report of the
#: synthetic run about 5 s on a loaded machine (the bound leaves room
#: for a test beside it)
BOUND_S = 30
#: a hang fails the test after this, instead of hanging the suite
KILL_S = 60
#: address space of each command: /dev/zero read whole ends in a
#: MemoryError here, not in the machine's memory
MEMORY = 4 << 30
SECRET = "SECRET-7f3a9c-not-for-the-report"
# A lockdep problem whose line is in the secret file: a report that
# follows the link quotes the file from that line on.
LOCKDEP_LINE = "root"


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run(argv):
    """(exit status, stdout, stderr, seconds) of a command run from the
    repository root, stdin empty."""
    t = time.monotonic()
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True,
                       timeout=KILL_S, stdin=subprocess.DEVNULL,
                       preexec_fn=_limit, env=dict(os.environ, PYTHONPATH=ROOT))
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t


def snapshot(top, skip):
    """{path: (type, size, mtime_ns)} of everything under top but the
    directory skip, links not followed: what a command may not change."""
    out = {}
    for d, dirs, files in os.walk(top):
        if os.path.abspath(d) == os.path.abspath(skip):
            dirs[:] = []
            continue
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            out[p] = (stat.S_IFMT(st.st_mode), st.st_size,
                      None if stat.S_ISDIR(st.st_mode) else st.st_mtime_ns)
    return out


def texts_under(top):
    """(path, text) of every regular file under top, links not followed."""
    for d, _dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(d, name)
            if stat.S_ISREG(os.lstat(p).st_mode):
                with open(p, "rb") as f:
                    yield p, f.read().decode("utf-8", "replace")


class Readers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="readers-")
        # outside every run directory: a secret of this user and a folder
        # a planted link names
        cls.outside = os.path.join(cls.tmp, "outside")
        os.makedirs(os.path.join(cls.outside, "folder"))
        cls.secret = os.path.join(cls.outside, "secret.txt")
        fd = os.open(cls.secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"{LOCKDEP_LINE}\n{SECRET}\n" * 3)
        cls.base = os.path.join(cls.tmp, "base", "run")
        synth.make_run(cls.base)
        # the whole report once: tidy/, answer.txt, legend.txt, plots/
        rc, _out, err, _secs = run([os.path.join(ROOT, "run.sh"), "report",
                                    cls.base, "-q"])
        assert rc == 0, err

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def copy(self, name):
        """A copy of the reported run (times kept: its tidy files stay
        fresh)."""
        d = os.path.join(self.tmp, name, "run")
        shutil.copytree(self.base, d, symlinks=True)
        return d

    def plant(self, path, how, target=None):
        """Put a hostile file at path (whatever was there removed)."""
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
        if how == "fifo":
            os.mkfifo(path)
        elif how == "link":
            os.symlink(target, path)
        else:
            with open(path, "w") as f:
                f.write(how)

    def check(self, d, argv, status=2, words=(), prog=None):
        """Run argv on the run directory d: the exit status, one line on
        stderr (status 2) naming the refusal, no traceback, the secret
        nowhere, nothing outside d written; returns (stdout, stderr,
        seconds)."""
        before = snapshot(self.tmp, d)
        rc, out, err, secs = run(argv)
        self.assertEqual(rc, status, err)
        self.assertNotIn("Traceback", err)
        self.assertNotIn("internal error", err)
        if status == 2:
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertTrue(err.startswith(f"{prog}: "), err)
        for w in words:
            self.assertIn(w, err)
        self.assertLess(secs, BOUND_S)
        for where, text in [("stdout", out), ("stderr", err)] + list(texts_under(d)):
            self.assertFalse(SECRET in text, f"the secret is in {where}")
        self.assertEqual(snapshot(self.tmp, d), before,
                         "something outside the run directory changed")
        if os.environ.get("READERS_TIMES"):  # the times for the record
            print(f"\n  {self._testMethodName}: exit {rc} in {secs:.2f} s: "
                  f"{err.strip().splitlines()[-1] if err.strip() else ''}",
                  end=" ")
        return out, err, secs

    # item 7: the report quoted a linked console.log into summary.md

    def test_console_log_link_with_a_lockdep_problem(self):
        d = self.copy("console")
        with open(os.path.join(d, "manifest.json")) as f:
            man = json.load(f)
        boot = next(c for c in man["cells"] if c["variant"] == "after")
        boot["problems"] = [f"lockdep: {LOCKDEP_LINE}"]
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(man, f)
        log = os.path.join(d, "cells", boot["id"], "console.log")
        self.plant(log, "link", self.secret)
        # the report goes on (the variant is unsafe all the same); the
        # console it does not read is one line on stderr and in summary.md
        _out, err, _ = self.check(d, [os.path.join(ROOT, "run.sh"), "report",
                                      d, "-q"], status=0)
        want = f"cells/{boot['id']}/console.log: a symbolic link, not followed"
        refusals = [x for x in err.splitlines() if "console.log" in x]
        self.assertEqual(len(refusals), 1, err)
        self.assertIn(want, refusals[0])
        with open(os.path.join(d, "summary.md")) as f:
            md = f.read()
        self.assertIn(want, md)
        with open(os.path.join(d, "answer.txt")) as f:
            self.assertIn("unsafe", f.read())

    # item 8: the plots and recheck read odd files as they came

    def test_fifo_samples_csv(self):
        d = self.copy("samples")
        self.plant(os.path.join(d, "tidy", "samples.csv"), "fifo")
        self.check(d, [PY, "-m", "plots.make_plots", d], prog="make_plots",
                   words=("tidy/samples.csv", "a FIFO"))

    def test_fifo_answer_txt(self):
        d = self.copy("answer")
        self.plant(os.path.join(d, "answer.txt"), "fifo")
        self.check(d, [PY, "-m", "plots.pages", d], prog="pages",
                   words=("answer.txt", "a FIFO"))

    def test_legend_txt_to_dev_zero(self):
        d = self.copy("legend")
        self.plant(os.path.join(d, "legend.txt"), "link", "/dev/zero")
        self.check(d, [PY, "-m", "plots.pages", d], prog="pages",
                   words=("legend.txt", "a symbolic link"))

    def test_plots_json_nested_deep(self):
        d = self.copy("plotsjson")
        self.plant(os.path.join(d, "plots", "plots.json"),
                   "[" * 100_000 + "]" * 100_000)
        self.check(d, [PY, "-m", "plots.pages", d], prog="pages",
                   words=("plots.json", "nested deeper"))

    def recheck_run(self, d):
        """A boot's run directory as ./run.sh boot --job writes it."""
        os.makedirs(os.path.join(d, "points", "p1"))
        with open(os.path.join(d, "console.log"), "w") as f:
            f.write("LOCKBENCH-INIT\nlockbench: point p1 start\n"
                    "LOCKBENCH-JOB-END\n")
        for n in ("results.txt", "lock_stat.txt"):
            with open(os.path.join(d, "points", "p1", n), "w") as f:
                f.write("x\n")
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump({"points_planned": ["p1"], "state": "ok", "problems": [],
                       "build": {"lock_stat": True}}, f)

    def test_recheck_meta_json_nested_deep(self):
        d = os.path.join(self.tmp, "recheck", "run")
        self.recheck_run(d)
        recheck = [os.path.join(ROOT, "run.sh"), "recheck", d]
        out, _err, _ = self.check(d, recheck, status=0)
        self.assertEqual(out, f"recheck: {d}: ok\n")
        self.plant(os.path.join(d, "meta.json"),
                   "[" * 100_000 + "]" * 100_000)
        self.check(d, recheck, prog="recheck",
                   words=("meta.json", "nested deeper"))

    def test_recheck_console_log_link(self):
        d = os.path.join(self.tmp, "recheck-console", "run")
        self.recheck_run(d)
        self.plant(os.path.join(d, "console.log"), "link", self.secret)
        self.check(d, [os.path.join(ROOT, "run.sh"), "recheck", d],
                   prog="recheck", words=("console.log",))

    # a link to a directory in place of a folder the readers use

    def test_tidy_is_a_link_to_a_directory(self):
        d = self.copy("tidylink")
        shutil.rmtree(os.path.join(d, "tidy"))
        self.plant(os.path.join(d, "tidy"), "link",
                   os.path.join(self.outside, "folder"))
        self.check(d, [os.path.join(ROOT, "run.sh"), "report", d, "-q"],
                   prog="report", words=("tidy", "a symbolic link"))
        self.check(d, [PY, "-m", "plots", d], prog="plots",
                   words=("tidy", "a symbolic link"))
        self.check(d, [os.path.join(ROOT, "run.sh"), "analyze", d],
                   prog="analyze", words=("tidy", "a symbolic link"))

    def test_plots_is_a_link_to_a_directory(self):
        d = self.copy("plotslink")
        self.plant(os.path.join(d, "plots"), "link",
                   os.path.join(self.outside, "folder"))
        self.check(d, [PY, "-m", "plots", d], prog="plots",
                   words=("plots", "a symbolic link"))

    def test_boot_is_a_link_to_a_directory(self):
        """A boot's folder is a link to a copy of it outside that holds the
        secret as its results: analyze (run by the report) records the
        boot as not read, and quotes nothing of it."""
        d = self.copy("celllink")
        cid = "r01-after-c2"
        outside = os.path.join(self.tmp, "celllink", "elsewhere")
        shutil.copytree(os.path.join(d, "cells", cid), outside)
        with open(os.path.join(outside, "points", "p1", "results.txt"),
                  "w") as f:
            f.write(f"{SECRET}\n")
        self.plant(os.path.join(d, "cells", cid), "link", outside)
        os.utime(os.path.join(d, "manifest.json"))  # the tidy files stale
        self.check(d, [os.path.join(ROOT, "run.sh"), "report", d, "-q",
                       "--no-plots"], status=0)
        with open(os.path.join(d, "tidy", "problems.csv"), newline="") as f:
            got = {r["cell"]: r["problem"] for r in csv.DictReader(f)}
        self.assertEqual(got, {cid: f"boot directory cells/{cid}: a symbolic "
                                    "link, not a directory"})

    def test_campaign_cells_is_a_link(self):
        camp = os.path.join(self.tmp, "recheck-camp", "run")
        self.recheck_run(os.path.join(self.outside, "cells", "r01-a-c1"))
        os.makedirs(camp)
        with open(os.path.join(camp, "manifest.json"), "w") as f:
            f.write("{}")
        self.plant(os.path.join(camp, "cells"), "link",
                   os.path.join(self.outside, "cells"))
        self.check(camp, [os.path.join(ROOT, "run.sh"), "recheck", camp],
                   prog="recheck", words=("cells", "a symbolic link"))


if __name__ == "__main__":
    unittest.main()
