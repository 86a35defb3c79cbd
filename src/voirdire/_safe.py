"""The one guard for untrusted strings (private).

Rater, item, category, column and file names come from files other people wrote. On their way

* to a **terminal** they must not act: no console markup (``[bold]``, ``[link=...]``), no escape
  sequences (clear screen, window titles, hyperlinks), no bidirectional overrides that reorder
  what is shown. :func:`escape_control` shows every control character escaped (``\\x1b``);
  :func:`shown` also cuts a value to about 80 characters for an error message. The command
  line's console (``voirdire.report.console.terminal``) applies :func:`escape_control` to everything it
  prints and never interprets markup.
* to a **CSV cell** they must not run as a spreadsheet formula: :func:`csv_cell` prefixes a
  ``'`` to a text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (and
  their full-width forms), except plain numbers such as ``-3``. The tool's own ``+ judge`` row
  labels go through the same guard. :func:`csv_frame` applies it to a whole table (header too).

JSON output needs neither guard (the JSON encoder escapes control characters and spreadsheets
do not evaluate JSON), and the HTML report escapes through Jinja's autoescape.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["escape_control", "shown", "one_line", "csv_cell", "uncell", "csv_frame", "FORMULA_START", "SHOWN_LIMIT"]

#: characters a spreadsheet reads as the start of a formula (ASCII and full-width forms)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
#: longest value (in characters) echoed in a message before it is cut
SHOWN_LIMIT = 80

# C0/C1 controls and DEL, bidirectional marks/embeddings/overrides/isolates, BOM, line/paragraph separators,
# lone surrogates (JSON's "\ud800": no encoder writes them) and the non-characters U+FFFE/U+FFFF; what is
# left is legal in XML 1.0 (a JUnit file) and encodes as UTF-8
_UNSAFE_RE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029"
                        "\ud800-\udfff\ufffe\uffff]")


def _escape_char(ch: str) -> str:
    o = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    if o <= 0xFF:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}"


def escape_control(text: Any, *, keep: str = "") -> str:
    """``text`` with every control character (and bidi override) shown as an escape, e.g. ``\\x1b``.

    ``keep`` lists control characters left as they are (the console keeps ``"\\n\\t"`` in its
    own layout; names keep nothing).

    Examples
    --------
    >>> escape_control("ann\\x1b]0;title\\x07"), escape_control("a\\u202eb"), escape_control("x\\ny", keep="\\n")
    ('ann\\\\x1b]0;title\\\\x07', 'a\\\\u202eb', 'x\\ny')
    """
    s = text if isinstance(text, str) else str(text)
    if not _UNSAFE_RE.search(s):
        return s
    return _UNSAFE_RE.sub(lambda m: m.group(0) if m.group(0) in keep else _escape_char(m.group(0)), s)


def shown(value: Any, limit: int = SHOWN_LIMIT, *, quote: bool = True) -> str:
    """An untrusted value as it should appear in a one-line message: escaped, quoted, at most ``limit`` chars.

    Examples
    --------
    >>> shown("maybe"), shown(3), shown("x" * 200)[:12], shown("x" * 200)[-20:]
    ("'maybe'", '3', "'xxxxxxxxxxx", '... (200 characters)')
    """
    if isinstance(value, str):
        s = repr(value) if quote else escape_control(value)
        n = len(value)
    else:
        s = escape_control(repr(value) if quote else str(value))
        n = len(s)
    s = escape_control(s)  # repr keeps some format characters (bidi overrides) as they are
    if len(s) > limit:
        s = s[: max(limit - 3, 8)] + f"... ({n:,} characters)"
    return s


_LONG_WORD = re.compile(r"\S{301,}")


def one_line(message: Any) -> str:
    """A message made safe to print: control characters but newlines escaped, any run of over 300 characters
    without a space cut to its first 120 (a pasted file or a 10,000-character rater name).

    Examples
    --------
    >>> one_line("bad \\x1b[2J"), one_line("x" * 400)[-21:]
    ('bad \\\\x1b[2J', 'x... (400 characters)')
    """
    text = escape_control(str(message), keep="\n")
    return _LONG_WORD.sub(lambda m: m.group(0)[:120] + f"... ({len(m.group(0)):,} characters)", text)


def csv_cell(value: Any) -> Any:
    """Prefix a cell a spreadsheet would run as a formula with ``'``; other values unchanged.

    A text starting (after any spaces) with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return, or their full-width forms, is escaped, except a plain number such as ``-3`` or
    ``+1.5e3`` (a spreadsheet reads it as that number). Non-text values pass unchanged.

    Examples
    --------
    >>> csv_cell('=HYPERLINK("http://x")'), csv_cell("-3"), csv_cell("item_1"), csv_cell("+ judge")
    ('\\'=HYPERLINK("http://x")', '-3', 'item_1', "'+ judge")
    """
    if not isinstance(value, str) or not value:
        return value
    head = value.lstrip(" ")
    if head.startswith(FORMULA_START) and not _PLAIN_NUMBER.match(value.strip()):
        return "'" + value
    return value


def uncell(value: Any) -> Any:
    """The value :func:`csv_cell` was given, for a text it wrote (``"'=it3"`` -> ``"=it3"``); any
    other value unchanged (``"'-3"``, ``"'abc"`` stay). The readers apply it to item and rater
    ids, so an assignment file's ids read back with the labels match the ids they came from.

    Examples
    --------
    >>> uncell("'=it3"), uncell("'+ judge"), uncell("'-3"), uncell("'abc"), uncell("=x")
    ('=it3', '+ judge', "'-3", "'abc", '=x')
    """
    if isinstance(value, str) and value[:1] == "'" and csv_cell(value[1:]) == value:
        return value[1:]
    return value


def csv_frame(df: Any) -> Any:
    """A copy of the pandas frame ``df`` in which every text cell and column name passed :func:`csv_cell`."""
    out = df.copy()
    out.columns = [csv_cell(str(c)) if isinstance(c, str) else c for c in out.columns]
    for c in out.columns:
        col = out[c]
        if col.dtype == object or str(col.dtype) in ("string", "category", "str"):
            out[c] = col.map(csv_cell).astype(object)
    return out

