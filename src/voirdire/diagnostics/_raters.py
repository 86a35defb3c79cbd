"""Per-rater diagnostics: who drags agreement down, and who is an outlier (private).

One joint bootstrap (the agreement engine, :func:`voirdire.agreement.engine.bootstrap`) serves
every number: each rater's leave-one-out score ``S(k; pool)`` (the same pair-list score as the
leave-one-human-out validation, finished by the same :func:`voirdire.validation.pair_scores`), the pool's coefficient,
and the pool's coefficient without each rater. The last comes from per-item sufficient
statistics: removing rater ``k`` changes only the rows of the items ``k`` labelled, so the
statistics of "the pool without ``k``" are the pool's column sums minus a sparse correction
``D_k`` (the rows of ``k``'s items with ``k`` minus the same rows without ``k``), and a resample
costs one product of its weight vector with ``[pool | S rows | D rows]``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import ndtri

from .._checks import as_generator, check_confidence_level, check_positive_int, check_probability
from .._results import ConfidenceInterval, Result
from .._scores import PER_ITEM_COEFFICIENTS, SCORES
from .._stats._poisson import factor_rows
from .._stats.distances import delta
from .._stats.resampling import (
    NORMAL_METHOD, NORMAL_MIN_UNITS, linearised_law, normal_draws, normal_law_applies, row_codes, unit_map,
    unit_sums,
)
from ..agreement import engine
from ..agreement.engine import Prepared, make_spec, prepare, resolve_level
from ..data import AnnotationTable
from ..exceptions import InvalidParameterError
from ..pairwise import dawid_skene_arrays, mace_arrays
from ..validation import pair_scores, rejected_flags

__all__ = ["RaterDiagnosticsResult", "rater_diagnostics", "POOL_COEFFICIENTS"]

_FUNC = "rater_diagnostics"
#: above this many categories the latent-class competence models are not fitted (L x L per annotator)
MAX_COMPETENCE_CATEGORIES = 100
#: pool coefficients whose per-item statistics add over items (the fast "without k" path)
POOL_COEFFICIENTS = PER_ITEM_COEFFICIENTS  # the registry's per-item coefficients


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RaterDiagnosticsResult(Result):
    """Each rater against the rest of the pool (see :func:`rater_diagnostics`).

    Per-rater arrays, in the order of ``raters``:

    * ``n_labels``: labels the rater gave (abstentions excluded); ``n_items``: those on items
      at least one other rater labelled (the rater's overlap); ``n_partners``: other raters the
      rater shares at least one item with; ``n_pairs``: comparison pairs behind ``s``.
    * ``s``, ``s_low``, ``s_high``: ``S(k; pool)``, the rater's agreement with the other raters
      on the pair list of the leave-one-out rule, and its bootstrap percentile interval.
    * ``typical``: the median of ``S(j; pool)`` over the other evaluated raters; ``gap``:
      ``s - typical``; ``p_value``: bootstrap p-value of "gap >= -margin".
    * ``pool_without``, ``pool_without_low``, ``pool_without_high``: the pool coefficient
      recomputed without the rater; ``delta`` = ``pool_without - pool.estimate`` (positive: the
      pool agrees more without the rater), ``delta_low``, ``delta_high``.
    * ``ds_accuracy``: Dawid-Skene probability that the rater's label is the latent class;
      ``mace_competence``: MACE's ``1 - s_w`` (probability of not spamming).
    * ``flagged`` and ``reason``: the outlier flag and why (also why a rater was not evaluated).
    """

    raters: tuple[str, ...]
    score: str
    level: str
    coefficient: str
    coefficient_level: str
    pool: ConfidenceInterval
    pool_estimate: float
    n_labels: np.ndarray
    n_items: np.ndarray
    n_partners: np.ndarray
    n_pairs: np.ndarray
    s: np.ndarray
    s_low: np.ndarray
    s_high: np.ndarray
    typical: np.ndarray
    gap: np.ndarray
    p_value: np.ndarray
    pool_without: np.ndarray
    pool_without_low: np.ndarray
    pool_without_high: np.ndarray
    delta: np.ndarray
    delta_low: np.ndarray
    delta_high: np.ndarray
    ds_accuracy: np.ndarray
    mace_competence: np.ndarray
    evaluated: np.ndarray
    flagged: np.ndarray
    reason: tuple[str | None, ...]
    margin: float
    significance_level: float
    min_items: int
    rule: str
    note: str
    confidence_level: float
    n_resamples: int
    resampling_unit: str
    n_units: int
    n_items_total: int
    interval_method: str = "percentile bootstrap"

    @property
    def flagged_raters(self) -> tuple[str, ...]:
        """Names of the flagged raters."""
        return tuple(r for r, f in zip(self.raters, self.flagged) if f)

    def to_frame(self) -> pd.DataFrame:
        """One row per rater."""
        return pd.DataFrame({
            "rater": list(self.raters), "n_labels": self.n_labels, "n_items": self.n_items,
            "n_partners": self.n_partners, "n_pairs": self.n_pairs, "s": self.s, "s_low": self.s_low,
            "s_high": self.s_high, "typical": self.typical, "gap": self.gap, "p_value": self.p_value,
            "pool_without": self.pool_without, "delta": self.delta, "delta_low": self.delta_low,
            "delta_high": self.delta_high, "ds_accuracy": self.ds_accuracy,
            "mace_competence": self.mace_competence, "evaluated": self.evaluated, "flagged": self.flagged,
            "reason": list(self.reason),
        })


# ----------------------------------------------------------------------------- statistics
def _score_layout(score: str, level: str, L: int) -> dict[str, slice]:
    """Column layout of the pair statistics :func:`voirdire.validation.pair_scores` reads (same names as the LOO kernel)."""
    names: list[tuple[str, int]] = [("n_pairs", 1)]
    if score in ("agreement", "kappa", "ac1") or (score == "alpha" and level == "nominal"):
        names.append(("agree", 1))
    if score == "kappa":
        names += [("row", L), ("col", L)]
    elif score == "ac1" or (score == "alpha" and level != "ordinal"):
        names.append(("marg", L))
    if score == "alpha" and level == "ordinal":
        names.append(("conf", L * L))
    elif score == "alpha" and level != "nominal":
        names.append(("dis", 1))
    out, pos = {}, 0
    for nm, w in names:
        out[nm] = slice(pos, pos + w)
        pos += w
    return out


def _pair_rows(prep: Prepared, rpos: np.ndarray, K: int, score: str, level: str, L: int,
               cvals: np.ndarray) -> tuple[sp.csr_matrix, dict[str, slice], int]:
    """Per-item pair statistics of every rater's leave-one-out score, ``(n_items, K * S)`` sparse.

    Label ``(i, k, y)`` with ``m = r_i - 1 >= 1`` other labels on item ``i`` gives ``m`` pairs
    ``(y, y_ir)``: ``n_pairs = m``, ``agree = C_iy - 1`` (``C_i`` = the item's category counts),
    ``row = m e_y``, ``col = C_i - e_y``, ``marg = row + col``, ``dis = sum_c C_ic delta(y, c)``,
    ``conf = e_y (C_i - e_y)^T``: the human side of the validation's pair kernel, O(labels x L).
    """
    layout = _score_layout(score, level, L)
    S = max(s.stop for s in layout.values())
    n = prep.n_items
    item, code = prep.item, prep.code
    r = prep.r
    m = r[item] - 1.0
    ok = m >= 1
    it, kk, y, mm = item[ok], rpos[ok], code[ok], m[ok]
    base = kk.astype(np.int64) * S
    # category counts of each item, as a CSR matrix (items x L)
    C = sp.csr_matrix((np.ones(item.size), (item, code)), shape=(n, L))
    C.sum_duplicates()
    Cy = np.asarray(C[it, y]).ravel() if it.size else np.zeros(0)  # scipy gives a sparse (1, 0) for none
    rows: list[np.ndarray] = [it]
    cols: list[np.ndarray] = [base + layout["n_pairs"].start]
    vals: list[np.ndarray] = [mm]
    if "agree" in layout:
        rows.append(it)
        cols.append(base + layout["agree"].start)
        vals.append(Cy - 1.0)
    need_items = any(nm in layout for nm in ("col", "marg", "conf"))
    if need_items:
        # every (label, category present on its item) pair
        cnt = np.diff(C.indptr)[it]
        lab = np.repeat(np.arange(it.size), cnt)
        starts = np.repeat(C.indptr[it], cnt)
        offs = np.arange(lab.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        cidx = C.indices[starts + offs]
        cval = C.data[starts + offs] - (cidx == y[lab])
        if "col" in layout:
            rows += [it, it[lab]]
            cols += [base + layout["row"].start + y, base[lab] + layout["col"].start + cidx]
            vals += [mm, cval]
        if "marg" in layout:
            rows += [it, it[lab]]
            cols += [base + layout["marg"].start + y, base[lab] + layout["marg"].start + cidx]
            vals += [mm, cval]
        if "conf" in layout:
            rows.append(it[lab])
            cols.append(base[lab] + layout["conf"].start + y[lab] * L + cidx)
            vals.append(cval)
    if "dis" in layout:
        dm = delta(level, cvals, n_categories=L)  # ordinal uses "conf", never this path
        Dy = np.asarray((C @ dm)[it, y]).ravel() if L else np.zeros(it.size)
        rows.append(it)
        cols.append(base + layout["dis"].start)
        vals.append(Dy)
    R = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, K * S))
    R.sum_duplicates()
    R.eliminate_zeros()
    return R, layout, S


def _sub_prep(prep: Prepared, lab: np.ndarray, owner: np.ndarray, n_items: int) -> Prepared:
    """The labels ``lab`` (indices into ``prep``) as a table of ``n_items`` items, label ``j`` on item
    ``owner[j]`` (non-decreasing); items may repeat source items or be empty."""
    r = np.bincount(owner, minlength=n_items).astype(np.float64)
    return dataclasses.replace(prep, item=owner, rater=prep.rater[lab], code=prep.code[lab], n_items=int(n_items),
                               clusters=None, r=r)


def _as_rows(M: Any) -> sp.csr_matrix:
    return M if sp.issparse(M) else sp.csr_matrix(np.asarray(M))


def _without_rows(prep: Prepared, rpos: np.ndarray, K: int, name: str, level: str | None,
                  weights: Any) -> sp.csr_matrix:
    """``D`` (n_items, K * s): for each rater ``k``, the pool statistics of ``k``'s items with ``k``
    minus the same without ``k`` (zero elsewhere).

    All raters at once: one pseudo-item per (item, rater) label pair holds the item's labels without
    that rater, so one statistics pass over ``sum_i r_i (r_i - 1)`` labels gives every correction
    (the statistics are per item and depend only on the item's own labels: an additive spec). The
    rows "with ``k``" are the pool's own rows of those items.
    """
    n = prep.n_items
    full = make_spec(name, prep, level=level, weights=weights).stats()
    width = int(full.shape[1])
    if prep.item.size == 0 or K == 0:
        return sp.csr_matrix((n, K * width))
    indptr = np.searchsorted(prep.item, np.arange(n + 1))
    ks = np.sort(prep.item.astype(np.int64) * K + rpos)
    pairs = ks[np.r_[True, ks[1:] != ks[:-1]]]  # the distinct (item, rater) pairs, by item then rater
    p_item, p_k = pairs // K, pairs % K
    cnt = indptr[p_item + 1] - indptr[p_item]
    lab = np.repeat(indptr[p_item], cnt) + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    owner = np.repeat(np.arange(pairs.size), cnt)
    keep = rpos[lab] != p_k[owner]
    without = make_spec(name, _sub_prep(prep, lab[keep], owner[keep], pairs.size), level=level,
                        weights=weights).stats()
    if sp.issparse(full) or sp.issparse(without):
        Dk = (_as_rows(full)[p_item] - _as_rows(without)).tocoo()
        dr, dc, dv = Dk.row, Dk.col, Dk.data
    else:
        Dd = np.asarray(full)[p_item] - np.asarray(without)
        dr, dc = np.nonzero(Dd)
        dv = Dd[dr, dc]
    out = sp.csr_matrix((dv, (p_item[dr], dc + p_k[dr] * width)), shape=(n, K * width))
    out.eliminate_zeros()
    return out


def _codes(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_index=True, return_inverse=True)[1:]`` for integer keys in ``[0, space)``:
    the first position of each distinct key (in key order) and each key's rank, by counting instead of
    sorting when ``space`` is not much larger than ``key`` (22x faster on 8M labels; the same arrays)."""
    key = np.asarray(key, dtype=np.int64)
    if space > 4 * key.size + 1_000_000:
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        return first, inv.ravel()
    seen = np.zeros(space, dtype=bool)
    seen[key] = True
    inv = (np.cumsum(seen) - 1)[key]
    first = np.full(int(np.count_nonzero(seen)), key.size, dtype=np.int64)
    np.minimum.at(first, inv, np.arange(key.size))
    return first, inv


def _distinct(key: np.ndarray, space: int) -> bool:
    """Whether the integer keys in ``[0, space)`` are all different (``_codes(key, space)[0].size == key.size``
    without the first positions)."""
    if space > 4 * key.size + 1_000_000:
        return bool(np.unique(key).size == key.size)
    seen = np.zeros(space, dtype=bool)
    seen[key] = True
    return int(np.count_nonzero(seen)) == key.size


def _co_labelled(item: np.ndarray, rpos: np.ndarray, K: int, n: int) -> np.ndarray:
    """``(K, K)`` int64: items labelled by both raters (diagonal: items labelled by the rater). Up to
    :data:`_PATTERN_RATERS` raters, from the counts of the items' sets of raters (one bit per rater);
    else a sparse incidence product. The same integers either way."""
    if K <= _PATTERN_RATERS:
        bits = np.zeros(n, dtype=np.int64)
        np.bitwise_or.at(bits, item, np.left_shift(np.int64(1), rpos.astype(np.int64)))
        cnt = np.bincount(bits, minlength=1 << K)
        onto = (np.arange(1 << K)[:, None] >> np.arange(K)) & 1          # (patterns, K)
        return (onto * cnt[:, None]).T @ onto
    inc = sp.csr_matrix((np.ones(item.size), (rpos, item)), shape=(K, n))
    inc.data[:] = 1.0
    return np.rint((inc @ inc.T).toarray()).astype(np.int64)


#: up to this many raters, who labelled an item together is counted by the items' sets of raters
_PATTERN_RATERS = 16

#: largest items x categories count matrix for grouping items by their label counts (else no factoring)
_PATTERN_CELLS = 50_000_000


def _segments(s_pool: int, K: int, S: int, has_pool: bool) -> np.ndarray:
    """Column segments of ``[pool | pair rows | without-k rows]``: the pool's columns (0), rater ``k``'s
    pair and without-k columns (``k + 1``)."""
    seg = [np.zeros(s_pool, dtype=np.int64), np.repeat(np.arange(1, K + 1), S)]
    if has_pool:
        seg.append(np.repeat(np.arange(1, K + 1), s_pool))
    return np.concatenate(seg)


def _blocks(prep: Prepared, rpos: np.ndarray, K: int, L: int, score: str, s_level: str, cvals: np.ndarray,
            coefficient: str, lvl: str, additive: bool) -> tuple[sp.csr_matrix, dict[str, slice], int, int | None]:
    """The item rows ``[pool | pair rows (K * S) | without-k rows (K * s)]`` (pool and without-k rows only
    for an additive pool coefficient), built directly."""
    R, layout, S = _pair_rows(prep, rpos, K, score, s_level, L, cvals)
    if not additive:
        return R, layout, S, None
    pool = _as_rows(make_spec(coefficient, prep, level=lvl).stats())
    D = _without_rows(prep, rpos, K, coefficient, lvl, None)
    return sp.hstack([pool, R, D], format="csr"), layout, S, int(pool.shape[1])


def _joint_rows(prep: Prepared, rpos: np.ndarray, K: int, L: int, score: str, s_level: str, cvals: np.ndarray,
                coefficient: str, lvl: str, additive: bool
                ) -> tuple[sp.csr_matrix, dict[str, slice], int, int | None, tuple[sp.csr_matrix, sp.csr_matrix] | None]:
    """The joint item rows ``X`` (see :func:`_blocks`) and, where pieces repeat, ``X = M @ G``.

    A rater's piece of an item row (its pair and without-k columns) depends only on the item's
    category counts and the rater's label, and the pool's piece only on the counts. So the distinct
    pieces are computed once, on one representative item each (``G``: pieces x columns), and ``M``
    (items x pieces) counts them: ``M`` has one non-zero per label plus one per item, and a bootstrap
    resample costs ``(w @ M) @ G``. With repeated (item, rater) labels, many categories, or pieces
    that hardly repeat, ``X`` is built directly and ``factors`` is None.
    """
    n, item, code = prep.n_items, prep.item, prep.code
    if item.size and n * L <= _PATTERN_CELLS and K:
        ks = item.astype(np.int64) * K + rpos
        if _distinct(ks, n * K):  # one label per (item, rater)
            C = np.bincount(item * L + code, minlength=n * L).reshape(n, L)
            base = int(C.max()) + 1
            if L * math.log2(base) < 62:  # each row's counts as one mixed-radix integer
                _, pat = np.unique(C @ (base ** np.arange(L, dtype=np.int64)), return_inverse=True)
            else:
                pat = row_codes(C)  # np.unique(C, axis=0)'s numbers, the rows hashed
            pat = pat.ravel()
            n_pat = int(pat.max()) + 1
            lfirst, ltype = _codes((rpos * n_pat + pat[item]) * L + code, K * n_pat * L)
            pfirst = _codes(pat, n_pat)[0] if additive else np.zeros(0, dtype=np.int64)
            T_l, T = lfirst.size, lfirst.size + pfirst.size
            if 2 * T <= item.size + (n if additive else 0):
                reps = np.unique(np.r_[item[lfirst], pfirst])
                indptr = np.searchsorted(item, np.arange(n + 1))
                cnt = indptr[reps + 1] - indptr[reps]
                lab = np.repeat(indptr[reps], cnt) + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))
                sub = _sub_prep(prep, lab, np.repeat(np.arange(reps.size), cnt), reps.size)
                Xs, layout, S, s_pool = _blocks(sub, rpos[lab], K, L, score, s_level, cvals, coefficient, lvl,
                                                additive)
                seg = _segments(int(s_pool or 0), K, S, s_pool is not None)
                # each piece: its representative's row, the columns of its segment
                Xt = Xs[np.searchsorted(reps, np.r_[item[lfirst], pfirst])].tocsr()
                target = np.r_[rpos[lfirst] + 1, np.zeros(pfirst.size, dtype=np.int64)]
                rr = np.repeat(np.arange(T), np.diff(Xt.indptr))
                keep = seg[Xt.indices] == target[rr]
                G = sp.csr_matrix((Xt.data[keep], (rr[keep], Xt.indices[keep])), shape=(T, Xs.shape[1]))
                mr = np.r_[item, np.arange(n)] if additive else item
                mc = np.r_[ltype, T_l + pat] if additive else ltype
                M = sp.csr_matrix((np.ones(mr.size), (mr, mc)), shape=(n, T))
                # pieces of different keys are often equal (S(k;pool)'s agreement piece depends only on
                # r_i and C_iy): merge equal rows of G (exact, hashed and checked by factor_rows)
                same = factor_rows(G, seg)
                if same is not None:
                    M, G = (M @ same[0]).tocsr(), same[1]
                return None, layout, S, s_pool, (M, G)  # X = M @ G, formed when asked (_RaterSpec.stats)
    X, layout, S, s_pool = _blocks(prep, rpos, K, L, score, s_level, cvals, coefficient, lvl, additive)
    return X, layout, S, s_pool, None


class _RaterSpec(engine.Spec):
    """Every per-rater quantity as one multi-output statistic for the shared bootstrap engine.

    Columns: ``[pool (s) | pair rows (K * S) | without-k corrections (K * s)]``; ``estimate`` maps
    ``(B, columns)`` sums to ``(B, 1 + 2K)``: the pool coefficient, ``S(k; pool)`` for each ``k``,
    and the pool coefficient without each ``k`` (nan where a block is absent).
    """

    name = _FUNC

    def __init__(self, prep: Prepared, pool: engine.Spec, X: sp.csr_matrix | None, s_pool: int | None, K: int,
                 layout: dict[str, slice], S: int, fin: dict[str, Any],
                 factors: tuple[sp.csr_matrix, sp.csr_matrix] | None = None) -> None:
        super().__init__(prep)
        self.pool, self.X, self.K, self.layout, self.S, self.fin = pool, X, K, layout, S, fin
        self.has_pool = s_pool is not None
        self.s_pool = int(s_pool or 0)
        self.out_shape = (1 + 2 * K,)
        self.column_segments = _segments(self.s_pool, K, S, self.has_pool)
        # X = M @ G by construction (see _joint_rows): the engine's index-free bootstrap uses them
        self.factors = factors

    def stats(self) -> Any:
        if self.X is None and self.factors is not None:
            self.X = (self.factors[0] @ self.factors[1]).tocsr()
        return self.X

    def totals(self) -> np.ndarray:
        if self.X is None and self.factors is not None:
            M, G = self.factors
            return np.asarray(G.T @ np.asarray(M.sum(axis=0)).ravel()).ravel()
        return np.asarray(self.stats().sum(axis=0)).ravel()

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        b, K, S, sp_ = sums.shape[0], self.K, self.S, self.s_pool
        out = np.full((b, 1 + 2 * K), np.nan)
        Rs = sums[:, sp_:sp_ + K * S].reshape(b, K, S)
        out[:, 1:1 + K] = pair_scores(Rs, self.layout, **self.fin)
        if self.has_pool:
            P = sums[:, :sp_]
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, 0] = self.pool.estimate(P)[0]
                Ds = sums[:, sp_ + K * S:].reshape(b, K, sp_)
                minus = (P[:, None, :] - Ds).reshape(b * K, sp_)
                out[:, 1 + K:] = self.pool.estimate(minus)[0].reshape(b, K)
        nanv = np.full(b, np.nan)
        return out, nanv, nanv



