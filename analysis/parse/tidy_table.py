# SPDX-License-Identifier: GPL-2.0
"""Reading a tidy table back: DIR/tidy/NAME (written by analysis/outputs.py
in lockbench/csvw.py's text) as the data frame every judging step reads,
each column typed as pandas reads it, TEXT_COLUMNS always as text.  A
table analyze has just built becomes the same frame in memory
(analysis/tidy/tidy_csv.py, table_frame).  The tables' columns are
analysis/TIDY.md's."""

import io
import os

from analysis.parse.common import ParseError, read_text

TIDY_DIR = "tidy"
#: the comparisons file, written last of the tidy tables: its time says
#: when they were written (analyze.frames)
COMPARISONS_FILE = "comparisons.csv"
#: columns read as text whatever they hold (a variant named 1, a point 007)
TEXT_COLUMNS = ("campaign", "variant", "cell", "point", "state", "metric",
                "unit", "file", "problem", "arch")


def frame(text, where):
    """A data frame of a tidy table's CSV text; ParseError naming `where`
    when it is not one."""
    import pandas as pd
    try:
        return pd.read_csv(io.StringIO(text), keep_default_na=False,
                           na_values=[""],
                           dtype={c: str for c in TEXT_COLUMNS})
    except (OSError, ValueError) as e:
        raise ParseError(where, None, f"cannot read: {e}") from None


def read_table(path, name, missing_ok=False, unreadable_ok=False):
    """DIR/tidy/NAME as a data frame: a regular file of bounded size under
    the run directory, no link followed, or ParseError; None instead when
    there is no NAME (missing_ok) or it cannot be read as a table
    (unreadable_ok)."""
    rel = os.path.join(TIDY_DIR, name)
    full = os.path.join(path, rel)
    if missing_ok and not os.path.lexists(full):
        return None
    try:
        return frame(read_text(rel, root=path), full)
    except ParseError:
        if not unreadable_ok:
            raise
        return None


def read_tables(path, names, missing_ok=(), unreadable_ok=()):
    """[read_table of each of names, in order], each name in missing_ok
    and unreadable_ok read so."""
    return [read_table(path, n, n in missing_ok, n in unreadable_ok) for n in names]
