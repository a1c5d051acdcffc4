# SPDX-License-Identifier: GPL-2.0
"""Where the harness lives: the repository root (every path of the
harness is under it) and the build folder (kernels, root file systems,
the trees of ./run.sh build --tree).  The one place both are computed;
every module imports them from here.
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# LOCKBENCH_BUILD moves the build folder (as scripts/lib.sh reads it:
# the benchmarks' scratch builds, the tests' empty ones).
BUILD = os.environ.get("LOCKBENCH_BUILD", os.path.join(ROOT, "build"))