@dataclasses.dataclass
class _Setup:
    prep: Prepared
    K: int
    L: int
    rpos: np.ndarray
    lvl: str
    s_level: str
    pool_spec: engine.Spec
    spec: _RaterSpec
    layout: dict[str, slice]
    S: int
    additive: bool


def _setup(table: AnnotationTable, names: Sequence[str], score: str, coefficient: str, level: str | None) -> _Setup:
    """Selection, pool coefficient and the joint statistic (every per-rater number is a function of its sums)."""
    prep = prepare(table, raters=names, policy="exclude", func=_FUNC)
    K = len(prep.raters)
    L = table.n_categories
    pos_of = np.full(table.n_raters, -1, dtype=np.int64)
    pos_of[prep.rater_ids] = np.arange(K)
    rpos = pos_of[prep.rater]
    lvl = resolve_level(level, prep, _FUNC)
    s_level = lvl if score == "alpha" else "nominal"
    cvals = prep.cat_values.astype(float)
    pool_spec = make_spec(coefficient, prep, level=lvl)
    additive = engine.additive(pool_spec)
    X, layout, S, s_pool, factors = _joint_rows(prep, rpos, K, L, score, s_level, cvals, coefficient, lvl, additive)
    fin = dict(score=score, level=s_level, n_categories=L, category_values=cvals)
    spec = _RaterSpec(prep, pool_spec, X, s_pool, K, layout, S, fin, factors)
    return _Setup(prep=prep, K=K, L=L, rpos=rpos, lvl=lvl, s_level=s_level, pool_spec=pool_spec, spec=spec,
                  layout=layout, S=S, additive=additive)


