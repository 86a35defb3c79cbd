"""Reduce an AnnotationTable to the labels one coefficient uses (rater selection, abstention policy)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _options
from .._checks import check_choice, check_fits
from .._stats.parallel import both
from ..data import AnnotationTable
from ..exceptions import InvalidParameterError
from ._results import AbstentionInfo

ABSTAIN_POLICIES = _options.ABSTAIN_POLICIES  # the one registry of option values
ABSTAIN_LABEL = "<abstain>"


@dataclasses.dataclass(frozen=True, slots=True)
class Prepared:
    """Labels ready for the sufficient statistics.

    ``item`` (sorted) and ``rater`` index the source table; ``code`` is in ``0..q-1``. Under the
    ``category`` and ``disagree`` policies every abstention has code ``n_sub`` (= ``q - 1``).
    """

    item: np.ndarray
    rater: np.ndarray
    code: np.ndarray
    q: int
    n_sub: int
    policy: str
    abst_code: int | None
    numeric: bool
    # length n_sub: category values (numeric scales) or ranks 0..L-1, as :attr:`cat_values`; many
    # numeric categories are kept as given (the table's tuple) and converted on first use
    cat_source: Any
    categories: tuple[Any, ...]  # length q (abstention class last, when there is one)
    scale_level: str
    n_items: int
    clusters: np.ndarray | None
    raters: tuple[str, ...]
    rater_ids: np.ndarray  # table index of each selected rater, in selection order
    abstention: AbstentionInfo
    r: np.ndarray  # labels per item after the policy (float)
    # numeric scales: the value of each label (aligned with ``code``; ``nan`` for the abstention
    # class), the table's own ``values`` (a view when no label is dropped); None otherwise
    label_values: np.ndarray | None = None

    @property
    def cat_values(self) -> np.ndarray:
        """Float value of each substantive category (numeric scales), else the ranks ``0..L-1``."""
        cv = self.cat_source
        if not isinstance(cv, np.ndarray):
            cv = _as_floats(cv)
            object.__setattr__(self, "cat_source", cv)
        return cv

    def value_range(self) -> tuple[float, float] | None:
        """``(min, max)`` of :attr:`cat_values` (None: no category), read from the labels' own
        values when every category has a label here and the categories are not converted yet
        (the same two numbers, without converting a million Python floats)."""
        L = self.n_sub
        if not L:
            return None
        lv = self.label_values
        if not isinstance(self.cat_source, np.ndarray) and lv is not None and lv.shape[0] >= L:
            sub = self.code < L
            every = bool(sub.all())
            x = lv if every else lv[sub]

            def labelled() -> bool:  # every category has a label (scattered writes: beside min/max)
                seen = np.zeros(L, dtype=bool)
                seen[self.code if every else self.code[sub]] = True
                return bool(seen.all())

            ok, lohi = both(labelled, lambda: (float(x.min()), float(x.max())), int(x.shape[0]))
            if ok:
                return lohi
        cv = self.cat_values
        return float(cv.min()), float(cv.max())

    @property
    def n_labels(self) -> int:
        return int(self.code.shape[0])

    def per_item_n(self) -> np.ndarray:
        return self.r

    def value(self) -> np.ndarray:
        """Float value of each label (``nan`` for the abstention class)."""
        out = np.full(self.code.shape[0], np.nan)
        sub = self.code < self.n_sub
        out[sub] = self.cat_values[self.code[sub]]
        return out


#: numeric categories from which :class:`Prepared` converts them on first use only
_LAZY_CATEGORIES = 65_536


def _as_floats(cats: Sequence[Any]) -> np.ndarray:
    """Category values as floats (``float(c)`` of each)."""
    try:
        return np.asarray(cats, dtype=float)
    except (TypeError, ValueError):
        return np.asarray([float(c) for c in cats], dtype=float)


def _label_item(indptr: np.ndarray) -> np.ndarray:
    """Item index of every label of a CSR table (each item's index repeated over its labels; the
    two halves of the items on two threads)."""
    n_lab, n = int(indptr[-1]), int(indptr.shape[0]) - 1
    out = np.empty(n_lab, dtype=np.int64)
    h = n // 2

    def fill(lo: int, hi: int) -> None:
        out[indptr[lo]:indptr[hi]] = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(indptr[lo:hi + 1]))

    both(lambda: fill(0, h), lambda: fill(h, n), n_lab)
    return out


def check_raters(table: AnnotationTable, raters: Sequence[str] | None, func: str) -> tuple[str, ...] | None:
    if raters is None:
        return None
    if isinstance(raters, str):
        raters = [raters]
    names = [str(r) for r in raters]
    for r in names:
        table.rater_index(r)
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"The 'raters' parameter of {func} repeats a rater: {names}.")
    return tuple(names)


def prepare(table: AnnotationTable, *, raters: Sequence[str] | None, policy: str, func: str) -> Prepared:
    """Select raters and apply the abstention policy (no statistics here)."""
    if not isinstance(table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'table' parameter of {func} must be an AnnotationTable (see voirdire.data.read_annotations). "
            f"Got {type(table).__name__} instead.")
    check_choice(policy, "abstain_policy", func, ABSTAIN_POLICIES)
    names = check_raters(table, raters, func)
    item = _label_item(table.indptr)
    rater = np.asarray(table.rater_idx)
    code = np.asarray(table.codes)
    numeric = table.scale.is_numeric
    lval = np.asarray(table.values) if numeric else None
    every = names is None
    if names is not None:
        ridx = np.array([table.rater_index(r) for r in names], dtype=np.int64)
        every = ridx.size == table.n_raters  # every rater (names are distinct): no row to drop
        if not every:
            sel = np.zeros(table.n_raters, dtype=bool)
            sel[ridx] = True
            keep = sel[rater]  # np.isin(rater, ridx), by lookup
            item, rater, code = item[keep], rater[keep], code[keep]
            lval = None if lval is None else lval[keep]
        rater_names = names
    else:
        rater_names = tuple(str(r) for r in table.raters)
        ridx = np.arange(table.n_raters, dtype=np.int64)
    L = table.n_categories
    n_lab = int(code.shape[0])
    if n_lab and int(code.max()) >= L:
        abst = code >= L
        n_abst = int(np.count_nonzero(abst))
    else:
        abst = None
        n_abst = 0
    if every:
        r_all = np.diff(table.indptr)
    else:
        r_all = np.bincount(item, minlength=table.n_items)
    n_with = int(np.count_nonzero(r_all))
    if abst is not None and n_abst:
        item_abst = np.bincount(item[abst], minlength=table.n_items) > 0
        item_cov = 1.0 - int(np.count_nonzero(item_abst)) / n_with
    else:
        item_cov = 1.0
    info = AbstentionInfo(
        policy=policy, n_labels=n_lab, n_abstentions=n_abst,
        label_coverage=(1.0 - n_abst / n_lab) if n_lab else float("nan"),
        item_coverage=item_cov if n_with else float("nan"),
    )
    cats = tuple(table.scale.categories or ())
    if policy == "exclude" or not table.scale.abstain:
        # no abstention class unless the scale declares abstention values
        if abst is not None and n_abst:
            keep = ~abst
            item, rater, code = item[keep], rater[keep], code[keep]
            lval = None if lval is None else lval[keep]
            r_all = np.bincount(item, minlength=table.n_items)
        q, abst_code = L, None
        categories = cats
    else:
        if abst is not None:
            code = np.where(abst, L, code)
        q, abst_code = L + 1, L
        categories = cats + (ABSTAIN_LABEL,)
    # categorical labels: the coefficients build per-item category counts (items x categories) and a working
    # copy. Numeric scales are exempt: continuous scores have as many "categories" as distinct values, and
    # interval/ratio alpha works from the values (1M distinct floats run in well under a second), so the
    # estimate would refuse what runs fine; a real MemoryError still ends in the CLI's one-line "too large".
    if not table.scale.is_numeric:
        check_fits(16.0 * table.n_items * q, f"{q:,} categories x {table.n_items:,} items",
                   "treat numeric labels as numbers (--scale interval or ordinal), merge rare categories, or use a "
                   "subset of the items.")
    cat_values: Any
    if numeric:
        # many distinct values (continuous scores): converted when a coefficient asks for them
        cat_values = cats[:L] if L >= _LAZY_CATEGORIES else _as_floats(cats[:L])
    else:
        cat_values = np.arange(L, dtype=float)
    return Prepared(
        item=item, rater=rater, code=code, q=q, n_sub=L, policy=policy, abst_code=abst_code,
        numeric=numeric, cat_source=cat_values, categories=categories, scale_level=table.scale.level,
        n_items=table.n_items, clusters=table.clusters, raters=rater_names, rater_ids=ridx, abstention=info,
        r=np.asarray(r_all, dtype=np.float64), label_values=lval,
    )
