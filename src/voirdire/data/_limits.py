"""Limits on what an untrusted input may expand to (private): archives, compressed files, pipes.

A file of a megabyte can claim gigabytes: a ZIP member deflated 1,000 to 1 (an ``.xlsx`` or an
Inspect ``.eval`` is a ZIP archive), a ``.gz`` bomb, ``/dev/urandom`` or a FIFO nobody writes to.
Each limit below is checked before the work it bounds (a ZIP archive's directory is read before
any member is inflated) and, when exceeded, is one :class:`SchemaError` naming the file, the
limit and the environment variable that raises it:

=================================  ==============  ==============================================
variable                           default         bounds
=================================  ==============  ==============================================
``VOIRDIRE_MAX_INFLATED_BYTES``    ``2G``          bytes a ZIP archive (all members), a
                                                   ``.gz``/``.bz2``/``.xz`` file or a Parquet
                                                   file's row groups inflate to
``VOIRDIRE_MAX_COMPRESSION_RATIO`` ``100``         inflated / compressed size of a ZIP member
                                                   (members inflating to over 1 MiB)
``VOIRDIRE_MAX_ARCHIVE_MEMBERS``   ``100000``      members of a ZIP archive
``VOIRDIRE_MAX_CELLS``             ``20000000``    cells of an Excel sheet (rows x columns,
                                                   the empty ones in the span included)
``VOIRDIRE_MAX_PIPE_BYTES``        ``2G``          bytes read from standard input, a FIFO or a
                                                   character device
``VOIRDIRE_PIPE_TIMEOUT``          ``60``          seconds a pipe may stay silent (no writer,
                                                   no data); ``0`` waits for ever
=================================  ==============  ==============================================

Sizes take ``K``, ``M``, ``G`` or ``T`` (powers of 1024): ``VOIRDIRE_MAX_INFLATED_BYTES=8G``.
"""

from __future__ import annotations

import os
import re
import select
import sys
import zipfile
from collections.abc import Sequence
from typing import IO, Any

from ..exceptions import InvalidParameterError, SchemaError

__all__ = ["LIMITS", "limit", "over_limit", "check_zip", "check_parquet", "is_zip", "fmt_bytes", "read_capped",
           "copy_pipe"]

#: environment variable -> (default, what it bounds, whether it is a size in bytes, what exceeding it suggests)
LIMITS: dict[str, tuple[int, str, bool, str]] = {
    "VOIRDIRE_MAX_INFLATED_BYTES": (2 << 30, "bytes an archive, compressed or Parquet file may inflate to", True,
                                    "a decompression bomb?"),
    "VOIRDIRE_MAX_COMPRESSION_RATIO": (100, "inflated / compressed size of a ZIP member", False, "a zip bomb?"),
    "VOIRDIRE_MAX_ARCHIVE_MEMBERS": (100_000, "members of a ZIP archive", False, "a zip bomb?"),
    "VOIRDIRE_MAX_CELLS": (20_000_000, "cells of an Excel sheet, empty ones in its span included", False,
                           "a cell far out at the sheet's edge?"),
    "VOIRDIRE_MAX_PIPE_BYTES": (2 << 30, "bytes read from a pipe or device", True, "an endless stream?"),
    "VOIRDIRE_PIPE_TIMEOUT": (60, "seconds a pipe may stay silent", False, "nothing writes to it?"),
}
#: a ZIP member inflating to at most this many bytes may have any ratio (tiny members compress oddly)
RATIO_FLOOR = 1 << 20
_SIZE = re.compile(r"(\d+)\s*([kmgt]?)(i?b)?", re.IGNORECASE)
_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def limit(name: str) -> int:
    """The limit ``name`` (a key of :data:`LIMITS`): its environment variable, else the default.

    Examples
    --------
    >>> limit("VOIRDIRE_MAX_COMPRESSION_RATIO")
    100
    """
    default, _, is_size, _ = LIMITS[name]
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    m = _SIZE.fullmatch(raw) if is_size else re.fullmatch(r"(\d+)()()", raw)
    if m is None:
        unit = " of bytes (K, M, G, T allowed: 8G)" if is_size else ""
        raise InvalidParameterError(f"The environment variable {name} must be a whole number{unit}. Got {raw[:40]!r}.")
    return int(m.group(1)) * 1024 ** _POWER[m.group(2).lower()]


