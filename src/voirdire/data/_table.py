"""The annotation table: one model for every (item, rater, label) data set."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from .. import _options
from .._results import Result
from .._safe import shown
from ..exceptions import InvalidParameterError, SchemaError
from ._columns import (
    _SAFE_OBJECT_KINDS, Coded, appearance_order, blank_uniques, canon, code_column, display, first_row, id_str,
    id_strings, inexact_integers, is_arrow, is_arrow_strings, label_canon,
)
from ._scale import LEVELS, Scale
from ._source import is_missing_marker

__all__ = ["AnnotationTable", "TableSummary", "HUMAN", "JUDGE"]

HUMAN = "human"
JUDGE = "judge"
DuplicatePolicy = Literal["error", "first", "last"]
MissingPolicy = Literal["error", "drop"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TableSummary(Result):
    """What a table holds, and every row that was dropped while reading it, with the reason."""

    source: str
    n_items: int
    n_raters: int
    n_humans: int
    n_judges: int
    n_labels: int
    n_abstentions: int
    density: float
    scale: Scale
    humans: tuple[str, ...]
    judges: tuple[str, ...]
    n_rows_read: int
    dropped: dict[str, int]
    n_clusters: int | None

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [{"source": self.source, "n_items": self.n_items, "n_humans": self.n_humans,
              "n_judges": self.n_judges, "n_labels": self.n_labels, "density": self.density,
              "level": self.scale.level, "n_rows_read": self.n_rows_read,
              "n_rows_dropped": sum(self.dropped.values())}]
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class AnnotationTable:
    """Sparse item-by-rater table of labels, with rater roles, a scale and optional clusters.

    Labels are stored item-major in CSR form: the labels of item ``i`` are
    ``rater_idx[indptr[i]:indptr[i+1]]`` and ``codes[...]``. ``codes`` index
    ``scale.categories``; a code ``>= n_categories`` is an abstention (``abstain[code - L]``).
    ``values`` holds the numeric value of each label (the category value for numeric scales,
    the code for non-numeric nominal labels, ``nan`` for abstentions).

    Build one with :func:`voirdire.data.read_annotations` or :meth:`AnnotationTable.from_frame`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2], "rater": ["a", "b", "a", "b"],
    ...                    "label": ["pass", "pass", "fail", "pass"]})
    >>> t = AnnotationTable.from_frame(df)
    >>> t.n_items, t.n_raters, t.scale.categories
    (2, 2, ('fail', 'pass'))
    """

    items: np.ndarray
    raters: np.ndarray
    roles: np.ndarray
    indptr: np.ndarray
    rater_idx: np.ndarray
    codes: np.ndarray
    values: np.ndarray
    scale: Scale
    clusters: np.ndarray | None = None
    source: str = "<frame>"
    n_rows_read: int = 0
    dropped: dict[str, int] = dataclasses.field(default_factory=dict)

    # ------------------------------------------------------------------ sizes
    @property
    def n_items(self) -> int:
        return int(self.items.shape[0])

    @property
    def n_raters(self) -> int:
        return int(self.raters.shape[0])

    @property
    def n_labels(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_categories(self) -> int:
        return self.scale.n_categories

    @property
    def humans(self) -> tuple[str, ...]:
        return tuple(str(r) for r, role in zip(self.raters, self.roles) if role == HUMAN)

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(str(r) for r, role in zip(self.raters, self.roles) if role == JUDGE)

    @property
    def human_idx(self) -> np.ndarray:
        return np.flatnonzero(self.roles == HUMAN)

    @property
    def judge_idx(self) -> np.ndarray:
        return np.flatnonzero(self.roles == JUDGE)

    @property
    def label_item(self) -> np.ndarray:
        """Item index of every stored label (length ``n_labels``)."""
        return np.repeat(np.arange(self.n_items), np.diff(self.indptr))

    @property
    def is_abstention(self) -> np.ndarray:
        return self.codes >= self.n_categories

    # ------------------------------------------------------------------ lookups
    def rater_index(self, name: str) -> int:
        """Position of rater ``name``; a clear error if it is not in the table."""
        hits = np.flatnonzero(self.raters == str(name))
        if hits.size == 0:
            raise InvalidParameterError(
                f"Rater {shown(name)} is not in {self.source}. Raters: {_short_list(self.raters)}."
            )
        return int(hits[0])

    def dense(self) -> np.ndarray:
        """``(n_items, n_raters)`` int array of codes, ``-1`` where a rater gave no label."""
        out = np.full((self.n_items, self.n_raters), -1, dtype=np.int32)
        out[self.label_item, self.rater_idx] = self.codes
        return out

    def dense_values(self) -> np.ndarray:
        """``(n_items, n_raters)`` float array of label values, ``nan`` where missing or abstained."""
        out = np.full((self.n_items, self.n_raters), np.nan)
        out[self.label_item, self.rater_idx] = self.values
        return out

    def summary(self) -> TableSummary:
        n_abst = int(np.count_nonzero(self.is_abstention))
        return TableSummary(
            source=self.source, n_items=self.n_items, n_raters=self.n_raters,
            n_humans=len(self.humans), n_judges=len(self.judges), n_labels=self.n_labels,
            n_abstentions=n_abst,
            density=self.n_labels / max(1, self.n_items * self.n_raters), scale=self.scale,
            humans=self.humans, judges=self.judges, n_rows_read=self.n_rows_read,
            dropped=dict(self.dropped),
            n_clusters=None if self.clusters is None else int(np.unique(self.clusters).size),
        )

    def fingerprint(self) -> str:
        """SHA-256 of the table's content (items, raters, roles, labels): identifies a source table."""
        h = hashlib.sha256()
        for arr in (self.items.astype(str), self.raters.astype(str), self.roles.astype(str)):
            h.update("\x1f".join(arr.tolist()).encode())
        for arr in (self.indptr, self.rater_idx, self.codes):
            h.update(np.ascontiguousarray(arr, dtype=np.int64).tobytes())
        return h.hexdigest()

    def label_of(self, code: int) -> Any:
        L = self.n_categories
        cats = self.scale.categories or ()
        return cats[code] if code < L else self.scale.abstain[code - L]

    def to_frame(self) -> pd.DataFrame:
        """The long table: one row per label with columns item, rater, role, label, value."""
        cats = list(self.scale.categories or ()) + list(self.scale.abstain)
        labels = np.asarray(cats, dtype=object)[self.codes] if cats else np.array([], dtype=object)
        df = pd.DataFrame({
            "item": self.items[self.label_item], "rater": self.raters[self.rater_idx],
            "role": self.roles[self.rater_idx], "label": labels, "value": self.values,
        })
        if self.clusters is not None:
            df.insert(1, "cluster", self.clusters[self.label_item])
        return df

    # ------------------------------------------------------------------ derived tables
    def select(self, *, items: np.ndarray | Sequence[int] | None = None,
               raters: Sequence[str] | np.ndarray | None = None,
               label_mask: np.ndarray | None = None) -> AnnotationTable:
        """A new table restricted to some items (indices or boolean mask), raters (names) and labels.

        Items and raters keep their order; items left with no label are kept (they may still
        matter to a design). The scale is unchanged.
        """
        keep = np.ones(self.n_labels, dtype=bool) if label_mask is None else np.asarray(label_mask, bool).copy()
        item_map = np.arange(self.n_items)
        new_items = self.items
        new_clusters = self.clusters
        if items is not None:
            sel = np.asarray(items)
            if sel.dtype == bool:
                sel = np.flatnonzero(sel)
            item_map = np.full(self.n_items, -1)
            item_map[sel] = np.arange(sel.size)
            new_items = self.items[sel]
            new_clusters = None if self.clusters is None else self.clusters[sel]
        rater_map = np.arange(self.n_raters)
        new_raters, new_roles = self.raters, self.roles
        if raters is not None:
            ridx = np.array([self.rater_index(r) for r in raters], dtype=int)
            rater_map = np.full(self.n_raters, -1)
            rater_map[ridx] = np.arange(ridx.size)
            new_raters, new_roles = self.raters[ridx], self.roles[ridx]
        li = item_map[self.label_item]
        lr = rater_map[self.rater_idx]
        keep &= (li >= 0) & (lr >= 0)
        li, lr = li[keep], lr[keep]
        order = np.lexsort((lr, li))
        counts = np.bincount(li, minlength=new_items.shape[0])
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return dataclasses.replace(
            self, items=new_items, raters=new_raters, roles=new_roles, indptr=indptr,
            rater_idx=lr[order].astype(np.int32), codes=self.codes[keep][order],
            values=self.values[keep][order], clusters=new_clusters,
        )

    def with_roles(self, *, judges: Sequence[str]) -> AnnotationTable:
        """A copy in which exactly ``judges`` are judges and every other rater is human."""
        for j in judges:
            self.rater_index(j)
        roles = np.where(np.isin(self.raters, [str(j) for j in judges]), JUDGE, HUMAN).astype(object)
        return dataclasses.replace(self, roles=roles)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_arrays(cls, item: Sequence[Any] | np.ndarray, rater: Sequence[Any] | np.ndarray,
                    label: Sequence[Any] | np.ndarray, **kwargs: Any) -> AnnotationTable:
        """Build a table from three aligned arrays (see :meth:`from_frame` for the options)."""
        cols = {"item": np.asarray(item, dtype=object), "rater": np.asarray(rater, dtype=object),
                "label": np.asarray(label, dtype=object)}
        sizes = {k: v.size for k, v in cols.items()}
        if len(set(sizes.values())) != 1 or any(v.ndim != 1 for v in cols.values()):
            raise InvalidParameterError(
                f"The 'item', 'rater' and 'label' parameters of AnnotationTable.from_arrays must be 1-d and "
                f"aligned (one entry per label). Got lengths {sizes}.")
        df = pd.DataFrame(cols)
        return cls.from_frame(df, **kwargs)

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame | Any,
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
        duplicates: DuplicatePolicy = "error",
        missing: MissingPolicy = "error",
        source: str = "<frame>",
        row_numbers: np.ndarray | RowNumbers | None = None,
        min_raters: int = 2,
    ) -> AnnotationTable:
        """Build a table from a long pandas frame (one row per item, rater and label).

        Parameters
        ----------
        df : pandas.DataFrame or pyarrow.Table
            The long table (an Arrow table's string columns are coded by Arrow, without Python
            strings per row).
        item, rater, label : str
            Column names (defaults ``"item"``, ``"rater"``, ``"label"``).
        judges : sequence of str
            Raters that are LLM judges; every other rater is human.
        role : str, optional
            A column holding ``human``/``judge`` per row (alternative to ``judges``).
        scale : Scale or {"nominal", "ordinal", "interval", "ratio"}, optional
            Level of measurement (default nominal). A :class:`Scale` may carry categories and
            abstention values.
        categories : sequence, optional
            The substantive categories in order. Labels outside them are an error.
        abstain : sequence
            Label values that mean "cannot assess".
        cluster : str, optional
            A column grouping items into clusters (all rows of one item must agree); every
            uncertainty computation then resamples clusters.
        duplicates : {"error", "first", "last"}
            What to do with one rater labelling one item twice with different labels.
            Identical repeats are always collapsed (and counted).
        missing : {"error", "drop"}
            What to do with an empty label.
        source : str
            Name of the input used in error messages.
        row_numbers : numpy.ndarray or RowNumbers, optional
            The row number, in the source file, of each frame row (for error messages).
        min_raters : int
            Fewest raters the table may have (2: agreement needs two; the streaming reader
            builds blocks of a larger table, which may hold one).

        Returns
        -------
        AnnotationTable

        Raises
        ------
        SchemaError
            Missing columns, empty labels, labels outside the categories, non-numeric labels on
            an interval/ratio scale, conflicting duplicates, fewer than two raters, unknown judges.
        """
        func = "AnnotationTable.from_frame"
        if duplicates not in _options.DUPLICATE_POLICIES:
            raise InvalidParameterError(f"The 'duplicates' parameter of {func} must be one of "
                                        f"{list(_options.DUPLICATE_POLICIES)}. Got {duplicates!r} instead.")
        if missing not in _options.MISSING_POLICIES:
            raise InvalidParameterError(f"The 'missing' parameter of {func} must be one of "
                                        f"{list(_options.MISSING_POLICIES)}. Got {missing!r} instead.")
        if isinstance(scale, str) or scale is None:
            level = scale or "nominal"
            if level not in LEVELS:
                raise InvalidParameterError(
                    f"The 'scale' parameter of {func} must be one of {list(LEVELS)} or a Scale. Got {scale!r} instead.")
            scale = Scale(level=level, categories=None if categories is None else tuple(categories),  # type: ignore[arg-type]
                          abstain=tuple(abstain))
        else:
            if categories is not None or abstain:
                scale = Scale(level=scale.level,
                              categories=tuple(categories) if categories is not None else scale.categories,
                              abstain=tuple(abstain) or scale.abstain)
        n_read = int(len(df))
        if n_read == 0:
            raise SchemaError("the table has no rows. Check that the file holds data below its header.", source=source)
        rows: Any = (RowNumbers(1, n_read) if row_numbers is None else
                     row_numbers if isinstance(row_numbers, RowNumbers) else np.asarray(row_numbers))
        needed = [c for c in (item, rater, label) + ((role,) if role else ()) + ((cluster,) if cluster else ())]
        arrow = type(df).__module__.startswith("pyarrow") and type(df).__name__ == "Table"
        found = list(df.column_names) if arrow else list(map(str, df.columns))
        absent = [c for c in needed if c not in (found if arrow else df.columns)]
        if absent:
            raise SchemaError(
                f"missing column(s) {absent}; found {found}. "
                f"Name the columns with --item/--rater/--label (item=, rater=, label=).",
                source=source, column=absent[0])
        dropped: dict[str, int] = {}

        def raw(col: str, pos: int) -> Any:
            """The value of ``col`` at frame position ``pos``, as the reader saw it (for messages)."""
            if arrow:
                return df.column(col).slice(pos, 1).to_pandas().to_numpy(dtype=object)[0]  # type: ignore[operator]
            return df[col].iloc[[pos]].to_numpy(dtype=object)[0]

        # Every column is coded once (codes into its distinct values); checks run on the distinct
        # values and find the first offending row with a vectorised mask.
        id_cols = {}
        for col in (item, rater):
            s = df[col]
            if arrow and _is_nested_arrow(s):
                s = s.to_pandas()
            kind = infer_dtype(s, skipna=True) if not is_arrow(s) and s.dtype == object else None
            if kind is not None and kind not in _SAFE_OBJECT_KINDS:
                nested = [k for k, x in enumerate(s.to_numpy(dtype=object))
                          if isinstance(x, (list, tuple, dict, set, np.ndarray))]
                if nested:
                    x = s.iloc[nested[0]]
                    x = x.tolist() if isinstance(x, np.ndarray) else x
                    raise SchemaError(f"{col} id {shown(x)} is a {type(x).__name__}, not a single value.",
                                      source=source, row=_row(rows[nested[0]]), column=col)
            coded = code_column(s, id_str, kind)
            blank_u = blank_uniques(coded)
            bad = (first_row(np.append(blank_u, True), coded.codes)
                   if blank_u.any() or bool((coded.codes < 0).any()) else None)  # code -1: a missing id
            if bad is not None:
                r = _row(rows[bad])  # nested JSON rows are 'rater .., item ..'
                raise SchemaError(f"empty {col} id. Every row needs an item and a rater.", source=source, row=r, column=col)
            id_cols[col] = coded
        lab_s = df[label]
        if arrow and _is_nested_arrow(lab_s):  # lists or structs: checked row by row, as in a frame
            lab_s = lab_s.to_pandas()
        lab_kind = infer_dtype(lab_s, skipna=True) if not is_arrow(lab_s) and lab_s.dtype == object else None
        per_row_labels = lab_kind is not None and lab_kind not in _SAFE_OBJECT_KINDS
        # 'NA' (R), 'nan' (pandas), 'null'... mark a missing label too, unless declared as an answer
        declared_text = {str(c).strip() for c in (*scale.abstain, *(scale.categories or ()))}

        def is_marker(x: Any) -> bool:
            return is_missing_marker(x) and x.strip() not in declared_text

        if per_row_labels:  # lists, dicts, booleans mixed with numbers: the exact per-row path
            v = lab_s.to_numpy(dtype=object)
            blank_label = pd.isna(lab_s).to_numpy() | np.array([isinstance(x, str) and not x.strip() for x in v], dtype=bool)
            marker = np.array([is_marker(x) for x in v], dtype=bool)
        else:
            lab_coded = code_column(lab_s, canon, lab_kind)
            blank_u = np.append(blank_uniques(lab_coded), True)  # the last slot: code -1, a missing value
            marker_u = np.array([is_marker(x) for x in lab_coded.uniques] + [False], dtype=bool)
            if blank_u[:-1].any() or marker_u.any() or bool((lab_coded.codes < 0).any()):
                blank_label = blank_u[lab_coded.codes]
                marker = marker_u[lab_coded.codes]
            else:  # no empty label: no per-row masks
                blank_label = marker = np.zeros(0, dtype=bool)
        blank_label |= marker
        n_blank = int(np.count_nonzero(blank_label))
        if n_blank:
            first = int(np.flatnonzero(blank_label)[0])
            if missing == "error" and marker[first]:
                raise SchemaError(
                    f"label {shown(raw(label, first))} is not a finite number or category: it marks a missing "
                    f"value (R writes NA, pandas nan). Leave the cell empty, drop such rows with --missing drop "
                    f"(Python: missing='drop'), or declare it with --abstain if it means 'cannot assess'.",
                    source=source, row=_row(rows[first]), column=label)
            if missing == "error":
                r = _row(rows[np.flatnonzero(blank_label)[0]])
                raise SchemaError(
                    f"empty label ({n_blank} empty label(s) in all). Fill it in, or drop such rows "
                    f"with --missing drop (Python: missing='drop'); they are counted in the summary.",
                    source=source, row=r, column=label)
            dropped["empty label"] = n_blank
            keep: np.ndarray | None = ~blank_label
        else:
            keep = None
        pos: Any = RowNumbers(0, n_read) if keep is None else np.flatnonzero(keep)  # frame position of each kept row
        rows = rows if keep is None else rows[keep]
        if per_row_labels:
            kept_v = v if keep is None else v[keep]
            nested = [k for k, x in enumerate(kept_v) if isinstance(x, (list, tuple, dict, set, np.ndarray))]
            if nested:
                k = nested[0]
                x = kept_v[k]
                x = x.tolist() if isinstance(x, np.ndarray) else x  # Arrow's lists come as arrays
                raise SchemaError(f"label {shown(x)} is a {type(x).__name__}, not a single value. "
                                  "Give one label per item and rater.", source=source, row=_row(rows[k]), column=label)
            lab_coded = code_column(lab_s, _canon_not_na)
        lab = lab_coded.take(keep)
        lc = lab.codes
        is_num_u, num_u, txt_u = label_canon(lab)

        def canon_u(k: int) -> Any:
            return float(num_u[k]) if is_num_u[k] else txt_u[k]

        abst_list = [canon(a) for a in scale.abstain]
        abst_num = [a for a in abst_list if isinstance(a, float)]
        abst_txt = [a for a in abst_list if isinstance(a, str)]
        is_abst_u = np.zeros(lab.uniques.size, dtype=bool)
        if abst_num:
            is_abst_u |= is_num_u & np.isin(num_u, abst_num)
        if abst_txt:
            is_abst_u |= ~is_num_u & np.isin(txt_u, np.asarray(abst_txt, dtype=object))
        subst_u = ~is_abst_u

        def label_error(mask_u: np.ndarray, text: str) -> None:
            j = first_row(mask_u, lc)
            if j is not None:
                x = raw(label, int(pos[j]))
                raise SchemaError(text.format(x=shown(x)), source=source, row=_row(rows[j]), column=label)

        label_error(subst_u & inexact_integers(lab, is_num_u, num_u),
                    "label {x} is an integer beyond 2**53 (9,007,199,254,740,992), which cannot be compared "
                    "exactly as a number: two such labels could read as one category. Recode the labels as "
                    "smaller numbers, or as text (a letter before the digits).")
        # 'nan'/'inf' read as numbers became a category of their own (and broke every coefficient)
        label_error(subst_u & is_num_u & ~np.isfinite(num_u),
                    "label {x} is not a finite number. Leave the cell empty for a missing label "
                    "(a 'nan' written by pandas means missing), or fix the row.")
        if scale.level in ("interval", "ratio"):
            label_error(subst_u & ~is_num_u,
                        f"label {{x}} is not a number, but the scale is {scale.level}. "
                        f"Fix the row, declare it an abstention value (--abstain), or use a nominal/ordinal scale.")
            if scale.level == "ratio" and subst_u.any():
                lowest = np.min(num_u[subst_u])
                if lowest < 0:
                    label_error(subst_u & (num_u == lowest),
                                "label {x} is negative, but a ratio scale needs values >= 0.")

        if scale.categories is not None:
            declared = [canon(c) for c in scale.categories]
            lookup = {c: k for k, c in enumerate(declared)}
            if len(lookup) != len(declared):
                raise InvalidParameterError(f"Declared categories {list(scale.categories)} repeat a value.")
            cats_display = tuple(display(c) if isinstance(c, float) else c for c in declared)
            code_u = np.array([lookup.get(canon_u(k), -1) if subst_u[k] else 0 for k in range(lab.uniques.size)],
                              dtype=np.int64)
            label_error(subst_u & (code_u < 0),
                        f"label {{x}} is not in the declared categories {list(cats_display)}. "
                        f"Declare it with --categories (or --abstain if it means 'cannot assess'), or fix the row.")
        else:
            if not subst_u.any():
                raise SchemaError("every label is an abstention; there is nothing to compare.", source=source, column=label)
            if is_num_u[subst_u].all():
                uniq = np.unique(num_u[subst_u])
                cats_display = tuple(display(u) for u in uniq.tolist())
                code_u = np.searchsorted(uniq, num_u)
            else:
                if scale.level == "ordinal":
                    raise SchemaError(
                        "an ordinal scale with non-numeric labels needs the category order. "
                        "Declare it with --categories (categories=[...]) from lowest to highest.",
                        source=source, column=label)
                as_text = [txt_u[k] if not is_num_u[k] else str(display(float(num_u[k])))
                           for k in range(lab.uniques.size)]
                uniq_s = sorted({t for t, s in zip(as_text, subst_u) if s})
                lookup_s = {c: k for k, c in enumerate(uniq_s)}
                cats_display = tuple(uniq_s)
                code_u = np.array([lookup_s.get(t, 0) for t in as_text], dtype=np.int64)

        L = len(cats_display)
        for k in np.flatnonzero(is_abst_u).tolist():
            code_u[k] = L + abst_list.index(canon_u(k))
        code32 = code_u.astype(np.int32)  # a row's code is code32[lc], its value value_u[lc]: looked up at the end
        final_scale = Scale(level=scale.level, categories=cats_display, abstain=scale.abstain)
        if final_scale.is_numeric:
            cat_values = np.asarray([float(c) for c in cats_display], dtype=float)
        else:
            cat_values = np.arange(L, dtype=float)
        value_u = np.full(code_u.size, np.nan)
        value_u[code_u < L] = cat_values[code_u[code_u < L]]
        del lab, lab_coded

        # ---- raters, roles
        rater_codes, rater_names = _id_codes(id_cols[rater].take(keep))
        if rater_names.size < min_raters:
            raise SchemaError(
                f"only {rater_names.size} rater ({_short_list(rater_names)}); agreement needs at least two raters.",
                source=source, column=rater)
        judges = [str(j) for j in judges]
        unknown = [j for j in judges if j not in set(rater_names)]
        if unknown:
            raise SchemaError(
                f"judge(s) {unknown} are not raters in this file. Raters: {_short_list(rater_names)}.",
                source=source, column=rater)
        roles = np.where(np.isin(rater_names, judges), JUDGE, HUMAN).astype(object)
        if role is not None:
            rc = code_column(df[role], str).take(keep)
            norm = np.array([str(u).strip().lower() for u in rc.uniques] + ["<missing>"], dtype=object)
            norm = np.where(np.isin(norm, ["llm", "model", "ai"]), JUDGE, norm)
            bad_u = ~np.isin(norm, [HUMAN, JUDGE])
            j = first_row(bad_u, rc.codes)
            if j is not None:
                raise SchemaError(f"role {shown(raw(role, int(pos[j])))} is neither 'human' nor 'judge'.", source=source,
                                  row=_row(rows[j]), column=role)
            is_judge_row = (norm == JUDGE)[rc.codes]
            seen = np.zeros((rater_names.size, 2), dtype=bool)
            seen[rater_codes, is_judge_row.astype(np.int64)] = True
            both = np.flatnonzero(seen.all(axis=1))
            if both.size:
                raise SchemaError(f"rater {shown(rater_names[both[0]])} is marked both human and judge.", source=source,
                                  column=role)
            from_col = np.where(seen[:, 1], JUDGE, HUMAN)
            roles = np.where(np.isin(rater_names, judges), roles, from_col).astype(object)

        # ---- items, clusters
        item_codes, item_names = _id_codes(id_cols[item].take(keep))
        clusters = None
        if cluster is not None:
            cl_col = df[cluster]
            if arrow and (cl_col.null_count or not is_arrow_strings(cl_col)):
                cl_col = cl_col.to_pandas()
            if not arrow and cl_col.isna().any():  # a missing cluster reads as its text ('nan', 'None'), as it always has
                cl_col = pd.Series([id_str(x) for x in cl_col.to_numpy(dtype=object)], dtype=object)
            cl_codes, _ = _id_codes(code_column(cl_col, id_str).take(keep))
            clusters = np.full(item_names.size, -1, dtype=np.int64)
            clusters[item_codes] = cl_codes
            if not np.array_equal(clusters[item_codes], cl_codes):
                j = int(np.flatnonzero(clusters[item_codes] != cl_codes)[0])
                raise SchemaError(f"item {shown(item_names[item_codes[j]])} appears in more than one cluster.",
                                  source=source, row=_row(rows[j]), column=cluster)

        # ---- duplicates
        key = item_codes.astype(np.int64)  # codes may be int32 (Arrow): the key needs 64 bits
        key *= rater_names.size
        key += rater_codes
        chosen: np.ndarray | None = None  # the rows kept, in (item, rater) order; None: all, as they are
        if key.size < 2 or bool(np.all(key[1:] > key[:-1])):
            order = None  # already item-major, one label per (item, rater): the common case
        else:
            order = np.argsort(key, kind="stable")
            ks = key[order]
            del key
            dup_next = np.concatenate([ks[1:] == ks[:-1], [False]])
            if dup_next.any():
                first_of_dup = order[np.flatnonzero(dup_next)]
                second_of_dup = order[np.flatnonzero(dup_next) + 1]
                differs = code32[lc[first_of_dup]] != code32[lc[second_of_dup]]
                n_same = int(np.count_nonzero(~differs))
                if n_same:
                    dropped["identical duplicate"] = n_same
                if differs.any():
                    if duplicates == "error":
                        a, b = int(first_of_dup[differs][0]), int(second_of_dup[differs][0])
                        raise SchemaError(
                            f"rater {shown(rater_names[rater_codes[b]])} labels item {shown(item_names[item_codes[b]])} twice "
                            f"with different labels ({shown(raw(label, int(pos[a])))} at {_row_text(rows[a])}, "
                            f"{shown(raw(label, int(pos[b])))} here). "
                            f"Fix the file, or keep one with --duplicates first|last (Python: duplicates='first'|'last').",
                            source=source, row=_row(rows[b]), column=label)
                    dropped[f"conflicting duplicate ({duplicates} kept)"] = int(np.count_nonzero(differs))
                # keep first or last occurrence in file order within each key group (already in key order)
                group_start = np.concatenate([[True], ks[1:] != ks[:-1]])
                group_end = np.concatenate([ks[1:] != ks[:-1], [True]])
                chosen = order[group_end] if duplicates == "last" else order[group_start]
                del group_start, group_end, order
            else:
                chosen = order
            del ks, dup_next
        # (memory: the full-length temporaries above are freed before the table's arrays are made)
        counts = np.bincount(item_codes if chosen is None or chosen.size == item_codes.size else item_codes[chosen],
                             minlength=item_names.size)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        if chosen is None:
            r_idx, c_sel, v_sel = rater_codes.astype(np.int32, copy=False), code32[lc], value_u[lc]
        else:
            lc = lc[chosen]
            r_idx, c_sel, v_sel = rater_codes[chosen].astype(np.int32, copy=False), code32[lc], value_u[lc]
        return cls(
            items=item_names, raters=rater_names, roles=roles, indptr=indptr,
            rater_idx=r_idx, codes=c_sel, values=v_sel,
            scale=final_scale, clusters=clusters, source=source, n_rows_read=n_read, dropped=dropped,
        )


