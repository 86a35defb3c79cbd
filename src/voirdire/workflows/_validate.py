"""``validate_judges``: leave-one-human-out, alt-test, reference and ranking for every judge, with
verdicts (private). The one function behind ``voirdire validate`` and the report's validation section."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from .. import _options
from .._checks import check_choice, check_positive_int, check_probability
from .._results import Result
from .._stats._poisson import _blas_single
from .._stats.parallel import two_cores
from ..exceptions import InvalidParameterError, VoirdireError
from ._advice import advise
from ._seeds import check_seed, stream
from ._verdict import (
    Reason, ReferenceReliability, Verdict, apply_reference, combine, make_verdict, method_outcome, reference_sentence,
    reference_status,
)

__all__ = ["validate_judges", "ValidationResult", "JudgeValidation", "DEFAULT_N_RESAMPLES", "default_score",
           "default_scoring", "ranking_tiers", "order_text", "tier_ranks", "top_tier_note", "check_table_fits",
           "method_margins", "judges_to_validate", "validated_table"]

#: The number of bootstrap resamples of every workflow (and of every command's ``--n-resamples``).
from .._defaults import DEFAULT_N_RESAMPLES  # noqa: E402 - one default for the CLI and the API

METHODS = _options.VALIDATION_METHODS  # the one registry of option values
from .._scores import REFERENCE_COEFFICIENT, SCORES  # noqa: E402 - the one registry of score names
RANK_BY = _options.RANK_BY

ProgressCallback = Callable[[str, int, int], None]


def default_score(table: Any) -> str:
    """Leave-one-out score: Krippendorff's alpha at the scale's level on interval/ratio scores (where
    exact matches are rare and say little), observed agreement otherwise (the spec's default)."""
    return "alpha" if table.scale.level in ("interval", "ratio") else "agreement"


def default_scoring(table: Any) -> str:
    """Alt-test scoring: neg_rmse for numeric ordinal/interval/ratio labels (the authors' choice), else accuracy."""
    if table.scale.level in ("ordinal", "interval", "ratio") and table.scale.is_numeric:
        return "neg_rmse"
    return "accuracy"


def method_margins(method: str, epsilon: float | None, alt_test_epsilon: float | None) -> tuple[float, float]:
    """The leave-one-out tolerance and the alt-test margin of ``method`` from a user's one or two margins.

    ``epsilon`` is the leave-one-out tolerance when that rule runs (``loo``, ``both``), else the alt-test
    margin; ``alt_test_epsilon`` is the alt-test margin. ``None``: the default, 0.05 and 0.2.
    """
    run_loo = method in ("loo", "both")
    loo = 0.05 if epsilon is None or not run_loo else epsilon
    if alt_test_epsilon is not None:
        return loo, alt_test_epsilon
    return loo, epsilon if epsilon is not None and not run_loo else 0.2


def judges_to_validate(table: Any, judges: Sequence[str] | None) -> list[str]:
    """The judges named (each once, in order: ``-j X -j X`` is one judge), else every judge ``table`` marks.

    Raises
    ------
    InvalidParameterError
        When none is named and the table marks no rater as a judge.
    """
    from ..exceptions import InvalidParameterError

    names = list(dict.fromkeys(judges)) if judges else list(table.judges)
    if not names:
        raise InvalidParameterError(f"{table.source} marks no rater as a judge. Name the judge with --judge NAME.")
    return names


def validated_table(table: Any, res: Any) -> Any:
    """``table`` less the raters ``res`` (:func:`validate_judges`) left out: the table its numbers are about."""
    if not res.excluded_raters:
        return table
    return table.select(raters=[str(r) for r in table.raters if str(r) not in res.excluded_raters])


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JudgeValidation(Result):
    """Everything :func:`validate_judges` found for one judge.

    ``leave_one_out`` / ``alt_test`` are the tests' results (``None`` when not run or when they
    could not run; ``errors`` then says why), ``verdicts`` the per-method verdicts and ``verdict``
    the combined one. ``plan`` is the planner's answer (:class:`voirdire.design.JudgePlan`: the running
    anytime-valid leave-one-out rule, shown beside the verdict) when the combined verdict is inconclusive
    for a reason labels might change (``None`` otherwise);
    ``advice`` (:class:`voirdire.workflows.Advice`) what to do next, for every judge: settled, not a
    matter of labels, a checked next batch, or "cannot be settled with the N items you have". Every
    view of the judge (``plan``, ``watch``, ``study status``, the report) shows this verdict and advice.
    """

    judge: str
    leave_one_out: Any
    alt_test: Any
    errors: dict[str, str]
    verdicts: tuple[Verdict, ...]
    verdict: Verdict
    sensitivity: Any = None
    plan: Any = None
    advice: Any = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"judge": self.judge}
        if self.leave_one_out is not None:
            d["leave_one_out"] = self.leave_one_out.to_dict()
        if self.alt_test is not None:
            d["alt_test"] = self.alt_test.to_dict()
        d["errors"] = dict(self.errors)
        d["verdicts"] = [v.to_dict() for v in self.verdicts]
        d["verdict"] = self.verdict.to_dict()
        x = self.sensitivity
        d["sensitivity"] = None if x is None else {
            "excluded": list(x.excluded), "wins_against_excluded": x.wins_against_excluded,
            "omega_others": x.omega_others, "decision_others": x.decision_others,
            "omega_without": None if x.without is None else x.without.omega,
            "decision_without": None if x.without is None else x.without.decision,
            "won_mainly_against_excluded": x.won_mainly_against_excluded, "sentence": x.sentence}
        d["plan"] = None if self.plan is None else self.plan.to_dict()
        d["advice"] = None if self.advice is None else self.advice.to_dict()
        return d


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ValidationResult(Result):
    """The composite result of :func:`validate_judges`.

    Attributes
    ----------
    source : str
        The table's source.
    options : dict
        Every option as used (defaults resolved), including ``seed`` and ``n_resamples``.
    reference : ReferenceReliability or None
        The humans' own agreement (``None`` with fewer than two humans).
    judges : tuple of JudgeValidation
        One per judge, in the order asked.
    ranking : RankingResult or None
        With two or more judges and resamples.
    notes : tuple of str
        Warnings the analyses raised, and why something was left out.
    """

    source: str
    options: dict[str, Any]
    reference: ReferenceReliability | None
    judges: tuple[JudgeValidation, ...]
    ranking: Any
    notes: tuple[str, ...]
    excluded_raters: tuple[str, ...] = ()
    annotators: Any = None

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Combined verdict per judge."""
        return {j.judge: j.verdict for j in self.judges}

    def judge(self, name: str) -> JudgeValidation:
        """The entry of one judge."""
        for j in self.judges:
            if j.judge == name:
                return j
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        from .._results import to_jsonable

        return {"source": self.source, "options": to_jsonable(self.options),
                "reference": None if self.reference is None else self.reference.to_dict(),
                "judges": [j.to_dict() for j in self.judges],
                "ranking": None if self.ranking is None else self.ranking.to_dict(),
                "notes": list(self.notes), "excluded_raters": list(self.excluded_raters),
                "flagged_raters": [] if self.annotators is None else list(self.annotators.flagged_raters),
                "annotator_rule": None if self.annotators is None else self.annotators.rule}

    def to_frame(self) -> Any:
        """One row per judge: the combined verdict, its reason codes, and each test's decision."""
        import pandas as pd

        rows = []
        for j in self.judges:
            rows.append({"judge": j.judge, "verdict": j.verdict.decision, "reasons": ",".join(j.verdict.codes),
                         "leave_one_out": None if j.leave_one_out is None else j.leave_one_out.decision,
                         "alt_test": None if j.alt_test is None else j.alt_test.decision,
                         "sentence": j.verdict.sentence})
        return pd.DataFrame(rows)

    def methods_frame(self) -> Any:
        """One row per (judge, method, human): each test's own frame with ``method`` and the judge's combined
        ``verdict`` (``voirdire validate --format csv``); :meth:`to_frame` when no test ran."""
        import pandas as pd

        frames = [r.to_frame().assign(method=key, verdict=e.verdict.decision) for e in self.judges
                  for key, r in (("leave_one_out", e.leave_one_out), ("alt_test", e.alt_test)) if r is not None]
        return pd.concat(frames, ignore_index=True) if frames else self.to_frame()


