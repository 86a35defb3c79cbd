"""The private core: per-item sufficient statistics, every coefficient from their sums, the
item/cluster bootstrap (one weight-matrix product per block of resamples) and the analytic SEs.

Every coefficient is a ``_Spec``: ``stats()`` gives an ``(n_items, k)`` matrix of per-item
sufficient statistics (dense or sparse); ``estimate(sums)`` maps ``(B, k)`` sums to ``(B,)``
estimates (the point estimate is ``estimate`` of the column sums, a bootstrap resample is
``estimate(W @ stats)`` with ``W`` the resample's multiplicity of each unit); ``influence()``
gives Gwet's (or Fleiss-Cohen-Everitt's) per-item linearisation for the analytic SE.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._checks import as_generator, undefined
from .._results import ConfidenceInterval
from .._stats import intervals as _iv
from .._stats.linalg import dot as _dot
from .._stats.parallel import both, by_halves, two_cores
from .._stats.resampling import draw_counts, type_counts, unit_map, unit_sums, weight_key, weighted_sums
from .._stats.resampling import unit_types as _unit_types
from ..exceptions import DegenerateDataWarning, InvalidParameterError, SmallSampleWarning
from ._prepare import Prepared
from ._results import AgreementResult
from ._weights import distance_matrix, weight_matrix

_BLOCK_CELLS = 4_000_000  # weight-matrix entries per block of resamples


# ----------------------------------------------------------------------------- helpers
# From this many units on, continuous data are resampled with independent unit weights (see
# _poisson): O(units x resamples) byte draws instead of index draws and counting. Below it the
# classical multinomial bootstrap is cheap, and it is the reference at small n.
_POISSON_MIN_UNITS = 20_000
_DENSE_CELLS = 20_000_000  # per-item count matrices up to this size are dense


def _counts(prep: Prepared, mask: np.ndarray | None = None) -> Any:
    """(n_items, q) category counts per item: dense when small, sparse CSR otherwise."""
    item, code = (prep.item, prep.code) if mask is None else (prep.item[mask], prep.code[mask])
    nI, q = prep.n_items, prep.q
    if nI * q <= _DENSE_CELLS:
        key = item * q
        key += code
        return np.bincount(key, minlength=nI * q).reshape(nI, q).astype(np.float64)
    return sp.csr_matrix((np.ones(item.shape[0]), (item, code)), shape=(nI, q))


def _value_sums(item: np.ndarray, code: np.ndarray, v: np.ndarray, n_items: int,
                labels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-item sums of the label values ``v[code]`` and of their squares (the two on two threads).

    ``labels``: ``v[code]`` itself when the caller has it from the labels' own values (read in
    order, no gather of ``v`` at scattered codes: many distinct values make that gather the cost).
    """
    if labels is not None:
        x = labels
        return both(lambda: np.bincount(item, weights=x, minlength=n_items),
                    lambda: np.bincount(item, weights=x * x, minlength=n_items), int(code.shape[0]))

    def sums(x: np.ndarray) -> np.ndarray:
        return np.bincount(item, weights=x[code], minlength=n_items)  # (np.take would copy int32 codes to int64)

    return both(lambda: sums(v), lambda: sums(v * v), int(code.shape[0]))


#: labels from which :func:`_label_scores` standardises the labels' own values (below, the
#: gather of the categories' standardised values costs no more; above, even five categories'
#: gather, which converts every code to an index, costs more than two passes over the values)
_LABEL_VALUES_MIN = 65_536


def _label_scores(prep: Prepared, center: float, scale: float, L: int) -> np.ndarray | None:
    """``v[prep.code]`` for ``v`` the categories' standardised values ``(cv - center) / scale`` and
    0 for the abstention class (code ``L``), computed from the labels' own values in order: the
    same operation on the same operands, so the same bits, without converting the categories or
    reading ``v`` at scattered codes. None when there are few labels, no label values, or a sample
    of labels disagrees with its category's value (``values`` that do not match the categories)."""
    lv, code = prep.label_values, prep.code
    n = int(code.shape[0])
    if lv is None or n < _LABEL_VALUES_MIN or lv.shape[0] != n:
        return None
    cats = prep.categories
    for j in np.linspace(0, n - 1, 257).astype(np.int64).tolist():
        c = int(code[j])
        if c < L and not float(lv[j]) == float(cats[c]):  # (the abstention class has no value)
            return None
    x = lv - center
    x /= scale
    if L < prep.q:  # the abstention class (disagree policy): its labels carry nan, scored 0
        x[code >= L] = 0.0
    return x


def _rowdot(N: Any, M: np.ndarray, r: np.ndarray | None = None) -> np.ndarray:
    """``diag(N M N^T)`` for a dense or sparse N and a dense square M.

    ``M = a I + b 1 1^T`` (identity weights, nominal distances) takes a fast path:
    ``a sum_k n_ik^2 + b r_i^2``.
    """
    q = M.shape[0]
    if q:
        b = M[0, 1] if q > 1 else 0.0
        a = M[0, 0] - b
        if np.array_equal(M, a * np.eye(q) + b):
            sq = N.multiply(N).sum(axis=1) if sp.issparse(N) else np.einsum("ik,ik->i", N, N)
            out = a * np.asarray(sq).ravel()
            if b:
                if r is None:
                    r = np.asarray(N.sum(axis=1)).ravel()
                out += b * r * r
            return out
    NM = N @ M
    if sp.issparse(N):
        return np.asarray(N.multiply(NM).sum(axis=1)).ravel()
    return np.einsum("ik,ik->i", NM, N)


def _sumsq(N: Any) -> np.ndarray:
    """Per-row sum of squared counts."""
    if sp.issparse(N):
        return np.asarray(N.multiply(N).sum(axis=1)).ravel()
    return np.einsum("ik,ik->i", N, N)


def _scale_rows(N: Any, v: np.ndarray) -> Any:
    return sp.diags(v) @ N if sp.issparse(N) else N * v[:, None]


def _colsum(N: Any) -> np.ndarray:
    return np.asarray(N.sum(axis=0)).ravel()


def _hstack(cols: Sequence[Any]) -> Any:
    if any(sp.issparse(c) for c in cols):
        return sp.hstack([c if sp.issparse(c) else sp.csr_matrix(np.asarray(c).reshape(-1, 1) if np.ndim(c) == 1 else c)
                          for c in cols], format="csr")
    return np.column_stack(cols)


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b``, ``nan`` where ``b == 0`` (the same quotient elsewhere)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.true_divide(a, b)
    q = np.asarray(q)
    if q.ndim == 0:
        return np.asarray(np.nan if b == 0 else q)
    zero = np.broadcast_to(np.asarray(b) == 0, q.shape)
    if zero.any():
        q[zero] = np.nan
    return q


