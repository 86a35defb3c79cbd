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

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._optional import require
from ..data import AnnotationTable, DuplicatePolicy, MissingPolicy, Scale, id_str
from ..exceptions import InvalidParameterError, SchemaError
from . import _core
from ._prepare import Prepared, prepare
from ._results import AbstentionInfo, AgreementResult

__all__ = ["krippendorff_alpha_stream"]


def _batches(path: Path, cols: list[str], batch_rows: int) -> Iterator[Any]:
    """Record batches of the three columns, strings for CSV (as the in-memory reader reads them)."""
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
            raise SchemaError(f"missing column(s) {absent}; found {names}.", source=str(path), column=absent[0])
        yield from pf.iter_batches(batch_size=batch_rows, columns=cols)
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


def _hash(values: Any) -> np.ndarray:
    return pd.util.hash_array(np.asarray(values, dtype=object))


def _scan(path: Path, cols: list[str], batch_rows: int, first_row: int) -> _Scan:
    """Pass 1: distinct labels and raters, the row count, and the grouped-items check."""
    item, rater, label = cols
    labels: dict[Any, int] = {}
    raters: dict[str, int] = {}
    seen = np.zeros(0, dtype=np.uint64)  # hashes of items already finished
    last: Any = None
    n = 0
    types: Any = None
    for b in _batches(path, cols, batch_rows):
        if types is None:
            types = b.schema
        elif not b.schema.equals(types):
            raise SchemaError(f"the column types change at row {n + first_row}: {types} then {b.schema}. "
                              f"Write the file with one type per column.", source=str(path))
        if b.num_rows == 0:
            continue
        codes, uniq = pd.factorize(b.column(label).to_pandas(), use_na_sentinel=False)
        _, first = np.unique(codes, return_index=True)
        for v, k in zip(uniq.tolist(), first.tolist()):
            labels.setdefault(v, n + k + first_row)  # the file row where each label first appears
        for r in b.column(rater).unique().to_pylist():
            raters.setdefault(id_str(r), len(raters))  # the name the table constructor gives it
        it = b.column(item).to_pandas().to_numpy(dtype=object)
        starts = np.concatenate([[True], it[1:] != it[:-1]])
        run_vals = it[starts]
        run_pos = np.flatnonzero(starts)
        if last is not None and run_vals[0] == last:  # the previous batch's last item goes on
            run_vals, run_pos = run_vals[1:], run_pos[1:]
        if run_vals.size:
            h = _hash(run_vals)
            dup_in = pd.Index(h).duplicated()
            again = np.isin(h, seen) | dup_in
            if last is not None:
                again |= h == _hash([last])[0]
            if again.any():
                k = int(np.flatnonzero(again)[0])
                raise SchemaError(
                    f"items are not grouped: item {run_vals[k]!r} appears again at row "
                    f"{n + int(run_pos[k]) + first_row} after rows of other items. Streaming reads each item's rows "
                    f"as one run: sort the file by item first, or read it whole (without --stream).",
                    source=str(path), column=item)
            if last is not None:
                h = np.append(h, _hash([last]))
            seen = np.union1d(seen, h[:-1]) if h.size > 1 else seen
        last = it[-1]
        n += b.num_rows
    if n == 0:
        raise SchemaError("the table has no rows. Check that the file holds data below its header.", source=str(path))
    return _Scan(labels=labels, raters=raters, n_rows=n)


def _blocks(path: Path, cols: list[str], batch_rows: int) -> Iterator[tuple[Any, int]]:
    """Pass 2: tables of complete items (the last item of a batch waits for the next), with the
    position of each block's first row."""
    pa = require("pyarrow", "Streaming a table")
    item = cols[0]
    carry = None
    pos = 0  # rows before the carry
    for b in _batches(path, cols, batch_rows):
        if b.num_rows == 0:
            continue
        t = pa.Table.from_batches([b])
        if carry is not None:
            t = pa.concat_tables([carry, t])
        it = t.column(item).to_pandas().to_numpy(dtype=object)
        cut = int(np.flatnonzero(np.concatenate([[True], it[1:] != it[:-1]]))[-1])  # start of the last item
        if cut > 0:
            yield t.slice(0, cut), pos
            pos += cut
        carry = t.slice(cut)
    if carry is not None and carry.num_rows:
        yield carry, pos


def _merge(specs: list[Any], prep: Prepared) -> Any:
    """One spec over all items from the specs of consecutive blocks (per-item arrays joined,
    pooled arrays added, constants shared)."""
    first = specs[0]
    out = object.__new__(type(first))
    out.__dict__.update(first.__dict__)
    out.prep = prep
    per_item = ["r", "pair", "pf", "d"] + (["m", "s1", "s2", "a"] if isinstance(first, _core._AlphaMoments) else [])
    for name in per_item:
        setattr(out, name, np.concatenate([getattr(s, name) for s in specs]))
    if isinstance(first, _core._AlphaMatrix):
        Ns = [s.N for s in specs]
        out.N = sp.vstack([sp.csr_matrix(N) for N in Ns], format="csr") if any(sp.issparse(N) for N in Ns) else \
            np.vstack(Ns)
        out.c_pair = np.sum([s.c_pair for s in specs], axis=0)
    return out


