# SPDX-License-Identifier: GPL-2.0
"""A hostile guest against the host's collector (issue #17): crafted tar
streams through the real collect.collect(), and a crafted console
through the real qemu.watch() (a real process writing to a pipe).
Each test checks what the host kept, what it refused (one line each),
that the next point is still collected and that nothing was written
outside the run directory."""

import hashlib
import io
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
import unittest
import unittest.mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from guest import collect, judge, qemu  # noqa: E402

RESULTS = "mbox_bench-results v1\nparam read_pct=50\nrun id={} threads=2\nend status=SUCCESS\n"


def point_files(rid, extra=None):
    """The files of a good point whose module run had id rid."""
    files = {"results.txt": RESULTS.format(rid).encode(), "lock_stat.txt": b"lock_stat v0.4\n"}
    files.update(extra or {})
    files["SHA256SUMS"] = "".join(f"{hashlib.sha256(v).hexdigest()}  {k}\n"
                                  for k, v in files.items()).encode()
    return files


def add_point(tar, pid, files, **meta):
    """points/PID/ and its files, as the guest's tar makes them, with
    meta (mode, uid, gid, uname, mtime) on every member."""
    d = tarfile.TarInfo(f"points/{pid}")
    d.type, d.mode = tarfile.DIRTYPE, 0o755
    for k, v in meta.items():
        setattr(d, k, v)
    tar.addfile(d)
    for name, data in files.items():
        add_file(tar, f"points/{pid}/{name}", data, **meta)


def add_file(tar, name, data, **meta):
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    for k, v in meta.items():
        setattr(info, k, v)
    tar.addfile(info, io.BytesIO(data))


