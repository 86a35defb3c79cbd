"""Spreadsheet-shaped input: delimiter sniffing, Excel, crowd-kit column names, wide tables, --where."""

from __future__ import annotations

import bz2
import csv
import gzip
import lzma
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from .._limits import check_zip, limit, over_limit
from ._common import require_extra, shown

__all__ = ["sniff_sep", "read_excel", "crowdkit_names", "looks_wide", "wide_to_long", "apply_where",
           "parse_where"]

_DEFAULT_SEP = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
_CANDIDATES = ",;\t|"


def sniff_sep(p: Path, ext: str) -> str:
    """The delimiter of a delimited text file: sniffed from its first lines, else from the extension."""
    default = _DEFAULT_SEP.get(ext, ",")
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(p.suffix.lower(), open)
    try:
        with opener(p, "rt", encoding="utf-8", errors="replace", newline="") as fh:  # type: ignore[operator]
            head = fh.read(64 * 1024)
    except (OSError, EOFError, lzma.LZMAError):
        return default
    lines = [ln for ln in head.splitlines() if ln.strip()][:50]
    if not lines:
        return default
    header = lines[0]
    if header.count(default) >= 1 and ext in _DEFAULT_SEP:
        return default
    try:
        sep = csv.Sniffer().sniff("\n".join(lines), delimiters=_CANDIDATES).delimiter
    except csv.Error:
        counts = {c: header.count(c) for c in _CANDIDATES}
        best = max(counts, key=counts.__getitem__)
        return best if counts[best] else default
    return sep if header.count(sep) else default


def read_excel(p: Path, src: str, *, sheet: str | int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """The sheet ``sheet`` of an ``.xlsx`` workbook as strings, within the limits on untrusted input.

    Before openpyxl reads a cell: the ZIP directory is checked (members, inflated size, ratio:
    :func:`voirdire.data._limits.check_zip`), openpyxl must parse through defusedxml (a DTD or
    an entity, the vehicle of XXE and "billion laughs", is refused), and the sheet's span (rows
    x columns that openpyxl and pandas would fill in, empty cells included) must stay within
    ``VOIRDIRE_MAX_CELLS``: one cell at ``XFD1048576`` would make 17 billion.
    """
    openpyxl = require_extra("openpyxl", "excel", "Reading an Excel file")
    require_extra("defusedxml", "excel", "Reading an Excel file safely")
    if not getattr(openpyxl, "DEFUSEDXML", False):
        raise SchemaError("openpyxl is not parsing through defusedxml (OPENPYXL_DEFUSEDXML is set to something other "
                          "than True), so the workbook's XML could expand entities; unset it to read the file.",
                          source=src)
    check_zip(p, src)
    with open(p, "rb") as raw:  # ours to close, whatever openpyxl does when a part fails to parse
        try:
            wb = openpyxl.load_workbook(raw, read_only=True, data_only=True, keep_links=False)
        except Exception as exc:  # openpyxl/zipfile/defusedxml raise several unrelated types
            raise _excel_error(exc, src) from None
        try:
            ws = wb.worksheets[sheet] if isinstance(sheet, int) else wb[sheet]
            part = getattr(ws, "_worksheet_path", None)
            if part is not None:
                with wb._archive.open(part) as fh:
                    _check_span(fh, src)
            df = pd.read_excel(wb, sheet_name=sheet, dtype=str, engine="openpyxl", keep_default_na=False)
        except SchemaError:
            raise
        except Exception as exc:  # openpyxl/zipfile/defusedxml raise several unrelated types
            raise _excel_error(exc, src) from None
        finally:
            wb.close()
    return df, np.arange(2, len(df) + 2)


def _excel_error(exc: Exception, src: str) -> SchemaError:
    from defusedxml import DefusedXmlException

    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, DefusedXmlException):  # openpyxl wraps it in a ValueError
        cause = cause.__cause__ or cause.__context__
    if cause is not None:
        return SchemaError(f"the workbook's XML declares an entity or a DTD ({type(cause).__name__}), which no spreadsheet "
                           "program writes (the vehicle of XXE and 'billion laughs' attacks): refused.", source=src)
    return SchemaError(f"cannot be read as an Excel workbook: {str(exc)[:80]}", source=src)


