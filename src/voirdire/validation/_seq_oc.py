"""Operating characteristics of sequential validation on synthetic streams (error rates, stopping)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy.special import stdtr  # the t cdf that scipy.stats.t.cdf calls (no scipy.stats import: ~1 s)

from .._checks import as_generator, check_positive_int, check_probability
from .._results import Result
from ..exceptions import InvalidParameterError
from ._alt_test import multiplicity_rejections
from ._betting import log_wealth
from ._common import check_epsilon

__all__ = ["SequentialOCResult", "sequential_operating_characteristics"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SequentialOCResult(Result):
    """Error rates and stopping of the sequential rule next to a fixed-sample test looked at as often.

    ``p_accept`` / ``p_reject``: share of streams that ever accepted / rejected (sequential rule).
    ``p_accept_fixed``: share of streams in which the fixed-sample alt-test (t-test, BY), run at
    every look from its minimum of ``min_items_fixed`` items on, ever accepted. ``stop_items``:
    comparisons per human at the decision (``nan`` where none was reached); ``median_stop`` its
    median over the streams that decided; ``mc_se_accept``: Monte-Carlo standard error of ``p_accept``.
    """

    mean_d: tuple[float, ...]
    epsilon: float
    q: float
    n_humans: int
    look_every: int
    max_items: int
    n_streams: int
    p_accept: float
    p_reject: float
    p_accept_fixed: float
    mc_se_accept: float
    median_stop: float
    stop_items: np.ndarray


def _ebh_count(e: np.ndarray, q: float) -> np.ndarray:
    """e-BH rejection count along the last axis."""
    K = e.shape[-1]
    srt = -np.sort(-e, axis=-1)
    ok = srt >= K / (q * np.arange(1, K + 1))
    return np.where(ok.any(axis=-1), K - np.argmax(ok[..., ::-1], axis=-1), 0)


def sequential_operating_characteristics(
    *, mean_d: float | Any, p_tie: float = 0.5, n_humans: int = 3, epsilon: float = 0.2, q: float = 0.05,
    threshold: float = 0.5, look_every: int = 10, max_items: int = 5000, n_streams: int = 2000,
    min_items_fixed: int = 30, rng: int | np.random.Generator | None = 0,
) -> SequentialOCResult:
    r"""Simulate streams of alt-test advantages and apply the sequential rule at every look.

    Each human's advantages ``d in {-1, 0, 1}`` are drawn independently with ``P(d = 0) = p_tie``
    and mean ``mean_d`` (one value, or one per human); the judge wins against a human when
    ``E[d] < epsilon``. Every ``look_every`` items the e-BH rule of :func:`validate_sequential`
    decides (accept, reject or continue). The same streams are also judged by the fixed-sample
    alt-test (one-sided t-tests, Benjamini-Yekutieli) at every look, as a user who re-runs it
    after each batch would, to show what repeated looks do to it.

    With ``mean_d = epsilon`` (the judge exactly on the margin) ``p_accept`` is the type-I error
    under continuous monitoring; :func:`validate_sequential` guarantees it is at most ``q``.

    Parameters
    ----------
    mean_d : float or sequence of float in (-1, 1)
    p_tie : float in [0, 1), default 0.5
    n_humans : int >= 2, default 3
    epsilon, q, threshold : float
        As in :func:`validate_sequential` (alt-test orientation).
    look_every, max_items, n_streams : int
    min_items_fixed : int, default 30
        The fixed test's minimum items per human (alt-test's ``min_items_per_human``).
    rng : int, Generator or None

    Returns
    -------
    SequentialOCResult

    Examples
    --------
    >>> r = sequential_operating_characteristics(mean_d=0.2, n_streams=50, max_items=500)
    >>> r.p_accept <= 0.1
    True
    """
    func = "sequential_operating_characteristics"
    K = check_positive_int(n_humans, "n_humans", func, minimum=2)
    md = np.broadcast_to(np.asarray(mean_d, dtype=float), (K,)).copy()
    p_tie = check_probability(p_tie, "p_tie", func, open_low=False)
    if np.any(np.abs(md) > 1 - p_tie):
        raise InvalidParameterError(f"{func}: |mean_d| must be at most 1 - p_tie = {1 - p_tie}. Got {md.tolist()}.")
    epsilon = check_epsilon(epsilon, func)
    q = check_probability(q, "q", func)
    threshold = check_probability(threshold, "threshold", func, open_low=True, open_high=False)
    look_every = check_positive_int(look_every, "look_every", func)
    max_items = check_positive_int(max_items, "max_items", func)
    S = check_positive_int(n_streams, "n_streams", func)
    gen = as_generator(rng)
    looks = np.arange(look_every, max_items + 1, look_every)
    need = max(1, math.ceil(threshold * K - 1e-12))
    p_pos = (1 - p_tie + md) / 2
    p_neg = (1 - p_tie - md) / 2
    u = gen.random((S, K, max_items))
    d = np.where(u < p_neg[None, :, None], -1.0, np.where(u < (p_neg + p_tie)[None, :, None], 0.0, 1.0))
    lw = np.empty((S, K, looks.size))
    ll = np.empty((S, K, looks.size))
    chunk = max(1, 2_000_000 // (K * max_items))
    for s0 in range(0, S, chunk):
        up, down = log_wealth(d[s0:s0 + chunk], 1.0, epsilon)
        lw[s0:s0 + chunk] = down[0][..., looks - 1]
        ll[s0:s0 + chunk] = up[0][..., looks - 1]
    wins = _ebh_count(np.exp(np.minimum(lw, 690.0)).transpose(0, 2, 1), q)         # (S, looks)
    losses = _ebh_count(np.exp(np.minimum(ll, 690.0)).transpose(0, 2, 1), q)
    acc = wins >= need
    rej = (losses > K - need) & ~acc
    decided = acc | rej
    first = np.where(decided.any(axis=1), np.argmax(decided, axis=1), -1)
    ever_acc = np.where(first >= 0, acc[np.arange(S), np.maximum(first, 0)], False)
    ever_rej = np.where(first >= 0, rej[np.arange(S), np.maximum(first, 0)], False)
    stop = np.where(first >= 0, looks[np.maximum(first, 0)].astype(float), np.nan)
    # the fixed-sample alt-test at every look from its minimum on
    cs = np.cumsum(d, axis=2)[:, :, looks - 1]
    css = np.cumsum(d * d, axis=2)[:, :, looks - 1]
    n = looks.astype(float)
    mean = cs / n
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (css - n * mean**2) / (n - 1)
        tstat = (mean - epsilon) / np.sqrt(var / n)
        p = np.where(var > 1e-12, stdtr(n - 1, tstat), np.where(mean < epsilon, 0.0, 1.0))
    p = np.where(n >= min_items_fixed, p, np.nan).transpose(0, 2, 1)               # (S, looks, K)
    rej_fixed = multiplicity_rejections(p, q, correction="by")
    acc_fixed = (rej_fixed >= need) & (n >= min_items_fixed)[None, :]
    pa = float(ever_acc.mean())
    return SequentialOCResult(
        mean_d=tuple(float(x) for x in md), epsilon=epsilon, q=q, n_humans=K, look_every=look_every,
        max_items=max_items, n_streams=S, p_accept=pa, p_reject=float(ever_rej.mean()),
        p_accept_fixed=float(acc_fixed.any(axis=1).mean()), mc_se_accept=math.sqrt(pa * (1 - pa) / S),
        median_stop=float(np.nanmedian(stop)) if np.isfinite(stop).any() else float("nan"), stop_items=stop,
    )
