# SPDX-License-Identifier: GPL-2.0
"""Shared pieces: the parse error every parser raises and the CLI plumbing
(one-line errors, exit status 2, never a traceback)."""

import argparse
import os
import sys

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1


class ParseError(ValueError):
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


class UsageError(Exception):
    """Bad command-line usage; main() prints it on one line, exit 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (no usage dump)."""

    def error(self, message):
        raise UsageError(message)


def read_text(path):
    """Read a text file; every failure becomes a ParseError naming it.

    Binary data (NUL bytes, invalid UTF-8) is refused here so that no parser
    sees it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        raise ParseError(path, None, "is a directory") from None
    except OSError as e:
        raise ParseError(path, None, e.strerror or str(e)) from None
    if b"\0" in data:
        raise ParseError(path, None,
                         "binary data (NUL bytes), not a text dump")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ParseError(path, line, "binary data (not UTF-8 text)") from None


def run_cli(prog, parser, argv, body):
    """Parse argv with parser and call body(args) -> int.

    ParseError and UsageError become "prog: message" on stderr and exit 2;
    --help returns 0. body may raise them freely."""
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SystemExit as e:  # --help, --version
        return e.code if isinstance(e.code, int) else EXIT_OK
    try:
        return body(args)
    except (ParseError, UsageError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed early (| head): not an error of ours; keep the
        # interpreter from failing again when it flushes stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as e:  # a bug of ours: still one line, distinct status
        if os.environ.get("ANALYSIS_DEBUG"):
            raise
        print(f"{prog}: internal error (set ANALYSIS_DEBUG=1 for the "
              f"traceback): {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_INTERNAL