def add_special(tar, name, kind, linkname=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    info.devmajor, info.devminor = 1, 3
    tar.addfile(info)


class Collect(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="collect-hostile-")
        self.stream = os.path.join(self.tmp, "stream.tar")
        self.out = os.path.join(self.tmp, "run")
        os.mkdir(self.out)
        self.umask = os.umask(0o022)

    def tearDown(self):
        os.umask(self.umask)
        shutil.rmtree(self.tmp)

    def collect(self, planned, fill):
        with tarfile.open(self.stream, "w", format=tarfile.GNU_FORMAT) as tar:
            fill(tar)
        got = collect.collect(self.stream, self.out, planned)
        # Nothing outside the run directory, nothing in it but points/.
        self.assertEqual(sorted(os.listdir(self.tmp)), ["run", "stream.tar"])
        self.assertEqual(os.listdir(self.out), ["points"])
        return got

    def assertPlainTree(self):
        """Every entry under the run directory: a directory 0755 or a
        regular file 0644 of this user, no link, no set-id bit."""
        for root, dirs, files in os.walk(self.out):
            for name in dirs + files:
                st = os.lstat(os.path.join(root, name))
                self.assertEqual(st.st_uid, os.geteuid(), name)
                self.assertEqual(st.st_gid, os.getegid(), name)
                self.assertEqual(stat.S_IMODE(st.st_mode),
                                 0o755 if name in dirs else 0o644, name)
                self.assertTrue(stat.S_ISDIR(st.st_mode) if name in dirs
                                else stat.S_ISREG(st.st_mode), name)

    def test_guest_metadata_is_ignored(self):
        """Modes 06777/0777, owner 4242, mtime 0 in the guest's tar: the
        host's files are 0644/0755, its own, stamped now."""
        t0 = time.time() - 5
        meta = {"mode": 0o6777, "uid": 4242, "gid": 4242, "uname": "evil",
                "gname": "evil", "mtime": 0}
        done, bad, nowrite = self.collect(["p1"], lambda tar: add_point(
            tar, "p1", point_files(1), **meta))
        self.assertEqual((done, bad, nowrite), (["p1"], [], False))
        self.assertPlainTree()
        self.assertGreater(os.stat(os.path.join(self.out, "points", "p1",
                                                "results.txt")).st_mtime, t0)

    def test_sparse_member(self):
        """A 4 GiB sparse results.txt (a few KiB of stream, GNU and PAX
        sparse formats): refused at once, never expanded; the next point
        is collected."""
        src = os.path.join(self.tmp, "src")
        os.makedirs(os.path.join(src, "points", "p1"))
        with open(os.path.join(src, "points", "p1", "results.txt"), "wb") as f:
            f.truncate(4 << 30)
        for fmt in ("gnu", "pax"):
            with self.subTest(fmt=fmt):
                subprocess.run(["tar", "-cSf", self.stream, f"--format={fmt}", "-C", src,
                                "points/p1"], check=True)
                self.assertLess(os.path.getsize(self.stream), 20 << 10)
                with open(self.stream, "r+b") as f:  # the guest's next point
                    f.seek(0, 2)
                    with tarfile.open(fileobj=f, mode="w") as tar:
                        add_point(tar, "p2", point_files(2))
                t0 = time.monotonic()
                done, bad, _ = collect.collect(self.stream, self.out, ["p1", "p2"])
                self.assertLess(time.monotonic() - t0, 30)
                self.assertEqual(done, ["p2"])
                self.assertEqual(bad, ["unexpected member 'points/p1/results.txt' in the "
                                       "results stream: a sparse file"])
                self.assertFalse(os.path.exists(os.path.join(self.out, "points", "p1",
                                                             "results.txt")))
                shutil.rmtree(os.path.join(self.out, "points"))
        shutil.rmtree(src)

    def test_oversized_members(self):
        """results.txt over its cap, and a member whose header claims
        more than MEMBER_MAX (the stream ends there): refused from the
        header, nothing read into memory; the points before are kept."""
        big = b"x" * (collect.FILE_MAX["results.txt"] + 1)

        def fill(tar):
            add_point(tar, "p1", point_files(1, {"results.txt": big}))
            add_point(tar, "p2", point_files(2))
            info = tarfile.TarInfo("points/p3/perf.data")
            info.size = collect.MEMBER_MAX + 1
            tar.fileobj.write(info.tobuf(tarfile.GNU_FORMAT))
        tracemalloc.start()
        try:
            done, bad, nowrite = self.collect(["p1", "p2", "p3"], fill)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertEqual((done, nowrite), (["p2"], False))
        self.assertLess(peak, 8 << 20)
        self.assertEqual(bad[0], "unexpected member 'points/p1/results.txt' in the results "
                         f"stream: {len(big)} bytes, over its cap of {len(big) - 1}")
        self.assertEqual(bad[1], "unexpected member 'points/p3/perf.data' in the results "
                         f"stream: {collect.MEMBER_MAX + 1} bytes, over its cap of "
                         f"{collect.MEMBER_MAX}")
        self.assertTrue(bad[2].startswith("results stream cut or garbled"), bad)
        self.assertIn("point p1: results.txt does not match the guest's SHA-256", bad)
        self.assertPlainTree()

    def test_bad_members_each_refused_next_point_kept(self):
        """., .., an empty name, a symbolic link, a hard link, devices, a
        fifo, a name too long for the file system, a second copy: one line
        each, and the point after them is collected."""
        def fill(tar):
            add_file(tar, "", b"")
            add_file(tar, ".", b"")
            add_file(tar, "..", b"")
            add_file(tar, "points/p1/.", b"")
            add_file(tar, "points/p1/..", b"")
            add_file(tar, "points/p1/", b"")
            add_special(tar, "points/p1/lock_stat.txt", tarfile.SYMTYPE, "/etc/passwd")
            add_special(tar, "points/p1/results.txt", tarfile.LNKTYPE, "/etc/passwd")
            add_special(tar, "points/p1/run.log", tarfile.CHRTYPE)
            add_special(tar, "points/p1/perf.data", tarfile.BLKTYPE)
            add_special(tar, "points/p1/perf-stat.csv", tarfile.FIFOTYPE)
            add_special(tar, "points/p1/sub", tarfile.DIRTYPE)
            add_file(tar, "points/p1/" + "n" * 300, b"x")
            add_file(tar, "points/p9/results.txt", b"x")
            add_point(tar, "p1", point_files(1))
            add_file(tar, "points/p1/results.txt", b"the second copy")
            add_point(tar, "p2", point_files(2))
        # All the lines (the bound on them is test_refused_lines_are_bounded's).
        with unittest.mock.patch.object(judge, "PROBLEMS_KEPT", 20):
            done, bad, nowrite = self.collect(["p1", "p2"], fill)
        self.assertEqual((done, nowrite), (["p1", "p2"], False))
        want = ["unexpected member '' in the results stream",
                "unexpected member '.' in the results stream",
                "unexpected member '..' in the results stream",
                "unexpected member 'points/p1/.' in the results stream",
                "unexpected member 'points/p1/..' in the results stream",
                "unexpected member 'points/p1/' in the results stream",
                "unexpected member 'points/p1/lock_stat.txt' in the results stream: "
                "a symbolic link, not a regular file",
                "unexpected member 'points/p1/results.txt' in the results stream: "
                "a hard link, not a regular file",
                "unexpected member 'points/p1/run.log' in the results stream: "
                "a device or fifo, not a regular file",
                "unexpected member 'points/p1/perf.data' in the results stream: "
                "a device or fifo, not a regular file",
                "unexpected member 'points/p1/perf-stat.csv' in the results stream: "
                "a device or fifo, not a regular file",
                "unexpected member 'points/p1/sub' in the results stream: "
                "a directory, not a regular file",
                f"cannot write {('points/p1/' + 'n' * 300)[:80]!r}: File name too long",
                "unexpected member 'points/p9/results.txt' in the results stream",
                "'points/p1/results.txt' in the results stream twice: the second refused"]
        self.assertEqual(bad, want)
        with open(os.path.join(self.out, "points", "p1", "results.txt"), "rb") as f:
            self.assertEqual(f.read(), RESULTS.format(1).encode())
        self.assertPlainTree()

    def test_point_caps(self):
        """Files past POINT_FILES_MAX, and bytes past POINT_MAX (made
        small here), are refused; the point's own files stay."""
        extra = {f"f{i}": b"y" * 40 for i in range(40)}

        def fill(tar):
            add_point(tar, "p1", point_files(1))
            for name, data in extra.items():
                add_file(tar, f"points/p1/{name}", data)
        with unittest.mock.patch.object(collect, "POINT_MAX", 1000):
            done, bad, _ = self.collect(["p1"], fill)
        self.assertEqual(done, ["p1"])
        self.assertRegex(bad[0], r"^unexpected member 'points/p1/f\d+' in the results stream: "
                         r"point p1 would be over its cap of 1000 bytes$")
        pdir = os.path.join(self.out, "points", "p1")
        self.assertLessEqual(sum(os.path.getsize(os.path.join(pdir, f))
                                 for f in os.listdir(pdir)), 1000)
        shutil.rmtree(os.path.join(self.out, "points"))
        done, bad, _ = self.collect(["p1"], fill)
        self.assertEqual(done, ["p1"])
        self.assertEqual(bad[0], "unexpected member 'points/p1/f29' in the results stream: "
                         "point p1 has 32 files already")
        self.assertEqual(len(os.listdir(os.path.join(self.out, "points", "p1"))),
                         collect.POINT_FILES_MAX)

    def test_refused_lines_are_bounded(self):
        """20,000 bad members: ten lines and one count."""
        def fill(tar):
            for i in range(20000):
                add_special(tar, f"points/p1/f{i}", tarfile.SYMTYPE, "/")
            add_point(tar, "p1", point_files(1))
        done, bad, _ = self.collect(["p1"], fill)
        self.assertEqual(done, ["p1"])
        self.assertEqual(len(bad), judge.PROBLEMS_KEPT + 1)
        self.assertEqual(bad[-1], "... and 19,990 more members of the results stream refused")

    def test_run_id_must_rise_by_one_per_point(self):
        """p2 carries p1's run id (a refused run, the module's last results
        sent again): refused.  p3 (id 2: p2's refused run took no id) is
        kept; p4 jumping to id 9 and p5 with no run line are refused."""
        def fill(tar):
            add_point(tar, "p1", point_files(1))
            add_point(tar, "p2", point_files(1))
            add_point(tar, "p3", point_files(2))
            add_point(tar, "p4", point_files(9))
            no_id = point_files(0, {"results.txt": b"mbox_bench-results v1\n"})
            add_point(tar, "p5", no_id)
        done, bad, _ = self.collect(["p1", "p2", "p3", "p4", "p5"], fill)
        self.assertEqual(done, ["p1", "p3"])
        self.assertEqual(bad, [
            "point p2: results.txt has run id=1 after point p1's id=1: "
            "an earlier run's results, refused",
            "point p4: results.txt has run id=9 after point p3's id=2: "
            "more runs than points, refused",
            "point p5: results.txt has no run id (no 'run id=N' line): "
            "the module's run did not finish"])

    def test_sha256_file_reads_in_chunks(self):
        """A 64 MiB file hashed with a bounded amount of memory."""
        path = os.path.join(self.tmp, "big")
        with open(path, "wb") as f:
            f.truncate(64 << 20)
        tracemalloc.start()
        try:
            digest = collect.sha256_file(path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertEqual(digest, hashlib.sha256(bytes(64 << 20)).hexdigest())
        self.assertLess(peak, 4 << 20)


class Console(unittest.TestCase):
    """qemu.watch() reading a real process's output through a pipe."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="console-hostile-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def watch(self, script):
        proc = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)
        events, problems = {}, []
        t0 = time.process_time()
        try:
            stopped = qemu.watch(proc, os.path.join(self.tmp, "console.log"), 120, 60,
                                      os.path.join(self.tmp, ".results.tar"), events, problems)
        finally:
            qemu.stop(proc)
            proc.stdout.close()
        self.cpu_s = time.process_time() - t0
        self.assertIsNone(stopped)
        return events, problems

    def test_split_lines_is_bounded(self):
        """50 MB without a newline, in 64 KiB reads: the partial line
        never holds more than LINE_MAX bytes; every piece is a line."""
        pending, n = bytearray(), 0
        chunk = b"x" * 65536
        for _ in range((50 << 20) // len(chunk)):
            lines = judge.split_lines(pending, chunk)
            self.assertLessEqual(len(pending), judge.LINE_MAX)
            self.assertTrue(all(len(x) == judge.LINE_MAX for x in lines))
            n += sum(map(len, lines))
        self.assertEqual(n + len(pending), 50 << 20)
        pending[:] = b"x" * (judge.LINE_MAX - 1)
        got = judge.split_lines(pending, b"ab\ncd\n\nef")
        self.assertEqual(got, [b"x" * (judge.LINE_MAX - 1) + b"a", b"b", b"cd", b""])
        self.assertEqual(bytes(pending), b"ef")

    def test_long_line_without_newline(self):
        """50 MB on the console with no newline, then a panic line: the
        whole console is in console.log, the panic found, nothing else."""
        size = 50 << 20
        _, problems = self.watch(f"head -c {size} /dev/zero | tr '\\0' x; "
                                 "echo; echo 'Kernel panic - not syncing: x'")
        self.assertEqual(os.path.getsize(os.path.join(self.tmp, "console.log")),
                         size + 1 + len("Kernel panic - not syncing: x\n"))
        self.assertEqual([p["state"] for p in problems], ["panic"])
        # Linear: measured ~0.3 s of this runner's CPU on a 2-core host
        # (it was 165 s); the bound leaves room for a slow, busy host.
        self.assertLess(self.cpu_s, 20)

    def test_silent_after_lockdep_is_hung_sooner(self):
        """A deadlock after lockdep's report: the guest goes quiet, and the
        silence limit drops from 60 s to the lockdep one (1 s here); the
        same silence without a report waits the full limit (3 s here)."""
        proc = subprocess.Popen(["sh", "-c", "echo 'WARNING: possible recursive locking "
                                 "detected'; sleep 30"], stdout=subprocess.PIPE)
        events, problems = {}, []
        t0 = time.monotonic()
        try:
            stopped = qemu.watch(proc, os.path.join(self.tmp, "console.log"), 120, 60,
                                      os.path.join(self.tmp, ".results.tar"), events, problems,
                                      lockdep_silence=1)
        finally:
            qemu.stop(proc)
            proc.stdout.close()
        self.assertLess(time.monotonic() - t0, 20)
        self.assertEqual(stopped, ("hung", "no console output or results for 1 s after "
                                   "lockdep's report (a deadlock)"))
        self.assertEqual([p["state"] for p in problems], ["lockdep"])
        proc = subprocess.Popen(["sh", "-c", "echo quiet; sleep 30"], stdout=subprocess.PIPE)
        t0 = time.monotonic()
        try:
            stopped = qemu.watch(proc, os.path.join(self.tmp, "console2.log"), 120, 3,
                                      os.path.join(self.tmp, ".results.tar"), {}, [],
                                      lockdep_silence=1)
        finally:
            qemu.stop(proc)
            proc.stdout.close()
        self.assertGreaterEqual(time.monotonic() - t0, 3)
        self.assertEqual(stopped, ("hung", "no console output or results for 3 s"))

    def test_many_warnings_make_a_few_problems(self):
        """200,000 WARNING: lines: the first ten kept, one line counts the
        rest; the end marker after them is still seen."""
        events, problems = self.watch(
            "yes 'WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x4' | head -n 200000; "
            "echo 'LOCKBENCH-JOB-END status=ok'")
        self.assertEqual(len(problems), judge.PROBLEMS_KEPT + 1)
        self.assertTrue(all(p["state"] == "warning" for p in problems))
        self.assertEqual(problems[-1]["line"],
                         "... and 199,990 more warning lines (console.log has them)")
        self.assertIn("LOCKBENCH-JOB-END", events)


if __name__ == "__main__":
    unittest.main()
