# SPDX-License-Identifier: GPL-2.0
"""What every parser shares: the parse error it raises, the limits on what
it reads (file size, line length, digits) and reading a file safely.  The
command-line plumbing is lockbench/cli.py."""

import os
import re
import stat

from lockbench import safeio
from lockbench.cli import CliError


class ParseError(CliError, ValueError):
    """A file does not have the expected format.

    str() gives "FILE:LINE: what is wrong" (":LINE" left out when the
    problem is not on one line)."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self):
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


#: The largest file a parser reads, in bytes.  A lock_stat dump of a
#: debug kernel with every lock class is a few MB; a run directory's
#: other files are a few KB.  More is not a dump, and reading it whole
#: would take the host's memory (/dev/zero never ends).
MAX_FILE_BYTES = 32 << 20
#: The longest line the line-oriented parsers accept, in characters.  Real
#: lines are under 300 (a lock_stat row, a results.txt `lat` line with 32
#: buckets of 20 digits is under 900); a longer one is a ParseError naming
#: its line, so that no pattern ever runs on a megabyte of one line.
MAX_LINE_CHARS = 4096
#: A u64 counter has at most 20 decimal digits (2^64 - 1 =
#: 18446744073709551615); longer is not a counter.
MAX_DIGITS = 20
U64_MAX = 2 ** 64 - 1

# ASCII digits only: \d and str.isdigit() also take other scripts'
# digits and '²', which int() then reads as a number or refuses with a
# ValueError.  Bounded repeats: no pattern backtracks more than a constant
# on a long digit run.
_UINT_RE = re.compile(r"[0-9]{1,%d}" % MAX_DIGITS)
_DECIMAL_RE = re.compile(r"[0-9]{1,%d}(?:\.[0-9]{1,%d})?"
                         % (MAX_DIGITS, MAX_DIGITS))


def parse_uint(text):
    """text as an int if it is an unsigned decimal of at most MAX_DIGITS
    ASCII digits and at most U64_MAX, else None (the caller words the
    ParseError)."""
    if not _UINT_RE.fullmatch(text):
        return None
    value = int(text)
    return value if value <= U64_MAX else None


def parse_decimal(text):
    """text as a float if it is ASCII digits with an optional fraction,
    each part at most MAX_DIGITS long (no sign, exponent, inf or nan),
    else None."""
    return float(text) if _DECIMAL_RE.fullmatch(text) else None


def clip(text, width=60):
    """text cut to width characters for an error message."""
    return text if len(text) <= width else text[:width - 3] + "..."


def read_bytes(path, limit=MAX_FILE_BYTES, root=None):
    """The bytes of a regular file of at most limit bytes; ParseError if
    path is anything else.

    Read by lockbench/safeio.py, the one layer that opens files the harness
    did not write in this run: opened non-blocking (a FIFO is refused at
    once instead of waiting for a writer), never through a symbolic link,
    checked with fstat (the file opened, not a name that may change), at
    most limit + 1 bytes read (a file that says it is empty, /proc's, or
    grows while read is still bounded).  With root (a run directory),
    path is relative to it and no folder on the way may be a link either:
    a run directory may come from anywhere."""
    full = path if root is None else os.path.join(root, path)
    try:
        return safeio.read_bytes(path, limit, root)
    except safeio.Unsafe as e:
        # the words this module always had (users and tests look for
        # them): safeio.refusal_words, and the size in this module's terms
        why = (f"larger than {limit} bytes (MAX_FILE_BYTES in "
               f"analysis/parse/common.py): not a file this parser reads"
               if e.why.startswith("larger than") else
               safeio.refusal_words(full, e, root, path))
        raise ParseError(full, None, why) from None


def dir_refusal(path):
    """Why path is not a folder of a run directory to read or write in,
    or None: lstat, so that a link is refused, never followed (as
    safeio.check_dir, but a line instead of an exception)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as e:
        return e.strerror or str(e)
    if stat.S_ISDIR(mode):
        return None
    return f"{safeio.kind(mode)}, not a directory"


def read_text(path, limit=MAX_FILE_BYTES, root=None):
    """Read a text file; every failure becomes a ParseError naming it.

    Only a regular file of at most limit bytes (read_bytes, root as
    there). Binary data (NUL bytes, invalid UTF-8) is refused here so
    that no parser sees it."""
    data = read_bytes(path, limit, root)
    path = path if root is None else os.path.join(root, path)
    if b"\0" in data:
        raise ParseError(path, None,
                         "binary data (NUL bytes), not a text dump")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ParseError(path, line, "binary data (not UTF-8 text)") from None


def full_path(path, root=None):
    """PATH as an error names it: under ROOT when read under it."""
    return path if root is None else os.path.join(root, path)


def split_lines(text, path, limit=MAX_LINE_CHARS, sep=None):
    """text's lines (str.splitlines(), or split on sep); ParseError naming
    the first line longer than limit characters."""
    lines = text.split(sep) if sep is not None else text.splitlines()
    for n, line in enumerate(lines, start=1):
        if len(line) > limit:
            raise ParseError(path, n, f"line of {len(line)} characters, "
                             f"longer than {limit} (MAX_LINE_CHARS in "
                             f"analysis/parse/common.py): not a line this parser "
                             f"reads")
    return lines


def host_table(path, root, magic, columns):
    """The data rows of a tab-separated file the runner writes beside a
    point (host-steal.txt, host-meter.txt: guest/JOB.md): its first line
    MAGIC, '#' comments, then a header of COLUMNS; [(line number, line)]
    of the rows after it, and the path as errors name it.  ParseError
    without the magic or the header."""
    text = read_text(path, root=root)
    path = full_path(path, root)
    lines = split_lines(text, path, sep="\n")
    if lines[0] != magic:
        raise ParseError(path, 1, f"not {magic!r}")
    body = [(n, ln) for n, ln in enumerate(lines[1:], 2)
            if ln and not ln.startswith("#")]
    if not body or body[0][1] != "\t".join(columns):
        raise ParseError(path, body[0][0] if body else None,
                         "no header line " + " ".join(columns))
    return body[1:], path

