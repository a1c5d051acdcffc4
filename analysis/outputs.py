# SPDX-License-Identifier: GPL-2.0
"""Every file analyze and report write, written last and in one place:
the tidy tables in DIR/tidy, and observer.csv and the texts in DIR.

Each folder is opened once, with no link followed (DIR/tidy made 0755
when missing), and every file is written through its descriptor as a
new NAME.tmp renamed over NAME: a link planted at either name, or a
folder swapped for a link after the open, never takes a file elsewhere
(issue #43)."""

import os

from analysis.estimate import medians as medians_mod
from analysis.parse.common import ParseError
from analysis.parse.tidy_table import COMPARISONS_FILE, TIDY_DIR
from analysis.tidy import tables
from analysis.verdict import verdicts
from lockbench import csvw, safeio


def tidy_files(t, medians, comps):
    """The tidy tables as write() takes them, in the order they are
    written: comparisons.csv removed first and written last (its time
    says when the tables were: analyze.frames), perf_lock.csv only when
    there are perf lock reports.  t: a tables.Tidy built now, or None
    (the tables on disk stay, only comparisons.csv is written); medians,
    comps: the medians and comparisons data frames."""
    if t is None:
        return [(COMPARISONS_FILE, (verdicts.COMPARISONS_COLUMNS, comps.to_dict("records")))]
    files = [(COMPARISONS_FILE, None)]
    for name, columns in tables.COLUMNS.items():
        rows = t.tables[name]
        files.append((name + ".csv", (columns, rows) if rows or name != "perf_lock" else None))
    files.append(("medians.csv", (medians_mod.MEDIANS_COLUMNS, medians.to_dict("records"))))
    files.append((COMPARISONS_FILE, (verdicts.COMPARISONS_COLUMNS, comps.to_dict("records"))))
    return files


def write(path, tidy=(), run=()):
    """Write, in the order given, tidy's files in DIR/tidy and run's in
    DIR (path): each a (name, content), content the file's text, a
    (columns, rows) table (rows: dicts; lockbench/csvw.py's text), or
    None to remove the file (a link there: the link, not its target).
    ParseError naming the folder or file that cannot be written."""
    try:
        top = safeio.Dir.open(path)
    except safeio.Unsafe as e:
        raise ParseError(path, None, f"{e.why}: refusing to write there") from None
    with top:
        try:
            sub = top.sub(TIDY_DIR, create=True, mode=0o755) if tidy else None
        except safeio.Unsafe as e:
            raise ParseError(os.path.join(path, TIDY_DIR), None,
                             f"{e.why}: refusing to write the tidy tables there") from None
        try:
            for where, files in ((sub, tidy), (top, run)):
                for name, content in files:
                    if content is not None and not isinstance(content, str):
                        content = csvw.csv_text(*content)
                    try:
                        if content is None:
                            where.unlink(name)
                        else:
                            where.write_atomic(name, content)
                    except OSError as e:
                        raise ParseError(where.where(name), None,
                                         f"cannot {'remove' if content is None else 'write'}: "
                                         f"{e.strerror or e}") from None
        finally:
            if sub is not None:
                sub.close()
