"""Column coding for the table constructor: factorize each column once, then canonicalise only
its distinct values.

A column of ``n`` rows with ``U`` distinct values costs one hash pass over the rows (done by
pandas or Arrow in C) and Python work on the ``U`` distinct values at most; the per-row work is
integer array indexing. Labels and raters have few distinct values, items many, so the ids of
items are canonicalised with vectorised string operations where their type allows.

Columns that pandas cannot hash faithfully (an object column mixing booleans with numbers, which
pandas would merge because ``True == 1``, or holding lists) are canonicalised row by row first,
which is exact and only slower on such unusual input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from .._optional import optional_import
from .._safe import uncell

__all__ = ["Coded", "appearance_order", "code_column", "is_arrow_strings", "is_first_order", "first_row", "id_strings", "canon", "id_str", "display",
           "label_canon", "inexact_integers", "EXACT_INTEGERS"]

#: integers beyond this size are not all exactly representable as float64 (labels are compared as floats)
EXACT_INTEGERS = 2 ** 53

# object columns whose values pandas hashes without merging values we keep apart
_SAFE_OBJECT_KINDS = frozenset({"string", "integer", "floating", "mixed-integer-float", "empty"})


def canon(x: Any) -> Any:
    """Canonical form of a label for matching: a float when it reads as a number, else a str."""
    if isinstance(x, (bool, np.bool_)):
        return str(x)
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    s = str(x).strip()
    if "_" in s:  # float() reads '1_0' as 10: an underscore is text, never a digit separator, in a label
        return s
    try:
        return float(s)
    except ValueError:
        return s


def display(x: Any) -> Any:
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def id_str(x: Any) -> str:
    """Canonical string of an item, rater or cluster id (``5.0`` and ``' 5'`` read as ``'5'``; ``"'=x"``,
    as :func:`voirdire._safe.csv_cell` writes ``=x`` into a CSV, reads as ``'=x'``)."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    s = str(x).strip()
    return uncell(s).strip() if s[:1] == "'" else s


class Coded:
    """One column coded as integers: ``codes`` (int64, or int32 from Arrow; ``-1`` where missing) into ``uniques``
    (a Python-object array of distinct values, possibly some not used unless ``dense``)."""

    __slots__ = ("codes", "uniques", "_first", "kind", "_stripped", "_arrow", "dense", "_edge")

    def __init__(self, codes: np.ndarray, uniques: np.ndarray, first_order: bool | None,
                 kind: str | None = None, stripped: np.ndarray | None = None, arrow: Any = None,
                 dense: bool = False) -> None:
        self.codes = codes
        self.uniques = uniques
        self._first = first_order  # None: not known yet
        self.kind = infer_dtype(uniques, skipna=False) if kind is None else kind
        self._stripped = stripped
        self._edge: np.ndarray | None = None  # the distinct values that start or end with a non-alphanumeric
        self._arrow = arrow  # the distinct values as an Arrow string array (from Arrow's coding), or None
        self.dense = dense  # True: every distinct value is used by some row (False: not known)

    @property
    def first_order(self) -> bool:
        """Whether the distinct values are numbered in order of first appearance."""
        if self._first is None:
            self._first = is_first_order(self.codes)
        return self._first

    def stripped(self) -> np.ndarray:
        """The distinct values stripped of surrounding whitespace (they are all strings)."""
        if self._stripped is None:
            self._stripped, self._edge = _strip_edges(self.uniques, self._arrow)
        return self._stripped

    def take(self, keep: np.ndarray | None) -> Coded:
        """The rows in ``keep`` (a boolean mask), with unused distinct values dropped."""
        if keep is None and self.dense:
            return self
        codes = self.codes if keep is None else self.codes[keep]
        U = self.uniques.size
        used = np.zeros(U + 1, dtype=bool)
        used[codes] = True  # code -1 marks slot U
        used = used[:U]
        if used.all():
            first = self._first if keep is None else None
            same = Coded(codes, self.uniques, first, self.kind, self._stripped, self._arrow, dense=True)
            same._edge = self._edge
            return same
        remap = np.cumsum(used) - 1
        remap = np.append(remap, -1)  # -1 stays -1
        codes = remap[codes]
        out = Coded(codes, self.uniques[used], None, self.kind,
                    None if self._stripped is None else self._stripped[used], dense=True)
        if self._edge is not None:
            out._edge = remap[self._edge[used[self._edge]]]
        return out


def _pa() -> Any:
    """pyarrow when installed (an optional dependency), else None."""
    return optional_import("pyarrow")


def is_arrow(col: Any) -> bool:
    """Whether ``col`` is an Arrow array or chunked array (without importing pyarrow)."""
    return type(col).__module__.startswith("pyarrow") and type(col).__name__.endswith("Array")


