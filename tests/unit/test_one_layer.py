# SPDX-License-Identifier: GPL-2.0
"""One safe layer that new code cannot step around (issue #43).

Every read and write of a file the harness did not just create goes
through lockbench/safeio.py.  This test walks the source of every tracked
(and new, not ignored) Python file outside lockbench/ and tests/ as a
syntax tree, not with grep (a comment, a string or a line break cannot
hide a call, nor make one up), and fails naming each call of:

- open() (the builtin, io.open);
- read_text / read_bytes / write_text / write_bytes / open on a
  pathlib.Path (in a file that imports pathlib, any such method);
- json.load, tomllib.load (a file object: read with safeio.read_json,
  safeio.read_toml, bounded and checked);
- shutil.copy, copy2, copyfile, copytree, move (they follow links and copy
  whatever size a file says);
- os.replace, os.rename, os.renames on paths (without both src_dir_fd and
  dst_dir_fd: a rename by path follows a link someone swapped into a
  folder on the way);

and each line of a shell script outside tests/ that writes with > or >>
into a results or variants folder (the redirection's target, its
variables expanded from their assignments in the script, names one),

except at a line of ALLOW, each with its reason.  An ALLOW entry is
(file, the enclosing function, the call as the test names it): a line
moved in its function still matches, a new call in it does not (the
count must match too).
"""

import ast
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RUNNER_OUT = ("the guest runner's own --out, which it makes empty and holds locked for "
              "its whole run (lockbench/dirlock.py); nothing else writes there")
#: (file, function, call) -> (how many, why)
ALLOW = {
    # guest/collect.py: the runner's results stream and the points it
    # unpacked itself (each file written O_CREAT|O_EXCL|O_NOFOLLOW,
    # capped), read back to check them
    ("guest/collect.py", "unpack", "open"):
        (1, "reads .results.tar, QEMU's results chardev output in " + RUNNER_OUT),
    ("guest/collect.py", "sha256_file", "open"):
        (1, "hashes a point file collect() itself wrote, under its Limits, in " + RUNNER_OUT),
    ("guest/collect.py", "run_id", "open"):
        (1, "reads FILE_MAX bytes of a results.txt collect() wrote, in " + RUNNER_OUT),
    ("guest/collect.py", "read_sums", "open"):
        (1, "reads a SHA256SUMS collect() wrote (capped when written), in " + RUNNER_OUT),
    # guest/qemu.py
    ("guest/qemu.py", "host_info", "open"):
        (1, "reads /proc/cpuinfo, the host kernel's own file"),
    ("guest/qemu.py", "make_initrd", "open"):
        (3, "writes the initrd in the runner's scratch folder (mkdtemp) and the job in its "
            "own stage (TemporaryDirectory), from build/'s root fs"),
    ("guest/qemu.py", "make_initrd", "shutil.copy"):
        (3, "copies init, the module and lockload from the repository and build/ into the "
            "initrd's own stage (TemporaryDirectory), made by this process"),
    ("guest/qemu.py", "watch", "open"):
        (1, "makes console.log, unbuffered (a full disk fails the write that hit it), in "
            + RUNNER_OUT),
    # guest/run_guest.py
    ("guest/run_guest.py", "_run_job", "open"):
        (2, "writes meta.json.tmp in " + RUNNER_OUT + "; reads "
            "build/TARGET/build-meta.json, which qemu.artifacts found a regular file"),
    ("guest/run_guest.py", "_prepare", "open"):
        (2, "writes job.conf and qemu-cmd in " + RUNNER_OUT),
    ("guest/run_guest.py", "_run_job", "json.load"):
        (1, "build/TARGET/build-meta.json, written by build-kernel.sh, checked a regular file "
            "by qemu.artifacts"),
    ("guest/run_guest.py", "_run_job", "os.replace by path"):
        (2, "renames .results.tar and meta.json.tmp within " + RUNNER_OUT),
    ("guest/run_guest.py", "write_rerun", "open"):
        (1, "writes rerun in " + RUNNER_OUT),
    ("guest/run_guest.py", "load_job", "open"):
        (1, "the --job file the user named, checked a regular file first (a FIFO or a "
            "device: 'no such file', exit 2)"),
    # guest/hostspeed.py: the host speed meter's binary, built on first use
    ("guest/hostspeed.py", "meter_binary", "os.replace by path"):
        (2, "renames the meter and its key, each compiled or written by this runner under "
            "its own pid-named file (open_new), into build/host-meter/, the harness's own "
            "build folder, not a run directory: two runners may build it at once"),
    ("guest/run_guest.py", "shell_howto", "open"):
        (1, "reads guest/inside/init.sh, the repository's own file, for --help"),
}