def fmt_bytes(n: float) -> str:
    """``n`` bytes for a message: ``'1.5 GB'``, ``'300 KB'``, ``'12 bytes'`` (powers of 1024)."""
    for unit, k in (("TB", 4), ("GB", 3), ("MB", 2), ("KB", 1)):
        if n >= 1024**k:
            return f"{n / 1024**k:.3g} {unit}"
    return f"{int(n)} bytes"


def _suggest(name: str, needed: float) -> str:
    """A value of ``name`` that admits ``needed`` (rounded up generously)."""
    if LIMITS[name][2]:
        return f"{max(1, int(needed / (1 << 30)) + 1)}G"
    return str(max(int(needed * 1.1) + 1, LIMITS[name][0]))


def over_limit(name: str, found: str, src: str, *, needed: float | None = None) -> SchemaError:
    """The one-line error for an input that exceeds the limit ``name``: what was found, the limit, the fix."""
    value = limit(name)
    _, what, is_size, why = LIMITS[name]
    shown = fmt_bytes(value) if is_size else f"{value:,}"
    fix = _suggest(name, 2 * value if needed is None else needed)
    return SchemaError(f"{found}, over the limit of {shown} ({what}; {why}). If the input is genuine, raise the "
                       f"limit: {name}={fix}.", source=src)


def check_zip(path: str | os.PathLike[str], src: str) -> None:
    """Refuse a ZIP archive whose directory promises too many members, too many bytes or a bomb's ratio.

    Only the central directory is read (nothing is inflated); an archive too damaged to have one
    is left to its reader. Python's :mod:`zipfile` (which openpyxl, pandas, NumPy and inspect_ai
    read through) never inflates a member past the size the directory declares, so the declared
    sizes bound the work.
    """
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        return  # a damaged archive inflates nothing: its reader says what is wrong, in its own words
    n_max = limit("VOIRDIRE_MAX_ARCHIVE_MEMBERS")
    if len(infos) > n_max:
        raise over_limit("VOIRDIRE_MAX_ARCHIVE_MEMBERS", f"the archive holds {len(infos):,} members", src,
                         needed=len(infos))
    total = sum(i.file_size for i in infos)
    if total > limit("VOIRDIRE_MAX_INFLATED_BYTES"):
        raise over_limit("VOIRDIRE_MAX_INFLATED_BYTES", f"the archive's members inflate to {fmt_bytes(total)}", src,
                         needed=total)
    ratio_max = limit("VOIRDIRE_MAX_COMPRESSION_RATIO")
    for i in infos:
        if i.file_size > RATIO_FLOOR and i.file_size > ratio_max * max(i.compress_size, 1):
            ratio = i.file_size / max(i.compress_size, 1)
            raise over_limit("VOIRDIRE_MAX_COMPRESSION_RATIO",
                             f"member {i.filename[:60]!r} inflates {ratio:,.0f} times ({fmt_bytes(i.compress_size)} "
                             f"to {fmt_bytes(i.file_size)})", src, needed=ratio)


#: a Parquet value decodes to at least this many bytes (a number; a string's offset), whatever its encoding
PARQUET_CELL_BYTES = 8


def parquet_inflated_bytes(meta: object, columns: Sequence[str] | None = None) -> int:
    """What the row groups of a Parquet file (its footer ``meta``, a ``pyarrow.parquet.FileMetaData``) decode
    to, at least: per column chunk read, its uncompressed size or :data:`PARQUET_CELL_BYTES` per row, the larger
    (run-length and dictionary encoding make a million equal values a few bytes before decoding)."""
    m: Any = meta
    total = 0
    for g in range(m.num_row_groups):
        rg = m.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            name = col.path_in_schema.split(".")[0]
            if columns is not None and name not in columns:
                continue
            total += max(int(col.total_uncompressed_size), PARQUET_CELL_BYTES * int(rg.num_rows))
    return total


def check_parquet(path: str | os.PathLike[str], src: str, columns: Sequence[str] | None = None) -> None:
    """Refuse a Parquet file whose row groups would decode past ``VOIRDIRE_MAX_INFLATED_BYTES``.

    Only the footer is read (nothing is decompressed); ``columns``: only those are counted (``None``:
    every column, as ``pandas.read_parquet`` reads them). A file too damaged to have a footer is left
    to its reader, which words the error.
    """
    try:
        import pyarrow.parquet as pq

        meta = pq.read_metadata(path)
    except Exception:  # noqa: BLE001 - pyarrow raises several unrelated types; no footer, nothing inflated yet
        return
    need = parquet_inflated_bytes(meta, columns)
    if need > limit("VOIRDIRE_MAX_INFLATED_BYTES"):
        raise over_limit("VOIRDIRE_MAX_INFLATED_BYTES",
                         f"the Parquet file's {meta.num_rows:,} rows ({meta.num_row_groups:,} row groups) decode to "
                         f"{fmt_bytes(need)} or more", src, needed=need)