class _StreamPrepared(Prepared):
    """The prepared selection of a streamed table: per-item counts only, no per-label arrays."""

    __slots__ = ("_n_lab",)

    @property
    def n_labels(self) -> int:
        return int(getattr(self, "_n_lab"))


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
) -> AgreementResult:
    """Krippendorff's alpha of every rater in a Parquet/CSV file, read in batches.

    Gives what ``krippendorff_alpha(read_annotations(path, ...), level=level)`` gives (the point
    estimate and the analytic SE to rounding, the bootstrap interval from the same per-item
    statistics and the same draws) while holding only per-item statistics, so tables larger
    than memory work. Items must be grouped (each item's rows contiguous); otherwise the call
    is refused with a one-line error (see the module notes).

    Parameters
    ----------
    path : path-like
        A ``.parquet`` or ``.csv``/``.tsv`` long table.
    level : {"nominal", "interval"}
        The alpha metric (and the scale the labels are read on).
    item, rater, label : str
        Column names.
    categories, abstain, duplicates, missing
        As for :func:`voirdire.data.read_annotations`.
    batch_rows : int
        Rows per batch (memory is O(batch_rows) plus O(items) for the statistics).
    confidence_level, n_resamples, rng, on_undefined
        As for :func:`voirdire.agreement.krippendorff_alpha`.

    Returns
    -------
    AgreementResult

    Raises
    ------
    SchemaError
        Items not grouped, a column type change between batches, or any error the in-memory
        reader reports (naming the file row).
    """
    func = "krippendorff_alpha_stream"
    if level not in ("nominal", "interval"):
        raise InvalidParameterError(f"The 'level' parameter of {func} must be 'nominal' or 'interval'. Got {level!r}.")
    if not isinstance(batch_rows, int) or batch_rows < 1:
        raise InvalidParameterError(f"The 'batch_rows' parameter of {func} must be a positive int. Got {batch_rows!r}.")
    from ._coefficients import _check_common

    opts = _check_common("krippendorff_alpha", confidence_level, n_resamples, on_undefined, "exclude", rng, "auto")
    p = Path(path)
    src = str(path)
    if not p.exists():
        raise SchemaError("file not found. Check the path.", source=src)
    cols = [item, rater, label]
    first_row = 1 if p.suffix.lower() in (".parquet", ".pq") else 2
    scan = _scan(p, cols, batch_rows, first_row)
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
        scale=level, categories=categories, abstain=abstain, missing=missing, source=src,
        row_numbers=np.repeat([scan.labels[x] for x in lab], 2))
    scale = Scale(level=probe.scale.level, categories=probe.scale.categories, abstain=probe.scale.abstain)
    rater_names = tuple(scan.raters)
    if len(rater_names) < 2:
        raise SchemaError(f"only {len(rater_names)} rater ({list(rater_names)}); agreement needs at least two raters.",
                          source=src, column=rater)
    specs: list[Any] = []
    n_items = n_lab = n_abst = 0
    items_with_abst = n_with = 0
    dropped: dict[str, int] = {}
    for blk, pos in _blocks(p, cols, batch_rows):
        t = AnnotationTable.from_frame(blk, item=item, rater=rater, label=label, scale=scale, duplicates=duplicates,
                                       missing=missing, source=src, min_raters=1,
                                       row_numbers=np.arange(pos + first_row, pos + first_row + blk.num_rows))
        ridx = np.array([scan.raters[r] for r in t.raters], dtype=np.int32)
        t = dataclasses.replace(t, raters=np.asarray(rater_names, dtype=object),
                                roles=np.full(len(rater_names), "human", dtype=object), rater_idx=ridx[t.rater_idx])
        bp = prepare(t, raters=None, policy="exclude", func=func)
        specs.append(_core._AlphaMoments(bp, "krippendorff_alpha") if level == "interval"
                     else _core._AlphaMatrix(bp, "nominal", "krippendorff_alpha"))
        n_items += t.n_items
        n_lab += bp.abstention.n_labels
        n_abst += bp.abstention.n_abstentions
        n_with += int(np.count_nonzero(np.diff(t.indptr)))
        items_with_abst += int(np.count_nonzero(np.bincount(t.label_item[t.is_abstention], minlength=t.n_items)))
        for k, v in t.dropped.items():
            dropped[k] = dropped.get(k, 0) + v
        # the prepared labels of the block are not kept: only the spec's per-item arrays are
        specs[-1].prep = None
    r = np.concatenate([s.r for s in specs])
    info = AbstentionInfo(policy="exclude", n_labels=n_lab, n_abstentions=n_abst,
                          label_coverage=(1.0 - n_abst / n_lab) if n_lab else float("nan"),
                          item_coverage=(1.0 - items_with_abst / n_with) if n_with else float("nan"))
    empty = np.zeros(0, dtype=np.int64)
    L = scale.n_categories
    cat_values = np.asarray([float(c) for c in scale.categories or ()], dtype=float) if scale.is_numeric else \
        np.arange(L, dtype=float)
    prep = _StreamPrepared(
        item=empty, rater=empty, code=empty, q=L, n_sub=L, policy="exclude", abst_code=None, numeric=scale.is_numeric,
        cat_values=cat_values, categories=tuple(scale.categories or ()), scale_level=scale.level, n_items=n_items,
        clusters=None, raters=rater_names, rater_ids=np.arange(len(rater_names)), abstention=info, r=r)
    object.__setattr__(prep, "_n_lab", n_lab - n_abst)
    spec = _merge(specs, prep)
    del specs
    return _core.run([spec], prep, opts, func="krippendorff_alpha")[0]