# ----------------------------------------------------------------------------- the rule
def _rule_text(margin: float, significance_level: float, min_items: int) -> str:
    return (f"A rater is flagged when the one-sided bootstrap test of S(k; pool) - median of the other raters' "
            f"S >= -{margin:g} rejects at family-wise level {significance_level:g} (Holm over the evaluated "
            f"raters): the upper confidence bound of the gap lies below -{margin:g}. Raters with fewer than "
            f"{min_items} shared items are reported, not tested. Nominal rate: a rater whose gap is at least "
            f"-{margin:g} is flagged with probability <= {significance_level:g} in all (bootstrap approximation).")


def _competence(prep: Prepared, rpos: np.ndarray, K: int, L: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, str]:
    """Dawid-Skene accuracy and MACE competence of each rater (nan when not estimable)."""
    ds = np.full(K, np.nan)
    mc = np.full(K, np.nan)
    sub = prep.code < L
    if L < 2 or not np.any(sub):
        return ds, mc, "competence not estimated: fewer than two categories"
    if L > MAX_COMPETENCE_CATEGORIES:
        return ds, mc, (f"competence not estimated: {L} categories (Dawid-Skene and MACE fit a confusion matrix per "
                        f"annotator; at most {MAX_COMPETENCE_CATEGORIES} categories)")
    item, w, y = prep.item[sub], rpos[sub], prep.code[sub]
    f = dawid_skene_arrays(item, w, y, n_items=prep.n_items, n_workers=K, n_classes=L)
    err, prior = f["errors"], f["priors"]
    ds = np.einsum("c,kcc->k", prior, err)
    g = mace_arrays(item, w, y, n_items=prep.n_items, n_workers=K, n_classes=L, rng=rng)
    mc = 1.0 - g["spamming"]
    has = np.bincount(w, minlength=K) > 0
    ds[~has] = np.nan
    mc[~has] = np.nan
    notes = []
    if not f["converged"]:
        notes.append(f"Dawid-Skene stopped after {f['n_iter']} iterations without converging")
    if not g["converged"]:
        notes.append(f"MACE stopped after {g['n_iter']} iterations without converging")
    return ds, mc, "; ".join(notes)


