"""``compare_raters``: the humans among themselves, then the humans with each judge (private).
The one function behind ``voirdire agree`` and the report's agreement section."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from .. import _options
from .._checks import check_choice, check_positive_int, check_probability
from .._results import Result
from .._scores import NOMINAL_MATRIX_COEFFICIENT
from ..exceptions import InvalidParameterError
from ._seeds import check_seed, stream
from ._validate import DEFAULT_N_RESAMPLES

__all__ = ["compare_raters", "compare_raters_stream", "RaterComparison", "rater_groups"]

ProgressCallback = Callable[[str, int, int], None]
JUDGE_ITEMS = _options.JUDGE_ONLY_ITEMS  # the one registry of option values


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RaterComparison(Result):
    """The composite result of :func:`compare_raters`.

    Attributes
    ----------
    source : str
    options : dict
        Every option as used, with ``seed`` and ``n_resamples``.
    groups : tuple of AgreementTable
        The humans among themselves (label ``"humans"``), then the humans with each judge
        (label ``"+ <judge>"``), each with every coefficient asked for.
    group_kinds : tuple of str
        ``"human"`` or ``"judge"`` per group (``"all"`` for a table without judges).
    n_judge_only_items : tuple of int
        Per group: items only the judge labelled, left out of the group (0 for the humans' group,
        and for every group with ``judge_only_items="keep"``).
    binary : tuple of BinaryAgreementResult
        The binary family per judge (binary labels, or a ``positive`` category given).
    matrix : PairwiseMatrixResult or None
        The rater-by-rater matrix (Cohen's kappa, or ``matrix_coefficient``), when asked for.
    notes : tuple of str
    confusion : tuple of BinaryAgreementResult
        With ``confusion=True`` on a scale of three or more categories: each judge's L x L confusion matrix
        against the human majority (one-vs-rest numbers on the last category; only the matrix is for reading).
    """

    source: str
    options: dict[str, Any]
    groups: tuple[Any, ...]
    group_kinds: tuple[str, ...]
    n_judge_only_items: tuple[int, ...]
    binary: tuple[Any, ...]
    matrix: Any
    notes: tuple[str, ...]
    confusion: tuple[Any, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        from .._results import to_jsonable

        groups = []
        for g, kind, n in zip(self.groups, self.group_kinds, self.n_judge_only_items):
            d = g.to_dict()
            d["group"] = kind
            d["n_judge_only_items"] = n
            groups.append(d)
        return {"source": self.source, "options": to_jsonable(self.options), "groups": groups,
                "binary": [b.to_dict() for b in self.binary],
                "matrix": None if self.matrix is None else self.matrix.to_dict(), "notes": list(self.notes)}

    def to_frame(self) -> Any:
        """Every coefficient of every group, one row each."""
        import pandas as pd

        frames = [g.to_frame() for g in self.groups]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def rater_groups(table: Any, judges: Sequence[str] | None = None) -> list[tuple[str, tuple[str, ...], str]]:
    """(label, raters, kind): the humans among themselves, then the humans plus each judge."""
    humans = tuple(str(h) for h in table.humans)
    js = [str(j) for j in judges] if judges else [str(j) for j in table.judges]
    if not js:
        return [("all raters", tuple(str(r) for r in table.raters), "all")]
    groups: list[tuple[str, tuple[str, ...], str]] = []
    if len(humans) >= 2:
        groups.append(("humans", humans, "human"))
    if humans:
        for j in js:
            groups.append((f"+ {j}", humans + (j,), "judge"))
    return groups


def _isolated_judges(table: Any, raters: Sequence[str], abstain_policy: str) -> list[str]:
    """Judges among ``raters`` that share no labelled item with any other rater of the selection."""
    cols = [table.rater_index(r) for r in raters]
    judge_cols = [(str(r), c) for r, c in zip(raters, cols) if table.roles[c] == "judge"]
    if not judge_cols:
        return []
    # labels per item among the selection (a rater labels an item once): a judge's item is shared
    # when the item holds a second label
    ok = np.isin(table.rater_idx, cols)
    if abstain_policy == "exclude":
        ok &= ~table.is_abstention
    item = table.label_item
    n_sel = np.bincount(item[ok], minlength=table.n_items)
    out = []
    for r, c in judge_cols:
        if len(cols) < 2 or not (n_sel[item[ok & (table.rater_idx == c)]] >= 2).any():
            out.append(r)
    return out


def _undefined(res: Any) -> Any:
    """The same AgreementTable with every estimate, interval and standard error set to nan."""
    from .._results import ConfidenceInterval

    nan = float("nan")
    rows = tuple(dataclasses.replace(
        r, estimate=nan, se=nan, analytic_se=None if r.analytic_se is None else nan, observed=nan, expected=nan,
        ci=ConfidenceInterval(low=nan, high=nan, confidence_level=r.ci.confidence_level, method=r.ci.method))
        for r in res.results)
    return dataclasses.replace(res, results=rows)


def _human_items(table: Any, humans: Sequence[str], abstain_policy: str) -> np.ndarray:
    """Boolean per item: at least one of ``humans`` labelled it (an abstention counts unless excluded)."""
    hidx = [table.rater_index(h) for h in humans]
    keep = np.isin(table.rater_idx, hidx)
    if abstain_policy == "exclude":
        keep &= ~table.is_abstention
    return np.bincount(table.label_item[keep], minlength=table.n_items) > 0


def compare_raters(
    table: Any,
    judges: Sequence[str] | None = None,
    *,
    coefficients: Sequence[str] | None = None,
    level: str | None = None,
    weights: str | None = None,
    abstain_policy: str = "exclude",
    positive: Any = None,
    matrix: bool = False,
    matrix_coefficient: str = NOMINAL_MATRIX_COEFFICIENT,
    confusion: bool = False,
    judge_only_items: Literal["drop", "keep"] = "drop",
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    progress: ProgressCallback | None = None,
) -> RaterComparison:
    """Agreement of the humans among themselves, then of the humans with each judge.

    Every group gets the same coefficients with bootstrap intervals
    (:func:`voirdire.agreement.agreement`); every group is resampled with the same stream (derived
    from ``seed`` through :class:`numpy.random.SeedSequence`), so two groups on the same items
    see the same resamples and their difference is not resampling noise. ``voirdire agree`` and the
    report's agreement section both call this function.

    A judge that shares no item with the humans gets nan throughout (its row would only repeat the
    humans' own figures) and a note. Items that only the judge labelled are left out of the
    "humans + judge" groups by default: they hold no comparison, but they would enter the chance
    term of the Fleiss/Conger/Gwet-type coefficients (a judge that scored 1,200 summaries next to
    experts on 200 moves Fleiss' kappa from 0.04 to -0.66); ``judge_only_items="keep"`` restores
    the old behaviour.

    Parameters
    ----------
    table : AnnotationTable
    judges : sequence of str, optional
        Default: every judge in the table (none: one group of every rater).
    coefficients, level, weights, abstain_policy
        As in :func:`voirdire.agreement.agreement`.
    positive : optional
        Positive category of the binary family (computed for binary labels, or when given).
    matrix : bool, default False
        Also the rater-by-rater matrix of ``matrix_coefficient`` (default Cohen's kappa; the report asks
        for Krippendorff's alpha on ordered scales), on each pair's shared items.
    confusion : bool, default False
        Also each judge's confusion matrix against the human majority on scales of 3 to any number of
        categories (the binary family gives it on two), each on its own named stream.
    judge_only_items : {"drop", "keep"}, default "drop"
    confidence_level : float, default 0.95
    n_resamples : int, default 2000
    seed : int, default 0
    progress : callable, optional

    Returns
    -------
    RaterComparison

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> from voirdire.workflows import compare_raters
    >>> t = load_hanna(criterion="Complexity").select(items=range(100))
    >>> res = compare_raters(t, ["ChatGPT"], coefficients=["krippendorff_alpha"], n_resamples=50)
    >>> [g.label for g in res.groups]
    ['humans', '+ ChatGPT']
    """
    from ..agreement import COEFFICIENTS, agreement, binary_agreement, pairwise_matrix

    func = "compare_raters"
    for c in coefficients or []:
        if c not in COEFFICIENTS:
            raise InvalidParameterError(f"The 'coefficients' parameter of {func} must name coefficients among "
                                        f"{list(COEFFICIENTS)}. Got {c!r}.")
    judge_only_items = check_choice(judge_only_items, "judge_only_items", func, JUDGE_ITEMS)  # type: ignore[assignment]
    confidence_level = check_probability(confidence_level, "confidence_level", func)
    n_resamples = check_positive_int(n_resamples, "n_resamples", func, minimum=0)
    seed = check_seed(seed, func)
    js = [str(j) for j in dict.fromkeys(judges)] if judges else None
    if js:
        for j in js:
            table.rater_index(j)
        if any(str(table.roles[table.rater_index(j)]) != "judge" for j in js):
            table = table.with_roles(judges=sorted(set(js) | {str(j) for j in table.judges}))
    groups = rater_groups(table, js)
    options: dict[str, Any] = dict(coefficients=None if coefficients is None else list(coefficients), level=level,
                                   weights=weights, abstain_policy=abstain_policy, positive=positive,
                                   judge_only_items=judge_only_items, confidence_level=confidence_level,
                                   n_resamples=n_resamples, seed=seed)
    out, kinds, n_only, notes = [], [], [], []
    humans = [str(h) for h in table.humans]
    # the items a human labelled: needed only to drop judge-only items from the judges' groups
    human_items = (_human_items(table, humans, abstain_policy)
                   if humans and judge_only_items == "drop" and any(kind == "judge" for _, _, kind in groups) else None)
    for k, (label, raters, kind) in enumerate(groups):
        if progress is not None:
            progress(label, k, len(groups))
        sub, dropped = table, 0
        if kind == "judge" and judge_only_items == "drop" and human_items is not None:
            jmask = _human_items(table, [raters[-1]], abstain_policy)
            dropped = int(np.count_nonzero(jmask & ~human_items))
            if dropped:
                sub = table.select(items=human_items)
                notes.append(f"{label}: {dropped} item(s) only the judge labelled are left out (no human to compare "
                             "with; they would only shift the chance term). judge_only_items='keep' keeps them.")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = agreement(sub, coefficients=coefficients, raters=list(raters), level=level, weights=weights,
                            confidence_level=confidence_level, n_resamples=n_resamples,
                            rng=stream(seed, "agreement", "groups"), abstain_policy=abstain_policy, label=label)
        alone = _isolated_judges(table, raters, abstain_policy) if len(raters) >= 2 else []
        if alone:
            res = _undefined(res)
            who = ", ".join(alone)
            notes.append(f"{label}: {who} share{'s' if len(alone) == 1 else ''} no item with the humans, so "
                         f"this row is undefined (nan); it would only repeat the humans' own figures.")
        else:
            for w in caught:
                msg = f"{label}: {w.message}"
                if msg not in notes:
                    notes.append(msg)
        out.append(res)
        kinds.append(kind)
        n_only.append(dropped)
    binary: list[Any] = []
    bjudges = js or [str(j) for j in table.judges]
    if bjudges and humans and (table.n_categories == 2 or positive is not None):
        for j in bjudges:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                binary.append(binary_agreement(table, j, reference="majority", positive=positive,
                                               confidence_level=confidence_level, n_resamples=n_resamples,
                                               rng=stream(seed, "agreement", "binary", j),
                                               abstain_policy=abstain_policy))
            notes += [f"{j}: {w.message}" for w in caught]
    mat = None
    if matrix:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shown = humans + [j for j in bjudges if j not in humans]
            mat = pairwise_matrix(table, coefficient=matrix_coefficient, raters=shown or None, weights=weights,
                                  abstain_policy=abstain_policy)
        notes += [str(w.message) for w in caught]
    conf: list[Any] = []
    if confusion and bjudges and humans and table.n_categories > 2:
        for j in bjudges:  # one-vs-rest on the last category; the L x L matrix is what is read
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                conf.append(binary_agreement(table, j, positive=table.scale.categories[-1], on_undefined="nan",
                                             confidence_level=confidence_level, n_resamples=n_resamples,
                                             rng=stream(seed, "agreement", "binary", j),
                                             abstain_policy=abstain_policy))
    if progress is not None:
        progress("done", len(groups), len(groups))
    return RaterComparison(source=str(table.source), options=options, groups=tuple(out), group_kinds=tuple(kinds),
                           n_judge_only_items=tuple(n_only), binary=tuple(binary), matrix=mat, notes=tuple(notes),
                           confusion=tuple(conf))


def compare_raters_stream(
    path: Any,
    judges: Sequence[str] | None = None,
    *,
    reader: dict[str, Any] | None = None,
    coefficients: Sequence[str] | None = None,
    level: str | None = None,
    weights: str | None = None,
    abstain_policy: str = "exclude",
    judge_only_items: Literal["drop", "keep"] = "drop",
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    batch_rows: int = 1 << 21,
    scheduler: Any = None,
) -> tuple[RaterComparison, Any]:
    """:func:`compare_raters` of a Parquet/CSV file read in batches (``voirdire agree --stream``).

    The same groups (the humans, then the humans with each judge), the same seeds and the same
    numbers as :func:`compare_raters` on the whole table, for the coefficients that stream
    (:data:`voirdire.agreement.STREAMABLE`), all groups in one pass over the file; only
    per-item statistics are held. Not streamed: the binary family and the Cohen's kappa matrix
    (they need the labels themselves); the file's items must be grouped (see
    :func:`voirdire.agreement.agreement_stream`).

    Parameters
    ----------
    path : path-like
    judges : sequence of str, optional
        The LLM judges (every other rater is human). Without judges, one group of every rater.
    reader : dict, optional
        ``scale``, ``categories``, ``abstain``, ``item``, ``rater``, ``label``, ``duplicates``,
        ``missing`` as for :func:`voirdire.data.read_annotations`.
    coefficients, level, weights, abstain_policy, judge_only_items, confidence_level, n_resamples, seed
        As for :func:`compare_raters`.
    batch_rows : int
        Rows per batch read.
    scheduler : str or dask.distributed.Client, optional
        Compute the statistics of the file's row groups on a Dask cluster (Parquet).

    Returns
    -------
    (RaterComparison, TableSummary)
    """
    from ..agreement import AgreementTable
    from ..agreement import StreamGroup, stream_groups

    func = "compare_raters_stream"
    judge_only_items = check_choice(judge_only_items, "judge_only_items", func, JUDGE_ITEMS)  # type: ignore[assignment]
    confidence_level = check_probability(confidence_level, "confidence_level", func)
    n_resamples = check_positive_int(n_resamples, "n_resamples", func, minimum=0)
    seed = check_seed(seed, func)
    js = [str(j) for j in dict.fromkeys(judges)] if judges else []
    found: list[tuple[str, tuple[str, ...], str]] = []

    def groups_of(raters: tuple[str, ...]) -> list[StreamGroup]:
        view = _Roles(raters=raters, humans=tuple(r for r in raters if r not in js), judges=tuple(js))
        found.extend(rater_groups(view, js))
        return [StreamGroup(raters=None if kind == "all" else rs,
                      drop_judge_only=kind == "judge" and judge_only_items == "drop") for _, rs, kind in found]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kept per group in info["warnings"]
        res, info = stream_groups(
            path, groups=groups_of, judges=js, coefficients=coefficients, level=level, weights=weights,
            abstain_policy=abstain_policy, batch_rows=batch_rows, confidence_level=confidence_level,
            n_resamples=n_resamples, rng=stream(seed, "agreement", "groups"), scheduler=scheduler, **(reader or {}))
    options: dict[str, Any] = dict(coefficients=list(info["coefficients"]), level=level, weights=weights,
                                   abstain_policy=abstain_policy, positive=None, judge_only_items=judge_only_items,
                                   confidence_level=confidence_level, n_resamples=n_resamples, seed=seed, stream=True)
    out, kinds, notes = [], [], []
    for (label, raters, kind), results, shares, ws, n in zip(found, res, info["shares"], info["warnings"],
                                                             info["n_judge_only_items"]):
        if n:
            notes.append(f"{label}: {n} item(s) only the judge labelled are left out (no human to compare with; "
                         "they would only shift the chance term). judge_only_items='keep' keeps them.")
        tab = AgreementTable(results=results, raters=results[0].raters if results else (), label=label)
        if kind == "judge" and not shares:
            tab = _undefined(tab)
            notes.append(f"{label}: {raters[-1]} shares no item with the humans, so this row is undefined (nan); "
                         f"it would only repeat the humans' own figures.")
        else:
            notes += [m for m in (f"{label}: {w}" for w in ws) if m not in notes]
        out.append(tab)
        kinds.append(kind)
    s = info["summary"]
    if js and s.scale.n_categories == 2:
        notes.append("The binary family (each judge against the human majority) is not computed when streaming; "
                     "read the file whole for it.")
    comp = RaterComparison(source=str(path), options=options, groups=tuple(out), group_kinds=tuple(kinds),
                           n_judge_only_items=tuple(info["n_judge_only_items"]), binary=(), matrix=None,
                           notes=tuple(notes))
    return comp, s


@dataclasses.dataclass(frozen=True)
class _Roles:
    """The raters of a streamed file by role (what :func:`rater_groups` reads of a table)."""

    raters: tuple[str, ...]
    humans: tuple[str, ...]
    judges: tuple[str, ...]
