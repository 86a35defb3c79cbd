"""The system-strength prior of :class:`PairwiseBayesModel`: which systems a pair compares says something
about its verdict before anyone has labelled it.

When a table names the systems behind response A and B (``model_a``/``model_b``, kept by
:class:`voirdire.data.PairwiseTable` as ``systems``), every system ``i`` gets a strength ``s_i`` and
the pairs' latent verdicts a Bradley-Terry-Davidson class prior

    q_t = softmax(s_a - s_b, g, -(s_a - s_b)),      s_i ~ N(0, sigma^2),

fitted to the pairs' posterior verdicts (soft labels) by penalised maximum likelihood, with
``sigma^2`` by empirical Bayes (the EM / MacKay update ``sigma^2 = (|s|^2 + tr Cov s) / n_systems``
under the Laplace approximation). The model multiplies each pair's verdict evidence by
``q_t / pbar`` (``pbar``: the class prior implied by the pair prior), so a pair with no judge label
has exactly ``q_t`` as its prior verdict distribution. Pure functions on arrays; the model calls
them in its refine sweeps.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._results import Result

__all__ = ["SystemStrengths", "fit_system_strengths", "system_log_prior"]

_SIGMA2_RANGE = (1e-4, 25.0)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SystemStrengths(Result):
    """Fitted system strengths.

    Attributes
    ----------
    systems : tuple of str
        The systems' names, in the order of ``strength``.
    strength, strength_sd : ndarray (n_systems,)
        Posterior mode and Laplace standard deviation of each ``s_i`` (log-odds of "A better" when
        the system writes A against a system of strength 0; half the Bradley-Terry scale).
    tie_logit : float
        ``g``: the tie logit of two equally strong systems.
    sigma : float
        The prior sd of the strengths (empirical Bayes).
    n_pairs : int
        Pairs that named both systems (those the fit used).
    """

    systems: tuple[str, ...]
    strength: np.ndarray
    strength_sd: np.ndarray
    tie_logit: float
    sigma: float
    n_pairs: int

    def index(self, names: np.ndarray) -> np.ndarray:
        """Position of each name in ``systems`` (-1: unknown or empty)."""
        pos = {s: k for k, s in enumerate(self.systems)}
        return np.array([pos.get(str(n), -1) if str(n) else -1 for n in np.asarray(names).ravel()],
                        dtype=np.int64).reshape(np.shape(names))


def _probs(delta: np.ndarray, g: float) -> np.ndarray:
    u = np.stack([delta, np.full_like(delta, g), -delta], 1)
    e = np.exp(u - u.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def fit_system_strengths(systems: np.ndarray, rho: np.ndarray, *, n_iter: int = 50, n_outer: int = 20,
                         tol: float = 1e-6) -> SystemStrengths | None:
    """Penalised Bradley-Terry-Davidson fit of the systems' strengths to soft verdicts.

    Parameters
    ----------
    systems : (n_pairs, 2) array of str
        The systems behind A and B (``""``: unknown; such pairs are left out).
    rho : (n_pairs, 3)
        Each pair's verdict distribution (A, tie, B): the soft labels.
    n_iter : int, default 50
        Newton steps per value of ``sigma^2``.
    n_outer : int, default 20
        Empirical-Bayes updates of ``sigma^2``.
    tol : float, default 1e-6

    Returns
    -------
    SystemStrengths or None
        None when fewer than two systems are named on pairs comparing different systems.

    Examples
    --------
    >>> sy = np.array([["x", "y"]] * 40 + [["y", "z"]] * 40)
    >>> rho = np.array([[0.8, 0.1, 0.1]] * 40 + [[0.5, 0.2, 0.3]] * 40)
    >>> f = fit_system_strengths(sy, rho)
    >>> f.systems, bool(f.strength[0] > f.strength[1] > f.strength[2])
    (('x', 'y', 'z'), True)
    """
    sy = np.asarray(systems, dtype=object)
    rho = np.asarray(rho, dtype=float)
    ok = (sy[:, 0] != "") & (sy[:, 1] != "")
    names, codes = np.unique(sy[ok].astype(str).ravel(), return_inverse=True)
    codes = codes.reshape(-1, 2)
    S = len(names)
    if S < 2 or not (codes[:, 0] != codes[:, 1]).any():
        return None
    r = rho[ok]
    ia, ib = codes[:, 0], codes[:, 1]
    y_d = r[:, 0] - r[:, 2]                         # the soft "A minus B" of each pair
    y_t = r[:, 1]
    s = np.zeros(S)
    tie = float(np.clip(y_t.mean(), 1e-3, 1 - 1e-3))
    g = float(np.log(tie / ((1 - tie) / 2)))         # tie logit at delta = 0
    sigma2 = 1.0
    cov_diag = np.ones(S)
    for _ in range(n_outer):
        for _ in range(n_iter):
            delta = s[ia] - s[ib]
            p = _probs(delta, g)
            pd_, pt = p[:, 0] - p[:, 2], p[:, 1]
            # gradient of sum_t sum_k rho_tk log q_tk in delta_t and g, and its (negative) Hessian
            gd = y_d - pd_
            gg = float((y_t - pt).sum())
            w_dd = p[:, 0] + p[:, 2] - pd_ ** 2
            w_dg = -pd_ * pt
            w_gg = float((pt * (1 - pt)).sum())
            grad = np.bincount(ia, weights=gd, minlength=S) - np.bincount(ib, weights=gd, minlength=S) - s / sigma2
            H = np.zeros((S + 1, S + 1))
            # the strengths' block: w on (a, a) and (b, b), -w on (a, b) and (b, a), summed over pairs
            H[:S, :S] = (np.bincount(ia * S + ia, weights=w_dd, minlength=S * S)
                         + np.bincount(ib * S + ib, weights=w_dd, minlength=S * S)
                         - np.bincount(ia * S + ib, weights=w_dd, minlength=S * S)
                         - np.bincount(ib * S + ia, weights=w_dd, minlength=S * S)).reshape(S, S)
            hg = np.bincount(ia, weights=w_dg, minlength=S) - np.bincount(ib, weights=w_dg, minlength=S)
            H[:S, S] = H[S, :S] = hg
            H[S, S] = w_gg + 1e-6
            H[np.arange(S), np.arange(S)] += 1.0 / sigma2
            step = np.linalg.solve(H, np.concatenate([grad, [gg]]))
            step = np.clip(step, -2.0, 2.0)
            s = s + step[:S]
            g = g + float(step[S])
            if np.abs(step).max() < tol:
                break
        cov_diag = np.diag(np.linalg.inv(H))[:S]
        new = float(np.clip((s @ s + cov_diag.sum()) / S, *_SIGMA2_RANGE))
        done = abs(new - sigma2) < 1e-4 * sigma2
        sigma2 = new
        if done:
            break
    return SystemStrengths(systems=tuple(str(x) for x in names), strength=s, strength_sd=np.sqrt(cov_diag),
                           tie_logit=g, sigma=float(np.sqrt(sigma2)), n_pairs=int(ok.sum()))


def system_log_prior(fit: SystemStrengths | None, systems: np.ndarray | None, base: np.ndarray) -> np.ndarray | None:
    """``log q_t - log base`` per pair and verdict: the tilt the model adds to each pair's verdict evidence.

    ``base`` (3,) is the class prior the pair prior already implies. Pairs whose two systems are not
    both known to ``fit`` get 0 (no tilt). None when there is nothing to tilt.

    Examples
    --------
    >>> f = SystemStrengths(systems=("x", "y"), strength=np.array([0.5, -0.5]), strength_sd=np.ones(2),
    ...                     tie_logit=0.0, sigma=1.0, n_pairs=10)
    >>> t = system_log_prior(f, np.array([["x", "y"], ["x", "w"]]), np.full(3, 1 / 3))
    >>> bool(t[0, 0] > 0 > t[0, 2]), t[1].tolist()
    (True, [0.0, 0.0, 0.0])
    """
    if fit is None or systems is None or not len(systems):
        return None
    idx = fit.index(systems)
    ok = (idx >= 0).all(1)
    if not ok.any():
        return None
    out = np.zeros((len(idx), 3))
    delta = fit.strength[idx[ok, 0]] - fit.strength[idx[ok, 1]]
    out[ok] = np.log(_probs(delta, fit.tie_logit)) - np.log(np.asarray(base, dtype=float))[None]
    return out
