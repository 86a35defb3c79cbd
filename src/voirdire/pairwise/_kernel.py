"""Vectorised numerical core of the pairwise model (private).

The local objective of one item ``t`` for one particle ``m`` (METHODS.md section 3) is

    f(theta, tau) = -(theta**2 + tau**2) / 2                                  (prior N(0, I))
                    + log sum_k pi_k(theta, tau) L_tk                         (humans, Dawid-Skene)
                    + sum_{judge labels (j, s, y)} log softmax(a, tau, -a)[y],  a = theta + s * beta_j

with ``pi = softmax(theta, tau, -theta)`` and ``L_tk = prod_r C_r[k, y_tr]``. Every array here
has leading shape ``(B, M)``: ``B`` items of a chunk times ``M`` particles, so one Newton pass
solves all ``B * M`` two-dimensional problems at once. Judge labels are aggregated per
*channel* (a judge in one presented order): counts ``n`` (labels), ``d`` (#A - #B) and ``nt``
(#T) per (item, channel), and the channel's shift ``s * beta_j`` per (particle, channel).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

_CLIP = 60.0
_BOUND = 50.0   # |theta|, |tau| (and the callers' |shift|) stay below this: exp() cannot overflow


def _clip(x: Any, lo: float, hi: float) -> Any:
    """``np.clip`` without its Python-level dispatch (the hot loops call it thousands of times)."""
    return np.minimum(np.maximum(x, lo), hi)


Prior = tuple[float, float, float, float]
#: ``(mean theta, precision theta, mean tau, precision tau)`` of the standard N(0, I) prior.
STANDARD_PRIOR: Prior = (0.0, 1.0, 0.0, 1.0)


def objective(theta: np.ndarray, tau: np.ndarray, shift: np.ndarray, n: np.ndarray, d: np.ndarray,
              nt: np.ndarray, logL: np.ndarray | None, *, derivatives: bool = True, tshift: np.ndarray | None = None,
              prior: Prior = STANDARD_PRIOR, slope: np.ndarray | None = None) -> tuple[Any, ...]:
    """Objective, gradient, Hessian (full and a safe negative-definite one), and class posteriors.

    Parameters
    ----------
    theta, tau : (B, M)
    shift : (M, K) per-particle channel shift ``s * beta_j``
    n, d, nt : (B, K) per-item channel counts
    logL : (B, 3) or None
        Human log-evidence per latent class (zeros when the item has no human). ``None``: no
        human term at all (the judges-only objective; cheaper than zeros, same values; ``q`` is then None).
    tshift : (M, K), optional
        Per-particle channel offset ``delta_j`` of the judge's tie logit (``tau + delta_j``).
    slope : (M, K), optional
        Per-particle channel reliability ``a_j`` (the judge's discrimination): the judge answers
        from ``softmax(a_j theta + s beta_j, a_j tau + delta_j, -(a_j theta + s beta_j))``, so
        ``a_j = 1`` is the paper's judge and ``a_j = 0`` a judge whose verdict carries no
        information about the pair (default: 1 for every channel).
    prior : (m_theta, p_theta, m_tau, p_tau)
        Independent normal priors ``theta ~ N(m_theta, 1/p_theta)``, ``tau ~ N(m_tau, 1/p_tau)``
        (default N(0, I)); the objective includes their log normalising constants up to ``-log 2 pi``.

    Returns
    -------
    f, g_theta, g_tau, h_tt, h_ta, h_aa, s_tt, s_ta, s_aa, q
        ``h_*``: the Hessian; ``s_*``: a negative-definite surrogate (the human term's
        positive part dropped). ``q``: the posterior of the latent verdict given the humans at
        this (theta, tau), as (B, M, 3) when ``derivatives=False``, else the unnormalised parts
        ``(e_A, z, e_B)`` (``q = (e_A, 1, e_B) / z``; see :func:`q_of`).
    """
    theta = _clip(theta, -_BOUND, _BOUND)
    tau = _clip(tau, -_BOUND, _BOUND)
    # --- prior
    m_t, p_t, m_a, p_a = prior
    f = -0.5 * (p_t * (theta - m_t) ** 2 + p_a * (tau - m_a) ** 2) + 0.5 * np.log(p_t * p_a)
    # --- judges (channel-first layout (K, B, M); reductions over K by einsum, buffers reused)
    K = shift.shape[-1]
    if K and slope is not None:
        f, jterms = _judges_with_slope(f, theta, tau, shift, slope, n, d, nt, tshift, derivatives)
        if derivatives:
            gj_t, gj_a, hj_tt, hj_ta, hj_aa = jterms
    elif K:
        nT, dT = n.T, d.T                                               # (K, B)
        a = theta[None, :, :] + shift.T[:, None, :]                    # (K, B, M)
        E = np.exp(a)
        iE = np.reciprocal(E)
        G = np.exp(-tau)                                                # (B, M)
        if tshift is not None:
            G = G[None] * np.exp(-tshift).T[:, None, :]                 # (K, B, M): e^-(tau + delta)
        z = E + iE
        np.subtract(E, iE, out=E)                                       # E <- e^a - e^-a
        np.multiply(z, G, out=z)
        z += 1.0                                                        # z = 1 + e^-tau (e^a + e^-a)
        np.log(z, out=iE)                                               # iE <- log z  (LSE - tau)
        f = f + np.einsum("kb,kbm->bm", dT, a) - np.einsum("kb,kbm->bm", nT, iE) \
            + ((nt - n).sum(1))[:, None] * tau
        if tshift is not None:
            f = f + (nt - n) @ tshift.T                                 # (B, M): sum_k (nt - n)_k delta_k
        if derivatives:
            p2 = np.reciprocal(z, out=z)                                # p_T
            pd_ = np.multiply(E, G, out=E)
            pd_ *= p2                                                   # p_A - p_B
            n_tot = n.sum(1)[:, None]
            s_pd = np.einsum("kb,kbm->bm", nT, pd_)
            s_p2 = np.einsum("kb,kbm->bm", nT, p2)
            np.multiply(pd_, pd_, out=a)
            s_pd2 = np.einsum("kb,kbm->bm", nT, a)
            np.multiply(pd_, p2, out=a)
            s_pdp2 = np.einsum("kb,kbm->bm", nT, a)
            np.multiply(p2, p2, out=a)
            s_p22 = np.einsum("kb,kbm->bm", nT, a)
            gj_t = d.sum(1)[:, None] - s_pd
            gj_a = nt.sum(1)[:, None] - s_p2
            hj_tt = -(n_tot - s_p2 - s_pd2)                             # -sum n (p_A + p_B - (p_A - p_B)^2)
            hj_ta = s_pdp2
            hj_aa = -(s_p2 - s_p22)                                     # -sum n p_T (1 - p_T)
    elif derivatives:
        gj_t = gj_a = hj_tt = hj_ta = hj_aa = np.zeros_like(theta)
    if logL is None:
        # no human evidence (the judges-only objective of the integrated verdict): the humans' term
        # log sum_k pi_k L_k with L = 1 is 0, and so are its derivatives; the Hessian is negative definite
        if not derivatives:
            return (f, None)
        g_t = -p_t * (theta - m_t) + gj_t
        g_a = -p_a * (tau - m_a) + gj_a
        h_tt, h_ta, h_aa = -p_t + hj_tt, hj_ta, -p_a + hj_aa
        return f, g_t, g_a, h_tt, h_ta, h_aa, h_tt, h_ta, h_aa, None
    # --- humans: log sum_k pi_k L_k = LSE(u + logL) - LSE(u), u = (theta, tau, -theta), relative to tau
    ep1 = np.exp(theta - tau)                 # |theta|, |tau| <= 50: no overflow
    ep3 = np.exp(-theta - tau)
    zp = ep1 + ep3
    zp += 1.0
    l1 = np.clip(logL[:, 0] - logL[:, 1], -300.0, 300.0)[:, None]
    l3 = np.clip(logL[:, 2] - logL[:, 1], -300.0, 300.0)[:, None]
    eq1 = ep1 * np.exp(l1)
    eq3 = ep3 * np.exp(l3)
    zq = eq1 + eq3
    zq += 1.0
    f = f + np.log(zq / zp) + logL[:, 1, None]
    rq = 1.0 / zq
    q = np.stack([eq1 * rq, rq, eq3 * rq], axis=-1) if not derivatives else (eq1, zq, eq3)
    if not derivatives:
        return (f, q)
    rp = 1.0 / zp
    p1, p2, p3 = ep1 * rp, rp, ep3 * rp
    q1, q2, q3 = eq1 * rq, rq, eq3 * rq
    pdp, qdq = p1 - p3, q1 - q3
    covp_tt = p1 + p3 - pdp * pdp
    covp_ta = -pdp * p2
    covp_aa = p2 * (1.0 - p2)
    g_t = -p_t * (theta - m_t) + gj_t + qdq - pdp
    g_a = -p_a * (tau - m_a) + gj_a + q2 - p2
    s_tt = -p_t + hj_tt - covp_tt
    s_ta = hj_ta - covp_ta
    s_aa = -p_a + hj_aa - covp_aa
    h_tt = s_tt + (q1 + q3 - qdq * qdq)
    h_ta = s_ta - qdq * q2
    h_aa = s_aa + q2 * (1.0 - q2)
    return f, g_t, g_a, h_tt, h_ta, h_aa, s_tt, s_ta, s_aa, q


def _judges_with_slope(f: np.ndarray, theta: np.ndarray, tau: np.ndarray, shift: np.ndarray, slope: np.ndarray,
                       n: np.ndarray, d: np.ndarray, nt: np.ndarray, tshift: np.ndarray | None,
                       derivatives: bool) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """The judges' term of :func:`objective` with a reliability ``a`` per (particle, channel).

    Channel ``k`` answers from ``softmax(a_k theta + c_k, a_k tau + e_k, -(a_k theta + c_k))``
    (``c``: the position shift, ``e``: the tie offset); the derivatives are the slope-free ones
    times ``a_k`` (first order) and ``a_k**2`` (second order)."""
    c = slope.T[:, None, :]                                             # (K, 1, M)
    a = c * theta[None]
    a += shift.T[:, None, :]                                            # (K, B, M): a theta + c
    tt = c * tau[None]
    if tshift is not None:
        tt += tshift.T[:, None, :]                                      # a tau + e
    nT = n.T
    E = np.exp(a)
    iE = np.reciprocal(E)
    G = np.exp(np.negative(tt, out=tt))
    z = E + iE
    z *= G
    z += 1.0
    # the linear terms need no (K, B, M) pass: sum_k d_k (a_k theta + c_k) = theta (d a') + d c'
    dS, xS = d @ slope.T, (nt - n) @ slope.T                            # (B, M)
    f = f + theta * dS + d @ shift.T + tau * xS - np.einsum("kb,kbm->bm", nT, np.log(z))
    if tshift is not None:
        f = f + (nt - n) @ tshift.T
    if not derivatives:
        return f, ()
    p2 = np.reciprocal(z, out=z)                                        # p_T
    pd_ = np.subtract(E, iE, out=E)
    pd_ *= G
    pd_ *= p2                                                           # p_A - p_B
    nc = nT[:, :, None] * c                                             # (K, B, M): n a
    gj_t = dS - np.einsum("kbm,kbm->bm", nc, pd_)
    gj_a = nt @ slope.T - np.einsum("kbm,kbm->bm", nc, p2)
    nc *= c                                                             # n a^2
    s2 = n @ (slope * slope).T                                          # sum_k n a^2
    s_p2 = np.einsum("kbm,kbm->bm", nc, p2)
    t = np.multiply(nc, pd_, out=iE)
    s_pd2 = np.einsum("kbm,kbm->bm", t, pd_)
    hj_ta = np.einsum("kbm,kbm->bm", t, p2)
    np.multiply(nc, p2, out=t)
    s_p22 = np.einsum("kbm,kbm->bm", t, p2)
    hj_tt = -(s2 - s_p2 - s_pd2)                                        # -sum n a^2 (1 - p_T - pd^2)
    hj_aa = -(s_p2 - s_p22)                                             # -sum n a^2 p_T (1 - p_T)
    return f, (gj_t, gj_a, hj_tt, hj_ta, hj_aa)


def q_of(parts: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """(B, M, 3) class posterior from the parts returned by :func:`objective`."""
    e1, z, e3 = parts
    r = 1.0 / z
    return np.stack([e1 * r, r, e3 * r], axis=-1)


def local_map(theta0: np.ndarray, tau0: np.ndarray, shift: np.ndarray, n: np.ndarray, d: np.ndarray,
              nt: np.ndarray, logL: np.ndarray | None, *, max_iter: int = 30, tol: float = 1e-7,
              tshift: np.ndarray | None = None, history: list[float] | None = None,
              prior: Prior = STANDARD_PRIOR, slope: np.ndarray | None = None, hessian: list[Any] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any, int, bool]:
    """Damped Newton ascent of :func:`objective` for all (item, particle) problems at once.

    Uses the exact Hessian where it is negative definite and the safe surrogate elsewhere,
    caps each step at 2 per coordinate, and halves a step that lowers the objective
    (vectorised backtracking). Stops when every gradient entry is below ``tol``. When
    ``history`` is a list, the summed objective at the accepted points is appended to it at every
    iteration. When ``hessian`` is a list and the ascent converged, the Hessian ``(h_tt, h_ta, h_aa)``
    at the returned point is appended to it (so a caller need not evaluate it again).

    Returns
    -------
    theta, tau, f, logdet, q, n_iter, converged
        ``logdet``: log det of minus the (negative-definite) Hessian at the optimum (for the
        Laplace correction); ``q``: the class posterior (B, M, 3), None when ``logL`` is None.
    """
    theta = np.array(theta0, dtype=float, copy=True)
    tau = np.array(tau0, dtype=float, copy=True)
    f_prev = np.full(theta.shape, -np.inf)
    th_prev, ta_prev = theta.copy(), tau.copy()
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        f, g_t, g_a, h_tt, h_ta, h_aa, s_tt, s_ta, s_aa, q = objective(theta, tau, shift, n, d, nt, logL, tshift=tshift,
                                                                   prior=prior, slope=slope)
        bad = f < f_prev - 1e-10 * (1.0 + np.abs(f_prev))
        if history is not None:  # the objective at the accepted points (never decreases)
            history.append(float(np.where(bad, f_prev, f).sum()))
        if bad.any():
            # halve the step towards the last accepted point; do not move elsewhere this round
            theta = np.where(bad, 0.5 * (th_prev + theta), theta)
            tau = np.where(bad, 0.5 * (ta_prev + tau), tau)
            continue
        gmax = max(float(np.abs(g_t).max(initial=0.0)), float(np.abs(g_a).max(initial=0.0)))
        if gmax < tol:
            converged = True
            break
        nd = (h_tt < 0) & (h_tt * h_aa - h_ta * h_ta > 0)
        a_tt = np.where(nd, h_tt, s_tt)
        a_ta = np.where(nd, h_ta, s_ta)
        a_aa = np.where(nd, h_aa, s_aa)
        det = a_tt * a_aa - a_ta * a_ta
        # step = -H^{-1} g
        st = -(a_aa * g_t - a_ta * g_a) / det
        sa = -(-a_ta * g_t + a_tt * g_a) / det
        st = _clip(st, -2.0, 2.0)
        sa = _clip(sa, -2.0, 2.0)
        th_prev, ta_prev, f_prev = theta, tau, f
        theta = theta + st
        tau = tau + sa
    nd = (h_tt < 0) & (h_tt * h_aa - h_ta * h_ta > 0)
    det = np.where(nd, h_tt * h_aa - h_ta * h_ta, s_tt * s_aa - s_ta * s_ta)
    if hessian is not None and converged:
        hessian.append((h_tt, h_ta, h_aa))
    return theta, tau, f, np.log(det), (None if q is None else q_of(q)), it, converged


class _JudgesObjective:
    """:func:`objective` without a human term (``logL=None``), specialised for Newton's repeated
    evaluations: what does not depend on ``(theta, tau)`` (the linear terms, the channel weights
    ``n a`` and ``n a^2``) is computed once, and the channel arrays live in reused buffers. Same values as :func:`objective` up to
    rounding (tested); its Hessian is negative definite, so it is its own safe surrogate."""

    def __init__(self, shift: np.ndarray, n: np.ndarray, d: np.ndarray, nt: np.ndarray, *,
                 tshift: np.ndarray | None, prior: Prior, slope: np.ndarray | None, shape: tuple[int, int]) -> None:
        B, M = shape
        K = shift.shape[1]
        self.K = K
        self.prior = prior
        m_t, p_t, m_a, p_a = prior
        x = nt - n
        self.c = shift.T[:, None, :]                                    # (K, 1, M)
        self.a = None if slope is None else slope.T[:, None, :]
        self.e = None if tshift is None else tshift.T[:, None, :]
        sl = np.ones((1, K)) if slope is None else slope               # (M', K)
        self.dS = d @ sl.T                                              # (B, M'): sum_k d_k a_k
        self.xS = x @ sl.T
        self.ntS = nt @ sl.T
        self.s2 = n @ (sl * sl).T
        cst = d @ shift.T + 0.5 * math.log(p_t * p_a)
        if tshift is not None:
            cst = cst + x @ tshift.T
        self.cst = cst
        if K:
            nT = n.T[:, :, None]                                        # (K, B, 1)
            self.n1 = nT
            self.n2 = nT if self.a is None else nT * self.a            # n a
            self.n3 = nT if self.a is None else self.n2 * self.a       # n a^2
            self.buf = np.empty((5, K, B, M))

    def __call__(self, theta: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, ...]:
        """``f, g_theta, g_tau, h_tt, h_ta, h_aa`` at ``(theta, tau)`` (clipped to the bounds as in
        :func:`objective`)."""
        theta = _clip(theta, -_BOUND, _BOUND)
        tau = _clip(tau, -_BOUND, _BOUND)
        m_t, p_t, m_a, p_a = self.prior
        dt, da = theta - m_t, tau - m_a
        f = theta * self.dS + tau * self.xS + self.cst - 0.5 * (p_t * dt * dt + p_a * da * da)
        g_t = self.dS - p_t * dt
        g_a = self.ntS - p_a * da
        if not self.K:
            z0 = np.zeros_like(f)
            return f, g_t, g_a, z0 - p_t, z0, z0 - p_a
        A, iE, G, z, t = self.buf
        if self.a is None:
            np.add(theta[None], self.c, out=A)                         # the judge's logit a theta + c
            G[:] = -tau
        else:
            np.multiply(self.a, theta[None], out=A)
            A += self.c
            np.multiply(self.a, tau[None], out=G)
            np.negative(G, out=G)
        if self.e is not None:
            G -= self.e                                                 # -(a tau + e)
        np.exp(G, out=G)
        np.exp(A, out=A)                                                # E
        np.reciprocal(A, out=iE)
        np.add(A, iE, out=z)
        z *= G
        z += 1.0                                                        # z = 1 + e^-(a tau + e) (E + 1/E)
        np.log(z, out=t)
        ein = np.einsum
        f = f - ein("kbo,kbm->bm", self.n1, t)                          # sum_k n_k log z_k
        np.reciprocal(z, out=z)                                         # p_T
        pd_ = np.subtract(A, iE, out=A)
        pd_ *= G
        pd_ *= z                                                        # p_A - p_B
        n2, n3 = self.n2, self.n3
        if self.a is None:
            s_pd, s_p = ein("kbo,kbm->bm", n2, pd_), ein("kbo,kbm->bm", n2, z)
            s_p3 = s_p
            np.multiply(n3, pd_, out=G)
        else:
            s_pd, s_p = ein("kbm,kbm->bm", n2, pd_), ein("kbm,kbm->bm", n2, z)
            s_p3 = ein("kbm,kbm->bm", n3, z)
            np.multiply(n3, pd_, out=G)                                 # n a^2 pd
        s_pd2 = ein("kbm,kbm->bm", G, pd_)
        s_pdp = ein("kbm,kbm->bm", G, z)
        np.multiply(n3, z, out=G)
        s_p2 = ein("kbm,kbm->bm", G, z)
        return (f, g_t - s_pd, g_a - s_p,
                -p_t - (self.s2 - s_p3 - s_pd2),                        # -sum n a^2 (1 - p_T - pd^2)
                s_pdp,
                -p_a - (s_p3 - s_p2))                                   # -sum n a^2 p_T (1 - p_T)


def judges_map(theta0: np.ndarray, tau0: np.ndarray, shift: np.ndarray, n: np.ndarray, d: np.ndarray,
               nt: np.ndarray, *, max_iter: int = 30, tol: float = 1e-7, tshift: np.ndarray | None = None,
               prior: Prior = STANDARD_PRIOR, slope: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...] | None, int, bool]:
    """:func:`local_map` of the judges-only objective (``logL=None``), the same damped Newton steps
    on :class:`_JudgesObjective` (equal up to rounding; :func:`local_map` is the reference).

    Returns
    -------
    theta, tau, f, logdet, hessian, n_iter, converged
        ``hessian``: ``(h_tt, h_ta, h_aa)`` at the returned point when converged, else None (as
        :func:`local_map`'s ``hessian`` list).
    """
    theta = np.array(theta0, dtype=float, copy=True)
    tau = np.array(tau0, dtype=float, copy=True)
    obj = _JudgesObjective(shift, n, d, nt, tshift=tshift, prior=prior, slope=slope, shape=theta.shape)
    f_prev = np.full(theta.shape, -np.inf)
    th_prev, ta_prev = theta, tau
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        f, g_t, g_a, h_tt, h_ta, h_aa = obj(theta, tau)
        bad = f < f_prev - 1e-10 * (1.0 + np.abs(f_prev))
        if bad.any():
            # halve the step towards the last accepted point; do not move elsewhere this round
            theta = np.where(bad, 0.5 * (th_prev + theta), theta)
            tau = np.where(bad, 0.5 * (ta_prev + tau), tau)
            continue
        if max(float(np.abs(g_t).max(initial=0.0)), float(np.abs(g_a).max(initial=0.0))) < tol:
            converged = True
            break
        det = h_tt * h_aa - h_ta * h_ta
        st = _clip((h_ta * g_a - h_aa * g_t) / det, -2.0, 2.0)         # -H^{-1} g
        sa = _clip((h_ta * g_t - h_tt * g_a) / det, -2.0, 2.0)
        th_prev, ta_prev, f_prev = theta, tau, f
        theta = theta + st
        tau = tau + sa
    det = h_tt * h_aa - h_ta * h_ta
    return theta, tau, f, np.log(det), ((h_tt, h_ta, h_aa) if converged else None), it, converged


def warm_start(shift: np.ndarray, w: np.ndarray, n: np.ndarray, d: np.ndarray, nt: np.ndarray,
               logL: np.ndarray | None, *, tol: float = 1e-9, tshift: np.ndarray | None = None,
               prior: Prior = STANDARD_PRIOR, slope: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Starting points for every particle: the MAP at the weighted-mean shift, moved to first order.

    Solves each item's problem once at the particle-weighted mean shift ``c_bar``, then uses the
    implicit-function derivative ``d eta / d c_k = -H^{-1} d g / d c_k`` to move the start of
    particle ``m`` by ``(c_mk - c_bar_k)``. Returns ``theta0, tau0`` of shape (B, M).
    """
    B = n.shape[0]
    M, K = shift.shape
    cbar = (w[:, None] * shift).sum(0, keepdims=True)                   # (1, K)
    tbar = None if tshift is None else (w[:, None] * tshift).sum(0, keepdims=True)
    # with reliabilities: solved at the mean reliability, the first-order move covers them too
    abar = None if slope is None else (w[:, None] * slope).sum(0, keepdims=True)
    # from the prior's mean (the MAP of a pair without labels)
    hess: list[Any] = []
    if logL is None:
        th, ta, _, _, h, _, _ = judges_map(np.full((B, 1), prior[0]), np.full((B, 1), prior[2]), cbar, n, d, nt,
                                           tol=tol, tshift=tbar, prior=prior, slope=abar)
        hess = [] if h is None else [h]
    else:
        th, ta, *_ = local_map(np.full((B, 1), prior[0]), np.full((B, 1), prior[2]), cbar, n, d, nt, logL, tol=tol,
                               tshift=tbar, prior=prior, slope=abar, hessian=hess)
    if K == 0:
        return np.repeat(th, M, axis=1), np.repeat(ta, M, axis=1)
    if hess and logL is None:       # judges only: the Hessian is negative definite, the surrogate is itself
        h_tt, h_ta, h_aa = hess[0]
        s_tt, s_ta, s_aa = h_tt, h_ta, h_aa
    else:
        _, _, _, h_tt, h_ta, h_aa, s_tt, s_ta, s_aa, _ = objective(th, ta, cbar, n, d, nt, logL, tshift=tbar,
                                                                      prior=prior, slope=abar)
    nd = (h_tt < 0) & (h_tt * h_aa - h_ta * h_ta > 0)
    a_tt, a_ta, a_aa = (np.where(nd, h_tt, s_tt), np.where(nd, h_ta, s_ta), np.where(nd, h_aa, s_aa))
    # per-channel d g / d c at the solution: (K, B)
    av = np.ones((K, 1)) if abar is None else abar[0][:, None]          # (K, 1) mean reliability
    a = av * th[:, 0][None, :] + cbar[0][:, None]
    tt = av * ta[:, 0][None, :] + (0.0 if tbar is None else tbar[0][:, None])   # (K, B): a tau + delta
    x = _clip(a - tt, -_CLIP, _CLIP)
    e1 = np.exp(x)
    e3 = np.exp(_clip(-2.0 * tt, -_CLIP, _CLIP)) / e1
    p2 = 1.0 / (e1 + 1.0 + e3)
    pd_ = (e1 - e3) * p2
    dgt = -av * n.T * ((1.0 - p2) - pd_ * pd_)                           # (K, B)
    dga = av * n.T * pd_ * p2
    dc = shift - cbar                                                    # (M, K)
    rt = dgt.T @ dc.T                                                    # (B, M): sum_k dg_theta/dc_k * dc_mk
    ra = dga.T @ dc.T
    if tshift is not None:
        # d g / d delta_k: (n pd p2, -n p2 (1 - p2))
        dt_ = tshift - tbar
        rt = rt + (av * n.T * pd_ * p2).T @ dt_.T
        ra = ra + (-av * n.T * p2 * (1.0 - p2)).T @ dt_.T
    if slope is not None and abar is not None:
        # d g / d a_k: g_theta = a (d - n pd), g_tau = a (nt - n p2), with the judge's logits
        # a theta + c and a tau + e: d pd / d a = (1 - p2 - pd^2) theta - pd p2 tau,
        # d p2 / d a = -p2 pd theta + p2 (1 - p2) tau
        th_b, ta_b = th[:, 0][None, :], ta[:, 0][None, :]
        dpd = (1.0 - p2 - pd_ * pd_) * th_b - pd_ * p2 * ta_b
        dp2 = -p2 * pd_ * th_b + p2 * (1.0 - p2) * ta_b
        da = slope - abar
        rt = rt + ((d.T - n.T * pd_) - av * n.T * dpd).T @ da.T
        ra = ra + ((nt.T - n.T * p2) - av * n.T * dp2).T @ da.T
    det = a_tt * a_aa - a_ta * a_ta                                      # (B, 1)
    dth = -(a_aa * rt - a_ta * ra) / det
    dta = -(-a_ta * rt + a_tt * ra) / det
    return th + _clip(dth, -2.0, 2.0), ta + _clip(dta, -2.0, 2.0)



_GH5_X, _GH5_W = np.polynomial.hermite_e.hermegauss(5)
_GH5_W = _GH5_W / _GH5_W.sum()


def human_mixture(theta: np.ndarray, tau: np.ndarray, shift: np.ndarray, n: np.ndarray, d: np.ndarray,
                  nt: np.ndarray, logL: np.ndarray, *, tshift: np.ndarray | None = None,
                  prior: Prior = STANDARD_PRIOR, slope: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Humans' evidence integrated over the pair's (theta, tau) given the judges.

    The humans depend on (theta, tau) only through the latent verdict ``z ~ pi(theta, tau)``, so

        p(z = k | judges, humans) ∝ L_k E[pi_k(theta, tau) | judges],
        p(humans | judges) = sum_k L_k E[pi_k | judges].

    ``(theta, tau)`` must be the MAP of the prior-and-judges objective (``logL = 0``); the
    expectation is taken under its Laplace approximation by a 5 x 5 Gauss-Hermite product rule
    (exact when a pair has no judge label: the posterior is then the normal prior).

    Returns
    -------
    rho : (B, M, 3)
        Posterior of the latent verdict.
    log_mix : (B, M)
        ``log p(humans | judges)`` (``logL`` included).
    moments : (B, M, 4)
        ``E[theta], E[theta^2], E[tau], E[tau^2]`` given judges and humans.
    """
    zero = np.zeros_like(logL)
    _, _, _, h_tt, h_ta, h_aa, s_tt, s_ta, s_aa, _ = objective(theta, tau, shift, n, d, nt, zero, tshift=tshift,
                                                               prior=prior, slope=slope)
    nd = (h_tt < 0) & (h_tt * h_aa - h_ta * h_ta > 0)
    a_tt, a_ta, a_aa = (np.where(nd, h_tt, s_tt), np.where(nd, h_ta, s_ta), np.where(nd, h_aa, s_aa))
    det = a_tt * a_aa - a_ta * a_ta
    v_tt, v_ta, v_aa = -a_aa / det, a_ta / det, -a_tt / det          # covariance (-H)^{-1}
    l11 = np.sqrt(np.maximum(v_tt, 0.0))
    l21 = np.where(l11 > 0, v_ta / np.where(l11 > 0, l11, 1.0), 0.0)
    l22 = np.sqrt(np.maximum(v_aa - l21 * l21, 0.0))
    top = logL.max(1, keepdims=True)
    L = np.exp(np.clip(logL - top, -300.0, 0.0))[:, None, :]        # (B, 1, 3)
    num = np.zeros(theta.shape + (3,))
    mom = np.zeros(theta.shape + (4,))
    for xi, wi in zip(_GH5_X, _GH5_W):
        for xj, wj in zip(_GH5_X, _GH5_W):
            th = np.clip(theta + l11 * xi, -_BOUND, _BOUND)
            ta = np.clip(tau + l21 * xi + l22 * xj, -_BOUND, _BOUND)
            u = np.stack([th, ta, -th], -1)
            pi = np.exp(u - u.max(-1, keepdims=True))
            pi /= pi.sum(-1, keepdims=True)
            c = (wi * wj) * pi * L                                        # (B, M, 3)
            num += c
            cs = c.sum(-1)
            mom += cs[..., None] * np.stack([th, th * th, ta, ta * ta], -1)
    tot = num.sum(-1)
    tot = np.maximum(tot, 1e-300)
    return num / tot[..., None], np.log(tot) + top, mom / tot[..., None]


#: Nodes of the 5 x 5 Gauss-Hermite product rule and the functions of them whose weighted sums
#: :func:`judge_expectations` needs: 1, x, x^2, y, y^2, x y (columns), times the node weights.
_GH_XI = np.repeat(_GH5_X, 5)
_GH_XJ = np.tile(_GH5_X, 5)
_GH_G = (np.repeat(_GH5_W, 5) * np.tile(_GH5_W, 5))[:, None] * np.column_stack(
    [np.ones(25), _GH_XI, _GH_XI ** 2, _GH_XJ, _GH_XJ ** 2, _GH_XI * _GH_XJ])


def judge_expectations(theta: np.ndarray, tau: np.ndarray, shift: np.ndarray, n: np.ndarray, d: np.ndarray,
                       nt: np.ndarray, *, tshift: np.ndarray | None = None, prior: Prior = STANDARD_PRIOR,
                       slope: np.ndarray | None = None, hessian: tuple[np.ndarray, ...] | None = None,
                       fmap: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The judges-only half of :func:`human_mixture`, for any humans' evidence afterwards.

    Under the Laplace approximation of ``(theta, tau) | judges`` (``theta, tau``: the MAP of the
    judges-only objective, ``logL`` None), by the same 5 x 5 Gauss-Hermite rule:
    ``Epi[..., k] = E[pi_k]`` and ``Emom[..., k, :] = E[pi_k (theta, theta^2, tau, tau^2)]``. The humans
    enter only through ``L``: ``p(z = k | all) ∝ L_k Epi_k``, ``p(humans | judges) = sum_k L_k Epi_k``,
    and ``E[theta^a | all] = sum_k L_k Emom_k / sum_k L_k Epi_k``, so one call serves every pair
    with the same judge labels whatever its humans said (:func:`mix_humans`). The node sums are one
    matrix product over the 25 nodes (the moments from the sums of 1, x, x^2, y, y^2, x y).
    ``hessian``: the judges-only Hessian at ``(theta, tau)`` when the caller has it (from
    :func:`local_map`), else it is evaluated here.

    ``fmap`` (the judges-only objective at the MAP) switches to *adaptive* Gauss-Hermite quadrature:
    each node ``x_n`` of the Laplace approximation is weighted by ``exp(r_n)``, ``r_n = f(x_n) -
    fmap + |z_n|^2 / 2`` (the true log density over the Gaussian's, ``z_n`` the node in standard
    coordinates), so the expectations are under the judges-only posterior itself and
    ``corr = log sum_n w_n exp(r_n)`` corrects the Laplace log marginal likelihood ``fmap - log
    det(-H) / 2``. Without ``fmap``, ``r = 0`` (the Laplace approximation) and ``corr = 0``.

    Returns
    -------
    Epi : (B, M, 3)
    Emom : (B, M, 3, 4)
    corr : (B, M)
    """
    if hessian is None:
        _, _, _, h_tt, h_ta, h_aa, *_ = objective(theta, tau, shift, n, d, nt, None, tshift=tshift, prior=prior,
                                                  slope=slope)
    else:
        h_tt, h_ta, h_aa = hessian
    det = h_tt * h_aa - h_ta * h_ta
    v_tt, v_ta, v_aa = -h_aa / det, h_ta / det, -h_tt / det          # covariance (-H)^{-1}
    l11 = np.sqrt(np.maximum(v_tt, 0.0))
    l21 = np.where(l11 > 0, v_ta / np.where(l11 > 0, l11, 1.0), 0.0)
    l22 = np.sqrt(np.maximum(v_aa - l21 * l21, 0.0))
    # the node arrays are 25 times the problem's size: rows in slices of about _NODE_BLOCK values
    step = max(1, _NODE_BLOCK // max(1, int(np.prod(theta.shape[1:]))))
    parts = []
    for i in range(0, max(1, theta.shape[0]), step):
        sl = slice(i, i + step)
        node_f = None if fmap is None else functools.partial(
            _node_objective, shift=shift, n=n[sl], d=d[sl], nt=nt[sl], tshift=tshift, prior=prior, slope=slope)
        parts.append(_gh_sums(theta[sl], tau[sl], l11[sl], l21[sl], l22[sl], node_f,
                              None if fmap is None else fmap[sl]))
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))  # type: ignore[return-value]


def _node_objective(th: np.ndarray, ta: np.ndarray, *, shift: np.ndarray, n: np.ndarray, d: np.ndarray,
                    nt: np.ndarray, tshift: np.ndarray | None, prior: Prior, slope: np.ndarray | None) -> np.ndarray:
    """The judges-only objective at node arrays ``(n_nodes, B, M)`` (rows tiled per node)."""
    tile = (th.shape[0], 1)
    f, _ = objective(th.reshape(-1, th.shape[2]), ta.reshape(-1, th.shape[2]), shift, np.tile(n, tile),
                     np.tile(d, tile), np.tile(nt, tile), None, derivatives=False, tshift=tshift, prior=prior,
                     slope=slope)
    return np.asarray(f).reshape(th.shape)


#: (rows x particles) per slice of :func:`judge_expectations` (its node arrays hold 25 times as many; at
#: 8,192 they outgrow a 2 MB L2 cache and a 40-row slice costs 1.3-3.5x as much)
_NODE_BLOCK = 4096


def _gh_sums(theta: np.ndarray, tau: np.ndarray, l11: np.ndarray, l21: np.ndarray, l22: np.ndarray,
             node_f: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
             fmap: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The node sums of :func:`judge_expectations` around ``(theta, tau)`` with Cholesky factor ``l``
    (``node_f``: the judges-only objective at the nodes, for the adaptive rule)."""
    shp = theta.shape
    nodes = (25,) + (1,) * theta.ndim
    # (25, B, M) node arrays, node n = 5 i + j at (x_i, x_j): theta_n = theta + l11 x_i,
    # tau_n = tau + l21 x_i + l22 x_j. The two exponentials factor over i and j, so 3 x 5 exponentials
    # of (B, M) arrays and one product per node replace 2 x 25 exponentials (|theta|, |tau| <= 50 and
    # the nodes lie within 2.9 sd, sd <= 5: no overflow; not clipped)
    x = _GH5_X.reshape((5,) + (1,) * theta.ndim)
    bj = np.exp(-l22 * x)                                           # (5, B, M): e^(-l22 x_j)
    c = np.empty((3, 25) + shp)
    e1 = c[0].reshape((5, 5) + shp)
    np.multiply((np.exp(theta - tau) * np.exp((l11 - l21) * x))[:, None], bj[None], out=e1)
    e3 = c[2].reshape((5, 5) + shp)
    np.multiply((np.exp(-theta - tau) * np.exp(-(l11 + l21) * x))[:, None], bj[None], out=e3)
    np.add(c[0], c[2], out=c[1])
    c[1] += 1.0
    np.reciprocal(c[1], out=c[1])                                   # pi_T
    c[0] *= c[1]
    c[2] *= c[1]
    corr = np.zeros(shp)
    if node_f is not None and fmap is not None:
        # adaptive rule: each node weighted by the true density over the Laplace Gaussian's
        xi, xj = _GH_XI.reshape(nodes), _GH_XJ.reshape(nodes)
        th = theta + l11 * xi
        ta = tau + l21 * xi + l22 * xj
        r = node_f(th, ta) - fmap + 0.5 * (xi * xi + xj * xj)
        r = np.minimum(r, 50.0)
        omega = np.exp(r)                                          # (25, B, M)
        tot = np.maximum(np.tensordot(_GH_G[:, 0], omega, axes=1), 1e-300)
        corr = np.log(tot)
        c *= omega / tot
    E = _GH_G.T @ c.reshape(3, 25, -1)                               # (3, 6, B*M): the node sums
    e0, ex, exx, ey, eyy, exy = (E[:, j].reshape((3,) + shp) for j in range(6))
    mt = theta * e0 + l11 * ex
    mtt = theta * theta * e0 + 2.0 * theta * l11 * ex + l11 * l11 * exx
    lin = l21 * ex + l22 * ey
    ma = tau * e0 + lin
    maa = tau * tau * e0 + 2.0 * tau * lin + l21 * l21 * exx + 2.0 * l21 * l22 * exy + l22 * l22 * eyy
    ax = tuple(range(1, theta.ndim + 1)) + (0,)                     # the class axis last (np.moveaxis, cheaper)
    return e0.transpose(ax), np.stack([v.transpose(ax) for v in (mt, mtt, ma, maa)], -1), corr


def mix_humans(Epi: np.ndarray, Emom: np.ndarray, logL: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`human_mixture`'s results from :func:`judge_expectations`' (rows already matched to
    the pairs of ``logL`` (B, 3)): ``rho`` (B, M, 3), ``log_mix`` (B, M), ``moments`` (B, M, 4)."""
    top = logL.max(1, keepdims=True)
    L = np.exp(_clip(logL - top, -300.0, 0.0))                        # (B, 3)
    num = Epi * L[:, None, :]
    tot = np.maximum(num.sum(-1), 1e-300)
    mom = np.einsum("bmkj,bk->bmj", Emom, L) / tot[..., None]
    return num / tot[..., None], np.log(tot) + top, mom