class RowNumbers:
    """The row numbers ``start, start + 1, ...`` of ``n`` rows without an array of them (a plain
    file's rows: only an error message ever needs one). Indexed like the array would be."""

    __slots__ = ("start", "n")

    def __init__(self, start: int, n: int) -> None:
        self.start, self.n = int(start), int(n)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, np.ndarray):
            return (np.flatnonzero(k) if k.dtype == bool else k.astype(np.int64)) + self.start
        return self.start + int(k)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.arange(self.start, self.start + self.n, dtype=dtype)


def _canon_not_na(x: Any) -> Any:
    """:func:`canon`, with a label that reads as NaN kept as the text 'nan' (pandas would take the
    float for a missing value; the finiteness check reports it)."""
    c = canon(x)
    return "nan" if isinstance(c, float) and c != c else c


def _id_codes(coded: Coded) -> tuple[np.ndarray, np.ndarray]:
    """Row codes and names of an id column, names canonical (``' 5'``, ``5``, ``5.0`` are ``'5'``)
    and in order of first appearance."""
    names_u = id_strings(coded)
    if names_u is coded.uniques or coded.kind == "integer":  # distinct values whose text is distinct
        merge, names = np.arange(names_u.size), names_u
    else:
        merge, names = pd.factorize(names_u)
    order = appearance_order(coded)  # few distinct values (raters): their order from the first rows
    if order is not None:
        if merge.size == names.size and np.array_equal(order, np.arange(order.size)):
            return coded.codes, np.asarray(names, dtype=object)
        m_order = pd.unique(merge[order])  # canonical names in order of first appearance
        rank = np.empty(names.size, dtype=np.int32)
        rank[m_order] = np.arange(m_order.size, dtype=np.int32)
        return rank[merge][coded.codes], np.asarray(names, dtype=object)[m_order]
    if merge.size == names.size and coded.first_order:
        return coded.codes, np.asarray(names, dtype=object)  # already canonical and in first-appearance order
    codes, first = pd.factorize(merge[coded.codes])
    return np.asarray(codes, dtype=np.int64), np.asarray(names, dtype=object)[first]


def _row(r: Any) -> int | str:
    return int(r) if isinstance(r, (int, np.integer)) else str(r)


def _row_text(r: Any) -> str:
    r = _row(r)
    return f"row {r}" if isinstance(r, int) else str(r)


def _short_list(names: Any, k: int = 12) -> str:
    names = [str(n) for n in names]
    shown_names = "[" + ", ".join(shown(n, 40) for n in names[:k])
    if len(names) <= k:
        return shown_names + "]"
    return shown_names + f", ... ({len(names)} in all)]"


def _is_nested_arrow(col: Any) -> bool:
    """Whether an Arrow column holds lists, structs or maps (never one label per row)."""
    import pyarrow as pa

    t = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    return bool(pa.types.is_nested(t))