def is_arrow_strings(col: Any) -> bool:
    """Whether ``col`` is an Arrow column of strings (plain or dictionary-encoded)."""
    if not is_arrow(col):
        return False
    pa = _pa()
    t = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _code_arrow(col: Any) -> Coded:
    """Codes (int32) of an Arrow column of strings or integers from Arrow's hash kernel; nulls are
    missing.

    A dictionary-encoded column read in chunks (Parquet row groups, CSV blocks) may carry one
    dictionary per chunk: the chunks' dictionaries are coded together (one hash pass over the
    distinct values of each chunk, not over the rows) and each chunk's indices mapped through
    them, so the row values are never decoded into strings. The distinct values come in the
    order of the dictionaries (``first_order`` is then worked out from the codes).
    """
    pa = _pa()
    import pyarrow.compute as pc

    if isinstance(col, pa.Array):
        col = pa.chunked_array([col])
    encoded = not pa.types.is_dictionary(col.type)
    if encoded:
        col = col.dictionary_encode()  # one dictionary for all chunks, in order of first appearance
    chunks = [c for c in col.chunks if len(c)]
    if not chunks:
        return Coded(np.zeros(0, dtype=np.int32), np.zeros(0, dtype=object), True, "string")

    def indices(c: Any) -> np.ndarray:
        ix = c.indices if c.null_count == 0 else pc.fill_null(c.indices, -1)
        return np.asarray(ix.to_numpy(zero_copy_only=False), dtype=np.int32)

    dicts = [c.dictionary for c in chunks]
    if len({d.buffers()[1].address if len(d) else 0 for d in dicts}) == 1 and len({len(d) for d in dicts}) == 1:
        codes = np.concatenate([indices(c) for c in chunks]) if len(chunks) > 1 else indices(chunks[0])
        return Coded(codes, dicts[0].to_numpy(zero_copy_only=False).astype(object, copy=False), None,
                     _kind(dicts[0]), arrow=dicts[0], dense=encoded)
    # several dictionaries (chunks of one Parquet row group share its dictionary: each distinct
    # dictionary once). Only the entries some row points at are hashed (a row group's dictionary
    # may hold far more values than its rows use: a pandas Categorical writes its categories),
    # coded together, and each chunk's indices mapped through them; nulls (-1) stay -1.
    seen: dict[tuple[int, int, int], int] = {}
    distinct: list[Any] = []
    which: list[int] = []
    for d in dicts:
        ident = (d.buffers()[1].address if len(d) else 0, d.buffers()[-1].address if len(d) else 0, len(d))
        if ident not in seen:
            seen[ident] = len(distinct)
            distinct.append(d)
        which.append(seen[ident])
    ixs = [indices(c) for c in chunks]
    used = [np.zeros(len(d) + 1, dtype=bool) for d in distinct]  # slot len(d): the nulls' -1
    for ix, k in zip(ixs, which):
        used[k][ix] = True
    kept = [d.filter(pa.array(u[:-1])) if not u[:-1].all() else d for d, u in zip(distinct, used)]
    glob = pa.chunked_array(kept, type=distinct[0].type).dictionary_encode()
    gcode = np.concatenate([indices(c) for c in glob.chunks]) if glob.num_chunks else np.zeros(0, np.int32)
    remap, off = [], 0
    for d, u, kd in zip(distinct, used, kept):
        r = np.full(len(d) + 1, -1, dtype=np.int32)  # index -1 (a null) reads the last slot: -1
        r[:-1][u[:-1]] = gcode[off: off + len(kd)]
        off += len(kd)
        remap.append(r)
    del used, kept, gcode
    codes = np.empty(sum(ix.size for ix in ixs), dtype=np.int32)
    at = 0
    for ix, k in zip(ixs, which):
        codes[at: at + ix.size] = remap[k][ix]
        at += ix.size
    del ixs, remap
    uniq = glob.chunk(0).dictionary if glob.num_chunks else dicts[0][:0]
    out = Coded(codes, uniq.to_numpy(zero_copy_only=False).astype(object, copy=False), None, _kind(uniq),
                arrow=uniq, dense=True)
    del glob, uniq
    pa.default_memory_pool().release_unused()  # the hash tables' pages, before the next column's
    return out


def _kind(d: Any) -> str:
    """``infer_dtype``'s name for an Arrow dictionary of strings or integers."""
    return "integer" if _pa().types.is_integer(d.type) else "string"


def is_arrow_integers(col: Any) -> bool:
    """Whether ``col`` is an Arrow column of integers without nulls (coded by Arrow exactly as
    pandas would code it)."""
    return is_arrow(col) and _pa().types.is_integer(col.type) and col.null_count == 0


