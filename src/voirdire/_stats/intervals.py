"""Interval construction from bootstrap replicates and jackknife values (private).

Resampling happens elsewhere (``agreement._core.bootstrap`` today); this module only turns
``(estimate, replicates, leave-one-unit-out values, per-replicate SEs)`` into an interval, so
the same rules serve every statistic. Methods:

``percentile``
    quantiles of the replicates (Efron 1979).
``bca``
    bias-corrected and accelerated (Efron 1987): bias ``z0`` from the share of replicates below
    the estimate, acceleration ``a`` from the skewness of the jackknife values.
``studentized``
    bootstrap-t (Efron 1982; Hall 1988): quantiles of ``t* = (g(theta*) - g(theta)) / se*`` with
    ``se*`` each replicate's own jackknife SE, on a variance-stabilising scale ``g`` (Fisher's
    ``atanh`` for coefficients bounded above by 1, the logit for proportions).
``jackknife``
    ``g(theta) +- t_{n-1} se_J`` on the same scale (Hughes 2022's jackknife for alpha uses the
    jackknife SE; the ``t`` quantile and the scale are ours).
``wald``
    ``theta +- z se`` with an analytic SE.
``wilson``
    Wilson's score interval for a proportion with an effective sample size
    ``n_eff = p (1 - p) / se^2`` (Wilson 1927; the design-effect form of Korn & Graubard 1998),
    which is Wilson's own interval when the units are independent Bernoulli trials.
``gof``
    Donner & Eliasziw's (1992) goodness-of-fit interval for the kappa of two raters on binary
    labels under the common-correlation model: the ``kappa0`` whose fitted pair frequencies
    ``(pi^2 + pi(1-pi)kappa0, 2 pi(1-pi)(1-kappa0), (1-pi)^2 + pi(1-pi)kappa0)`` pass a
    chi-square test (1 df) against the observed (both 1, discordant, both 0) counts. Up to
    ``GOF_EXACT_MAX`` items the test's p-value is the exact one under the fitted model (every
    table of ``n`` items enumerated, ``pi`` at its estimate: the plug-in p-value of Bayarri &
    Berger 2000); above, chi-square(1)'s, as in the paper.
``zero_disagreement``
    when no unit shows any disagreement (the estimate is 1 and every resample too): ``[L, 1]``
    with ``L = 1 - p_u / D_e``, ``p_u`` the Clopper-Pearson upper limit on the share of units
    that disagree (0 of ``n`` observed: ``1 - (alpha/2)^(1/n)``, the exact form of the "rule of
    three") and ``D_e`` the expected disagreement; a one-sided statement instead of a point.

Every builder returns an :class:`Interval` naming the method actually used, and falls back with
a note (never an exception) when its inputs do not define it: BCa with all-equal jackknife
values falls back to the percentile interval, bootstrap-t without SEs to the jackknife, and so on.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import numpy as np
from scipy import special as _sc  # the quantiles scipy.stats itself calls (no scipy.stats import: ~1 s)

__all__ = ["Interval", "METHOD_NAMES", "bca", "jackknife", "jackknife_se", "kappa_gof", "percentile",
           "studentized", "wald", "wilson", "zero_disagreement", "zero_se_share", "Scale"]

METHOD_NAMES = {
    "percentile": "percentile bootstrap",
    "bca": "BCa bootstrap",
    "studentized": "studentized bootstrap (bootstrap-t)",
    "jackknife": "jackknife",
    "wald": "Wald (analytic SE)",
    "wilson": "Wilson score",
    "gof": "Donner-Eliasziw goodness-of-fit",
    "zero_disagreement": "Clopper-Pearson bound on disagreeing units (none observed)",
}


@dataclasses.dataclass(frozen=True, slots=True)
class Interval:
    """An interval and how it was built: ``method`` is the key actually used (after fallbacks)."""

    low: float
    high: float
    method: str
    note: str = ""

    @property
    def label(self) -> str:
        return METHOD_NAMES.get(self.method, self.method)


NAN_INTERVAL = Interval(float("nan"), float("nan"), "none")


@dataclasses.dataclass(frozen=True, slots=True)
class Scale:
    """The range of a statistic and the variance-stabilising map onto the real line.

    ``low``/``high`` may be infinite (no bound). With both finite the map is
    ``atanh(2 (x - low) / (high - low) - 1)``: Fisher's z for ``[-1, 1]``, half the logit for
    ``[0, 1]``. Values at or beyond a bound are pulled in by ``eps`` of the range.
    """

    low: float = -1.0
    high: float = 1.0
    eps: float = 1e-6

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def g(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if not self.bounded:
            return x
        span = self.high - self.low
        u = np.clip(2 * (x - self.low) / span - 1, -1 + self.eps, 1 - self.eps)
        return np.arctanh(u)

    def dg(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if not self.bounded:
            return np.ones_like(x)
        span = self.high - self.low
        u = np.clip(2 * (x - self.low) / span - 1, -1 + self.eps, 1 - self.eps)
        return (2 / span) / (1 - u * u)

    def ginv(self, z: np.ndarray | float) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        if not self.bounded:
            return z
        return self.low + (np.tanh(z) + 1) * (self.high - self.low) / 2

    def clip(self, v: float) -> float:
        return float(min(max(v, self.low), self.high)) if math.isfinite(v) else v


def _tails(level: float) -> tuple[float, float]:
    return (1 - level) / 2, 1 - (1 - level) / 2


def _finite(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x[np.isfinite(x)]


def jackknife_se(jack: np.ndarray, weights: np.ndarray | None = None) -> float:
    """``sqrt((n-1)/n sum_i w_i (theta_(i) - mean)^2)``; ``weights`` count repeated units.

    Deletions that leave the statistic undefined (``nan``) are skipped, and ``n`` counts the rest.
    """
    jack = np.asarray(jack, dtype=float)
    if weights is None and jack.size >= 2 and bool(np.isfinite(jack).all()):
        # every unit once, every value finite (the common case): no weight vector, one deviation array
        k = jack.size
        dev = jack - float(jack.sum()) / k
        return math.sqrt(max((k - 1) / k * float(dev @ dev), 0.0))
    w = np.ones_like(jack) if weights is None else np.asarray(weights, dtype=float)
    fin = np.isfinite(jack)
    w = np.where(fin, w, 0.0)
    jack = np.where(fin, jack, 0.0)
    n = float(w.sum())
    if n < 2:
        return float("nan")
    m = float(w @ jack) / n
    return math.sqrt(max((n - 1) / n * float(w @ (jack - m) ** 2), 0.0))


def percentile(boots: np.ndarray, level: float) -> Interval:
    """Quantiles of the finite replicates."""
    good = _finite(boots)
    if good.size < 2:
        return dataclasses.replace(NAN_INTERVAL, note="fewer than two finite bootstrap replicates")
    lo, hi = np.quantile(good, _tails(level))
    return Interval(float(lo), float(hi), "percentile")


def acceleration(jack: np.ndarray) -> float:
    """Efron's acceleration ``sum d^3 / (6 (sum d^2)^1.5)``, ``d = mean - theta_(i)``; nan if undefined."""
    jack = np.asarray(jack, dtype=float)
    if jack.size < 3 or not np.all(np.isfinite(jack)):
        return float("nan")
    d = jack.mean() - jack
    s2 = float(d @ d)
    # all equal up to rounding: a root-mean-square deviation below 1e-11 of the values' scale (the
    # deviations of a real jackknife are ~1/n, far above this at any n a table can have)
    if s2 <= (1e-11 * max(1.0, float(np.abs(jack).max()))) ** 2 * jack.size:
        return float("nan")
    return float(((d * d) @ d) / (6 * s2 ** 1.5))  # (d ** 3 goes through pow: 10x slower at 1M units)