def _loo_medians(X: np.ndarray) -> np.ndarray:
    """``M[b, j]``: the median of row ``b`` of ``X`` without column ``j``, nan ignored (``np.nanmedian``'s
    value; nan where the rest of the row is all nan).

    Rows without nan are sorted once: dropping the value of rank ``r_j`` leaves the sorted row with
    one gap, so the remaining ``E - 1`` values' middle one(s) are read at shifted positions (ties
    are harmless: dropping either of two equal values leaves the same values). Rows with nan
    (rare: a resample in which some S is undefined) go through ``np.nanmedian`` column by column.
    """
    Bn, E = X.shape
    out = np.full((Bn, E), np.nan)
    if E < 2 or Bn == 0:
        return out
    full = np.isfinite(X).all(axis=1)
    if full.any():
        Xf = X[full]
        order = np.argsort(Xf, axis=1, kind="stable")
        Xs = np.take_along_axis(Xf, order, axis=1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(E), order.shape), axis=1)

        def kth(q: int) -> np.ndarray:  # the q-th smallest of the row without column j, for each j
            return np.take_along_axis(Xs, q + (q >= rank), axis=1)

        m = E - 1
        out[full] = kth(m // 2) if m % 2 else (kth(m // 2 - 1) + kth(m // 2)) / 2.0
    rest = np.flatnonzero(~full)
    if rest.size:
        Xr = X[rest]
        some = np.isfinite(Xr)
        for j in range(E):
            keep = np.arange(E) != j
            ok = some[:, keep].any(axis=1)
            if ok.any():
                out[rest[ok], j] = np.nanmedian(Xr[ok][:, keep], axis=1)
    return out


def _check_margin(margin: Any) -> float:
    if isinstance(margin, bool) or not isinstance(margin, (int, float, np.integer, np.floating)) \
            or not (0.0 <= float(margin) < 1.0):
        raise InvalidParameterError(
            f"The 'margin' parameter of {_FUNC} must be a float in [0, 1). Got {margin!r} instead.")
    return float(margin)


def rater_diagnostics(table: AnnotationTable, *, raters: Sequence[str] | None = None, score: str = "agreement",
                      coefficient: str = "krippendorff_alpha", level: str | None = None, margin: float = 0.05,
                      significance_level: float = 0.05, min_items: int = 10, confidence_level: float = 0.95,
                      n_resamples: int = 2000, competence: bool = True,
                      rng: int | np.random.Generator | None = None) -> RaterDiagnosticsResult:
    r"""Each rater against the rest of the pool: agreement, effect on the pool, competence, outlier flag.

    For every rater :math:`k` of the pool (the humans by default):

    * :math:`S(k; P_k)`: the rater's agreement with the other raters, on the pair list of the
      leave-one-human-out rule (each item :math:`k` labelled gives one pair per other label on
      it); ``score`` as in :func:`voirdire.validation.leave_one_out`, so these are exactly the
      ``S(k;P)`` values the validation compares judges with;
    * the pool's ``coefficient`` without :math:`k`, and :math:`\Delta_k` = (without :math:`k`) −
      (with everyone): positive when the pool agrees more without the rater;
    * labels given, items shared with the pool, partners;
    * competence from the latent-class models: Dawid-Skene accuracy
      :math:`\sum_c \pi_c \theta_{k,cc}` and MACE's :math:`1 - s_k`.

    **Outlier rule.** With :math:`\tilde S_{-k}` the median of :math:`S(j; P_j)` over the other
    evaluated raters, the gap :math:`g_k = S(k; P_k) - \tilde S_{-k}` is tested against
    :math:`H_0: g_k \ge -m` (``margin``) with the bootstrap p-value
    :math:`p_k = (1 + \#\{b: g_k^{*b} \ge -m\}) / (1 + B)`, and Holm's step-down procedure at
    ``significance_level`` over the evaluated raters decides which are flagged. Equivalently,
    the upper confidence bound of the gap lies below :math:`-m`. A rater whose gap is at least
    :math:`-m` is flagged with probability at most ``significance_level`` (family-wise, to
    the bootstrap's approximation). The median is robust to the outlier itself; at least three
    evaluated raters are needed (with two, low agreement cannot say which rater is off).

    Parameters
    ----------
    table : AnnotationTable
        The labels.
    raters : sequence of str, optional
        The pool (default: the humans of the table; judges never join it unless named here).
    score : {"agreement", "alpha", "kappa", "ac1"}, default "agreement"
        The leave-one-out score S (the validation's default is observed agreement).
    coefficient : str, default "krippendorff_alpha"
        The pool coefficient recomputed without each rater; one of :data:`POOL_COEFFICIENTS`.
    level : str, optional
        Level of measurement of the pool coefficient and of ``score="alpha"`` (default: the
        table's scale).
    margin : float in [0, 1), default 0.05
        Smallest shortfall below the others' median worth flagging, in units of S.
    significance_level : float in (0, 1), default 0.05
        Family-wise error rate of the flags (Holm).
    min_items : int >= 1, default 10
        Raters with fewer items shared with the pool are reported but not tested.
    confidence_level : float in (0, 1), default 0.95
        Level of the percentile intervals.
    n_resamples : int >= 0, default 2000
        Bootstrap resamples of items (clusters when the table has them); 0 skips intervals
        and flags.
    competence : bool, default True
        Fit Dawid-Skene and MACE (nominal latent classes over the substantive categories).
    rng : int, Generator or None
        Randomness of the bootstrap and of MACE's restarts.

    Returns
    -------
    RaterDiagnosticsResult

    Raises
    ------
    InvalidParameterError
        Bad parameters, an unknown rater, fewer than two raters in the pool, or a coefficient
        that cannot be recomputed without a rater.

    Notes
    -----
    *A rater who disagrees may be the only one who is right.* The flag says the rater's labels
    differ from the pool's majority view by more than the margin, not that they are wrong:
    read the contested items (:func:`item_diagnostics`) before retraining, re-weighting or
    dropping anyone, and never drop silently. Raters that cannot be evaluated (no overlap,
    fewer than ``min_items`` items, undefined S) carry the reason in ``reason``; a
    coefficient left undefined without a rater (a pool of two) gives ``nan``.

    The per-rater numbers are exact: ``s`` equals the validation kernel's ``S(k;P)`` and
    ``pool_without`` equals the coefficient recomputed from scratch without the rater (tests
    check both to 1e-12). Ordinal alpha's mid-ranks (and ratio alpha's nodes) depend on every
    label, so the pool without each rater is its own coefficient, recomputed from scratch and
    resampled in the same joint bootstrap (slower: one re-ranking per rater and resample).

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> d = rater_diagnostics(t, n_resamples=200, competence=False, rng=0)
    >>> len(d.raters), bool(d.flagged.any())
    (3, False)
    """
    if not isinstance(table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'table' parameter of {_FUNC} must be an AnnotationTable (see voirdire.data.read_annotations). "
            f"Got {type(table).__name__} instead.")
    if score not in SCORES:
        raise InvalidParameterError(
            f"The 'score' parameter of {_FUNC} must be one of {list(SCORES)}. Got {score!r} instead.")
    if coefficient not in POOL_COEFFICIENTS:
        raise InvalidParameterError(
            f"The 'coefficient' parameter of {_FUNC} must be one of {list(POOL_COEFFICIENTS)} (a coefficient "
            f"defined for any number of raters). Got {coefficient!r} instead.")
    margin = _check_margin(margin)
    significance_level = check_probability(significance_level, "significance_level", _FUNC)
    min_items = check_positive_int(min_items, "min_items", _FUNC)
    confidence_level = check_confidence_level(confidence_level, _FUNC)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0 \
            or 0 < n_resamples < 20:
        raise InvalidParameterError(
            f"The 'n_resamples' parameter of {_FUNC} must be 0 or an integer >= 20. Got {n_resamples!r} instead.")
    gen = as_generator(rng)
    names = list(table.humans) if raters is None else ([raters] if isinstance(raters, str) else list(raters))
    if len(names) < 2:
        raise InvalidParameterError(
            f"{_FUNC} needs a pool of at least two raters; {table.source} has {len(names)} "
            f"({names}). Name them with raters=[...] (judges are left out by default).")
    st = _setup(table, names, score, coefficient, level)
    prep, K, L, rpos, lvl, pool_spec, spec, layout, S = (st.prep, st.K, st.L, st.rpos, st.lvl, st.pool_spec,
                                                          st.spec, st.layout, st.S)
    s_level, coef_level, additive = st.s_level, pool_spec.level, st.additive

    # counts: labels, overlap, partners
    n_labels = np.bincount(rpos, minlength=K).astype(np.int64)
    shared = prep.r[prep.item] >= 2
    n_items = np.bincount(rpos[shared], minlength=K).astype(np.int64)
    co = _co_labelled(prep.item, rpos, K, prep.n_items)
    n_partners = (co > 0).sum(axis=1) - (np.diag(co) > 0)

    tot = spec.totals()
    point = spec.estimate(tot.reshape(1, -1))[0][0]
    s = point[1:1 + K]
    n_pairs = np.rint(tot[spec.s_pool:spec.s_pool + K * S].reshape(K, S)[:, layout["n_pairs"].start]).astype(np.int64)
    if additive:
        pool_without = point[1 + K:]
    else:
        # ordinal (mid-ranks of the pooled marginals) and ratio alpha (nodes from the whole table): the
        # pool without k is its own coefficient, recomputed from scratch, and joins the joint bootstrap
        pool_without = np.full(K, np.nan)
        without_specs: list[engine.Spec] = []
        for k in range(K):
            others = [nm for j, nm in enumerate(prep.raters) if j != k]
            pk = prepare(table, raters=others, policy="exclude", func=_FUNC)
            sk = make_spec(coefficient, pk, level=lvl)
            without_specs.append(sk)
            pool_without[k] = float(sk.estimate(sk.totals().reshape(1, -1))[0][0])
    pool_est = float(pool_spec.estimate(pool_spec.totals().reshape(1, -1))[0][0])
    delta = pool_without - pool_est

    mask = (prep.r >= 2) | pool_spec.unit_mask()
    unit, n_units, unit_kind = unit_map(mask, prep.clusters)
    B = n_resamples
    boots = np.full((B, 1 + 2 * K), np.nan)
    law: tuple[np.ndarray, np.ndarray] | None = None
    if B and n_units >= 2 and additive:
        if n_units >= NORMAL_MIN_UNITS:
            # many units behind every number: the joint normal law of the 1 + 2K outputs (delta method)
            # stands in for the bootstrap (docs/validation.md "Large tables"); draws of it give the p-values
            def est_of(x: np.ndarray) -> np.ndarray:
                return spec.estimate(x)[0]

            fac = spec.factors
            est_l, cov_l, cnt_l = (linearised_law(unit_sums(spec.stats(), unit, n_units), est_of) if fac is None
                                   else linearised_law(None, est_of, factors=(unit_sums(fac[0], unit, n_units), fac[1])))
            if normal_law_applies(est_l, cnt_l, min_units=NORMAL_MIN_UNITS):
                law = (est_l, cov_l)
                boots = normal_draws(est_l, cov_l, B, gen)
        if law is None:
            st = unit_sums(spec.stats(), unit, n_units)
            boots = engine.bootstrap([spec], [st], unit, n_units, B, gen)[0]
    elif B and n_units >= 2:
        # one joint bootstrap: the pair rows, the pool and the pool without each rater share every resample
        specs = [spec, pool_spec, *without_specs]
        stats = [unit_sums(x.stats(), unit, n_units) for x in specs]
        jb = engine.bootstrap(specs, stats, unit, n_units, B, gen)
        boots = jb[0]
        boots[:, 0] = jb[1]
        boots[:, 1 + K:] = np.column_stack(jb[2:]) if K else boots[:, 1 + K:]
    lo_q, hi_q = (1 - confidence_level) / 2, (1 + confidence_level) / 2

    def _ci(x: np.ndarray, est: np.ndarray, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        low = np.full(est.shape, np.nan)
        high = np.full(est.shape, np.nan)
        if law is not None and rows is not None:
            # normal intervals of the linear combinations ``rows`` of the outputs: est +- z * sd
            sd = np.full(est.shape, np.nan)
            for r, row in enumerate(rows):  # nan only where an output the row takes is undefined
                ix = np.flatnonzero(row)
                sd[r] = np.sqrt(row[ix] @ law[1][np.ix_(ix, ix)] @ row[ix])
            zq = float(ndtri(hi_q))
            fin = np.isfinite(est) & np.isfinite(sd)
            low[fin], high[fin] = est[fin] - zq * sd[fin], est[fin] + zq * sd[fin]
            return low, high
        fin = np.isfinite(x)
        full = fin.all(axis=0) & np.isfinite(est)
        if x.shape[0] >= 2 and full.any():
            low[full], high[full] = np.quantile(x[:, full], [lo_q, hi_q], axis=0)
        for k in np.flatnonzero(~full & np.isfinite(est)):
            col = x[fin[:, k], k]
            if col.size >= 2:
                low[k], high[k] = np.quantile(col, [lo_q, hi_q])
        return low, high

    eye = np.eye(1 + 2 * K)
    s_low, s_high = _ci(boots[:, 1:1 + K], s, eye[1:1 + K])
    # the pool, the pool without each rater and their difference: percentile intervals of the joint bootstrap
    p_low, p_high = _ci(boots[:, :1], np.array([pool_est]), eye[:1])
    interval_method = "percentile bootstrap" if law is None else NORMAL_METHOD
    pool_ci = ConfidenceInterval(low=float(p_low[0]), high=float(p_high[0]), confidence_level=confidence_level,
                                 method=interval_method)
    pw_low, pw_high = _ci(boots[:, 1 + K:], pool_without, eye[1 + K:])
    d_low, d_high = _ci(boots[:, 1 + K:] - boots[:, :1], delta, eye[1 + K:] - eye[:1])

    # who can be evaluated
    reasons: list[str | None] = []
    evaluated = np.zeros(K, dtype=bool)
    for k in range(K):
        if n_labels[k] == 0:
            reasons.append("gave no label (abstentions only, or not in the table's labels)")
        elif n_items[k] == 0:
            reasons.append("shares no item with another rater: no agreement can be measured")
        elif n_items[k] < min_items:
            reasons.append(f"only {int(n_items[k])} item(s) shared with the pool < min_items={min_items}: "
                           f"reported, not tested")
        elif not math.isfinite(s[k]):
            reasons.append(f"S(k; pool) ({score}) is undefined: the pairs show no variation")
        else:
            reasons.append(None)
            evaluated[k] = True
    typical = np.full(K, np.nan)
    gap = np.full(K, np.nan)
    pval = np.full(K, np.nan)
    flagged = np.zeros(K, dtype=bool)
    ev = np.flatnonzero(evaluated)
    note = ""
    if ev.size >= 3:
        med = _loo_medians(boots[:, 1 + ev]) if B else None
        for j, k in enumerate(ev.tolist()):
            others = ev[ev != k]
            typical[k] = float(np.median(s[others]))
            gap[k] = s[k] - typical[k]
            if med is not None:
                # resamples in which k's S is defined; the others' median over those defined in the resample
                ok = np.isfinite(boots[:, 1 + k]) & np.isfinite(med[:, j])
                gb = boots[ok, 1 + k] - med[ok, j]
                if gb.size:
                    pval[k] = (1.0 + np.count_nonzero(gb >= -margin - 1e-12)) / (1.0 + gb.size)
        if B:
            flagged[ev] = rejected_flags(pval[ev], significance_level, correction="holm")
    else:
        note = (f"only {ev.size} rater(s) can be evaluated: with fewer than three there is no typical value to fall "
                f"below (with two raters, low agreement cannot say which one is off); no rater is flagged")
        for k in ev.tolist():
            reasons[k] = "not tested: " + note.split(": ", 1)[1].split("; no rater")[0]
    if not B:
        note = "n_resamples=0: no intervals and no flags"
    elif ev.size >= 3 and 1.0 / (1.0 + B) > significance_level / ev.size:
        note = (f"with {B} resamples the smallest attainable p-value, {1.0 / (1.0 + B):.2g}, is above the first Holm "
                f"threshold {significance_level / ev.size:.2g}: no rater can be flagged; use at least "
                f"{int(math.ceil(ev.size / significance_level))} resamples")
    srt = np.sort(np.where(np.isnan(pval[ev]), np.inf, pval[ev])) if ev.size else np.array([])
    for k in np.flatnonzero(flagged).tolist():
        rank = int(np.searchsorted(srt, pval[k], side="left"))
        thr = significance_level / (ev.size - rank)
        reasons[k] = (f"S(k; pool) = {s[k]:.3f} [{s_low[k]:.3f}, {s_high[k]:.3f}] lies {typical[k] - s[k]:.3f} below "
                      f"the median of the other raters ({typical[k]:.3f}), more than the margin {margin:g}: bootstrap "
                      f"p = {pval[k]:.2g} <= Holm threshold {thr:.2g}"
                      + (f"; the pool's {coefficient} goes from {pool_est:.3f} to {pool_without[k]:.3f} without "
                         f"this rater" if math.isfinite(pool_without[k]) and math.isfinite(pool_est) else ""))
    ds_acc = np.full(K, np.nan)
    mace = np.full(K, np.nan)
    if competence:
        ds_acc, mace, cnote = _competence(prep, rpos, K, L, gen)
        if cnote:
            note = (note + "; " if note else "") + cnote
    for k in range(K):
        if not math.isfinite(pool_without[k]) and reasons[k] is None and math.isfinite(pool_est):
            pass  # the rater is evaluated; only the pool coefficient without it is undefined
    if not math.isfinite(pool_est):
        note = (note + "; " if note else "") + f"the pool's {coefficient} is undefined on these labels"
    elif not np.all(np.isfinite(pool_without)):
        bad = [prep.raters[k] for k in range(K) if not math.isfinite(pool_without[k])]
        note = (note + "; " if note else "") + (
            f"the pool's {coefficient} is undefined without {bad} (the rest of the pool has no item with two "
            f"labels, or no variation)")
    return RaterDiagnosticsResult(
        raters=tuple(prep.raters), score=score, level=s_level, coefficient=coefficient, coefficient_level=coef_level,
        pool=pool_ci, pool_estimate=pool_est, n_labels=n_labels, n_items=n_items,
        n_partners=n_partners.astype(np.int64), n_pairs=n_pairs, s=s, s_low=s_low, s_high=s_high,
        typical=typical, gap=gap, p_value=pval, pool_without=pool_without, pool_without_low=pw_low,
        pool_without_high=pw_high, delta=delta, delta_low=d_low, delta_high=d_high, ds_accuracy=ds_acc,
        mace_competence=mace, evaluated=evaluated, flagged=flagged, reason=tuple(reasons), margin=margin,
        significance_level=significance_level, min_items=min_items,
        rule=_rule_text(margin, significance_level, min_items), note=note, confidence_level=confidence_level,
        n_resamples=B, resampling_unit=unit_kind, n_units=n_units, n_items_total=prep.n_items,
        interval_method=interval_method,
    )
