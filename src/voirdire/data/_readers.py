"""Readers: CSV, TSV, JSONL, Parquet long tables and the nested ``{rater: {item: label}}`` JSON."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._optional import optional_import
from .._safe import shown
from ..exceptions import SchemaError
from . import _formats
from ._scale import Scale
from ._source import (
    DECOMPRESSION_ERRORS, check_text, compression_of, decode_text, loads_json, open_binary, read_bytes, scan_text,
    undecodable_row,
)
from ._table import AnnotationTable, DuplicatePolicy, MissingPolicy, RowNumbers
from ._limits import check_parquet
from ._virtual import pipe_copy, virtual_frame

__all__ = ["read_annotations", "read_long_frame"]

logger = logging.getLogger(__name__)

_LONG = {".csv": ",", ".tsv": "\t", ".tab": "\t"}


def read_long_frame(path: str | os.PathLike[str], *, kind: str | None = None,
                    sep: str | None = None) -> tuple[pd.DataFrame, np.ndarray, str]:
    """Read a long table file into a frame of strings plus the file row number of every row.

    Row numbers are 1-based line numbers in the file (the CSV header is line 1, so the first
    data row is row 2; a JSONL file's first line is row 1; Parquet rows count from 1).
    ``kind`` (``"delimited"`` with ``sep``, or ``"jsonl"``) overrides the extension. A FIFO or
    character device (``<(...)``) is copied once, within the limits of :mod:`voirdire.data._limits`.
    """
    virtual = virtual_frame(path)
    if virtual is not None:  # a study handed to a command (data/_virtual.py)
        return virtual
    copy = pipe_copy(path)
    if copy is not None:  # a pipe already copied once (data/_virtual.py)
        df, rows, _ = _read_long_frame(copy, str(path), kind=kind, sep=sep)
        return df, rows, str(path)
    if is_pipe(path):
        fmt = "jsonl" if kind == "jsonl" else ("tsv" if sep == "\t" else "csv") if kind == "delimited" else "auto"
        with _formats.stdin_file(fmt, pipe=str(path)) as tmp:
            df, rows, _ = _read_long_frame(tmp, str(path), kind=kind, sep=sep)
        return df, rows, str(path)
    return _read_long_frame(Path(path), str(path), kind=kind, sep=sep)


def _read_long_frame(p: Path, src: str, *, kind: str | None, sep: str | None) -> tuple[pd.DataFrame, np.ndarray, str]:
    if not p.exists():
        raise SchemaError("file not found. Check the path.", source=src)
    if p.is_file() and p.stat().st_size == 0:
        raise SchemaError("the file is empty. Expected a header row and one row per label.", source=src)
    ext = p.suffix.lower()
    if ext in (".gz", ".bz2", ".xz", ".zst") and len(p.suffixes) > 1:
        ext = p.suffixes[-2].lower()
    if kind == "jsonl":
        ext = ".jsonl"
    if ext in _LONG or kind == "delimited":
        sep = sep or _LONG.get(ext, ",")
        what = {",": "CSV", "\t": "TSV"}.get(sep, f"{sep!r}-separated text")
        scan_text(p, src, what=what)  # NUL bytes (pandas would cut names at them), truncated or foreign archives
        try:
            df = pd.read_csv(p, sep=sep, dtype=str, keep_default_na=False, skipinitialspace=True)
        except pd.errors.EmptyDataError:
            raise SchemaError("the file is empty. Expected a header row and one row per label.", source=src) from None
        except UnicodeDecodeError:
            raise (undecodable_row(p, src) or SchemaError("is not UTF-8 text.", source=src)) from None
        except pd.errors.ParserError as exc:
            raise SchemaError(f"cannot be parsed as {what}: {shown(str(exc).strip(), 120, quote=False)}. If the delimiter "
                              f"is another one, say so with --format-in csv|tsv.", source=src) from None
        except DECOMPRESSION_ERRORS as exc:
            raise SchemaError(f"cannot be read: {exc}.", source=src) from None
        if not isinstance(df.index, pd.RangeIndex):
            # pandas silently turns the first field(s) into the index when the first data row has more
            # fields than the header (a trailing delimiter, an unnamed column): every column would shift.
            raise SchemaError(
                f"the row has {df.index.nlevels + len(df.columns)} fields but the header names "
                f"{len(df.columns)} columns {list(df.columns)}. Remove the extra field(s) (a trailing "
                f"delimiter?) or name every column in the header.", source=src, row=2)
        _check_frame_shape(p, sep, df, src)
        return df, np.arange(2, len(df) + 2), src
    if ext in (".jsonl", ".ndjson"):
        records: list[dict[str, Any]] = []
        rows: list[int] = []
        with open_binary(p) as fh:
            try:
                lines = _capped_lines(fh, src, compressed=compression_of(p) is not None)
            except DECOMPRESSION_ERRORS as exc:
                raise SchemaError(f"cannot be read as a compressed file: {exc or 'it ends early'}.", source=src) from None
            for n, raw in enumerate(lines, start=1):
                check_text(raw, src, first_row=n, what="JSON Lines")
                line = decode_text(raw, src, first_row=n)
                if not line.strip():
                    continue
                rec = loads_json(line, src, row=n)
                if not isinstance(rec, dict):
                    raise SchemaError("each line must be a JSON object like {\"item\": ..., \"rater\": ..., \"label\": ...}.",
                                      source=src, row=n)
                records.append(rec)
                rows.append(n)
        if not records:
            raise SchemaError("the file holds no records.", source=src)
        return pd.DataFrame.from_records(records), np.asarray(rows), src
    if ext in (".parquet", ".pq"):
        from .._optional import require

        require("pyarrow", "Reading Parquet")
        check_parquet(p, src)  # the footer's sizes, before any row group is decompressed
        try:
            df = pd.read_parquet(p)
        except Exception as exc:  # pyarrow raises several unrelated types
            raise SchemaError(f"cannot be read as Parquet: {exc}", source=src) from None
        return df, np.arange(1, len(df) + 1), src
    raise SchemaError(
        f"unknown file type '{ext}'. Use .csv, .tsv, .jsonl, .parquet, or .json (nested or records).", source=src)


def _capped_lines(fh: Any, src: str, *, compressed: bool) -> list[bytes]:
    """The lines of ``fh``; a compressed file inflating past ``VOIRDIRE_MAX_INFLATED_BYTES`` is refused."""
    if not compressed:
        return list(fh)
    from ._limits import fmt_bytes, limit, over_limit

    cap, total, lines = limit("VOIRDIRE_MAX_INFLATED_BYTES"), 0, []
    for ln in fh:
        total += len(ln)
        if total > cap:
            raise over_limit("VOIRDIRE_MAX_INFLATED_BYTES", f"the file inflates to more than {fmt_bytes(cap)}", src)
        lines.append(ln)
    return lines


def _read_csv_arrow(p: Path, sep: str, columns: Sequence[str]) -> Any:
    """The ``columns`` of a delimited file read by Arrow's multithreaded parser, each a
    dictionary-encoded string column (one dictionary per block of the file: no string per row is
    kept), or None when the file needs pandas' reader.

    The values equal ``pd.read_csv(dtype=str, keep_default_na=False, skipinitialspace=True)``'s.
    Files where the two readers could differ (a field starting with a space or tab, quoted line
    breaks, header names pandas would rename) and every file Arrow cannot parse go to pandas,
    which also words the errors.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    parse = pcsv.ParseOptions(delimiter=sep)
    try:
        names = pcsv.open_csv(p, parse_options=parse).schema.names
        if not names or len({n.strip() for n in names}) != len(names) or any(not n or n != n.strip() for n in names):
            return None
        if not set(columns) <= set(names):
            return None
        cols = list(dict.fromkeys(columns))
        dict_str = pa.dictionary(pa.int32(), pa.string())
        tab = pcsv.read_csv(p, parse_options=parse,
                            convert_options=pcsv.ConvertOptions(column_types={n: dict_str for n in cols},
                                                                include_columns=cols))
    except (pa.ArrowException, OSError, ValueError):
        return None
    for col in tab.columns:
        if any(_odd_strings(c.dictionary) for c in col.chunks):
            return None
    return tab


def _odd_strings(d: Any) -> bool:
    """Whether a dictionary of strings holds a value pandas would read differently."""
    import pyarrow.compute as pc

    return len(d) > 0 and bool(pc.any(pc.match_substring_regex(d, r"^[ \t]|[\r\n]")).as_py())


def _fast_long_table(p: Path, format: str, item: str, rater: str, label: str,
                     extra: Sequence[str] = (), src: str | None = None) -> tuple[Any, Any] | None:
    """A long CSV/TSV/Parquet table read straight into Arrow (no Python string per row), or None
    when the general reader must decide (another format, a wide table, other column names, or
    anything Arrow and pandas could read differently).

    Only the columns the table needs (``item``, ``rater``, ``label`` and ``extra``) are read, and
    string columns stay dictionary-encoded: the memory is that of the codes, not of the strings.
    The row numbers come back as a :class:`RowNumbers` (no array of them).
    """
    if not p.is_file() or p.stat().st_size == 0 or optional_import("pyarrow") is None:
        return None
    ext = p.suffix.lower()
    if ext in (".gz", ".bz2", ".xz", ".zst") and len(p.suffixes) > 1:
        ext = p.suffixes[-2].lower()
    tab: Any = None
    wanted = list(dict.fromkeys([item, rater, label, *extra]))
    if ext in _LONG and format in ("auto", "long", "csv", "tsv"):
        sep = {"csv": ",", "tsv": "\t"}.get(format, _LONG[ext])
        if sep != _LONG[ext] and format == "auto":
            return None
        scan_text(p, str(p) if src is None else src,  # NUL bytes, damaged archives: as the general reader
                  what={",": "CSV", "\t": "TSV"}[sep])
        tab = _read_csv_arrow(p, sep, wanted)
        first = 2
    elif ext in (".parquet", ".pq") and format in ("auto", "parquet"):
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq

            schema = pq.read_schema(p)
            if not set(wanted) <= set(schema.names) or _formats.is_argilla_flat(schema.names):
                return None  # the general reader names the missing column or converts the export
            strings = [c for c in wanted if pa.types.is_string(schema.field(c).type)
                       or pa.types.is_large_string(schema.field(c).type)]
            check_parquet(p, str(p) if src is None else src, wanted)  # before any row group is decompressed
            tab = _read_parquet_row_groups(p, wanted, strings)
        except SchemaError:
            raise
        except Exception:  # pyarrow raises several unrelated types; the general reader words the error
            return None
        first = 1
    if tab is None or not {item, rater, label} <= set(tab.column_names) or tab.num_rows == 0:
        return None
    return tab, RowNumbers(first, tab.num_rows)


def _read_parquet_row_groups(p: Path, columns: Sequence[str], dictionary: Sequence[str]) -> Any:
    """The ``columns`` of the Parquet file ``p`` as one Arrow table (``dictionary``: the string
    columns to read dictionary-encoded), its row groups read in parallel, one run of them per core.

    Arrow's own threads read the columns in parallel, but each column's row groups one after the
    other: the one string column holding the item ids is most of the work, and would keep one
    core busy. Each thread opens the file itself (with the footer already parsed) and reads a run
    of consecutive row groups; the runs come back in file order, each row group a chunk of the
    table (string columns with their own row group's dictionary).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .._stats.parallel import n_threads

    meta = pq.read_metadata(p)
    n = meta.num_row_groups
    workers = min(n_threads(), n)
    if workers < 2:
        return pq.ParquetFile(p, metadata=meta, read_dictionary=list(dictionary)).read(columns=list(columns))
    from concurrent.futures import ThreadPoolExecutor

    def read(groups: range) -> Any:
        f = pq.ParquetFile(p, metadata=meta, read_dictionary=list(dictionary))
        return f.read_row_groups(list(groups), columns=list(columns), use_threads=False)

    cuts = [n * k // workers for k in range(workers + 1)]
    with ThreadPoolExecutor(workers) as ex:  # Arrow releases the GIL while it decodes
        parts = list(ex.map(read, (range(a, b) for a, b in zip(cuts[:-1], cuts[1:]))))
    return pa.concat_tables(parts)


def _nested_to_frame(obj: Any, src: str, role: str) -> pd.DataFrame:
    if not isinstance(obj, dict) or not all(isinstance(v, dict) for v in obj.values()):
        raise SchemaError("expected the nested layout {rater: {item: label}} or a list of records.", source=src)
    recs = []
    for r, d in obj.items():
        for i, lab in d.items():
            recs.append((i, r, lab, role, f"rater {r!r}, item {i!r}"))
    return pd.DataFrame.from_records(recs, columns=["item", "rater", "label", "role", "_where"])


def _load_json(p: Path) -> Any:
    if p.stat().st_size == 0:
        raise SchemaError("the file is empty.", source=str(p))
    data = read_bytes(p)
    check_text(data, str(p), what="JSON")
    return loads_json(decode_text(data, str(p)), str(p))


def _check_frame_shape(p: Path, sep: str, df: pd.DataFrame, src: str) -> None:
    """A column named twice, or a row with fewer fields than the header: errors, never silent guesses."""
    header = pd.read_csv(p, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False,
                         skipinitialspace=True).iloc[0].tolist()
    names = [str(h).strip() for h in header]
    seen: dict[str, int] = {}
    for k, name in enumerate(names):
        if name in seen:
            raise SchemaError(f"column {shown(name)} appears twice in the header (columns {seen[name] + 1} and {k + 1}): "
                              "one of them would be ignored. Rename or remove one.", source=src, row=1)
        seen[name] = k
    # pandas fills the fields missing from a short row with '' (as if they were empty): a short row
    # always ends in an empty last column, so only such rows are re-read with the csv module
    cand = np.flatnonzero((df[df.columns[-1]] == "").to_numpy()) if len(df.columns) > 1 else np.array([], int)
    if cand.size == 0:
        return
    import csv
    import io

    wanted, last = set(cand.tolist()), int(cand[-1])
    with open_binary(p) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep, skipinitialspace=True)
        next(reader, None)
        k = 0
        for fields in reader:
            if not fields:  # pandas skips blank lines
                continue
            if k in wanted and len(fields) < len(df.columns):
                raise SchemaError(
                    f"the row has {len(fields)} field(s) but the header names {len(df.columns)} columns "
                    f"{[str(c) for c in df.columns]}. Complete the row (an empty label still needs its delimiter) "
                    "or remove it.", source=src, row=k + 2)
            if k >= last:
                return
            k += 1


def read_annotations(
    path: str | os.PathLike[str],
    *,
    item: str = "item",
    rater: str = "rater",
    label: str = "label",
    judges: Sequence[str] = (),
    role: str | None = None,
    scale: Scale | str | None = None,
    categories: Sequence[Any] | None = None,
    abstain: Sequence[Any] = (),
    cluster: str | None = None,
    cluster_sep: str | None = None,
    judge_path: str | os.PathLike[str] | None = None,
    duplicates: DuplicatePolicy = "error",
    missing: MissingPolicy = "error",
    format: str = "auto",
    wide: bool | None = None,
    where: Sequence[str] | dict[str, Any] | None = None,
    control: str | None = None,
    question: str | None = None,
) -> AnnotationTable:
    """Read annotations from a file into an :class:`AnnotationTable`.

    Besides long tables, the tools' own exports are read and recognised from their content: a wide
    table (one column per rater), Label Studio JSON and JSON-MIN, Argilla v2 records, Inspect AI
    logs, promptfoo results, lm-evaluation-harness samples, Excel, crowd-kit's ``task``/``worker``
    columns, any delimiter, and standard input (``"-"``). See ``voirdire.data.FORMATS``.

    Long tables (``.csv``, ``.tsv``, ``.jsonl``, ``.parquet``, or ``.json`` holding a list of
    records) have one row per (item, rater, label). The nested JSON layout
    ``{rater: {item: label}}`` (the AltTest data sets) is read too: pass the human file as
    ``path`` and the LLM file as ``judge_path`` (its raters become judges), or pass a directory
    holding ``human_annotations.json`` and ``llm_annotations.json``.

    Parameters
    ----------
    path : path-like
        The file (or AltTest-style directory).
    item, rater, label : str
        Column names of a long table.
    judges : sequence of str
        Raters that are LLM judges (every other rater is human).
    role : str, optional
        Column with ``human``/``judge`` per row, instead of ``judges``.
    scale : Scale or {"nominal", "ordinal", "interval", "ratio"}, optional
        Level of measurement, default nominal.
    categories : sequence, optional
        Substantive categories in order; labels outside them are an error.
    abstain : sequence
        Label values that mean "cannot assess".
    cluster : str, optional
        Column grouping items into clusters (resampled together by every interval).
    cluster_sep : str, optional
        Derive the cluster from the item id: the part before the first ``cluster_sep``
        (``"__"`` for the AltTest ``<text>__<aspect>`` ids).
    judge_path : path-like, optional
        Nested JSON file of judge labels read together with a nested human file.
    duplicates : {"error", "first", "last"}
        Policy for a rater labelling an item twice with different labels.
    missing : {"error", "drop"}
        Policy for empty labels (dropped rows are counted in ``table.summary().dropped``).
    format : str
        What the file holds (a key of ``voirdire.data.FORMATS``); ``"auto"`` guesses from the
        extension and the content, and every error then says what the file was taken for.
    wide : bool, optional
        Read a wide table (one row per item, one column per rater; ``judges`` names the judge
        columns). ``None`` detects it: no rater/label columns and every other column looks like
        a rater's labels.
    where : sequence of "COLUMN=VALUE", optional
        Keep only rows where COLUMN equals VALUE (repeat a column to allow several values); the
        rows left out are counted in ``summary().dropped``.
    control : str, optional
        The Label Studio control (``from_name``) to read when a project has several.
    question : str, optional
        The Argilla question to read when the records answer several.

    Returns
    -------
    AnnotationTable

    Raises
    ------
    SchemaError
        With the file, row and column, and what to do.

    Examples
    --------
    >>> from voirdire.datasets import hanna_path
    >>> t = read_annotations(hanna_path(), label="score", role="role", scale="interval", abstain=[-1])
    >>> t.n_items, len(t.humans), len(t.judges)
    (6336, 3, 5)
    """
    opts: dict[str, Any] = dict(item=item, rater=rater, label=label, judges=judges, role=role, scale=scale,
                                categories=categories, abstain=abstain, cluster=cluster, cluster_sep=cluster_sep,
                                judge_path=judge_path, duplicates=duplicates, missing=missing, format=format,
                                wide=wide, where=where, control=control, question=question)
    virtual = virtual_frame(path)
    if virtual is not None:  # a study handed to a command (data/_virtual.py): a long table, read as such
        frame, rows, src = virtual
        return _finish(frame, rows, src, item, rater, label, judges, role, cluster, cluster_sep,
                       dict(scale=scale, categories=categories, abstain=abstain, duplicates=duplicates,
                            missing=missing))
    if str(path) == "-":
        with _formats.stdin_file(format) as tmp:
            return _read(tmp, "<stdin>", **opts)
    copy = pipe_copy(path)
    if copy is not None:  # a pipe already copied once (data/_virtual.py)
        return _read(copy, str(path), **opts)
    if is_pipe(path):  # a FIFO or <(...) can be read once: every reader below reads twice
        with _formats.stdin_file(format, pipe=str(path)) as tmp:
            return _read(tmp, str(path), **opts)
    return _read(Path(path), str(path), **opts)


def is_pipe(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a named pipe or character device (``<(...)``, ``/dev/stdin``): readable once, size 0."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _read(p: Path, src: str, *, item: str, rater: str, label: str, judges: Sequence[str], role: str | None,
          scale: Any, categories: Any, abstain: Sequence[Any], cluster: str | None, cluster_sep: str | None,
          judge_path: Any, duplicates: Any, missing: Any, format: str, wide: bool | None, where: Any,
          control: str | None, question: str | None) -> AnnotationTable:
    if not p.exists():
        raise SchemaError("file not found. Check the path.", source=src)
    common: dict[str, Any] = dict(scale=scale, categories=categories, abstain=abstain,
                                  duplicates=duplicates, missing=missing)
    if not where and wide is not True:
        fast = _fast_long_table(p, format, item, rater, label, [c for c in (role, cluster) if c], src=src)
        if fast is not None:  # a plain long table: what the general reader gives, without Python strings
            table = _finish(fast[0], fast[1], src, item, rater, label, judges, role, cluster, cluster_sep, common)
            del fast
            pa = optional_import("pyarrow")  # present: the fast lane read the file with it
            if pa is not None:
                pa.default_memory_pool().release_unused()  # the Arrow columns' pages
            return table
    prep = _formats.prepare(p, src, format=format, item=item, rater=rater, label=label, role=role, judges=judges,
                            control=control, question=question, where=where, wide=wide, abstain=abstain,
                            keep=[cluster] if cluster else [])
    if prep is not None:
        try:
            table = _finish(prep.frame, prep.rows, src, prep.item, prep.rater, prep.label, judges, prep.role,
                            cluster, cluster_sep, common)
        except SchemaError as exc:
            if not prep.guessed:
                raise
            raise SchemaError(f"{exc}{prep.hint()}") from None
        if prep.skipped:
            table = dataclasses.replace(table, dropped={**prep.skipped, **table.dropped})
        if prep.taken_for:
            logger.info("%s: read as %s", src, prep.taken_for)
        return table
    if where:
        raise SchemaError("--where applies to tables and tool exports, not to the nested AltTest layout.", source=src)
    nested: pd.DataFrame | None = None
    if p.is_dir():
        hp, lp = p / "human_annotations.json", p / "llm_annotations.json"
        if not hp.exists():
            raise SchemaError("a directory must hold human_annotations.json (and optionally llm_annotations.json).",
                              source=src)
        frames = [_nested_to_frame(_load_json(hp), str(hp), "human")]
        if lp.exists():
            frames.append(_nested_to_frame(_load_json(lp), str(lp), "judge"))
        nested = pd.concat(frames, ignore_index=True)
    else:
        obj = _load_json(p)
        frames = [_nested_to_frame(obj, src, "human")]
        if judge_path is not None:
            jp = Path(judge_path)
            if not jp.exists():
                raise SchemaError("file not found. Check the path.", source=str(judge_path))
            frames.append(_nested_to_frame(_load_json(jp), str(judge_path), "judge"))
        nested = pd.concat(frames, ignore_index=True)
    if nested is not None:
        if nested.empty:
            raise SchemaError("the file holds no labels.", source=src)
        judge_names = list(dict.fromkeys([*judges, *nested.loc[nested["role"] == "judge", "rater"].astype(str)]))
        rows = nested.pop("_where").to_numpy(dtype=object)
        both = set(nested.loc[nested["role"] == "human", "rater"].astype(str)) & set(
            nested.loc[nested["role"] == "judge", "rater"].astype(str))
        if both:
            raise SchemaError(f"rater(s) {sorted(both)} appear in both the human and the judge file.", source=src)
        return _finish(nested, rows, src, "item", "rater", "label", judge_names, None, None, cluster_sep, common)
    raise SchemaError("expected the nested layout {rater: {item: label}}.", source=src)  # pragma: no cover


def _finish(df: Any, rows: np.ndarray, src: str, item: str, rater: str, label: str,
            judges: Sequence[str], role: str | None, cluster: str | None, cluster_sep: str | None,
            common: dict[str, Any]) -> AnnotationTable:
    if not isinstance(df, pd.DataFrame):  # an Arrow table from the fast lane
        import pyarrow as pa

        if cluster is None and cluster_sep is not None and item in df.column_names:
            part = df.column(item).to_pandas().astype(str).str.split(cluster_sep, n=1).str[0]
            df = df.append_column("_cluster", pa.array(part.to_numpy(dtype=object), type=pa.string()))
            cluster = "_cluster"
    elif cluster is None and cluster_sep is not None and item in df.columns:
        df = df.copy()
        df["_cluster"] = df[item].astype(str).str.split(cluster_sep, n=1).str[0]
        cluster = "_cluster"
    return AnnotationTable.from_frame(df, item=item, rater=rater, label=label, judges=judges, role=role,
                                      cluster=cluster, source=src, row_numbers=rows, **common)