def jack_summary(jack: np.ndarray) -> tuple[float, float]:
    """``(jackknife_se(jack), acceleration(jack))``: what :func:`build` reads from the jackknife
    values, for a caller that computes them while other work runs (pass as ``jack_stats``)."""
    return jackknife_se(jack), acceleration(jack)


def bca(est: float, boots: np.ndarray, jack: np.ndarray, level: float, accel: float | None = None) -> Interval:
    """Efron's BCa interval; falls back to the percentile interval when ``z0`` or ``a`` is undefined.
    ``accel``: ``acceleration(jack)`` when the caller has it already."""
    good = _finite(boots)
    if good.size < 2:
        return dataclasses.replace(NAN_INTERVAL, note="fewer than two finite bootstrap replicates")
    a = acceleration(jack) if accel is None else accel
    p = (np.count_nonzero(good < est) + 0.5 * np.count_nonzero(good == est)) / good.size
    if not math.isfinite(a) or not 0 < p < 1:
        why = ("the acceleration is undefined (all jackknife values equal or not finite)" if not math.isfinite(a)
               else "every bootstrap replicate lies on one side of the estimate")
        iv = percentile(good, level)
        return dataclasses.replace(iv, note=f"BCa not defined ({why}); percentile interval used")
    z0 = float(_sc.ndtri(p))
    qs = []
    for t in _tails(level):
        zt = float(_sc.ndtri(t))
        den = 1 - a * (z0 + zt)
        if den <= 0:  # the adjusted level leaves (0, 1): the extreme replicate
            qs.append(1.0 if zt > 0 else 0.0)
            continue
        qs.append(float(_sc.ndtr(z0 + (z0 + zt) / den)))
    lo, hi = np.quantile(good, qs)
    return Interval(float(lo), float(hi), "bca")


