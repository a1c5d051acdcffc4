# SPDX-License-Identifier: GPL-2.0
"""The one TOML writer of the files the harness makes (a bisection's step
campaigns, a tree's variant files): every string escaped as TOML wants it
(a quote, a backslash, a control character, DEL), every other character
written as itself, in UTF-8 (json.dumps would write one outside the BMP
as a surrogate pair, which TOML refuses), every key quoted unless bare,
comments that no newline can leave.  dumps() reads what it wrote back
with tomllib and refuses (ValueError) anything that does not come back
the same: a file this module wrote always loads."""

import math
import re
import tomllib

BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}
_MUST_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def string(s):
    """A TOML basic string of s; ValueError for a lone surrogate (no UTF-8
    file can hold one)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{s[:40]!r}: not text (a lone surrogate)") from None
    return '"' + _MUST_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), f"\\u{ord(m.group()):04x}"),
                                  s) + '"'


def key(k):
    if not isinstance(k, str):
        raise ValueError(f"key {k!r}: not a string")
    return k if BARE_KEY.fullmatch(k) else string(k)


def value(v):
    """A TOML value: bool, int, finite float, str, list, dict (inline)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v!r}: not a finite number")
        return repr(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + "}"
    raise ValueError(f"{str(v)[:40]!r}: a {type(v).__name__}, which this writer does not write")


def comment(text):
    """'# TEXT' lines; a control character (a newline) in TEXT is written
    as '?', so nothing leaves the comment."""
    return "".join(f"# {_CONTROL.sub('?', line)}".rstrip() + "\n" for line in text.split("\n"))


def dumps(table, comments=""):
    """TOML text of TABLE (a dict), its values inline, after COMMENTS;
    ValueError when tomllib would not read back the same table."""
    text = (comment(comments) if comments else "") + "".join(
        f"{key(k)} = {value(v)}\n" for k, v in table.items())
    try:
        back = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as e:
        raise ValueError(f"TOML not written: it would not load ({str(e)[:80]})") from None
    if back != _plain(table):
        raise ValueError("TOML not written: it would not load back the same")
    return text


def _plain(v):
    if isinstance(v, tuple):
        v = list(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v
