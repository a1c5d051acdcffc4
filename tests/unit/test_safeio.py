# SPDX-License-Identifier: GPL-2.0
"""lockbench/safeio.py: links, FIFOs, devices, sizes, depth and numbers that a
run directory may hold are refused in one line, in bounded time."""
import os
import tempfile
import time
import unittest

from lockbench import safeio


class SafeIO(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.secret = os.path.join(self.d, "secret")
        with open(self.secret, "w") as f:
            f.write("secret\n")
        os.mkdir(os.path.join(self.d, "run"))
        self.run = os.path.join(self.d, "run")

    def tearDown(self):
        self.tmp.cleanup()

    def p(self, *names):
        return os.path.join(self.run, *names)

    def refused(self, fn, *args, **kw):
        t = time.monotonic()
        with self.assertRaises(safeio.Unsafe) as cm:
            fn(*args, **kw)
        self.assertLess(time.monotonic() - t, 2)
        line = str(cm.exception)
        self.assertNotIn("\n", line)
        return line

    def test_regular_file_read(self):
        with open(self.p("a.json"), "w") as f:
            f.write('{"x": [1, 2.5]}')
        self.assertEqual(safeio.read_json(self.p("a.json")), {"x": [1, 2.5]})
        self.assertEqual(safeio.read_json("a.json", root=self.run), {"x": [1, 2.5]})

    def test_link_fifo_device_dir_refused(self):
        os.symlink(self.secret, self.p("link"))
        os.mkfifo(self.p("fifo"))
        os.symlink("/dev/zero", self.p("zero"))
        self.assertIn("symbolic link", self.refused(safeio.read_bytes, self.p("link"), 100))
        self.assertIn("FIFO", self.refused(safeio.read_bytes, self.p("fifo"), 100))
        self.assertIn("symbolic link", self.refused(safeio.read_bytes, self.p("zero"), 100))
        self.assertIn("character device", self.refused(safeio.read_bytes, "/dev/zero", 100))
        self.assertIn("directory", self.refused(safeio.read_bytes, self.run, 100))

    def test_link_in_a_directory_component_refused_under_root(self):
        os.mkdir(os.path.join(self.d, "elsewhere"))
        with open(os.path.join(self.d, "elsewhere", "meta.json"), "w") as f:
            f.write("{}")
        os.symlink(os.path.join(self.d, "elsewhere"), self.p("cells"))
        self.refused(safeio.read_json, self.p("cells", "meta.json"), root=self.run)
        self.refused(safeio.read_json, "../secret", root=self.run)
        # Without root only the last name is checked: the caller chose.
        self.assertEqual(safeio.read_json(self.p("cells", "meta.json")), {})

    def test_size_bound(self):
        with open(self.p("big"), "wb") as f:
            f.write(b"x" * 101)
        self.assertIn("larger than 100", self.refused(safeio.read_bytes, self.p("big"), 100))
        self.assertEqual(len(safeio.read_bytes(self.p("big"), 101)), 101)

    def test_json_depth_and_numbers(self):
        cases = {"deep": "[" * 100000 + "]" * 100000, "deep40": "[" * 40 + "]" * 40,
                 "inf": '{"wall_s": Infinity}', "nan": '{"x": NaN}', "ninf": "-Infinity",
                 "digits": "1" * 5000, "garbled": "{", "bin": "\xff\x00"}
        for name, text in cases.items():
            with self.subTest(name):
                with open(self.p(name), "w", errors="surrogateescape") as f:
                    f.write(text)
                self.refused(safeio.read_json, self.p(name))
        self.assertIsInstance(safeio.loads_json("[" * 32 + "]" * 32), list)
        self.refused(safeio.loads_json, "[" * 33 + "]" * 33)

    def test_write_never_through_a_link(self):
        os.symlink(self.secret, self.p("out.log"))
        with safeio.open_new(self.p("out.log")) as f:
            f.write("mine\n")
        with open(self.secret) as f:
            self.assertEqual(f.read(), "secret\n")
        self.assertFalse(os.path.islink(self.p("out.log")))
        os.symlink(self.secret, self.p("manifest.json.tmp"))
        os.symlink(self.secret, self.p("manifest.json"))
        safeio.write_json(self.p("manifest.json"), {"a": 1})
        with open(self.secret) as f:
            self.assertEqual(f.read(), "secret\n")
        self.assertEqual(safeio.read_json(self.p("manifest.json")), {"a": 1})
        with self.assertRaises(ValueError):
            safeio.write_json(self.p("m2.json"), {"wall_s": float("inf")})

    def test_finite_numbers_only(self):
        """Issue #43, hole 7: 1e400 is read as inf by float(); refused, as
        Infinity is."""
        for text in ("1e400", "-1e400", '{"wall_s": 1E+999}', "[0.5, 1e309]"):
            with self.subTest(text):
                self.assertIn("not a finite number", self.refused(safeio.loads_json, text))
        self.assertEqual(safeio.loads_json("[1e308, -2.5e-300, 7]"), [1e308, -2.5e-300, 7])

    def test_toml(self):
        cases = {"fifo": None, "deep": "x = " + "[" * 100000 + "]" * 100000,
                 "digits": "x = " + "1" * 5000, "latin1": b"x = \"\xe9\"\n",
                 "garbled": "x = [", "big": "x = 1\n" + "#" * (2 << 20)}
        for name, text in cases.items():
            with self.subTest(name):
                if text is None:
                    os.mkfifo(self.p(name))
                else:
                    with open(self.p(name), "wb") as f:
                        f.write(text if isinstance(text, bytes) else text.encode())
                self.refused(safeio.read_toml, self.p(name))
        with open(self.p("ok.toml"), "w") as f:
            f.write('a = "\U0001d11e"\n[t]\nb = [1, 2]\n')
        self.assertEqual(safeio.read_toml(self.p("ok.toml")), {"a": "\U0001d11e", "t": {"b": [1, 2]}})

    def test_dir_never_follows_a_link(self):
        """A Dir reads, writes, appends and renames through its descriptor:
        a link at a name or on the way is refused or replaced, never
        followed; a swap of a checked folder for a link after the Dir
        opened it changes nothing written."""
        os.symlink(self.secret, self.p("log"))
        os.symlink(self.d, self.p("up"))
        with safeio.Dir.open(self.run) as d:
            self.assertIn("symbolic link", self.refused(d.open_append, "log"))
            self.assertIn("symbolic link", self.refused(d.read_text, "log", 100))
            self.assertIn("symbolic link", self.refused(d.read_text, "up/secret", 100))
            self.refused(d.write_atomic, "../secret", "x")
            d.write_atomic("log", "mine\n")  # the link replaced
            self.assertFalse(os.path.islink(self.p("log")))
            tidy = d.sub("tidy", create=True)
            os.rename(self.p("tidy"), self.p("tidy.old"))
            os.symlink(self.d, self.p("tidy"))  # swapped after the open
            tidy.write_atomic("secret", "overwritten?\n")
            tidy.close()
            self.assertTrue(os.path.isfile(self.p("tidy.old", "secret")))
            d.write_new("new", "1")
            self.assertIn("exists: not overwritten", self.refused(d.write_new, "new", "2"))
            self.assertTrue(d.lock())
            other = safeio.Dir.open(self.run)
            self.assertFalse(other.lock())
            other.close()
        with open(self.secret) as f:
            self.assertEqual(f.read(), "secret\n")

    def test_explicit_mode_under_umask_000(self):
        old = os.umask(0)
        try:
            with safeio.open_new(self.p("f"), 0o644) as f:
                f.write("x")
        finally:
            os.umask(old)
        self.assertEqual(os.stat(self.p("f")).st_mode & 0o777, 0o644)


if __name__ == "__main__":
    unittest.main()