def jackknife(est: float, jack: np.ndarray, level: float, scale: Scale, n_units: int) -> Interval:
    """``g^-1(g(est) +- t_{n-1} g'(est) se_J)`` with ``se_J`` the jackknife SE."""
    se = jackknife_se(jack)
    if not math.isfinite(se) or n_units < 2:
        return dataclasses.replace(NAN_INTERVAL, note="jackknife SE undefined")
    tq = float(_sc.stdtrit(n_units - 1, _tails(level)[1]))
    z, sz = float(scale.g(est)), float(scale.dg(est)) * se
    return Interval(float(scale.ginv(z - tq * sz)), float(scale.ginv(z + tq * sz)), "jackknife")


def studentized(est: float, boots: np.ndarray, boot_se: np.ndarray, se: float, level: float,
                scale: Scale) -> Interval:
    """Bootstrap-t on the scale ``g``: ``g^-1(g(est) - t*_{1-a/2} se_g, g(est) - t*_{a/2} se_g)``.

    ``se`` is the estimate's SE (jackknife), ``boot_se`` each replicate's own. A replicate with
    ``se* = 0`` contributes ``t* = 0`` when it equals the estimate and ``+-inf`` otherwise.
    """
    boots = np.asarray(boots, dtype=float)
    boot_se = np.asarray(boot_se, dtype=float)
    ok = np.isfinite(boots) & np.isfinite(boot_se)
    if np.count_nonzero(ok) < 20 or not math.isfinite(se) or se <= 0:
        return dataclasses.replace(NAN_INTERVAL, note="studentized interval undefined (no SE)")
    z0 = float(scale.g(est))
    zb = scale.g(boots[ok])
    sb = scale.dg(boots[ok]) * boot_se[ok]
    diff = zb - z0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sb > 0, diff / np.where(sb > 0, sb, 1.0), np.sign(diff) * np.inf)
    t = np.where(np.isnan(t), 0.0, t)
    t.sort()
    lo_t, hi_t = np.quantile(t, _tails(level), method="linear") if np.all(np.isfinite(t)) else _inf_quantile(
        t, level)
    s0 = float(scale.dg(est)) * se
    return Interval(float(scale.ginv(z0 - hi_t * s0)), float(scale.ginv(z0 - lo_t * s0)), "studentized")


def zero_se_share(est: float, boots: np.ndarray, boot_se: np.ndarray) -> float:
    """The share of (finite) replicates whose own SE is 0 while they differ from ``est``: their
    bootstrap-t ``t*`` is infinite. Above ``(1 - level) / 2`` a quantile the bootstrap-t needs is
    infinite, and the interval has no end on that side."""
    boots = np.asarray(boots, dtype=float)
    boot_se = np.asarray(boot_se, dtype=float)
    ok = np.isfinite(boots) & np.isfinite(boot_se)
    n = int(np.count_nonzero(ok))
    return float(np.count_nonzero(ok & (boot_se <= 0) & (boots != est))) / n if n else float("nan")


