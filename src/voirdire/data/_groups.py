"""Grouped reading (private): one file read once, split into one table per group (``--by``).

``read_annotation_groups(path, by=["criterion"])`` reads the file once and gives, for every
value of the ``by`` column(s), the table that ``read_annotations(path, where=["criterion=..."])``
gives (the same rows in the same order, so the same categories, the same item order and the same
numbers downstream), plus the pooled table of every group. Groups that share item ids (a rubric:
every item rated on every criterion) are pooled as one item per (item, group), clustered by the
item (its criteria are resampled together); groups over disjoint items (slices: language, domain)
pool to the file as it is.

A wide file may name its columns ``rater:criterion`` (one column per rater and criterion): with
``by`` naming a column the file does not have, the part after the last ``:`` of each rater
column becomes that column (``WIDE_SEP``). A Label Studio JSON export with several controls read
``by="control"`` gives one group per control (``from_name``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._safe import shown
from ..exceptions import SchemaError
from . import _formats
from ._table import AnnotationTable

__all__ = ["GroupedTables", "read_annotation_groups", "split_groups", "WIDE_SEP", "POOLED_SEP"]

#: In a wide file, a column ``rater:criterion`` is rater ``rater``'s label on ``criterion``.
WIDE_SEP = ":"
#: ``--by control`` on a Label Studio JSON export: one group per control (``from_name``).
CONTROL = "control"
#: Pooled item id of an item shared by several groups: ``item`` + this + the group's name.
POOLED_SEP = " | "


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupedTables:
    """One table per group of a file, and the pooled table.

    Attributes
    ----------
    by : tuple of str
        The grouping column(s).
    keys : tuple of tuple of str
        One key per group (its value in each ``by`` column), in order of first appearance.
    tables : tuple of (AnnotationTable or None)
        The group's table: what ``--where`` on the key would read; ``None`` where that read fails
        for the group alone (one rater, every label an abstention): ``errors`` says why.
    pooled : AnnotationTable
        Every group together.
    item_group : numpy.ndarray
        For every item of ``pooled``, the index of its group in ``keys``.
    shared_items : bool
        Whether the groups share item ids (then pooled items are ``item | group``, clustered by item).
    errors : tuple of (str or None)
        Per group, why its table could not be read (``None``: it was); empty means none failed.
    group_items : tuple of int
        Per group, its number of distinct item ids in the file (also for a group that failed).
    """

    by: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...]
    tables: tuple[AnnotationTable | None, ...]
    pooled: AnnotationTable
    item_group: np.ndarray
    shared_items: bool
    errors: tuple[str | None, ...] = ()
    group_items: tuple[int, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Each group's name: its key's values joined by ``/``."""
        return tuple(group_name(k) for k in self.keys)

    @property
    def n_items(self) -> tuple[int, ...]:
        """Each group's number of items (its table's, or its distinct item ids when it failed)."""
        if self.group_items:
            return tuple(int(n) for n in self.group_items)
        return tuple(0 if t is None else int(t.n_items) for t in self.tables)

    def error(self, g: int) -> str | None:
        """Why group ``g``'s table could not be read, or ``None``."""
        return self.errors[g] if self.errors else None

    def pooled_suffix(self, group: str) -> str:
        """What the pool appends to an item id of ``group`` (``" | group"`` when the groups share items, else nothing)."""
        return POOLED_SEP + group if self.shared_items else ""

    @property
    def source_items(self) -> list[str]:
        """For every item of ``pooled``, its id in the file (``item`` of a pooled ``item | group``)."""
        ids = [str(i) for i in self.pooled.items]
        if not self.shared_items:
            return ids
        names = self.names
        return [i[: len(i) - len(POOLED_SEP + names[g])] if g >= 0 and i.endswith(POOLED_SEP + names[g]) else i
                for i, g in zip(ids, self.item_group.tolist())]


def group_name(key: Sequence[str]) -> str:
    """``("Coherence",)`` -> ``"Coherence"``; ``("Coherence", "en")`` -> ``"Coherence/en"``."""
    return "/".join(str(k) for k in key)


def _check_by(by: Any) -> tuple[str, ...]:
    if isinstance(by, str):
        by = [by]
    out = tuple(dict.fromkeys(str(b).strip() for b in (by or ())))
    if not out or any(not b for b in out):
        raise SchemaError(f"--by needs a column name; got {shown(list(by or ()), 60)}.")
    return out


