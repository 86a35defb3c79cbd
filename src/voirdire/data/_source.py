"""Opening and decoding untrusted input files, with errors that name the file and row (private).

Every reader goes through these helpers for the things that are the same whatever the format:

* :func:`open_binary` opens a file, transparently decompressing ``.gz``, ``.bz2`` and ``.xz``;
  :func:`read_bytes` reads it whole and turns a truncated or mislabelled archive into a
  :class:`SchemaError` naming the file (instead of ``EOFError`` / "Aborted.").
* :func:`check_text` refuses NUL bytes (binary or UTF-16 files: pandas silently cuts a name at
  a NUL, so ``ann\\0A`` and ``ann\\0B`` would merge) and names the row of a byte that is not UTF-8.
* :func:`loads_json` parses JSON strictly: too deep nesting, numbers of over 4,300 digits and
  syntax errors all become a :class:`SchemaError` with the file and line.
* :func:`is_missing_marker` says which label texts mean "missing" (``NA``, ``nan``, ``null``...)
  so R's ``NA`` and pandas' ``nan`` are treated alike.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import re
import zlib
from pathlib import Path
from typing import IO, Any, cast

from ..exceptions import SchemaError

__all__ = ["open_binary", "read_bytes", "check_text", "decode_text", "loads_json", "compression_of",
           "MISSING_MARKERS", "is_missing_marker"]

_COMPRESSED = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}
#: errors a decompressor raises on a truncated or foreign archive
DECOMPRESSION_ERRORS: tuple[type[BaseException], ...] = (EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError, OSError)

#: label texts that mean "no label" in R, pandas, SQL and spreadsheets (matched exactly, case as written)
MISSING_MARKERS = frozenset({"NA", "N/A", "n/a", "<NA>", "nan", "NaN", "NAN", "null", "NULL", "None", "#N/A"})


def is_missing_marker(value: Any) -> bool:
    """True for a text such as ``NA`` or ``nan`` that a program wrote for a missing value."""
    return isinstance(value, str) and value.strip() in MISSING_MARKERS


def compression_of(path: str | os.PathLike[str]) -> str | None:
    """``"gzip"``, ``"bz2"``, ``"xz"`` or ``None``, from the file name's last suffix."""
    return _COMPRESSED.get(Path(path).suffix.lower())


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing by its suffix."""
    kind = compression_of(path)
    fh: Any
    if kind == "gzip":
        fh = gzip.open(path, "rb")
    elif kind == "bz2":
        fh = bz2.open(path, "rb")
    elif kind == "xz":
        fh = lzma.open(path, "rb")
    else:
        fh = open(path, "rb")
    return cast(IO[bytes], fh)


def _decompression_error(src: str, exc: BaseException) -> SchemaError:
    kind = compression_of(src) or "compressed"
    why = "it ends early (truncated download or copy?)" if isinstance(exc, EOFError) else f"{exc}"
    return SchemaError(f"cannot be read as a {kind} file: {why}. Check the file, or remove the "
                       f"'{Path(src).suffix}' suffix if it is not compressed.", source=src)


def read_bytes(path: str | os.PathLike[str], src: str | None = None) -> bytes:
    """All bytes of ``path`` (decompressed); a damaged archive is a :class:`SchemaError` naming the file."""
    from ._limits import read_capped

    src = str(path) if src is None else src
    try:
        with open_binary(path) as fh:
            return read_capped(fh, src, compressed=compression_of(path) is not None)
    except DECOMPRESSION_ERRORS as exc:
        if compression_of(path) is None and not isinstance(exc, EOFError):
            raise
        raise _decompression_error(src, exc) from None


def _line_of(data: bytes, pos: int, first_row: int) -> int:
    return data.count(b"\n", 0, pos) + first_row


def check_text(data: bytes, src: str, *, first_row: int = 1, what: str = "text") -> None:
    """Refuse NUL bytes; ``first_row`` is the row number of the first line (the CSV header is row 1)."""
    k = data.find(b"\x00")
    if k >= 0:
        hint = (" It looks like UTF-16: save it as UTF-8." if data[:2] in (b"\xff\xfe", b"\xfe\xff") or
                data[1:2] == b"\x00" else " Is it a binary file? Save it as UTF-8 text.")
        raise SchemaError(f"cannot be parsed as {what}: it holds a NUL byte (\\x00), which no name or label may "
                          f"contain.{hint}", source=src, row=_line_of(data, k, first_row))


def decode_text(data: bytes, src: str, *, first_row: int = 1) -> str:
    """``data`` decoded as UTF-8 (a BOM is dropped); an undecodable byte names its row."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        row = _line_of(data, exc.start, first_row)
        raise SchemaError(f"byte 0x{data[exc.start]:02x} is not UTF-8 text ({exc.reason}). Save the file as UTF-8 "
                          "(a spreadsheet's 'CSV UTF-8' option, or iconv -f latin1 -t utf-8).",
                          source=src, row=row) from None