def _inf_quantile(t: np.ndarray, level: float) -> tuple[float, float]:
    n = t.size
    lo_p, hi_p = _tails(level)
    return float(t[max(0, int(math.floor(lo_p * (n - 1))))]), float(t[min(n - 1, int(math.ceil(hi_p * (n - 1))))])


def wald(est: float, se: float, level: float, scale: Scale, *, transform: bool = False) -> Interval:
    """``est +- z se`` (clipped to the range), or on the scale ``g`` when ``transform``."""
    if not (math.isfinite(est) and math.isfinite(se)):
        return dataclasses.replace(NAN_INTERVAL, note="no finite analytic SE")
    zq = float(_sc.ndtri(_tails(level)[1]))
    if transform:
        z, sz = float(scale.g(est)), float(scale.dg(est)) * se
        return Interval(float(scale.ginv(z - zq * sz)), float(scale.ginv(z + zq * sz)), "wald")
    return Interval(scale.clip(est - zq * se), scale.clip(est + zq * se), "wald")


def wilson(p: float, n_eff: float, level: float) -> Interval:
    """Wilson's score interval for a proportion ``p`` on ``n_eff`` (effective) trials."""
    if not (math.isfinite(p) and math.isfinite(n_eff)) or n_eff <= 0:
        return dataclasses.replace(NAN_INTERVAL, note="no effective sample size")
    z = float(_sc.ndtri(_tails(level)[1]))
    z2n = z * z / n_eff
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(max(p * (1 - p) / n_eff + z2n / (4 * n_eff), 0.0)) / (1 + z2n)
    return Interval(max(0.0, centre - half), min(1.0, centre + half), "wilson")


def _gof_chi2(kappa: float, pi: float, counts: tuple[float, float, float]) -> float:
    n = sum(counts)
    s = pi * (1 - pi)
    P = (pi * pi + s * kappa, 2 * s * (1 - kappa), (1 - pi) ** 2 + s * kappa)
    out = 0.0
    for o, p in zip(counts, P):
        e = n * p
        if e <= 0:
            if o > 0:
                return math.inf
            continue
        out += (o - e) ** 2 / e
    return out


# Up to this many items the goodness-of-fit statistic is referred to its exact distribution
# (every table of n items enumerated: (n + 1)(n + 2) / 2 of them); above it to chi-square(1).
GOF_EXACT_MAX = 50