def is_first_order(codes: np.ndarray) -> bool:
    """Whether codes number their values in order of first appearance (-1 = missing, skipped)."""
    c = codes[codes >= 0] if (codes < 0).any() else codes
    if c.size == 0:
        return True
    run = np.maximum.accumulate(c)
    return bool(c[0] == 0 and np.all(c[1:] <= run[:-1] + 1))


def appearance_order(coded: Coded) -> np.ndarray | None:
    """The codes ``0 .. U-1`` of a column whose ``U`` distinct values are all used, in order of first
    appearance, read from the shortest prefix of rows that holds them all (a few thousand rows for
    a rater column); None when that prefix is not short (many distinct values: items), when some
    value is unused, or when some row is missing (code -1)."""
    codes, U = coded.codes, coded.uniques.size
    n = codes.size
    if not coded.dense or U == 0 or U > n // 64 or bool((codes < 0).any()):
        return None
    m = 1 << 14
    while m < 8 * n:
        seen = pd.unique(codes[:m])  # in order of first appearance
        if seen.size == U:
            return np.asarray(seen, dtype=np.int64)
        if m >= n or seen.size * 64 > m:  # not a short prefix after all
            return None
        m *= 8
    return None


def code_column(s: Any, per_row: Callable[[Any], Any], kind: str | None = None) -> Coded:
    """Factorize a column (pandas, or an Arrow column of strings); ``per_row`` canonicalises rows
    of columns pandas cannot hash faithfully. ``kind``: ``infer_dtype(s, skipna=True)`` of an
    object column when the caller has it already (one scan of the column fewer)."""
    if is_arrow_strings(s) or is_arrow_integers(s):
        return _code_arrow(s)
    if is_arrow(s):
        s = s.to_pandas()  # numbers, booleans, dates: exactly as pandas reads them
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = np.asarray(s.cat.codes, dtype=np.int64)
        return Coded(codes, s.cat.categories.to_numpy(dtype=object), None)
    if s.dtype == object and (kind or infer_dtype(s, skipna=True)) not in _SAFE_OBJECT_KINDS:
        v = s.to_numpy(dtype=object)
        na = pd.isna(s).to_numpy()
        out = np.empty(v.size, dtype=object)
        out[:] = [None if m else per_row(x) for x, m in zip(v, na)]
        s = pd.Series(out, dtype=object)
    codes, uniq = pd.factorize(s, use_na_sentinel=True)
    return Coded(np.asarray(codes, dtype=np.int64), np.asarray(uniq, dtype=object), True, dense=True)


def first_row(mask_u: np.ndarray, codes: np.ndarray) -> int | None:
    """Position of the first row whose distinct value is flagged in ``mask_u`` (None if none)."""
    if not mask_u.any():
        return None
    hit = np.flatnonzero(mask_u[codes])
    return int(hit[0]) if hit.size else None


def _strip(uniq: np.ndarray, arrow: Any = None) -> np.ndarray:
    """``str.strip`` of every string; Python's own strip runs only on the strings that start or end
    with something other than a letter or digit (found by Arrow, on ``arrow``, the same strings
    as an Arrow array when the caller has them), usually none of them."""
    return _strip_edges(uniq, arrow)[0]


