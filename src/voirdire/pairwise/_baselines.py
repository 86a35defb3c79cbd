"""Baselines for pairwise verdicts: majority vote, per-pair Bradley-Terry-Davidson, Dawid-Skene, MACE, GLAD.

All share ``fit(table)`` and ``predict_proba()`` -> (n_pairs, 3) over (A, T, B) for the pairs of
the fitted table. Judges enter as separate *workers per presented order* (``gpt@AB``,
``gpt@BA``), so the crowd models can learn a position bias as an order-specific confusion;
humans are one worker each. Verdicts are in the original response order throughout.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._checks import as_generator, check_positive_int
from ..data import ORDERS, PairwiseTable
from ..exceptions import ConvergenceWarning, InvalidParameterError
from ._kernel import local_map
from ._systems import fit_system_strengths, system_log_prior

__all__ = ["MajorityVote", "BradleyTerryDavidson", "SystemBradleyTerryDavidson", "DawidSkene", "MACE", "GLAD", "crowd_arrays", "dawid_skene_arrays",
           "mace_arrays"]

_K = 3


def crowd_arrays(table: PairwiseTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``(pair_idx, worker_idx, verdict, worker_names)``: humans are workers, judges one worker per order."""
    if not isinstance(table, PairwiseTable):
        raise InvalidParameterError(f"Expected a PairwiseTable. Got {type(table).__name__}.")
    is_j = table.roles[table.rater_idx] == "judge"
    names = [str(r) for r in table.raters]
    key = np.where(is_j, table.n_raters + 2 * table.rater_idx + np.maximum(table.orders, 0), table.rater_idx)
    uniq, widx = np.unique(key, return_inverse=True)
    wnames = [names[k] if k < table.n_raters else f"{names[(k - table.n_raters) // 2]}@{ORDERS[(k - table.n_raters) % 2]}"
              for k in uniq.tolist()]
    return table.label_pair, widx.astype(np.int64), table.verdicts.astype(np.int64), wnames


def _counts(pair: np.ndarray, y: np.ndarray, n: int, weights: np.ndarray | None = None, K: int = _K) -> np.ndarray:
    return np.bincount(pair * K + y, weights=weights, minlength=n * K).reshape(n, K).astype(float)