@functools.lru_cache(maxsize=4)
def _pair_tables(n: int) -> tuple[np.ndarray, ...]:
    """Every table ``(both first, discordant, both second)`` of ``n`` items: the counts, each
    table's ``pi^2``, ``(1 - pi)^2``, ``s = pi (1 - pi)``, Scott's pi (``nan`` for one
    category), and the log of its multinomial coefficient."""
    a = np.repeat(np.arange(n + 1), np.arange(n + 1, 0, -1)).astype(float)
    b = np.concatenate([np.arange(n + 1 - x) for x in range(n + 1)]).astype(float)
    c = n - a - b
    pi = (2 * a + b) / (2 * n)
    s = pi * (1 - pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        kh = np.where(s > 0, 1 - b / (2 * n * np.where(s > 0, s, 1.0)), np.nan)
    lc = _sc.gammaln(n + 1) - _sc.gammaln(a + 1) - _sc.gammaln(b + 1) - _sc.gammaln(c + 1)
    return a, b, c, pi * pi, (1 - pi) ** 2, s, kh, lc


def _gof_stat(k: np.ndarray, tables: tuple[np.ndarray, ...], n: int) -> np.ndarray:
    """Donner-Eliasziw's chi-square of ``kappa0 = k`` (a column, below 1) for each of ``tables``
    (:func:`_pair_tables`), each with its own ``pi``. The fitted frequencies
    ``(pi^2 + s k, 2 s (1 - k), (1 - pi)^2 + s k)``, ``s = pi (1 - pi)``, are linear in ``k`` and
    fit the table exactly at its Scott's pi ``kh``, so the statistic is
    ``n (kh - k)^2 (s^2/P1 + 2 s/(1 - k) + s^2/P3)``; 0 for one category only (``s = 0``).
    Where ``kappa0 < 0`` puts a table's ``pi`` outside the range in which the model's frequencies
    are non-negative (``-k/(1-k) <= pi <= 1/(1-k)``), ``pi`` is taken at the nearest end of that
    range, where a frequency is 0: the chi-square there (``inf`` if that cell has a count)."""
    a, b, c, pi2, qi2, s, kh, _ = tables
    sk = s * k
    P1 = pi2 + sk
    P3 = np.add(qi2, sk, out=sk)
    s2 = s * s
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.divide(s2, P1)
        v += s2 / P3
        v += (2 * s) / (1 - k)
        d = kh - k
        d *= d
        v *= d
    v *= n
    v[:, s == 0] = 0.0  # the model fits one category exactly
    out = (P1 <= 0) | (P3 <= 0)  # (at 0, a cell without a count adds 0, not inf)
    if out.any():
        r, j = np.nonzero(out)
        kk = np.broadcast_to(k, out.shape)[r, j]
        pi = np.sqrt(pi2[j])
        pe = np.clip(pi, -kk / (1 - kk), 1 / (1 - kk))  # kappa0 <= 0 here
        se = pe * (1 - pe)
        P = (np.maximum(pe * pe + se * kk, 0.0), 2 * se * (1 - kk), np.maximum((1 - pe) ** 2 + se * kk, 0.0))
        x = np.zeros(r.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            for o, q in zip((a[j], b[j], c[j]), P):
                x += np.where(q > 0, (o - n * q) ** 2 / (n * q), np.where(o > 0, np.inf, 0.0))
        v[r, j] = x
    return v


def _gof_logpmf(k: np.ndarray, counts: tuple[int, int, int], tables: tuple[np.ndarray, ...]) -> np.ndarray:
    """The log-probability of each table (columns) under the common-correlation model with
    ``kappa0 = k`` (a column) and ``pi`` at the observed estimate."""
    n = sum(counts)
    a, b, c = tables[:3]
    lc = tables[-1]
    p0 = (2 * counts[0] + counts[1]) / (2 * n)
    s0 = p0 * (1 - p0)
    # clipped at 0 where kappa0 reaches the end of its range (a count of 0 there adds 0)
    L1 = np.log(np.maximum(p0 * p0 + s0 * k, 1e-300))
    L2 = np.log(np.maximum(2 * s0 * (1 - k), 1e-300))
    L3 = np.log(np.maximum((1 - p0) ** 2 + s0 * k, 1e-300))
    return lc + a * L1 + b * L2 + c * L3


def _gof_pvalues(k: np.ndarray, counts: tuple[int, int, int], keep: np.ndarray | None = None) -> np.ndarray:
    """The exact p-value of each ``kappa0`` in ``k``: the probability, under the common-
    correlation model with ``kappa0`` and ``pi`` at the observed ``pi_hat``, of a table of ``n``
    items whose Donner-Eliasziw chi-square is at least the observed one (the plug-in p-value,
    Bayarri & Berger 2000). ``keep``: the tables to sum over (the others negligible)."""
    n = sum(counts)
    tables = _pair_tables(n)
    if keep is not None:
        tables = tuple(t[keep] for t in tables)
    n11, n10, n00 = counts
    p0 = (2 * n11 + n10) / (2 * n)
    s0 = p0 * (1 - p0)
    k = np.asarray(k, dtype=float)[:, None]
    if np.any(k >= 1):  # kappa0 = 1: only tables without a discordant item are possible, and fit exactly
        raise ValueError("kappa0 = 1 has a closed form")
    # the observed table's statistic (kappa0 is inside its range: no projection); a fitted frequency
    # of 0, at the end of the range, adds 0 without a count and inf with one
    P1, P3 = p0 * p0 + s0 * k, (1 - p0) ** 2 + s0 * k
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(P1 > 0, s0 * s0 / P1, 0.0 if n11 == 0 else np.inf)
        t3 = np.where(P3 > 0, s0 * s0 / P3, 0.0 if n00 == 0 else np.inf)
        obs = n * (1 - n10 / (2 * n * s0) - k) ** 2 * (t1 + t3 + 2 * s0 / (1 - k))  # (K, 1)
    obs[np.isnan(obs)] = 0.0  # an exact fit (kappa0 at the estimate) at an end of the range
    x = _gof_stat(k, tables, n)
    # ties (the table with the categories swapped has the same statistic) within rounding
    tail = x >= np.where(np.isinf(obs), np.inf, obs * (1 - 1e-9) - 1e-12)
    return np.minimum((np.exp(_gof_logpmf(k, counts, tables)) * tail).sum(axis=1), 1.0)


def kappa_gof(n11: float, n10: float, n00: float, level: float, *, reference: str = "auto") -> Interval:
    """Donner & Eliasziw (1992)'s interval for two-rater binary kappa: ``{kappa0 : p(kappa0) > 1 - level}``.

    ``n11``/``n00``: items both raters put in the first/second category, ``n10``: discordant
    items. ``p(kappa0)`` is the p-value of Donner & Eliasziw's goodness-of-fit chi-square
    (1 df): up to :data:`GOF_EXACT_MAX` items, the exact one under the fitted model (every table
    of ``n`` items enumerated, ``pi`` at its estimate: :func:`_gof_pvalues`); above, chi-square's
    (the paper's, to which the exact one tends). The chi-square is 0 at Scott's pi (the model
    fits the counts exactly there) and rises on both sides; each limit is the first ``kappa0``,
    going out from the estimate, where ``p`` falls to ``1 - level`` (chi-square: Brent's method
    on the statistic; exact: the saw-tooth p-value on a grid, :func:`_exact_end`), or the end of
    the range when it never does: ``1`` when no item is discordant,
    ``max(-pi/(1-pi), -(1-pi)/pi)`` (where a fitted frequency reaches 0) below. ``reference``:
    ``"auto"`` (exact up to :data:`GOF_EXACT_MAX` items), ``"exact"`` or ``"chi2"``; counts
    that are not whole numbers always use chi-square's, with a note.
    """
    n = n11 + n10 + n00
    if n < 2:
        return dataclasses.replace(NAN_INTERVAL, note="fewer than two items rated by both raters")
    pi = (2 * n11 + n10) / (2 * n)
    if not 0 < pi < 1:
        return dataclasses.replace(NAN_INTERVAL, note="one category only")
    counts = (n11, n10, n00)
    k_hat = 1 - n10 / (2 * n * pi * (1 - pi))
    k_min = max(-pi / (1 - pi), -(1 - pi) / pi)
    whole = all(float(x).is_integer() for x in counts)
    if reference not in ("auto", "exact", "chi2"):
        raise ValueError(reference)
    if whole and (reference == "exact" or (reference == "auto" and n <= GOF_EXACT_MAX)):
        ints = (int(n11), int(n10), int(n00))
        return Interval(_exact_end(ints, k_hat, k_min, level), _exact_end(ints, k_hat, 1.0, level), "gof")
    crit = float(2.0 * _sc.gammaincinv(0.5, level))

    def f(k: float) -> float:
        return _gof_chi2(k, pi, counts) - crit

    def crossing(a: float, b: float) -> float:
        # f(a) < 0 <= f(b) or the reverse; inf values are pulled in a little
        fb = f(b)
        if fb <= 0:
            return b
        if not math.isfinite(fb):
            lo, hi = a, b
            for _ in range(200):  # bisect until the far end is finite
                mid = (lo + hi) / 2
                fm = f(mid)
                if math.isfinite(fm):
                    if fm <= 0:
                        lo = mid
                    else:
                        return float(_brentq(f, lo, mid))
                else:
                    hi = mid
            return lo
        return float(_brentq(f, a, b))

    upper = crossing(k_hat, 1.0)
    lower = crossing(k_hat, k_min)
    note = "" if whole or reference == "chi2" else "counts not whole: the chi-square reference"
    return Interval(float(min(lower, k_hat)), float(max(upper, k_hat)), "gof", note=note)


GOF_GRID = (64, 32, 16)


def _exact_end(counts: tuple[int, int, int], k_hat: float, end: float, level: float) -> float:
    """The limit of the exact goodness-of-fit interval between the estimate and ``end``.

    The exact p-value is a saw-tooth in ``kappa0`` (it jumps where a table's statistic crosses
    the observed one), so ``{p > 1 - level}`` need not be an interval; the limit is the first
    ``kappa0`` going out from the estimate where ``p <= 1 - level``, located on a grid of
    ``GOF_GRID[0]`` equal steps from the estimate to ``end``, then within the step where it
    first falls on grids of ``GOF_GRID[1:]`` steps (to ``|end - k_hat| / 32,768``). The
    refinements sum over the tables whose probability can exceed ``1e-14 / tables`` inside the
    step (the log-probability is concave in ``kappa0``, so its tangents at the step's ends bound
    it there). At ``kappa0 = 1`` only tables without a discordant item have probability, and
    their statistic is 0: ``p = 1`` when none is observed, else 0."""
    alpha = 1 - level
    lo, hi = k_hat, end
    keep = None
    n = sum(counts)
    for r, steps in enumerate(GOF_GRID):
        grid = lo + (hi - lo) * np.arange(1, steps + 1) / steps
        grid[-1] = hi
        j = -1
        for b0 in range(0, steps, 16):  # 16 points at a time, out from the estimate: stop at the first fall
            g = grid[b0:b0 + 16]
            p = np.empty(g.size)
            top = g >= 1
            p[top] = 1.0 if counts[1] == 0 else 0.0
            p[~top] = _gof_pvalues(g[~top], counts, keep)
            out = np.nonzero(p <= alpha)[0]
            if out.size:
                j = b0 + int(out[0])
                break
        if j < 0:
            return hi
        lo, hi = (lo if j == 0 else float(grid[j - 1])), float(grid[j])
        if r + 1 < len(GOF_GRID):
            keep = _likely_tables(counts, lo, hi, n)
    return lo


def _likely_tables(counts: tuple[int, int, int], k1: float, k2: float, n: int) -> np.ndarray:
    """The tables whose probability can exceed ``1e-14 / tables`` for some ``kappa0`` between
    ``k1`` and ``k2`` (a bound from the concavity of the log-probability in ``kappa0``)."""
    tables = _pair_tables(n)
    a, b, c = tables[:3]
    ks = np.array([[k1], [k2]])
    lp = _gof_logpmf(ks, counts, tables)
    p0 = (2 * counts[0] + counts[1]) / (2 * n)
    s0 = p0 * (1 - p0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = (a * s0 / np.maximum(p0 * p0 + s0 * ks, 1e-300) - b / np.maximum(1 - ks, 1e-300)
             + c * s0 / np.maximum((1 - p0) ** 2 + s0 * ks, 1e-300))  # d log-probability / d kappa0
    w = abs(k2 - k1)
    sign = 1.0 if k2 >= k1 else -1.0
    # tangent at k1 bounds the step by lp1 + max(0, slope towards k2) w; at k2 likewise
    bound = np.minimum(lp[0] + np.maximum(sign * d[0], 0) * w, lp[1] + np.maximum(-sign * d[1], 0) * w)
    bound = np.where(np.isnan(bound), np.inf, bound)
    return np.nonzero(bound > math.log(1e-14 / a.size))[0]


def _brentq(f: Callable[[float], float], a: float, b: float) -> float:
    from scipy.optimize import brentq
    return float(brentq(f, a, b, xtol=1e-12, rtol=1e-12))


def zero_disagreement(n_units: int, expected_disagreement: float, level: float, *,
                      weight_ratio: float = 1.0, low: float = -1.0) -> Interval:
    """``[1 - min(1, p_u r) / D_e, 1]`` when no unit disagrees: ``p_u = 1 - (alpha/2)^(1/n)``.

    ``D_e`` is the expected disagreement (a share of pairs, at most 1 per unit), ``r`` the
    largest unit weight in the observed disagreement over the mean one (1 when units weigh the
    same; the labels per unit for alpha), so ``p_u r`` bounds the observed disagreement of a
    population in which at most a share ``p_u`` of units disagree, each as much as possible.
    """
    if n_units < 1 or not (math.isfinite(expected_disagreement) and expected_disagreement > 0):
        return dataclasses.replace(NAN_INTERVAL, note="no expected disagreement")
    p_u = 1 - ((1 - level) / 2) ** (1 / n_units)
    return Interval(max(low, 1 - min(1.0, p_u * weight_ratio) / expected_disagreement), 1.0, "zero_disagreement",
                    note=f"no unit shows any disagreement: a one-sided bound "
                         f"(at most {p_u:.3g} of units disagree, Clopper-Pearson)")


Builder = Callable[..., Interval]


FALLBACK = ("jackknife", "percentile")


def build(method: str, est: float, *, boots: np.ndarray | None, jack: np.ndarray | None,
          boot_se: np.ndarray | None, analytic_se: float | None, n_units: int, level: float,
          scale: Scale, fallback: bool = True, jack_stats: tuple[float, float] | None = None) -> Interval:
    """The interval of ``method``; when its inputs do not define it, the first of
    ``jackknife``, ``percentile`` that is defined, with a note saying why (``nan`` when none is).

    ``boots`` are the bootstrap replicates, ``jack`` the leave-one-unit-out values, ``boot_se``
    each replicate's jackknife SE (bootstrap-t only), ``analytic_se`` the literature's SE;
    ``jack_stats``: :func:`jack_summary` of ``jack`` when the caller computed it already.
    """
    if not math.isfinite(est):
        return dataclasses.replace(NAN_INTERVAL, note="the estimate is undefined")
    bt = np.zeros(0) if boots is None else boots
    jk = np.zeros(0) if jack is None else jack
    se_j = (jack_stats[0] if jack_stats is not None else jackknife_se(jk)) if jk.size else float("nan")
    r: Interval
    if method == "percentile":
        r = percentile(bt, level)
    elif method == "bca":
        r = bca(est, bt, jk, level, None if jack_stats is None else jack_stats[1]) if jk.size else dataclasses.replace(
            percentile(bt, level), note="BCa needs the jackknife, not computed at this size; percentile used")
    elif method == "studentized":
        r = studentized(est, bt, np.zeros(0) if boot_se is None else boot_se, se_j, level, scale)
    elif method == "jackknife":
        r = jackknife(est, jk, level, scale, n_units) if jk.size else NAN_INTERVAL
    elif method == "wald":
        r = wald(est, float("nan") if analytic_se is None else analytic_se, level, scale)
    elif method == "wilson":
        se = se_j if math.isfinite(se_j) and se_j > 0 else (analytic_se or float("nan"))
        n_eff = est * (1 - est) / se ** 2 if math.isfinite(se) and se > 0 else float("nan")
        if est in (0.0, 1.0):
            n_eff = float(n_units)  # p = 0 or 1: no variance to take a design effect from; Wilson on the units
        r = wilson(est, n_eff, level)
    else:
        raise ValueError(method)
    if (math.isfinite(r.low) and math.isfinite(r.high)) or not fallback:
        return r
    why = r.note or f"{METHOD_NAMES[method]} undefined on these data"
    for fb in FALLBACK:
        if fb == method:
            continue
        # one level of fallback only: a fallback that is undefined too must not start its own chain
        # (jackknife -> percentile -> jackknife ... recursed without end)
        alt = build(fb, est, boots=boots, jack=jack, boot_se=None, analytic_se=analytic_se, n_units=n_units,
                    level=level, scale=scale, fallback=False)
        if math.isfinite(alt.low) and math.isfinite(alt.high):
            return dataclasses.replace(alt, note=f"{why}; {METHOD_NAMES[alt.method]} used instead")
    return dataclasses.replace(NAN_INTERVAL, note=f"{why}; no other interval is defined either")