def _strip_edges(uniq: np.ndarray, arrow: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`_strip`, and the positions of the strings it looked at (those that start or end with
    something other than a letter or digit; None when Python stripped every string)."""
    pa = _pa() if uniq.size >= 1000 else None
    if pa is None:
        return np.array([x.strip() for x in uniq] if uniq.size else [], dtype=object), None
    import pyarrow.compute as pc

    if arrow is None or not (pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type)):
        arrow = pa.array(uniq, type=pa.string())
    cand = _edge_bytes(arrow, pa.types.is_large_string(arrow.type))
    if cand is None:
        edge = pc.match_substring_regex(arrow, r"^[^0-9A-Za-z]|[^0-9A-Za-z]$")
        cand = np.flatnonzero(edge.to_numpy(zero_copy_only=False))
    if cand.size == 0:
        return uniq, cand
    fixed = [x.strip() for x in uniq[cand]]
    if all(a == b for a, b in zip(fixed, uniq[cand])):
        return uniq, cand
    out = uniq.copy()
    out[cand] = fixed
    return out, cand


_ALNUM = np.zeros(256, dtype=bool)
for _a, _b in ((48, 58), (65, 91), (97, 123)):  # 0-9, A-Z, a-z
    _ALNUM[_a:_b] = True


def _edge_bytes(arrow: Any, large: bool) -> np.ndarray | None:
    """Positions of the strings of an Arrow string array (without nulls) whose first or last byte
    is not an ASCII letter or digit, or that are empty: read from the array's offsets and bytes
    (one pass over ``2n`` bytes, no string decoded). Every string that ``str.strip`` changes is
    among them (a non-ASCII character's bytes are all >= 0x80). None when the array has nulls."""
    if arrow.null_count:
        return None
    n = len(arrow)
    bufs = arrow.buffers()
    dt = np.dtype(np.int64 if large else np.int32)
    offs = np.frombuffer(bufs[1], dtype=dt, count=n + 1, offset=arrow.offset * dt.itemsize)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    start, end = offs[:-1], offs[1:]
    empty = end <= start
    if data.size == 0:
        return np.flatnonzero(empty)
    ok = _ALNUM[data[np.where(empty, 0, start)]] & _ALNUM[data[np.where(empty, 0, end - 1)]]
    return np.flatnonzero(empty | ~ok)


def blank_uniques(coded: Coded) -> np.ndarray:
    """Which distinct values are blank (a string of whitespace only)."""
    kind, uniq = coded.kind, coded.uniques
    if kind == "string":
        return coded.stripped() == ""
    if kind in ("integer", "floating", "mixed-integer-float", "boolean", "empty"):
        return np.zeros(uniq.size, dtype=bool)
    return np.array([isinstance(x, str) and not x.strip() for x in uniq], dtype=bool)


def id_strings(coded: Coded) -> np.ndarray:
    """:func:`id_str` of every distinct value, vectorised for strings and integers."""
    kind, uniq = coded.kind, coded.uniques
    if kind == "string":
        return _uncelled(coded, coded.stripped())
    if kind == "integer":
        return uniq.astype(str).astype(object)
    out = np.empty(uniq.size, dtype=object)
    out[:] = [id_str(x) for x in uniq]
    return out


def _uncelled(coded: Coded, ids: np.ndarray) -> np.ndarray:
    """``ids`` (``coded.stripped()``) with :func:`voirdire._safe.uncell` applied where one starts with
    a quote; only the strings whose first or last byte is not a letter or digit are looked at when
    stripping found them (from the bytes, no string decoded), else every string."""
    cand = coded._edge
    hit = [k for k in (range(ids.size) if cand is None else cand.tolist()) if ids[k][:1] == "'"]
    if not hit:
        return ids
    fixed = [uncell(ids[k]).strip() for k in hit]
    if all(a == ids[k] for a, k in zip(fixed, hit)):
        return ids
    out = ids.copy()
    out[hit] = fixed
    return out


def label_canon(coded: Coded) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`canon` of every distinct label as three arrays: ``is_num``, ``num`` (the float, nan
    where not a number) and ``txt`` (the stripped string, None where a number)."""
    kind, uniq = coded.kind, coded.uniques
    U = uniq.size
    if kind in ("integer", "floating", "mixed-integer-float"):
        return np.ones(U, bool), uniq.astype(float), np.full(U, None, dtype=object)
    if kind == "string":
        stripped = coded.stripped()
        pa = _pa()
        num = None
        if pa is not None:
            try:
                num = pa.array(stripped, type=pa.string()).cast(pa.float64()).to_numpy(zero_copy_only=False)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                num = None
        if num is not None:
            num = np.array(num, dtype=float)
            # Arrow reads a few spellings Python's float() refuses ('nan(1)'): check the non-finite ones
            odd = np.flatnonzero(~np.isfinite(num))
            if all(_is_float(stripped[k]) for k in odd):
                return np.ones(U, bool), num, np.full(U, None, dtype=object)
    c = [canon(x) for x in uniq]
    is_num = np.fromiter((isinstance(x, float) for x in c), dtype=bool, count=U)
    num = np.fromiter((x if isinstance(x, float) else np.nan for x in c), dtype=float, count=U)
    txt = np.empty(U, dtype=object)
    txt[:] = [None if isinstance(x, float) else x for x in c]
    return is_num, num, txt


def inexact_integers(coded: Coded, is_num: np.ndarray, num: np.ndarray) -> np.ndarray:
    """Which distinct labels are integers (numbers or digit strings) that their float in ``num``
    does not hold exactly: beyond 2**53, ``9007199254740993`` reads as ``9007199254740992``, so
    two different labels would silently become one category."""
    with np.errstate(invalid="ignore"):
        big = is_num & np.isfinite(num) & (np.abs(num) >= EXACT_INTEGERS)
    out = np.zeros(big.size, dtype=bool)
    for k in np.flatnonzero(big).tolist():
        x = coded.uniques[k]
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer, str)):
            continue
        try:
            exact = int(x.strip()) if isinstance(x, str) else int(x)
        except ValueError:  # '1e20', '9007199254740993.5': written as a float, read as one
            continue
        out[k] = exact != int(num[k])
    return out


def _is_float(s: str) -> bool:
    if "_" in s:
        return False
    try:
        float(s)
    except ValueError:
        return False
    return True
