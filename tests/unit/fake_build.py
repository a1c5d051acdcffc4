# SPDX-License-Identifier: GPL-2.0
"""A build folder (LOCKBENCH_BUILD) whose Debian source tree is a tiny git
repository with a kernel's marks, for the tests that run the real
scripts/build-kernel.sh --tree-only and ./run.sh convert without a kernel:
build-kernel.sh finds the tree extracted already (its stamp says the
installed linux-source-6.1's version) and makes a worktree of it; the
variant "tv" (a folder of LOCKBENCH_VARIANT_PATH) applies no patch.  A
full build of it would fail at its config (the tree has no Kconfig):
nothing here ever compiles."""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

VARIANT = """description = "a test variant of a tiny tree"
patches = []
configs = []
"""
DEMO = """// SPDX-License-Identifier: GPL-2.0
static DEFINE_RWLOCK(demo_lock);
static int demo_count;

int demo_read(void)
{
	int n;

	read_lock(&demo_lock);
	n = demo_count;
	read_unlock(&demo_lock);
	return n;
}

void demo_write(int n)
{
	write_lock(&demo_lock);
	demo_count = n;
	write_unlock(&demo_lock);
}
"""
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def _git(cwd, *args):
    subprocess.run(["git", "-C", cwd, *args], check=True, capture_output=True,
                   env=dict(os.environ, **GIT_ENV))


def make(top):
    """TOP/build (the tiny tree its source) and TOP/variants (tv.toml);
    returns the environment to run the harness's commands in."""
    build = os.path.join(top, "build")
    repo = os.path.join(build, "src", "linux-source-6.1")
    files = {"Makefile": "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\nEXTRAVERSION =\n",
             "kernel/locking/lockdep.c": "/* lockdep */\n", "fs/demo.c": DEMO,
             # what convert reads to tell that the base builds fs/demo.c
             "Kbuild": "obj-y += fs/\n", "fs/Makefile": "obj-y += demo.o\n"}
    for name, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(repo, name)), exist_ok=True)
        with open(os.path.join(repo, name), "w") as f:
            f.write(text)
    _git(repo, "init", "-q", "-b", "debian")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "a tiny tree")
    _git(repo, "tag", "base")
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "linux-source-6.1"],
                             capture_output=True, text=True, check=True).stdout
    with open(repo + ".stamp", "w") as f:
        f.write(version + "\n")
    variants = os.path.join(top, "variants")
    os.makedirs(variants)
    with open(os.path.join(variants, "tv.toml"), "w") as f:
        f.write(VARIANT)
    return dict(os.environ, LOCKBENCH_BUILD=build, LOCKBENCH_VARIANT_PATH=variants,
                LOCKBENCH_TREE_MB="1", **GIT_ENV)
