# SPDX-License-Identifier: GPL-2.0
"""Small helpers shared by the unit tests."""

import contextlib
import csv
import io
import os
import threading

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "fixtures")


def fixture(name):
    return os.path.join(FIXTURES, name)


def run_main(main, argv):
    """Call main(argv); return (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def read(name):
    with open(fixture(name)) as f:
        return f.read()


class VcpuThread:
    """Mixin for a TestCase: around each test, a thread of this process
    named "CPU 0/TCG" (self.tid), as QEMU names its first vCPU thread with
    debug-threads=on (Linux lets a process rename its own threads). With
    BUSY it spins, so that it accumulates run time, else it sleeps."""
    BUSY = False

    def setUp(self):
        self.stop = threading.Event()
        self.named = threading.Event()
        self.tid = None
        self.thread = threading.Thread(target=self._vcpu)
        self.thread.start()
        self.assertTrue(self.named.wait(10))

    def tearDown(self):
        self.stop.set()
        self.thread.join()

    def _vcpu(self):
        self.tid = threading.get_native_id()
        with open(f"/proc/self/task/{self.tid}/comm", "w") as f:
            f.write("CPU 0/TCG")
        self.named.set()
        if not self.BUSY:
            self.stop.wait()
        while not self.stop.is_set():
            sum(range(1000))


def read_csv(path):
    """A CSV file's rows, as dicts of strings."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def needs(*tools):
    """A test that needs TOOLS fails, naming them, where one is missing:
    ./run.sh setup installs them all, and a skipped test would pass for
    one that ran."""
    import functools
    import shutil

    def wrap(test):
        @functools.wraps(test)
        def run(self, *args, **kw):
            missing = [t for t in tools if not shutil.which(t)]
            if missing:
                self.fail(f"{', '.join(missing)} not installed: run ./run.sh setup")
            return test(self, *args, **kw)
        return run
    return wrap
