# SPDX-License-Identifier: GPL-2.0
"""Reading and writing files the harness did not write itself in this run.

A run or results directory may come from a guest, a --hosts host, a
copy, or another local user: any name in it may be a link, a FIFO, a
device or a file of any size.  Every stage (the collector, the campaign,
--resume, the report, the plots, recheck) reads and writes there through
this module:

- read_bytes / read_text / read_json: a regular file only (opened
  O_NONBLOCK | O_NOFOLLOW, checked with fstat: a FIFO is refused at once,
  not waited on), at most LIMIT bytes read however big it says it is;
  JSON nested at most MAX_JSON_DEPTH deep, with finite numbers only.
- With root=DIR, the path is opened one component at a time under DIR,
  each with O_NOFOLLOW (openat): no link anywhere below DIR is followed,
  not only the last name.
- open_new / write_atomic: create with O_CREAT | O_EXCL | O_NOFOLLOW and
  an explicit mode, never through or over a link someone planted.

Each refusal is an Unsafe (an OSError) with one line to print.
"""
import contextlib
import errno
import json
import os
import stat

from lockbench.cli import CliError

#: how deep a JSON file this harness reads may nest; its own are 4 deep
#: (manifest.json: campaign, cells, a cell, a try)
MAX_JSON_DEPTH = 32
#: a JSON file this harness reads (meta.json, manifest.json) is at most
#: tens of KB
JSON_MAX_BYTES = 16 << 20

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | os.O_NOFOLLOW


class Unsafe(OSError, CliError):
    """A file this module will not read or write; str() is one line.  An
    OSError to the code that reads (it is one), and bad input, exit 2, to
    every command (run_cli)."""

    def __init__(self, path, why):
        super().__init__(errno.EINVAL, why, path)
        self.why = why

    def __str__(self):
        return f"{self.filename}: {self.why}"


def kind(mode):
    """What a file is, in words."""
    for test, what in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "an unknown kind of file"


def _refusal(path, e):
    """The Unsafe for an OSError of an open with O_NOFOLLOW: ELOOP is a
    link in the last component (ENOTDIR one in a directory's place)."""
    if isinstance(e, Unsafe):
        return e
    if e.errno == errno.ELOOP:
        return Unsafe(path, "a symbolic link, not followed")
    return Unsafe(path, e.strerror or str(e))


def _open_under(root, rel, flags, mode=0o644):
    """open(root/rel) with every component of rel opened with O_NOFOLLOW
    under a descriptor of the one before it.  rel is relative, without
    '..'; root itself is opened as named (the user named it)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or rel.startswith("/"):
        raise Unsafe(os.path.join(root, rel), "not a path inside its directory")
    dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for p in parts[:-1]:
            nfd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=dfd)
            os.close(dfd)
            dfd = nfd
        return os.open(parts[-1], flags | os.O_NOFOLLOW, mode, dir_fd=dfd)
    finally:
        os.close(dfd)


def _open(path, flags, root=None, mode=0o644):
    try:
        if root is None:
            return os.open(path, flags | os.O_NOFOLLOW, mode)
        return _open_under(root, os.path.relpath(path, root) if os.path.isabs(path) else path,
                           flags, mode)
    except OSError as e:
        raise _refusal(path if root is None else os.path.join(root, path), e) from None


def read_bytes(path, limit, root=None):
    """The bytes of PATH, a regular file (no link) of at most LIMIT bytes;
    Unsafe otherwise.  Read up to LIMIT + 1 bytes whatever its size says
    (a /proc file says 0, a file may grow while read)."""
    fd = _open(path, _READ, root)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unsafe(path, f"{kind(st.st_mode)}, not a regular file")
        too_big = Unsafe(path, f"larger than {limit} bytes")
        if st.st_size > limit:
            raise too_big
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise too_big
        return b"".join(chunks)
    except Unsafe:
        raise
    except OSError as e:
        raise Unsafe(path, e.strerror or str(e)) from None
    finally:
        os.close(fd)


def read_text(path, limit, root=None):
    """read_bytes decoded as UTF-8, invalid bytes replaced."""
    return read_bytes(path, limit, root).decode("utf-8", "replace")


def _no_constant(name):
    raise ValueError(f"{name} is not a number this harness reads")


def _depth(obj, limit):
    """Raise ValueError when obj nests deeper than limit (iteratively: a
    deep object must not exhaust the stack here either)."""
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, (dict, list)):
            if d > limit:
                raise ValueError(f"nested deeper than {limit}")
            stack += [(v, d + 1) for v in (o.values() if isinstance(o, dict) else o)]


def loads_json(data, path="JSON", depth=MAX_JSON_DEPTH):
    """Parse JSON text: no NaN or infinities (json's extensions), no
    number over 4300 digits, at most depth levels; Unsafe otherwise."""
    try:
        obj = json.loads(data, parse_constant=_no_constant)
        _depth(obj, depth)
    except RecursionError:
        raise Unsafe(path, f"not JSON this harness reads: nested deeper than {depth}") from None
    except ValueError as e:  # JSONDecodeError, int() over its digit limit
        raise Unsafe(path, f"not JSON this harness reads: {str(e)[:100]}") from None
    return obj


def read_json(path, limit=JSON_MAX_BYTES, root=None, depth=MAX_JSON_DEPTH):
    """A JSON file read with read_bytes and loads_json."""
    return loads_json(read_bytes(path, limit, root), path, depth)


def open_new(path, mode=0o644, root=None, binary=False):
    """A new file at PATH for writing (O_CREAT | O_EXCL | O_NOFOLLOW, this
    MODE whatever the umask allows); whatever was at PATH (a file, a
    link, a FIFO, not a directory) is unlinked first, never followed."""
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        if root is None:
            os.unlink(path)
        else:
            _unlink_under(root, path)
    fd = _open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, root, mode)
    return os.fdopen(fd, "wb" if binary else "w")


def _unlink_under(root, path):
    rel = os.path.relpath(path, root) if os.path.isabs(path) else path
    head, name = os.path.split(rel)
    if not head:
        os.unlink(os.path.join(root, name))
        return
    dfd = _open_under(root, head, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.unlink(name, dir_fd=dfd)
    finally:
        os.close(dfd)


def write_atomic(path, text, mode=0o644):
    """Replace PATH with TEXT in UTF-8 (whatever the locale says): written
    to PATH.tmp (open_new) and renamed over PATH, which replaces the name,
    never a link's target."""
    tmp = path + ".tmp"
    with open_new(tmp, mode, binary=True) as f:
        f.write(text.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path, obj, mode=0o644, indent=2):
    """write_atomic of obj as JSON; ValueError for a NaN or infinity
    (never written as the Infinity no reader takes)."""
    write_atomic(path, json.dumps(obj, indent=indent, allow_nan=False) + "\n", mode)


def check_dir(path):
    """PATH is a directory and no link (lstat); Unsafe otherwise."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise Unsafe(path, e.strerror or str(e)) from None
    if not stat.S_ISDIR(st.st_mode):
        raise Unsafe(path, f"{kind(st.st_mode)}, not a directory")
