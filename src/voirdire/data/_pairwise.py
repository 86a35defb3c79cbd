"""Pairwise verdicts (A better, tie, B better) from humans and LLM judges: :class:`PairwiseTable`."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from .. import _options
from .._results import Result
from .._safe import shown
from ..exceptions import InvalidParameterError, SchemaError, VoirdireWarning
from ._readers import read_long_frame

logger = logging.getLogger(__name__)

__all__ = ["PairwiseTable", "PairwiseSummary", "read_pairwise", "VERDICTS", "ORDERS", "join_pair_key",
           "pairwise_set_of"]

#: Verdict codes in the original response order: 0 = A better, 1 = tie, 2 = B better.
VERDICTS = ("A", "T", "B")
#: Presentation orders: 0 = A shown first (``AB``), 1 = B shown first (``BA``); -1 = not recorded.
ORDERS = ("AB", "BA")

_DEFAULT_VERDICTS: dict[str, int] = {
    "a": 0, "t": 1, "b": 2, "tie": 1, "=": 1, "a>b": 0, "b>a": 2, "a=b": 1,
}
_ORDER_CODES: dict[str, int] = {"ab": 0, "ba": 1}
MissingPolicy = Literal["error", "drop"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PairwiseSummary(Result):
    """What a pairwise table holds."""

    source: str
    n_pairs: int
    n_humans: int
    n_judges: int
    n_labels: int
    n_human_labels: int
    n_judge_labels: int
    n_swapped_judge_pairs: int
    verdict_counts: dict[str, int]
    humans: tuple[str, ...]
    judges: tuple[str, ...]
    n_rows_read: int
    dropped: dict[str, int]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PairwiseTable:
    """Pair-major sparse table of pairwise verdicts from humans and LLM judges.

    Every label is one verdict of one rater on one pair of responses (A, B):
    ``verdicts`` holds 0 (A better), 1 (tie), 2 (B better) **in the original response order**,
    whatever order the rater saw. ``orders`` holds the presented order of each label: 0 (``AB``,
    A shown first), 1 (``BA``, B shown first) or -1 (not recorded; allowed for humans only).
    A judge asked in both orders has two labels on the pair. Labels are sorted by pair; the
    labels of pair ``i`` are ``indptr[i]:indptr[i+1]``.

    Build one with :func:`read_pairwise`, :meth:`from_frame` or :meth:`from_arrays`.

    Examples
    --------
    >>> t = PairwiseTable.from_arrays(
    ...     pair=["p1", "p1", "p1", "p1", "p2", "p2"],
    ...     rater=["ann", "bob", "gpt", "gpt", "ann", "gpt"],
    ...     verdict=["A", "T", "A", "B", "B", "B"],
    ...     order=[None, None, "AB", "BA", None, "AB"],
    ...     judges=["gpt"])
    >>> t.n_pairs, t.humans, t.judges
    (2, ('ann', 'bob'), ('gpt',))
    >>> t.verdicts.tolist()
    [0, 1, 0, 2, 2, 2]
    """

    pairs: np.ndarray
    raters: np.ndarray
    roles: np.ndarray
    indptr: np.ndarray
    rater_idx: np.ndarray
    verdicts: np.ndarray
    orders: np.ndarray
    source: str = "<memory>"
    n_rows_read: int = 0
    dropped: dict[str, int] = dataclasses.field(default_factory=dict)
    #: ``(n_pairs, 2)`` names of the systems that wrote response A and response B (``""``: not
    #: known), from the file's ``model_a``/``model_b`` columns; None when the file has none.
    systems: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.pairs)
        if len(self.indptr) != n + 1 or self.indptr[0] != 0 or self.indptr[-1] != len(self.verdicts):
            raise InvalidParameterError("PairwiseTable: indptr does not match pairs and labels.")
        if not (len(self.rater_idx) == len(self.verdicts) == len(self.orders)):
            raise InvalidParameterError("PairwiseTable: rater_idx, verdicts and orders differ in length.")
        if self.systems is not None and self.systems.shape != (n, 2):
            raise InvalidParameterError(f"PairwiseTable: systems must be ({n}, 2). Got {self.systems.shape}.")
        for a in (self.pairs, self.raters, self.roles, self.indptr, self.rater_idx, self.verdicts, self.orders):
            a.flags.writeable = False
        if self.systems is not None:
            self.systems.flags.writeable = False

    # ------------------------------------------------------------------ views
    @property
    def n_pairs(self) -> int:
        """Number of pairs (items)."""
        return len(self.pairs)

    @property
    def n_raters(self) -> int:
        return len(self.raters)

    @property
    def n_labels(self) -> int:
        return len(self.verdicts)

    @property
    def humans(self) -> tuple[str, ...]:
        return tuple(str(r) for r, k in zip(self.raters, self.roles) if k == "human")

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(str(r) for r, k in zip(self.raters, self.roles) if k == "judge")

    @property
    def human_idx(self) -> np.ndarray:
        return np.flatnonzero(self.roles == "human")

    @property
    def judge_idx(self) -> np.ndarray:
        return np.flatnonzero(self.roles == "judge")

    @property
    def label_pair(self) -> np.ndarray:
        """Pair index of every label."""
        return np.repeat(np.arange(self.n_pairs), np.diff(self.indptr))

    @property
    def is_judge_label(self) -> np.ndarray:
        return self.roles[self.rater_idx] == "judge"

    def rater_index(self, name: str) -> int:
        hits = np.flatnonzero(self.raters == str(name))
        if len(hits) == 0:
            raise InvalidParameterError(
                f"Unknown rater {shown(name)}. The table's raters are {_short(self.raters.tolist())}.")
        return int(hits[0])

    def summary(self) -> PairwiseSummary:
        judge = self.is_judge_label
        lp = self.label_pair
        # pairs on which some judge answered in both orders
        key = lp[judge].astype(np.int64) * max(self.n_raters, 1) + self.rater_idx[judge]
        both = 0
        if judge.any():
            o = self.orders[judge]
            df = pd.DataFrame({"k": key, "o": o})
            g = df.groupby("k")["o"].nunique()
            both = int(len(np.unique(g.index[g.to_numpy() > 1] // max(self.n_raters, 1))))
        counts = np.bincount(self.verdicts, minlength=3)
        return PairwiseSummary(
            source=self.source, n_pairs=self.n_pairs, n_humans=len(self.humans), n_judges=len(self.judges),
            n_labels=self.n_labels, n_human_labels=int((~judge).sum()), n_judge_labels=int(judge.sum()),
            n_swapped_judge_pairs=both,
            verdict_counts={v: int(c) for v, c in zip(VERDICTS, counts)},
            humans=self.humans, judges=self.judges, n_rows_read=self.n_rows_read, dropped=dict(self.dropped))

    def fingerprint(self) -> str:
        """A short hash of the contents (pairs, raters, roles, labels)."""
        h = hashlib.sha256()
        for a in (self.pairs.astype(str), self.raters.astype(str), self.roles.astype(str)):
            h.update("\x1f".join(a.tolist()).encode())
        for a in (self.indptr, self.rater_idx, self.verdicts, self.orders):
            h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
        return h.hexdigest()[:16]

    def to_frame(self) -> pd.DataFrame:
        """Long frame: ``pair, rater, role, verdict (A/T/B), order (AB/BA/None)``, and ``model_a, model_b``
        when the table names the compared systems."""
        ords = np.array([None, "AB", "BA"], dtype=object)[self.orders + 1]
        out = pd.DataFrame({
            "pair": self.pairs[self.label_pair],
            "rater": self.raters[self.rater_idx],
            "role": self.roles[self.rater_idx],
            "verdict": np.asarray(VERDICTS, dtype=object)[self.verdicts],
            "order": ords,
        })
        if self.systems is not None:
            out["model_a"] = self.systems[self.label_pair, 0]
            out["model_b"] = self.systems[self.label_pair, 1]
        return out

    def select(self, *, pairs: np.ndarray | Sequence[int] | slice | None = None,
               raters: Sequence[str] | None = None, label_mask: np.ndarray | None = None,
               drop_empty: bool = True) -> PairwiseTable:
        """A sub-table: some pairs (indices, boolean mask or slice), some raters, some labels.

        Raters keep their global order (unused raters are dropped). Pairs left without a label
        are dropped when ``drop_empty`` (the default).
        """
        keep = np.ones(self.n_labels, dtype=bool) if label_mask is None else np.asarray(label_mask, dtype=bool).copy()
        if len(keep) != self.n_labels:
            raise InvalidParameterError(f"label_mask has length {len(keep)}, expected {self.n_labels}.")
        if pairs is not None:
            if isinstance(pairs, slice):
                pidx = np.arange(self.n_pairs)[pairs]
            else:
                pidx = np.asarray(pairs)
                if pidx.dtype == bool:
                    pidx = np.flatnonzero(pidx)
            pm = np.zeros(self.n_pairs, dtype=bool)
            pm[pidx] = True
            keep &= pm[self.label_pair]
        else:
            pm = np.ones(self.n_pairs, dtype=bool)
        if raters is not None:
            rm = np.zeros(self.n_raters, dtype=bool)
            for r in raters:
                rm[self.rater_index(r)] = True
            keep &= rm[self.rater_idx]
        lp = self.label_pair[keep]
        if drop_empty:
            used_p = np.unique(lp)
        else:
            used_p = np.flatnonzero(pm)
        pmap = np.full(self.n_pairs, -1, dtype=np.int64)
        pmap[used_p] = np.arange(len(used_p))
        used_r = np.unique(self.rater_idx[keep])
        rmap = np.full(self.n_raters, -1, dtype=np.int64)
        rmap[used_r] = np.arange(len(used_r))
        counts = np.bincount(pmap[lp], minlength=len(used_p))
        return PairwiseTable(
            pairs=self.pairs[used_p], raters=self.raters[used_r], roles=self.roles[used_r],
            indptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            rater_idx=rmap[self.rater_idx[keep]], verdicts=self.verdicts[keep].copy(),
            orders=self.orders[keep].copy(), source=self.source, n_rows_read=self.n_rows_read,
            dropped=dict(self.dropped), systems=None if self.systems is None else self.systems[used_p].copy())

    def iter_batches(self, size: int) -> Any:
        """Yield consecutive sub-tables of ``size`` pairs (a stream in file order)."""
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise InvalidParameterError(f"The 'size' parameter of iter_batches must be an integer >= 1. Got {size!r}.")
        for s in range(0, self.n_pairs, int(size)):
            yield self.select(pairs=slice(s, s + int(size)))

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_codes(cls, *, pair_idx: np.ndarray, rater_idx: np.ndarray, verdicts: np.ndarray,
                   orders: np.ndarray, pairs: Sequence[Any], raters: Sequence[str], roles: Sequence[str],
                   source: str = "<memory>", systems: np.ndarray | None = None) -> PairwiseTable:
        """Fast constructor from integer codes (no parsing): verdict 0/1/2 (A/T/B, original order),
        order 0/1/-1 (AB/BA/none), ``pair_idx`` into ``pairs``, ``rater_idx`` into ``raters``;
        ``systems``: optional ``(len(pairs), 2)`` names of the systems behind A and B."""
        pair_idx = np.asarray(pair_idx, dtype=np.int64)
        rater_idx = np.asarray(rater_idx, dtype=np.int64)
        verdicts = np.asarray(verdicts)
        orders = np.asarray(orders)
        roles_a = np.asarray(list(roles), dtype=object)
        n_p, n_r = len(pairs), len(roles_a)
        if not (len(pair_idx) == len(rater_idx) == len(verdicts) == len(orders)):
            raise InvalidParameterError("from_codes: pair_idx, rater_idx, verdicts and orders differ in length.")
        if len(pair_idx) and (pair_idx.min() < 0 or pair_idx.max() >= n_p or rater_idx.min() < 0
                              or rater_idx.max() >= n_r):
            raise InvalidParameterError("from_codes: an index is out of range.")
        if not np.isin(verdicts, [0, 1, 2]).all() or not np.isin(orders, [-1, 0, 1]).all():
            raise InvalidParameterError("from_codes: verdicts must be 0/1/2 and orders -1/0/1.")
        if not np.isin(roles_a, ["human", "judge"]).all():
            raise InvalidParameterError("from_codes: roles must be 'human' or 'judge'.")
        if ((roles_a[rater_idx] == "judge") & (orders < 0)).any():
            raise InvalidParameterError("from_codes: every judge label needs an order (0 = AB, 1 = BA).")
        perm = np.argsort(pair_idx, kind="stable")
        counts = np.bincount(pair_idx, minlength=n_p)
        return cls(pairs=np.asarray(list(pairs), dtype=object), raters=np.asarray([str(r) for r in raters], dtype=object),
                   roles=roles_a, indptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                   rater_idx=rater_idx[perm], verdicts=verdicts[perm].astype(np.int8),
                   orders=orders[perm].astype(np.int8), source=source, n_rows_read=len(pair_idx),
                   systems=None if systems is None else np.asarray(systems, dtype=object).astype(str).astype(object))

    @classmethod
    def from_arrays(cls, *, pair: Sequence[Any] | np.ndarray, rater: Sequence[Any] | np.ndarray,
                    verdict: Sequence[Any] | np.ndarray, order: Sequence[Any] | np.ndarray | None = None,
                    judges: Sequence[str] = (), verdict_map: Mapping[Any, str] | None = None,
                    presented: bool = False, model_a: Sequence[Any] | np.ndarray | None = None,
                    model_b: Sequence[Any] | np.ndarray | None = None) -> PairwiseTable:
        """Build a table from parallel arrays (see :func:`read_pairwise` for the conventions;
        ``model_a``/``model_b``: the systems behind response A and B, one per label)."""
        df = pd.DataFrame({"pair": list(pair), "rater": list(rater), "verdict": list(verdict)})
        if order is not None:
            df["order"] = list(order)
        if model_a is not None and model_b is not None:
            df["model_a"], df["model_b"] = list(model_a), list(model_b)
        return cls.from_frame(df, judges=judges, order="order" if order is not None else None,
                              verdict_map=verdict_map, presented=presented)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, pair: str | Sequence[str] = "pair", rater: str = "rater",
                   verdict: str = "verdict",
                   order: str | None = "order", judges: Sequence[str] = (), role: str | None = None,
                   verdict_map: Mapping[Any, str] | None = None, presented: bool = False,
                   missing: MissingPolicy = "error", source: str = "<memory>",
                   row_numbers: np.ndarray | None = None) -> PairwiseTable:
        """Build a table from a long frame with one row per verdict (see :func:`read_pairwise`)."""
        if missing not in _options.MISSING_POLICIES:
            raise InvalidParameterError(f"The 'missing' parameter of read_pairwise must be one of "
                                        f"{list(_options.MISSING_POLICIES)}. Got {missing!r} instead.")
        if isinstance(judges, str):
            judges = [judges]
        if not isinstance(pair, str):
            df, pair = join_pair_key(df, list(pair), source)
        rows = np.arange(1, len(df) + 1) if row_numbers is None else np.asarray(row_numbers)
        if len(df) == 0:
            raise SchemaError("the table has no rows. Check that the file holds data below its header.", source=source)
        need = [pair, rater, verdict] + ([role] if role else [])
        if order is not None and order not in df.columns:
            if order != "order":  # the default column name may simply be absent (no judges swapped)
                need.append(order)
            else:
                order = None
        for col in need:
            if col not in df.columns:
                raise SchemaError(
                    f"missing column '{col}'. The file's columns are {_short(list(map(str, df.columns)))}; "
                    f"name the right one with pair=, rater=, verdict=, order=.", source=source, column=col)
        vmap = _verdict_table(verdict_map)
        pair_s = _as_str(df[pair])
        rater_s = _as_str(df[rater])
        verdict_raw = df[verdict].to_numpy(dtype=object)
        for col, vals in ((pair, pair_s), (rater, rater_s)):
            blank = np.flatnonzero(vals == "")
            if len(blank):
                raise SchemaError(f"empty {col} id. Every row needs a pair and a rater.", source=source,
                                  row=int(rows[blank[0]]), column=col)
        # roles
        judge_set = {str(j) for j in judges}
        if role is not None:
            rv = _as_str(df[role]).astype(object)
            rv = np.array([v.lower() for v in rv], dtype=object)
            bad = np.flatnonzero(~np.isin(rv, ["human", "judge"]))
            if len(bad):
                raise SchemaError(f"role {shown(rv[bad[0]])} is neither 'human' nor 'judge'.", source=source,
                                  row=int(rows[bad[0]]), column=role)
            judge_set |= set(rater_s[rv == "judge"].tolist())
            human_named = set(rater_s[rv == "human"].tolist())
            both = judge_set & human_named
            if both:
                raise SchemaError(f"rater(s) {sorted(both)} are marked both human and judge.", source=source, column=role)
        unknown_j = judge_set - set(rater_s.tolist())
        if unknown_j and role is None:
            raise SchemaError(
                f"judge(s) {sorted(unknown_j)} do not appear in the '{rater}' column. "
                f"Raters present: {_short(sorted(set(rater_s.tolist())))}.", source=source, column=rater)
        is_judge = np.isin(rater_s, list(judge_set)) if judge_set else np.zeros(len(df), dtype=bool)
        # verdicts
        vkey = np.array([_vkey(v) for v in verdict_raw], dtype=object)
        empty = vkey == ""
        pair_has_label = pd.Series(~empty).groupby(pair_s).transform("any").to_numpy()
        dropped: dict[str, int] = {}
        keep = np.ones(len(df), dtype=bool)
        if empty.any():
            if missing == "error":
                j = int(np.flatnonzero(empty)[0])
                what = (f"pair {shown(pair_s[j])} has no label: its verdict is empty"
                        if not pair_has_label[j] else "empty verdict")
                raise SchemaError(f"{what}. Fill it in, or pass missing='drop' (--missing drop) to skip such rows.",
                                  source=source, row=int(rows[j]), column=verdict)
            keep &= ~empty
            dropped["empty verdict"] = int(empty.sum())
            n_lost = len(set(pair_s[empty].tolist()) - set(pair_s[~empty].tolist()))
            if n_lost:
                dropped["pairs with no label"] = n_lost
        codes = np.full(len(df), -1, dtype=np.int64)
        for j in np.flatnonzero(keep).tolist():
            c = vmap.get(vkey[j])
            if c is None:
                known = sorted({k for k in vmap})
                raise SchemaError(
                    f"unknown verdict {shown(verdict_raw[j])}. Expected one of {_short(known)} "
                    f"(A = first response better, T = tie, B = second response better); "
                    f"map other spellings with verdict_map (--verdict-map).",
                    source=source, row=int(rows[j]), column=verdict)
            codes[j] = c
        # orders
        ocodes = np.full(len(df), -1, dtype=np.int64)
        if order is not None:
            oraw = df[order].to_numpy(dtype=object)
            for j in np.flatnonzero(keep).tolist():
                k = _vkey(oraw[j])
                if k == "":
                    continue
                o = _ORDER_CODES.get(k)
                if o is None:
                    raise SchemaError(f"unknown order {shown(oraw[j])}. Expected 'AB' (A shown first) or 'BA' (B shown first).",
                                      source=source, row=int(rows[j]), column=order)
                ocodes[j] = o
        if order is None and (keep & is_judge).any():
            # no order column at all: judges asked in one order, taken as AB (A shown first)
            warnings.warn(
                f"{source}: no order column; every judge verdict is taken as shown in order AB (A first). "
                f"A judge seen in one order has its position bias confounded with the pairs' quality.",
                VoirdireWarning, stacklevel=3)
            ocodes[keep & is_judge] = 0
        miss_o = np.flatnonzero(keep & is_judge & (ocodes < 0))
        if len(miss_o):
            j = int(miss_o[0])
            raise SchemaError(
                f"judge {shown(rater_s[j])} has no presented order on this row. Every judge label needs "
                f"'AB' (A shown first) or 'BA' (B shown first)"
                + (f" in column '{order}'." if order else "; name the order column with order= (--order)."),
                source=source, row=int(rows[j]), column=order or verdict)
        if presented:
            flip = keep & (ocodes == 1)
            codes[flip] = 2 - codes[flip]
        # duplicates: one label per (pair, rater, order)
        idx = np.flatnonzero(keep)
        key = pd.DataFrame({"p": pair_s[idx], "r": rater_s[idx], "o": ocodes[idx]})
        dup = key.duplicated(keep="first").to_numpy()
        if dup.any():
            j = int(idx[np.flatnonzero(dup)[0]])
            raise SchemaError(
                f"rater {shown(rater_s[j])} labels pair {shown(pair_s[j])} twice"
                + (f" in order {ORDERS[ocodes[j]]}" if ocodes[j] >= 0 else "")
                + ". Keep one row per (pair, rater, order).", source=source, row=int(rows[j]), column=rater)
        # human with order -1 and the same pair in another order is fine (humans' order is informational)
        pair_codes, pair_names = pd.factorize(pd.Series(pair_s[idx]), sort=False)
        rater_order = list(dict.fromkeys(rater_s[idx].tolist()))
        humans = [r for r in rater_order if r not in judge_set]
        jud = [r for r in rater_order if r in judge_set]
        names = np.array(humans + jud, dtype=object)
        roles = np.array(["human"] * len(humans) + ["judge"] * len(jud), dtype=object)
        rpos = {r: k for k, r in enumerate(names.tolist())}
        ridx = np.array([rpos[r] for r in rater_s[idx]], dtype=np.int64)
        perm = np.argsort(pair_codes, kind="stable")
        counts = np.bincount(pair_codes, minlength=len(pair_names))
        systems = None
        if {"model_a", "model_b"} <= set(map(str, df.columns)):
            systems = _pair_systems(df, idx, pair_codes, len(pair_names), pair_s, rows, source)
        return cls(
            pairs=np.asarray(pair_names, dtype=object), raters=names, roles=roles,
            indptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            rater_idx=ridx[perm], verdicts=codes[idx][perm].astype(np.int8),
            orders=ocodes[idx][perm].astype(np.int8), source=source, n_rows_read=int(len(df)), dropped=dropped,
            systems=systems)


def _pair_systems(df: pd.DataFrame, idx: np.ndarray, pair_codes: np.ndarray, n_pairs: int, pair_s: np.ndarray,
                  rows: np.ndarray, source: str) -> np.ndarray:
    """``(n_pairs, 2)``: each pair's ``model_a``/``model_b`` (``""`` where every row leaves it empty);
    a pair with two different names in one column is a :class:`SchemaError` at the row that differs."""
    out = np.full((n_pairs, 2), "", dtype=object)
    for c, col in enumerate(("model_a", "model_b")):
        vals = _as_str(df[col])[idx]
        given = vals != ""
        first = np.full(n_pairs, "", dtype=object)
        # the first non-empty name of each pair, then any row that disagrees with it
        named = pd.Series(vals[given]).groupby(pair_codes[given]).first()
        first[named.index.to_numpy(dtype=np.int64)] = named.to_numpy(dtype=object)
        bad = np.flatnonzero(given & (vals != first[pair_codes]))
        if len(bad):
            j = int(bad[0])
            raise SchemaError(f"pair {shown(pair_s[idx[j]])} names two systems in '{col}' "
                              f"({shown(first[pair_codes[j]])} and {shown(vals[j])}). A pair compares one "
                              f"response A and one response B: keep one name per pair.",
                              source=source, row=int(rows[idx[j]]), column=col)
        out[:, c] = first
    return out


#: folder name -> public pairwise set (see :mod:`voirdire.data._pairwise_sets`) that read_pairwise recognises
_SET_FOLDERS = {"summeval_h2h": "summeval_h2h", "pandalm": "pandalm", "llmfao": "llmfao", "llmbar": "llmbar",
                "autoj": "autoj", "chatbot_arena_ppr": "chatbot_arena"}


def pairwise_set_of(path: str | os.PathLike[str]) -> str | None:
    """The public pairwise set (one of :data:`voirdire.data.PAIRWISE_SETS`) whose published folder
    ``path`` is, recognised by the folder's name; None for a file or any other folder.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "chatbot_arena_ppr"
    >>> d.mkdir()
    >>> pairwise_set_of(d), pairwise_set_of(d.parent)
    ('chatbot_arena', None)
    """
    folder = Path(path)
    return _SET_FOLDERS[folder.name] if folder.name in _SET_FOLDERS and folder.is_dir() else None


def read_pairwise(
    path: str | os.PathLike[str],
    *,
    pair: str | Sequence[str] = "pair",
    rater: str = "rater",
    verdict: str = "verdict",
    order: str | None = "order",
    judges: Sequence[str] = (),
    role: str | None = None,
    verdict_map: Mapping[Any, str] | None = None,
    presented: bool = False,
    missing: MissingPolicy = "error",
) -> PairwiseTable:
    """Read pairwise verdicts (one row per rater, pair and presented order) into a :class:`PairwiseTable`.

    A folder of one of the public pairwise sets as published (``summeval_h2h/``, ``pandalm/``,
    ``llmfao/``, ``llmbar/``, ``autoj/``, ``chatbot_arena_ppr/``) is recognised and read with
    :func:`read_pairwise_set` (the other options are then not used).

    The file is a long table (``.csv``, ``.tsv``, ``.jsonl``, ``.parquet``): one row per verdict
    with a pair id, a rater name, the verdict and, for LLM judges, the order in which the two
    responses were shown (``AB``: A first; ``BA``: B first). A judge asked in both orders has two
    rows per pair.

    Parameters
    ----------
    path : path-like
        The file.
    pair : str or sequence of str
        Column with the pair id (default ``pair``), or several columns whose values together
        identify a pair (e.g. ``["q_id", "model_a", "model_b"]``; joined with ``|``).
    rater, verdict : str
        Column names (defaults ``rater``, ``verdict``).
    order : str or None
        Column with the presented order ``AB``/``BA``; required (non-empty) on every judge row
        when the column exists, optional for humans. Default ``"order"``. When the file has no
        such column, every judge verdict is taken as shown in order AB, with a warning (a judge
        asked in one order: its position bias is then confounded with the pairs' quality).
    judges : sequence of str
        Raters that are LLM judges; every other rater is human.
    role : str, optional
        Column with ``human``/``judge`` per row, instead of (or with) ``judges``.
    verdict_map : mapping, optional
        Extra spellings: ``{"model_1": "A", "model_2": "B", "tie": "T"}``. Keys are matched
        case-insensitively after stripping; built in are ``A``, ``T``, ``B``, ``tie``, ``A>B``, ``B>A``, ``A=B``.
    presented : bool
        ``False`` (default): verdicts are in the original response order (A is always the same
        response). ``True``: verdicts are in the presented order (A = the response shown first),
        and are mapped back (A <-> B swapped on ``BA`` rows).
    missing : {"error", "drop"}
        Empty verdicts are an error (default) or are dropped (counted in ``summary().dropped``).

    Returns
    -------
    PairwiseTable

    Raises
    ------
    SchemaError
        With the file, row and column: a missing column, an unknown verdict or order, a judge
        row with no order, an empty verdict (a pair with no label), a duplicate row, an empty file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "v.csv").write_text(
    ...     "pair,rater,verdict,order\\n"
    ...     "p1,ann,A,\\np1,gpt,A,AB\\np1,gpt,B,BA\\np2,ann,tie,\\np2,gpt,B,AB\\n")
    >>> t = read_pairwise(d / "v.csv", judges=["gpt"])
    >>> t.summary().n_swapped_judge_pairs, t.verdicts.tolist()
    (1, [0, 0, 2, 1, 2])
    """
    folder = Path(path)
    name = pairwise_set_of(folder)
    if name is not None:
        # a public set's own folder, as its authors published it: its documented reader
        from ._pairwise_sets import read_pairwise_set

        logger.info("%s: read as the public pairwise set %r", folder, name)
        return read_pairwise_set(name, folder.parent)
    df, rows, src = read_long_frame(path)
    return PairwiseTable.from_frame(df, pair=pair, rater=rater, verdict=verdict, order=order, judges=judges,
                                    role=role, verdict_map=verdict_map, presented=presented, missing=missing,
                                    source=src, row_numbers=rows)


def join_pair_key(df: pd.DataFrame, cols: list[str], source: str) -> tuple[pd.DataFrame, str]:
    """A frame with one pair-id column made of ``cols`` (values joined with ``|``)."""
    if not cols:
        raise InvalidParameterError("pair= needs at least one column name.")
    for col in cols:
        if col not in df.columns:
            raise SchemaError(f"missing column '{col}' (part of the pair key {cols}). The file's columns are "
                              f"{_short(list(map(str, df.columns)))}.", source=source, column=col)
    if len(cols) == 1:
        return df, cols[0]
    parts = [_as_str(df[c]) for c in cols]
    for col, vals in zip(cols, parts):
        blank = np.flatnonzero(vals == "")
        if len(blank):
            raise SchemaError("empty pair id part. Every row needs a value in each pair-key column.",
                              source=source, row=int(blank[0]) + 1, column=col)
    name = "|".join(cols)
    out = df.copy()
    out[name] = ["|".join(t) for t in zip(*parts)]
    return out, name


def _vkey(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and np.isnan(v):
        return ""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        v = int(v)
    return str(v).strip().lower()


def _verdict_table(verdict_map: Mapping[Any, str] | None) -> dict[str, int]:
    table = dict(_DEFAULT_VERDICTS)
    if verdict_map is None:
        return table
    if not isinstance(verdict_map, Mapping):
        raise InvalidParameterError(
            f"The 'verdict_map' parameter of read_pairwise must be a mapping like {{'model_1': 'A'}}. "
            f"Got {type(verdict_map).__name__}.")
    for k, v in verdict_map.items():
        code = _DEFAULT_VERDICTS.get(_vkey(v))
        if code is None or _vkey(v) not in ("a", "t", "b", "tie"):
            raise InvalidParameterError(
                f"verdict_map must map to 'A', 'T' or 'B'. Got {k!r} -> {v!r}.")
        table[_vkey(k)] = code
    return table


def _as_str(s: pd.Series) -> np.ndarray:
    out = np.empty(len(s), dtype=object)
    for j, v in enumerate(s.to_numpy(dtype=object)):
        out[j] = _vkey_keepcase(v)
    return out


def _vkey_keepcase(v: Any) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        v = int(v)
    return str(v).strip()


def _short(names: Any, k: int = 12) -> str:
    names = list(names)
    head = "[" + ", ".join(shown(n, 40) for n in names[:k])
    if len(names) <= k:
        return head + "]"
    return head + f", ... ({len(names) - k} more)]"
