# SPDX-License-Identifier: GPL-2.0
"""One runner per run directory.

A runner (guest/run_guest.py) holds an exclusive flock(2) on its --out
directory from the moment it claims it until it exits; a campaign's
--resume waits for that lock to be free before it moves a stopped
campaign's unfinished boot aside and starts the boot again at the same
path.

Why: a runner outlives a campaign killed outright (SIGKILL) by seconds.
It gets SIGTERM from the kernel (PR_SET_PDEATHSIG), stops its QEMU (up to
5 s), collects what came back and writes meta.json, all by path.  A
resume that moved its directory and started a new runner there before it
ended had the old runner unlink the new QEMU's results stream, and the
new boot lost its points with no other sign (CI, t-campaign, stop 23).

A campaign (scripts/campaign/main.py) holds the same lock on its run
directory for its whole run, so that a second campaign or --resume there
is refused: a lock on another directory than any runner's (cells/.tmp-ID),
so the two never meet.
"""
import fcntl
import os
import shutil
import stat
import time

#: how long a resume waits for a stopped campaign's runner to end: its
#: QEMU stop (5 s at most) and the collection of a results stream
RUNNER_END_S = 30


def _open_dir(path, nofollow):
    """A descriptor of directory path; with nofollow, of no link there (a
    run directory's cells/.tmp-ID: ELOOP, an OSError, for a link)."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | (os.O_NOFOLLOW if nofollow else 0))


def hold(path, nofollow=False):
    """Lock directory path for as long as this process lives: the open
    descriptor (never inherited: Python opens with O_CLOEXEC, so QEMU
    does not keep it), or None when another process holds it."""
    fd = _open_dir(path, nofollow)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def wait_free(path, timeout_s=RUNNER_END_S, poll_s=0.1, nofollow=False):
    """True once no process holds path's lock, waiting up to timeout_s
    seconds; False while one still does then.  The lock is not kept: the
    runner that held it has ended, and no runner takes a directory it did
    not create empty (run_guest refuses a non-empty --out)."""
    fd = _open_dir(path, nofollow)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(poll_s)
    finally:
        os.close(fd)


def held(path):
    """True when another process holds an flock(2) on the file or folder
    PATH (a build's build/TARGET/.build.lock: build-kernel.sh holds it
    while it builds); False when none does or PATH is not there.  PATH
    is opened without following a link and without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def clear(path):
    """Make way for a runner at path (a campaign's cells/.tmp-ID): a link,
    file or FIFO there is unlinked, never followed; a directory is removed
    only while no runner holds its lock (held during the removal, which
    follows no link inside it).  False, with nothing removed, when a
    runner holds it: its files are that runner's."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return True
    fd = hold(path, nofollow=True)
    if fd is None:
        return False
    try:
        shutil.rmtree(path)
    finally:
        os.close(fd)
    return True
