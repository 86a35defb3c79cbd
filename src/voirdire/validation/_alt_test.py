"""The Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025; METHODS §2)."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import stdtr  # the t cdf that scipy.stats.t.cdf calls (no scipy.stats import: ~1 s)

from .. import _options
from .._checks import as_generator, check_choice, check_positive_int, check_probability
from .._results import Result
from ..data import AnnotationTable
from ..exceptions import DegenerateDataWarning, InvalidParameterError
from ._common import check_epsilon, check_nonneg_int, check_table, resolve_judges
from ._kernel import category_counts, nanmean_last, resampled_column_sums
from .._stats.resampling import (
    NORMAL_METHOD, NORMAL_MIN_UNITS, cluster_index, linearised_law, normal_draws, normal_law_applies, resampling_unit,
    unit_sums, weight_batches,
)

__all__ = ["AltTestResult", "alt_test", "multiplicity_rejections", "rejected_flags"]

CORRECTIONS = _options.CORRECTIONS  # the one registry of option values
TESTS = _options.PER_HUMAN_TESTS
_REL_TOL = 1e-9


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AltTestResult(Result):
    """Result of the Alternative Annotator Test for one judge.

    Per-human arrays (order of ``humans``): ``n_items`` (n_j), ``rho_f`` (share of items where
    the judge does at least as well as the human), ``rho_h`` (share where the human does at least
    as well as the judge), ``mean_d`` (mean of ``W^h - W^f``), ``statistic`` (t, or Wilcoxon's
    W+), ``p_value``, ``rejected``, ``tested`` (False for skipped humans), ``degenerate`` (all d
    equal: decided by the sign of ``mean_d - epsilon``) and ``reason`` (why a human was skipped).

    Summary: ``omega`` (winning rate = rejected / tested), ``rho`` (average advantage
    probability over tested humans), ``decision`` ("accept" iff omega >= 0.5, else "reject"),
    ``decision_stability`` and ``p_accept`` (bootstrap; nan when ``n_resamples=0``; with the t-test and
    :data:`~voirdire._stats.resampling.NORMAL_MIN_UNITS` kept items behind every tested human, draws
    of the t statistics' joint normal law instead: ``stability_method`` says which).
    """

    judge: str
    scoring: str
    epsilon: float
    q: float
    correction: str
    test: str
    min_humans_per_item: int
    min_items_per_human: int
    humans: tuple[str, ...]
    n_items: np.ndarray
    rho_f: np.ndarray
    rho_h: np.ndarray
    mean_d: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray
    rejected: np.ndarray
    tested: np.ndarray
    degenerate: np.ndarray
    reason: tuple[str | None, ...]
    n_items_used: int
    n_items_dropped: int
    n_tested: int
    n_rejected: int
    omega: float
    rho: float
    decision: str
    n_resamples: int
    resampling_unit: str
    decision_stability: float
    p_accept: float
    stability_method: str = "bootstrap"

    def to_frame(self) -> pd.DataFrame:
        """One row per human (skipped humans included, with their reason)."""
        return pd.DataFrame({
            "judge": self.judge, "human": list(self.humans), "n_items": self.n_items, "rho_f": self.rho_f,
            "rho_h": self.rho_h, "mean_d": self.mean_d, "statistic": self.statistic, "p_value": self.p_value,
            "rejected": self.rejected, "tested": self.tested, "degenerate": self.degenerate,
            "reason": list(self.reason),
        })


# ---------------------------------------------------------------------------- multiplicity
def multiplicity_rejections(p: np.ndarray, q: float, *, correction: str) -> np.ndarray:
    """Number of hypotheses rejected along the last axis (nan p-values are never rejected).

    ``by`` (Benjamini-Yekutieli) and ``bh`` (Benjamini-Hochberg) are step-up procedures with
    thresholds ``i q / (m c_m)`` (``c_m = sum 1/i`` for BY, 1 for BH); ``holm`` is Holm's
    step-down ``q / (m - i + 1)``; ``bonferroni`` is ``q / m``. ``m`` is the number of tested
    hypotheses (the size of the last axis).
    """
    p = np.asarray(p, dtype=float)
    m = p.shape[-1]
    if m == 0:
        return np.zeros(p.shape[:-1], dtype=np.int64)
    srt = np.sort(np.where(np.isnan(p), np.inf, p), axis=-1)
    i = np.arange(1, m + 1)
    if correction in ("by", "bh"):
        cm = np.sum(1.0 / i) if correction == "by" else 1.0
        ok = srt <= i / m * q / cm
        last = np.where(ok.any(axis=-1), m - np.argmax(ok[..., ::-1], axis=-1), 0)
        return last.astype(np.int64)
    if correction == "holm":
        ok = srt <= q / (m - i + 1)
        return np.where(ok.all(axis=-1), m, np.argmin(ok, axis=-1)).astype(np.int64)
    return np.sum(srt <= q / m, axis=-1).astype(np.int64)


def rejected_flags(p: np.ndarray, q: float, *, correction: str) -> np.ndarray:
    """Which of the p-values ``p`` a multiplicity ``correction`` rejects at level ``q`` (nan never).

    ``correction`` is one of ``by``, ``bh`` (false discovery rate), ``holm``, ``bonferroni``
    (family-wise error); the flags mark the smallest p-values, as many as
    :func:`multiplicity_rejections` counts.
    """
    r = int(multiplicity_rejections(p, q, correction=correction))
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    out = np.zeros(p.size, dtype=bool)
    out[order[:r]] = True
    return out


# ---------------------------------------------------------------------------- indicators
def _check_scoring(scoring: Any, table: AnnotationTable, func: str) -> str:
    if callable(scoring):
        return getattr(scoring, "__name__", "callable")
    name = check_choice(scoring, "scoring", func, _options.ALT_TEST_SCORINGS)
    if name == "neg_rmse" and not table.scale.is_numeric:
        cats = list(table.scale.categories or ())[:8]
        raise InvalidParameterError(
            f"scoring='neg_rmse' needs numeric labels, but {table.source} has non-numeric categories {cats}. "
            f"Use scoring='accuracy', a callable, or declare the numeric scale (--scale interval).")
    return name


def indicators(table: AnnotationTable, jidx: np.ndarray, hidx: np.ndarray, scoring: Any,
               min_humans_per_item: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-item advantage indicators.

    Returns ``wf, wh, elig`` as ``(n_items, J, K)`` arrays (``W^f``, ``W^h``, eligibility) and the
    ``(J,)`` number of items kept per judge.
    """
    L = table.n_categories
    codes = table.dense()
    H = codes[:, hidx]
    G = codes[:, jidx]
    vk = (H >= 0) & (H < L)
    vj = (G >= 0) & (G < L)
    nh = vk.sum(axis=1)
    keep = (nh >= min_humans_per_item)[:, None] & vj            # (n, J): item kept for judge j
    elig = keep[:, :, None] & vk[:, None, :]                    # (n, J, K)
    if callable(scoring):
        return (*_indicators_callable(table, H, G, vk, elig, scoring), elig, keep.sum(axis=0))
    if scoring == "accuracy":
        # S(a, R) = #{r in R: r = a} / |R|; |R| = nh - 1 is shared, so compare the counts, read from each
        # item's category counts C (O(items x humans); a missing label reads the empty column L)
        Hx, Gx = np.where(vk, H, L), np.where(vj, G, L)
        C = category_counts(Hx, L)
        num_h = np.take_along_axis(C, Hx, axis=1) - 1                           # (n, K)
        eq = (G[:, :, None] == H[:, None, :]) & vk[:, None, :]                  # (n, J, K)
        num_f = np.take_along_axis(C, Gx, axis=1)[:, :, None] - eq              # (n, J, K)
        wf = num_f >= num_h[:, None, :]
        wh = num_h[:, None, :] >= num_f
    else:  # neg_rmse: S = -sqrt(mean (a - r)^2); |R| shared, so compare the sums of squares
        V = table.dense_values()
        hv = np.where(vk, V[:, hidx], 0.0)
        gv = np.where(vj, V[:, jidx], 0.0)
        dh = (hv[:, :, None] - hv[:, None, :]) ** 2 * (vk[:, :, None] & vk[:, None, :])
        ss_h = dh.sum(axis=2)                                                  # (n, K); r = k adds 0
        dg = (gv[:, :, None] - hv[:, None, :]) ** 2 * vk[:, None, :]          # (n, J, K)
        ss_f = dg.sum(axis=2)[:, :, None] - dg                                  # leave k out
        tol = _REL_TOL * (1.0 + np.maximum(np.abs(ss_f), np.abs(ss_h)[:, None, :]))
        wf = ss_f <= ss_h[:, None, :] + tol
        wh = ss_h[:, None, :] <= ss_f + tol
    return wf & elig, wh & elig, elig, keep.sum(axis=0)


def _indicators_callable(table: AnnotationTable, H: np.ndarray, G: np.ndarray, vk: np.ndarray,
                         elig: np.ndarray, scoring: Callable[[Any, list[Any]], float]) -> tuple[np.ndarray, np.ndarray]:
    cats = np.asarray(list(table.scale.categories or ()), dtype=object)
    n, J, K = elig.shape
    wf = np.zeros((n, J, K), dtype=bool)
    wh = np.zeros((n, J, K), dtype=bool)
    for i in np.flatnonzero(elig.any(axis=(1, 2))):
        labels = {k: cats[H[i, k]] for k in range(K) if vk[i, k]}
        for k in labels:
            rest = [labels[r] for r in labels if r != k]
            sh = float(scoring(labels[k], rest))
            for j in np.flatnonzero(elig[i, :, k]):
                sf = float(scoring(cats[G[i, j]], rest))
                wf[i, j, k] = sf >= sh
                wh[i, j, k] = sh >= sf
    return wf, wh


# ---------------------------------------------------------------------------- tests
def t_pvalues(n: np.ndarray, s1: np.ndarray, s2: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-sided one-sample t-test of mean(d) < epsilon from weighted sums; vectorised.

    ``n`` = number of items (sum of weights), ``s1`` = sum d, ``s2`` = sum d^2. Returns
    ``(t, p, degenerate)``; when every d is equal (zero variance) p is 0 if mean(d) < epsilon,
    else 1, and ``degenerate`` is True. ``n < 2`` gives nan.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s1 / n
        var = (s2 - n * mean**2) / (n - 1)
        var = np.where(var < 1e-12, 0.0, var)
        se = np.sqrt(var / n)
        t = (mean - epsilon) / se
        p = stdtr(n - 1, t)
    degenerate = (var == 0) & (n >= 2)
    p = np.where(degenerate, np.where(mean < epsilon, 0.0, 1.0), p)
    t = np.where(degenerate, np.where(mean < epsilon, -np.inf, np.where(mean > epsilon, np.inf, np.nan)), t)
    p = np.where(n >= 2, p, np.nan)
    t = np.where(n >= 2, t, np.nan)
    return t, p, degenerate


def _wilcoxon(d: np.ndarray, epsilon: float) -> tuple[float, float, bool]:
    x = d - epsilon
    if np.all(x == 0) or x.size < 1:
        return float("nan"), 1.0, True
    if np.all(x == x[0]):
        return float("nan"), (0.0 if x[0] < 0 else 1.0), True
    from scipy import stats  # imported when used: scipy.stats takes about a second to import

    r = stats.wilcoxon(x, alternative="less")
    return float(r.statistic), float(r.pvalue), False


# ---------------------------------------------------------------------------- public
def alt_test(table: Any, judge: str, *, scoring: Literal["accuracy", "neg_rmse"] | Callable[[Any, list[Any]], float] = "accuracy",
             epsilon: float = 0.2, q: float = 0.05,
             correction: Literal["by", "bh", "holm", "bonferroni"] = "by", test: Literal["t", "wilcoxon"] = "t",
             min_humans_per_item: int = 2, min_items_per_human: int = 30, n_resamples: int = 0,
             rng: int | np.random.Generator | None = None) -> AltTestResult:
    r"""Alternative Annotator Test: is the judge at least as good an annotator as each human?

    Items with at least ``min_humans_per_item`` human labels and a judge label are kept. For
    each human :math:`j` and each of its kept items, :math:`R_{ij}` are the other humans'
    labels, :math:`W^f_{ij} = 1[S(f_i, R_{ij}) \ge S(h_j(i), R_{ij})]` and
    :math:`W^h_{ij} = 1[S(h_j(i), R_{ij}) \ge S(f_i, R_{ij})]` (a tie counts for both). With
    :math:`d_{ij} = W^h_{ij} - W^f_{ij}`, the one-sided one-sample test of
    :math:`H_{0j}: \rho^f_j \le \rho^h_j - \varepsilon` rejects when mean(d) is significantly
    below epsilon. The rejections over humans are corrected for multiplicity (Benjamini-Yekutieli
    by default); ``omega = rejected / tested`` and the judge passes when omega >= 0.5.

    Parameters
    ----------
    table : AnnotationTable
        Human and judge labels (the judge must be marked as a judge).
    judge : str
        The judge under test.
    scoring : {"accuracy", "neg_rmse"} or callable, default "accuracy"
        ``accuracy``: share of R equal to the label; ``neg_rmse``: minus the root mean squared
        difference (numeric labels only); a callable ``(label, list_of_labels) -> float``
        (higher is better) receives the category labels as the table holds them.
    epsilon : float in [0, 1), default 0.2
        Cost-benefit margin: 0.2 for experts, 0.15 skilled, 0.1 crowd (the authors' guidance).
    q : float in (0, 1), default 0.05
        Level of the multiplicity correction (false discovery rate for BY/BH, family-wise for
        Holm/Bonferroni).
    correction : {"by", "bh", "holm", "bonferroni"}, default "by"
    test : {"t", "wilcoxon"}, default "t"
        One-sided one-sample t-test (Student t with n_j - 1 df), or the Wilcoxon signed-rank
        test of ``d - epsilon`` (the authors' suggestion below 30 items per human). The t-test
        holds its 5% size from 20 items per human; the Wilcoxon test is about the median of
        ``d - epsilon``, not its mean, and rejected 11-34% of the time at the mean's boundary in
        simulation (docs/validation.md "Small samples"): prefer ``"t"``.
    min_humans_per_item : int >= 2, default 2
    min_items_per_human : int >= 2, default 30
        Humans with fewer kept items are skipped: reported with the reason, left out of omega's
        denominator and of rho.
    n_resamples : int >= 0, default 0
        Bootstrap resamples (items, or clusters when the table has them) for the decision's
        stability; 0 skips it (the published test has no bootstrap).
    rng : int, Generator or None

    Returns
    -------
    AltTestResult

    Raises
    ------
    InvalidParameterError
        Unknown judge, judge marked human, fewer than two humans, no item with enough humans
        and a judge label, every human skipped, non-numeric labels with ``neg_rmse``, or a bad
        parameter.

    Notes
    -----
    *Degenerate variance.* When every d_ij of a human is equal the t statistic is undefined;
    the test is then decided by the sign: p = 0 if mean(d) < epsilon (the judge never loses
    by more than the margin), else p = 1. This matches ``scipy.stats.ttest_1samp``'s limit
    (t = -inf, p = 0) and the reference notebook; such humans are flagged ``degenerate`` and a
    :class:`DegenerateDataWarning` is raised.

    *neg_rmse ties* are detected on the sums of squares with a relative tolerance of 1e-9
    (exact for integer labels), so rounding cannot break a tie the scores share.

    ``rho`` (the average advantage probability) does not depend on epsilon and is the figure
    to rank judges by. Abstentions count as missing labels. Validated against the authors'
    notebook (``nitaytech/AltTest``, ``alt_test_example.ipynb``) on their nine data sets.

    References
    ----------
    Calderon, Reichart & Dror, *The Alternative Annotator Test for LLM-as-a-Judge*, ACL 2025,
    arXiv:2501.10970.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> r = alt_test(t, t.judges[0], scoring="neg_rmse", epsilon=0.15)
    >>> r.n_tested, r.decision in ("accept", "reject")
    (3, True)
    """
    func = "alt_test"
    table = check_table(table, func)
    epsilon = check_epsilon(epsilon, func)
    q = check_probability(q, "q", func)
    correction = check_choice(correction, "correction", func, CORRECTIONS)  # type: ignore[assignment]
    test = check_choice(test, "test", func, TESTS)  # type: ignore[assignment]
    min_humans_per_item = _check_min(min_humans_per_item, "min_humans_per_item", func)
    min_items_per_human = _check_min(min_items_per_human, "min_items_per_human", func)
    n_resamples = check_nonneg_int(n_resamples, "n_resamples", func)
    gen = as_generator(rng)
    names, jidx, hidx = resolve_judges(table, judge, func)
    if len(names) != 1:
        raise InvalidParameterError(f"{func} tests one judge at a time; use rank_judges for several.")
    scoring_name = _check_scoring(scoring, table, func)
    wf, wh, elig, n_kept = indicators(table, jidx, hidx, scoring, min_humans_per_item)
    wf, wh, elig = wf[:, 0, :], wh[:, 0, :], elig[:, 0, :]
    humans = tuple(str(table.raters[h]) for h in hidx)
    if n_kept[0] == 0:
        raise InvalidParameterError(
            f"No item in {table.source} has at least {min_humans_per_item} human labels and a label from "
            f"{names[0]!r}, so the alt-test has nothing to compare.")
    n_j = elig.sum(axis=0)
    tested = n_j >= min_items_per_human
    if not tested.any():
        raise InvalidParameterError(
            f"Every human has fewer than min_items_per_human={min_items_per_human} kept items "
            f"(most: {int(n_j.max())}); the alt-test cannot run. Lower min_items_per_human (and consider "
            f"test='wilcoxon') or collect more overlapping labels.")
    # W^f and W^h are False off the eligible items, so d is 0 there: d * elig is d itself (bit for bit)
    d = wh.astype(float) - wf.astype(float)
    ef = elig.astype(float)
    s1 = d.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho_f = np.where(n_j > 0, wf.sum(axis=0) / n_j, np.nan)
        rho_h = np.where(n_j > 0, wh.sum(axis=0) / n_j, np.nan)
        mean_d = np.where(n_j > 0, s1 / n_j, np.nan)
    K = hidx.size
    if test == "t":
        stat, p, degen = t_pvalues(n_j.astype(float), s1, (d * d).sum(axis=0), epsilon)
    else:
        stat, p, degen = np.full(K, np.nan), np.full(K, np.nan), np.zeros(K, dtype=bool)
        for k in np.flatnonzero(tested):
            stat[k], p[k], degen[k] = _wilcoxon(d[elig[:, k], k], epsilon)
    stat = np.where(tested, stat, np.nan)
    p = np.where(tested, p, np.nan)
    degen = degen & tested
    rejected = np.zeros(K, dtype=bool)
    rejected[tested] = rejected_flags(p[tested], q, correction=correction)
    reasons = tuple(None if tested[k] else f"only {int(n_j[k])} kept items < min_items_per_human={min_items_per_human}"
                    for k in range(K))
    if degen.any():
        warnings.warn(
            f"Every advantage difference d is equal for human(s) {[humans[k] for k in np.flatnonzero(degen)]}; "
            f"their test is decided by the sign of mean(d) - epsilon (p = 0 or 1).",
            DegenerateDataWarning, stacklevel=2)
    n_tested = int(tested.sum())
    n_rej = int(rejected.sum())
    omega = n_rej / n_tested
    decision = "accept" if omega >= 0.5 else "reject"
    stability = p_accept = float("nan")
    stability_method = "none"
    if n_resamples > 0:
        om_b = _normal_omega(d[:, tested], ef[:, tested], epsilon, q, correction, n_resamples, gen,
                             table.clusters) if test == "t" else None
        stability_method = "bootstrap" if om_b is None else NORMAL_METHOD
        if om_b is None:
            om_b = _bootstrap_omega(d[:, tested], ef[:, tested], epsilon, q, correction, test, n_resamples, gen,
                                    table.clusters)
        dec_b = om_b >= 0.5
        stability = float(np.mean(dec_b == (decision == "accept")))
        p_accept = float(np.mean(dec_b))
    return AltTestResult(
        judge=names[0], scoring=scoring_name, epsilon=epsilon, q=q, correction=correction, test=test,
        min_humans_per_item=min_humans_per_item, min_items_per_human=min_items_per_human, humans=humans,
        n_items=n_j.astype(np.int64), rho_f=rho_f, rho_h=rho_h, mean_d=mean_d, statistic=stat, p_value=p,
        rejected=rejected, tested=tested, degenerate=degen, reason=reasons, n_items_used=int(n_kept[0]),
        n_items_dropped=int(table.n_items - n_kept[0]), n_tested=n_tested, n_rejected=n_rej, omega=omega,
        rho=float(np.mean(rho_f[tested])), decision=decision, n_resamples=n_resamples,
        resampling_unit=resampling_unit(table.clusters), decision_stability=stability, p_accept=p_accept,
        stability_method=stability_method,
    )


def _check_min(value: Any, name: str, func: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
        raise InvalidParameterError(f"The '{name}' parameter of {func} must be an integer >= 2. Got {value!r} instead.")
    return int(value)


def bootstrap_alt_stats(d: np.ndarray, ef: np.ndarray, wf: np.ndarray, epsilon: float, q: float, correction: str,
                        n_resamples: int, rng: np.random.Generator,
                        clusters: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap omega and rho for many judges at once (t-test).

    ``d, ef, wf`` are ``(n_items, J, K)`` (only tested humans); returns ``(B, J)`` omega and rho.
    """
    n, J, K = d.shape
    om = np.empty((n_resamples, J))
    rho = np.empty((n_resamples, J))
    X = np.concatenate([ef.reshape(n, -1), (d * ef).reshape(n, -1), (d**2 * ef).reshape(n, -1),
                        (wf * ef).reshape(n, -1)], axis=1)
    pos = 0
    for Sb in resampled_column_sums(X, n_resamples, rng, clusters=clusters, segments=np.tile(np.arange(J * K), 4)):
        S = Sb.reshape(Sb.shape[0], 4, J, K)
        nb, s1, s2, sf = S[:, 0], S[:, 1], S[:, 2], S[:, 3]
        _, p, _ = t_pvalues(nb, s1, s2, epsilon)
        om[pos:pos + S.shape[0]] = multiplicity_rejections(p, q, correction=correction) / K
        with np.errstate(invalid="ignore", divide="ignore"):
            rho[pos:pos + S.shape[0]] = nanmean_last(np.where(nb > 0, sf / np.maximum(nb, 1e-300), np.nan))
        pos += S.shape[0]
    return om, rho


def _normal_omega(d: np.ndarray, ef: np.ndarray, epsilon: float, q: float, correction: str, n_resamples: int,
                  rng: np.random.Generator, clusters: np.ndarray | None) -> np.ndarray | None:
    """Replicates of omega (t-test) from the joint normal law of the humans' t statistics (delta method
    over the units' influence values, :func:`voirdire._stats.resampling.linearised_law`), each draw
    turned into p-values (Student t, the observed n_j - 1 df) and corrected as the test does; None
    below :data:`NORMAL_MIN_UNITS` kept units for some human, or when a t is infinite (every d equal)."""
    n, K = d.shape
    inv, n_units = (None, n) if clusters is None else cluster_index(clusters)
    if n_units < NORMAL_MIN_UNITS:
        return None
    # the columns n, sum d, sum d^2 side by side (not joined); d is 0 off the kept items (d * ef = d)
    X: list[np.ndarray] = [ef, d, d * d]
    if inv is not None:
        X = [np.asarray(unit_sums(x, inv, n_units)) for x in X]

    def t_of(s: np.ndarray) -> np.ndarray:
        return t_pvalues(s[:, :K], s[:, K:2 * K], s[:, 2 * K:], epsilon)[0]

    est, cov, cnt = linearised_law(X, t_of)
    if not (np.all(np.isfinite(est)) and normal_law_applies(est, cnt, min_units=NORMAL_MIN_UNITS)):
        return None
    n_j = ef.sum(axis=0)
    p = stdtr(n_j - 1, normal_draws(est, cov, n_resamples, rng))
    return multiplicity_rejections(p, q, correction=correction) / K


def _bootstrap_omega(d: np.ndarray, ef: np.ndarray, epsilon: float, q: float, correction: str, test: str,
                     n_resamples: int, rng: np.random.Generator, clusters: np.ndarray | None) -> np.ndarray:
    if test == "t":
        om, _ = bootstrap_alt_stats(d[:, None, :], ef[:, None, :], np.zeros_like(d)[:, None, :], epsilon, q,
                                    correction, n_resamples, rng, clusters)
        return om[:, 0]
    # Wilcoxon: d takes the values -1, 0, 1, so a resample is summarised by three counts per human.
    n, K = d.shape
    out = np.empty(n_resamples)
    pos = 0
    for W in weight_batches(n, n_resamples, rng, clusters=clusters):
        counts = np.stack([W @ (ef * (d == v)) for v in (-1.0, 0.0, 1.0)], axis=-1)  # (b, K, 3)
        for b in range(W.shape[0]):
            p = np.full(K, np.nan)
            for k in range(K):
                c = np.rint(counts[b, k]).astype(int)
                if c.sum() >= 2:
                    _, p[k], _ = _wilcoxon(np.repeat([-1.0, 0.0, 1.0], c), epsilon)
            out[pos + b] = multiplicity_rejections(p, q, correction=correction) / K
        pos += W.shape[0]
    return out


def check_test_options(table: AnnotationTable, *, epsilon: float | None = None, threshold: float = 0.5,
                       min_items: int = 10, alt_test_epsilon: float | None = None, q: float = 0.05,
                       scoring: Any = "accuracy",
                       correction: str = "by", test: str = "t", min_items_per_human: int = 30,
                       min_humans_per_item: int = 2) -> None:
    """Check the options of :func:`leave_one_out` (``epsilon``, ``threshold``, ``min_items``; skipped when
    ``epsilon`` is None) and :func:`alt_test` (the rest; skipped when ``alt_test_epsilon`` is None)
    before any work.

    Raises the same :class:`InvalidParameterError` the tests would, so a caller running many
    judges can tell a bad option (the user's error) from data that do not allow a test.
    """
    if epsilon is not None:
        check_epsilon(epsilon, "leave_one_out")
        check_probability(threshold, "threshold", "leave_one_out", open_low=True, open_high=False)
        check_positive_int(min_items, "min_items", "leave_one_out")
    if alt_test_epsilon is None:
        return
    check_epsilon(alt_test_epsilon, "alt_test")
    check_probability(q, "q", "alt_test")
    check_choice(correction, "correction", "alt_test", CORRECTIONS)
    check_choice(test, "test", "alt_test", TESTS)
    _check_min(min_humans_per_item, "min_humans_per_item", "alt_test")
    _check_min(min_items_per_human, "min_items_per_human", "alt_test")
    _check_scoring(scoring, table, "alt_test")
