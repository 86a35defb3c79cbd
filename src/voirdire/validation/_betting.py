"""Testing by betting: e-processes and confidence sequences for a ratio of means (private).

A stream of bounded pairs ``(num_t, den_t)`` with ``0 <= den_t <= 1`` and ``|num_t| <= den_t``
has the parameter ``theta = E[num] / E[den]`` (``den = 1`` makes it a plain mean in [-1, 1]).
For a boundary ``m`` in (-1, 1), ``y_t(m) = num_t - m den_t`` lies in ``[-(1 + m), 1 - m]`` and
``E[y(m)] <= 0`` exactly when ``theta <= m``. Two nonnegative supermartingales (Waudby-Smith &
Ramdas 2024, "Estimating means of bounded random variables by betting", JRSS-B,
arXiv:2010.09686) then test the two one-sided nulls:

- ``up(m)   = prod_t (1 + lambda_t y_t(m))`` against ``H0: theta <= m`` (evidence that theta > m);
- ``down(m) = prod_t (1 - lambda_t y_t(m))`` against ``H0: theta >= m`` (evidence that theta < m);

with predictable bets ``lambda_t >= 0`` chosen by aGRAPA (their approximate growth-rate adaptive
rule, ``lambda = mu / (sigma^2 + mu^2)`` from the moments of ``y_1..y_{t-1}``) and truncated at
``c / (1 + m)`` and ``c / (1 - m)`` so that every factor stays positive. By Ville's inequality
``P(sup_t up_t(m) >= 1 / a) <= a`` under its null, at every stopping time, whatever the
monitoring. The hedged confidence sequence is ``{m : max(up(m), down(m)) < 2 / a}``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_wealth", "confidence_sequence", "e_bh", "expected_growth"]

#: Truncation of the bets (fraction of the largest safe bet).
BET_CAP = 0.75
#: Prior variance of y (one pseudo-observation) that keeps the first bets small.
PRIOR_VAR = 0.25


def _bets(num: np.ndarray, den: np.ndarray | float, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Predictable aGRAPA bets for every boundary in ``m`` (shape ``(G,)``) and every step.

    ``num`` and ``den`` have shape ``(..., n)`` (several streams at once); returns ``y``,
    ``lam_up`` and ``lam_down`` of shape ``(G, ..., n)``. The bet at step t uses only the
    observations before t.
    """
    num = np.asarray(num, dtype=float)
    den = np.broadcast_to(np.asarray(den, dtype=float), num.shape)
    m = np.atleast_1d(np.asarray(m, dtype=float)).reshape((-1,) + (1,) * num.ndim)
    n = num.shape[-1]

    def prev(x: np.ndarray) -> np.ndarray:
        c = np.cumsum(x, axis=-1)
        return np.concatenate([np.zeros(c.shape[:-1] + (1,)), c[..., :-1]], axis=-1) if n else c

    cnt = np.arange(n, dtype=float)
    s_n, s_d = prev(num), prev(den)
    s_nn, s_nd, s_dd = prev(num * num), prev(num * den), prev(den * den)
    sy = s_n - m * s_d
    syy = s_nn - 2 * m * s_nd + m * m * s_dd
    mu = sy / (cnt + 1.0)
    ybar = sy / np.maximum(cnt, 1.0)
    var = np.maximum(PRIOR_VAR + syy - cnt * ybar * ybar, 0.0) / (cnt + 1.0)
    kelly = mu / (var + mu * mu)
    lam_up = np.clip(kelly, 0.0, BET_CAP / (1.0 + m))
    lam_down = np.clip(-kelly, 0.0, BET_CAP / (1.0 - m))
    y = num - m * den
    return y, lam_up, lam_down


def log_wealth(num: np.ndarray, den: np.ndarray | float, m: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Running log wealth of the two bettors, each of shape ``(G, ..., n)`` (``G`` boundaries).

    ``num`` (and ``den``) may hold several streams, shape ``(..., n)``; ``[..., t]`` is the log
    e-value after the first ``t + 1`` observations.
    """
    y, lu, ld = _bets(num, den, np.atleast_1d(np.asarray(m, dtype=float)))
    return np.cumsum(np.log1p(lu * y), axis=-1), np.cumsum(np.log1p(-ld * y), axis=-1)


def confidence_sequence(num: np.ndarray, den: np.ndarray, at: np.ndarray, *, significance_level: float,
                        grid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Hedged betting confidence sequence for theta, read at the step counts ``at``.

    Returns ``(low, high)`` arrays of the length of ``at`` (``at[i]`` observations seen; 0 gives
    the trivial [-1, 1]). The running intersection is taken, so the sequence only shrinks. The
    grid (default 401 points on (-1, 1)) sets the resolution of the bounds.
    """
    at = np.asarray(at, dtype=np.int64)
    if grid is None:
        grid = np.linspace(-0.9975, 0.9975, 401)
    low = np.full(at.size, -1.0)
    high = np.full(at.size, 1.0)
    n = np.asarray(num).size
    if n == 0:
        return low, high
    up, down = log_wealth(num, den, grid)
    thresh = np.log(2.0 / significance_level)
    out = np.maximum(up, down) >= thresh                       # (G, n): m excluded after step t
    out = np.maximum.accumulate(out, axis=1)                    # running intersection
    step = 2 * (grid[1] - grid[0])
    for i, t in enumerate(at):
        if t <= 0:
            continue
        inside = ~out[:, min(t, n) - 1]
        if inside.any():
            idx = np.flatnonzero(inside)
            low[i] = max(-1.0, grid[idx[0]] - step / 2)
            high[i] = min(1.0, grid[idx[-1]] + step / 2)
        else:  # every grid point excluded: the interval is narrower than the grid
            mid = grid[np.argmin(np.maximum(up, down)[:, min(t, n) - 1])]
            low[i] = high[i] = float(mid)
    return low, high


def e_bh(e: np.ndarray, q: float) -> np.ndarray:
    """e-BH (Wang & Ramdas 2022): reject the ``k*`` largest e-values, ``k* = max{k: e_(k) >= K/(q k)}``.

    Valid FDR control at level ``q`` under arbitrary dependence among the e-values; returns a
    boolean mask of rejections.
    """
    e = np.asarray(e, dtype=float)
    K = e.size
    out = np.zeros(K, dtype=bool)
    if K == 0:
        return out
    order = np.argsort(-e, kind="stable")
    srt = e[order]
    k = np.arange(1, K + 1)
    ok = srt >= K / (q * k)
    if ok.any():
        kstar = int(np.flatnonzero(ok)[-1]) + 1
        out[order[:kstar]] = True
    return out


def expected_growth(num: np.ndarray, den: np.ndarray, m: float, direction: int) -> float:
    """Plug-in expected log growth per observation of the Kelly bet in one direction.

    ``direction = +1`` for ``up(m)``, ``-1`` for ``down(m)``. The bet is the truncated Kelly
    fraction from all observations so far, and the growth its average log factor over them
    (the empirical distribution stands in for the next observations). ``nan`` with fewer than
    two observations; a value <= 0 means the data do not point that way.
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    if num.size < 2:
        return float("nan")
    y = num - m * den
    mu, var = float(y.mean()), float(y.var())
    lam = direction * mu / (var + mu * mu) if (var + mu * mu) > 0 else 0.0
    cap = BET_CAP / (1.0 + m) if direction > 0 else BET_CAP / (1.0 - m)
    lam = float(np.clip(lam, 0.0, cap))
    if lam == 0.0:
        return 0.0
    return float(np.mean(np.log1p(direction * lam * y)))
