# SPDX-License-Identifier: GPL-2.0
"""The tidy tables as text: writing a table of row dicts as one of the CSV
files in DIR/tidy (and DIR/observer.csv), the one text form of a value
(csv_value), the atomic write, and the one reader that turns that text
into the data frame every judging step reads.  A table analyze has just
built becomes that frame in memory (table_frame), one on disk is read
from its file (read_table): the same frame either way.  The tables'
columns are analysis/TIDY.md's."""

import csv
import io
import math
import os
import re

from analysis.parse.common import ParseError, read_text
from lockbench import safeio

TIDY_DIR = "tidy"
#: the comparisons file, written last of the tidy tables: its time says
#: when they were written (analyze.is_stale)
COMPARISONS_FILE = "comparisons.csv"
#: columns read as text whatever they hold (a variant named 1, a point 007)
TEXT_COLUMNS = ("campaign", "variant", "cell", "point", "state", "metric",
                "unit", "file", "problem", "arch")


def csv_value(value):
    """CSV text of one value: empty for None/NaN, integers without '.0'."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return "%.10g" % value
    return str(value)


def csv_text(columns, rows):
    """The CSV text of rows (dicts) with the given columns."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([csv_value(r.get(c)) for c in columns])
    return out.getvalue()


def tidy_dir(path):
    """DIR/tidy as a safeio.Dir: opened under the run directory DIR with
    no link followed (made 0755 when missing), so that every table is
    written into the folder checked, through its descriptor, whatever is
    swapped for a link at its name meanwhile (issue #43); ParseError
    for a link or anything but a folder there."""
    out = os.path.join(path, TIDY_DIR)
    try:
        with safeio.Dir.open(path) as run:
            return run.sub(TIDY_DIR, create=True, mode=0o755)
    except safeio.Unsafe as e:
        raise ParseError(out, None, f"{e.why}: refusing to write the tidy tables there") from None


def write_comparisons(tidy, columns, comps):
    """tidy/comparisons.csv (TIDY a tidy_dir), the one comparisons file
    (analysis/TIDY.md), from the comparisons data frame with its columns
    (verdicts'); written last: its time says when the tidy tables were."""
    write_csv(tidy, COMPARISONS_FILE, columns, comps.to_dict("records"))


def write_text(where, name, text):
    """Write a table's CSV text as NAME in the safeio.Dir WHERE: a new
    NAME.tmp (a link planted there unlinked, never written through),
    renamed over NAME, both through WHERE's descriptor."""
    try:
        where.write_atomic(name, text)
    except OSError as e:
        raise ParseError(where.where(name), None, f"cannot write: {e.strerror or e}") from None


def write_csv(where, name, columns, rows):
    """Write rows (dicts) with the given columns (write_text)."""
    write_text(where, name, csv_text(columns, rows))


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


def read_table(path, name):
    """DIR/tidy/NAME as a data frame: a regular file of bounded size under
    the run directory, no link followed, or ParseError."""
    rel = os.path.join(TIDY_DIR, name)
    return frame(read_text(rel, root=path), os.path.join(path, rel))


#: a number as csv_value writes it and pandas reads it back
_NUMBER = re.compile(r"[+-]?(inf|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)\Z")
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_TRUTH = {"True": True, "TRUE": True, "true": True,
          "False": False, "FALSE": False, "false": False}


def table_frame(columns, rows):
    """The data frame of a table of row dicts, as frame() reads its CSV
    text (csv_text) back, built without the text: each float rounded to
    the 10 significant digits every tidy file holds, each column typed
    as pandas types the file's (integers, floats with NaN for an empty
    value, text), so that a table judged just after it was built and one
    read from DIR/tidy are the same frame."""
    import pandas as pd
    if not rows:  # a header alone: pandas reads every column as text
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns},
                            columns=list(columns), index=pd.Index([], dtype=object))
    return pd.DataFrame({c: _column([r.get(c) for r in rows], c in TEXT_COLUMNS)
                         for c in columns}, columns=list(columns))


def _column(values, text):
    """One column of table_frame: a list, typed as frame() types it."""
    import numpy as np
    import pandas as pd
    if text:
        return pd.Series([csv_value(v) or np.nan for v in values], dtype=object)
    kept = [None if v is None or (isinstance(v, float) and math.isnan(v)) else v
            for v in values]
    if any(not isinstance(v, (int, float)) for v in kept if v is not None):
        return _texts([csv_value(v) for v in values])
    nums = [None if v is None else int(v) if isinstance(v, int) else float(csv_value(v))
            for v in kept]
    # csv_value writes an integral float as an integer: read back as one
    if None not in nums and all(isinstance(v, int) or (v.is_integer() and abs(v) < 1e15)
                                for v in nums):
        return pd.Series([int(v) for v in nums], dtype="int64")
    return pd.Series([np.nan if v is None else float(v) for v in nums], dtype="float64")


def _texts(texts):
    """A column some of whose values are text: numbers where every value
    reads as one, booleans where every value is a truth word, else the
    texts themselves (NaN for an empty one), as pandas reads them."""
    import numpy as np
    import pandas as pd
    full = [t for t in texts if t != ""]
    if full and all(_INTEGER.match(t) for t in full) and len(full) == len(texts):
        return pd.Series([int(t) for t in texts], dtype="int64")
    if all(_NUMBER.match(t) for t in full):
        return pd.Series([float(t) if t else np.nan for t in texts], dtype="float64")
    if all(t in _TRUTH for t in full):
        if len(full) == len(texts):
            return pd.Series([_TRUTH[t] for t in texts], dtype=bool)
        return pd.Series([_TRUTH[t] if t else np.nan for t in texts], dtype=object)
    return pd.Series([t if t else np.nan for t in texts], dtype=object)
