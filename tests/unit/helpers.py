# SPDX-License-Identifier: GPL-2.0
"""Small helpers shared by the unit tests."""

import contextlib
import io
import os

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
