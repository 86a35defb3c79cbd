"""Format readers and writers: one module per tool, one dispatch used by ``read_annotations``.

``prepare`` turns any supported input into a long frame (item, rater, label[, role]) plus where
each row came from, what was skipped, and what the input was taken for. A guessed format is
named in every error, with the option that says otherwise (``--format-in``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._format_names import INPUT_FORMATS
from ...exceptions import InvalidParameterError, SchemaError
from .._limits import check_zip, copy_pipe, is_zip
from .._source import compression_of
from ._common import MissingExtraError, ToolFrame, load_json, require_extra, shaped, shown
from .argilla import argilla_flat_frame, argilla_frame, argilla_records, is_argilla, is_argilla_flat
from .inspect_log import inspect_frame, is_inspect_json
from .label_studio import (
    is_label_studio, is_label_studio_min, label_studio_frame, label_studio_min_frame, label_studio_tasks,
)
from .lm_eval import is_lm_eval, lm_eval_frame
from .promptfoo import is_promptfoo, promptfoo_frame
from .tabular import (
    apply_where, crowdkit_names, looks_wide, parse_where, read_excel, sniff_sep, wide_to_long,
)

__all__ = ["FORMATS", "Prepared", "prepare", "stdin_file", "MissingExtraError", "require_extra",
           "label_studio_tasks", "argilla_records"]

#: ``--format-in`` values and what each reads: the one registry of input format names.
FORMATS: dict[str, str] = INPUT_FORMATS

_SEP_NAME = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_TEXT_EXT = {".csv", ".tsv", ".tab", ".txt", ""}
_WHAT = {"csv": "CSV", "tsv": "TSV", "long": "CSV", "wide": "CSV", "jsonl": "JSON Lines", "lm-eval": "JSON Lines"}
_STDIN_SUFFIX = {"csv": ".csv", "tsv": ".tsv", "long": ".csv", "wide": ".csv", "jsonl": ".jsonl",
                 "lm-eval": ".jsonl", "parquet": ".parquet", "excel": ".xlsx", "inspect": ".eval"}


@dataclasses.dataclass(slots=True, kw_only=True)
class Prepared:
    frame: pd.DataFrame
    rows: np.ndarray
    item: str
    rater: str
    label: str
    role: str | None
    skipped: dict[str, int]
    taken_for: str | None = None
    guessed: bool = False

    def hint(self) -> str:
        if self.taken_for is None or not self.guessed:
            return ""
        return f" (read as {self.taken_for}; if it is not, say what it is with --format-in)"


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise InvalidParameterError(
            f"The 'format' parameter of read_annotations (--format-in) must be one of {list(FORMATS)}. "
            f"Got {shown(fmt)} instead.")
    return fmt


def _ext(p: Path) -> str:
    ext = p.suffix.lower()
    if ext in (".gz", ".bz2", ".xz", ".zst") and len(p.suffixes) > 1:
        ext = p.suffixes[-2].lower()
    return ext


def detect_json(obj: Any) -> str:
    if is_label_studio(obj):
        return "label-studio"
    if is_label_studio_min(obj):
        return "label-studio-min"
    if is_argilla(obj):
        return "argilla"
    if is_promptfoo(obj):
        return "promptfoo"
    if is_inspect_json(obj):
        return "inspect"
    if isinstance(obj, list):
        return "json"
    return "alttest"


@contextlib.contextmanager
def stdin_file(fmt: str, pipe: str | None = None) -> Iterator[Path]:
    """Standard input (or the named pipe ``pipe``: a FIFO, ``<(...)``, ``/dev/stdin``, which can be
    read only once) copied to a temporary file whose suffix tells the reader what it holds.

    The copy is bounded (``VOIRDIRE_MAX_PIPE_BYTES``, ``VOIRDIRE_PIPE_TIMEOUT``: see
    :mod:`voirdire.data._limits`): ``/dev/urandom`` or a FIFO nobody writes to is an error, not a hang."""
    src = "<stdin>" if pipe is None else pipe
    text = False if fmt in ("parquet", "excel", "inspect") else (True if fmt != "auto" else None)
    if pipe is not None and compression_of(pipe):
        text = False
    with tempfile.TemporaryDirectory(prefix="voirdire-stdin-") as tmp:
        raw = Path(tmp) / "input"
        with open(raw, "wb") as fh:
            head = copy_pipe(pipe, fh, src, text=text, what=_WHAT.get(fmt))
        if not head.strip():
            raise SchemaError("standard input is empty." if pipe is None else "the file is empty.", source=src)
        name = raw.with_name("input" + _stdin_suffix(fmt, pipe, head, src))
        os.replace(raw, name)
        yield name


def _stdin_suffix(fmt: str, pipe: str | None, head: bytes, src: str) -> str:
    """The suffix that tells the readers what standard input holds, from ``--format-in``, the pipe's name or its first bytes."""
    suffix = _STDIN_SUFFIX.get(fmt)
    if suffix is None and pipe is not None and Path(pipe).suffix:
        suffix = "".join(Path(pipe).suffixes[-2:]) if compression_of(pipe) else Path(pipe).suffix
    if suffix is not None:
        return suffix
    if fmt != "auto":
        return ".json"
    first = head.lstrip()[:1]
    if head[:4] == b"PAR1":
        return ".parquet"
    if head[:2] == b"PK":
        raise SchemaError(f"{'standard input' if pipe is None else 'the pipe'} holds a zip archive (an "
                          "Excel workbook or an Inspect log?); say which with --format-in excel|inspect.", source=src)
    if first in (b"[", b"{"):
        lines = [ln for ln in head.splitlines() if ln.strip()]
        jsonl = first == b"{" and len(lines) > 1 and all(ln.lstrip()[:1] == b"{" for ln in lines[:20])
        return ".jsonl" if jsonl and lines[0].rstrip().endswith(b"}") else ".json"
    return ".csv"