def _check_nonneg(value: Any, name: str, cls: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value >= 0:
        raise InvalidParameterError(f"The '{name}' parameter of {cls} must be a float >= 0. Got {value!r} instead.")
    return float(value)


def _check_tol(value: Any, cls: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value > 0:
        raise InvalidParameterError(f"The 'tol' parameter of {cls} must be a float > 0. Got {value!r} instead.")
    return float(value)


class _Base:
    proba_: np.ndarray
    tol: float
    _last_change: float

    def predict_proba(self) -> np.ndarray:
        """Posterior verdict probabilities (n_pairs, 3) of the fitted table's pairs."""
        if not hasattr(self, "proba_"):
            raise InvalidParameterError(f"{type(self).__name__} is not fitted yet; call fit(table) first.")
        return self.proba_.copy()

    def predict(self) -> np.ndarray:
        """Most probable verdict code (0 = A, 1 = T, 2 = B) per pair."""
        return self.predict_proba().argmax(1)

    def _finish(self, converged: bool, n_iter: int) -> None:
        self.converged_ = bool(converged)
        self.n_iter_ = int(n_iter)
        if not converged:
            warnings.warn(f"{type(self).__name__} did not converge in {n_iter} iterations "
                          f"(last change of the objective {self._last_change:.3g}, tol {self.tol:g}); raise n_iter.",
                          ConvergenceWarning, stacklevel=3)


class MajorityVote(_Base):
    """Vote shares per pair (every label, humans and each judge order, counts once).

    ``smoothing`` adds pseudo-votes to every verdict (0 gives the raw shares, as crowd-kit's
    ``MajorityVote.fit_predict_proba``; a pair with no label gets (1/3, 1/3, 1/3)).

    Examples
    --------
    >>> from voirdire.data import PairwiseTable
    >>> t = PairwiseTable.from_arrays(pair=[1, 1, 1], rater=["a", "b", "c"], verdict=["A", "A", "T"])
    >>> MajorityVote().fit(t).predict_proba().round(3).tolist()
    [[0.667, 0.333, 0.0]]
    """

    def __init__(self, *, smoothing: float = 0.0) -> None:
        self.smoothing = _check_nonneg(smoothing, "smoothing", "MajorityVote")

    def fit(self, table: PairwiseTable) -> MajorityVote:
        pair, _, y, _ = crowd_arrays(table)
        c = _counts(pair, y, table.n_pairs) + self.smoothing
        tot = c.sum(1, keepdims=True)
        self.proba_ = np.where(tot > 0, c / np.where(tot > 0, tot, 1.0), 1.0 / _K)
        return self


class BradleyTerryDavidson(_Base):
    """Per-pair Bradley-Terry-Davidson: the MAP of the pair's own (theta, tau) from all its labels.

    Every label of pair ``t`` (humans, and judges in the original coordinates) is treated as an
    exchangeable draw from ``pi_t = softmax(theta_t, tau_t, -theta_t)`` with prior
    ``(theta_t, tau_t) ~ N(0, I)``: the BayesJudge model with every rater perfect and every
    bias zero (the paper's "both frozen" ablation). ``predict_proba`` is ``pi`` at the MAP.
    Newton iterations are vectorised over pairs; ``history_`` holds the total log posterior at
    every iteration; it stops when every pair's gradient is below ``tol``.

    Examples
    --------
    >>> from voirdire.data import PairwiseTable
    >>> t = PairwiseTable.from_arrays(pair=[1, 1, 1], rater=["a", "b", "c"], verdict=["A", "A", "T"])
    >>> m = BradleyTerryDavidson().fit(t)
    >>> m.converged_, m.predict_proba().round(3).tolist()
    (True, [[0.563, 0.302, 0.135]])
    """

    def __init__(self, *, n_iter: int = 50, tol: float = 1e-8) -> None:
        self.n_iter = check_positive_int(n_iter, "n_iter", "BradleyTerryDavidson")
        self.tol = _check_tol(tol, "BradleyTerryDavidson")

    def fit(self, table: PairwiseTable) -> BradleyTerryDavidson:
        pair, _, y, _ = crowd_arrays(table)
        c = _counts(pair, y, table.n_pairs)
        n = c.sum(1, keepdims=True)
        d = (c[:, 0] - c[:, 2])[:, None]
        nt = c[:, 1:2]
        P = table.n_pairs
        hist: list[float] = []
        th, ta, f, _, _, it, conv = local_map(np.zeros((P, 1)), np.zeros((P, 1)), np.zeros((1, 1)), n, d, nt,
                                              np.zeros((P, 3)), max_iter=self.n_iter, tol=self.tol, history=hist)
        self.history_ = hist
        self._last_change = hist[-1] - hist[-2] if len(hist) > 1 else float("inf")
        self.theta_ = th[:, 0]
        self.tau_ = ta[:, 0]
        u = np.stack([self.theta_, self.tau_, -self.theta_], 1)
        e = np.exp(u - u.max(1, keepdims=True))
        self.proba_ = e / e.sum(1, keepdims=True)
        self._finish(conv, it)
        return self


class SystemBradleyTerryDavidson(_Base):
    """Bradley-Terry-Davidson over the compared systems: every pair's verdict forecast from its systems alone.

    Each system gets a strength ``s_i ~ N(0, sigma^2)`` (``sigma`` by empirical Bayes) and every label
    (humans, and judges in the original coordinates) is a draw from
    ``softmax(s_a - s_b, g, -(s_a - s_b))`` (:func:`voirdire.pairwise.fit_system_strengths` on the
    labels). ``predict_proba`` is that distribution for each pair: a pair's own labels count only
    through the strengths. Pairs whose systems are not named get the labels' overall shares. Needs a
    table with ``systems`` (``model_a``/``model_b``); without them every pair gets the overall shares.

    Examples
    --------
    >>> from voirdire.data import PairwiseTable
    >>> t = PairwiseTable.from_arrays(pair=[1, 1, 2, 3], rater=["a", "b", "a", "a"], verdict=["A", "A", "A", "B"],
    ...                               model_a=["x", "x", "x", "y"], model_b=["y", "y", "y", "x"])
    >>> p = SystemBradleyTerryDavidson().fit(t).predict_proba()
    >>> bool(p[0, 0] > p[0, 2]), bool(p[2, 2] > p[2, 0])
    (True, True)
    """

    def fit(self, table: PairwiseTable) -> SystemBradleyTerryDavidson:
        pair, _, y, _ = crowd_arrays(table)
        share = np.bincount(y, minlength=_K) + 0.5
        share = share / share.sum()
        self.proba_ = np.repeat(share[None], table.n_pairs, 0)
        self.strengths_ = None
        if table.systems is not None:
            onehot = np.eye(_K)[y]
            self.strengths_ = fit_system_strengths(table.systems[pair], onehot)
            tilt = system_log_prior(self.strengths_, table.systems, np.ones(_K))
            if tilt is not None:
                known = (tilt != 0).any(1)
                self.proba_[known] = np.exp(tilt[known])
        self.converged_, self.n_iter_ = True, 1
        return self


def _e_step(log_prior: np.ndarray, log_lik_labels: np.ndarray, pair: np.ndarray, n: int) -> tuple[np.ndarray, float]:
    K = log_lik_labels.shape[1]
    ll = np.zeros((n, K)) + log_prior[None]
    for k in range(K):
        ll[:, k] += np.bincount(pair, weights=log_lik_labels[:, k], minlength=n)
    m = ll.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(ll - m).sum(1))
    return np.exp(ll - lse[:, None]), float(lse.sum())


def _ds_m_step(rho: np.ndarray, pair: np.ndarray, w: np.ndarray, y: np.ndarray, W: int,
               smoothing: float) -> np.ndarray:
    K = rho.shape[1]
    err = np.zeros((W, K, K))
    for k in range(K):
        err[:, k, :] = np.bincount(w * K + y, weights=rho[pair, k], minlength=W * K).reshape(W, K)
    err = np.maximum(err + smoothing, 1e-10)
    return err / err.sum(2, keepdims=True)


def dawid_skene_arrays(pair: np.ndarray, w: np.ndarray, y: np.ndarray, *, n_items: int, n_workers: int,
                       n_classes: int, n_iter: int = 100, tol: float = 1e-5,
                       smoothing: float = 0.0) -> dict[str, Any]:
    """Dawid-Skene EM on label arrays (``pair`` = item index, ``w`` = worker, ``y`` = class code).

    The engine of :class:`DawidSkene` for any number of classes: initialised at the
    majority-vote shares, stopped when the per-label ELBO improves by less than ``tol``.
    Returns a dict with ``proba`` (n_items, K), ``priors`` (K,), ``errors`` (W, K, K: row = true
    class), ``history``, ``converged``, ``n_iter`` and ``last_change``.
    """
    K, P, W = int(n_classes), int(n_items), int(n_workers)
    c = _counts(pair, y, P, K=K)
    tot = c.sum(1, keepdims=True)
    rho = np.where(tot > 0, c / np.where(tot > 0, tot, 1.0), 1.0 / K)
    prior = np.maximum(rho.mean(0), 1e-10)
    err = _ds_m_step(rho, pair, w, y, W, smoothing)
    hist: list[float] = []
    loss = -np.inf
    conv = False
    it = 0
    last = float("inf")
    for it in range(1, n_iter + 1):
        rho, _ = _e_step(np.log(prior), np.log(err[w, :, y]), pair, P)
        prior = np.maximum(rho.mean(0), 1e-10)
        err = _ds_m_step(rho, pair, w, y, W, smoothing)
        # evidence lower bound per label (crowd-kit's loss)
        joint = (rho[pair] * np.log(err[w, :, y])).sum() + (rho * np.log(prior)).sum()
        ent = -(rho * np.log(np.maximum(rho, 1e-10))).sum()
        new = float((joint + ent) / max(len(y), 1))
        hist.append(new)
        last = new - loss
        if new - loss < tol:
            conv = True
            break
        loss = new
    return {"proba": rho, "priors": prior, "errors": err, "history": hist, "converged": conv, "n_iter": it,
            "last_change": last}


class DawidSkene(_Base):
    """Dawid-Skene with 3 classes: a confusion matrix per worker, EM in log space, vectorised.

    Initialised, like crowd-kit's ``DawidSkene``, at the majority-vote shares; stops when the
    per-label evidence lower bound improves by less than ``tol`` (crowd-kit's rule). Confusion
    rows get ``smoothing`` pseudo-counts (0: crowd-kit's behaviour, entries clipped at 1e-10).
    ``history_`` holds the per-label ELBO of each iteration.

    Examples
    --------
    >>> from voirdire.pairwise import simulate_pairwise
    >>> t, truth = simulate_pairwise(200, rng=0)
    >>> ds = DawidSkene().fit(t)
    >>> ds.errors_.shape, bool(ds.converged_)
    ((7, 3, 3), True)
    """

    def __init__(self, *, n_iter: int = 100, tol: float = 1e-5, smoothing: float = 0.0) -> None:
        self.n_iter = check_positive_int(n_iter, "n_iter", "DawidSkene")
        self.tol = _check_tol(tol, "DawidSkene")
        self.smoothing = _check_nonneg(smoothing, "smoothing", "DawidSkene")

    def fit(self, table: PairwiseTable) -> DawidSkene:
        pair, w, y, names = crowd_arrays(table)
        f = dawid_skene_arrays(pair, w, y, n_items=table.n_pairs, n_workers=len(names), n_classes=_K,
                               n_iter=self.n_iter, tol=self.tol, smoothing=self.smoothing)
        self.history_ = f["history"]
        self._last_change = f["last_change"]
        self.proba_ = f["proba"]
        self.priors_ = f["priors"]
        self.errors_ = f["errors"]
        self.workers_ = names
        self._n_labels = np.bincount(w, minlength=len(names)).astype(float)
        self._finish(f["converged"], f["n_iter"])
        return self

    def predict_human_proba(self, *, like: Sequence[str] | None = None) -> np.ndarray:
        """Predictive distribution of one more human verdict per pair: ``proba_ @ C``, with ``C`` the
        confusion matrices of the human workers (or of the workers named in ``like``) averaged
        with their label counts as weights."""
        if not hasattr(self, "proba_"):
            raise InvalidParameterError("DawidSkene is not fitted yet; call fit(table) first.")
        hum = np.array([not ("@AB" in n or "@BA" in n) for n in self.workers_]) & (self._n_labels > 0)
        if like is not None:
            want = {str(h) for h in like}
            sel = hum & np.array([n in want for n in self.workers_])
            if sel.any():
                hum = sel
        if not hum.any():
            hum = self._n_labels > 0
        wts = self._n_labels[hum] / self._n_labels[hum].sum()
        C = np.einsum("r,rkl->kl", wts, self.errors_[hum])
        return self.proba_ @ C


def mace_arrays(pair: np.ndarray, w: np.ndarray, y: np.ndarray, *, n_items: int, n_workers: int, n_classes: int,
                n_iter: int = 50, tol: float = 1e-6, n_restarts: int = 10, smoothing: float = 0.01 / 3,
                rng: int | np.random.Generator | None = None) -> dict[str, Any]:
    """MACE EM on label arrays, any number of classes (the engine of :class:`MACE`).

    Returns a dict with ``proba`` (n_items, K), ``spamming`` (W,: ``s_w``), ``thetas`` (W, K:
    ``xi_w``), ``history``, ``converged``, ``n_iter`` and ``last_change`` of the best restart.
    """
    K, P, W = int(n_classes), int(n_items), int(n_workers)
    gen = as_generator(rng)
    # P(y | z = k) is a = s_w xi_w[y] for k != y and b = a + 1 - s_w for k = y: the E-step needs per
    # label only log a and log b - log a (O(labels) per iteration, not O(labels x K))
    yk = pair * K + y
    flat_prior = np.full(K, -np.log(K))

    def e_step(s: np.ndarray, xi: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        a = s[w] * xi[w, y]
        b = a + (1 - s[w])
        la = np.log(np.maximum(a, 1e-300))
        ll = flat_prior + np.bincount(pair, weights=la, minlength=P)[:, None]
        ll += np.bincount(yk, weights=np.log(np.maximum(b, 1e-300)) - la, minlength=P * K).reshape(P, K)
        m = ll.max(1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(ll - m).sum(1))
        return np.exp(ll - lse[:, None]), float(lse.sum()), b, s[w]

    best: tuple[float, Any] | None = None
    for _ in range(n_restarts):
        s: np.ndarray = gen.uniform(1.0, 2.0, (W, 2))
        s = s[:, 0] / s.sum(1)                        # spamming probability
        xi: np.ndarray = gen.uniform(1.0, 2.0, (W, K))
        xi /= xi.sum(1, keepdims=True)
        hist: list[float] = []
        ll_old = -np.inf
        conv = False
        it = 0
        last = float("inf")
        for it in range(1, n_iter + 1):
            rho, ll, b, sw = e_step(s, xi)
            # posterior of not spamming for each label: P(z = y, knowing | data)
            p_know = rho.ravel()[yk] * (1 - sw) / np.maximum(b, 1e-300)
            p_spam = 1.0 - p_know
            a_know = np.bincount(w, weights=p_know, minlength=W) + smoothing
            a_spam = np.bincount(w, weights=p_spam, minlength=W) + smoothing
            s = a_spam / (a_spam + a_know)
            xi = np.bincount(w * K + y, weights=p_spam, minlength=W * K).reshape(W, K) + smoothing
            xi /= xi.sum(1, keepdims=True)
            hist.append(ll)
            last = ll - ll_old
            if abs(ll - ll_old) < tol * max(1.0, abs(ll)):
                conv = True
                break
            ll_old = ll
        if best is None or ll > best[0]:
            best = (ll, (s, xi, hist, conv, it, last))
    s, xi, hist, conv, it, last = best[1]  # type: ignore[index]
    proba = e_step(s, xi)[0]
    return {"proba": proba, "spamming": s, "thetas": xi, "history": hist, "converged": conv, "n_iter": it,
            "last_change": last}


class MACE(_Base):
    """MACE (Hovy et al. 2013): each worker answers the truth unless spamming, then follows a strategy.

    ``P(y | z) = (1 - s_w) 1[y = z] + s_w xi_w[y]`` with a uniform prior over ``z``; EM with
    ``smoothing`` pseudo-counts (crowd-kit uses 0.01 / 3), ``n_restarts`` random starts (the best
    marginal likelihood is kept). ``spamming_`` is ``s_w``, ``thetas_`` is ``xi_w``.

    Examples
    --------
    >>> from voirdire.pairwise import simulate_pairwise
    >>> t, truth = simulate_pairwise(200, rng=0)
    >>> m = MACE(rng=0).fit(t)
    >>> m.spamming_.shape
    (7,)
    """

    def __init__(self, *, n_iter: int = 50, tol: float = 1e-6, n_restarts: int = 10, smoothing: float = 0.01 / 3,
                 rng: int | np.random.Generator | None = None) -> None:
        self.n_iter = check_positive_int(n_iter, "n_iter", "MACE")
        self.tol = _check_tol(tol, "MACE")
        self.n_restarts = check_positive_int(n_restarts, "n_restarts", "MACE")
        self.smoothing = _check_nonneg(smoothing, "smoothing", "MACE")
        self.rng = rng

    def fit(self, table: PairwiseTable) -> MACE:
        pair, w, y, names = crowd_arrays(table)
        f = mace_arrays(pair, w, y, n_items=table.n_pairs, n_workers=len(names), n_classes=_K, n_iter=self.n_iter,
                        tol=self.tol, n_restarts=self.n_restarts, smoothing=self.smoothing, rng=self.rng)
        self.proba_ = f["proba"]
        self.spamming_ = f["spamming"]
        self.thetas_ = f["thetas"]
        self.workers_ = names
        self.history_ = f["history"]
        self._last_change = f["last_change"]
        self._finish(f["converged"], f["n_iter"])
        return self


class GLAD(_Base):
    """GLAD (Whitehill et al. 2009), multiclass: ``P(y = z) = sigmoid(a_w * exp(b_t))``, errors uniform.

    EM: the E-step in log space; the M-step runs ``m_step_iter`` diagonal Newton steps on the
    expected complete log-likelihood with Gaussian priors ``a_w ~ N(1, 1)``, ``b_t ~ N(1, 1)``
    (crowd-kit's prior means), alternating workers and pairs. Class priors stay uniform, as in
    crowd-kit (``learn_priors=True`` re-estimates them; on SummEval that drives the tie prior to 0,
    because the judge rarely says tie, and the fit collapses).
    ``alphas_`` are the worker abilities ``a_w``, ``betas_`` the pair easiness ``exp(b_t)``.

    Examples
    --------
    >>> from voirdire.pairwise import simulate_pairwise
    >>> t, truth = simulate_pairwise(200, rng=0)
    >>> g = GLAD().fit(t)
    >>> bool(g.converged_), g.alphas_.shape
    (True, (7,))
    """

    def __init__(self, *, n_iter: int = 100, tol: float = 1e-6, m_step_iter: int = 5,
                 learn_priors: bool = False) -> None:
        self.learn_priors = bool(learn_priors)
        self.n_iter = check_positive_int(n_iter, "n_iter", "GLAD")
        self.tol = _check_tol(tol, "GLAD")
        self.m_step_iter = check_positive_int(m_step_iter, "m_step_iter", "GLAD")

    def fit(self, table: PairwiseTable) -> GLAD:
        pair, w, y, names = crowd_arrays(table)
        P, W = table.n_pairs, len(names)
        a = np.ones(W)
        b = np.ones(P)
        prior = np.full(_K, 1.0 / _K)
        hist: list[float] = []
        old = -np.inf
        conv = False
        it = 0
        onehot = y[:, None] == np.arange(_K)
        for it in range(1, self.n_iter + 1):
            x = a[w] * np.exp(b[pair])
            ls = -np.logaddexp(0.0, -x)                       # log sigmoid
            l1s = -np.logaddexp(0.0, x)                       # log (1 - sigmoid)
            lab = np.where(onehot, ls[:, None], l1s[:, None] - np.log(_K - 1))
            rho, ll = _e_step(np.log(prior), lab, pair, P)
            if self.learn_priors:
                prior = np.maximum(rho.mean(0), 1e-10)
            target = rho[pair, y]                             # P(z = y) per label
            for _ in range(self.m_step_iter):
                eb = np.exp(b[pair])
                x = a[w] * eb
                sg = 1.0 / (1.0 + np.exp(-x))
                r = target - sg
                v = sg * (1 - sg)
                g_a = np.bincount(w, weights=r * eb, minlength=W) - (a - 1.0)
                h_a = np.bincount(w, weights=v * eb * eb, minlength=W) + 1.0
                a = a + g_a / h_a
                x = a[w] * eb
                sg = 1.0 / (1.0 + np.exp(-x))
                r = target - sg
                v = sg * (1 - sg)
                g_b = np.bincount(pair, weights=r * x, minlength=P) - (b - 1.0)
                h_b = np.bincount(pair, weights=v * x * x, minlength=P) + 1.0
                b = b + np.clip(g_b / h_b, -1.0, 1.0)
            obj = ll - 0.5 * ((a - 1.0) ** 2).sum() - 0.5 * ((b - 1.0) ** 2).sum()
            hist.append(obj)
            self._last_change = obj - old
            if abs(obj - old) < self.tol * max(1.0, abs(obj)):
                conv = True
                break
            old = obj
        x = a[w] * np.exp(b[pair])
        lab = np.where(onehot, (-np.logaddexp(0.0, -x))[:, None], (-np.logaddexp(0.0, x))[:, None] - np.log(_K - 1))
        self.proba_, _ = _e_step(np.log(prior), lab, pair, P)
        self.alphas_ = a
        self.betas_ = np.exp(b)
        self.priors_ = prior
        self.workers_ = names
        self.history_ = hist
        self._finish(conv, it)
        return self
