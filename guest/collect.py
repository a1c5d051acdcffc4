# SPDX-License-Identifier: GPL-2.0
"""Bring a guest's results home: the tar stream the guest wrote to its
results port is unpacked point by point into OUT/points/ID/, each file
checked against the point's SHA256SUMS and its run id against the
point's before.  The guest is not trusted (guest/JOB.md): collect()
writes every file itself, within the caps below, and a full results disk
keeps the raw stream instead of losing it."""
import errno
import hashlib
import os
import re
import stat
import tarfile

from guest.judge import note
from guest.vcpu import HOST_FILES

NOSPACE = (errno.ENOSPC, errno.EDQUOT)


def write_all(f, data):
    """Write data to an unbuffered file; a short write is a full disk."""
    n = f.write(data)
    if n is not None and n < len(data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f.name)


# Every point has these; its SHA256SUMS must vouch for them.
POINT_NEEDS = ("results.txt", "lock_stat.txt")
# A file name in a point (and in its SHA256SUMS): no ".", "..", hidden
# names, slashes or spaces.
POINT_FILE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
# What the guest may send, per file and per point.  The host hashes and
# parses results.txt, lock_stat.txt and SHA256SUMS: their caps are well
# over the largest real ones (over the 90 points of results/ and the
# tests' runs: results.txt 1.2 KB, lock_stat.txt 44 KB, SHA256SUMS 312 B;
# a 16-thread results.txt with every err_ key is under 10 KB).  Any other
# file (perf.data of "option perf_lock 1" is the big one) was written in
# the guest's /tmp, a tmpfs of half its memory, at most 1 GiB at --mem
# 2048, and so was the whole point: a bigger member is not a guest's file.
FILE_MAX = {"results.txt": 256 << 10, "lock_stat.txt": 4 << 20, "SHA256SUMS": 64 << 10}
MEMBER_MAX = 1 << 30
POINT_MAX = 1 << 30
# A point holds at most 7 files (guest/JOB.md).
POINT_FILES_MAX = 32
COPY_CHUNK = 1 << 20
def point_needs(build):
    """POINT_NEEDS for a kernel's build-meta.json: without CONFIG_LOCK_STAT
    ("lock_stat": false) the guest has no /proc/lock_stat to dump."""
    if build.get("lock_stat", True) is False:
        return tuple(n for n in POINT_NEEDS if n != "lock_stat.txt")
    return POINT_NEEDS