def _column_number(ref: str) -> int:
    """``'C7'`` -> 3, ``'XFD1'`` -> 16384 (0 when the reference has no letters)."""
    n = 0
    for ch in ref:
        if not ch.isalpha():
            break
        n = n * 26 + (ord(ch.upper()) - 64)
    return n


class _Span:
    """expat handlers counting a sheet's span (see :func:`_check_span`); no tree is built."""

    def __init__(self, cap: int, src: str) -> None:
        self.cap, self.src = cap, src
        self.work = self.row = self.col = self.last_value_row = self.widest = 0
        self.valued = False

    def end_row(self) -> None:
        self.work += self.col + 1  # openpyxl pads a row to its last cell
        if self.valued:
            self.last_value_row = self.row
        self.check()

    def check(self) -> None:
        used, filled = self.work + self.col + self.row, self.last_value_row * self.widest
        if used > self.cap or filled > self.cap:
            raise over_limit("VOIRDIRE_MAX_CELLS", f"the sheet spans more than {self.cap:,} cells (row {self.row:,}, "
                             f"column {max(self.col, self.widest):,})", self.src, needed=max(used, filled))

    def start(self, name: str, attrs: dict[str, str]) -> None:
        tag = name.rpartition(":")[2]
        if tag == "c":
            ref = attrs.get("r")
            self.col = (_column_number(ref) or self.col + 1) if ref else self.col + 1
            if self.col > 16_384:  # Excel's last column; cells without references can run on
                self.check()
        elif tag in ("v", "is", "f"):  # the cell holds a value, an inline string or a formula
            self.valued = True
            self.widest = max(self.widest, self.col)
        elif tag == "row":
            if self.row or self.col:
                self.end_row()
            r = attrs.get("r")
            self.row = int(r) if r and r.isdigit() else self.row + 1
            self.col, self.valued = 0, False

    @staticmethod
    def refuse(*args: Any) -> NoReturn:
        from defusedxml import DTDForbidden

        raise DTDForbidden(None, None, None)


def _check_span(fh: Any, src: str) -> None:
    """Count what openpyxl (read-only) and pandas would build from a sheet's XML, streaming, and stop
    past ``VOIRDIRE_MAX_CELLS``: every row up to the last (empty ones too), each padded to its
    last cell, and the table padded to the widest row that holds a value.

    A bare expat parser with one handler (no tree: about a third of a pass of openpyxl); a DTD,
    hence any entity, is refused as defusedxml would.
    """
    from xml.parsers import expat

    span = _Span(limit("VOIRDIRE_MAX_CELLS"), src)
    parser = expat.ParserCreate()
    parser.StartElementHandler = span.start
    parser.StartDoctypeDeclHandler = span.refuse
    parser.EntityDeclHandler = span.refuse
    parser.ExternalEntityRefHandler = span.refuse
    parser.ParseFile(fh)
    if span.row or span.col:
        span.end_row()


def crowdkit_names(df: pd.DataFrame, item: str, rater: str) -> tuple[str, str]:
    """crowd-kit's ``task``/``worker`` columns stand for item/rater when the defaults are absent."""
    cols = set(map(str, df.columns))
    if item == "item" and "item" not in cols and "task" in cols:
        item = "task"
    if rater == "rater" and "rater" not in cols and "worker" in cols:
        rater = "worker"
    return item, rater


def _is_num(x: Any) -> bool:
    try:
        float(str(x))
        return True
    except ValueError:
        return False


def _looks_like_rater(s: pd.Series) -> bool:
    v = [x for x in s.tolist() if not (x is None or (isinstance(x, float) and np.isnan(x)) or str(x).strip() == "")]
    if not v:
        return True
    if all(_is_num(x) for x in v):
        return True
    uniq = {str(x).strip() for x in v}
    return len(uniq) <= 20 and max(len(u) for u in uniq) <= 40


def wide_item_column(df: pd.DataFrame, item: str) -> str | None:
    if item in df.columns:
        return item
    first = df.columns[0]
    return str(first) if df[first].is_unique else None


def looks_wide(df: pd.DataFrame, item: str, rater: str, label: str, extra: Sequence[str] = ()) -> bool:
    """True when the table has no rater/label columns and every column but the item looks like a rater."""
    cols = [str(c) for c in df.columns]
    if rater in cols or label in cols:
        return False
    it = wide_item_column(df, item)
    others = [c for c in cols if c != it and c not in extra]
    return it is not None and len(others) >= 2 and all(_looks_like_rater(df[c]) for c in others)