#: (script, the redirection's target as written) -> why
SHELL_ALLOW = {
}

PATH_METHODS = ("read_text", "read_bytes", "write_text", "write_bytes")
SHUTIL = ("copy", "copy2", "copyfile", "copytree", "move")
RENAMES = ("replace", "rename", "renames")


def source_files(ext):
    """The tracked files, and new files git does not ignore, ending in
    EXT, outside lockbench/ and tests/ (relative paths)."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "--cached", "--others",
                              "--exclude-standard", f"*{ext}"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = []
        for top, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if not d.startswith(".") and
                       os.path.relpath(os.path.join(top, d), ROOT) not in ("build", "results")]
            out += [os.path.relpath(os.path.join(top, f), ROOT) for f in files]
    return sorted(p for p in set(out) if p.endswith(ext)
                  and not p.startswith(("lockbench/", "tests/"))
                  and os.path.isfile(os.path.join(ROOT, p)))


class Finder(ast.NodeVisitor):
    """The calls of one module the layer forbids: [(line, function, call)]."""

    def __init__(self, tree):
        self.found = []
        self.func = ["<module>"]
        self.pathlib = any(
            (isinstance(n, ast.Import) and any(a.name == "pathlib" for a in n.names))
            or (isinstance(n, ast.ImportFrom) and n.module == "pathlib")
            for n in ast.walk(tree))
        # names bound by "from json import load" and the like
        self.aliases = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and n.module in ("json", "tomllib", "shutil", "os",
                                                              "io", "builtins"):
                for a in n.names:
                    self.aliases[a.asname or a.name] = f"{n.module}.{a.name}"
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.asname and a.name in ("json", "tomllib", "shutil", "os", "io"):
                        self.aliases[a.asname] = a.name

    def _function(self, node):
        self.func.append(node.name if self.func == ["<module>"]
                         else f"{self.func[-1]}.{node.name}")
        self.generic_visit(node)
        self.func.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _function

    def _name(self, f):
        """The dotted name of a call's function (aliases resolved), or
        None for anything but a name or a name's attribute."""
        if isinstance(f, ast.Name):
            return self.aliases.get(f.id, f.id)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            return f"{self.aliases.get(f.value.id, f.value.id)}.{f.attr}"
        return None

    def visit_Call(self, node):
        name = self._name(node.func)
        what = None
        if name in ("open", "io.open", "builtins.open"):
            what = "open"
        elif name in ("json.load", "tomllib.load"):
            what = name
        elif name in tuple(f"shutil.{n}" for n in SHUTIL):
            what = name
        elif name in tuple(f"os.{n}" for n in RENAMES):
            kws = {k.arg for k in node.keywords}
            if not {"src_dir_fd", "dst_dir_fd"} <= kws:
                what = f"{name} by path"
        elif isinstance(node.func, ast.Attribute) and node.func.attr in PATH_METHODS + ("open",):
            recv = node.func.value
            on_path = isinstance(recv, ast.Call) and self._name(recv.func) in (
                "Path", "pathlib.Path", "PurePath", "pathlib.PurePath")
            if on_path or (self.pathlib and node.func.attr in PATH_METHODS):
                what = f"Path.{node.func.attr}"
        if what:
            self.found.append((node.lineno, self.func[-1], what))
        self.generic_visit(node)


def python_calls():
    """{(file, function, call): [lines]} of the whole source."""
    out = {}
    for rel in source_files(".py"):
        with open(os.path.join(ROOT, rel), "rb") as f:
            tree = ast.parse(f.read(), rel)
        finder = Finder(tree)
        finder.visit(tree)
        for line, func, what in finder.found:
            out.setdefault((rel, func, what), []).append(line)
    return out


REDIRECT = re.compile(r"""(?<![0-9&<>])(>>?)(?![&>(])\s*("[^"]*"|'[^']*'|[^\s;|&)]+)""")
ASSIGN = re.compile(r"""(?:^|[\s;])([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s;]*)""")
VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
INTO = re.compile(r"\b(results|variants)\b(?!\.)")


def shell_lines(text):
    """The script's lines with a here-document's body left out (a > there
    is text, not a redirection) and comments stripped."""
    out, until = [], None
    for n, line in enumerate(text.split("\n"), 1):
        if until is not None:
            if line.strip() == until:
                until = None
            continue
        m = re.search(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)
        if m:
            until = m.group(1)
        code = re.sub(r"(^|\s)#.*", "", line)
        out.append((n, code))
    return out


