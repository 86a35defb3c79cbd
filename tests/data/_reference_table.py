"""The table constructor as it was before vectorisation (row by row), kept as a test oracle.

``reference_from_frame`` is the body of ``AnnotationTable.from_frame`` at commit 47bf365 (with issue 17's missing markers and escaped values), unchanged
except that it returns the constructor's fields as a dict. The vectorised constructor must give the
same table, or the same error, on every input.
"""
# ruff: noqa
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from voirdire.data import Scale
from voirdire.data._scale import LEVELS
from voirdire._safe import shown
from voirdire.data._source import is_missing_marker
from voirdire.data._table import HUMAN, JUDGE
from voirdire.exceptions import InvalidParameterError, SchemaError


def reference_from_frame(df, *, item="item", rater="rater", label="label", judges=(), role=None, scale=None,
                         categories=None, abstain=(), cluster=None, duplicates="error", missing="error",
                         source="<frame>", row_numbers=None) -> dict[str, Any]:
    func = "AnnotationTable.from_frame"
    if duplicates not in ("error", "first", "last"):
        raise InvalidParameterError(
            f"The 'duplicates' parameter of {func} must be one of ['error', 'first', 'last']. Got {duplicates!r} instead.")
    if missing not in ("error", "drop"):
        raise InvalidParameterError(
            f"The 'missing' parameter of {func} must be one of ['error', 'drop']. Got {missing!r} instead.")
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
    rows = np.arange(1, n_read + 1) if row_numbers is None else np.asarray(row_numbers)
    needed = [c for c in (item, rater, label) + ((role,) if role else ()) + ((cluster,) if cluster else ())]
    absent = [c for c in needed if c not in df.columns]
    if absent:
        raise SchemaError(
            f"missing column(s) {absent}; found {list(map(str, df.columns))}. "
            f"Name the columns with --item/--rater/--label (item=, rater=, label=).",
            source=source, column=absent[0])
    dropped: dict[str, int] = {}

    def _blank(s: pd.Series) -> np.ndarray:
        v = s.to_numpy(dtype=object)
        return pd.isna(s).to_numpy() | np.array([isinstance(x, str) and not x.strip() for x in v], dtype=bool)

    for col in (item, rater):
        bad = _blank(df[col])
        if bad.any():
            r = _row(rows[np.flatnonzero(bad)[0]])  # nested JSON rows are 'rater .., item ..'
            raise SchemaError(f"empty {col} id. Every row needs an item and a rater.", source=source, row=r, column=col)
    blank_label = _blank(df[label])
    # 'NA' (R), 'nan' (pandas), 'null'... mark a missing label too, unless declared as an answer
    declared_text = {str(c).strip() for c in (*scale.abstain, *(scale.categories or ()))}
    marker = np.array([is_missing_marker(x) and x.strip() not in declared_text for x in df[label].to_numpy(dtype=object)],
                      dtype=bool)
    blank_label |= marker
    if blank_label.any():
        first = np.flatnonzero(blank_label)[0]
        if missing == "error" and marker[first]:
            raise SchemaError(
                f"label {shown(df[label].iloc[first])} is not a finite number or category: it marks a missing "
                f"value (R writes NA, pandas nan). Leave the cell empty, drop such rows with --missing drop "
                f"(Python: missing='drop'), or declare it with --abstain if it means 'cannot assess'.",
                source=source, row=_row(rows[first]), column=label)
        if missing == "error":
            r = _row(rows[np.flatnonzero(blank_label)[0]])
            raise SchemaError(
                f"empty label ({int(blank_label.sum())} empty label(s) in all). Fill it in, or drop such rows "
                f"with --missing drop (Python: missing='drop'); they are counted in the summary.",
                source=source, row=r, column=label)
        dropped["empty label"] = int(blank_label.sum())
    keep = ~blank_label
    items_raw = df[item].to_numpy(dtype=object)[keep]
    raters_raw = df[rater].to_numpy(dtype=object)[keep]
    labels_raw = df[label].to_numpy(dtype=object)[keep]
    rows = rows[keep]
    nested = [k for k, x in enumerate(labels_raw) if isinstance(x, (list, tuple, dict, set, np.ndarray))]
    if nested:
        k = nested[0]
        raise SchemaError(f"label {shown(labels_raw[k])} is a {type(labels_raw[k]).__name__}, not a single value. "
                          "Give one label per item and rater.", source=source, row=_row(rows[k]), column=label)
    items_s = np.array([_id_str(x) for x in items_raw], dtype=object)
    raters_s = np.array([_id_str(x) for x in raters_raw], dtype=object)
    canon = np.array([_canon(x) for x in labels_raw], dtype=object)

    abst = {_canon(a) for a in scale.abstain}
    is_abst = np.array([c in abst for c in canon], dtype=bool) if abst else np.zeros(canon.size, bool)
    subst = canon[~is_abst]
    numeric = np.array([isinstance(c, float) for c in subst], dtype=bool)
    finite = np.array([not isinstance(c, float) or np.isfinite(c) for c in subst], dtype=bool)
    if not finite.all():
        # 'nan'/'inf' read as numbers became a category of their own (and broke every coefficient)
        j = np.flatnonzero(~is_abst)[np.flatnonzero(~finite)[0]]
        raise SchemaError(
            f"label {shown(labels_raw[j])} is not a finite number. Leave the cell empty for a missing label "
            f"(a 'nan' written by pandas means missing), or fix the row.",
            source=source, row=_row(rows[j]), column=label)

    if scale.level in ("interval", "ratio"):
        if not numeric.all():
            j = np.flatnonzero(~is_abst)[np.flatnonzero(~numeric)[0]]
            raise SchemaError(
                f"label {shown(labels_raw[j])} is not a number, but the scale is {scale.level}. "
                f"Fix the row, declare it an abstention value (--abstain), or use a nominal/ordinal scale.",
                source=source, row=_row(rows[j]), column=label)
        if scale.level == "ratio" and subst.size and np.min(subst.astype(float)) < 0:
            j = np.flatnonzero(~is_abst)[int(np.argmin(subst.astype(float)))]
            raise SchemaError(f"label {shown(labels_raw[j])} is negative, but a ratio scale needs values >= 0.",
                              source=source, row=_row(rows[j]), column=label)

    if scale.categories is not None:
        declared = [_canon(c) for c in scale.categories]
        lookup = {c: k for k, c in enumerate(declared)}
        if len(lookup) != len(declared):
            raise InvalidParameterError(f"Declared categories {list(scale.categories)} repeat a value.")
        cats_display = tuple(_display(c) if isinstance(c, float) else c for c in declared)
    else:
        if subst.size == 0:
            raise SchemaError("every label is an abstention; there is nothing to compare.", source=source, column=label)
        if numeric.all():
            uniq = np.unique(subst.astype(float))
            cats_display = tuple(_display(float(u)) for u in uniq)
            lookup = None
            declared = list(uniq)
        else:
            if scale.level == "ordinal":
                raise SchemaError(
                    "an ordinal scale with non-numeric labels needs the category order. "
                    "Declare it with --categories (categories=[...]) from lowest to highest.",
                    source=source, column=label)
            uniq_s = sorted({str(c) if isinstance(c, str) else str(_display(c)) for c in subst})
            canon = np.array([c if isinstance(c, str) else str(_display(c)) for c in canon], dtype=object)
            subst = canon[~is_abst]
            lookup = {c: k for k, c in enumerate(uniq_s)}
            cats_display = tuple(uniq_s)
            declared = uniq_s

    L = len(cats_display)
    codes = np.empty(canon.size, dtype=np.int32)
    abst_list = [_canon(a) for a in scale.abstain]
    if is_abst.any():
        codes[is_abst] = [L + abst_list.index(c) for c in canon[is_abst]]
    if lookup is None:
        vals = subst.astype(float)
        codes[~is_abst] = np.searchsorted(np.asarray(declared, dtype=float), vals)
    else:
        sub_codes = np.array([lookup.get(c, -1) for c in subst], dtype=np.int64)
        if (sub_codes < 0).any():
            j = np.flatnonzero(~is_abst)[np.flatnonzero(sub_codes < 0)[0]]
            raise SchemaError(
                f"label {shown(labels_raw[j])} is not in the declared categories {list(cats_display)}. "
                f"Declare it with --categories (or --abstain if it means 'cannot assess'), or fix the row.",
                source=source, row=_row(rows[j]), column=label)
        codes[~is_abst] = sub_codes
    final_scale = Scale(level=scale.level, categories=cats_display, abstain=scale.abstain)
    if final_scale.is_numeric:
        cat_values = np.asarray([float(c) for c in cats_display], dtype=float)
    else:
        cat_values = np.arange(L, dtype=float)
    values = np.full(codes.size, np.nan)
    values[codes < L] = cat_values[codes[codes < L]]

    # ---- raters, roles
    rater_codes, rater_names = pd.factorize(pd.Series(raters_s), sort=False)
    rater_names = np.asarray(rater_names, dtype=object)
    if rater_names.size < 2:
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
        role_vals = df[role].to_numpy(dtype=object)[keep]
        role_norm = np.array([str(v).strip().lower() for v in role_vals], dtype=object)
        role_norm = np.where(np.isin(role_norm, ["llm", "model", "ai"]), JUDGE, role_norm)
        bad = ~np.isin(role_norm, [HUMAN, JUDGE])
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise SchemaError(f"role {shown(role_vals[j])} is neither 'human' nor 'judge'.", source=source,
                              row=_row(rows[j]), column=role)
        for k in range(rater_names.size):
            rk = np.unique(role_norm[rater_codes == k])
            if rk.size > 1:
                raise SchemaError(f"rater {shown(rater_names[k])} is marked both human and judge.", source=source, column=role)
            if rater_names[k] not in judges:
                roles[k] = rk[0]

    # ---- items, clusters
    item_codes, item_names = pd.factorize(pd.Series(items_s), sort=False)
    item_names = np.asarray(item_names, dtype=object)
    clusters = None
    if cluster is not None:
        cl_raw = np.array([_id_str(x) for x in df[cluster].to_numpy(dtype=object)[keep]], dtype=object)
        cl_codes, _ = pd.factorize(pd.Series(cl_raw), sort=False)
        clusters = np.full(item_names.size, -1, dtype=np.int64)
        clusters[item_codes] = cl_codes
        if not np.array_equal(clusters[item_codes], cl_codes):
            j = int(np.flatnonzero(clusters[item_codes] != cl_codes)[0])
            raise SchemaError(f"item {shown(items_s[j])} appears in more than one cluster.", source=source,
                              row=_row(rows[j]), column=cluster)

    # ---- duplicates
    key = item_codes.astype(np.int64) * rater_names.size + rater_codes
    order = np.argsort(key, kind="stable")
    ks = key[order]
    dup_next = np.concatenate([ks[1:] == ks[:-1], [False]])
    if dup_next.any():
        first_of_dup = order[np.flatnonzero(dup_next)]
        second_of_dup = order[np.flatnonzero(dup_next) + 1]
        differs = codes[first_of_dup] != codes[second_of_dup]
        n_same = int(np.count_nonzero(~differs))
        if n_same:
            dropped["identical duplicate"] = n_same
        if differs.any():
            if duplicates == "error":
                a, b = int(first_of_dup[differs][0]), int(second_of_dup[differs][0])
                raise SchemaError(
                    f"rater {shown(raters_s[b])} labels item {shown(items_s[b])} twice with different labels "
                    f"({shown(labels_raw[a])} at {_row_text(rows[a])}, {shown(labels_raw[b])} here). "
                    f"Fix the file, or keep one with --duplicates first|last (Python: duplicates='first'|'last').",
                    source=source, row=_row(rows[b]), column=label)
            dropped[f"conflicting duplicate ({duplicates} kept)"] = int(np.count_nonzero(differs))
        # keep first or last occurrence in file order within each key group
        group_start = np.concatenate([[True], ks[1:] != ks[:-1]])
        group_end = np.concatenate([ks[1:] != ks[:-1], [True]])
        chosen = order[group_end] if duplicates == "last" else order[group_start]
    else:
        chosen = order
    sel = np.sort(chosen)
    li, lr = item_codes[sel], rater_codes[sel]
    o = np.lexsort((lr, li))
    sel = sel[o]
    counts = np.bincount(item_codes[sel], minlength=item_names.size)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return dict(
        items=item_names, raters=rater_names, roles=roles, indptr=indptr,
        rater_idx=rater_codes[sel].astype(np.int32), codes=codes[sel], values=values[sel],
        scale=final_scale, clusters=clusters, source=source, n_rows_read=n_read, dropped=dropped,
    )


def _canon(x: Any) -> Any:
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


def _display(x: Any) -> Any:
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def _row(r: Any) -> int | str:
    return int(r) if isinstance(r, (int, np.integer)) else str(r)


def _row_text(r: Any) -> str:
    r = _row(r)
    return f"row {r}" if isinstance(r, int) else str(r)


def _id_str(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x).strip()


def _short_list(names: Any, k: int = 12) -> str:
    names = [str(n) for n in names]
    shown_names = "[" + ", ".join(shown(n, 40) for n in names[:k])
    if len(names) <= k:
        return shown_names + "]"
    return shown_names + f", ... ({len(names)} in all)]"
