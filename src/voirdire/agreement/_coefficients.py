"""Public agreement coefficients: thin wrappers over the private core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _options, _scores
from .._checks import check_choice, check_confidence_level, check_on_undefined
from ..data import AnnotationTable
from ..exceptions import InvalidParameterError
from . import _core
from ._prepare import ABSTAIN_POLICIES, Prepared, prepare
from ._results import AgreementResult, AgreementTable

LEVEL_NAMES = _options.LEVELS  # the one registry of option values
COEFFICIENTS = _scores.COEFFICIENTS  # the one registry of coefficient names
_RATIO_MATRIX_LIMIT = 2000
_WEIGHTED = _scores.WEIGHTED_COEFFICIENTS


def _check_common(func: str, confidence_level: Any, n_resamples: Any, on_undefined: Any,
                  abstain_policy: Any, rng: Any, method: Any = "auto") -> _core.Options:
    cl = check_confidence_level(confidence_level, func)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0:
        raise InvalidParameterError(
            f"The 'n_resamples' parameter of {func} must be an integer >= 0 (0 = no bootstrap). "
            f"Got {n_resamples!r} instead.")
    if 0 < n_resamples < 20:
        raise InvalidParameterError(
            f"The 'n_resamples' parameter of {func} must be 0 or at least 20 for a percentile interval. "
            f"Got {n_resamples!r} instead.")
    check_on_undefined(on_undefined, func)
    check_choice(abstain_policy, "abstain_policy", func, ABSTAIN_POLICIES)
    if not (rng is None or isinstance(rng, (int, np.integer, np.random.Generator))) or isinstance(rng, bool):
        raise InvalidParameterError(
            f"The 'rng' parameter of {func} must be an int, a numpy Generator or None. Got {type(rng).__name__} instead.")
    check_choice(method, "method", func, _core.INTERVAL_METHODS)
    if method in ("percentile", "bca", "studentized") and n_resamples == 0:
        raise InvalidParameterError(
            f"The 'method' parameter of {func} is {method!r}, a bootstrap interval, but n_resamples=0. "
            f"Use n_resamples >= 20 (2000 is the default), or method='jackknife' or 'wald'.")
    if method == "wilson" and func not in ("observed_agreement", "agreement"):
        raise InvalidParameterError(
            f"The 'method' parameter of {func} is 'wilson', the score interval for a proportion, which "
            f"only observed_agreement is. Use 'auto', 'studentized', 'bca', 'jackknife', 'percentile' or 'wald'.")
    return _core.Options(confidence_level=cl, n_resamples=int(n_resamples), rng=rng, on_undefined=on_undefined,
                         method=method)


def _level(level: Any, prep: Prepared, func: str) -> str:
    if level is None:
        lv = prep.scale_level
        if prep.policy == "category" and prep.abst_code is not None:
            lv = "nominal"
        return lv
    check_choice(level, "level", func, LEVEL_NAMES)
    if level in ("interval", "ratio") and not prep.numeric:
        raise InvalidParameterError(
            f"{func}: level={level!r} needs numeric labels, but the categories are {list(prep.categories)[:6]}. "
            f"Use level='nominal' (or 'ordinal' with ordered categories).")
    if level == "ordinal" and not prep.numeric and prep.scale_level == "nominal":
        raise InvalidParameterError(
            f"{func}: level='ordinal' needs ordered categories, but the scale is nominal. Read the data with "
            f"scale='ordinal' and categories=[...] from lowest to highest.")
    if level != "nominal" and prep.policy == "category" and prep.abst_code is not None:
        raise InvalidParameterError(
            f"{func}: abstain_policy='category' makes abstention a nominal category, which has no place on "
            f"a {level} scale. Use level='nominal', or abstain_policy='exclude' or 'disagree'.")
    if level == "ratio" and prep.numeric and prep.n_sub and float(np.min(prep.cat_values)) < 0:
        raise InvalidParameterError(f"{func}: level='ratio' needs non-negative values.")
    return str(level)


def _alpha_spec(prep: Prepared, level: str, func: str) -> _core._Spec:
    if level == "nominal":
        return _core._AlphaMatrix(prep, "nominal", func)
    if level == "interval":
        return _core._AlphaMoments(prep, func)
    if level == "ordinal":
        if prep.n_sub <= _core._AlphaOrdinalSums.MAX_CATEGORIES:
            return _core._AlphaOrdinalSums(prep, func)
        return _core._AlphaOrdinal(prep, func)
    if prep.n_sub > _RATIO_MATRIX_LIMIT:
        return _core._AlphaRatio(prep, func)
    return _core._AlphaMatrix(prep, "ratio", func)


def _make_spec(name: str, prep: Prepared, *, level: Any = None, weights: Any = None) -> _core._Spec:
    if name == "observed_agreement":
        return _core._GwetFamily(prep, "pa", weights, name)
    if name == "fleiss_kappa":
        return _core._GwetFamily(prep, "fleiss", weights, name)
    if name == "gwet_ac1":
        return _core._GwetFamily(prep, "ac", None, name)
    if name == "gwet_ac2":
        return _core._GwetFamily(prep, "ac", "quadratic" if weights is None else weights, name)
    if name == "bennett_s":
        return _core._GwetFamily(prep, "bp", weights, name)
    if name == "cohen_kappa":
        return _core._TwoRater(prep, "cohen", weights, name)
    if name == "scott_pi":
        return _core._TwoRater(prep, "scott", weights, name)
    if name == "conger_kappa":
        return _core._Conger(prep, weights, name)
    if name == "krippendorff_alpha":
        return _alpha_spec(prep, _level(level, prep, name), name)
    raise InvalidParameterError(
        f"Unknown coefficient {name!r}. Choose from {list(COEFFICIENTS)}.")


def _one(name: str, table: AnnotationTable, *, raters: Sequence[str] | None, level: Any = None,
         weights: Any = None, confidence_level: Any, n_resamples: Any, rng: Any, on_undefined: Any,
         abstain_policy: Any, method: Any = "auto") -> AgreementResult:
    opts = _check_common(name, confidence_level, n_resamples, on_undefined, abstain_policy, rng, method)
    prep = prepare(table, raters=raters, policy=abstain_policy, func=name)
    spec = _make_spec(name, prep, level=level, weights=weights)
    return _core.run([spec], prep, opts, func=name)[0]


_COMMON_DOC = """
    raters : sequence of str, optional
        Restrict to these raters (default: every rater in the table).
    confidence_level : float, default 0.95
        Level of the bootstrap interval.
    n_resamples : int, default 2000
        Bootstrap resamples of items (of clusters when the table has clusters); 0 skips the
        bootstrap (the interval then comes from ``analytic_se`` where there is one).
    rng : int, numpy.random.Generator or None
        Seed or generator of the bootstrap (results are reproducible from it).
    on_undefined : {"warn", "raise", "nan"}, default "warn"
        What to do when the coefficient is undefined (zero denominator, a single category, no
        item with two labels): warn with :class:`~voirdire.exceptions.DegenerateDataWarning`
        and return ``nan``, raise :class:`~voirdire.exceptions.UndefinedStatisticError`, or
        return ``nan`` silently.
    abstain_policy : {"exclude", "category", "disagree"}, default "exclude"
        How abstentions ("cannot assess") count: dropped, as a nominal category of their own,
        or as a disagreement with every label. Coverage is in ``result.abstention``.
    method : {"auto", "percentile", "bca", "studentized", "jackknife", "wald", "wilson", "gof"}, default "auto"
        How the interval is built: ``auto`` takes, up to 200 units, Donner & Eliasziw's
        goodness-of-fit interval for the kappa of two raters on binary labels (Fleiss, Scott,
        nominal alpha with two labels per item, no clusters; ``gof``; its test referred to its
        exact distribution up to 50 items, to chi-square above), Wilson's score interval
        with the jackknife's effective n for observed agreement, and the bootstrap-t on the
        Fisher-z scale otherwise (ordinal alpha on more than 16 categories: up to 100 units);
        BCa above; the Wald interval when ``n_resamples=0``. docs/agreement.md "Small samples"
        has the rule and the coverage behind it. ``wilson`` is for observed agreement and
        ``gof`` for the two-rater binary kappa (in :func:`agreement` the other coefficients then
        get ``auto``'s choice). When no unit shows any disagreement (estimate 1), kappa-type
        coefficients and nominal alpha get the one-sided bound ``[1 - p_u / D_e, 1]`` with
        ``p_u`` the Clopper-Pearson limit on the share of disagreeing units. A method its inputs
        do not define falls back (jackknife, then percentile) with a
        :class:`~voirdire.exceptions.DegenerateDataWarning` naming the one used."""


def _doc(f: Any) -> Any:
    f.__doc__ = f.__doc__.replace("    {common}", _COMMON_DOC.strip("\n"))
    return f


@_doc
def observed_agreement(table: AnnotationTable, *, raters: Sequence[str] | None = None,
                       weights: Any = None, confidence_level: float = 0.95, n_resamples: int = 2000,
                       rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
                       abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Observed (percent) agreement: the share of agreeing label pairs, averaged over items.

    ``pa = (1/n2) sum_i sum_k n_ik (n_ik - 1) / (r_i (r_i - 1))`` over the ``n2`` items with
    ``r_i >= 2`` labels (Fleiss 1971; Gwet 2014's ``pa``). With two raters this is the share of
    items on which they agree. With ``weights``, partial credit ``w_kl`` for near misses.

    Parameters
    ----------
    table : AnnotationTable
        The labels.
    weights : str or array, optional
        Agreement weights (``"linear"``, ``"quadratic"``, ... as in :func:`gwet_ac2`).
    {common}

    Returns
    -------
    AgreementResult
        ``estimate`` is ``pa``; ``analytic_se`` is Gwet's.

    Notes
    -----
    Not chance-corrected: two raters who always say "pass" on data that are 95% "pass" agree
    95% of the time. Validated against a hand computation and against irrCAC's ``pa``.

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 2, 2, 3, 3], ["a", "b"] * 3, ["y", "y", "y", "n", "n", "n"])
    >>> observed_agreement(t, n_resamples=0).estimate
    0.6666666666666666
    """
    return _one("observed_agreement", table, raters=raters, weights=weights, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


@_doc
def cohen_kappa(table: AnnotationTable, *, raters: Sequence[str] | None = None, weights: Any = None,
                confidence_level: float = 0.95, n_resamples: int = 2000,
                rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
                abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Cohen's kappa between two raters, unweighted or weighted.

    ``kappa = (po - pe) / (1 - pe)`` with ``po = sum_kl w_kl p_kl`` and
    ``pe = sum_kl w_kl p_k. p_.l`` on the items both raters labelled (each rater's own
    marginals: Cohen 1960, 1968).

    Parameters
    ----------
    table : AnnotationTable
        The labels; exactly two raters after ``raters=``.
    weights : {None, "linear", "quadratic", ...} or array, optional
        ``None`` = unweighted. Linear and quadratic weights use the category *values* on
        numeric scales (``1 - |x_k - x_l| / range``, ``1 - (x_k - x_l)^2 / range^2``) and the
        category ranks otherwise.
    {common}

    Returns
    -------
    AgreementResult
        ``analytic_se`` is the large-sample SE of Fleiss, Cohen & Everitt (1969).

    Raises
    ------
    InvalidParameterError
        More or fewer than two raters; weights on an unordered nominal scale.

    Notes
    -----
    Validated against scikit-learn's ``cohen_kappa_score`` (unweighted, linear, quadratic) and
    statsmodels' ``cohens_kappa`` (estimate and ``std_kappa``) to 1e-9. scikit-learn weights
    use label positions; ours use values, which agree whenever categories are equally spaced.

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 2, 2, 3, 3, 4, 4], ["a", "b"] * 4,
    ...                                 ["y", "y", "y", "n", "n", "n", "n", "n"])
    >>> round(cohen_kappa(t, n_resamples=0).estimate, 6)
    0.5
    """
    return _one("cohen_kappa", table, raters=raters, weights=weights, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


@_doc
def scott_pi(table: AnnotationTable, *, raters: Sequence[str] | None = None, weights: Any = None,
             confidence_level: float = 0.95, n_resamples: int = 2000,
             rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
             abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Scott's pi between two raters: chance agreement from the pooled marginals.

    ``pi = (po - pe) / (1 - pe)``, ``pe = sum_kl w_kl pbar_k pbar_l``, ``pbar = (p_k. + p_.k)/2``
    (Scott 1955), on the items both raters labelled. Fleiss' kappa is its many-rater version.

    Parameters
    ----------
    table : AnnotationTable
        Exactly two raters after ``raters=``.
    weights : {None, "linear", "quadratic", ...} or array, optional
        As in :func:`cohen_kappa`.
    {common}

    Returns
    -------
    AgreementResult
        ``analytic_se``: delta-method (Fleiss-Cohen-Everitt-type) SE with pooled marginals.

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 2, 2, 3, 3, 4, 4], ["a", "b"] * 4,
    ...                                 ["y", "y", "y", "n", "n", "n", "n", "n"])
    >>> round(scott_pi(t, n_resamples=0).estimate, 6)
    0.466667
    """
    return _one("scott_pi", table, raters=raters, weights=weights, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


@_doc
def fleiss_kappa(table: AnnotationTable, *, raters: Sequence[str] | None = None, weights: Any = None,
                 confidence_level: float = 0.95, n_resamples: int = 2000,
                 rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
                 abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Fleiss' kappa for any number of raters per item (Fleiss 1971, generalised by Gwet 2014).

    ``kappa = (pa - pe) / (1 - pe)``, ``pa`` as in :func:`observed_agreement` and
    ``pe = sum_kl w_kl pi_k pi_l`` with ``pi_k`` the mean over items of ``n_ik / r_i``.
    Items with a single label count in ``pi`` but not in ``pa`` (Gwet's treatment of missing
    labels); on complete data this is exactly Fleiss (1971).

    Parameters
    ----------
    table : AnnotationTable
    weights : str or array, optional
        Agreement weights (Gwet's weighted generalisation); default unweighted.
    {common}

    Returns
    -------
    AgreementResult
        ``analytic_se``: Gwet's linearisation (as irrCAC's ``fleiss()``).

    Notes
    -----
    Validated against statsmodels ``fleiss_kappa`` on complete tables (1e-9) and irrCAC's
    ``fleiss()`` with SE on sparse tables (1e-5: irrCAC rounds to 5 digits). Fleiss (1971)'s
    worked example gives 0.430.

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 1, 2, 2, 2, 3, 3, 3], ["a", "b", "c"] * 3,
    ...                                 ["y", "y", "y", "y", "n", "n", "n", "n", "n"])
    >>> round(fleiss_kappa(t, n_resamples=0).estimate, 6)
    0.55
    """
    return _one("fleiss_kappa", table, raters=raters, weights=weights, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


@_doc
def conger_kappa(table: AnnotationTable, *, raters: Sequence[str] | None = None, weights: Any = None,
                 confidence_level: float = 0.95, n_resamples: int = 2000,
                 rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
                 abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Conger's kappa: Cohen's kappa generalised to several raters (Conger 1980).

    ``pa`` as Fleiss; ``pe`` averages the Cohen-type chance agreements of every rater pair,
    each rater with its own marginals: ``pe = sum_kl w_kl (pbar_k pbar_l - s_kl / r)`` with
    ``s_kl`` the between-rater covariance of the marginals (Gwet 2014). With two raters on
    complete data it equals :func:`cohen_kappa`.

    Parameters
    ----------
    table : AnnotationTable
    weights : str or array, optional
    {common}

    Returns
    -------
    AgreementResult
        ``analytic_se``: Gwet's linearisation (as irrCAC's ``conger()``).

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 2, 2, 3, 3, 4, 4], ["a", "b"] * 4,
    ...                                 ["y", "y", "y", "n", "n", "n", "n", "n"])
    >>> round(conger_kappa(t, n_resamples=0).estimate, 6)
    0.5
    """
    return _one("conger_kappa", table, raters=raters, weights=weights, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


@_doc
def krippendorff_alpha(table: AnnotationTable, *, level: str | None = None,
                       raters: Sequence[str] | None = None, confidence_level: float = 0.95,
                       n_resamples: int = 2000, rng: int | np.random.Generator | None = None,
                       on_undefined: str = "warn", abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Krippendorff's alpha for any number of raters and any missingness.

    ``alpha = 1 - D_o / D_e`` with ``D_o`` the mean squared distance within items (pairable
    items only, each weighted by ``1 / (n_i - 1)``) and ``D_e`` the mean over all pairs of
    pairable values (Krippendorff 2011).

    Parameters
    ----------
    table : AnnotationTable
    level : {"nominal", "ordinal", "interval", "ratio"}, optional
        Metric; default the table's scale level (nominal under ``abstain_policy="category"``).
        Interval uses sums of values and squares (no value-by-value matrix: a million distinct
        floats cost the same as five categories); ordinal is the interval formula on
        Krippendorff's mid-rank values; ratio uses ``((a-b)/(a+b))^2``: a distance matrix on up to
        2,000 distinct values, beyond that an O(values) quadrature of
        ``1/(x+y)^2 = int s exp(-s(x+y)) ds`` (no matrix; agrees with the matrix to about 1e-14).
    {common}

    Returns
    -------
    AgreementResult
        ``observed`` and ``expected`` are ``D_o`` and ``D_e``; ``analytic_se`` is Gwet's
        linearisation for nominal, interval and ratio (none for ordinal, whose metric depends
        on the marginals).

    Notes
    -----
    Reproduces Krippendorff (2011)'s reliability-data example (nominal 0.743, interval 0.849)
    and matches the ``krippendorff`` package (all levels) to 1e-9. Under
    ``abstain_policy="disagree"`` an abstention is at the maximal distance from every value,
    another abstention included.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> res = krippendorff_alpha(t, raters=t.humans, n_resamples=0)
    >>> res.level, res.n_items, round(res.estimate, 3)
    ('interval', 1056, -0.055)
    """
    return _one("krippendorff_alpha", table, raters=raters, level=level, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


@_doc
def gwet_ac1(table: AnnotationTable, *, raters: Sequence[str] | None = None,
             confidence_level: float = 0.95, n_resamples: int = 2000,
             rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
             abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Gwet's AC1: chance agreement ``pe = sum_k pi_k (1 - pi_k) / (q - 1)`` (Gwet 2008).

    Does not collapse under extreme prevalence as kappa does (its denominator is at least
    ``1/2`` for two categories); it answers a different question and is not "more correct".

    Parameters
    ----------
    table : AnnotationTable
    {common}

    Returns
    -------
    AgreementResult
        ``analytic_se``: Gwet's linearisation (as irrCAC's ``gwet()``).

    Notes
    -----
    ``q`` is the number of categories of the scale (declared or observed), plus one for the
    abstention class under ``category``/``disagree`` when the scale declares abstention values.

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 1, 2, 2, 2, 3, 3, 3], ["a", "b", "c"] * 3,
    ...                                 ["y", "y", "y", "y", "n", "n", "n", "n", "n"])
    >>> round(gwet_ac1(t, n_resamples=0).estimate, 6)
    0.560976
    """
    return _one("gwet_ac1", table, raters=raters, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


@_doc
def gwet_ac2(table: AnnotationTable, *, weights: Any = "quadratic", raters: Sequence[str] | None = None,
             confidence_level: float = 0.95, n_resamples: int = 2000,
             rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
             abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Gwet's AC2: weighted AC1, ``pe = T_w / (q (q - 1)) sum_k pi_k (1 - pi_k)`` (Gwet 2014).

    Parameters
    ----------
    table : AnnotationTable
    weights : {"quadratic", "linear", "ordinal", "radical", "ratio", "circular", "bipolar", "identity"} or array
        Agreement weights (Gwet's definitions, on category values); ``T_w`` is their sum.
    {common}

    Returns
    -------
    AgreementResult
        ``analytic_se``: Gwet's linearisation (as irrCAC's ``gwet()`` with weights).

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 2, 2, 3, 3], ["a", "b"] * 3, [1, 2, 2, 2, 3, 3],
    ...                                 scale="ordinal")
    >>> round(gwet_ac2(t, n_resamples=0).estimate, 6)
    0.785714
    """
    return _one("gwet_ac2", table, raters=raters, weights=weights, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


@_doc
def bennett_s(table: AnnotationTable, *, raters: Sequence[str] | None = None, weights: Any = None,
              confidence_level: float = 0.95, n_resamples: int = 2000,
              rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
              abstain_policy: str = "exclude", method: str = "auto") -> AgreementResult:
    """Bennett, Alpert & Goldstein's S (Brennan-Prediger): chance agreement ``1/q``.

    ``S = (pa - T_w/q^2) / (1 - T_w/q^2)`` (``T_w = q`` unweighted). Depends on how many
    categories the scale declares, used or not.

    Parameters
    ----------
    table : AnnotationTable
    weights : str or array, optional
    {common}

    Returns
    -------
    AgreementResult
        ``analytic_se``: Gwet's (as irrCAC's ``bp()``).

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 2, 2, 3, 3], ["a", "b"] * 3, ["y", "y", "y", "n", "n", "n"])
    >>> round(bennett_s(t, n_resamples=0).estimate, 6)
    0.333333
    """
    return _one("bennett_s", table, raters=raters, weights=weights, confidence_level=confidence_level,
                n_resamples=n_resamples, rng=rng, on_undefined=on_undefined, abstain_policy=abstain_policy, method=method)


def default_coefficients(table: AnnotationTable, raters: Sequence[str] | None = None) -> tuple[str, ...]:
    """The coefficients :func:`agreement` reports by default for this table and selection."""
    k = len(raters) if raters is not None else table.n_raters
    return _default_names(table.scale, table.n_categories, k)


def _default_names(scale: Any, n_categories: int, k: int) -> tuple[str, ...]:
    """:func:`default_coefficients` from the scale, its number of categories and of raters."""
    if scale.level in ("interval", "ratio") and n_categories > 20:
        # continuous scores: exact-match agreement and category-based chance terms mean little
        return ("krippendorff_alpha",)
    if n_categories > 2000:
        # free-text labels (thousands of categories): only the coefficients that need no weight matrix
        return ("observed_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
    base = ["observed_agreement"]
    if k == 2:
        base += ["cohen_kappa"]
    base += ["fleiss_kappa", "krippendorff_alpha", "gwet_ac1"]
    if scale.level != "nominal" and scale.is_numeric and n_categories <= 2000:
        base += ["gwet_ac2"]
    return tuple(base)


def agreement(table: AnnotationTable, *, coefficients: Sequence[str] | None = None,
              raters: Sequence[str] | None = None, level: str | None = None, weights: Any = None,
              confidence_level: float = 0.95, n_resamples: int = 2000,
              rng: int | np.random.Generator | None = None, on_undefined: str = "warn",
              abstain_policy: str = "exclude", label: str = "", method: str = "auto") -> AgreementTable:
    """Several coefficients on one selection of raters, sharing one bootstrap.

    Parameters
    ----------
    table : AnnotationTable
    coefficients : sequence of str, optional
        Names from ``voirdire.agreement.COEFFICIENTS``; default: observed agreement, Cohen's
        kappa (two raters only), Fleiss' kappa, Krippendorff's alpha, Gwet's AC1, and AC2 on
        ordered numeric scales; on interval/ratio scales with more than 20 distinct values
        (continuous scores), Krippendorff's alpha only.
    raters : sequence of str, optional
        Restrict to these raters (e.g. ``table.humans``, or the humans plus one judge).
    level : str, optional
        Krippendorff's metric (default: the scale's level).
    weights : str or array, optional
        Weights for the weighted coefficients (AC2 defaults to quadratic).
    confidence_level, n_resamples, rng, on_undefined, abstain_policy, method
        As in :func:`krippendorff_alpha` (``method="auto"`` chooses per coefficient).
    label : str
        A name for the selection (shown by the CLI and the report).

    Returns
    -------
    AgreementTable
        One :class:`AgreementResult` per coefficient; ``.to_frame()`` has one row each. Every
        coefficient is computed on the same bootstrap resamples.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence", scale="ordinal")
    >>> tab = agreement(t, raters=t.humans, n_resamples=0)
    >>> [r.coefficient for r in tab]
    ['observed_agreement', 'fleiss_kappa', 'krippendorff_alpha', 'gwet_ac1', 'gwet_ac2']
    >>> round(tab["krippendorff_alpha"].estimate, 3)  # ordinal metric
    -0.054
    """
    func = "agreement"
    opts = _check_common(func, confidence_level, n_resamples, on_undefined, abstain_policy, rng, method)
    names = tuple(coefficients) if coefficients is not None else default_coefficients(table, raters)
    if isinstance(coefficients, str):
        names = (coefficients,)
    if not names:
        raise InvalidParameterError("The 'coefficients' parameter of agreement must name at least one coefficient.")
    for n in names:
        if n not in COEFFICIENTS:
            raise InvalidParameterError(
                f"The 'coefficients' parameter of agreement must hold names from {list(COEFFICIENTS)}. Got {n!r}.")
    prep = prepare(table, raters=raters, policy=abstain_policy, func=func)
    specs = [_make_spec(n, prep, level=level, weights=weights if n in _WEIGHTED else None) for n in names]
    return AgreementTable(results=tuple(_core.run(specs, prep, opts, func=func)), raters=prep.raters, label=label)