def sha256_file(path):
    """SHA-256 of a file, read in chunks (a file may be as big as MEMBER_MAX)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(COPY_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def member_problem(m, planned):
    """Why tar member m may not be unpacked (one line), or None: it may be
    a directory points/ID of a planned point, or a regular file
    points/ID/NAME in one, within its size cap."""
    parts = m.name.split("/")
    what = f"unexpected member {m.name[:80]!r} in the results stream"
    if not (len(parts) in (2, 3) and parts[0] == "points" and parts[1] in planned
            and all(POINT_FILE.fullmatch(x) for x in parts[2:])):
        return what
    if len(parts) == 2:
        return None if m.isdir() else f"{what}: not a directory"
    if not m.isreg():
        kind = ("a symbolic link" if m.issym() else "a hard link" if m.islnk()
                else "a directory" if m.isdir() else "a device or fifo"
                if m.ischr() or m.isblk() or m.isfifo() else f"of tar type {m.type!r}")
        return f"{what}: {kind}, not a regular file"
    if m.issparse():
        return f"{what}: a sparse file"
    if parts[2] in HOST_FILES:
        # Only the host measures the host: never take the guest's word for
        # it (nor let it block the host's file).
        return f"the guest sent {m.name!r}, a file only the host writes"
    cap = FILE_MAX.get(parts[2], MEMBER_MAX)
    if m.size > cap:
        return f"{what}: {m.size} bytes, over its cap of {cap}"
    return None


def make_dir(path):
    """mkdir 0755 (whatever mode the guest's tar has), or accept a
    directory that is there and no link; OSError otherwise."""
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise
    return path


def unpack_member(tar, m, out):
    """Write regular member m (checked by member_problem) under out as a
    new file of this user, mode 0644 (umask applies), with none of the
    guest's metadata; return its size.  O_EXCL|O_NOFOLLOW: never over or
    through anything that is there.  A partial file is removed."""
    d = make_dir(os.path.join(make_dir(os.path.join(out, "points")), m.name.split("/")[1]))
    path = os.path.join(d, m.name.split("/")[2])
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_WRONLY, 0o644)
    n = 0
    try:
        with os.fdopen(fd, "wb", buffering=0) as f:
            src = tar.extractfile(m)
            while chunk := src.read(COPY_CHUNK):
                n += len(chunk)
                if n > m.size:  # tarfile reads m.size bytes: never here
                    raise tarfile.ReadError(f"{m.name}: more data than its size")
                write_all(f, chunk)
    except BaseException:
        os.unlink(path)
        raise
    return n


def unpack(results_path, out, planned, bad):
    """Unpack the guest's tar stream into out/points, member by member:
    a member that may not be unpacked, or cannot be written, is one line
    in bad and the next member is tried.  Return whether the results disk
    was full (then unpacking stopped)."""
    counts, sizes, files = {}, {}, {}

    def reject(line):
        note(bad, counts, "member", line,
             lambda n: f"... and {n:,} more members of the results stream refused")

    try:
        with tarfile.open(results_path, ignore_zeros=True) as tar:
            # next(), not iteration: tarfile would keep every member read
            # in tar.members, a list as long as the guest makes it.
            while (m := tar.next()) is not None:
                tar.members.clear()
                why = member_problem(m, planned)
                pid = m.name.split("/")[1] if why is None else None
                if why is None and m.isreg():
                    what = f"unexpected member {m.name[:80]!r} in the results stream"
                    if sizes.get(pid, 0) + m.size > POINT_MAX:
                        why = f"{what}: point {pid} would be over its cap of {POINT_MAX} bytes"
                    elif files.get(pid, 0) >= POINT_FILES_MAX:
                        why = f"{what}: point {pid} has {POINT_FILES_MAX} files already"
                if why is not None:
                    reject(why)
                    continue
                try:
                    if m.isdir():
                        make_dir(os.path.join(make_dir(os.path.join(out, "points")), pid))
                    else:
                        sizes[pid] = sizes.get(pid, 0) + unpack_member(tar, m, out)
                        files[pid] = files.get(pid, 0) + 1
                except FileExistsError:
                    reject(f"{m.name[:80]!r} in the results stream twice: the second refused")
                except OSError as e:
                    if e.errno in NOSPACE:
                        bad.append(f"cannot write the points into {out}: {e.strerror}")
                        return True
                    reject(f"cannot write {m.name[:80]!r}: {e.strerror or e}")
    except (tarfile.TarError, EOFError) as e:
        bad.append(f"results stream cut or garbled: {e}")
    except OSError as e:
        # The stream itself unreadable (the disk under the run directory).
        bad.append(f"cannot read the results stream {results_path}: {e.strerror or e}")
    return False


# The run line of results.txt (bench-module/FORMAT.md): "run id=N ...".
RUN_ID = re.compile(r"^run (?:\S+ )*?id=(\d+)(?: |$)", re.M)


def run_id(path):
    """The module's run id in a point's results.txt (capped in size by
    FILE_MAX), or None when it has none."""
    with open(path, errors="replace") as f:
        m = RUN_ID.search(f.read(FILE_MAX["results.txt"]))
    return int(m.group(1)) if m else None


def collect(results_path, out, planned, needs=POINT_NEEDS):
    """Unpack the guest's tar stream; return (ids of the verified points,
    problems, whether writing the points failed)."""
    done, bad, nowrite = [], [], False
    if not os.path.isfile(results_path) or os.path.getsize(results_path) == 0:
        return done, bad, nowrite
    nowrite = unpack(results_path, out, planned, bad)
    counts = {}
    last = None  # (index, id, point) of the last point verified
    for i, pid in enumerate(planned):
        d = os.path.join(out, "points", pid)
        sums = os.path.join(d, "SHA256SUMS")
        if not os.path.isfile(sums):
            continue

        def problem(line, pid=pid):
            note(bad, counts, pid, f"point {pid}: {line}",
                 lambda n: f"point {pid}: ... and {n:,} more problems")
        ok, names = True, set()
        with open(sums, errors="replace") as f:
            for line in f:
                digest, _, name = line.rstrip("\n").partition("  ")
                if not re.fullmatch(r"[0-9a-f]{64}", digest) or not POINT_FILE.fullmatch(name):
                    problem(f"SHA256SUMS line {line.strip()[:60]!r} is garbled")
                    ok = False
                    continue
                names.add(name)
                p = os.path.join(d, name)
                if not os.path.isfile(p) or sha256_file(p) != digest:
                    problem(f"{name} does not match the guest's SHA-256")
                    ok = False
        for name in needs:
            if name not in names:
                problem(f"SHA256SUMS does not list {name}")
                ok = False
        if not ok:
            continue
        # One write to the module's run file per point, in job order, and
        # each run that starts takes the next id (a run refused at its
        # parameter check takes none): a point's id is above the last
        # verified point's, by at most the points between.  An id that
        # does not rise is an earlier run's results (a guest whose run
        # failed and sent what the module still had).
        rid = run_id(os.path.join(d, "results.txt"))
        if rid is None:
            problem("results.txt has no run id (no 'run id=N' line): the module's run did not finish")
            continue
        if last is not None and not last[1] < rid <= last[1] + i - last[0]:
            problem(f"results.txt has run id={rid} after point {last[2]}'s id={last[1]}: "
                    + ("an earlier run's results, refused" if rid <= last[1]
                       else "more runs than points, refused"))
            continue
        last = (i, rid, pid)
        done.append(pid)
    return done, bad, nowrite