def _tool(tf: ToolFrame, guessed: bool) -> Prepared:
    return Prepared(frame=tf.frame, rows=tf.rows, item="item", rater="rater", label="label", role="role",
                    skipped=dict(tf.skipped), taken_for=tf.taken_for, guessed=guessed)


def prepare(p: Path, src: str, *, format: str = "auto", item: str = "item", rater: str = "rater",
            label: str = "label", role: str | None = None, judges: Sequence[str] = (),
            control: str | None = None, question: str | None = None,
            where: Sequence[str] | dict[str, Any] | None = None, wide: bool | None = None,
            abstain: Sequence[Any] = (), keep: Sequence[str] = ()) -> Prepared | None:
    """Read ``p`` into a long frame; ``None`` when it is the nested AltTest layout (read elsewhere)."""
    from .._readers import read_long_frame

    fmt = check_format(format)
    conds = parse_where(where)
    if p.is_dir():
        if fmt not in ("auto", "alttest"):
            raise SchemaError(f"is a directory, not a {fmt} file.", source=src)
        return None
    ext = _ext(p)
    guessed = fmt == "auto"
    if fmt == "wide":
        wide = True
    if fmt == "auto":
        if ext == ".eval":
            fmt = "inspect"
        elif ext in (".xlsx", ".xlsm"):
            fmt = "excel"
        elif ext == ".json":
            fmt = "json?"
        elif ext in (".jsonl", ".ndjson"):
            fmt = "jsonl"
        elif ext in (".parquet", ".pq"):
            fmt = "parquet"
        elif ext in _TEXT_EXT:
            fmt = "long"
        else:
            raise SchemaError(f"unknown file type {shown(ext, 20)}. Say what it holds with --format-in "
                              f"({', '.join(k for k in FORMATS if k != 'auto')}).", source=src)
    if fmt == "inspect":
        if p.stat().st_size == 0:
            raise SchemaError("the file is empty.", source=src)
        if is_zip(p):  # an .eval log: its directory is checked before inspect_ai inflates anything
            check_zip(p, src)
        with shaped("an Inspect AI eval log", src):
            tf = inspect_frame(p, src, judges=judges)
        return _where(_tool(tf, guessed), conds, src)
    obj: Any = None
    taken_for: str | None = None
    if fmt in ("json?", "json", "label-studio", "label-studio-min", "argilla", "promptfoo", "alttest"):
        if p.stat().st_size == 0:
            raise SchemaError("the file is empty.", source=src)
        obj = load_json(p, src)
        if fmt == "json?":
            fmt = detect_json(obj)
        else:
            guessed = False
        if fmt == "alttest":
            return None
    if fmt == "label-studio":
        _need_list(obj, src, "a Label Studio JSON export (a list of tasks)")
        with shaped("a Label Studio JSON export", src):
            tf = label_studio_frame(obj, src, control=control, item=item)
        return _where(_tool(tf, guessed), conds, src)
    if fmt == "label-studio-min":
        _need_list(obj, src, "a Label Studio JSON-MIN export (a list of records)")
        with shaped("a Label Studio JSON-MIN export", src):
            tf = label_studio_min_frame(obj, src, control=control, item=item)
        return _where(_tool(tf, guessed), conds, src)
    if fmt == "argilla":
        _need_list(obj, src, "an Argilla records export (a list of records)")
        if not is_argilla(obj) and is_argilla_flat(obj[0]):
            with shaped("an Argilla flattened records export", src):
                tf = argilla_flat_frame(obj, src, question=question, item=item)
            return _where(_tool(tf, guessed), conds, src)
        with shaped("an Argilla records export", src):
            tf = argilla_frame(obj, src, question=question, item=item)
        return _where(_tool(tf, guessed), conds, src)
    if fmt == "promptfoo":
        if not is_promptfoo(obj):
            raise SchemaError("is not a promptfoo results file: expected {\"results\": {\"results\": [...]}}.",
                              source=src)
        value = "score" if label == "score" else "pass"
        with shaped("a promptfoo results file", src):
            tf = promptfoo_frame(obj, src, value=value)
        return _where(_tool(tf, guessed), conds, src)
    if fmt == "json":
        _need_list(obj, src, "a list of records")
        df = pd.DataFrame.from_records(obj)
        rows: np.ndarray = np.arange(1, len(df) + 1)
    elif fmt == "excel":
        df, rows = read_excel(p, src)
    elif fmt == "parquet":
        require_extra("pyarrow", "parquet", "Reading Parquet")
        df, rows, _ = read_long_frame(p)
    elif fmt in ("jsonl", "lm-eval"):
        df, rows, _ = read_long_frame(p, kind="jsonl")
        if fmt == "lm-eval" or (len(df) and is_lm_eval(df.iloc[0].to_dict())):
            recs: list[dict[str, Any]] = [{str(k): v for k, v in r.items()} for r in df.to_dict(orient="records")]
            model = p.parent.name if p.name.startswith("samples_") and p.parent.name not in ("", ".") else "model"
            with shaped("lm-evaluation-harness samples", src):
                tf = lm_eval_frame(recs, list(rows), src, model=model)
            return _where(_tool(tf, format != "lm-eval"), conds, src)
    else:  # long, wide, csv, tsv
        sep = {"csv": ",", "tsv": "\t"}.get(fmt) or sniff_sep(p, ext)
        df, rows, _ = read_long_frame(p, kind="delimited", sep=sep)
        if sep != {".tsv": "\t", ".tab": "\t"}.get(ext, ","):
            taken_for = f"a {_SEP_NAME.get(sep, repr(sep))}-separated table"
    if fmt in ("json", "jsonl", "parquet", "excel") and is_argilla_flat(df.columns):
        recs = [{str(k): v for k, v in r.items()} for r in df.to_dict(orient="records")]
        with shaped("an Argilla flattened records export", src):
            tf = argilla_flat_frame(recs, src, question=question, item=item)
        return _where(_tool(tf, guessed), conds, src)
    # --where CRITERION=... on a wide file whose columns are RATER:CRITERION: applied to the long labels
    conds, after_melt = _wide_name_where(df, conds, item=item, wide=wide, forced_long=fmt == "long" and not guessed)
    df, rows, n_out = apply_where(df, rows, conds, src)
    skipped = {"not matching --where": n_out} if n_out else {}
    item, rater = crowdkit_names(df, item, rater)
    extra = [c for c in (role, *keep, *conds) if c]  # --where columns describe items, not raters
    forced_long = fmt == "long" and not guessed
    if wide or (wide is None and not forced_long and looks_wide(df, item, rater, label, extra=extra)):
        long, where_rows = wide_to_long(df, rows, src, item=item, abstain=abstain,
                                        keep=[c for c in extra if c in df.columns])
        if after_melt:
            from .._groups import _split_wide_names

            long = _split_wide_names(long, "rater", list(after_melt), src)
            long, where_rows, n_late = apply_where(long, where_rows, after_melt, src)
            if n_late:
                skipped["not matching --where"] = skipped.get("not matching --where", 0) + n_late
        what = "a wide table (one row per item, one column per rater)"
        return Prepared(frame=long, rows=where_rows, item="item", rater="rater", label="label", role=None,
                        skipped=skipped, taken_for=what if taken_for is None else f"{taken_for}, {what}",
                        guessed=wide is None)
    if after_melt:  # not a wide file after all: the column is missing, as --where says
        apply_where(df, rows, after_melt, src)
    absent = [c for c in (item, rater, label) if c not in df.columns]
    if absent:
        cols = [str(c) for c in df.columns]
        raise SchemaError(
            f"missing column(s) {shown(absent, 120)}; found {shown(cols, 160)}. Name the columns with "
            f"--item/--rater/--label, or read a table with one column per rater with --wide (--judge names the "
            f"judge columns).", source=src, column=absent[0])
    return Prepared(frame=df, rows=rows, item=item, rater=rater, label=label, role=role, skipped=skipped,
                    taken_for=taken_for, guessed=taken_for is not None)


