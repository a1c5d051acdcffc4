# SPDX-License-Identifier: GPL-2.0
"""The command-line plumbing of every command (guest/, analysis/, plots/,
scripts/): the one error base, its exit codes, the parser whose usage
error is one line, and run_cli, which turns any error into one line of
stderr and an exit status, never a traceback.  At the bottom of the
house: it imports nothing of the project."""

import argparse
import importlib
import os
import sys

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1
#: a Debian package the command needs is not installed
EXIT_MISSING = 3


def require(prog, *modules):
    """Import each of MODULES (Debian's python3-NAME) before the command
    imports what uses them: a missing one is one line and exit 3, not a
    traceback."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            print(f"{prog}: missing python3-{e.name or name}: run ./run.sh "
                  "setup", file=sys.stderr)
            sys.exit(EXIT_MISSING)


class CliError(Exception):
    """An error a command reports on one line of stderr ("prog: message")
    and exits with exit_code (run_cli, or a command's own main): the one
    error base of every command (analysis/, plots/, scripts/, guest/)."""
    exit_code = EXIT_BAD_INPUT


class UsageError(CliError):
    """Bad command-line usage; main() prints it on one line, exit 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (no usage dump):
    a UsageError, with hint (say "./run.sh campaign --help") after it.
    The one parser of every command."""

    def __init__(self, *args, hint=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.hint = hint

    def error(self, message):
        raise UsageError(f"{message} ({self.hint})" if self.hint else message)


def run_cli(prog, parser, argv, body):
    """Parse argv with parser and call body(args) -> int.

    A CliError (ParseError, UsageError, plots' PlotsError) becomes
    "prog: message" on stderr and its exit_code (2 for bad input); --help
    returns 0. body may raise them freely."""
    try:
        args = parser.parse_args(argv)
    except CliError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.exit_code
    except SystemExit as e:  # --help, --version
        return e.code if isinstance(e.code, int) else EXIT_OK
    try:
        return body(args)
    except CliError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.exit_code
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