_sink = threading.local()   # the list that collects the warnings of the call running on this thread
_capture_lock = threading.Lock()
_capture_depth = 0             # open _capturing() contexts (only the calling thread of validate_judges opens one)
_orphans: list[warnings.WarningMessage] = []   # warnings of threads without a sink, re-issued after


def _record(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    """``warnings.showwarning`` while :func:`_capturing` is open: into the calling thread's sink."""
    log = getattr(_sink, "log", None)
    (_orphans if log is None else log).append(warnings.WarningMessage(message, category, filename, lineno, file, line))


@contextlib.contextmanager
def _capturing() -> Iterator[None]:
    """Every warning raised while open goes to the sink of the thread that raised it (:func:`_caught`),
    so that analyses on two threads keep their own notes; a warning raised outside any sink (not
    inside :func:`_run`) is issued again when the context closes, in the order raised, to whatever
    filters the caller has. ``warnings.catch_warnings`` alone is process-wide: a second thread's
    warnings would land in the first thread's notes."""
    global _capture_depth
    with _capture_lock:
        _capture_depth += 1
        outer = _capture_depth == 1
    if not outer:  # already open (a nested call on the thread that opened it)
        try:
            yield
        finally:
            with _capture_lock:
                _capture_depth -= 1
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = _record
            yield
    finally:
        with _capture_lock:
            _capture_depth -= 1
        left = list(_orphans)
        _orphans.clear()
        for w in left:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _caught(func: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, list[warnings.WarningMessage]]:
    """``func(*args, **kwargs)`` and the warnings it raised on this thread (inside :func:`_capturing`)."""
    with _capturing():
        prev = getattr(_sink, "log", None)
        log: list[warnings.WarningMessage] = []
        _sink.log = log
        try:
            out = func(*args, **kwargs)
        finally:
            _sink.log = prev
    return out, log


def _add_notes(notes: list[str], caught: Sequence[Any]) -> None:
    """Warning messages (or texts) appended to ``notes``, each once."""
    for w in caught:
        msg = w if isinstance(w, str) else str(w.message)
        if msg not in notes:
            notes.append(msg)


def _run(func: Callable[..., Any], notes: list[str], *args: Any, **kwargs: Any) -> Any:
    """Call an analysis, turning its warnings into notes."""
    out, caught = _caught(func, *args, **kwargs)
    _add_notes(notes, caught)
    return out


class _Later:
    """The result of ``func()`` computed on a second thread (``pool`` given) or at once."""

    def __init__(self, pool: ThreadPoolExecutor | None, func: Callable[[], Any]) -> None:
        self._fut = None if pool is None else pool.submit(func)
        self._val = func() if pool is None else None

    def result(self) -> Any:
        return self._val if self._fut is None else self._fut.result()


#: from this many labels, the humans' reference and the annotator check run on a second thread
#: beside the judges' tests (NumPy releases the GIL in its loops); below, one after the other
SIDE_THREAD_LABELS = 400_000


def _check_threshold(value: Any, name: str, func: str) -> float:
    """A float in (0, 1]."""
    return check_probability(value, name, func, open_high=False)


def validate_judges(
    table: Any,
    judges: Sequence[str] | None = None,
    *,
    method: Literal["loo", "alt-test", "both"] = "both",
    score: str | None = None,
    scoring: str | None = None,
    epsilon: float = 0.05,
    alt_test_epsilon: float = 0.2,
    threshold: float = 0.5,
    min_items: int = 10,
    correction: str = "by",
    test: str = "t",
    q: float = 0.05,
    min_items_per_human: int = 30,
    min_humans_per_item: int = 2,
    rank_by: str | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    stability_threshold: float = 0.8,
    reference_floor: float = 0.4,
    exclude_raters: Sequence[str] | None = None,
    check_raters: bool = True,
    rater_competence: bool = False,
    progress: ProgressCallback | None = None,
) -> ValidationResult:
    """May each judge stand in for the humans? Both tests, the reference, a ranking and a verdict.

    For every judge: the leave-one-human-out rule (:func:`voirdire.validation.leave_one_out`) and
    the Alternative Annotator Test (:func:`voirdire.validation.alt_test`), each turned into a
    three-way :class:`Verdict` with reasons, and a combined verdict; the humans' own agreement as
    the reference (Krippendorff's alpha at the table's level, with its interval); with several
    judges, :func:`voirdire.validation.rank_judges`. ``voirdire validate`` and the report's
    validation section both call this function, so the same table, options and seed give the same
    numbers everywhere.

    Every random stream derives from ``seed`` through :class:`numpy.random.SeedSequence`, named by
    what it serves (``("validation", "alt_test", judge)``...), so a judge's numbers do not depend
    on which other judges are validated with it.

    Parameters
    ----------
    table : AnnotationTable
    judges : sequence of str, optional
        Default: every judge of the table.
    method : {"loo", "alt-test", "both"}, default "both"
    score : {"agreement", "alpha", "kappa", "ac1"}, optional
        Leave-one-out score (default: alpha on interval/ratio scales, else observed agreement).
    scoring : {"accuracy", "neg_rmse"}, optional
        Alt-test scoring (default: neg_rmse for numeric ordinal/interval/ratio labels, else accuracy).
    epsilon : float, default 0.05
        Leave-one-out tolerance.
    alt_test_epsilon : float, default 0.2
        Alt-test margin (0.2 expert, 0.15 skilled, 0.1 crowd annotators).
    threshold, min_items : leave-one-out options (see :func:`~voirdire.validation.leave_one_out`).
    correction, test, q, min_items_per_human, min_humans_per_item : alt-test options.
    rank_by : {"rho", "omega", "mean_d", "score"}, optional
        Ranking statistic (default rho when the alt-test runs, else mean_d).
    confidence_level : float, default 0.95
    n_resamples : int, default 2000
        Bootstrap resamples for every interval and stability (0: none; then no decision is stable
        enough to accept, and no ranking).
    seed : int, default 0
    stability_threshold : float in (0, 1], default 0.8
        A decision less stable than this is inconclusive.
    reference_floor : float in [0, 1), default 0.4
        Below this humans' alpha an accept becomes inconclusive (``docs/validation.md`` justifies
        the default); an interval reaching 0 always makes the verdict inconclusive.
    exclude_raters : sequence of str, optional
        Humans left out of everything (the user's decision; recorded in ``excluded_raters`` and
        in a note, never silent).
    check_raters : bool, default True
        With the leave-one-out rule and three or more humans, flag outlier annotators
        (:func:`voirdire.diagnostics.rater_diagnostics`, same score) and, when any is flagged, show
        each judge's leave-one-out decision again without them
        (:func:`~voirdire.diagnostics.loo_sensitivity`, in ``JudgeValidation.sensitivity``); an
        acceptance that does not survive carries the non-blocking reason
        ``won_mainly_against_flagged_annotators``. The decision itself is unchanged.
    rater_competence : bool, default False
        Also fit Dawid-Skene and MACE in that annotator check (``annotators.ds_accuracy`` and
        ``mace_competence``); the report asks for them, so that its "Annotators" section reads
        this one check instead of running its own.
    progress : callable, optional
        ``progress(step, done, total)``.

    Returns
    -------
    ValidationResult

    Raises
    ------
    InvalidParameterError
        Bad options (checked before any work), an unknown judge, fewer than two humans.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> from voirdire.workflows import validate_judges
    >>> t = load_hanna(criterion="Coherence").select(items=range(200))
    >>> res = validate_judges(t, ["ChatGPT"], n_resamples=50)
    >>> res.reference.status, res.verdicts["ChatGPT"].decision
    ('unreliable', 'inconclusive')
    """
    from ..validation import alt_test, check_memory, check_test_options, leave_one_out, rank_judges

    func = "validate_judges"
    method = check_choice(method, "method", func, METHODS)  # type: ignore[assignment]
    if score is not None:
        check_choice(score, "score", func, SCORES)
    if rank_by is not None:
        check_choice(rank_by, "rank_by", func, RANK_BY)
    confidence_level = check_probability(confidence_level, "confidence_level", func)
    n_resamples = check_positive_int(n_resamples, "n_resamples", func, minimum=0)
    seed = check_seed(seed, func)
    stability_threshold = _check_threshold(stability_threshold, "stability_threshold", func)
    if isinstance(reference_floor, bool) or not isinstance(reference_floor, (int, float)) \
            or not 0 <= float(reference_floor) < 1:
        raise InvalidParameterError(
            f"The 'reference_floor' parameter of {func} must be a float in [0, 1). Got {reference_floor!r} instead.")
    reference_floor = float(reference_floor)
    names = [str(j) for j in (dict.fromkeys(judges) if judges else table.judges)]
    if not names:
        raise InvalidParameterError(f"{table.source} marks no rater as a judge. Name the judge(s) to validate.")
    for j in names:
        if j not in table.raters:
            raise InvalidParameterError(f"Judge {j!r} is not a rater of {table.source}; raters are "
                                        f"{[str(r) for r in table.raters][:20]}.")
    if any(str(table.roles[table.rater_index(j)]) != "judge" for j in names):
        table = table.with_roles(judges=sorted(set(names) | {str(j) for j in table.judges}))
    excluded: tuple[str, ...] = ()
    if exclude_raters:
        excluded = tuple(dict.fromkeys(str(h) for h in exclude_raters))
        for h in excluded:
            if h not in table.humans:
                raise InvalidParameterError(f"Cannot exclude {h!r}: it is not a human in {table.source}. Humans: "
                                            f"{[str(x) for x in table.humans][:12]}.")
        table = table.select(raters=[str(r) for r in table.raters if str(r) not in excluded])
    humans = [str(h) for h in table.humans]
    if len(humans) < 2:
        raise InvalidParameterError(f"Validating a judge needs at least two humans; {table.source} has {len(humans)}.")
    run_loo = method in ("loo", "both")
    run_alt = method in ("alt-test", "both")
    score = score or default_score(table)
    scoring = scoring or default_scoring(table)
    check_test_options(table, epsilon=epsilon if run_loo else None, threshold=threshold, min_items=min_items,
                       alt_test_epsilon=alt_test_epsilon if run_alt else None, q=q, scoring=scoring,
                       correction=correction, test=test, min_items_per_human=min_items_per_human,
                       min_humans_per_item=min_humans_per_item)
    check_memory(table, score if run_loo else None)
    by = rank_by or ("rho" if run_alt else "mean_d")
    options: dict[str, Any] = dict(
        method=method, score=score if run_loo else None, scoring=scoring if run_alt else None,
        epsilon=float(epsilon) if run_loo else None, alt_test_epsilon=float(alt_test_epsilon) if run_alt else None,
        threshold=float(threshold), min_items=int(min_items), correction=correction, test=test, q=float(q),
        min_items_per_human=int(min_items_per_human), min_humans_per_item=int(min_humans_per_item),
        rank_by=by, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed,
        stability_threshold=stability_threshold, reference_floor=reference_floor)

    total = len(names) + 2
    notes: list[str] = []
    if excluded:
        notes.append(f"Excluded by the user: {', '.join(excluded)}; every number here is without "
                     f"{'them' if len(excluded) > 1 else 'this annotator'}.")
    check_annotators = check_raters and run_loo and len(humans) >= 3
    side = int(table.n_labels) >= SIDE_THREAD_LABELS and two_cores()
    # BLAS on the calling thread(s) only, whatever the machine: a product's last bits then do not
    # depend on how many cores BLAS found, nor on the other thread (the analyses set this process-wide
    # limit around their own products; two threads setting and restoring it could leave it either way)
    with _capturing(), _blas_single(), (ThreadPoolExecutor(max_workers=1) if side else contextlib.nullcontext()) as pool:
        # the humans' reference and the annotator check do not depend on the judges' tests: on large
        # tables they run on a second thread beside them; every note keeps its place either way
        if progress is not None:
            progress("reference", 0, total)
        ref_notes: list[str] = []
        later_ref = _Later(pool, lambda: human_reference(
            table, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed, floor=reference_floor,
            notes=ref_notes))
        later_ann = _Later(pool, lambda: _diagnose_annotators(
            table, score=score, min_items=min_items, n_resamples=n_resamples, seed=seed,
            competence=bool(rater_competence))) if check_annotators else None
        ref_at = len(notes)
        reference: ReferenceReliability | None = None
        entries: list[JudgeValidation] = []
        for i, name in enumerate(names):
            if progress is not None:
                progress(name, i + 1, total)
            loo = alt = None
            errors: dict[str, str] = {}
            if run_loo:
                try:
                    loo = _run(leave_one_out, notes, table, name, score=score, epsilon=epsilon, threshold=threshold,
                               min_items=min_items, confidence_level=confidence_level, n_resamples=n_resamples,
                               rng=stream(seed, "validation", "leave_one_out", name))
                except VoirdireError as exc:
                    errors["leave_one_out"] = str(exc)
            if run_alt:
                try:
                    alt = _run(alt_test, notes, table, name, scoring=scoring, epsilon=alt_test_epsilon, q=q,
                               correction=correction, test=test, min_humans_per_item=min_humans_per_item,
                               min_items_per_human=min_items_per_human, n_resamples=n_resamples,
                               rng=stream(seed, "validation", "alt_test", name))
                except VoirdireError as exc:
                    errors["alt_test"] = str(exc)
            if reference is None:
                reference = later_ref.result()
                _insert_notes(notes, ref_at, ref_notes)
            entries.append(_judge_entry(table, name, loo, alt, errors, run_loo, run_alt, reference, options, notes))
        if reference is None:  # no judge (not reached: names is never empty)
            reference = later_ref.result()
            _insert_notes(notes, ref_at, ref_notes)
        ranking = None
        if progress is not None:
            progress("ranking", len(names) + 1, total)
        if len(names) >= 2 and n_resamples == 0:
            notes.append("No ranking: ranking several judges needs bootstrap resamples (n_resamples > 0).")
        elif len(names) >= 2:
            try:
                ranked: list[str] = []
                ranking = _run(rank_judges, ranked, table, names, by=by, score=score, scoring=scoring,
                               epsilon=epsilon, min_items=min_items, min_humans_per_item=min_humans_per_item,
                               min_items_per_human=min_items_per_human, confidence_level=confidence_level,
                               n_resamples=n_resamples, rng=stream(seed, "validation", "ranking"))
                # its "top two by the statistic cannot be told apart" note, said in the one order (P(best) tiers)
                top = top_tier_note(ranking)
                _add_notes(notes, [n for n in ranked if not n.startswith("The top two judges by ")]
                           + ([top] if top else []))
            except VoirdireError as exc:
                notes.append(f"No ranking: {exc}")
        if progress is not None:
            progress("done", total, total)
        annotators = None
        if later_ann is not None:
            d, skipped, caught = later_ann.result()
            if skipped is not None:
                notes.append(skipped)
            for w in caught:  # not notes: what the annotator check warns reaches the caller, as before
                _orphans.append(w)
            if d is not None:
                annotators, entries = d, _attach_sensitivity(table, entries, d, seed=seed)
    return ValidationResult(source=str(table.source), options=options, reference=reference, judges=tuple(entries),
                            ranking=ranking, notes=tuple(notes), excluded_raters=excluded, annotators=annotators)


def _insert_notes(notes: list[str], at: int, early: list[str]) -> None:
    """``early`` (each once) into ``notes`` at position ``at``, the notes after it kept after them: the
    order (and the de-duplication) of running the analysis behind ``early`` first."""
    later = notes[at:]
    del notes[at:]
    _add_notes(notes, early)
    _add_notes(notes, later)


def _diagnose_annotators(table: Any, *, score: str, min_items: int, n_resamples: int, seed: int,
                         competence: bool = False) -> tuple[Any, str | None, list[warnings.WarningMessage]]:
    """The annotator check's outlier diagnostics (:func:`voirdire.diagnostics.rater_diagnostics`):
    ``(result or None, the note saying why it was skipped or None, the warnings it raised)``."""
    from ._raters import check_raters  # the annotator check of voirdire raters and the report, same stream

    try:
        d, caught = _caught(check_raters, table, score=score, min_items=min_items, competence=competence,
                            n_resamples=max(n_resamples, 2000), seed=seed)
    except VoirdireError as exc:
        return None, f"Annotator check skipped: {exc}", []
    return d, None, caught


def _attach_sensitivity(table: Any, entries: list[JudgeValidation], d: Any, *, seed: int) -> list[JudgeValidation]:
    """Each judge's leave-one-out sensitivity to the flagged annotators, attached to its entry (entries
    unchanged when none is flagged)."""
    from ..diagnostics import WON_AGAINST_FLAGGED
    from ._raters import rater_sensitivity

    if not d.flagged.any():
        return entries
    out = []
    for e in entries:
        if e.leave_one_out is None:
            out.append(e)
            continue
        s = rater_sensitivity(table, e.judge, d, loo=e.leave_one_out, seed=seed)
        if s.won_mainly_against_excluded:
            r = Reason(code=WON_AGAINST_FLAGGED, method="leave_one_out", blocking=False, message=s.sentence)
            verdicts = tuple(dataclasses.replace(v, reasons=v.reasons + (r,)) if v.method == "leave_one_out" else v
                             for v in e.verdicts)
            verdict = dataclasses.replace(e.verdict, reasons=e.verdict.reasons + (r,))
            e = dataclasses.replace(e, verdicts=verdicts, verdict=verdict)
        out.append(dataclasses.replace(e, sensitivity=s))
    return out


def human_reference(table: Any, *, confidence_level: float, n_resamples: int, seed: int, floor: float,
                    notes: list[str]) -> ReferenceReliability:
    """Krippendorff's alpha over the humans at the table's level, with its interval and status.

    Its stream is the one :func:`voirdire.workflows.compare_raters` gives the humans' row (``("agreement",
    "groups")``, one bootstrap for every coefficient), so ``agree``, ``validate`` and the report show the
    same interval for the humans' alpha at one seed and resamples."""
    from ..agreement import krippendorff_alpha

    res = _run(krippendorff_alpha, notes, table, raters=list(table.humans), confidence_level=confidence_level,
               n_resamples=n_resamples, rng=stream(seed, "agreement", "groups"), on_undefined="nan")
    est, low, high = float(res.estimate), float(res.ci.low), float(res.ci.high)
    if n_resamples == 0 and (not math.isfinite(low)):
        low = high = float("nan")
    status = reference_status(est, low, floor)
    return ReferenceReliability(coefficient=REFERENCE_COEFFICIENT, level=str(res.level), estimate=est, ci=res.ci,
                                n_items=int(res.n_items), n_humans=len(table.humans), floor=floor, status=status,
                                sentence=reference_sentence(status, est, low, high, str(res.level), floor,
                                                            None if n_resamples == 0 else str(res.ci.method)))


def _judge_entry(table: Any, name: str, loo: Any, alt: Any, errors: dict[str, str], run_loo: bool, run_alt: bool,
                 reference: ReferenceReliability, options: dict[str, Any], notes: list[str]) -> JudgeValidation:
    thr = options["stability_threshold"]
    outcomes: dict[str, Any] = {}
    verdicts: list[Verdict] = []
    for method, res, ran in (("leave_one_out", loo, run_loo), ("alt_test", alt, run_alt)):
        if not ran:
            continue
        out, reasons = method_outcome(method, res, errors.get(method), stability_threshold=thr)
        outcomes[method] = (out, reasons, res)
        fo, fr = apply_reference(out, list(reasons), reference)
        verdicts.append(make_verdict(name, method, None if res is None else res.decision, fo, fr))
    combined = combine(name, outcomes, reference)
    # the running anytime-valid rule, for a verdict labels might settle (0.1-0.3 s a judge: not for a settled one)
    plan = _plan(table, name, options, notes) if loo is not None and combined.decision == "inconclusive" and not any(
        r.blocking and r.method == "reference" for r in combined.reasons) else None
    alt_more = None
    if combined.decision == "inconclusive" and run_alt and any(
            r.blocking and r.method == "alt_test" for r in combined.reasons) and not any(
            r.blocking and r.method == "reference" for r in combined.reasons):
        alt_more = _alt_more(table, name, options)
    advice = advise(table, name, combined, plan=plan, alt_more=alt_more,
                    min_items_per_human=options["min_items_per_human"], epsilon=options["epsilon"],
                    alt_test_epsilon=options["alt_test_epsilon"], seed=options["seed"])
    if combined.decision == "inconclusive":
        value = advice.more_comparisons if advice.status in ("label_more", "needs_new_items") else None
        combined = combine(name, outcomes, reference, f"What would settle it: {advice.sentence}.", value)
    return JudgeValidation(judge=name, leave_one_out=loo, alt_test=alt, errors=errors, verdicts=tuple(verdicts),
                           verdict=combined, plan=plan, advice=advice)


def _plan(table: Any, judge: str, options: dict[str, Any], notes: list[str]) -> Any:
    """The one planner's answer (:func:`voirdire.design.plan_judges`, the anytime-valid leave-one-out
    rule): the same call as ``voirdire plan`` (same table, epsilon and seed); ``None`` when it cannot run."""
    from ..design import plan_judges

    try:
        return _run(plan_judges, notes, table, [judge], epsilon=options["epsilon"], rng=options["seed"]).plans[0]
    except VoirdireError as exc:
        _add_notes(notes, [f"{judge}: the planner could not say what would settle it ({exc})."])
        return None


def _alt_more(table: Any, judge: str, options: dict[str, Any]) -> float | None:
    """The anytime-valid alt-test's expected further comparisons per open human (one look at every label)."""
    import numpy as np

    from ..validation import validate_sequential

    try:
        seq = validate_sequential(table, judge, rounds=np.zeros(table.n_labels), method="alt-test",
                                  epsilon=options["alt_test_epsilon"], q=options["q"], scoring=options["scoring"],
                                  rng=options["seed"], confidence_sequences=False)
    except VoirdireError:
        return None
    return float(seq.more_items[-1]) if len(seq.more_items) else None


def ranking_tiers(ranking: Any) -> tuple[tuple[str, ...], ...]:
    """The one order of judges every view shows: by P(best) from the validation ranking (best first), with
    judges that cannot be told apart in one tier.

    Judges with equal P(best) (often several at 0) are ordered by their mean probability of ranking above the
    others. A judge starts a new tier when the one before it ranks above it in at least ``confidence_level`` of the
    bootstrap resamples (``p_order``); otherwise it joins that judge's tier. A tier of several judges has
    no rank: they "cannot be told apart". Accepts a :class:`~voirdire.validation.RankingResult` or its
    ``to_dict()``.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(judges=("a", "b", "c"), p_best=np.array([0.2, 0.5, 0.3]), confidence_level=0.95,
    ...                     p_order=np.array([[0, 0.4, 0.45], [0.6, 0, 0.99], [0.55, 0.01, 0]]))
    >>> ranking_tiers(r)
    (('b',), ('c', 'a'))
    """
    import numpy as np

    get = (lambda k: ranking[k]) if isinstance(ranking, dict) else (lambda k: getattr(ranking, k))
    names = [str(j) for j in get("judges")]
    pb = np.asarray([np.nan if x is None else x for x in get("p_best")], dtype=float)
    po = np.asarray([[np.nan if x is None else x for x in row] for row in get("p_order")], dtype=float)
    cl = float(get("confidence_level"))
    # P(best) first; among judges it cannot separate (often several at 0), the mean probability of ranking
    # above the others
    above = np.nanmean(np.where(np.eye(len(names), dtype=bool), np.nan, po), axis=1) if len(names) > 1 \
        else np.zeros(len(names))
    order = sorted(range(len(names)), key=lambda k: (-(pb[k] if np.isfinite(pb[k]) else -1.0),
                                                     -(above[k] if np.isfinite(above[k]) else -1.0), k))
    tiers: list[list[int]] = []
    for k in order:
        if tiers and not (po[tiers[-1][-1], k] >= cl):
            tiers[-1].append(k)
        else:
            tiers.append([k])
    return tuple(tuple(names[k] for k in t) for t in tiers)


def order_text(tiers: Sequence[Sequence[str]]) -> str:
    """``"A > B ~ C (cannot be told apart)"``: the tiers of :func:`ranking_tiers` in one line."""
    return " > ".join(t[0] if len(t) == 1 else " ~ ".join(t) + " (cannot be told apart)" for t in tiers)


def tier_ranks(tiers: Sequence[Sequence[str]]) -> dict[str, str]:
    """Each judge's rank in the one order, best first: its tier's position (``"1"``, ``"2"``...) when it is alone
    in its tier, ``"tie"`` (no rank) when it cannot be told apart from the judges beside it.

    >>> tier_ranks((("b",), ("c", "a")))
    {'b': '1', 'c': 'tie', 'a': 'tie'}
    """
    return {j: (str(k + 1) if len(t) == 1 else "tie") for k, t in enumerate(tiers) for j in t}


def top_tier_note(ranking: Any) -> str | None:
    """The sentence for judges that share the top tier of :func:`ranking_tiers` (None when one judge leads):
    the note of ``validate``, ``plan`` and the report, naming them in the one order."""
    tiers = ranking_tiers(ranking)
    if not tiers or len(tiers[0]) < 2:
        return None
    get = (lambda k: ranking[k]) if isinstance(ranking, dict) else (lambda k: getattr(ranking, k))
    return (f"The top judges, {' ~ '.join(tiers[0])}, cannot be told apart: none of them ranks above the next in "
            f"at least {100 * float(get('confidence_level')):g}% of the {get('n_resamples')} resamples. More "
            "overlapping human labels would be needed to separate them.")


def check_table_fits(table: Any) -> None:
    """Refuse a table too large for memory before any analysis allocates (the line ``validate`` prints), for a
    caller that runs several families on it (the report)."""
    from ..validation import check_memory

    check_memory(table, default_score(table) if len(table.humans) >= 2 and len(table.judges) else None)