def wide_to_long(df: pd.DataFrame, rows: np.ndarray, src: str, *, item: str, abstain: Sequence[Any] = (),
                 keep: Sequence[str] = ()) -> tuple[pd.DataFrame, np.ndarray]:
    """Melt a wide table (one row per item, one column per rater) to item/rater/label rows.

    Empty cells are labels nobody gave (sparse designs), not errors. A rater column whose filled
    cells are mostly numbers but hold some text (not declared an abstention) is an error naming
    the row and column.
    """
    it = wide_item_column(df, item)
    if it is None:
        raise SchemaError(f"a wide table needs an item column: no column '{item}', and the first column "
                          f"{shown(str(df.columns[0]), 40)} repeats values. Name it with --item.", source=src)
    raters = [str(c) for c in df.columns if str(c) != it and str(c) not in keep]
    if len(raters) < 2:
        raise SchemaError(f"a wide table needs at least two rater columns besides {shown(it, 40)}; found {shown(raters, 120)}.",
                          source=src)
    abst = {str(a).strip() for a in abstain}
    for c in raters:
        vals = df[c].astype(str).str.strip()
        filled = vals[(vals != "") & (vals.str.lower() != "nan") & df[c].notna()]
        if filled.empty:
            continue
        num = filled.map(_is_num)
        text = ~num & ~filled.isin(abst)
        if num.mean() >= 0.5 and text.any():
            k = int(np.flatnonzero(text.to_numpy())[0])
            pos = filled.index[k]
            raise SchemaError(
                f"rater column {shown(c, 40)} mixes numbers and text: {shown(filled.iloc[k], 40)}. Declare it "
                f"an abstention with --abstain, or fix the cell.", source=src, row=int(rows[int(pos)]), column=c)
    long = df.melt(id_vars=[it, *keep], value_vars=raters, var_name="rater", value_name="label", ignore_index=False)
    pos = long.index.to_numpy()
    lab = long["label"]
    empty = lab.isna().to_numpy() | (lab.astype(str).str.strip() == "").to_numpy()
    long = long.loc[~empty].reset_index(drop=True).rename(columns={it: "item"})
    where = np.array([f"row {rows[i]}, column {shown(r, 40)}" for i, r in zip(pos[~empty], long["rater"])],
                     dtype=object)
    return long, where


def parse_where(where: Sequence[str] | dict[str, Any] | None) -> dict[str, list[str]]:
    """``["criterion=Empathy", ...]`` -> ``{"criterion": ["Empathy"]}`` (repeats of a column are OR-ed)."""
    if not where:
        return {}
    if isinstance(where, dict):
        return {str(k): [str(v) for v in (vs if isinstance(vs, (list, tuple, set)) else [vs])]
                for k, vs in where.items()}
    out: dict[str, list[str]] = {}
    for w in where:
        if "=" not in w:
            raise SchemaError(f"--where {shown(w)} is not COLUMN=VALUE.")
        k, v = w.split("=", 1)
        out.setdefault(k.strip(), []).append(v.strip())
    return out


def apply_where(df: pd.DataFrame, rows: np.ndarray, where: dict[str, list[str]], src: str
                ) -> tuple[pd.DataFrame, np.ndarray, int]:
    """Keep the rows whose COLUMN equals one of the VALUEs (compared as text); returns the rows left out."""
    if not where:
        return df, rows, 0
    keep = np.ones(len(df), dtype=bool)
    for col, vals in where.items():
        if col not in df.columns:
            raise SchemaError(f"--where names column {shown(col, 40)}, which is not in the file; columns: "
                              f"{shown([str(c) for c in df.columns], 120)}.", source=src)
        s = df[col].astype(str).str.strip()
        hit = s.isin(vals).to_numpy()
        if not hit.any():
            seen = list(dict.fromkeys(s.tolist()))[:8]
            raise SchemaError(f"--where {shown(col + '=' + '|'.join(vals), 60, quote=False)} matches no row; {shown(col, 40)} holds {shown(seen, 120)}.",
                              source=src, column=col)
        keep &= hit
    return df.loc[keep].reset_index(drop=True), rows[keep], int((~keep).sum())
