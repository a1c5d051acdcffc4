# SPDX-License-Identifier: GPL-2.0
"""Writing a table of row dicts as one of the CSV files in DIR/tidy (and
DIR/observer.csv): the one text form of a value (fmt) and the atomic
write.  The tables' columns are analysis/TIDY.md's."""

import csv
import math
import os

from guest import safeio


def fmt(value):
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


def write_csv(path, columns, rows):
    """Write rows (dicts) with the given columns; atomically (tmp+rename).
    The tmp file is a new one (safeio.open_new): never written through a
    link someone planted at its name in a results directory."""
    tmp = path + ".tmp"
    with safeio.open_new(tmp) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([fmt(r.get(c)) for c in columns])
    os.replace(tmp, path)
