# SPDX-License-Identifier: GPL-2.0
"""Reading and writing files the harness did not write itself in this run.

A boot's folder or a run directory may come from a guest, a --hosts host, a
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
- read_toml: a TOML file (a variant, a target, a campaign) read as
  read_bytes reads, nested at most MAX_JSON_DEPTH deep.
- Dir: a directory held open by a descriptor; every name below it is
  read, made, renamed and removed through that descriptor (openat,
  renameat, unlinkat), one component at a time with O_NOFOLLOW.  A check
  of a folder and the open that follows it are then of the same folder:
  one swapped for a link in between is never followed (issue #43).

Each refusal is an Unsafe (an OSError) with one line to print.  Code
outside lockbench/ and tests/ opens no file itself (open(), json.load,
tomllib.load, shutil.copy*, a rename by path): tests/unit/test_one_layer.py
walks the source and fails naming such a call.
"""
import contextlib
import errno
import fcntl
import hashlib
import json
import math
import os
import stat
import tomllib

from lockbench.cli import CliError

#: how deep a JSON file this harness reads may nest; its own are 4 deep
#: (manifest.json: campaign, boots, a boot, a try)
MAX_JSON_DEPTH = 32
#: a JSON file this harness reads (meta.json, manifest.json) is at most
#: tens of KB
JSON_MAX_BYTES = 16 << 20
#: a TOML file this harness reads (a variant, a target, a campaign) is a
#: few KB; a campaign file's own cap (scripts/campaign/file.py) is 1 MiB
TOML_MAX_BYTES = 1 << 20

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | os.O_NOFOLLOW


class Unsafe(OSError, CliError):
    """A file this module will not read or write; str() is one line.  An
    OSError to the code that reads (it is one), and bad input, exit 2, to
    every command (run_cli)."""

    def __init__(self, path, why, err=errno.EINVAL):
        super().__init__(err, why, path)
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
    return Unsafe(path, e.strerror or str(e), e.errno or errno.EINVAL)


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


def _first_link(root, rel):
    """The first folder of rel (relative to root) that is a symbolic
    link, or None."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    for i in range(1, len(parts)):
        here = "/".join(parts[:i])
        try:
            if stat.S_ISLNK(os.lstat(os.path.join(root, here)).st_mode):
                return here
        except OSError:
            return None
    return None


def _not_regular(mode):
    """The words of a refused file of this mode, in the parsers' terms."""
    if stat.S_ISDIR(mode):
        return "is a directory"
    return f"not a regular file ({kind(mode)})"


def refusal_words(path, unsafe, root=None, rel=None):
    """The words the parsers (analysis/parse/common.py) say of a file
    read_bytes refused with Unsafe unsafe: a folder on the way that is a
    link, named ("D is a symbolic link, not followed"; rel: the path
    read under root); a link in words of its own, or, when it leads to
    a FIFO or a device, the words that file has ("not a regular file
    (a FIFO)", "is a directory"); else the refusal's own.  By lstat and
    stat after the refusal, never open: nothing is read through it."""
    link = _first_link(root, rel) if root is not None and rel else None
    if link is not None:
        return f"{link} is a symbolic link, not followed"
    try:
        st = os.lstat(path)
    except OSError:
        return unsafe.why  # gone, no access: the error as read_bytes had it
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path).st_mode
        except OSError:
            target = stat.S_IFREG
        if not stat.S_ISREG(target) and not stat.S_ISDIR(target):
            return _not_regular(target)
        return "a symbolic link, not followed"
    if not stat.S_ISREG(st.st_mode):
        return _not_regular(st.st_mode)
    return unsafe.why


def _no_constant(name):
    raise ValueError(f"{name} is not a number this harness reads")


def _finite(text):
    """A JSON number with a fraction or an exponent: 1e400 is no number
    this harness reads (float() makes it inf)."""
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"{text[:40]} is not a finite number")
    return v


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
        obj = json.loads(data, parse_constant=_no_constant, parse_float=_finite)
        _depth(obj, depth)
    except RecursionError:
        raise Unsafe(path, f"not JSON this harness reads: nested deeper than {depth}") from None
    except ValueError as e:  # JSONDecodeError, int() over its digit limit
        raise Unsafe(path, f"not JSON this harness reads: {str(e)[:100]}") from None
    return obj


def read_json(path, limit=JSON_MAX_BYTES, root=None, depth=MAX_JSON_DEPTH):
    """A JSON file read with read_bytes and loads_json."""
    return loads_json(read_bytes(path, limit, root), path, depth)


