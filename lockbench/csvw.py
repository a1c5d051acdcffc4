# SPDX-License-Identifier: GPL-2.0
"""The CSV text form of the analysis' tables (the tidy tables,
observer.csv): every value as csv_value spells it, rows as csv.writer
quotes them, one "\n" per line.  Text only: analysis/outputs.py writes
it (through lockbench/safeio.py), and reading it back into a data frame
is analysis/parse/tidy_table.py's."""

import csv
import io
import math


def csv_value(value):
    """CSV text of one value: empty for None/NaN, integers without '.0',
    other floats to 10 significant digits."""
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
