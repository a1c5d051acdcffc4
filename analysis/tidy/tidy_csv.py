# SPDX-License-Identifier: GPL-2.0
"""A tidy table just built, as the data frame every judging step reads:
table_frame builds, from the table's rows, the frame that reading its
CSV text back (analysis/parse/tidy_table.py, read_table) gives, so that
a table judged just after it was built and one read from DIR/tidy are
the same frame (tests/unit/test_table_frame.py holds them equal).  The
text is lockbench/csvw.py's; analysis/outputs.py writes it."""

import math
import re

from analysis.parse.tidy_table import TEXT_COLUMNS
from lockbench.csvw import csv_value


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
