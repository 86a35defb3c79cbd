"""Krippendorff's alpha on tables larger than memory: per-item sufficient statistics accumulated
over batches of a Parquet or CSV file, never the whole table.

Why pyarrow and not DuckDB: pyarrow is already the project's reader (an optional extra it
needs for Parquet anyway), its batch readers stream both formats with bounded memory, and the
per-item statistics are computed by the same code as in memory (each block of complete items
becomes a small :class:`~voirdire.data.AnnotationTable`), so the two paths cannot drift apart.
DuckDB would add a dependency to do a group-by the statistics do not need.

Two passes over the file: the first fixes what every block must share (the categories and
their order, the raters, the row count) and checks that items are grouped (every item's rows
form one run); the second builds the statistics block by block. Items that are not grouped are
refused with a one-line error: streaming would otherwise split an item's labels across blocks
and silently count it as two items. Sort the file by item first (any tool; DuckDB:
``COPY (SELECT * FROM 'f.parquet' ORDER BY item) TO 'sorted.parquet'``).
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._optional import require
from .._safe import shown
from .._scores import PER_ITEM_COEFFICIENTS
from ..data import AnnotationTable, DuplicatePolicy, MissingPolicy, Scale, TableSummary, id_str
from ..exceptions import InvalidParameterError, SchemaError
from . import _core
from ._prepare import Prepared, prepare
from ._results import AbstentionInfo, AgreementResult, AgreementTable

__all__ = ["STREAMABLE", "StreamGroup", "agreement_stream", "krippendorff_alpha_stream", "stream_groups"]


def _batches(path: Path, cols: list[str], batch_rows: int, row_groups: list[int] | None = None) -> Iterator[Any]:
    """Record batches of the three columns, strings for CSV (as the in-memory reader reads them);
    ``row_groups``: only these row groups of a Parquet file."""
    pa = require("pyarrow", "Streaming a table")
    ext = path.suffix.lower()
    if ext in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises several unrelated types
            raise SchemaError(f"cannot be read as Parquet: {str(exc).strip()[:120]}", source=str(path)) from None
        names = pf.schema_arrow.names
        absent = [c for c in cols if c not in names]
        if absent:
            raise SchemaError(f"missing column(s) {absent}; found {names}. Name the columns with "
                              "--item/--rater/--label.", source=str(path), column=absent[0])
        for c in cols:
            t = pf.schema_arrow.field(c).type
            if pa.types.is_nested(t.value_type if pa.types.is_dictionary(t) else t):
                raise SchemaError(f"the column holds {t} values, not one value per row. Give one item, rater "
                                  "and label per row.", source=str(path), row=1, column=c)
        yield from pf.iter_batches(batch_size=batch_rows, columns=cols, row_groups=row_groups)
        return
    if ext in (".csv", ".tsv", ".tab"):
        import pyarrow.csv as pcsv

        sep = "," if ext == ".csv" else "\t"
        try:
            reader = pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 24),
                                   parse_options=pcsv.ParseOptions(delimiter=sep),
                                   convert_options=pcsv.ConvertOptions(
                                       include_columns=cols, column_types={c: pa.string() for c in cols}))
            for b in reader:
                yield b
        except (pa.ArrowInvalid, KeyError) as exc:
            import csv

            with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
                names = [n.strip() for n in next(csv.reader(fh, delimiter=sep), [])]
            absent = [c for c in cols if c not in names]
            if absent:
                raise SchemaError(f"missing column(s) {absent}; found {shown(names, 160)}. Name the columns with "
                                  "--item/--rater/--label.", source=str(path), column=absent[0]) from None
            msg = str(exc).strip().splitlines()[0][:160]
            raise SchemaError(f"cannot be streamed as {'CSV' if sep == ',' else 'TSV'}: {msg}", source=str(path)) \
                from None
        return
    raise SchemaError(f"streaming reads .parquet, .csv or .tsv files; got '{ext}'.", source=str(path))


@dataclasses.dataclass
class _Scan:
    labels: dict[Any, int]
    raters: dict[str, int]
    n_rows: int


def _plain(col: Any) -> Any:
    """An Arrow array or chunked array with any dictionary encoding removed (values compare as values)."""
    pa = require("pyarrow", "Streaming a table")
    return col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col


def _run_starts(col: Any) -> np.ndarray:
    """Where each run of equal values starts (0 first), computed by Arrow; nulls equal each other."""
    import pyarrow.compute as pc

    n = len(col)
    if n < 2:
        return np.zeros(min(n, 1), dtype=np.int64)
    col = _plain(col)
    a, b = col.slice(1), col.slice(0, n - 1)
    ne = pc.not_equal(a, b)
    if col.null_count:
        ne = pc.if_else(pc.and_(pc.is_null(a), pc.is_null(b)), False, ne.fill_null(True))
    return np.concatenate([[0], np.flatnonzero(np.asarray(ne.to_numpy(zero_copy_only=False))) + 1])


def _hash(values: Any) -> np.ndarray:
    """64-bit hashes of item ids (an Arrow array of one file's item type)."""
    pa = require("pyarrow", "Streaming a table")
    if pa.types.is_integer(values.type) and not values.null_count:
        return pd.util.hash_array(values.to_numpy().astype(np.int64, copy=False))
    return pd.util.hash_array(np.asarray(values.to_numpy(zero_copy_only=False), dtype=object))


def _first_blank(col: Any) -> int | None:
    """The first position of a missing id in ``col`` (null, NaN, or a string of whitespace only,
    as the in-memory reader counts them), or ``None``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = _plain(col)
    bad = pc.is_null(col, nan_is_null=True) if pa.types.is_floating(col.type) else pc.is_null(col)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        bad = pc.or_(bad, pc.equal(pc.utf8_trim_whitespace(col), "").fill_null(False))
    hit = np.flatnonzero(np.asarray(bad.to_numpy(zero_copy_only=False)))
    return int(hit[0]) if hit.size else None


def _item_runs(path: Path, cols: list[str], batch_rows: int) -> Iterator[tuple[Any, Any, np.ndarray, Any]]:
    """Per batch: ``(batch, item values starting a new run, their rows from 0, the batch's item column)``;
    a run that goes on from the previous batch is not a new run."""
    last: Any = None
    n = 0
    for b in _batches(path, cols, batch_rows):
        if b.num_rows == 0:
            yield b, None, np.zeros(0, dtype=np.int64), None
            continue
        col = _plain(b.column(cols[0]))
        starts = _run_starts(col)
        if last is not None and col[0].as_py() == last:  # the previous batch's last item goes on
            starts = starts[1:]
        yield b, col.take(starts), starts + n, col
        last = col[len(col) - 1].as_py()
        n += b.num_rows


def _regrouped(path: Path, cols: list[str], batch_rows: int, first_row: int, suspects: np.ndarray) -> None:
    """The one-line error for the first item whose rows start a second run (rows of other items
    between), found with exact values among the runs whose hash repeats (``suspects``); nothing
    when the repeat was a hash collision. A missing item id before it (which splits a run) is
    named as the missing id it is."""
    seen: set[Any] = set()
    at = 0  # the batch's first row
    for b, vals, rows, col in _item_runs(path, cols, batch_rows):
        if col is not None:  # a missing item id splits its item's run: say that, as the in-memory reader
            k = _first_blank(col)
            if k is not None:
                raise SchemaError(f"empty {cols[0]} id. Every row needs an item and a rater.", source=str(path),
                                  row=at + k + first_row, column=cols[0])
        at += b.num_rows
        if vals is None or not len(vals):
            continue
        hit = np.flatnonzero(np.isin(_hash(vals), suspects))
        for k in hit.tolist():
            v = vals[k].as_py()
            if v in seen:
                raise SchemaError(
                    f"items are not grouped: item {v!r} appears again at row {int(rows[k]) + first_row} after rows of "
                    f"other items. Streaming reads each item's rows as one run: sort the file by item first, or "
                    f"read it whole (without --stream).", source=str(path), column=cols[0])
            seen.add(v)


def _scan(path: Path, cols: list[str], batch_rows: int, first_row: int) -> _Scan:
    """Pass 1: distinct labels and raters, the row count, and the grouped-items check (every
    item's rows one run: the hashes of all runs' items are distinct; a repeat is confirmed on
    the values and located by :func:`_regrouped`)."""
    import pyarrow.compute as pc

    item, rater, label = cols
    labels: dict[Any, int] = {}
    raters: dict[str, int] = {}
    hashes: list[np.ndarray] = []
    n = 0
    types: Any = None
    for b, vals, _, _ in _item_runs(path, cols, batch_rows):
        if types is None:
            types = b.schema
        elif not b.schema.equals(types):
            col = next((f.name for f, g in zip(types, b.schema) if not f.equals(g)), None)
            was = types.field(col).type if col is not None else types
            now = b.schema.field(col).type if col is not None else b.schema
            raise SchemaError(f"the column's type changes here: {was} in the rows before, {now} from this row on. "
                              f"Write the file with one type per column.", source=str(path), row=n + first_row,
                              column=col)
        if b.num_rows == 0:
            continue
        enc = pc.dictionary_encode(_plain(b.column(label)))
        codes = np.asarray(enc.indices.fill_null(-1).to_numpy(zero_copy_only=False))
        # Arrow numbers the values in order of first appearance: value k first appears where the
        # running maximum of the codes first reaches k
        first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)
        for v, k in zip(enc.dictionary.to_pylist(), first.tolist()):
            labels.setdefault(v, n + k + first_row)  # the file row where each label first appears
        if enc.indices.null_count:
            labels.setdefault(None, n + int(np.flatnonzero(codes < 0)[0]) + first_row)
        for r in b.column(rater).unique().to_pylist():
            raters.setdefault(id_str(r), len(raters))  # the name the table constructor gives it
        if len(vals):
            hashes.append(_hash(vals))
        n += b.num_rows
    if n == 0:
        raise SchemaError("the table has no rows. Check that the file holds data below its header.", source=str(path))
    h = np.sort(np.concatenate(hashes)) if hashes else np.zeros(0, dtype=np.uint64)
    rep = h[1:][h[1:] == h[:-1]]
    if rep.size:
        _regrouped(path, cols, batch_rows, first_row, np.unique(rep))
    return _Scan(labels=labels, raters=raters, n_rows=n)


def _runs(batches: Iterator[Any], item: str, pos: int = 0) -> Iterator[tuple[Any, int, bool]]:
    """Tables of complete items from record batches: ``(table, first row, last)``; the last
    item of a batch waits for the next, and the final carry (the last item, perhaps unfinished
    when ``batches`` is one partition of a file) comes with ``last=True``."""
    pa = require("pyarrow", "Streaming a table")
    carry = None
    for b in batches:
        if b.num_rows == 0:
            continue
        t = pa.Table.from_batches([b])
        if carry is not None:
            t = pa.concat_tables([carry, t])
        cut = int(_run_starts(t.column(item))[-1])  # start of the last item
        if cut > 0:
            yield t.slice(0, cut), pos, False
            pos += cut
        carry = t.slice(cut)
    if carry is not None and carry.num_rows:
        yield carry, pos, True


# ----------------------------------------------------------------------------- per-block statistics
#: the coefficients that reduce to per-item statistics with pooled marginals only (no per-rater
#: marginals): they stream. Cohen's kappa, Scott's pi and Conger's kappa need each rater's
#: marginals with the items' pairing and are computed in memory only.
STREAMABLE = PER_ITEM_COEFFICIENTS  # the registry's per-item coefficients

#: per-item attributes of each statistic, joined across blocks in file order; the others are
#: constants of the scale (weights, distances) that every block shares
_PER_ITEM: dict[type, tuple[str, ...]] = {
    _core._GwetFamily: ("r", "N", "sum_q", "inv_r", "e2", "e1", "pa_i"),
    _core._AlphaMatrix: ("r", "N", "pair", "d", "pf"),
    _core._AlphaMoments: ("r", "pair", "d", "m", "s1", "s2", "a", "pf"),
    _core._AlphaOrdinal: ("r", "pair", "d", "m", "s1", "s2", "a", "pf", "Nsub"),
    _core._AlphaOrdinalSums: ("r", "pair", "pf", "a", "Ncnt"),
}
_POOLED: dict[type, tuple[str, ...]] = {_core._AlphaMatrix: ("c_pair",)}  # added across blocks
#: per-item attributes every spec of a selection computes alike from its labels (``prep.r`` and
#: ``_core._counts(prep)``): one copy among the distinct rows
_SHARED = ("r", "N")
#: a selection's distinct rows are kept while there are at most this many, or at most a quarter
#: as many as its items (categorical labels); beyond, its per-item arrays (continuous labels)
_ROWS_MIN = 1 << 16


@dataclasses.dataclass
class _Rows:
    """A selection's per-item statistics as distinct rows with counts: O(distinct rows + items x 4
    bytes) instead of O(items x attributes x 8 bytes). ``table``: the distinct rows (every spec's
    per-item attributes side by side, float64; the first block's rows in the order of their
    hashes, each later block's new rows appended after them); ``hashes``: their
    :func:`~voirdire._stats.resampling.row_hashes` (rows are told apart by value: equal hashes
    are checked on the values); ``codes``: per block of items, each item's row (file order);
    ``layout``: per spec, ``(attribute, first column, columns (0: 1-D), dtype)``."""

    layout: tuple[tuple[tuple[str, int, int, str], ...], ...]
    table: np.ndarray
    hashes: np.ndarray
    codes: list[np.ndarray]

    @property
    def n_items(self) -> int:
        return sum(int(c.shape[0]) for c in self.codes)

    def counts(self) -> np.ndarray:
        out = np.zeros(self.table.shape[0])
        for c in self.codes:
            out += np.bincount(c, minlength=self.table.shape[0])
        return out


def _to_rows(gs: list[Any]) -> _Rows | None:
    """The distinct rows of one block's specs; None when an attribute is sparse (many categories)
    or two distinct rows share a hash."""
    from .._stats.resampling import group_hashes, row_hashes

    cols: list[np.ndarray] = []
    where: dict[str, int] = {}
    layout = []
    at = 0
    for sp_ in gs:
        ent = []
        for name in _PER_ITEM[type(sp_)]:
            x = getattr(sp_, name)
            if sp.issparse(x):
                return None
            x = np.asarray(x)
            if name in _SHARED and name in where:
                if not np.array_equal(x, cols[where[name]] if x.ndim == 1 else
                                      np.column_stack(cols[where[name]:where[name] + x.shape[1]])):
                    return None
                ent.append((name, where[name], 0 if x.ndim == 1 else x.shape[1], x.dtype.str))
                continue
            if name in _SHARED:
                where[name] = len(cols)
            nc = 0 if x.ndim == 1 else x.shape[1]
            cols.extend([x.astype(np.float64)] if x.ndim == 1 else [x[:, j].astype(np.float64) for j in range(nc)])
            ent.append((name, at, nc, x.dtype.str))
            at += max(nc, 1)
        layout.append(tuple(ent))
    K = np.column_stack(cols)
    keys, first, inv = group_hashes(row_hashes(K))
    if not all(np.array_equal(K[:, j], K[first, j][inv]) for j in range(K.shape[1])):
        return None  # a hash collision
    return _Rows(layout=tuple(layout), table=K[first], hashes=keys, codes=[inv.astype(np.int32)])


def _merge_rows(a: _Rows, b: _Rows) -> _Rows | None:
    """``a`` then ``b`` (consecutive items), their rows merged by value; None on a hash collision
    or when the rows grow past ``_ROWS_MIN`` and a quarter of the items."""
    order = np.argsort(a.hashes, kind="stable")
    hs = a.hashes[order]
    pos = np.minimum(np.searchsorted(hs, b.hashes), max(hs.size - 1, 0))
    found = (hs[pos] == b.hashes) if hs.size else np.zeros(b.hashes.size, dtype=bool)
    at = order[pos]
    if not np.array_equal(a.table[at[found]], b.table[found]):
        return None  # equal hashes, different rows
    new = ~found
    n_new = int(np.count_nonzero(new))
    T = a.table.shape[0] + n_new
    if T > max(_ROWS_MIN, (a.n_items + b.n_items) // 4):
        return None
    to = np.where(found, at, a.table.shape[0] + np.cumsum(new) - 1)
    return _Rows(layout=a.layout, table=np.concatenate([a.table, b.table[new]]),
                 hashes=np.concatenate([a.hashes, b.hashes[new]]),
                 codes=a.codes + [to[c].astype(np.int32) for c in b.codes])


def _from_rows(rows: _Rows, templates: list[Any], codes: np.ndarray | None = None) -> list[Any]:
    """Specs whose per-item attributes are ``rows.table[codes]`` (None: the distinct rows themselves);
    an attribute several specs share is one array."""
    tab = rows.table if codes is None else None
    made: dict[int, np.ndarray] = {}
    out = []
    for tmpl, ent in zip(templates, rows.layout):
        sp_ = object.__new__(type(tmpl))
        sp_.__dict__.update(tmpl.__dict__)
        for name, c0, nc, dt in ent:
            if c0 not in made:
                if tab is not None:
                    x = tab[:, c0] if nc == 0 else tab[:, c0:c0 + nc]
                else:
                    x = rows.table[:, c0][codes] if nc == 0 else rows.table[:, c0:c0 + nc][codes]
                made[c0] = np.ascontiguousarray(x).astype(np.dtype(dt), copy=False)
            setattr(sp_, name, made[c0])
        if codes is not None and "c_pair" in _POOLED.get(type(sp_), ()):  # the pooled counts of the pairable values
            sp_.c_pair = np.asarray(sp_.N.T @ sp_.pf).ravel()
        out.append(sp_)
    return out


def _emptied(gs: list[Any]) -> list[Any]:
    """The specs without their per-item attributes (the constants every block shares)."""
    out = []
    for sp_ in gs:
        t = object.__new__(type(sp_))
        t.__dict__.update(sp_.__dict__)
        for name in _PER_ITEM[type(sp_)]:
            setattr(t, name, None)
        out.append(t)
    return out


@dataclasses.dataclass(frozen=True)
class StreamGroup:
    """One selection of raters computed in the same pass: ``raters`` (None: every rater), and
    whether items no human labelled are left out (a judge's group, ``judge_only_items="drop"``)."""

    raters: tuple[str, ...] | None = None
    drop_judge_only: bool = False


@dataclasses.dataclass(frozen=True)
class _Setup:
    """What every block shares (picklable: Dask workers get a copy)."""

    path: str
    n_rows: int
    cols: tuple[str, str, str]
    first_row: int
    batch_rows: int
    scale: Scale
    raters: tuple[str, ...]
    judges: tuple[str, ...]
    groups: tuple[StreamGroup, ...]
    names: tuple[str, ...]
    level: Any
    weights: Any
    policy: str
    duplicates: Any
    missing: Any


@dataclasses.dataclass
class _Part:
    """The statistics of consecutive complete items: per group, one spec per coefficient (their
    per-item arrays, or the constants only when ``rows`` holds the group's distinct rows), the
    group's label counts, and the table's counts."""

    specs: list[list[Any]]
    rows: list[_Rows | None]
    templates: list[Prepared]  # per group: the first block's prepared selection, labels removed
    n_items: int
    counts: np.ndarray  # (groups, 7): labels, abstentions, items with a label, items with an abstention,
    #                      prepared labels, items only the judge labelled (left out), items
    shares: np.ndarray  # (groups,) bool: the group's judge shares an item with another of its raters
    dropped: dict[str, int]
    totals: np.ndarray  # the table's labels and abstentions (every rater)


def _has(t: AnnotationTable, idx: Any, policy: str) -> np.ndarray:
    """Per item: one of the raters ``idx`` labelled it (abstentions count unless excluded)."""
    keep = np.isin(t.rater_idx, idx)
    if policy == "exclude":
        keep &= ~t.is_abstention
    return np.bincount(t.label_item[keep], minlength=t.n_items) > 0


def _block(tbl: Any, pos: int, st: _Setup) -> _Part:
    """The statistics of one table of complete items (``pos``: its first row's place in the file)."""
    from ._coefficients import _WEIGHTED, _make_spec

    item, rater, label = st.cols
    src = st.path
    t = AnnotationTable.from_frame(tbl, item=item, rater=rater, label=label, scale=st.scale,
                                   duplicates=st.duplicates, missing=st.missing, source=src, min_raters=1,
                                   row_numbers=np.arange(pos + st.first_row, pos + st.first_row + tbl.num_rows))
    where = {r: k for k, r in enumerate(st.raters)}
    ridx = np.array([where[r] for r in t.raters], dtype=np.int32)
    js = set(st.judges)
    t = dataclasses.replace(t, raters=np.asarray(st.raters, dtype=object),
                            roles=np.asarray(["judge" if r in js else "human" for r in st.raters], dtype=object),
                            rater_idx=ridx[t.rater_idx])
    humans = [k for k, r in enumerate(st.raters) if r not in js]
    human_items = _has(t, humans, st.policy) if st.judges and humans else None
    n_groups = len(st.groups)
    counts = np.zeros((n_groups, 7), dtype=np.int64)
    shares = np.zeros(n_groups, dtype=bool)
    specs: list[list[Any]] = []
    rows: list[_Rows | None] = []
    templates: list[Prepared] = []
    for g, grp in enumerate(st.groups):
        sel = list(range(len(st.raters))) if grp.raters is None else [where[r] for r in grp.raters]
        tg = t
        if grp.raters is not None and grp.raters[-1] in js:
            j = where[grp.raters[-1]]
            others = [k for k in sel if k != j]
            shares[g] = bool(others) and bool(np.any(_has(t, [j], st.policy) & _has(t, others, st.policy)))
            if grp.drop_judge_only and human_items is not None:
                only = int(np.count_nonzero(_has(t, [j], st.policy) & ~human_items))
                counts[g, 5] = only
                if only:
                    tg = t.select(items=human_items)
        bp = prepare(tg, raters=None if grp.raters is None else list(grp.raters), policy=st.policy,
                     func="agreement")
        gs: list[Any] = [_make_spec(n, bp, level=st.level, weights=st.weights if n in _WEIGHTED else None)
                         for n in st.names]
        for s in gs:
            if type(s) not in _PER_ITEM:
                raise InvalidParameterError(
                    f"{s.name} at level {s.level!r} does not stream (ratio alpha on more than 2,000 distinct "
                    f"values); read the file whole (without --stream).")
        shared = None  # the coefficients' per-item category counts are one matrix: keep one copy
        for s in gs:
            N = getattr(s, "N", None)
            if N is None:
                continue
            if shared is None:
                shared = N
            elif type(N) is type(shared) and N.shape == shared.shape and \
                    (np.array_equal(N, shared) if isinstance(N, np.ndarray) else (N != shared).nnz == 0):
                s.N = shared
        for s in gs:
            s.prep = None  # the block's labels are not kept: only the specs' per-item arrays are
        rows.append(_to_rows(gs))  # or their distinct rows, when they can be told apart by value
        specs.append(gs if rows[-1] is None else _emptied(gs))
        sel_lab = np.isin(tg.rater_idx, sel)
        abst = sel_lab & tg.is_abstention
        counts[g, :5] = (int(np.count_nonzero(sel_lab)), int(np.count_nonzero(abst)),
                         int(np.count_nonzero(np.bincount(tg.label_item[sel_lab], minlength=tg.n_items))),
                         int(np.count_nonzero(np.bincount(tg.label_item[abst], minlength=tg.n_items))),
                         bp.n_labels)
        counts[g, 6] = tg.n_items
        empty = np.zeros(0, dtype=np.int64)
        templates.append(dataclasses.replace(bp, item=empty, rater=empty, code=empty, r=np.zeros(0), n_items=0))
    return _Part(specs=specs, rows=rows, templates=templates, n_items=t.n_items, counts=counts, shares=shares,
                 dropped=dict(t.dropped), totals=np.array([t.n_labels, int(np.count_nonzero(t.is_abstention))]))


def _equal(a: Any, b: Any) -> bool:
    """Two per-item arrays hold the same values (dense or sparse)."""
    if a is b:
        return True
    if sp.issparse(a) or sp.issparse(b):
        return bool(a.shape == b.shape and (sp.csr_matrix(a) != sp.csr_matrix(b)).nnz == 0)
    return bool(np.array_equal(a, b))


def _join_specs(specs: list[Any], shared: dict[str, tuple[list[Any], Any]]) -> Any:
    """One spec over the items of consecutive blocks: per-item arrays joined, pooled arrays added,
    constants shared. An attribute of ``_SHARED`` whose blocks hold the same values as another
    spec's already joined (``shared``: per name, the blocks and the joined array) is that array:
    one copy, told by value."""
    first = specs[0]
    if len(specs) == 1:
        return first
    out = object.__new__(type(first))
    out.__dict__.update(first.__dict__)
    for name in _PER_ITEM[type(first)]:
        parts = [getattr(s, name) for s in specs]
        if name in shared and all(_equal(a, b) for a, b in zip(parts, shared[name][0], strict=True)):
            setattr(out, name, shared[name][1])
            continue
        if any(sp.issparse(x) for x in parts):
            setattr(out, name, sp.vstack([sp.csr_matrix(x) for x in parts], format="csr"))
        elif parts[0].ndim == 2:
            setattr(out, name, np.vstack(parts))
        else:
            setattr(out, name, np.concatenate(parts))
        if name in _SHARED and name not in shared:
            shared[name] = (parts, getattr(out, name))
    for name in _POOLED.get(type(first), ()):
        setattr(out, name, np.sum([getattr(s, name) for s in specs], axis=0))
    return out


def _join(parts: list[_Part]) -> _Part:
    """The statistics of consecutive parts, in order."""
    parts = [p for p in parts if p.n_items or p.counts.any()]
    if len(parts) == 1:
        return parts[0]
    specs: list[list[Any]] = []
    rows: list[_Rows | None] = []
    for g in range(len(parts[0].specs)):
        rl = [p.rows[g] for p in parts]
        acc = rl[0]
        for r in rl[1:]:
            if acc is None or r is None:
                acc = None
                break
            acc = _merge_rows(acc, r)
        rows.append(acc)
        if acc is not None:
            specs.append(parts[0].specs[g])
            continue
        # per item (continuous labels, many categories): every part's arrays written out
        per_item = [p.specs[g] if r is None else _from_rows(r, p.specs[g], np.concatenate(r.codes))
                    for p, r in zip(parts, rl)]
        shared: dict[str, tuple[list[Any], Any]] = {}
        specs.append([_join_specs([ps[k] for ps in per_item], shared) for k in range(len(parts[0].specs[g]))])
    dropped: dict[str, int] = {}
    for p in parts:
        for why, n in p.dropped.items():
            dropped[why] = dropped.get(why, 0) + n
    return _Part(specs=specs, rows=rows, templates=parts[0].templates, n_items=sum(p.n_items for p in parts),
                 counts=np.sum([p.counts for p in parts], axis=0), shares=np.any([p.shares for p in parts], axis=0),
                 dropped=dropped, totals=np.sum([p.totals for p in parts], axis=0))


class _StreamPrepared(Prepared):
    """The prepared selection of a streamed table: per-item counts only, no per-label arrays."""

    __slots__ = ("_n_lab",)

    @property
    def n_labels(self) -> int:
        return int(getattr(self, "_n_lab"))


def _results(part: _Part, g: int, opts: _core.Options) -> list[AgreementResult]:
    """StreamGroup ``g``'s results from the joined statistics (the same engine as in memory)."""
    tmpl = part.templates[g]
    n_lab, n_abst, n_with, items_abst, n_prep, _, n_items = (int(x) for x in part.counts[g])
    info = AbstentionInfo(policy=tmpl.policy, n_labels=n_lab, n_abstentions=n_abst,
                          label_coverage=(1.0 - n_abst / n_lab) if n_lab else float("nan"),
                          item_coverage=(1.0 - items_abst / n_with) if n_with else float("nan"))
    fields = {f.name: getattr(tmpl, f.name) for f in dataclasses.fields(Prepared)}

    def prepared(specs: list[Any]) -> Prepared:
        fields.update(n_items=int(specs[0].r.shape[0]), abstention=info, r=specs[0].r, label_values=None)
        prep = _StreamPrepared(**fields)
        object.__setattr__(prep, "_n_lab", n_prep)
        for s in specs:
            s.prep = prep
        return prep

    rows = part.rows[g]
    if rows is None:
        specs = part.specs[g]
    else:  # the distinct rows with their counts; written out per item when they do not resample as types
        specs = _from_rows(rows, part.specs[g])
        w = rows.counts()
        for s in specs:
            s.w = w
        if not _core.rows_resample_by_types(specs, prepared(specs), opts):
            specs = _from_rows(rows, part.specs[g], np.concatenate(rows.codes))
    prep = prepared(specs)
    for s in specs:
        s.prep = prep
        if isinstance(s, _core._AlphaOrdinal):
            s.rerank()  # mid-ranks from the pooled counts of every block
    return _core.run(specs, prep, opts, func="agreement")


# ----------------------------------------------------------------------------- the passes
def _setup(path: str | Path, *, names: Sequence[str], groups: Any, judges: Sequence[str], level: Any,
           weights: Any, scale: Any, item: str, rater: str, label: str, categories: Sequence[Any] | None,
           abstain: Sequence[Any], duplicates: Any, missing: Any, abstain_policy: str,
           batch_rows: int) -> _Setup:
    """Pass 1 (the scan) and what it fixes for pass 2."""
    if not isinstance(batch_rows, (int, np.integer)) or isinstance(batch_rows, bool) or batch_rows < 1:
        raise InvalidParameterError(f"The 'batch_rows' parameter must be a positive int. Got {batch_rows!r}.")
    p = Path(path)
    src = str(path)
    if not p.exists():
        raise SchemaError("file not found. Check the path.", source=src)
    cols = [item, rater, label]
    first_row = 1 if p.suffix.lower() in (".parquet", ".pq") else 2
    scan = _scan(p, cols, int(batch_rows), first_row)
    # the categories every block shares: what the whole table would get from the same labels
    # (labels in order of first appearance, each checked at the file row where it first appears:
    # a label the scale refuses is reported where the whole-table reader would report it)
    lab = [x for x in scan.labels if x is not None and not (isinstance(x, str) and not x.strip())
           and not (isinstance(x, float) and x != x)]
    if not lab:
        raise SchemaError("every label is empty.", source=src, column=label)
    probe = AnnotationTable.from_frame(
        pd.DataFrame({"item": np.repeat(np.arange(len(lab)), 2), "rater": ["a", "b"] * len(lab),
                      "label": np.repeat(np.asarray(lab, dtype=object), 2)}),
        scale=scale, categories=categories, abstain=abstain, missing=missing, source=src,
        row_numbers=np.repeat([scan.labels[x] for x in lab], 2))
    sc = Scale(level=probe.scale.level, categories=probe.scale.categories, abstain=probe.scale.abstain)
    rater_names = tuple(scan.raters)
    if len(rater_names) < 2:
        raise SchemaError(f"only {len(rater_names)} rater ({list(rater_names)}); agreement needs at least two raters.",
                          source=src, column=rater)
    for j in judges:
        if j not in scan.raters:
            raise InvalidParameterError(f"Rater {j!r} is not in {src}. Raters: {list(rater_names)[:8]}.")
    if callable(groups):
        groups = groups(rater_names)
    return _Setup(path=src, n_rows=scan.n_rows, cols=(item, rater, label), first_row=first_row, batch_rows=int(batch_rows), scale=sc,
                  raters=rater_names, judges=tuple(judges), groups=tuple(groups), names=tuple(names), level=level,
                  weights=weights, policy=abstain_policy, duplicates=duplicates, missing=missing)


def _local(st: _Setup) -> _Part:
    """Pass 2 on this machine: block by block, joined in file order."""
    parts = [_block(tbl, pos, st) for tbl, pos, _ in
             _runs(_batches(Path(st.path), list(st.cols), st.batch_rows), st.cols[0])]
    if not parts:
        raise SchemaError("the table has no rows.", source=st.path)
    return _join(parts)


def stream_groups(path: str | Path, *, groups: Sequence[StreamGroup] | Callable[[tuple[str, ...]], Sequence[StreamGroup]] = (StreamGroup(),),
                  judges: Sequence[str] = (),
                  coefficients: Sequence[str] | None = None, level: str | None = None, weights: Any = None,
                  scale: str | Scale | None = None, item: str = "item", rater: str = "rater", label: str = "label",
                  categories: Sequence[Any] | None = None, abstain: Sequence[Any] = (),
                  duplicates: DuplicatePolicy = "error", missing: MissingPolicy = "error",
                  abstain_policy: str = "exclude", batch_rows: int = 1 << 21, confidence_level: float = 0.95,
                  n_resamples: int = 2000, rng: Any = None, on_undefined: str = "warn", method: str = "auto",
                  scheduler: Any = None) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    """Every group's results in one pass over the file (see :func:`agreement_stream`).

    ``groups`` may be a function of the raters the scan finds (in order of first appearance).

    Returns ``(results, info)``: per group the tuple of :class:`AgreementResult` (one per
    coefficient), and ``info`` with the table's ``summary`` (a :class:`~voirdire.data.TableSummary`),
    and per group ``n_judge_only_items``, ``shares`` (its judge shares an item with another rater)
    and ``warnings`` (their messages).
    """
    func = "agreement_stream"
    from ._coefficients import _check_common, _default_names

    opts = _check_common("agreement", confidence_level, n_resamples, on_undefined, abstain_policy, rng, method)
    names = [coefficients] if isinstance(coefficients, str) else (None if coefficients is None else list(coefficients))
    if names is not None:
        bad = [n for n in names if n not in STREAMABLE]
        if bad:
            raise InvalidParameterError(
                f"{bad[0]!r} does not stream (it needs each rater's own marginals); streaming computes "
                f"{list(STREAMABLE)}. Read the file whole (without --stream) for {bad[0]}.")
        if not names:
            raise InvalidParameterError(f"The 'coefficients' parameter of {func} must name at least one coefficient.")
    st = _setup(path, names=names or ["krippendorff_alpha"], groups=groups, judges=judges, level=level,
                weights=weights, scale=scale, item=item, rater=rater, label=label, categories=categories,
                abstain=abstain, duplicates=duplicates, missing=missing, abstain_policy=abstain_policy,
                batch_rows=batch_rows)
    if names is None:  # the in-memory default for this scale, less what does not stream
        k = len(st.raters) if st.groups[0].raters is None else len(st.groups[0].raters)
        names = [n for n in _default_names(st.scale, st.scale.n_categories, k) if n in STREAMABLE]
        st = dataclasses.replace(st, names=tuple(names))
    if scheduler is not None:
        from ._stream_dask import partitioned

        part = partitioned(st, scheduler)
    else:
        part = _local(st)
    # every group sees the same resamples (a copy of the generator each), as compare_raters does
    out, caught = [], []
    for g in range(len(st.groups)):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            out.append(tuple(_results(part, g, dataclasses.replace(opts, rng=copy.deepcopy(opts.rng)))))
        caught.append([str(w.message) for w in ws])
        for w in ws:  # passed on to the caller too
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    humans = tuple(r for r in st.raters if r not in set(st.judges))
    n_lab, n_abst = (int(x) for x in part.totals)
    summary = TableSummary(source=st.path, n_items=part.n_items, n_raters=len(st.raters), n_humans=len(humans),
                           n_judges=len(st.judges), n_labels=n_lab, n_abstentions=n_abst,
                           density=n_lab / max(1, part.n_items * len(st.raters)), scale=st.scale, humans=humans,
                           judges=st.judges, n_rows_read=st.n_rows, dropped=dict(part.dropped), n_clusters=None)
    info = {"summary": summary, "n_judge_only_items": [int(x) for x in part.counts[:, 5]],
            "shares": [bool(x) for x in part.shares], "warnings": caught, "coefficients": tuple(names)}
    return out, info


def agreement_stream(path: str | Path, *, coefficients: Sequence[str] | None = None, raters: Sequence[str] | None = None,
                     level: str | None = None, weights: Any = None, scale: str | Scale | None = None,
                     item: str = "item", rater: str = "rater", label: str = "label",
                     categories: Sequence[Any] | None = None, abstain: Sequence[Any] = (),
                     duplicates: DuplicatePolicy = "error", missing: MissingPolicy = "error",
                     abstain_policy: str = "exclude", batch_rows: int = 1 << 21, confidence_level: float = 0.95,
                     n_resamples: int = 2000, rng: Any = None, on_undefined: str = "warn", method: str = "auto",
                     scheduler: Any = None) -> AgreementTable:
    """:func:`~voirdire.agreement.agreement` of a Parquet/CSV file read in batches.

    Gives what ``agreement(read_annotations(path, ...), ...)`` gives for the coefficients that
    reduce to per-item statistics with pooled marginals (:data:`STREAMABLE`: observed agreement,
    Fleiss' kappa, Krippendorff's alpha on every level but ratio alpha on more than 2,000 values,
    Gwet's AC1/AC2, Bennett's S): the point estimates and analytic SEs to rounding, the bootstrap
    intervals from the same per-item statistics and the same draws. Only per-item statistics
    are held, so tables larger than memory work. Items must be grouped (each item's rows
    contiguous); otherwise the call is refused with a one-line error (the module notes say why
    it neither sorts nor spills).

    Parameters
    ----------
    path : path-like
        A ``.parquet`` or ``.csv``/``.tsv`` long table.
    coefficients : sequence of str, optional
        Names from :data:`STREAMABLE`; default: the in-memory default for the scale, less Cohen's
        kappa.
    raters : sequence of str, optional
        Restrict to these raters.
    level, weights, abstain_policy, confidence_level, n_resamples, rng, on_undefined, method
        As for :func:`voirdire.agreement.agreement`.
    scale, item, rater, label, categories, abstain, duplicates, missing
        As for :func:`voirdire.data.read_annotations`.
    batch_rows : int
        Rows per batch (memory is O(batch_rows) plus O(items) for the statistics).
    scheduler : str or dask.distributed.Client, optional
        Compute the per-item statistics of the Parquet file's row groups on a Dask cluster
        (``pip install 'voirdire[dask]'``); the result is the same as on one machine.

    Returns
    -------
    AgreementTable

    Raises
    ------
    SchemaError
        Items not grouped, a column type change between batches, or any error the in-memory
        reader reports (naming the file row).
    """
    grp = StreamGroup(raters=None if raters is None else tuple(str(r) for r in raters))
    res, _ = stream_groups(path, groups=(grp,), coefficients=coefficients, level=level, weights=weights, scale=scale,
                           item=item, rater=rater, label=label, categories=categories, abstain=abstain,
                           duplicates=duplicates, missing=missing, abstain_policy=abstain_policy,
                           batch_rows=batch_rows, confidence_level=confidence_level, n_resamples=n_resamples,
                           rng=rng, on_undefined=on_undefined, method=method, scheduler=scheduler)
    results = res[0]
    return AgreementTable(results=results, raters=results[0].raters if results else (), label="")


def krippendorff_alpha_stream(
    path: str | Path,
    *,
    level: str = "nominal",
    item: str = "item",
    rater: str = "rater",
    label: str = "label",
    categories: Sequence[Any] | None = None,
    abstain: Sequence[Any] = (),
    duplicates: DuplicatePolicy = "error",
    missing: MissingPolicy = "error",
    batch_rows: int = 1 << 21,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    rng: Any = None,
    on_undefined: str = "warn",
    scheduler: Any = None,
) -> AgreementResult:
    """Krippendorff's alpha of every rater in a Parquet/CSV file, read in batches.

    ``agreement_stream(path, coefficients=["krippendorff_alpha"], scale=level, level=level)``:
    what ``krippendorff_alpha(read_annotations(path, scale=level), level=level)`` gives, holding
    only per-item statistics.

    Parameters
    ----------
    path : path-like
        A ``.parquet`` or ``.csv``/``.tsv`` long table.
    level : {"nominal", "ordinal", "interval"}
        The alpha metric (and the scale the labels are read on).
    item, rater, label, categories, abstain, duplicates, missing, batch_rows, scheduler
        As for :func:`agreement_stream`.
    confidence_level, n_resamples, rng, on_undefined
        As for :func:`voirdire.agreement.krippendorff_alpha`.

    Returns
    -------
    AgreementResult
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise InvalidParameterError(
            f"The 'level' parameter of krippendorff_alpha_stream must be 'nominal', 'ordinal' or 'interval'. "
            f"Got {level!r}.")
    tab = agreement_stream(path, coefficients=["krippendorff_alpha"], level=level, scale=level, item=item, rater=rater,
                           label=label, categories=categories, abstain=abstain, duplicates=duplicates,
                           missing=missing, batch_rows=batch_rows, confidence_level=confidence_level,
                           n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, scheduler=scheduler)
    return dataclasses.replace(tab.results[0], coefficient="krippendorff_alpha")