def is_zip(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts like a ZIP archive (``PK\\x03\\x04``, or an empty archive's ``PK\\x05\\x06``)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) in (b"PK\x03\x04", b"PK\x05\x06")
    except OSError:
        return False


def read_capped(fh: IO[bytes], src: str, *, compressed: bool) -> bytes:
    """All of ``fh``; a compressed stream inflating past ``VOIRDIRE_MAX_INFLATED_BYTES`` is refused
    after reading one byte more than the limit (never the whole bomb)."""
    if not compressed:
        return fh.read()
    cap = limit("VOIRDIRE_MAX_INFLATED_BYTES")
    data = fh.read(cap + 1)
    if len(data) > cap:
        raise over_limit("VOIRDIRE_MAX_INFLATED_BYTES", f"the file inflates to more than {fmt_bytes(cap)}", src)
    return data


#: how binary inputs start (Parquet, ZIP, gzip, bzip2, xz): their NUL bytes are no sign of trouble
_BINARY_MAGIC = (b"PAR1", b"PK", b"\x1f\x8b", b"BZh", b"\xfd7zXZ")


def copy_pipe(pipe: str | None, out: IO[bytes], src: str, *, text: bool | None = None, what: str | None = None,
              head_size: int = 1 << 20) -> bytes:
    """Copy standard input (``pipe=None``) or the FIFO / character device ``pipe`` into ``out``.

    At most ``VOIRDIRE_MAX_PIPE_BYTES`` are read, and a pipe silent for ``VOIRDIRE_PIPE_TIMEOUT``
    seconds (a FIFO nobody opens, a writer that hangs) is an error; a terminal waits for its
    person. ``text`` (``None``: unless the first bytes are a binary format's) refuses a NUL byte
    as soon as it arrives (an error saying it cannot be parsed as ``what``, by default CSV or
    JSON from the first byte), so ``/dev/urandom`` stops at its first block. Returns the first
    ``head_size`` bytes (for sniffing the format).
    """
    from ._source import check_text

    cap = limit("VOIRDIRE_MAX_PIPE_BYTES")
    timeout = limit("VOIRDIRE_PIPE_TIMEOUT")
    stream = sys.stdin.buffer if pipe is None else None
    try:
        fd = stream.fileno() if stream is not None else os.open(str(pipe), os.O_RDONLY | os.O_NONBLOCK)
    except (AttributeError, OSError, ValueError):  # a replaced standard input (a test runner's buffer)
        fd = -1
    own = pipe is not None and fd >= 0
    if fd < 0 and stream is None:
        raise SchemaError("cannot be opened.", source=src)
    wait = timeout > 0 and fd >= 0 and not os.isatty(fd)
    poller = select.poll() if wait else None
    if poller is not None:
        poller.register(fd, select.POLLIN)
    head = bytearray()
    total = lines = 0
    try:
        while True:
            if poller is not None and not poller.poll(timeout * 1000):
                raise SchemaError(f"no data arrived for {timeout:,} s (does anything write to it?). To wait longer, set "
                                  "VOIRDIRE_PIPE_TIMEOUT=SECONDS (0 waits for ever).", source=src)
            try:
                chunk = os.read(fd, 1 << 20) if fd >= 0 else stream.read(1 << 20)  # type: ignore[union-attr]
            except BlockingIOError:
                continue
            if not chunk:
                break
            if text is None and len(head) + len(chunk) >= 8:
                text = not bytes(head[:8] + chunk[:8]).startswith(_BINARY_MAGIC)
            if text and b"\x00" in chunk:
                first = bytes(head[:64] or chunk[:64]).lstrip()[:1]
                check_text(chunk, src, first_row=lines + 1, what=what or ("JSON" if first in (b"[", b"{") else "CSV"))
            lines += chunk.count(b"\n")
            total += len(chunk)
            if total > cap:
                raise over_limit("VOIRDIRE_MAX_PIPE_BYTES", f"more than {fmt_bytes(cap)} arrived", src)
            if len(head) < head_size:
                head += chunk[: head_size - len(head)]
            out.write(chunk)
    finally:
        if own:
            os.close(fd)
    return bytes(head)