# ----------------------------------------------------------------------------- specs
class _Spec:
    name: str = ""
    level: str = ""
    fce = False  # Fleiss-Cohen-Everitt variance convention (sum e^2 / n^2) instead of Gwet's
    # The coefficient's proven lower bound on any data (every coefficient here is at most 1). Fleiss'
    # kappa, Conger's kappa, alpha and the weighted chance-corrected coefficients have none: pe can
    # exceed 1/2 on sparse or weighted tables, and (pa - pe) / (1 - pe) then falls below -1.
    floor = -math.inf
    # Rows that stand for several identical items (a streamed table keeps each distinct row of
    # per-item statistics once, with its count): each row's count, or None (a row per item).
    # Sums over items are then count-weighted sums over rows; the bootstrap, the jackknife and the
    # analytic SE give what the items written out one by one give (run()).
    w: np.ndarray | None = None

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.r = prep.r

    def _wt(self, x: np.ndarray) -> np.ndarray:
        """``x`` times each row's count (``x`` itself when a row is an item)."""
        return x if self.w is None else x * self.w

    def _wsum(self, x: np.ndarray) -> float:
        return float(x.sum()) if self.w is None else _dot(x, self.w)

    def _wcount(self, mask: np.ndarray) -> int:
        return int(np.count_nonzero(mask)) if self.w is None else int(round(float(self.w[mask].sum())))

    # which items carry information (the resampling units are built from them)
    def unit_mask(self) -> np.ndarray:
        return self.r >= 1

    def n_items_used(self) -> int:
        return self._wcount(self.r >= 2)

    def n_pairs(self) -> int:
        r = self.r
        return int(np.sum(r * (r - 1) / 2)) if self.w is None else int(round(float((r * (r - 1) / 2) @ self.w)))

    def stats(self) -> Any:
        raise NotImplementedError

    def totals(self) -> np.ndarray:
        """Column sums of ``stats()`` (override when they are cheaper to get directly)."""
        return np.asarray(self.stats().sum(axis=0)).ravel()

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def undefined_reason(self, sums: np.ndarray) -> str:
        return f"{self.name} is undefined on these data (zero denominator)"

    def from_weights(self, W: np.ndarray, unit_stats: Any) -> np.ndarray:
        sums = W @ unit_stats if not sp.issparse(unit_stats) else (unit_stats.T @ W.T).T
        return self.estimate(np.asarray(sums))[0]

    def influence(self, est: float) -> tuple[np.ndarray, int, np.ndarray] | None:
        """Per-item linearised contributions ``e_i`` (mean zero), ``n`` and the centre."""
        return None

    def loo_from_weights(self, W: np.ndarray, unit_stats: Any, unit_of_item: np.ndarray | None = None) -> np.ndarray:
        """Leave-one-out estimates of each resample: ``(b, n)``, entry ``(r, j)`` drops one copy of unit ``j``.

        ``W`` holds ``b`` resamples' multiplicities of the ``n`` rows of ``unit_stats`` (units, or
        types of identical units); entries where ``W[r, j] == 0`` are not defined (``nan``). With
        ``W`` a row of ones this is the jackknife. Sums of sufficient statistics make it cheap:
        ``estimate(W @ S - S_j)``, O(b n k).
        """
        S = unit_stats.toarray() if sp.issparse(unit_stats) else np.asarray(unit_stats)
        b, n = W.shape
        sums = W @ S
        k = S.shape[1]
        if b == 1:  # the jackknife: one (n, k) array of totals less each unit, laid out as S is
            T = np.empty_like(S)  # (columns contiguous for a column-major S)
            np.subtract(sums[0], S, out=T)
            one = self.estimate(T)[0]
            one[W[0] <= 0] = np.nan
            return one[None, :]
        out = np.full((b, n), np.nan)
        step = max(1, _BLOCK_CELLS // max(n * k, 1))
        for s0 in range(0, b, step):
            T = sums[s0:s0 + step, None, :] - S[None, :, :]
            out[s0:s0 + step] = self.estimate(T.reshape(-1, k))[0].reshape(-1, n)
        out[W <= 0] = np.nan
        return out


class _GwetFamily(_Spec):
    """Percent agreement, Fleiss' kappa, Gwet's AC1/AC2 and Brennan-Prediger, as in Gwet (2014)."""

    def __init__(self, prep: Prepared, kind: str, weights: Any, func: str) -> None:
        super().__init__(prep)
        self.kind = kind
        self.name = func
        # identity weights (unless abstentions get no self-credit under "disagree") need no q x q
        # matrix: this keeps free-text labels with thousands of categories cheap
        self.identity = (weights is None or (isinstance(weights, str) and weights == "identity")) and not (
            prep.abst_code is not None and prep.policy == "disagree")
        if self.identity:
            self.W, self.level = None, "identity"
        else:
            self.W, self.level = weight_matrix(weights, prep, func)
        self.N = _counts(prep)
        r = self.r
        if self.W is None:
            self.sum_q = _sumsq(self.N) - r
        else:
            self.sum_q = _rowdot(self.N, self.W) - np.asarray(self.N @ np.diag(self.W)).ravel()
        self.inv_r = np.where(self.r > 0, 1.0 / np.where(self.r > 0, self.r, 1.0), 0.0)
        self.e2 = (r >= 2).astype(float)
        self.e1 = (r >= 1).astype(float)
        self.pa_i = np.where(r >= 2, self.sum_q / np.where(r >= 2, r * (r - 1), 1.0), 0.0)
        self.q = prep.q
        self.Tw = float(prep.q) if self.W is None else float(self.W.sum())
        if kind == "pa":
            self.floor = 0.0
        elif kind in ("ac", "bp") and _identity_like(self.W):
            self.floor = -1.0  # pe <= 1/q <= 1/2 (Gwet's AC1, Brennan-Prediger): at least -1

    def stats(self) -> Any:
        Nr = _scale_rows(self.N, self.inv_r)
        if sp.issparse(Nr) and self.q <= 64:
            Nr = Nr.toarray()
        return _hstack([self.e2, self.pa_i, self.e1, Nr])

    def totals(self) -> np.ndarray:
        return np.concatenate([[self.e2.sum(), self.pa_i.sum(), self.e1.sum()],
                               np.asarray(self.N.T @ self.inv_r).ravel()])

    def _pe(self, pi: np.ndarray) -> np.ndarray:
        if self.kind == "pa":
            return np.zeros(pi.shape[0])
        if self.kind == "fleiss":
            if self.W is None:
                return np.einsum("bk,bk->b", pi, pi)
            return np.einsum("bk,kl,bl->b", pi, self.W, pi)
        if self.kind == "ac":
            if self.q < 2:
                return np.full(pi.shape[0], np.nan)
            return self.Tw * np.sum(pi * (1 - pi), axis=1) / (self.q * (self.q - 1))
        if self.kind == "bp":
            if self.q < 2:
                return np.full(pi.shape[0], np.nan)
            return np.full(pi.shape[0], self.Tw / self.q ** 2)
        raise AssertionError(self.kind)  # pragma: no cover

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pa = _safe_div(sums[:, 1], sums[:, 0])
        pi = sums[:, 3:] / np.where(sums[:, 2:3] > 0, sums[:, 2:3], np.nan)
        pe = self._pe(pi)
        if self.kind == "pa":
            return pa, pa, pe
        est = _safe_div(pa - pe, 1 - pe)
        return est, pa, pe

    def undefined_reason(self, sums: np.ndarray) -> str:
        if sums[0, 0] == 0:
            return f"{self.name} is undefined: no item has two or more labels"
        if self.kind in ("ac", "bp") and self.q < 2:
            return f"{self.name} is undefined: the scale has fewer than two categories"
        return (f"{self.name} is undefined: chance agreement is 1 (every label falls in one category), "
                f"so (pa - pe) / (1 - pe) is 0/0")

    def influence(self, est: float) -> tuple[np.ndarray, int, np.ndarray] | None:
        m = self.e1 > 0
        n = self._wcount(m)
        n2 = self._wcount(self.e2 > 0)
        if n < 2 or n2 == 0:
            return None
        r = np.where(m, self.r, 1.0)
        pi = np.asarray(self.N.T @ self._wt(self.inv_r)).ravel() / n
        pa = self._wsum(self.pa_i) / n2
        pe = float(self._pe(pi[None, :])[0])
        if not np.isfinite(pe) or pe == 1:
            return None
        k_i = (n / n2) * (self.pa_i - pe * self.e2) / (1 - pe)
        if self.kind == "pa":
            x = (n / n2) * self.pa_i
            return np.where(m, x - pa, 0.0), n, m
        if self.kind == "bp":
            return np.where(m, k_i - est, 0.0), n, m
        if self.kind == "fleiss":
            piw = pi if self.W is None else (self.W @ pi + self.W.T @ pi) / 2
            pe_i = np.asarray(self.N @ piw).ravel() / r
        else:  # ac
            pe_i = (self.Tw / (self.q * (self.q - 1))) * np.asarray(self.N @ (1 - pi)).ravel() / r
        x = k_i - 2 * (1 - est) * (pe_i - pe) / (1 - pe)
        return np.where(m, x - est, 0.0), n, m


def _alpha_influence(r: np.ndarray, d: np.ndarray, nDpi: np.ndarray, m: np.ndarray, rbar: float, pa: float,
                     pe: float, a1: float) -> np.ndarray:
    """Gwet's (2014) linearised contributions of Krippendorff's alpha, minus their mean ``a1``.

    With ``pa_i = r_i (1 - pa)/rbar - d_i/rbar + pa`` and ``pe_i = r_i (1 - pe)/rbar - (n_i D pi)/rbar + pe``,
    ``x_i = [pa_i - pe - 2 (1 - a1)(pe_i - pe)] / (1 - pe)`` is affine in ``(r_i, d_i, n_i D pi)``.
    """
    den = 1 - pe
    c0 = (pa - pe) / den - a1
    cr = ((1 - pa) - 2 * (1 - a1) * (1 - pe)) / (rbar * den)
    cd = -1.0 / (rbar * den)
    cn = 2 * (1 - a1) / (rbar * den)
    e = cr * r
    e += cd * d
    e += cn * nDpi
    e += c0
    e *= m
    return e


class _AlphaMatrix(_Spec):
    """Krippendorff's alpha with a q x q distance matrix (nominal; ratio on few values)."""

    def __init__(self, prep: Prepared, level: str, func: str) -> None:
        super().__init__(prep)
        self.name, self.level = func, level
        # nominal distances without the disagree class are 1 - I: no q x q matrix is built
        self.plain_nominal = level == "nominal" and not (prep.abst_code is not None and prep.policy == "disagree")
        self.D = None if self.plain_nominal else distance_matrix(level, prep)
        self.N = _counts(prep)
        r = self.r
        self.pair = r >= 2
        if self.D is None:
            within = r * r - _sumsq(self.N)
        else:
            within = _rowdot(self.N, self.D, r)
            if np.any(np.diag(self.D)):
                within -= np.asarray(self.N @ np.diag(self.D)).ravel()
        self.d = np.where(self.pair, within / np.where(self.pair, r - 1, 1.0), 0.0)
        self.pf = self.pair.astype(np.float64)
        self.c_pair = np.asarray(self.N.T @ self.pf).ravel()  # pooled counts of the pairable values

    def unit_mask(self) -> np.ndarray:
        return self.pair

    def stats(self) -> Any:
        p = self.pair.astype(float)
        Np = _scale_rows(self.N, p)
        if sp.issparse(Np) and self.prep.q <= 64:
            Np = Np.toarray()
        return _hstack([self.r * p, self.d, Np])

    def totals(self) -> np.ndarray:
        return np.concatenate([[_dot(self.r, self.pf), self.d.sum()], self.c_pair])

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = sums[:, 0]
        c = sums[:, 2:]
        if self.D is None:
            de_num = n * n - np.einsum("bk,bk->b", c, c)
        else:
            de_num = np.einsum("bk,kl,bl->b", c, self.D, c) - c @ np.diag(self.D)
        do = _safe_div(sums[:, 1], n)
        de = _safe_div(de_num, n * (n - 1))
        est = 1 - _safe_div(do, de)
        est = np.where(n >= 2, est, np.nan)
        return est, do, de

    def undefined_reason(self, sums: np.ndarray) -> str:
        if sums[0, 0] < 2:
            return f"{self.name} is undefined: no item has two or more labels"
        return (f"{self.name} is undefined: expected disagreement is 0 (every pairable label has the "
                f"same value)")

    def influence(self, est: float) -> tuple[np.ndarray, int, np.ndarray] | None:
        # Gwet (2014) linearisation of alpha, with agreement weights W = 1 - D.
        m = self.pair
        n = self._wcount(m)
        if n < 2:
            return None
        r, d = self.r, self.d  # d is 0 off the pairable items
        rsum = _dot(r, self._wt(self.pf))
        rbar = rsum / n
        eps = 1.0 / rsum
        pa1 = (rsum - self._wsum(d)) / (n * rbar)
        pa = (1 - eps) * pa1 + eps
        c_pair = self.c_pair if self.w is None else np.asarray(self.N.T @ self._wt(self.pf)).ravel()
        pi = c_pair / (n * rbar)
        Dpi = (pi.sum() - pi) if self.D is None else self.D @ pi
        pe = 1.0 - float(pi @ Dpi)
        if pe >= 1:
            return None
        a1 = (pa1 - pe) / (1 - pe)
        nDpi = np.asarray(self.N @ Dpi).ravel()
        return _alpha_influence(r, d, nDpi, m, rbar, pa, pe, a1), n, m


def _alpha_from_moments(n: np.ndarray, sd: np.ndarray, M: np.ndarray, S1: np.ndarray, S2: np.ndarray,
                        A: np.ndarray, delta: Any, *, floor: np.ndarray) -> tuple[np.ndarray, ...]:
    """Alpha, D_o and D_e from the summed moments of interval-type alpha (interval alpha, and ordinal
    alpha on mid-ranks): ``D_e`` numerator ``2 (M S2 - S1^2) + delta (2 A M + A (A - 1))``, set to 0
    below ``1e-12`` of ``floor`` (the scale of its rounding error)."""
    de_num = 2 * (M * S2 - S1 * S1)
    if not (np.ndim(delta) == 0 and delta == 0):  # (adding 0 * finite changes no bit: skipped)
        de_num = de_num + delta * (2 * A * M + A * (A - 1))
    de_num = np.where(de_num > 1e-12 * np.maximum(floor, 1.0), de_num, 0.0)
    do = _safe_div(sd, n)
    de = _safe_div(de_num, n * (n - 1))
    return np.where(n >= 2, 1 - _safe_div(do, de), np.nan), do, de


class _AlphaMoments(_Spec):
    """Krippendorff's alpha, interval metric, from per-item sums of values and squares.

    No value-by-value matrix: with ``v`` the (centred, scaled) values, within-item
    disagreement is ``2 n_i SS_i / (n_i - 1)`` and the expected disagreement is
    ``2 (M S2 - S1^2)`` over the pooled values. Under ``disagree`` the abstention class sits
    at the largest possible distance (the squared range) from every value.
    """

    def __init__(self, prep: Prepared, func: str, values: np.ndarray | None = None, level: str = "interval") -> None:
        super().__init__(prep)
        self.name, self.level = func, level
        r = self.r
        pair = self.pair = r >= 2
        L, nI = prep.n_sub, prep.n_items
        has_abst = prep.abst_code is not None
        # Centre and scale (numerical conditioning only: alpha does not depend on them).
        # The scale's range (declared or observed categories) also fixes the abstention distance.
        x = None
        if values is None:
            self._set_range(prep.value_range())
            # the labels' standardised values from their own values (no category array needed)
            x = _label_scores(prep, self.center, self.scale, L)
        v = np.zeros(0) if x is not None else (
            self._standardise(prep.cat_values if values is None else np.asarray(values, dtype=float)))
        if has_abst:
            v = np.append(v, 0.0)
            a: np.ndarray = np.bincount(prep.item, weights=(prep.code == L).astype(np.float64), minlength=nI)
            m = r - a
        else:
            a = np.zeros(nI)
            m = r
        s1, s2 = _value_sums(prep.item, prep.code, v, nI, labels=x)
        # the abstention class (disagree policy) sits at the squared range, 1 after scaling
        self.delta = 1.0 if has_abst else 0.0
        self._finish(m, s1, s2, a)
        self.pf = pair.astype(np.float64)

    def _set_range(self, lohi: tuple[float, float] | None) -> None:
        """Centre and scale from the values' range (kept: center, scale)."""
        if lohi is not None:
            lo, hi = lohi
            self.center = (lo + hi) / 2
            self.scale = (hi - lo) if hi > lo else 1.0
        else:
            self.center, self.scale = 0.0, 1.0

    def _standardise(self, cv: np.ndarray) -> np.ndarray:
        """Category values centred and scaled by their range (kept: center, scale)."""
        self._set_range((float(cv.min()), float(cv.max())) if cv.size else None)
        return (cv - self.center) / self.scale

    def _finish(self, m: np.ndarray, s1: np.ndarray, s2: np.ndarray, a: np.ndarray) -> None:
        """Within-item disagreement from the per-item moments (kept: m, s1, s2, a and d)."""
        d = np.empty(m.shape[0])
        r, delta = self.r, self.delta

        def part(k: slice) -> None:
            mk = m[k]
            ss = np.multiply(s1[k], s1[k], dtype=float)  # float even when s1 is empty (int)
            ss /= np.maximum(mk, 1.0)
            np.subtract(s2[k], ss, out=ss)  # within-item sum of squares (0 when m <= 1)
            np.maximum(ss, 0.0, out=ss)
            ss *= 2 * mk  # within-item disagreement
            if delta:
                ak = a[k]
                ss += 2 * ak * mk + ak * (ak - 1)
            # within is 0 on items with fewer than two labels, so no mask is needed here
            np.divide(ss, np.maximum(r[k] - 1, 1.0), out=d[k])

        by_halves(part, d.shape[0])
        self.d = d
        # m, s1, s2, a are NOT masked to the pairable items: sums use the mask pf
        self.m, self.s1, self.s2, self.a = m, s1, s2, a

    def unit_mask(self) -> np.ndarray:
        return self.pair

    def stats(self) -> Any:
        # built column by column in Fortran order: each column written and read contiguously (the
        # bootstrap's weighted sums, type grouping and jackknife all work a column at a time)
        p = self.pf
        S = np.empty((p.shape[0], 6), order="F")

        def fill(k: slice) -> None:  # (the two halves of the items on two threads when large)
            for j, col in enumerate((self.r, None, self.m, self.s1, self.s2, self.a)):
                if col is None:
                    S[k, j] = self.d[k]
                else:
                    np.multiply(col[k], p[k], out=S[k, j])

        by_halves(fill, p.shape[0])
        return S

    def totals(self) -> np.ndarray:
        p = self.pf
        return np.array([_dot(self.r, p), self.d.sum(), _dot(self.m, p), _dot(self.s1, p), _dot(self.s2, p),
                         _dot(self.a, p)])

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, sd, M, S1, S2, A = (sums[:, j] for j in range(6))
        est, do, de = _alpha_from_moments(n, sd, M, S1, S2, A, self.delta, floor=n * n)
        s2 = self.scale ** 2
        return est, do * s2, de * s2

    def undefined_reason(self, sums: np.ndarray) -> str:
        if sums[0, 0] < 2:
            return f"{self.name} is undefined: no item has two or more labels"
        return (f"{self.name} is undefined: expected disagreement is 0 (every pairable label has the "
                f"same value)")

    def influence(self, est: float) -> tuple[np.ndarray, int, np.ndarray] | None:
        if self.level != "interval":
            return None
        m = self.pair
        n = self._wcount(m)
        if n < 2:
            return None
        r, d = self.r, self.d  # d is 0 off the pairable items
        pf = self._wt(self.pf)
        rsum = _dot(r, pf)
        rbar = rsum / n
        eps = 1.0 / rsum
        pa1 = (rsum - self._wsum(d)) / (n * rbar)
        pa = (1 - eps) * pa1 + eps
        mi, s1, s2, a = self.m, self.s1, self.s2, self.a  # unmasked: the result is masked below
        P, M1, M2, PA = (_dot(mi, pf) / rsum, _dot(s1, pf) / rsum, _dot(s2, pf) / rsum,
                         _dot(a, pf) / rsum)
        dl = self.delta
        piDpi = 2 * (P * M2 - M1 * M1) + dl * PA * (P + 1)
        pe = 1.0 - piDpi
        if piDpi <= 0:
            return None
        a1 = (pa1 - pe) / (1 - pe)
        e = np.empty(r.shape[0])

        def part(k: slice) -> None:
            nDpi = s2[k] * P - 2 * M1 * s1[k] + M2 * mi[k]
            if dl:
                nDpi += (PA * dl) * mi[k] + dl * a[k]
            e[k] = _alpha_influence(r[k], d[k], nDpi, m[k], rbar, pa, pe, a1)

        by_halves(part, e.shape[0])
        return e, n, m


class _AlphaOrdinal(_AlphaMoments):
    """Krippendorff's ordinal alpha: the interval formula on mid-rank values.

    Krippendorff's ordinal distance ``(sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2`` is the squared
    difference of the mid-ranks ``m_c = sum_{g<c} n_g + n_c / 2`` of the pooled pairable
    values, so the point estimate costs O(n); each bootstrap resample recomputes the mid-ranks
    from its own marginals.
    """

    def __init__(self, prep: Prepared, func: str) -> None:
        r = prep.per_item_n()
        pm = (r >= 2)[prep.item]
        sub = prep.code < prep.n_sub
        c = np.bincount(prep.code[pm & sub], minlength=prep.n_sub).astype(float)
        mid = np.cumsum(c) - c / 2
        super().__init__(prep, func, values=mid, level="ordinal")
        L = prep.n_sub
        pair = self.pair
        lab = pm & sub
        self.Nsub = sp.csr_matrix((np.ones(int(lab.sum())), (prep.item[lab], prep.code[lab])),
                                  shape=(prep.n_items, L))
        self.Nsub = sp.diags(pair.astype(float)) @ self.Nsub

    def rerank(self) -> None:
        """Mid-ranks and moments again from the pooled counts of ``Nsub`` (the streaming path joins
        blocks of items whose own mid-ranks came from their own counts)."""
        c = np.asarray(self.Nsub.sum(axis=0)).ravel()
        v = self._standardise(np.cumsum(c) - c / 2)
        N = self.Nsub.tocsr()
        self._finish(self.m, np.asarray(N @ v).ravel(), np.asarray(N @ (v * v)).ravel(), self.a)

    def stats(self) -> Any:
        """Item rows ``(r, m, a, n_i1..n_iL)`` of the pairable items (the bootstrap re-sums them)."""
        p = self.pf
        if self.prep.n_items * (3 + self.prep.n_sub) <= _DENSE_CELLS:
            return np.column_stack([self.r * p, self.m * p, self.a * p, self.Nsub.toarray()])
        return sp.hstack([sp.csr_matrix(np.column_stack([self.r * p, self.m * p, self.a * p])), self.Nsub],
                         format="csr")

    def from_weights(self, W: np.ndarray, unit_stats: Any, unit_of_item: np.ndarray | None = None) -> np.ndarray:
        """Resampled ordinal alpha: the rows are items (or groups of identical items).

        With clusters (``unit_of_item`` given) each cluster's weight is spread to its items, since
        the mid-ranks make within-item sums quadratic in the counts.
        """
        if unit_of_item is None:
            return self._from_rows(W, unit_stats)
        ok = unit_of_item >= 0
        Wi = np.zeros((W.shape[0], self.prep.n_items))
        Wi[:, ok] = W[:, unit_of_item[ok]]
        return self._from_rows(Wi, self.stats())

    def loo_from_weights(self, W: np.ndarray, unit_stats: Any, unit_of_item: np.ndarray | None = None) -> np.ndarray:
        """Leave-one-unit-out estimates of each resample (see ``_Spec.loo_from_weights``).

        The mid-ranks depend on the pooled counts, so each deletion re-runs ``_from_rows``:
        O(b n^2 L); used at small n only.
        """
        b, n = W.shape
        if unit_of_item is None:
            rows, Wsrc, E = unit_stats, W, np.eye(n)
        else:
            ok = unit_of_item >= 0
            rows = self.stats()
            E = np.zeros((n, self.prep.n_items))
            E[unit_of_item[ok], np.flatnonzero(ok)] = 1.0
            Wsrc = np.zeros((b, self.prep.n_items))
            Wsrc[:, ok] = W[:, unit_of_item[ok]]
        m = E.shape[1]
        out = np.full((b, n), np.nan)
        step = max(1, _BLOCK_CELLS // max(n * m, 1))
        for s0 in range(0, b, step):
            Wr = (Wsrc[s0:s0 + step, None, :] - E[None, :, :]).reshape(-1, m)
            out[s0:s0 + step] = self._from_rows(Wr, rows).reshape(-1, n)
        out[W <= 0] = np.nan
        return out

    def _from_rows(self, W: np.ndarray, rows: Any) -> np.ndarray:
        if sp.issparse(rows):
            head = rows[:, :3].toarray()
            N: Any = rows[:, 3:]
            c = np.asarray((N.T @ W.T).T)
        else:
            head, N = rows[:, :3], rows[:, 3:]
            c = W @ N  # (B, L) pooled counts of each resample
        r, m, a = head[:, 0:1], head[:, 1:2], head[:, 2:3]
        mid = np.cumsum(c, axis=1) - c / 2
        S1i = np.asarray(N @ mid.T)  # (rows, B)
        S2i = np.asarray(N @ (mid * mid).T)
        rng_ = mid.max(axis=1) - mid.min(axis=1)
        dl = rng_ ** 2 if self.prep.abst_code is not None else np.zeros_like(rng_)
        within = 2 * (m * S2i - S1i * S1i) + dl[None, :] * (2 * a * m + a * (a - 1))
        pair = r >= 2
        d = np.where(pair, within / np.where(pair, r - 1, 1.0), 0.0)
        sd = np.einsum("bi,ib->b", W, d)
        n = W @ r[:, 0]
        M = c.sum(axis=1)
        S1 = np.sum(c * mid, axis=1)
        S2 = np.sum(c * mid * mid, axis=1)
        A = W @ a[:, 0]
        de_num = 2 * (M * S2 - S1 * S1) + dl * (2 * A * M + A * (A - 1))
        de_num = np.where(de_num > 1e-12 * np.maximum(n * n, 1.0), de_num, 0.0)
        est = 1 - _safe_div(sd / np.where(n > 0, n, np.nan), _safe_div(de_num, n * (n - 1)))
        return np.where(n >= 2, est, np.nan)


class _AlphaOrdinalSums(_Spec):
    """Krippendorff's ordinal alpha from sums of per-item statistics (few categories).

    With ``N_i`` item ``i``'s counts over the ``L`` categories and ``mid`` the mid-ranks of the
    pooled counts ``c = sum_i N_i`` (the ordinal "values"), the item's within disagreement
    ``2 (m_i N_i.mid^2 - (N_i.mid)^2) / (r_i - 1)`` sums over items to
    ``u.mid^2 - mid' Q mid`` with ``u = sum_i 2 m_i N_i / (r_i - 1)`` and
    ``Q = sum_i 2 N_i N_i' / (r_i - 1)``. So the coefficient is a function of the column sums of
    ``(r, a, N_i, u_i, Q_i, abstention term)``, ``O(L^2)`` columns, and the resamples, the
    jackknife and each resample's jackknife (bootstrap-t) all cost what they cost for the other
    coefficients (``O(B n L^2)``) instead of re-ranking per deletion (``_AlphaOrdinal``,
    ``O(B n^2 L)``, kept for many categories). The same number as ``_AlphaOrdinal`` (test).
    """

    MAX_CATEGORIES = 16

    def __init__(self, prep: Prepared, func: str) -> None:
        super().__init__(prep)
        self.name, self.level = func, "ordinal"
        r = self.r
        self.pair = r >= 2
        self.pf = self.pair.astype(np.float64)
        L = prep.n_sub
        self.L = L
        self.has_abst = prep.abst_code is not None
        lab = self.pair[prep.item] & (prep.code < L)
        nI = prep.n_items
        # each item's counts over the L categories (per-item: blocks of a streamed file join them)
        self.Ncnt = np.zeros((nI, L))
        np.add.at(self.Ncnt, (prep.item[lab], prep.code[lab]), 1.0)
        self.a = (np.bincount(prep.item, weights=(prep.code == L).astype(np.float64), minlength=nI)
                  if self.has_abst else np.zeros(nI))
        self.iu = np.triu_indices(L)

    def unit_mask(self) -> np.ndarray:
        return self.pair

    def stats(self) -> Any:
        p = self.pf
        N = self.Ncnt
        m = N.sum(axis=1)
        r, a = self.r, self.a
        inv = np.where(self.pair, 1.0 / np.maximum(r - 1, 1.0), 0.0)
        u = N * (2 * m * inv)[:, None]
        # Q_i = 2 N_i N_i' / (r_i - 1), upper triangle (off-diagonal entries counted twice in estimate)
        i, j = self.iu
        Q = N[:, i] * N[:, j] * (2 * inv)[:, None]
        ab = (2 * a * m + a * (a - 1)) * inv
        return np.column_stack([r * p, a * p, N, u, Q, ab])

    def totals(self) -> np.ndarray:
        return np.asarray(self.stats().sum(axis=0)).ravel()

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        L = self.L
        n, A = sums[:, 0], sums[:, 1]
        c = sums[:, 2:2 + L]
        u = sums[:, 2 + L:2 + 2 * L]
        q = sums[:, 2 + 2 * L:-1]
        ab = sums[:, -1]
        M = c.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            # mid-ranks over the pooled count (alpha does not depend on the values' scale)
            mid = (np.cumsum(c, axis=1) - c / 2) / np.where(M > 0, M, 1.0)[:, None]
        i, j = self.iu
        w = np.where(i == j, 1.0, 2.0)
        quad = np.einsum("bk,k,bk->b", mid[:, i] * mid[:, j], w, q)
        dl = (mid.max(axis=1) - mid.min(axis=1)) ** 2 if self.has_abst else np.zeros_like(n)
        sd = np.einsum("bl,bl->b", u, mid * mid) - quad + dl * ab
        S1 = np.einsum("bl,bl->b", c, mid)
        S2 = np.einsum("bl,bl->b", c, mid * mid)
        est, do, de = _alpha_from_moments(n, sd, M, S1, S2, A, dl, floor=M * M)
        M2 = M * M  # D_o and D_e in mid-rank units, as _AlphaOrdinal reports them
        return est, do * M2, de * M2

    undefined_reason = _AlphaMoments.undefined_reason


def _ratio_nodes(xpos: np.ndarray, step: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``s_j`` and weights ``w_j`` of ``int_0^inf s G(s) ds`` by the trapezoidal rule in ``log s``.

    The integrands ``s exp(-s (x + y))`` are analytic in the strip ``|Im log s| < pi/2``, so the
    trapezoidal rule in ``tau = log s`` converges like ``exp(-pi^2 / step)`` (about 5e-15 at 0.3).
    """
    lo, hi = float(xpos.min()), float(xpos.max())
    tau = np.arange(np.log(1.0 / hi) - 19.0, np.log(40.0 / lo) + step, step)
    s_ = np.exp(tau)
    return s_, step * s_ * s_  # ds = s dtau, and the integrand carries one more factor s


class _AlphaRatio(_Spec):
    """Krippendorff's ratio alpha on many distinct values, without a value-by-value matrix.

    With ``g(x, y) = ((x - y)/(x + y))^2 = 1 - 4 x y / (x + y)^2`` and
    ``1/(x + y)^2 = int_0^inf s exp(-s (x + y)) ds``, the pooled sum over all pairs is
    ``sum_ab g = N^2 - 4 int_0^inf s F(s)^2 ds - z^2`` with ``F(s) = sum_a x_a exp(-s x_a)`` and ``z``
    zeros (a pair of zeros has distance 0). The integral is a 1-D quadrature (``_ratio_nodes``), so
    the cost is O(values x nodes), about 80-120 nodes. ``F`` is linear in the labels, so the
    bootstrap re-sums per-item ``F_i(s_j)`` like every other statistic. Within-item distances are
    exact (pairs inside each item).
    """

    MAX_BOOT_CELLS = 40_000_000

    def __init__(self, prep: Prepared, func: str) -> None:
        super().__init__(prep)
        self.name, self.level = func, "ratio"
        r = self.r
        pair = self.pair = r >= 2
        self.pf = pair.astype(np.float64)
        L, nI = prep.n_sub, prep.n_items
        cv = prep.cat_values
        has_abst = prep.abst_code is not None
        lab_p = pair[prep.item]
        sub = prep.code < L
        x_all = np.where(sub, np.append(cv, 0.0)[np.minimum(prep.code, L)], np.nan)
        xs = x_all[lab_p & sub]
        pos = xs[xs > 0]
        lo, hi = (float(pos.min()), float(pos.max())) if pos.size else (1.0, 1.0)
        zmin = float(cv.min()) if L else 0.0
        hi_all, lo_all = float(cv.max()) if L else 1.0, zmin
        gmax = ((hi_all - lo_all) / (hi_all + lo_all)) ** 2 if hi_all + lo_all > 0 else 1.0
        self.gmax = gmax if gmax > 0 else 1.0
        self.delta = 1.0 if has_abst else 0.0  # abstention distance, in units of gmax
        self.s_nodes, self.w_nodes = _ratio_nodes(np.array([lo, hi]))
        # within-item pairs (exact), in units of gmax
        item = prep.item
        xa = np.where(sub, x_all, np.nan)
        within = np.zeros(nI)
        maxr = int(r.max()) if r.size else 0
        nlab = item.shape[0]
        for k in range(1, maxr):
            a_idx = np.arange(nlab - k)
            same = item[a_idx] == item[a_idx + k]
            if not same.any():
                continue
            i0 = a_idx[same]
            u, v = xa[i0], xa[i0 + k]
            both = ~np.isnan(u) & ~np.isnan(v)
            gsum = np.zeros(i0.size)
            su = u[both] + v[both]
            with np.errstate(divide="ignore", invalid="ignore"):
                gsum[both] = np.where(su > 0, ((u[both] - v[both]) / np.where(su > 0, su, 1.0)) ** 2, 0.0) / self.gmax
            gsum[~both] = self.delta  # a pair with an abstention
            within += 2 * np.bincount(item[i0], weights=gsum, minlength=nI)
        self.d = np.where(pair, within / np.where(pair, r - 1, 1.0), 0.0)
        # per-item counts and F_i(s_j) of the pairable substantive labels
        lp = lab_p & sub
        it, xv = item[lp], x_all[lp]
        self.m = np.bincount(it, minlength=nI).astype(np.float64)
        self.z = np.bincount(it[xv == 0], minlength=nI).astype(np.float64)
        self.a = np.bincount(item[lab_p & ~sub], minlength=nI).astype(np.float64)
        self._it, self._xv = it, xv
        # pooled F(s_j), and the distinct values with their counts (for the SE)
        self.xu, self.cu = np.unique(xv, return_counts=True)
        self.F = self._F(self.xu, self.cu.astype(np.float64))

    def _F(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        out = np.empty(self.s_nodes.size)
        for j, sj in enumerate(self.s_nodes):
            out[j] = float(np.dot(w * x, np.exp(-sj * x)))
        return out

    def _pair_sum(self, M: Any, Z: Any, F: np.ndarray, A: Any) -> Any:
        """Sum of distances over ordered pairs of distinct pooled labels (units of gmax)."""
        quad = F ** 2 @ self.w_nodes if F.ndim == 1 else (F ** 2) @ self.w_nodes
        sub_pairs = (M * M - 4 * quad - Z * Z) / self.gmax
        return sub_pairs + self.delta * (2 * A * M + A * (A - 1))

    def unit_mask(self) -> np.ndarray:
        return self.pair

    def totals(self) -> np.ndarray:
        p = self.pf
        return np.concatenate([[_dot(self.r, p), self.d.sum(), self.m.sum(), self.z.sum(), self.a.sum()], self.F])

    def stats(self) -> Any:
        nI = self.prep.n_items
        if nI * (5 + self.s_nodes.size) > self.MAX_BOOT_CELLS:
            return None
        Fi = np.empty((nI, self.s_nodes.size))
        for j, sj in enumerate(self.s_nodes):
            Fi[:, j] = np.bincount(self._it, weights=self._xv * np.exp(-sj * self._xv), minlength=nI)
        p = self.pf
        return np.column_stack([self.r * p, self.d, self.m, self.z, self.a * p, Fi])

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, sd, M, Z, A = (sums[:, j] for j in range(5))
        F = sums[:, 5:]
        de_num = self._pair_sum(M, Z, F, A)
        de_num = np.where(de_num > 1e-12 * np.maximum(n * n, 1.0), de_num, 0.0)
        do = _safe_div(sd, n)
        de = _safe_div(de_num, n * (n - 1))
        est = np.where(n >= 2, 1 - _safe_div(do, de), np.nan)
        return est, do * self.gmax, de * self.gmax

    def undefined_reason(self, sums: np.ndarray) -> str:
        if sums[0, 0] < 2:
            return f"{self.name} is undefined: no item has two or more labels"
        return f"{self.name} is undefined: expected disagreement is 0 (every pairable label has the same value)"

    def influence(self, est: float) -> tuple[np.ndarray, int, np.ndarray] | None:
        m = self.pair
        n = int(np.count_nonzero(m))
        if n < 2:
            return None
        r, d = self.r, self.d
        rsum = _dot(r, self.pf)
        rbar = rsum / n
        eps = 1.0 / rsum
        pa1 = (rsum - float(d.sum())) / (n * rbar)
        pa = (1 - eps) * pa1 + eps
        de_num = float(self._pair_sum(self.m.sum(), self.z.sum(), self.F, self.a.sum()))
        piDpi = de_num / rsum ** 2 + float(self.delta * self.a.sum()) / rsum ** 2  # pi^T D pi incl. self-pairs
        pe = 1.0 - piDpi
        if piDpi <= 0:
            return None
        a1 = (pa1 - pe) / (1 - pe)
        # (D pi)(x) for each pooled value: sum_l c_l g(x, x_l) / (gmax rsum), by the same quadrature
        xu = self.xu
        Mtot, Ztot, Atot = self.m.sum(), self.z.sum(), self.a.sum()
        acc = np.zeros(xu.size)
        for j, sj in enumerate(self.s_nodes):
            acc += self.w_nodes[j] * np.exp(-sj * xu) * self.F[j]
        npos = Mtot - Ztot
        h = np.where(xu > 0, npos - 4 * xu * acc + Ztot, npos) / self.gmax + self.delta * Atot
        hab = self.delta * (Mtot + Atot)  # an abstention's distance to every pooled label
        hx = np.zeros(self._xv.size)
        hx[:] = h[np.searchsorted(xu, self._xv)]
        nDpi = (np.bincount(self._it, weights=hx, minlength=self.prep.n_items) + self.a * hab) / rsum
        return _alpha_influence(r, d, nDpi, m, rbar, pa, pe, a1), n, m


class _TwoRater(_Spec):
    """Cohen's kappa and Scott's pi (weighted or not) on the items both raters labelled."""

    fce = True

    def __init__(self, prep: Prepared, kind: str, weights: Any, func: str) -> None:
        super().__init__(prep)
        if len(prep.raters) != 2:
            raise InvalidParameterError(
                f"{func} compares exactly two raters; the selection has {len(prep.raters)} "
                f"({list(prep.raters)[:6]}). Pass raters=[a, b], or use fleiss_kappa / krippendorff_alpha / "
                f"conger_kappa for several raters, or pairwise_matrix for every pair.")
        self.kind, self.name = kind, func
        self.W, self.level = weight_matrix(weights, prep, func)
        q = prep.q
        nI = prep.n_items
        a = np.full(nI, -1, dtype=np.int64)
        b = np.full(nI, -1, dtype=np.int64)
        first = _first_rater_index(prep)
        is_a = prep.rater == first
        a[prep.item[is_a]] = prep.code[is_a]
        b[prep.item[~is_a]] = prep.code[~is_a]
        self.both = (a >= 0) & (b >= 0)
        self.a, self.b = a, b
        self.q = q
        cell = a * q + b
        if _identity_like(self.W):
            # unweighted: pe <= sum_k pbar_k^2 <= max_k pbar_k <= (1 + po) / 2, so kappa, pi >= -1
            self.floor = -1.0
        idx = np.flatnonzero(self.both)
        self.cells = sp.csr_matrix((np.ones(idx.size), (idx, cell[idx])), shape=(nI, q * q))

    def unit_mask(self) -> np.ndarray:
        return self.both

    def n_items_used(self) -> int:
        return int(np.count_nonzero(self.both))

    def n_pairs(self) -> int:
        return self.n_items_used()

    def stats(self) -> Any:
        return self.cells if self.q * self.q > 64 else self.cells.toarray()

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q = self.q
        n = sums.sum(axis=1)
        P = sums.reshape(-1, q, q) / np.where(n > 0, n, np.nan)[:, None, None]
        po = np.einsum("bkl,kl->b", P, self.W)
        p1, p2 = P.sum(axis=2), P.sum(axis=1)
        if self.kind == "cohen":
            pe = np.einsum("bk,kl,bl->b", p1, self.W, p2)
        else:
            pm = (p1 + p2) / 2
            pe = np.einsum("bk,kl,bl->b", pm, self.W, pm)
        return _safe_div(po - pe, 1 - pe), po, pe

    def undefined_reason(self, sums: np.ndarray) -> str:
        if sums.sum() == 0:
            return f"{self.name} is undefined: the two raters share no item"
        return (f"{self.name} is undefined: chance agreement is 1 (both raters use a single category), "
                f"so (po - pe) / (1 - pe) is 0/0")

    def influence(self, est: float) -> tuple[np.ndarray, int, np.ndarray] | None:
        m = self.both
        n = int(np.count_nonzero(m))
        if n < 2:
            return None
        a, b = self.a[m], self.b[m]
        q = self.q
        P = np.bincount(a * q + b, minlength=q * q).reshape(q, q) / n
        p1, p2 = P.sum(1), P.sum(0)
        W = self.W
        if self.kind == "cohen":
            pe = float(p1 @ W @ p2)
            wr, wc = W @ p2, W.T @ p1  # wbar_k. and wbar_.l
            psi = (W[a, b] - (wr[a] + wc[b]) * (1 - est)) / (1 - pe)
        else:
            pm = (p1 + p2) / 2
            pe = float(pm @ W @ pm)
            ws = (W + W.T) @ pm / 2
            psi = (W[a, b] - (ws[a] + ws[b]) * (1 - est)) / (1 - pe)
        out = np.zeros(self.prep.n_items)
        out[m] = psi - psi.mean()
        return out, n, m


def _identity_like(W: np.ndarray | None) -> bool:
    """Unweighted agreement: no credit off the diagonal, at most full credit on it."""
    if W is None:
        return True
    d = np.diag(W)
    return bool(np.all(W - np.diag(d) == 0) and np.all((d >= 0) & (d <= 1)))


def _first_rater_index(prep: Prepared) -> int:
    """Table index of the first rater of the selection (order of ``prep.raters``)."""
    return int(prep.rater_ids[0])


class _Conger(_Spec):
    """Conger's kappa (chance agreement from each rater's own marginals), as in Gwet (2014)."""

    def __init__(self, prep: Prepared, weights: Any, func: str) -> None:
        super().__init__(prep)
        self.name = func
        self.W, self.level = weight_matrix(weights, prep, func)
        self.fam = _GwetFamily(prep, "pa", weights, func)
        ridx, self.rpos = np.unique(prep.rater, return_inverse=True)
        self.R = ridx.size
        q = prep.q
        self.RQ = sp.csr_matrix((np.ones(prep.item.size), (prep.item, self.rpos * q + prep.code)),
                                shape=(prep.n_items, self.R * q))
        self.q = q

    def stats(self) -> Any:
        f = self.fam
        return _hstack([f.e2, f.pa_i, sp.csr_matrix(self.RQ)])

    def _pe(self, cnt: np.ndarray) -> np.ndarray:
        B = cnt.shape[0]
        C = cnt.reshape(B, self.R, self.q)
        ng = C.sum(axis=2, keepdims=True)
        p = C / np.where(ng > 0, ng, np.nan)
        r = self.R
        pbar = p.sum(axis=1) / r
        s2 = (np.einsum("bgk,bgl->bkl", p, p) - r * pbar[:, :, None] * pbar[:, None, :]) / (r - 1)
        return np.einsum("kl,bkl->b", self.W, pbar[:, :, None] * pbar[:, None, :] - s2 / r)

    def estimate(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pa = _safe_div(sums[:, 1], sums[:, 0])
        pe = self._pe(sums[:, 2:])
        return _safe_div(pa - pe, 1 - pe), pa, pe

    def undefined_reason(self, sums: np.ndarray) -> str:
        if sums[0, 0] == 0:
            return f"{self.name} is undefined: no item has two or more labels"
        return f"{self.name} is undefined: chance agreement is 1 (one category), so the ratio is 0/0"

    def influence(self, est: float) -> tuple[np.ndarray, int, np.ndarray] | None:
        # Gwet (2014, ch. 5) linearisation of Conger's kappa.
        f = self.fam
        m = f.e1 > 0
        n = int(np.count_nonzero(m))
        n2 = int(np.count_nonzero(f.e2 > 0))
        r = self.R
        if n < 2 or n2 == 0 or r < 2:
            return None
        q, W = self.q, self.W
        C = np.asarray(self.RQ.sum(axis=0)).ravel().reshape(r, q)
        ng = C.sum(axis=1)
        pgk = C / ng[:, None]
        pe = float(self._pe(C.reshape(1, -1))[0])
        if not np.isfinite(pe) or pe == 1:
            return None
        # Gwet's lambda_i = sum_g sum_k A_gk [sum_l W_kl delta_igl - (eps_ig - n_g/n) (W p_g)_k] with
        # A_gk = (n/n_g)(sum_h p_hk - p_gk): one term per label plus a constant, so O(labels).
        A_ = (n / ng)[:, None] * (pgk.sum(axis=0)[None, :] - pgk)
        Wp = pgk @ W.T
        T = A_ @ W
        U = np.sum(A_ * Wp, axis=1)
        idx = np.flatnonzero(m)
        item_pos = np.full(self.prep.n_items, -1)
        item_pos[idx] = np.arange(n)
        g, lab = self.rpos, self.prep.code
        lam = np.bincount(item_pos[self.prep.item], weights=T[g, lab] - U[g], minlength=n) + float(ng @ U) / n
        pe_i = lam / (r * (r - 1))
        pa_i = f.pa_i[m]
        e2 = f.e2[m]
        k_i = (n / n2) * (pa_i - pe * e2) / (1 - pe)
        x = k_i - 2 * (1 - est) * (pe_i - pe) / (1 - pe)
        out = np.zeros(self.prep.n_items)
        out[m] = x - est
        return out, n, m


# ----------------------------------------------------------------------------- engine
@dataclasses.dataclass
class Options:
    confidence_level: float
    n_resamples: int
    rng: Any
    on_undefined: str
    method: str = "auto"


INTERVAL_METHODS = ("auto", "percentile", "bca", "studentized", "jackknife", "wald", "wilson", "gof")
# ``auto``: up to this many units Donner-Eliasziw for the two-rater binary kappa, Wilson for observed
# agreement, the bootstrap-t on the Fisher-z scale otherwise; BCa above (docs/agreement.md "Small
# samples" has the evidence). Ordinal alpha on more than 16 categories (_AlphaOrdinal) re-ranks per
# deletion, O(B n^2), so its limit is lower.
AUTO_STUDENTIZED_MAX = 200
AUTO_STUDENTIZED_MAX_ORDINAL = 100
# Ordinal alpha's jackknife re-ranks for every deletion, O(n^2): above this, no jackknife (and
# auto uses the percentile interval, which BCa approaches at such sizes).
ORDINAL_JACKKNIFE_MAX = 3000
# Below this many units no method held its level in simulation: SmallSampleWarning.
MIN_TRUSTED_UNITS = 10
# Kappa and alpha on binary labels with a category under RARE_SHARE of the labels: below
# RARE_MIN_UNITS units every resampling interval fell short (20 items, 4 raters, 1,000 tables:
# bootstrap-t 0.906-0.909, percentile 0.78-0.80; docs/agreement.md "Small samples"), so they warn
# too (not Donner-Eliasziw for two raters, which needs no resampling: exact coverage 0.920-0.969 over kappa
# 0.25-0.81 at prevalence 0.85, 20 items, mean 0.946; nor AC1 or observed agreement, which held).
RARE_SHARE = 0.15
RARE_MIN_UNITS = 30


def auto_method(s: _Spec, n_units: int, n_resamples: int, has_stats: bool) -> str:
    """The interval ``method="auto"`` uses for this coefficient and number of units."""
    if n_units <= AUTO_STUDENTIZED_MAX and binary_pairs(s) is not None:
        return "gof"  # needs no resamples
    if not n_resamples or not has_stats:
        return "wald"
    ordinal = isinstance(s, _AlphaOrdinal)
    limit = AUTO_STUDENTIZED_MAX_ORDINAL if ordinal else AUTO_STUDENTIZED_MAX
    if n_units <= limit:
        return "wilson" if _is_pa(s) else "studentized"
    return "percentile" if ordinal and n_units > ORDINAL_JACKKNIFE_MAX else "bca"


def _bounded_chance(s: _Spec) -> bool:
    """Gwet's AC1 and Brennan-Prediger (identity weights): chance agreement at most ``1/q <= 1/2``."""
    return isinstance(s, _GwetFamily) and s.kind in ("ac", "bp") and s.floor == -1.0


def auto_after_bootstrap(s: _Spec, m: str, est: float, boots: np.ndarray | None, boot_se: np.ndarray | None,
                         level: float) -> tuple[str, str]:
    """``auto``'s choice once the replicates are known: ``(method, why)`` (``why`` empty if unchanged).

    A replicate in which no unit disagrees has jackknife SE 0, so its bootstrap-t ``t*`` is
    infinite; when more than ``(1 - level) / 2`` of the replicates are such, the bootstrap-t has no
    lower end. For kappa and alpha that is the honest answer (their chance agreement nears 1 as a
    category gets rare, and the data do not bound them below; warned below RARE_MIN_UNITS). For AC1
    and Brennan-Prediger, whose chance agreement is at most 1/2, such replicates are the top of a
    bounded distribution, and the BCa interval is used instead (on AC1 at prevalence 0.85 the
    bootstrap-t covered 0.973-0.975 at 1.8-2.9 times the percentile width; docs/agreement.md)."""
    if m != "studentized" or boots is None or boot_se is None or not boot_se.size or not _bounded_chance(s):
        return m, ""
    share = _iv.zero_se_share(est, boots, boot_se)
    if not share > (1 - level) / 2:
        return m, ""
    return "bca", (f"{share:.1%} of the resamples show no disagreement (jackknife SE 0, bootstrap-t t* "
                   f"infinite), more than the {(1 - level) / 2:.1%} tail the bootstrap-t needs: BCa used")


def binary_pairs(s: _Spec) -> tuple[float, float, float] | None:
    """``(both first category, discordant, both second)`` item counts when ``s`` is the kappa of
    two exchangeable raters on binary labels (Fleiss' kappa, Scott's pi or nominal alpha on items
    with exactly two labels, no clusters): the setting of Donner & Eliasziw's interval. Else None."""
    prep = s.prep
    if prep.clusters is not None or prep.q != 2 or (prep.abst_code is not None and prep.policy == "disagree"):
        return None
    if not ((isinstance(s, _GwetFamily) and s.kind == "fleiss" and s.identity)
            or (isinstance(s, _AlphaMatrix) and s.plain_nominal)
            or (isinstance(s, _TwoRater) and s.kind == "scott" and s.level == "identity")):
        return None
    r = s.r
    used = r >= 2
    if not used.any() or np.any(r[used] != 2):
        return None
    N = s.N if isinstance(s, (_GwetFamily, _AlphaMatrix)) else None  # the items' counts (a streamed table keeps no labels)
    if N is not None:
        k = (np.asarray(N[:, 0].toarray()).ravel() if sp.issparse(N) else N[:, 0])[used]
    else:
        k = np.bincount(prep.item[prep.code == 0], minlength=prep.n_items)[used]
    c = np.ones(k.shape[0]) if s.w is None else s.w[used]
    return float(c[k == 2].sum()), float(c[k == 1].sum()), float(c[k == 0].sum())


def _zero_disagreement(s: _Spec, st: Any, level: float, expected: float, weights: np.ndarray | None = None) -> Any:
    """The one-sided bound when no unit disagrees (estimate 1), for coefficients whose per-unit
    disagreement is a share of pairs at most 1 (the Gwet family, Conger's, Cohen's kappa and
    Scott's pi, nominal alpha); else None. ``weights``: units per row of ``st`` (rows with counts,
    :attr:`_Spec.w`)."""
    if isinstance(s, (_GwetFamily, _TwoRater, _Conger)) and getattr(s, "kind", "") != "pa":
        de = 1 - expected  # estimate() returns (kappa, pa, pe) / (kappa, po, pe)
    elif isinstance(s, _AlphaMatrix) and s.plain_nominal:
        de = expected  # (alpha, D_o, D_e)
    else:
        return None
    # each unit's weight in the observed disagreement (items with two labels; alpha: their labels;
    # two raters: the unit's shared items, one pair each, the sum of its cells)
    S = st if st is not None else s.stats()  # without the bootstrap: per item (clusters not summed)
    cnt = weights if st is not None else s.w
    if isinstance(s, _TwoRater):
        w = np.asarray(S.sum(axis=1), dtype=float).ravel()
    else:
        w = np.asarray(S[:, 0].toarray() if sp.issparse(S) else S[:, 0], dtype=float).ravel()
    pos = w > 0
    w = w[pos]
    if not w.size:
        return None
    if cnt is None:
        n, mean = int(w.size), float(w.mean())
    else:
        n = int(round(float(cnt[pos].sum())))
        mean = _dot(w, cnt[pos]) / n
    r = _iv.zero_disagreement(n, de, level, weight_ratio=float(w.max() / mean))
    return r if math.isfinite(r.low) else None


def interval_for(s: _Spec, m: str, est: float, expected: float, *, boots: np.ndarray | None, st: Any,
                 jack: np.ndarray | None, boot_se: np.ndarray | None, a_se: float | None, n_units: int,
                 unit_kind: str, level: float, weights: np.ndarray | None = None,
                 jack_stats: tuple[float, float, float] | None = None) -> tuple[Any, str, bool]:
    """The interval of method ``m`` for one coefficient, with the rules for degenerate data and
    the coefficient's bounds (``agreement`` and the coverage bench both call this): the interval,
    the clipping text for ``ci.method``, and whether its lower end was kept at, or moved below,
    the end of the Fisher z map (see ``_honest``; the interval's own note says so, so the caller
    issues no fallback warning for it). ``boots`` None: no bootstrap ran; ``weights``: units per row
    of ``st`` (rows with counts); ``jack_stats``: :func:`jack_stats` of ``jack`` when the caller
    computed it already (beside the bootstrap)."""
    if not math.isfinite(est):
        return dataclasses.replace(_iv.NAN_INTERVAL, note="the estimate is undefined"), "", False
    if n_units < 2:
        return dataclasses.replace(_iv.NAN_INTERVAL, note=f"one {unit_kind} only: resampling needs at least two"), "", False
    sc_plain = _scale(s)
    if m == "gof":
        counts = binary_pairs(s)
        if counts is None:
            raise ValueError("gof: not the two-rater binary setting")  # run() never asks for it then
        return _honest(_iv.kappa_gof(*counts, level), s, est, sc_plain, lambda: _iv.NAN_INTERVAL)
    if est == 1.0:  # no unit disagrees (kappa = 1 iff pa = 1): every resample gives 1 too
        zd = _zero_disagreement(s, st, level, expected, weights)
        if zd is not None:
            return zd, "", False
    good = boots[np.isfinite(boots)] if boots is not None else None
    flat = (good.size > 0 and bool(np.all(good == est))) if good is not None else (
        jack is not None and bool(np.all(jack == est)))
    if flat and not (m == "wilson" and est in (0.0, 1.0)):
        return dataclasses.replace(_iv.NAN_INTERVAL, note=(
            f"every resample gives {est:.6g} (the {unit_kind}s do not vary in what the coefficient uses): "
            f"no interval")), "", False
    # Wald gets no bounds here: _honest clips it to the coefficient's true bounds and says so
    if m == "wald":
        sc = _iv.Scale(-math.inf, math.inf)
    elif jack_stats is not None and jack is not None:
        sc = _scale(s, min(_lowest(est, boots), jack_stats[2]))
    else:
        sc = _scale(s, _lowest(est, boots, jack))

    def _own_scale() -> Any:
        # the percentile interval (within the replicates' range) when there are replicates,
        # else the jackknife on the coefficient's own scale
        return _iv.build("percentile" if boots is not None else "jackknife", est, boots=boots, jack=jack,
                         boot_se=None, analytic_se=a_se, n_units=n_units, level=level,
                         scale=_iv.Scale(-math.inf, math.inf))

    r = _iv.build(m, est, boots=boots, jack=jack, boot_se=boot_se, analytic_se=a_se, n_units=n_units,
                  level=level, scale=sc, jack_stats=None if jack_stats is None else jack_stats[:2])
    return _honest(r, s, est, sc, _own_scale)


def jack_stats(jack: np.ndarray) -> tuple[float, float, float]:
    """What :func:`interval_for` reads from the jackknife values: their SE, BCa's acceleration and
    their lowest finite value (``inf`` when none), computed once (beside the bootstrap)."""
    se, a = _iv.jack_summary(jack)
    fin = np.isfinite(jack)
    if fin.all():
        return se, a, float(jack.min()) if jack.size else math.inf
    return se, a, float(jack[fin].min()) if fin.any() else math.inf


def _is_pa(s: _Spec) -> bool:
    return isinstance(s, _GwetFamily) and s.kind == "pa"


def _scale(s: _Spec, lowest: float = math.nan) -> Any:
    """The variance-stabilising map of ``s``'s intervals: the logit for observed agreement, Fisher's z
    on [-1, 1] otherwise. For a coefficient with no lower bound at -1 whose estimate, replicates or
    jackknife values reach -1 (``lowest``), the map's lower end moves below them: an anchor of the
    map, never a bound the interval is clipped to."""
    if s.floor == 0.0:
        return _iv.Scale(0.0, 1.0)
    if s.floor < -1.0 and lowest <= -1.0:
        return _iv.Scale(lowest - 0.1 * (1.0 - lowest), 1.0)
    return _iv.Scale(-1.0, 1.0)


def _lowest(est: float, *arrays: np.ndarray | None) -> float:
    vals = [est] + [float(np.min(a[np.isfinite(a)])) for a in arrays if a is not None and np.isfinite(a).any()]
    return min(vals)


def _fmt_bound(v: float) -> str:
    return f"{v:g}"


def _honest(r: Any, s: _Spec, est: float, sc: Any, rebuild: Any) -> tuple[Any, str, bool]:
    """Keep an interval within the coefficient's true bounds and around its estimate.

    * A lower end of a transformed interval (bootstrap-t, jackknife) that reached the end of the
      map's range, where that end is no bound of the coefficient (-1 is not the floor of Fleiss'
      kappa or weighted AC2), stays there or moves lower, to the lower end on the coefficient's own
      scale (``rebuild``) where that is lower; the note says the end is no bound, and the third
      value is True (no warning: the interval's ``method`` names what was used).
    * Endpoints beyond a true bound (1 above; the floor of :attr:`_Spec.floor` below) are clipped to
      it, and the returned text says so (it goes into ``ci.method``).
    * The estimate always lies in the interval: an endpoint beyond it by rounding (a few units in the
      last place) is set to it; a real miss (a percentile interval of a biased bootstrap) is
      widened to the estimate, with a note.
    """
    at_map_end = False
    if r.method == "none" or not (math.isfinite(r.low) and math.isfinite(r.high)):
        return r, "", at_map_end
    span = sc.high - sc.low
    if (r.method in ("studentized", "jackknife") and math.isfinite(span) and sc.low > s.floor
            and r.low <= sc.low + 1e-9 * span):
        # The bootstrap-t's own answer is "no lower limit on the map's scale". Replacing it by the
        # percentile interval under-covered (0.85 against 0.94 for rare categories at 20 items), so
        # the lower end stays at the map's end, or lower where the percentile interval goes lower.
        alt = rebuild()
        if alt.method != "none" and math.isfinite(alt.low):
            low = min(r.low, alt.low)
            why = (f"the {r.label}'s lower end reached the end of the Fisher z map at {_fmt_bound(sc.low)}, "
                   f"which is no bound of {s.name}: the data do not bound it above "
                   f"{_fmt_bound(low)} ({'the ' + alt.label + ' lower end' if alt.low < r.low else 'the map end'})")
            r = dataclasses.replace(r, low=float(low), note="; ".join(x for x in (r.note, why) if x))
            at_map_end = True
    lo, hi, notes = r.low, r.high, []
    clipped = []
    if hi > 1.0:
        hi = 1.0
        clipped.append("1 above")
    if lo < s.floor:
        lo = s.floor
        clipped.append(f"{_fmt_bound(s.floor)} below")
    # rounding: a few units in the last place, or the map's pull of a value on its end (Scale.eps)
    tol = 1e-9 * max(1.0, abs(est)) + (sc.eps * span if math.isfinite(span) else 0.0)
    for side in ("low", "high"):
        v = lo if side == "low" else hi
        miss = (v - est) if side == "low" else (est - v)
        if miss > 0:
            if miss > tol:
                notes.append(f"the interval missed the estimate by {miss:.3g}; its {side} end was moved to "
                             f"the estimate")
            lo, hi = (est, hi) if side == "low" else (lo, est)
    lo, hi = min(lo, hi), max(lo, hi)
    clip_text = f"clipped at the coefficient's bounds ({', '.join(clipped)})" if clipped else ""
    if clip_text:
        notes.insert(0, clip_text)
    if (lo, hi) != (r.low, r.high) or notes:
        r = dataclasses.replace(r, low=float(lo), high=float(hi),
                                note="; ".join(x for x in (r.note, *notes) if x))
    return r, clip_text, at_map_end


def _units(prep: Prepared, mask: np.ndarray) -> tuple[np.ndarray, int, str]:
    """Map each item to its resampling unit (-1 when it carries no information)."""
    return unit_map(mask, prep.clusters)


def _aggregate(S: Any, unit: np.ndarray, n_units: int) -> Any:
    """Item statistics -> unit statistics (the resampling layer's :func:`unit_sums`); ``S`` itself
    when every item is its own unit, in order (no copy: ``S`` is the caller's fresh ``stats()``)."""
    if S.shape[0] == n_units == unit.shape[0] and np.array_equal(unit, np.arange(n_units)):
        return S
    return unit_sums(S, unit, n_units)


def _draw_block(gen: np.random.Generator, b: int, n_units: int) -> np.ndarray:
    """Multiplicities of ``n_units`` units in ``b`` bootstrap resamples (rows sum to ``n_units``).

    32-bit index draws (the engine's stream since the first release; 64-bit past 2**31 units).
    """
    return draw_counts(gen, b, n_units, index_dtype=np.int32 if n_units < 2**31 - 1 else np.int64)


def _replicate_se(s: _Spec, W: np.ndarray, st: Any, unit_of_item: np.ndarray | None = None) -> np.ndarray:
    """Each resample's own jackknife SE (delete one of its ``n`` draws at a time): ``(b,)``."""
    th = s.loo_from_weights(W, st, unit_of_item)
    pos = (W > 0) & np.isfinite(th)  # a deletion that leaves the coefficient undefined is skipped
    Wp = np.where(pos, W, 0.0)
    ntot = Wp.sum(axis=1)
    thz = np.where(pos, th, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.einsum("bj,bj->b", Wp, thz) / ntot
        dev = np.where(pos, th - mean[:, None], 0.0)
        var = (ntot - 1) / ntot * np.einsum("bj,bj->b", Wp, dev * dev)
    var[ntot < 2] = np.nan
    return np.sqrt(var)


def jackknife_values(s: _Spec, st: Any, unit: np.ndarray, n_units: int, item_units: bool,
                     weights: np.ndarray | None = None,
                     types: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray | None:
    """Leave-one-unit-out estimates (``n_units``,) from the unit statistics; None when too costly.
    ``weights``: units per row of ``st`` (rows with counts): each row's value, once per unit.
    ``types``: :func:`unit_types` of the units: units of one type have the same statistics, hence
    the same leave-one-out value, computed once per type from the same total (the same bits)."""
    if st is None:
        return None
    ordinal = isinstance(s, _AlphaOrdinal)
    if ordinal and n_units > ORDINAL_JACKKNIFE_MAX:
        return None  # O(n^2): the caller falls back (BCa's acceleration is ~0 at such n anyway)
    if weights is not None:
        return np.repeat(s.loo_from_weights(weights[None, :], st)[0], weights.astype(np.int64))
    one = np.ones((1, n_units))
    if (types is not None and type(s).loo_from_weights is _Spec.loo_from_weights and not sp.issparse(st)
            and st.shape[0] == n_units):
        S = np.asarray(st)
        type_of_unit, n_per_type = types
        first = np.zeros(n_per_type.size, dtype=np.int64)
        first[type_of_unit[::-1]] = np.arange(n_units)[::-1]
        total = one @ S  # as the jackknife over every unit sums them
        return s.estimate(total - S[first])[0][type_of_unit]
    if ordinal and not item_units:
        return s.loo_from_weights(one, None, unit)[0]
    return s.loo_from_weights(one, st)[0]


#: ``bootstrap(types=)`` not given: the bootstrap groups the units itself
_UNSET: Any = object()


def bootstrap(specs: Sequence[_Spec], stats_list: Sequence[Any], unit: np.ndarray, n_units: int, B: int,
              rng: Any, *, compress: bool = True, se_out: list[np.ndarray | None] | None = None,
              unit_weights: np.ndarray | None = None, types: Any = _UNSET) -> list[np.ndarray]:
    """``B`` resampled estimates of each spec (``nan`` where undefined or where ``stats`` is None).

    A resample draws ``n_units`` units uniformly with replacement; its weight vector (the
    multiplicity of each unit) multiplies the per-unit statistics, blocks of resamples at a time
    (one matrix product per block). When many units have identical statistics (categorical
    labels), the multiplicities of each *type* of unit are drawn directly from their exact joint
    law, ``Multinomial(n_units, n_type / n_units)``, which costs O(types) instead of O(units) per
    resample and gives the same bootstrap distribution. Otherwise, from ``_POISSON_MIN_UNITS``
    units on and when every statistic is a function of weighted column sums (and no replicate
    SEs are asked for), each unit gets an independent weight per resample with mean 1 and variance 1 (a Poisson-type bootstrap, see :mod:`voirdire._stats._poisson`): no index draws, one
    pass over the units for all resamples, the same weights however the units are chunked. The
    draws depend only on ``rng`` and the data.

    ``unit_weights``: each row of the statistics stands for that many identical units (``n_units``
    is their sum; rows with counts, :attr:`_Spec.w`): the types of units are drawn as above, with
    the same types, counts and draws as the units written out one by one; only that path applies.
    ``types``: the caller's :func:`unit_types` of these statistics (None: no grouping), when it
    grouped them already.
    """
    # a spec with several outputs per resample declares ``out_shape`` (e.g. one value per rater)
    boots = [np.full((B, *getattr(s, "out_shape", ())), np.nan) for s in specs]
    want = [False] * len(specs) if se_out is None else [x is not None for x in se_out]
    if se_out is not None:
        for j, w in enumerate(want):
            se_out[j] = np.full(B, np.nan) if w else None
    if not B or n_units < 2 or all(st is None for st in stats_list):
        return boots
    gen = as_generator(rng)
    # widest statistics matrix: the (resamples x columns) sums must also fit in a block
    k_max = max((st.shape[1] for st in stats_list if st is not None), default=1)
    ok = unit >= 0
    n_rows = n_units if unit_weights is None else int(unit_weights.shape[0])
    item_units = bool(np.array_equal(unit[ok], np.arange(n_rows)))
    has_ordinal = any(isinstance(s, _AlphaOrdinal) for s in specs)
    # with clusters, ordinal alpha needs each item's own counts: no grouping, weights spread to items
    compress = compress and (item_units or not has_ordinal)
    if types is _UNSET:
        types = _unit_types(stats_list, n_units, weights=unit_weights) if compress else None
    if unit_weights is not None and types is None:
        raise ValueError("rows with counts resample by types only (see row_types_ok)")
    if types is not None:
        type_of_unit, n_per_type = types
        first = np.zeros(n_per_type.size, dtype=np.int64)
        first[type_of_unit[::-1]] = np.arange(n_rows)[::-1]
        reduced = [None if st is None else np.asarray(st)[first] for st in stats_list]
        block = max(1, min(B, _BLOCK_CELLS // max(n_per_type.size, k_max, 1)))
        for start in range(0, B, block):
            b = min(block, B - start)
            Wt = type_counts(gen, n_per_type, b)
            for j, (s, st) in enumerate(zip(specs, reduced)):
                if st is None:
                    continue
                boots[j][start:start + b] = s.from_weights(Wt, st)
                if want[j]:
                    se_out[j][start:start + b] = _replicate_se(s, Wt, st)  # type: ignore[index]
        return boots
    # sparse statistics join the index-free path when their spec names its column segments (a
    # rater-by-item statistic: see weighted_sums / factor_rows); one such spec at a time
    segs = [getattr(s, "column_segments", None) for s in specs]
    linear = [st is not None and type(s).from_weights is _Spec.from_weights
              and (not sp.issparse(st) or (sg is not None and len(specs) == 1))
              for s, st, sg in zip(specs, stats_list, segs)]
    if (n_units >= _POISSON_MIN_UNITS and not any(want) and sp.issparse(stats_list[0]) and linear[0]):
        # a spec built as M @ G (item rows) names the factors itself: ``factors``, summed to units here
        fac = getattr(specs[0], "factors", None)
        if fac is not None:
            fac = (unit_sums(fac[0], unit, n_units), fac[1])
        boots[0][:] = specs[0].estimate(weighted_sums(stats_list[0], weight_key(gen), B, segments=segs[0],
                                                      factors=fac))[0]
        return boots
    if (n_units >= _POISSON_MIN_UNITS and not any(want)
            and all(ok_ or st is None for ok_, st in zip(linear, stats_list))):
        # every statistic is a function of weighted column sums: independent unit weights, one
        # pass over the units for all resamples (see _poisson), no index draws
        cols = [np.asarray(st, dtype=np.float64).reshape(n_units, -1) for st in stats_list if st is not None]
        sums = weighted_sums(cols[0] if len(cols) == 1 else np.hstack(cols), weight_key(gen), B)
        at = 0
        for j, (s, st) in enumerate(zip(specs, stats_list)):
            if st is None:
                continue
            k = np.asarray(st).reshape(n_units, -1).shape[1]
            boots[j][:] = s.estimate(sums[:, at:at + k])[0]
            at += k
        return boots
    block = max(1, min(B, _BLOCK_CELLS // max(n_units, k_max, 1)))
    for start in range(0, B, block):
        b = min(block, B - start)
        W = _draw_block(gen, b, n_units)
        for j, (s, st) in enumerate(zip(specs, stats_list)):
            if st is None:
                continue
            uoi = unit if isinstance(s, _AlphaOrdinal) and not item_units else None
            if isinstance(s, _AlphaOrdinal) and uoi is not None:
                boots[j][start:start + b] = s.from_weights(W, st, uoi)
            else:
                boots[j][start:start + b] = s.from_weights(W, st)
            if want[j]:
                se_out[j][start:start + b] = _replicate_se(s, W, st, uoi)  # type: ignore[index]
    return boots


def _analytic_se(s: _Spec, est: float, unit: np.ndarray, n_units: int, unit_kind: str) -> float | None:
    """The literature's large-sample SE (Gwet or Fleiss-Cohen-Everitt), cluster-summed; None if none."""
    inf = s.influence(est)
    if inf is None:
        return None
    e, n_an, m_an = inf
    if unit_kind == "item":  # one item per unit: the unit totals are the e_i
        ee = _dot(e, e) if s.w is None else _dot((e * e), s.w)
        var = ee / n_an ** 2 if s.fce else ee / (n_an * (n_an - 1))
    else:
        ok = unit >= 0
        tot = np.bincount(unit[ok], weights=e[ok], minlength=n_units)
        C = int(np.count_nonzero(np.bincount(unit[m_an & ok], minlength=n_units)))
        if s.fce:
            var = _dot(tot, tot) / n_an ** 2
        else:
            var = (C / (C - 1)) * _dot(tot, tot) / n_an ** 2 if C > 1 else float("nan")
    return math.sqrt(var) if var >= 0 else float("nan")


def rows_resample_by_types(specs: Sequence[_Spec], prep: Prepared, opts: Options) -> bool:
    """Whether :func:`run` can take rows with counts (:attr:`_Spec.w`, the same on every spec): no
    bootstrap runs, or the units group into types (:func:`unit_types`) as the items written out one
    by one would, so the draws are the same. Otherwise the caller writes the rows out per item."""
    if not opts.n_resamples:
        return True
    mask = np.zeros(prep.n_items, dtype=bool)
    for s in specs:
        mask |= s.unit_mask()
    unit, n_rows, _ = _units(prep, mask)
    w = specs[0].w
    if w is None:
        return True
    wu = w[unit >= 0]
    n_units = int(round(float(wu.sum())))
    stats_list = []
    for s in specs:
        S = s.stats()
        est = s.estimate(np.asarray(S.T @ w).reshape(1, -1))[0]
        stats_list.append(_aggregate(S, unit, n_rows) if math.isfinite(float(est[0])) else None)
    if n_units < 2 or all(st is None for st in stats_list):
        return True
    return _unit_types(stats_list, n_units, weights=wu) is not None


#: from this many units :func:`run` computes the analytic SEs and jackknives beside the bootstrap
_CONCURRENT_MIN_UNITS = 100_000


def _two_cores() -> bool:
    """Whether this process may run on two or more cores."""
    return two_cores()


def run(specs: Sequence[_Spec], prep: Prepared, opts: Options, *, func: str) -> list[AgreementResult]:
    """Point estimates, shared bootstrap and analytic SEs for several coefficients on one selection."""
    cl = opts.confidence_level
    mask = np.zeros(prep.n_items, dtype=bool)
    for s in specs:
        mask |= s.unit_mask()
    unit, n_units, unit_kind = _units(prep, mask)
    # rows with counts (_Spec.w): the units are the rows' items, n_rows the rows that hold them
    row_w = specs[0].w if specs else None
    wu = None if row_w is None else row_w[unit >= 0]
    n_rows = n_units
    if wu is not None:
        n_units = int(round(float(wu.sum())))
    point: list[tuple[float, float, float]] = []
    stats_list: list[Any] = []
    for s in specs:
        tot = (s.totals() if s.w is None else np.asarray(s.stats().T @ s.w).ravel()).reshape(1, -1)
        e, o, x = s.estimate(tot)
        est = float(e[0])
        if not math.isfinite(est):
            est = undefined(s.undefined_reason(tot), opts.on_undefined, stacklevel=4)
        point.append((est, float(o[0]), float(x[0])))
        S = s.stats() if opts.n_resamples and math.isfinite(est) else None
        stats_list.append(None if S is None else _aggregate(S, unit, n_rows))

    B = opts.n_resamples
    ok = unit >= 0
    item_units = bool(np.array_equal(unit[ok], np.arange(n_rows)))
    # "wilson" in agreement() applies to observed agreement, "gof" to two-rater binary kappa; the
    # other coefficients get auto's choice (with a warning when one coefficient was asked for)
    chosen = []
    for s, st in zip(specs, stats_list):
        m = opts.method
        if m == "auto" or (m == "wilson" and not _is_pa(s)) or (m == "gof" and binary_pairs(s) is None):
            m = auto_method(s, n_units, B, st is not None)
            if opts.method == "gof" and len(specs) == 1:
                warnings.warn(f"{s.name}: method='gof' (Donner-Eliasziw) needs two raters per item on binary "
                              f"labels without clusters; {_iv.METHOD_NAMES.get(m, m)} used instead.",
                              DegenerateDataWarning, stacklevel=4)
        chosen.append(m)
    se_out: list[np.ndarray | None] = [np.zeros(0) if (m == "studentized" and st is not None) else None
                                       for m, st in zip(chosen, stats_list)]
    types: tuple[np.ndarray, np.ndarray] | None = None

    def deterministic(j: int) -> tuple[float | None, str, np.ndarray | None, tuple[float, float, float] | None]:
        """The analytic SE, the method (auto's fallback where no analytic SE exists), the jackknife
        and what the interval reads from it (:func:`jack_stats`)."""
        s, est, st, m = specs[j], point[j][0], stats_list[j], chosen[j]
        a_se = _analytic_se(s, est, unit, n_units, unit_kind) if math.isfinite(est) else None
        if opts.method == "auto" and m == "wald" and a_se is None:
            m = "jackknife"  # no analytic SE in the literature (ordinal alpha): the jackknife's instead
        need_jack = m in ("bca", "studentized", "jackknife", "wilson") or (m == "wald" and a_se is None)
        jack = None
        if need_jack and math.isfinite(est):
            S = st if st is not None else _aggregate(s.stats(), unit, n_rows)
            # types group the rows of stats_list (this spec's own when st is not None)
            jack = jackknife_values(s, S, unit, n_units, item_units, wu, types if st is not None else None)
        return a_se, m, jack, None if jack is None else jack_stats(jack)

    # the analytic SEs and jackknives do not depend on the resamples: on large tables they run on a
    # second thread while the bootstrap runs (NumPy releases the GIL); the same values either way
    kw: dict[str, Any] = {"se_out": se_out, "unit_weights": wu}
    if B and n_units >= 2 and any(st is not None for st in stats_list) and wu is None and (
            item_units or not any(isinstance(s, _AlphaOrdinal) for s in specs)):
        # grouped once for both: the bootstrap draws types, the jackknife computes a value per type
        types = kw["types"] = _unit_types(stats_list, n_units)
    if B and n_units >= _CONCURRENT_MIN_UNITS and _two_cores():
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as ex:
            side = ex.submit(lambda: [deterministic(j) for j in range(len(specs))])
            boots = bootstrap(specs, stats_list, unit, n_units, B, opts.rng, **kw)
            fixed = side.result()
    else:
        boots = bootstrap(specs, stats_list, unit, n_units, B, opts.rng, **kw)
        fixed = [deterministic(j) for j in range(len(specs))]
    if n_units < MIN_TRUSTED_UNITS and any(math.isfinite(p[0]) for p in point):
        warnings.warn(
            f"{func}: only {n_units} {unit_kind}s carry the coefficient, too few for any interval to be "
            f"trusted: read it as a rough range. Intervals held their 95% level in simulation from about 20 "
            f"{unit_kind}s, and from about 30 for kappa and alpha on binary labels with a category under 15% "
            f"(docs/agreement.md, 'Small samples').", SmallSampleWarning, stacklevel=4)
    elif n_units < RARE_MIN_UNITS:
        _warn_rare_binary(specs, point, chosen, prep, n_units, unit_kind, func)

    out = []
    for s, (est, obs, exp_), bt, st, bse, (a_se, m, jack, jst) in zip(specs, point, boots, stats_list, se_out, fixed):
        B_s = B if st is not None else 0  # no statistics: the bootstrap was not run for this spec
        good = bt[np.isfinite(bt)] if B_s else bt[:0]
        n_fail = int(B_s - good.size) if B_s and math.isfinite(est) else 0
        auto_why = ""
        if opts.method == "auto" and B_s:
            # studentized -> bca needs the same jackknife, computed above
            m, auto_why = auto_after_bootstrap(s, m, est, bt, bse, cl)
        se = float(np.std(good, ddof=1)) if good.size >= 2 else float("nan")
        r, clip_text, at_map_end = interval_for(s, m, est, exp_, boots=bt if B_s else None, st=st, jack=jack,
                                              boot_se=bse, a_se=a_se, n_units=n_units, unit_kind=unit_kind, jack_stats=jst,
                                              level=cl, weights=wu)
        if auto_why and r.method == m:
            r = dataclasses.replace(r, note="; ".join(x for x in (auto_why, r.note) if x))
        if r.method not in (m, "none", "zero_disagreement") and math.isfinite(est) and not at_map_end:
            # a fallback: say which method was used (a nan interval carries its reason in `method`,
            # the bound for tables without disagreement its own note)
            warnings.warn(f"{s.name}: {r.note}.", DegenerateDataWarning, stacklevel=4)
        method = _describe(r, s, unit_kind, B_s, a_se, requested=opts.method, chosen=m)
        label = _ci_label(r, s) + (f"; {clip_text}" if clip_text else "")
        out.append(AgreementResult(
            coefficient=s.name, estimate=est,
            ci=ConfidenceInterval(low=r.low, high=r.high, confidence_level=cl, method=label),
            confidence_level=cl, se=se, analytic_se=a_se, method=method, level=s.level,
            observed=obs, expected=exp_, n_items=s.n_items_used(), n_pairs=s.n_pairs(),
            n_raters=len(prep.raters), n_labels=prep.n_labels, resampling_unit=unit_kind,
            n_units=n_units, n_resamples=B_s, n_failed_resamples=n_fail, abstention=prep.abstention,
            raters=prep.raters,
        ))
    return out


def _warn_rare_binary(specs: Sequence[_Spec], point: Sequence[tuple[float, float, float]], chosen: Sequence[str],
                      prep: Prepared, n_units: int, unit_kind: str, func: str) -> None:
    """SmallSampleWarning for kappa and alpha on binary labels with a rare category (see RARE_SHARE)."""
    if prep.n_sub != 2:
        return
    counts = np.bincount(prep.code[prep.code < 2], minlength=2)
    withN = [s for s in specs if isinstance(s, (_GwetFamily, _AlphaMatrix))]
    if not prep.code.size and withN:  # a streamed table keeps no labels: the items' counts
        s0 = withN[0]
        counts = np.asarray(s0.N.T @ (np.ones(s0.r.shape[0]) if s0.w is None else s0.w)).ravel()[:2]
    if not counts.sum() or counts.min() >= RARE_SHARE * counts.sum():
        return
    names = [s.name for s, p, m in zip(specs, point, chosen)
             if math.isfinite(p[0]) and m != "gof" and not (isinstance(s, _GwetFamily) and s.kind != "fleiss")]
    if names:
        warnings.warn(
            f"{func}: {', '.join(names)} on {n_units} {unit_kind}s of binary labels with one category at "
            f"{counts.min() / counts.sum():.0%} of them: too few for any interval to be trusted at its level "
            f"(in simulation every resampling interval fell short of 95% at 20 {unit_kind}s; they held from "
            f"about {RARE_MIN_UNITS}; docs/agreement.md, 'Small samples').", SmallSampleWarning, stacklevel=5)


def _ci_label(r: Any, s: _Spec) -> str:
    if r.method == "none":
        return "none"
    scale = "logit" if _scale(s).low == 0 else "Fisher z"
    if r.method in ("studentized", "jackknife"):
        return f"{r.label}, {scale} scale"
    if r.method == "wilson":
        return "Wilson score (effective n)"
    return r.label


def _describe(r: Any, s: _Spec, unit_kind: str, B: int, a_se: float | None, *, requested: str, chosen: str) -> str:
    """A sentence on how the interval was built (``AgreementResult.method``)."""
    if r.method == "none":
        head = "no interval" + (f" ({r.note})" if r.note else "")
    else:
        head = f"{_ci_label(r, s)} over {unit_kind}s"
        if r.method in ("percentile", "bca", "studentized") and B:
            head += f" ({B} resamples)"
        if r.method == "wald":
            head += f" from the analytic SE ({_an_name(s)})"
        if requested != chosen:
            head += f"; method='{requested}' chose {chosen}"
        if r.note:
            head += f"; {r.note}"
    if a_se is not None and r.method != "wald":
        head += f"; analytic SE: {_an_name(s)}"
    return head


def _an_name(s: _Spec) -> str:
    return "Fleiss-Cohen-Everitt" if s.fce else "Gwet linearisation"