def loads_toml(data, path="TOML", depth=MAX_JSON_DEPTH):
    """Parse TOML bytes (UTF-8): a dict, nested at most depth levels, no
    integer over 4300 digits; Unsafe (one line) otherwise."""
    try:
        obj = tomllib.loads(data.decode("utf-8"))
        _depth(obj, depth)
    except UnicodeDecodeError:
        raise Unsafe(path, "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise Unsafe(path, f"not valid TOML: {str(e)[:100]}") from None
    except RecursionError:
        raise Unsafe(path, f"not TOML this harness reads: nested deeper than {depth}") from None
    except ValueError as e:  # an integer of more than 4300 digits
        raise Unsafe(path, f"not TOML this harness reads: {str(e).split(':')[0][:100]}") from None
    return obj


def read_toml(path, limit=TOML_MAX_BYTES, root=None, depth=MAX_JSON_DEPTH):
    """A TOML file read with read_bytes and loads_toml."""
    return loads_toml(read_bytes(path, limit, root), path, depth)


def open_read(path, root=None):
    """A binary file object to read PATH, a regular file (no link, no FIFO,
    checked with fstat), in pieces: a file too big to read whole (a
    kernel image to hash, a results stream to unpack)."""
    fd = _open(path, _READ, root)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unsafe(path, f"{kind(st.st_mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def sha256(path, root=None):
    """The SHA-256 of PATH's bytes (open_read), read in 1 MiB pieces."""
    h = hashlib.sha256()
    with open_read(path, root) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def open_append(path, mode=0o644, root=None):
    """PATH opened to append text (a log), made with MODE when it is not
    there: a regular file only, never a link (O_NOFOLLOW) nor a FIFO."""
    fd = _open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC,
               root, mode)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unsafe(path, f"{kind(st.st_mode)}, not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "a", encoding="utf-8")


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


def _names(rel):
    """The components of REL, a path relative to a directory: no empty
    name, '.' or '..', not absolute; Unsafe otherwise."""
    parts = [p for p in rel.split("/") if p not in ("", ".")] if isinstance(rel, str) else []
    if not parts or ".." in parts or rel.startswith("/") or "\0" in rel:
        raise Unsafe(str(rel), "not a path inside its directory")
    return parts


class Dir:
    """A directory held open: PATH (for messages) and its descriptor FD.

    Every method takes a name, or a path of names, relative to it; each
    component is opened with O_NOFOLLOW under the descriptor of the one
    before (a link anywhere below is refused, never followed), and the
    last name is made, read, renamed or removed with that folder's
    descriptor (openat, renameat, unlinkat).  What a caller checked and
    what it then writes are in the same folder whatever was renamed or
    swapped for a link in between.  A context manager; close() closes the
    descriptor (and drops a lock taken with lock())."""

    def __init__(self, path, fd):
        self.path, self.fd = path, fd

    @classmethod
    def open(cls, path, create=False, mode=0o755, nofollow=False):
        """PATH, opened as named (the user named it; nofollow: no link as
        its last name either); create: made (with MODE) when missing."""
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (os.O_NOFOLLOW if nofollow else 0)
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(path, mode)
            return cls(path, os.open(path, flags))
        except OSError as e:
            if nofollow and e.errno in (errno.ENOTDIR, errno.ELOOP) and os.path.islink(path):
                raise Unsafe(path, "a symbolic link, not followed") from None
            raise _refusal(path, e) from None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def fileno(self):
        return self.fd

    def where(self, rel):
        return os.path.join(self.path, rel)

    def lock(self):
        """An exclusive flock(2) on this directory, held until close() or
        this process ends; False (not taken) when another holds it."""
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def stat(self, rel=None):
        """fstat of this directory, or lstat of REL under it (Unsafe when
        a folder on the way is a link, FileNotFoundError when missing)."""
        if rel is None:
            return os.fstat(self.fd)
        dfd, name = self._parent(rel)
        try:
            return os.stat(name, dir_fd=dfd, follow_symlinks=False)
        finally:
            self._done(dfd)

    def exists(self, rel):
        """Anything at REL (a link included), never followed."""
        try:
            self.stat(rel)
        except FileNotFoundError:
            return False
        except Unsafe as e:
            if e.errno == errno.ENOENT:  # a folder on the way is missing
                return False
            raise
        return True

    def listdir(self, rel=None):
        if rel is None:
            return os.listdir(self.fd)
        with self.sub(rel) as d:
            return os.listdir(d.fd)

    def _walk(self, parts, create=False, mode=0o755):
        """A new descriptor of the folder PARTS below this one."""
        dfd = os.dup(self.fd)
        try:
            for n, p in enumerate(parts, 1):
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(p, mode, dir_fd=dfd)
                try:
                    nfd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                  dir_fd=dfd)
                except (NotADirectoryError, OSError) as e:
                    if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
                    mode_ = os.stat(p, dir_fd=dfd, follow_symlinks=False).st_mode
                    raise Unsafe(self.where("/".join(parts[:n])),
                                 "a symbolic link, not followed" if stat.S_ISLNK(mode_)
                                 else f"{kind(mode_)}, not a directory") from None
                os.close(dfd)
                dfd = nfd
        except BaseException:
            os.close(dfd)
            raise
        return dfd

    def _parent(self, rel, create=False):
        """(descriptor of REL's folder, its last name); the descriptor is
        this one's when REL is one name (_done closes only a new one)."""
        parts = _names(rel)
        if len(parts) == 1:
            return self.fd, parts[0]
        try:
            return self._walk(parts[:-1], create), parts[-1]
        except OSError as e:
            raise _refusal(self.where(rel), e) from None

    def _done(self, dfd):
        if dfd != self.fd:
            os.close(dfd)

    def sub(self, rel, create=False, mode=0o755):
        """The folder REL below this one as a Dir of its own (made, with
        MODE, when create and missing); Unsafe for a link or no folder."""
        try:
            return Dir(self.where(rel), self._walk(_names(rel), create, mode))
        except OSError as e:
            raise _refusal(self.where(rel), e) from None

    def _open(self, rel, flags, mode=0o644):
        dfd, name = self._parent(rel)
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dfd)
        except OSError as e:
            raise _refusal(self.where(rel), e) from None
        finally:
            self._done(dfd)

    def open_read(self, rel):
        """A binary file object of the regular file REL (open_read)."""
        fd = self._open(rel, _READ)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise Unsafe(self.where(rel), f"{kind(st.st_mode)}, not a regular file")
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "rb")

    def read_bytes(self, rel, limit):
        """read_bytes of REL under this folder."""
        with self.open_read(rel) as f:
            where = self.where(rel)
            if os.fstat(f.fileno()).st_size > limit:
                raise Unsafe(where, f"larger than {limit} bytes")
            try:
                data = f.read(limit + 1)
            except OSError as e:
                raise Unsafe(where, e.strerror or str(e)) from None
            if len(data) > limit:
                raise Unsafe(where, f"larger than {limit} bytes")
            return data

    def read_text(self, rel, limit):
        return self.read_bytes(rel, limit).decode("utf-8", "replace")

    def read_json(self, rel, limit=JSON_MAX_BYTES, depth=MAX_JSON_DEPTH):
        return loads_json(self.read_bytes(rel, limit), self.where(rel), depth)

    def read_toml(self, rel, limit=TOML_MAX_BYTES, depth=MAX_JSON_DEPTH):
        return loads_toml(self.read_bytes(rel, limit), self.where(rel), depth)

    def unlink(self, rel, missing_ok=True):
        """Remove the name REL (a file, a link: never followed; not a
        folder)."""
        dfd, name = self._parent(rel)
        try:
            os.unlink(name, dir_fd=dfd)
        except FileNotFoundError:
            if not missing_ok:
                raise
        finally:
            self._done(dfd)

    def open_new(self, rel, mode=0o644, binary=False, exclusive=False):
        """A new file REL to write (open_new): whatever was at its name (a
        file, a link, a FIFO) is unlinked first, never followed; with
        exclusive, an existing name is refused instead (Unsafe, errno
        EEXIST: "exists: not overwritten")."""
        if not exclusive:
            with contextlib.suppress(IsADirectoryError, PermissionError):
                self.unlink(rel)
        try:
            fd = self._open(rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except Unsafe as e:
            if exclusive and e.errno == errno.EEXIST:
                raise Unsafe(self.where(rel), "exists: not overwritten", errno.EEXIST) from None
            raise
        return os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"}))

    def open_append(self, rel, mode=0o644):
        """REL opened to append text (open_append)."""
        fd = self._open(rel, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, mode)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise Unsafe(self.where(rel), f"{kind(st.st_mode)}, not a regular file")
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "a", encoding="utf-8")

    def rename(self, src, dst, replace=True):
        """Rename the name SRC to DST, both under this folder (renameat):
        the names are replaced, never a link's target.  replace=False: an
        existing DST is refused (Unsafe, errno EEXIST)."""
        sfd, sname = self._parent(src)
        try:
            dfd, dname = self._parent(dst)
            try:
                if not replace:
                    try:
                        os.stat(dname, dir_fd=dfd, follow_symlinks=False)
                        raise Unsafe(self.where(dst), "exists: not overwritten", errno.EEXIST)
                    except FileNotFoundError:
                        pass
                os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)
            finally:
                self._done(dfd)
        finally:
            self._done(sfd)

    def write_atomic(self, rel, data, mode=0o644):
        """Replace REL with DATA (str: UTF-8; or bytes): written to a new
        REL.tmp (open_new), synced, and renamed over REL."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        tmp = rel + ".tmp"
        with self.open_new(tmp, mode, binary=True) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        self.rename(tmp, rel)

    def write_json(self, rel, obj, mode=0o644, indent=2):
        """write_atomic of obj as JSON, no NaN or infinity (ValueError)."""
        self.write_atomic(rel, json.dumps(obj, indent=indent, allow_nan=False) + "\n", mode)

    def write_new(self, rel, data, mode=0o644):
        """Make REL with DATA; Unsafe (errno EEXIST) when anything is
        there (a file of the user's, a link: never overwritten nor
        followed)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        with self.open_new(rel, mode, binary=True, exclusive=True) as f:
            f.write(data)