def _wide_name_where(df: pd.DataFrame, conds: dict[str, list[str]], *, item: str, wide: bool | None,
                     forced_long: bool) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Split the ``--where`` conditions into those on the file's columns and the one (at most) on the
    CRITERION of wide ``RATER:CRITERION`` columns (data/_groups.WIDE_SEP), which applies after melting."""
    from .._groups import WIDE_SEP

    absent = [c for c in conds if c not in df.columns]
    if len(absent) != 1 or wide is False or forced_long or not any(
            WIDE_SEP in str(c) for c in df.columns if str(c) != item):
        return conds, {}
    return {k: v for k, v in conds.items() if k != absent[0]}, {absent[0]: conds[absent[0]]}


def _need_list(obj: Any, src: str, what: str) -> None:
    if isinstance(obj, list) and obj:
        bad = next((k for k, x in enumerate(obj) if not isinstance(x, dict)), None)
        if bad is not None:
            raise SchemaError(f"expected {what}; record {bad + 1} is {shown(obj[bad], 40)}, not an object.", source=src)
    if not isinstance(obj, list) or not obj:
        raise SchemaError(f"expected {what}; found {shown(obj)}.", source=src)


def _where(prep: Prepared, conds: dict[str, list[str]], src: str) -> Prepared:
    if conds:
        prep.frame, prep.rows, n_out = apply_where(prep.frame, prep.rows, conds, src)
        if n_out:
            prep.skipped["not matching --where"] = n_out
    return prep