def read_annotation_groups(path: str | os.PathLike[str], *, by: Sequence[str] | str, item: str = "item",
                           rater: str = "rater", label: str = "label", judges: Sequence[str] = (),
                           role: str | None = None, scale: Any = None, categories: Sequence[Any] | None = None,
                           abstain: Sequence[Any] = (), cluster: str | None = None, cluster_sep: str | None = None,
                           duplicates: Any = "error", missing: Any = "error", format: str = "auto",
                           wide: bool | None = None, where: Sequence[str] | dict[str, Any] | None = None,
                           control: str | None = None, question: str | None = None,
                           judge_path: Any = None) -> GroupedTables:
    """Read ``path`` once and split it by the ``by`` column(s); see the module docstring.

    The options are those of :func:`voirdire.data.read_annotations`.

    Raises
    ------
    SchemaError
        A ``by`` column the file lacks, the nested AltTest layout (no columns to group by).

    Examples
    --------
    >>> from voirdire.datasets import hanna_path
    >>> g = read_annotation_groups(hanna_path(), by="criterion", label="score", role="role", scale="interval",
    ...                            abstain=[-1], cluster="story")
    >>> g.names[:2], g.tables[0].n_items, g.pooled.n_items
    (('Relevance', 'Coherence'), 1056, 6336)
    """
    from ._readers import is_pipe

    cols = _check_by(by)
    opts: dict[str, Any] = dict(item=item, rater=rater, label=label, judges=judges, role=role, scale=scale,
                                categories=categories, abstain=abstain, cluster=cluster, cluster_sep=cluster_sep,
                                duplicates=duplicates, missing=missing, format=format, wide=wide, where=where,
                                control=control, question=question)
    if judge_path is not None:
        raise SchemaError("--by applies to one table or tool export, not to nested files with a separate judge file.")
    if str(path) == "-":
        with _formats.stdin_file(format) as tmp:
            return _read_groups(tmp, "<stdin>", cols, **opts)
    if is_pipe(path):
        with _formats.stdin_file(format, pipe=str(path)) as tmp:
            return _read_groups(tmp, str(path), cols, **opts)
    return _read_groups(Path(path), str(path), cols, **opts)


def _read_groups(p: Path, src: str, by: tuple[str, ...], *, item: str, rater: str, label: str,
                 judges: Sequence[str], role: str | None, scale: Any, categories: Any, abstain: Sequence[Any],
                 cluster: str | None, cluster_sep: str | None, duplicates: Any, missing: Any, format: str,
                 wide: bool | None, where: Any, control: str | None, question: str | None) -> GroupedTables:
    if not p.exists():
        raise SchemaError("file not found. Check the path.", source=src)
    prep = None
    if CONTROL in by and control is None:
        prep = _label_studio_controls(p, src, format=format, item=item, where=where)
    if prep is None:
        prep = _formats.prepare(p, src, format=format, item=item, rater=rater, label=label, role=role,
                                judges=judges, control=control, question=question, where=where, wide=wide,
                                abstain=abstain, keep=[c for c in (cluster, *by) if c])
    if prep is None:
        raise SchemaError("--by applies to tables and tool exports, not to the nested AltTest layout.", source=src)
    frame, rows = prep.frame, prep.rows
    missing_cols = [c for c in by if c not in frame.columns]
    if missing_cols and str(prep.rater) in frame.columns:
        frame = _split_wide_names(frame, str(prep.rater), missing_cols, src)
        missing_cols = [c for c in by if c not in frame.columns]
    if missing_cols:
        raise SchemaError(f"--by names column {shown(missing_cols[0], 40)}, which is not in the file; columns: "
                          f"{shown([str(c) for c in frame.columns], 120)}. A wide file may name its columns "
                          f"RATER{WIDE_SEP}{missing_cols[0].upper()} instead.", source=src, column=missing_cols[0])
    common: dict[str, Any] = dict(scale=scale, categories=categories, abstain=abstain, duplicates=duplicates,
                                  missing=missing)
    return split_groups(frame, rows, by, src=src, item=prep.item, rater=prep.rater, label=prep.label,
                        judges=judges, role=prep.role, cluster=cluster, cluster_sep=cluster_sep, common=common,
                        skipped=dict(prep.skipped))


