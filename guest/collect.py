# SPDX-License-Identifier: GPL-2.0
"""Bring a guest's results home: the tar stream the guest wrote to its
results port is unpacked point by point into OUT/points/ID/, each file
checked against the point's SHA256SUMS and its run id against the
point's before.  The guest is not trusted (guest/JOB.md): collect()
writes every file itself, within the caps below, reads the stream within
the limits below (time, members, bytes per header: no stream keeps the
runner here), and a full results disk or a limit reached keeps the raw
stream instead of losing it."""
import errno
import hashlib
import os
import re
import stat
import tarfile
import time

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
# A point holds at most 8 files (guest/JOB.md).
POINT_FILES_MAX = 32
COPY_CHUNK = 1 << 20
# How long collect() may read the stream (and then verify what it wrote:
# Limits).  A legitimate 1 GiB point (perf.data, the most a guest's /tmp
# holds) took 5-10 s to unpack and 1 s to verify on the 2-core development
# host at load 3; 120 s leaves a margin of 12 for a slower disk, a busier
# host or a few such points, and ends a crafted stream that would keep the
# runner here for ever (a negative size looped tarfile: 174,543 refused
# members in 20 s, SIGTERM ignored, no meta.json).
COLLECT_MAX_S = 120
# Once the runner has a signal (SIGINT, SIGTERM: a user or a stopped
# campaign), collecting takes at most this much longer, so that the runner
# ends and writes meta.json within lockbench/dirlock.py's RUNNER_END_S (30 s,
# QEMU's stop of at most 5 s included); a real stream is collected in
# well under a second.
SIGNAL_MAX_S = 10
# Members read, refused ones included: a point is points/ID and at most 8
# files (guest/JOB.md), POINT_FILES_MAX + 1 allowed per planned point,
# and MEMBERS_SPARE more for refused ones (each is a problem, counted:
# 100,000 took 2.3 s here; a 1 GiB stream of bare headers holds 2 million).
MEMBERS_SPARE = 100_000
# What one tarfile.next() may read: a header, its pax or GNU long-name
# records and the zero blocks between the guest's archives (10 KiB per
# point; busybox writes no pax records).  Past it the stream is garbage.
HEADER_MAX = 1 << 20


def point_needs(build):
    """POINT_NEEDS for a kernel's build-meta.json: without CONFIG_LOCK_STAT
    ("lock_stat": false) the guest has no /proc/lock_stat to dump."""
    if build.get("lock_stat", True) is False:
        return tuple(n for n in POINT_NEEDS if n != "lock_stat.txt")
    return POINT_NEEDS


class Stop(Exception):
    """collect() stopped at one of its limits before the end; str() is why,
    one line."""


class Limits:
    """collect()'s budget: COLLECT_MAX_S to read the stream, as much again
    to verify what it wrote (hashing is faster than reading and writing:
    what was unpacked in time is verified, not lost), and SIGNAL_MAX_S in
    all once signals (the runner's list of the signals it got, the one
    that stopped the guest included) is not empty."""

    def __init__(self, signals=()):
        self.signals, self.signalled = signals, None
        self.restart()

    def restart(self):
        """A new COLLECT_MAX_S (the signal's limit stays)."""
        self.deadline = time.monotonic() + COLLECT_MAX_S

    def check(self):
        """Raise Stop when the budget is spent."""
        now = time.monotonic()
        if self.signals and self.signalled is None:
            self.signalled = now
        if self.signalled is not None and now > self.signalled + SIGNAL_MAX_S:
            raise Stop(f"the runner got {self.signals[0]}, and collecting went on for "
                       f"{SIGNAL_MAX_S} s after it")
        if now > self.deadline:
            raise Stop(f"collecting took over its limit of {COLLECT_MAX_S} s")


