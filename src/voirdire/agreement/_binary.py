"""The binary family of a judge against a reference (METHODS section 1)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._checks import as_generator, undefined
from .._results import ConfidenceInterval
from ..data import AnnotationTable
from ..exceptions import InvalidParameterError
from . import _core
from ._coefficients import _check_common
from ._prepare import ABSTAIN_LABEL, prepare
from ._results import BinaryAgreementResult

COINCIDE_NOTE = ("phi = MCC = Pearson r = Spearman rho = Kendall tau-b here: on binary labels they are one "
                 "number; report it once. Kappa differs from phi only through the marginals: "
                 "kappa/phi = 1 iff the judge's positive rate equals the reference prevalence.")
BREAK_NOTE = ("phi, MCC, Pearson, Spearman and Kendall tau-b do not coincide here ({why}); read the full "
              "confusion matrix.")


def _phi(tp: Any, fn: Any, fp: Any, tn: Any) -> Any:
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1.0), np.nan)


def _kappa(tp: Any, fn: Any, fp: Any, tn: Any) -> Any:
    den = (tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, 2 * (tp * tn - fp * fn) / np.where(den > 0, den, 1.0), np.nan)


def _div(a: float, b: float) -> float:
    return float(a / b) if b else float("nan")


def binary_agreement(table: AnnotationTable, judge: str, *, reference: str = "majority",
                     positive: Any = None, confidence_level: float = 0.95, n_resamples: int = 2000,
                     rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
                     abstain_policy: str = "exclude") -> BinaryAgreementResult:
    """Confusion matrix and the binary agreement family of one judge against a reference.

    With TP, FN, FP, TN the cells (reference rows, judge columns), ``pi = (TP+FN)/N`` and
    ``pi_hat = (TP+FP)/N``: accuracy, precision ``TP/(TP+FP)``, recall ``TP/(TP+FN)``,
    ``F1 = 2TP/(2TP+FP+FN)``, ``phi = MCC = (TP TN - FP FN)/sqrt(...)`` (= Pearson = Spearman =
    Kendall tau-b on binary labels; each is computed separately and ``coincide`` says whether
    they agree), Cohen's ``kappa = 2(TP TN - FP FN)/[(TP+FN)(FN+TN)+(TP+FP)(FP+TN)]`` and
    ``kappa/phi = 2 sqrt(AB)/(A+B)``.

    Parameters
    ----------
    table : AnnotationTable
    judge : str
        The rater under examination.
    reference : str, default "majority"
        ``"majority"``: the majority label of the human raters (other than ``judge``); items whose
        majority is tied are left out and counted in ``n_ties``. Or the name of one rater.
    positive : optional
        The positive category. Default: the second of two categories (``pass``, ``yes``,
        ``1``...). With more than two categories it is required (one-vs-rest).
    confidence_level, n_resamples, rng, on_undefined
        As in :func:`voirdire.agreement.cohen_kappa`; the bootstrap gives intervals of kappa
        and phi over items (clusters when the table has them).
    abstain_policy : {"exclude", "category", "disagree"}, default "exclude"
        ``exclude``: items where the judge or the reference abstained are left out.
        ``disagree``: a judge abstention counts as the wrong answer (FN on a positive item, FP on
        a negative one); items where the reference abstained are left out.
        ``category``: abstention is a third class; the 2x2 family is computed on the items
        with two substantive labels and the full confusion matrix shows the rest.

    Returns
    -------
    BinaryAgreementResult

    Notes
    -----
    Precision, recall and F1 are ``nan`` when their denominator is 0 (no warning); phi and
    kappa follow ``on_undefined``. Validated against scikit-learn's ``matthews_corrcoef`` and
    ``cohen_kappa_score`` and scipy's correlations.

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays(
    ...     [1, 1, 2, 2, 3, 3, 4, 4], ["h", "j"] * 4, ["y", "y", "y", "n", "n", "n", "n", "n"],
    ...     judges=["j"])
    >>> r = binary_agreement(t, "j", n_resamples=0)
    >>> (r.tp, r.fn, r.fp, r.tn), r.coincide, round(r.kappa, 3), round(r.phi, 3)
    ((1, 1, 0, 2), True, 0.5, 0.577)
    """
    func = "binary_agreement"
    opts = _check_common(func, confidence_level, n_resamples, on_undefined, abstain_policy, rng)
    j_codes = table.codes[table.rater_idx == table.rater_index(judge)]
    n_jl = int(j_codes.size)
    n_ja = int(np.count_nonzero(j_codes >= table.n_categories))
    j_idx = table.rater_index(judge)
    if reference == "majority":
        ref_raters = [str(table.raters[i]) for i in table.human_idx if int(i) != j_idx]
    else:
        ref_raters = [str(reference)] if str(reference) != str(judge) else []
    prep = prepare(table, raters=[str(judge)] + [r for r in ref_raters if r != str(judge)], policy=abstain_policy,
                   func=func)
    L, q = prep.n_sub, prep.q
    cats = list(table.scale.categories or ())
    if positive is None:
        if L != 2:
            raise InvalidParameterError(
                f"The 'positive' parameter of {func} is required when the scale has {L} categories "
                f"({cats[:8]}); name the positive one (one-vs-rest).")
        pos = 1
    else:
        matches = [k for k, c in enumerate(cats) if c == positive or str(c) == str(positive)]
        if not matches:
            raise InvalidParameterError(
                f"The 'positive' parameter of {func} must be one of the categories {cats[:12]}. Got {positive!r} instead.")
        pos = matches[0]
    nI = table.n_items
    jc = np.full(nI, -1, dtype=np.int64)
    sel = prep.rater == j_idx
    jc[prep.item[sel]] = prep.code[sel]
    n_ties = 0
    if reference == "majority":
        hum = [int(i) for i in table.human_idx if int(i) != j_idx]
        if not hum:
            raise InvalidParameterError(f"{func}: reference='majority' needs human raters besides {judge!r}; the table has none.")
        m = np.isin(prep.rater, hum)
        cand = prep.code[m]  # under "category" an abstention is one more vote
        keep_lab = np.ones(cand.size, bool) if prep.policy == "category" else cand < L
        it, cd = prep.item[m][keep_lab], cand[keep_lab]
        C = np.bincount(it * q + cd, minlength=nI * q).reshape(nI, q)
        mx = C.max(axis=1)
        has = mx > 0
        top = (C == mx[:, None]).sum(axis=1)
        tie = has & (top > 1)
        n_ties = int(np.count_nonzero(tie))
        rc = np.where(has & ~tie, C.argmax(axis=1), -1)
        ref_name = "majority"
    else:
        r_idx = table.rater_index(reference)
        if r_idx == j_idx:
            raise InvalidParameterError(f"{func}: the reference must differ from the judge ({judge!r}).")
        rc = np.full(nI, -1, dtype=np.int64)
        s2 = prep.rater == r_idx
        rc[prep.item[s2]] = prep.code[s2]
        ref_name = str(reference)
    both = (jc >= 0) & (rc >= 0)
    labels = tuple(cats) + ((ABSTAIN_LABEL,) if q > L else ())
    cm = np.bincount(rc[both] * q + jc[both], minlength=q * q).reshape(q, q).astype(np.int64)
    # the 2x2 table
    if prep.policy == "disagree":
        use = both & (rc < L)
        y = rc[use] == pos
        yhat = np.where(jc[use] < L, jc[use] == pos, ~y)
    else:
        use = both & (rc < L) & (jc < L)
        y = rc[use] == pos
        yhat = jc[use] == pos
    idx = np.flatnonzero(use)
    tp = int(np.sum(y & yhat))
    fn = int(np.sum(y & ~yhat))
    fp = int(np.sum(~y & yhat))
    tn = int(np.sum(~y & ~yhat))
    n = tp + fn + fp + tn
    phi = float(_phi(tp, fn, fp, tn))
    kappa = float(_kappa(tp, fn, fp, tn))
    mcc = _mcc(tp, fn, fp, tn)
    if n >= 2 and y.any() and (~y).any() and yhat.any() and (~yhat).any():
        yf, hf = y.astype(float), yhat.astype(float)
        pearson = float(np.corrcoef(yf, hf)[0, 1])
        from scipy import stats as _st  # imported when used: scipy.stats takes about a second to import

        spearman = float(_st.spearmanr(yf, hf).statistic)
        kendall = float(_st.kendalltau(yf, hf).statistic)
    else:
        pearson = spearman = kendall = float("nan")
    vals = np.array([phi, mcc, pearson, spearman, kendall])
    coincide = bool(np.all(np.isfinite(vals)) and np.ptp(vals) < 1e-12)
    third = q > L and prep.policy == "category" and bool(cm[L, :].sum() + cm[:, L].sum())
    if coincide and not third:
        note = COINCIDE_NOTE
    else:
        why = ("an abstention category makes the table 3x3" if third else
               "a constant reference or judge leaves them undefined")
        coincide = coincide and not third
        note = BREAK_NOTE.format(why=why)
    if not math.isfinite(phi):
        phi = undefined(f"{func}: phi is undefined: the reference or the judge is constant on the {n} items",
                        on_undefined)
    if not math.isfinite(kappa):
        kappa = undefined(f"{func}: kappa is undefined on the {n} items (empty or constant table)", on_undefined)
    # bootstrap of kappa and phi over items/clusters
    cl = opts.confidence_level
    nan_ci = ConfidenceInterval(low=float("nan"), high=float("nan"), confidence_level=cl, method="none")
    kappa_ci = phi_ci = nan_ci
    mask = np.zeros(nI, bool)
    mask[idx] = True
    unit, n_units, unit_kind = _core._units(prep, mask)
    if opts.n_resamples and n_units >= 2 and n:
        cell = np.zeros((nI, 4))
        cell[idx, 0] = y & yhat
        cell[idx, 1] = y & ~yhat
        cell[idx, 2] = ~y & yhat
        cell[idx, 3] = ~y & ~yhat
        S = _core._aggregate(cell, unit, n_units)
        gen = as_generator(opts.rng)
        B = opts.n_resamples
        kb, pb = np.empty(B), np.empty(B)
        block = max(1, min(B, _core._BLOCK_CELLS // n_units))
        for start in range(0, B, block):
            b = min(block, B - start)
            T = _core._draw_block(gen, b, n_units) @ S
            kb[start:start + b] = _kappa(*T.T)
            pb[start:start + b] = _phi(*T.T)
        lo, hi = (1 - cl) / 2, 1 - (1 - cl) / 2
        for name, arr in (("kappa", kb), ("phi", pb)):
            g = arr[np.isfinite(arr)]
            ci = (ConfidenceInterval(low=float(np.quantile(g, lo)), high=float(np.quantile(g, hi)),
                                     confidence_level=cl, method=f"percentile bootstrap over {unit_kind}s")
                  if g.size >= 2 else nan_ci)
            if name == "kappa":
                kappa_ci = ci
            else:
                phi_ci = ci
    if n_units >= 1 and fn == 0 and fp == 0 and math.isfinite(kappa):
        # no item disagrees: every resample gives 1 and the percentile interval [1, 1] would look
        # exact; the one-sided bound of docs/agreement.md instead (cohen_kappa's on the same table)
        zd = _no_disagreement_ci(np.bincount(unit[idx], minlength=n_units), tp / n, cl)
        if zd is not None:
            kappa_ci = phi_ci = zd
    return BinaryAgreementResult(
        judge=str(judge), reference=ref_name, positive=cats[pos], labels=labels, confusion_matrix=cm,
        tp=tp, fn=fn, fp=fp, tn=tn, n_items=n, accuracy=_div(tp + tn, n), precision=_div(tp, tp + fp),
        recall=_div(tp, tp + fn), f1=_div(2 * tp, 2 * tp + fp + fn), phi=phi, mcc=mcc, pearson=pearson,
        spearman=spearman, kendall_tau_b=kendall, coincide=coincide, note=note, kappa=kappa,
        kappa_ci=kappa_ci, phi_ci=phi_ci, prevalence=_div(tp + fn, n), judge_rate=_div(tp + fp, n),
        kappa_phi_ratio=(kappa / phi) if (math.isfinite(kappa) and math.isfinite(phi) and phi != 0) else float("nan"),
        n_ties=n_ties, n_judge_labels=n_jl, n_judge_abstentions=n_ja,
        judge_coverage=(1 - n_ja / n_jl) if n_jl else float("nan"), abstention=prep.abstention,
        resampling_unit=unit_kind,
    )


def _no_disagreement_ci(per_unit: np.ndarray, prevalence: float, level: float) -> ConfidenceInterval | None:
    """``[1 - p_u r / D_e, 1]`` for kappa (and phi, which is at least kappa on a table with no
    off-diagonal cell) when no item disagrees: ``p_u`` the Clopper-Pearson limit on the share of
    disagreeing units, ``r`` the largest unit's items over the mean, ``D_e = 2 p (1 - p)`` the
    chance disagreement at prevalence ``p``. None when it is undefined."""
    from .._stats import intervals as _iv

    per = per_unit[per_unit > 0].astype(float)
    if not per.size:
        return None
    r = _iv.zero_disagreement(int(per.size), 2 * prevalence * (1 - prevalence), level,
                              weight_ratio=float(per.max() / per.mean()))
    if not math.isfinite(r.low):
        return None
    return ConfidenceInterval(low=float(r.low), high=float(r.high), confidence_level=level, method=r.label)


def _mcc(tp: int, fn: int, fp: int, tn: int) -> float:
    """Matthews' R_K from the confusion matrix (Gorodkin 2004), computed apart from phi."""
    C = np.array([[tn, fp], [fn, tp]], dtype=float)
    t, p = C.sum(axis=1), C.sum(axis=0)
    c, s = np.trace(C), C.sum()
    den = math.sqrt((s * s - p @ p) * (s * s - t @ t))
    return float((c * s - t @ p) / den) if den > 0 else float("nan")