def _label_studio_controls(p: Path, src: str, *, format: str, item: str, where: Any) -> Any:
    """A Label Studio JSON export read once, every control (``from_name``) in turn, with a ``control``
    column (``--by control``: one group per control); ``None`` when ``p`` is not such an export."""
    from ._formats._common import load_json
    from ._formats.label_studio import _controls, label_studio_frame

    if format not in ("auto", "label-studio") or p.is_dir() or p.suffix.lower() != ".json":
        return None
    obj = load_json(p, src)
    if format == "auto" and _formats.detect_json(obj) != "label-studio":
        return None
    names = sorted(_controls(obj))
    if not names:
        raise SchemaError("no choices, rating or number control holds a label.", source=src)
    frames: list[pd.DataFrame] = []
    rows: list[np.ndarray] = []
    skipped: dict[str, int] = {}
    for name in names:
        tf = label_studio_frame(obj, src, control=name, item=item)
        frames.append(tf.frame.assign(**{CONTROL: name}))
        rows.append(tf.rows)
        for k, v in tf.skipped.items():
            skipped[k] = skipped.get(k, 0) + v
    prep = _formats.Prepared(frame=pd.concat(frames, ignore_index=True), rows=np.concatenate(rows), item="item",
                             rater="rater", label="label", role="role", skipped=skipped,
                             taken_for=f"Label Studio JSON export (controls {shown(names, 80)})")
    return _formats._where(prep, _formats.parse_where(where), src)


def _split_wide_names(frame: pd.DataFrame, rater: str, cols: list[str], src: str) -> pd.DataFrame:
    """``rater:criterion`` rater names split into the rater and the (single) missing ``by`` column."""
    if len(cols) != 1:
        return frame
    names = frame[rater].astype(str)
    has = names.str.contains(WIDE_SEP, regex=False)
    if not has.any():
        return frame
    if not has.all():
        bad = names[~has].iloc[0]
        raise SchemaError(f"some rater columns are named RATER{WIDE_SEP}{cols[0].upper()} and some are not "
                          f"({shown(bad, 40)}); name every rater column the same way.", source=src)
    parts = names.str.rsplit(WIDE_SEP, n=1)
    out = frame.copy()
    out[rater] = parts.str[0].str.strip()
    out[cols[0]] = parts.str[1].str.strip()
    return out


def split_groups(frame: pd.DataFrame, rows: np.ndarray, by: Sequence[str], *, src: str, item: str, rater: str,
                 label: str, judges: Sequence[str] = (), role: str | None = None, cluster: str | None = None,
                 cluster_sep: str | None = None, common: dict[str, Any] | None = None,
                 skipped: dict[str, int] | None = None) -> GroupedTables:
    """Split a long frame by the ``by`` columns into one table per group (compared as stripped text,
    as ``--where`` compares) and the pooled table."""
    from ._readers import _finish

    common = dict(common or {})
    skipped = dict(skipped or {})
    by = tuple(by)
    texts = [frame[c].astype(str).str.strip().to_numpy(dtype=object) for c in by]
    codes, keys = _group_codes(texts)
    if not keys:
        raise SchemaError("the file holds no labels.", source=src)
    item_text = frame[item].astype(str).str.strip()
    # the pool first: an error of the file (a bad label, a duplicate row, an unknown judge) is the file's,
    # raised as the plain read raises it; what fails in a group alone is that group's reason
    pooled = _pooled_table(frame, rows, codes, keys, item_text, src=src, item=item, rater=rater, label=label,
                           judges=judges, role=role, cluster=cluster, cluster_sep=cluster_sep, common=common,
                           skipped=skipped)
    tables: list[AnnotationTable | None] = []
    errors: list[str | None] = []
    for g in range(len(keys)):
        mask = codes == g
        sub = frame.loc[mask].reset_index(drop=True)
        try:
            t = _finish(sub, rows[mask], src, item, rater, label, _judges_in(judges, sub[rater]), role, cluster,
                        cluster_sep, common)
        except SchemaError as exc:
            if len(keys) == 1:
                raise
            tables.append(None)
            errors.append(str(exc))
            continue
        n_out = int((~mask).sum())
        dropped = dict(skipped)
        if n_out:
            dropped["not matching --where"] = dropped.get("not matching --where", 0) + n_out
        tables.append(dataclasses.replace(t, dropped={**dropped, **t.dropped}))
        errors.append(None)
    group_items = np.asarray(pd.Series(item_text.to_numpy(dtype=object)).groupby(codes).nunique()
                             .reindex(range(len(keys)), fill_value=0), dtype=np.int64)
    shared = pooled.shared
    pooled_table = pooled.table
    # each pooled item's group: the group of the rows that carry it (one group per pooled item)
    first = pd.Series(codes).groupby(pooled.items).first()
    item_group = first.reindex([str(it) for it in pooled_table.items]).fillna(-1).to_numpy(dtype=np.int64)
    return GroupedTables(by=by, keys=keys, tables=tuple(tables), pooled=pooled_table, item_group=item_group,
                         shared_items=shared, errors=tuple(errors) if any(e is not None for e in errors) else (),
                         group_items=tuple(int(n) for n in group_items))