def shell_writes():
    """{(script, target): [lines]}: the redirections into a results or
    variants folder."""
    out = {}
    for rel in source_files(".sh"):
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            lines = shell_lines(f.read())
        assigned = {}
        for _n, code in lines:
            for var, val in ASSIGN.findall(code):
                assigned.setdefault(var, []).append(val)

        def expand(word, depth=0):
            if depth > 4:
                return word
            return word + " " + " ".join(expand(v, depth + 1) for var in VAR.findall(word)
                                         for v in assigned.get(var, []))
        for n, code in lines:
            for _op, target in REDIRECT.findall(code):
                if target.strip("\"'") == "/dev/null":
                    continue
                if INTO.search(expand(target)):
                    out.setdefault((rel, target), []).append(n)
    return out


class OneLayer(unittest.TestCase):
    def test_python_calls_go_through_safeio(self):
        found = python_calls()
        bad = []
        for key, lines in sorted(found.items()):
            n, _why = ALLOW.get(key, (0, None))
            if len(lines) != n:
                bad.append(f"{key[0]}:{','.join(map(str, lines))}: {key[2]} in {key[1]}"
                           + (f" ({len(lines)} calls, {n} allowed)" if n else ""))
        stale = [f"{k}: allowed but not found" for k in ALLOW if k not in found]
        self.assertEqual(bad + stale, [], "\n" + "\n".join(bad + stale) + "\n(read and write "
                         "with lockbench/safeio.py, or allow the line in ALLOW with its reason)")

    def test_shell_writes_into_results_or_variants(self):
        found = shell_writes()
        bad = [f"{k[0]}:{','.join(map(str, v))}: > {k[1]}" for k, v in sorted(found.items())
               if k not in SHELL_ALLOW]
        stale = [f"{k}: allowed but not found" for k in SHELL_ALLOW if k not in found]
        self.assertEqual(bad + stale, [], "\n" + "\n".join(bad + stale))

    def test_every_allowance_has_a_reason(self):
        for key, (n, why) in ALLOW.items():
            self.assertTrue(n >= 1 and len(why) > 20, key)
        for key, why in SHELL_ALLOW.items():
            self.assertGreater(len(why), 20, key)


class TheWalkSees(unittest.TestCase):
    """The walk finds what it looks for, however it is written, and
    nothing else: its own checks can fail."""

    def calls(self, src):
        tree = ast.parse(src)
        f = Finder(tree)
        f.visit(tree)
        return [(func, what) for _line, func, what in f.found]

    def test_finds(self):
        src = ("import json, shutil, os\nfrom tomllib import load as tl\n"
               "def f(p):\n    with open(\n        p) as x:\n        json.load(x)\n"
               "    tl(x)\n    shutil.copytree(p, p)\n    os.replace(p, p + '.x')\n"
               "    os.replace('a', 'b', src_dir_fd=3, dst_dir_fd=3)\n"
               "    os.rename('a', 'b', src_dir_fd=3)\n")
        self.assertEqual(self.calls(src), [("f", "open"), ("f", "json.load"), ("f", "tomllib.load"),
                                           ("f", "shutil.copytree"), ("f", "os.replace by path"),
                                           ("f", "os.rename by path")])
        self.assertEqual(self.calls("import pathlib\nclass C:\n    def g(self):\n"
                                    "        pathlib.Path('x').write_text('y')\n"
                                    "        self.p.read_bytes()\n"),
                         [("C.g", "Path.write_text"), ("C.g", "Path.read_bytes")])
        self.assertEqual(self.calls("from pathlib import Path\nPath('x').open()\n"),
                         [("<module>", "Path.open")])

    def test_ignores(self):
        src = ("# open(x)\n'open(x)'\nimport os\nfrom lockbench import safeio\n"
               "safeio.read_text('x', 10)\nos.open('x', os.O_RDONLY)\n"
               "os.replace('a', 'b', src_dir_fd=1, dst_dir_fd=1)\n"
               "import tarfile\ntarfile.open(fileobj=None)\n")
        self.assertEqual(self.calls(src), [])

    def test_shell(self):
        text = ('vdir=${out:-$LB_ROOT/kernel-patches/variants}\nlog=$LB_BUILD/x.log\n'
                'cat >"$vdir/$name.toml" <<EOF\nx > results/y\nEOF\n'
                'echo x >"$log" 2>&1\necho y >>results/z # > variants/w\n'
                'echo 1 >&2\ncmd 2>/dev/null\n')
        lines = shell_lines(text)
        assigned = {}
        for _n, code in lines:
            for var, val in ASSIGN.findall(code):
                assigned.setdefault(var, []).append(val)
        self.assertEqual(assigned["vdir"], ["${out:-$LB_ROOT/kernel-patches/variants}"])
        got = [(n, t) for n, code in lines for _op, t in REDIRECT.findall(code)]
        self.assertEqual(got, [(3, '"$vdir/$name.toml"'), (6, '"$log"'), (7, "results/z")])


if __name__ == "__main__":
    unittest.main()