#: a JSON escape of a surrogate that does not look like half of a pair (``"\\ud83d\\ude00"`` is one emoji)
_LONE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                          r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(obj: Any) -> str | None:
    """The first text (key or value) in ``obj`` holding a lone surrogate, or ``None`` (no recursion)."""
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            if _SURROGATE.search(x):
                return x
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return None


def loads_json(text: str, src: str, *, row: int | None = None) -> Any:
    """``json.loads`` with every failure (syntax, depth, huge integers, a lone surrogate) a
    :class:`SchemaError` naming where."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}: " if row is None else ""
        raise SchemaError(f"invalid JSON ({where}{exc.msg}).", source=src, row=row) from None
    except RecursionError:
        raise SchemaError("the JSON is nested too deeply to read (more than about 1,000 levels). "
                          "Annotations need only a list of records or {rater: {item: label}}.",
                          source=src, row=row) from None
    except ValueError as exc:  # an integer of more than 4,300 digits (Python's int_max_str_digits)
        raise SchemaError(f"holds a number too long to read ({str(exc).split(':')[0]}). Labels must be short "
                          "values.", source=src, row=row) from None
    if _LONE_ESCAPE.search(text):  # rare: only then walk the values
        bad = _lone_surrogate(obj)
        if bad is not None:
            from .._safe import shown

            raise SchemaError(f"the JSON text {shown(bad)} holds a lone surrogate (half of a UTF-16 pair, not a "
                              "character; no file can store it as UTF-8). Fix the program that cut it from its pair.",
                              source=src, row=row)
    return obj


def scan_text(path: str | os.PathLike[str], src: str, *, first_row: int = 1, what: str = "text") -> None:
    """Stream through a text file once: a NUL byte or a damaged archive is an error naming file and row.

    Archives this module cannot open (``.zst``, ``.zip``, ``.tar``) are left to the reader.
    """
    from ._limits import fmt_bytes, limit, over_limit

    if Path(path).suffix.lower() in (".zst", ".zip", ".tar"):
        return
    lines = total = 0
    cap = limit("VOIRDIRE_MAX_INFLATED_BYTES") if compression_of(path) else None
    try:
        with open_binary(path) as fh:
            while chunk := fh.read(1 << 24):
                if b"\x00" in chunk:
                    check_text(chunk, src, first_row=first_row + lines, what=what)
                lines += chunk.count(b"\n")
                total += len(chunk)
                if cap is not None and total > cap:
                    raise over_limit("VOIRDIRE_MAX_INFLATED_BYTES", f"the file inflates to more than {fmt_bytes(cap)}",
                                     src)
    except DECOMPRESSION_ERRORS as exc:
        if compression_of(path) is None and not isinstance(exc, EOFError):
            raise
        raise _decompression_error(src, exc) from None


def undecodable_row(path: str | os.PathLike[str], src: str, *, first_row: int = 1) -> SchemaError | None:
    """The error naming the first row that is not UTF-8 (``None`` if every byte decodes)."""
    import codecs

    dec = codecs.getincrementaldecoder("utf-8")()
    lines = 0
    with open_binary(path) as fh:
        while chunk := fh.read(1 << 24):
            try:
                dec.decode(chunk)
            except UnicodeDecodeError as exc:
                start = max(0, min(exc.start, len(chunk) - 1))
                return SchemaError(
                    f"byte 0x{chunk[start]:02x} is not UTF-8 text ({exc.reason}). Save the file as UTF-8 "
                    "(a spreadsheet's 'CSV UTF-8' option, or iconv -f latin1 -t utf-8).",
                    source=src, row=first_row + lines + chunk.count(b"\n", 0, start))
            lines += chunk.count(b"\n")
    return None