class Stream:
    """The results stream as tarfile reads it (read, seek, tell).  tarfile
    believes a header's size: a negative one seeks it back to a header it
    has read (a loop, for ever) or reads the whole stream at once, a huge
    one seeks where the C library cannot.  So here every read checks the
    limits, and a read of a negative length, or of over HEADER_MAX in one
    tarfile.next(), a seek back behind what was read, or past the end, is
    a garbled or cut stream (tarfile.ReadError): nothing is read twice."""

    def __init__(self, f, limits):
        self.f, self.limits, self.name, self.mode = f, limits, f.name, "rb"
        self.size = os.fstat(f.fileno()).st_size
        self.high = 0  # the furthest offset read
        self.header_left = None  # bytes the tarfile.next() under way may still read

    def read(self, n):
        if n < 0:
            raise tarfile.ReadError("a header with a negative size")
        if self.header_left is not None:
            if n > self.header_left:
                raise tarfile.ReadError(f"no member in {HEADER_MAX} bytes")
            self.header_left -= n
        self.limits.check()
        data = self.f.read(n)
        self.high = max(self.high, self.f.tell())
        return data

    def seek(self, pos):
        # tarfile's probe of a member's last byte seeks one byte back.
        if pos < self.high - 1:
            raise tarfile.ReadError(f"a header's size leads back to offset {pos}, "
                                    "behind what was read")
        if pos > self.size:
            raise tarfile.ReadError("unexpected end of data")
        return self.f.seek(pos)

    def tell(self):
        return self.f.tell()

    def seekable(self):
        return True

    def header(self, read):
        """read() (tarfile.open(), tar.next(): tarfile parsing the guest's
        headers) within HEADER_MAX bytes.  Any error of tarfile's there (a
        ValueError from a sparse map of letters, an IndexError from a
        sparse header cut short) is a garbled stream."""
        self.header_left = HEADER_MAX
        try:
            return read()
        except (Stop, tarfile.TarError, OSError):  # OSError: the disk under the stream
            raise
        except Exception as e:  # the guest's bytes in tarfile's parser
            raise tarfile.ReadError(f"{e.__class__.__name__}: {str(e)[:100]}") from None
        finally:
            self.header_left = None