def _group_codes(texts: Sequence[np.ndarray]) -> tuple[np.ndarray, tuple[tuple[str, ...], ...]]:
    """Each row's group number (groups numbered in order of first appearance) and the groups' keys.

    >>> codes, keys = _group_codes([np.array(["b", "a", "b"], dtype=object), np.array(["x", "x", "x"], dtype=object)])
    >>> codes.tolist(), keys
    ([0, 1, 0], (('b', 'x'), ('a', 'x')))
    """
    codes = np.zeros(len(texts[0]), dtype=np.int64)
    for t in texts:  # the codes so far and this column's, as one number, numbered again (stays below n)
        c, u = pd.factorize(t, sort=False)
        codes = np.asarray(pd.factorize(codes * max(len(u), 1) + c, sort=False)[0], dtype=np.int64)
    first_row = np.unique(codes, return_index=True)[1]  # codes number the groups in order of appearance
    return codes, tuple(tuple(str(t[i]) for t in texts) for i in first_row)


def _judges_in(judges: Sequence[str], raters: pd.Series) -> list[str]:
    """The named judges (in their order) that have a row in a group: a judge absent from a group is no
    error of the group (the workflows say 'no judge labelled this group')."""
    if not judges:
        return []
    from ._columns import id_str

    here = {id_str(r) for r in pd.unique(raters)}
    return [j for j in judges if str(j) in here]


@dataclasses.dataclass(frozen=True, slots=True)
class _Pooled:
    table: AnnotationTable
    shared: bool
    items: np.ndarray  # each row's pooled item id (stripped text)


def _pooled_table(frame: pd.DataFrame, rows: np.ndarray, codes: np.ndarray, keys: tuple[tuple[str, ...], ...],
                  item_text: pd.Series, *, src: str, item: str, rater: str, label: str, judges: Sequence[str],
                  role: str | None, cluster: str | None, cluster_sep: str | None, common: dict[str, Any],
                  skipped: dict[str, int]) -> _Pooled:
    """Every group together: items shared by groups become ``item | group``, clustered by the item."""
    from ._readers import _finish

    owners = pd.Series(codes).groupby(item_text.to_numpy()).nunique()
    shared = bool((owners > 1).any())
    pooled_frame, pooled_cluster = frame, cluster
    if shared:
        names = np.array([group_name(k) for k in keys], dtype=object)
        pooled_frame = frame.copy()
        if cluster is None:
            base = item_text if cluster_sep is None else item_text.str.split(cluster_sep, n=1).str[0]
            pooled_frame["_pool_cluster"] = base.to_numpy(dtype=object)
            pooled_cluster = "_pool_cluster"
        pooled_frame[item] = (item_text + POOLED_SEP + pd.Series(names[codes])).to_numpy(dtype=object)
    pooled = _finish(pooled_frame, rows, src, item, rater, label, judges, role, pooled_cluster,
                     None if shared else cluster_sep, common)
    if skipped:
        pooled = dataclasses.replace(pooled, dropped={**skipped, **pooled.dropped})
    pooled_items = pooled_frame[item].astype(str).str.strip().to_numpy(dtype=object)
    return _Pooled(table=pooled, shared=shared, items=pooled_items)