def sha256_file(path, limits=None):
    """SHA-256 of a file, read in chunks (a file may be as big as
    MEMBER_MAX), within limits (a Limits)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(COPY_CHUNK):
            if limits:
                limits.check()
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


def unpack(results_path, out, planned, bad, limits):
    """Unpack the guest's tar stream into out/points, member by member:
    a member that may not be unpacked, or cannot be written, is one line
    in bad and the next member is tried.  A garbled stream (a member of a
    negative size: tarfile cannot skip it) ends unpacking, as do the
    limits (limits, a Limits, and a number of members).  Return whether
    the raw stream must be kept: the results disk was full, or a limit
    stopped unpacking before the end."""
    counts, sizes, files = {}, {}, {}
    members_max = MEMBERS_SPARE + (POINT_FILES_MAX + 1) * len(planned)
    read = 0

    def reject(line):
        note(bad, counts, "member", line,
             lambda n: f"... and {n:,} more members of the results stream refused")

    try:
        with open(results_path, "rb") as f:
            stream = Stream(f, limits)
            # "r:": a plain tar, as the guest's busybox writes it; never a
            # compressed stream, decompressed here whatever its ratio.
            with stream.header(lambda: tarfile.open(fileobj=stream, mode="r:",
                                                    ignore_zeros=True)) as tar:
                # next(), not iteration: tarfile would keep every member
                # read in tar.members, a list as long as the guest makes it.
                while (m := stream.header(tar.next)) is not None:
                    tar.members.clear()
                    if m.size < 0:
                        # Checked before tarfile seeks to the next header,
                        # which would be behind this one.
                        bad.append(f"results stream garbled: member {m.name[:80]!r} has a "
                                   f"negative size ({m.size}): not read further")
                        return False
                    if read == members_max:
                        raise Stop(f"over {members_max:,} members ({POINT_FILES_MAX + 1} per "
                                   f"planned point and {MEMBERS_SPARE:,} refused)")
                    full = unpack_one(tar, m, out, planned, sizes, files, reject)
                    if full is not None:
                        bad.append(f"cannot write the points into {out}: {full.strerror}")
                        return True
                    read += 1
    except Stop as e:
        bad.append(f"results stream left unread after {read:,} members: {e}")
        return True
    except (tarfile.TarError, EOFError) as e:
        bad.append(f"results stream cut or garbled: {e}")
    except OSError as e:
        # The stream itself unreadable (the disk under the run directory).
        bad.append(f"cannot read the results stream {results_path}: {e.strerror or e}")
    return False


def unpack_one(tar, m, out, planned, sizes, files, reject):
    """Unpack member m, or reject() it (one line); return the OSError of a
    full results disk, or None."""
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
        return None
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
            return e
        reject(f"cannot write {m.name[:80]!r}: {e.strerror or e}")
    return None


# The run line of results.txt (bench-module/FORMAT.md): "run id=N ...".
RUN_ID = re.compile(r"^run (?:\S+ )*?id=(\d+)(?: |$)", re.M)
# The module's run counter is an unsigned int; no run id is over a u64's
# 20 digits (and int() of a longer string is Python's to refuse: over
# 4300 digits it raised ValueError, and the runner died without meta.json).
RUN_ID_MAX = 2**64 - 1


def run_id(path):
    """The module's run id in a point's results.txt (capped in size by
    FILE_MAX), or None when it has none; ValueError (one line) for an id
    no u64 holds."""
    with open(path, errors="replace") as f:
        m = RUN_ID.search(f.read(FILE_MAX["results.txt"]))
    if not m:
        return None
    digits = m.group(1)
    if len(digits) > len(str(RUN_ID_MAX)) or int(digits) > RUN_ID_MAX:
        raise ValueError(f"results.txt has run id={digits[:20]}"
                         + (f"... ({len(digits):,} digits)" if len(digits) > 20 else "")
                         + ": over a u64, not a run id, refused")
    return int(digits)


def read_sums(path, problem):
    """The {name: digest} of a point's SHA256SUMS (a file collect() wrote,
    capped by FILE_MAX), and whether every line is well formed and names a
    file once: a name listed twice is the point's problem, never a second
    hash of its file."""
    sums, ok, twice = {}, True, set()
    with open(path, errors="replace") as f:
        for line in f:
            digest, _, name = line.rstrip("\n").partition("  ")
            if not re.fullmatch(r"[0-9a-f]{64}", digest) or not POINT_FILE.fullmatch(name):
                problem(f"SHA256SUMS line {line.strip()[:60]!r} is garbled")
                ok = False
            elif name in sums:
                if name not in twice:
                    problem(f"SHA256SUMS lists {name} more than once")
                    twice.add(name)
                ok = False
            else:
                sums[name] = digest
    return sums, ok


def verified(d, needs, problem, limits):
    """Does point directory d check against its SHA256SUMS: each file
    listed hashed once, and every file of needs listed?"""
    sums, ok = read_sums(os.path.join(d, "SHA256SUMS"), problem)
    for name, digest in sums.items():
        p = os.path.join(d, name)
        if not os.path.isfile(p) or sha256_file(p, limits) != digest:
            problem(f"{name} does not match the guest's SHA-256")
            ok = False
    for name in needs:
        if name not in sums:
            problem(f"SHA256SUMS does not list {name}")
            ok = False
    return ok


def collect(results_path, out, planned, needs=POINT_NEEDS, signals=()):
    """Unpack the guest's tar stream; return (ids of the verified points,
    problems, whether to keep the raw stream: writing the points failed,
    or a limit stopped collecting before the end).  signals: the runner's
    list of the signals it got (Limits)."""
    done, bad = [], []
    if not os.path.isfile(results_path) or os.path.getsize(results_path) == 0:
        return done, bad, False
    limits = Limits(signals)
    keep = unpack(results_path, out, planned, bad, limits)
    limits.restart()
    return done, bad, check_points(out, planned, needs, limits, done, bad) or keep


def check_points(out, planned, needs, limits, done, bad):
    """Append to done the planned points in out/points that check against
    their SHA256SUMS and whose run ids rise; one line in bad per problem.
    Return whether the limits stopped it (one line)."""
    counts = {}
    last = None  # (index, id, point) of the last point kept
    top = None  # (id, point): the highest run id of the points before
    for i, pid in enumerate(planned):
        d = os.path.join(out, "points", pid)
        if not os.path.isdir(d):
            continue

        def problem(line, pid=pid):
            note(bad, counts, pid, f"point {pid}: {line}",
                 lambda n: f"point {pid}: ... and {n:,} more problems")
        try:
            ok = (os.path.isfile(os.path.join(d, "SHA256SUMS"))
                  and verified(d, needs, problem, limits))
        except Stop as e:
            left = [p for p in planned[i:] if os.path.isdir(os.path.join(out, "points", p))]
            bad.append(f"points not verified: {' '.join(left)}: {e}")
            return True
        try:
            results = os.path.join(d, "results.txt")
            rid = run_id(results) if os.path.isfile(results) else None
        except ValueError as e:
            if ok:
                problem(str(e))
            continue
        # One write to the module's run file per point, in job order, and
        # each run that starts takes the next id (a run refused at its
        # parameter check takes none): a point's id is above that of every
        # point before it that has one, kept or not (a point that failed
        # its check still ran), and above the last kept point's by at most
        # the points between.  An id that does not rise is an earlier
        # run's results (a guest whose run failed and sent what the module
        # still had).
        before = top
        if rid is not None and (top is None or rid > top[0]):
            top = (rid, pid)
        if not ok:
            continue
        if rid is None:
            problem("results.txt has no run id (no 'run id=N' line): the module's run did not finish")
        elif before is not None and rid <= before[0]:
            problem(f"results.txt has run id={rid} after point {before[1]}'s id={before[0]}: "
                    "an earlier run's results, refused")
        elif last is not None and rid > last[1] + i - last[0]:
            problem(f"results.txt has run id={rid} after point {last[2]}'s id={last[1]}: "
                    "more runs than points, refused")
        else:
            last = (i, rid, pid)
            done.append(pid)
    return False
