"""Building a report (private): run every analysis the data and the installed package allow, keep
each result's ``to_dict()``, and turn the numbers into tables and figures."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import logging
import os
import platform
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._checks import check_confidence_level, check_positive_int, check_probability
from .._defaults import REPORT_MIN_N_RESAMPLES
from .._results import to_jsonable
from ..exceptions import InvalidParameterError, VoirdireError
from ._format import fmt_int, fmt_num, fmt_p, fmt_pct
from ._model import Cell, ChecklistItem, Figure, Report, Section, Table, Text

__all__ = ["build_report", "ProgressCallback", "SECTION_KEYS"]

logger = logging.getLogger("voirdire.report")

#: ``progress(step, done, total)``: called before each step (``done`` steps finished so far) and
#: once at the end with ``done == total``.
ProgressCallback = Callable[[str, int, int], None]


class NotAvailable(Exception):
    """Raised by a section builder when the data do not allow it."""


def lookup(doc: Any, path: str) -> Any:
    """The value at a ``/``-separated path (JSON-pointer style, list indices as integers)."""
    cur = doc
    for part in [p for p in path.split("/") if p != ""]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            cur = cur[int(part)]
        else:
            cur = cur[part]
    return cur


def _escape_pointer(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


@dataclasses.dataclass
class Context:
    """Everything a section builder may read."""

    table: Any
    judges: tuple[str, ...]
    humans: tuple[str, ...]
    pairwise: Any
    inclusion_prob: Any
    seed: int
    confidence_level: float
    n_resamples: int
    epsilon: float
    alt_test_epsilon: float = 0.2
    stability_threshold: float = 0.8
    reference_floor: float = 0.4
    pairwise_covariates: Any = None
    pairwise_choice: bool = True
    pairwise_choice_folds: int = 5
    estimated_by_group: bool = False
    unsampled: str = "error"
    cache: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def cl_pct(self) -> str:
        return f"{100 * self.confidence_level:g}%"


class Writer:
    """Collects one section's results (as JSON-safe dicts), blocks and warnings."""

    def __init__(self, key: str, title: str, tick: Callable[[str], None] | None = None) -> None:
        self.key = key
        self.title = title
        self._tick = tick
        self.results: dict[str, Any] = {}
        self.blocks: list[Any] = []
        self.warnings: list[str] = []
        self._n_fig = 0

    def tick(self, label: str = "") -> None:
        """Report progress: the next sub-step of this section starts (``label`` names it)."""
        if self._tick is not None:
            self._tick(label)

    # ---- results
    def put(self, name: str, obj: Any) -> Any:
        """Store ``obj`` (a result, or plain data) as JSON-safe data under ``name``; return it."""
        self.results[name] = to_jsonable(obj)
        return self.results[name]

    def call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run an analysis, recording (not raising) the warnings it emits."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = func(*args, **kwargs)
        name = getattr(func, "__name__", "analysis")
        for w in caught:
            text = str(w.message)
            msg = text if text.startswith(name) else f"{name}: {text}"
            if msg not in self.warnings:
                self.warnings.append(msg)
        return out

    # ---- cells
    def pointer(self, path: str) -> str:
        return f"/sections/{_escape_pointer(self.key)}/results/{path.strip('/')}"

    def num(self, path: str, digits: int = 3) -> Cell:
        """A cell showing the number stored at ``path`` in this section's results."""
        v = lookup(self.results, path)
        return Cell(text=fmt_num(v, digits), pointer=self.pointer(path), numeric=True)

    def int_(self, path: str) -> Cell:
        v = lookup(self.results, path)
        return Cell(text=fmt_int(v), pointer=self.pointer(path), numeric=True)

    def ref(self, section: Section, path: str, digits: int = 3, kind: str = "num") -> Cell:
        """A cell showing a number stored in another (already built) section's results."""
        v = lookup(section.results, path)
        pointer = f"/sections/{_escape_pointer(section.key)}/results/{path.strip('/')}"
        if kind == "int":
            return Cell(text=fmt_int(v), pointer=pointer, numeric=True)
        return Cell(text=fmt_num(v, digits), pointer=pointer, numeric=True)

    def pct(self, path: str, digits: int = 1) -> Cell:
        v = lookup(self.results, path)
        return Cell(text=fmt_pct(v, digits), numeric=True)

    def p(self, path: str) -> Cell:
        v = lookup(self.results, path)
        return Cell(text=fmt_p(v), numeric=True)

    def ci(self, low_path: str, high_path: str, digits: int = 3) -> Cell:
        lo, hi = lookup(self.results, low_path), lookup(self.results, high_path)
        from ._format import fmt_ci

        return Cell(text=fmt_ci(lo, hi, digits), numeric=True)

    # ---- blocks
    def text(self, text: str, kind: str = "p") -> None:
        self.blocks.append(Text(text=text, kind=kind))  # type: ignore[arg-type]

    def heading(self, text: str, badge: str | None = None) -> None:
        self.blocks.append(Text(text=text, kind="h3", badge=badge))

    def table(self, key: str, caption: str, columns: Sequence[str], rows: Sequence[Sequence[Cell | str]]) -> None:
        cells = tuple(tuple(c if isinstance(c, Cell) else Cell(text=str(c)) for c in row) for row in rows)
        self.blocks.append(Table(key=f"{self.key}-{key}", caption=caption, columns=tuple(columns), rows=cells))

    def figure(self, key: str, title: str, svg: str, caption: str = "") -> None:
        self.blocks.append(Figure(key=f"{self.key}-{key}", title=title, svg=svg, caption=caption))

    def section(self) -> Section:
        return Section(key=self.key, title=self.title, status="ok", results=self.results,
                       blocks=tuple(self.blocks), warnings=tuple(self.warnings))


def _sha256(path: Path) -> tuple[str, str]:
    h = hashlib.sha256()
    if path.is_dir():
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(str(f.relative_to(path)).encode() + b"\0")
            with open(f, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        return h.hexdigest(), "directory (relative paths and contents, sorted)"
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest(), "file"


def _input_meta(path: str | os.PathLike[str] | None, fallback: str, fingerprint: Callable[[], str]) -> dict[str, Any]:
    p = Path(path) if path is not None else (Path(fallback) if fallback and Path(fallback).exists() else None)
    if p is not None and p.exists():
        digest, kind = _sha256(p)
        return {"path": str(p), "name": p.name, "sha256": digest, "sha256_of": kind}
    return {"path": None, "name": fallback, "sha256": fingerprint(), "sha256_of": "table content (no input file)"}


def build_report(
    table: Any,
    *,
    judges: Sequence[str] | None = None,
    pairwise: Any = None,
    pairwise_covariates: Any = None,
    inclusion_prob: float | Sequence[float] | np.ndarray | None = None,
    seed: int = 0,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    epsilon: float = 0.05,
    alt_test_epsilon: float = 0.2,
    stability_threshold: float = 0.8,
    reference_floor: float = 0.4,
    input_path: str | os.PathLike[str] | None = None,
    pairwise_path: str | os.PathLike[str] | None = None,
    title: str | None = None,
    progress: ProgressCallback | None = None,
    unsampled: str = "error",
    grouped: Any = None,
    pairwise_choice: bool = True,
    pairwise_choice_folds: int = 5,
    grouped_estimate: Any = None,
) -> Report:
    """Run every analysis the data allow and collect the results, tables and figures of a report.

    Each section is produced only where the data allow it and the analysis exists in this
    installation; otherwise it is kept as ``status="not available"`` with the reason (listed at the
    end of the page and in the JSON's ``not_available``). An analysis that raises a voirdire error
    gives ``status="error"`` with its message instead of stopping the report. Warnings the
    analyses emit (e.g. :class:`~voirdire.exceptions.DegenerateDataWarning`) are recorded in the
    section, not raised.

    Parameters
    ----------
    table : AnnotationTable or None
        The annotations (humans and judges). ``None`` with ``pairwise``: a pairwise-only report
        (the Pairwise and Judge biases sections).
    judges : sequence of str, optional
        The LLM judges to analyse. Default: the raters the table already marks as judges. Naming
        judges the table already marks restricts the report to them (the others stay judges, out of
        the human pool); naming a rater the table calls human makes it a judge and every other
        rater human.
    pairwise : PairwiseTable, optional
        Pairwise preference data for the Pairwise and Judge biases sections.
    pairwise_covariates : DataFrame, optional
        One row per pair with ``model_a, model_b`` and/or ``len_a, len_b``
        (:func:`voirdire.pairwise.pair_covariates`): the Judge biases section then adds the length
        and self-preference effects to the position ones.
    inclusion_prob : float or array of float, optional
        The known probability with which each item was sent to the humans (one number for all
        items, or one per item in table order). When given, the Estimation section compares the
        doubly-robust, human-only and PPI intervals for the mean human score.
    unsampled : {"error", "omit"}
        What ``nan`` in ``inclusion_prob`` on an item humans labelled means: ``"error"`` (default)
        refuses it; ``"omit"`` takes the item as outside the probability sample, so the
        Estimation section leaves its human labels out (and says how many); the other sections
        use every label. ``voirdire study report`` uses ``"omit"`` on the recorded draws.
    grouped : GroupedTables, optional
        The file split by ``--by`` columns (:func:`voirdire.data.read_annotation_groups`; ``table`` is its
        pool): a "By group" section (:func:`voirdire.workflows.validate_judges_by`, same options) follows the
        pool's sections.
    grouped_estimate : FileEstimate, optional
        With ``grouped``: :func:`voirdire.workflows.estimate_from_file`'s result on it (``voirdire estimate --by``),
        shown as a "By group: mean human score" section (one estimate per group and the pooled one).
    pairwise_choice, pairwise_choice_folds : bool, int, default True, 5
        The held-out choice of the pairwise forecaster and its folds of humans, as
        :func:`voirdire.workflows.summarise_pairwise` (``voirdire pairwise --choice/--no-choice --choice-folds``).
    seed : int
        Seed of every resampling step (default 0); the same seed gives the same numbers.
    confidence_level : float
        Level of every interval (default 0.95).
    n_resamples : int
        Bootstrap resamples for the intervals and the decision stability (default 2000, the
        workflows' :data:`~voirdire.workflows.DEFAULT_N_RESAMPLES`).
    epsilon : float
        Tolerance of the leave-one-human-out rule (default 0.05; see :func:`voirdire.validation.leave_one_out`).
    alt_test_epsilon : float
        Cost-benefit margin of the alternative annotator test (default 0.2, the authors' value for
        expert annotators; 0.15 skilled, 0.1 crowd; see :func:`voirdire.validation.alt_test`).
    stability_threshold, reference_floor : float
        Verdict rules of :func:`voirdire.workflows.validate_judges` (defaults 0.8 and 0.4).
    input_path, pairwise_path : path-like, optional
        The input files; their SHA-256 goes in the header. Default: ``table.source`` when it is a
        file, else the table's content fingerprint.
    title : str, optional
        Page title (default: "voirdire validation report: <input name>").
    progress : callable, optional
        ``progress(step, done, total)`` called before each step and once at the end.

    Returns
    -------
    Report

    Raises
    ------
    InvalidParameterError
        Bad options (checked before any analysis runs); a judge that is not in the table.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> from voirdire.report import build_report
    >>> t = load_hanna(criterion="Coherence").select(items=range(60))
    >>> rep = build_report(t, seed=1, n_resamples=50)
    >>> rep.summary["n_items"], rep.meta["seed"]
    (60, 1)
    """
    from .. import __version__
    from ._sections import SECTION_STEPS, SECTIONS, build_checklist, build_glance

    from ..data import AnnotationTable, PairwiseTable

    func = "build_report"
    if table is None and pairwise is not None:
        return _pairwise_only_report(pairwise, pairwise_covariates=pairwise_covariates, seed=seed,
                                     choice=(bool(pairwise_choice), int(pairwise_choice_folds)),
                                     confidence_level=confidence_level, pairwise_path=pairwise_path, title=title,
                                     progress=progress, options={"n_resamples": n_resamples, "epsilon": epsilon,
                                                                 "alt_test_epsilon": alt_test_epsilon})
    if not isinstance(table, AnnotationTable):
        hint = " Read the file first: table = voirdire.read_annotations(path, ...)." if isinstance(
            table, (str, os.PathLike)) else ""
        raise InvalidParameterError(
            f"The 'table' parameter of {func} must be an AnnotationTable. Got {type(table).__name__} instead.{hint}")
    if pairwise is not None and not isinstance(pairwise, PairwiseTable):
        hint = " Read the file first: voirdire.data.read_pairwise(path, ...)." if isinstance(
            pairwise, (str, os.PathLike)) else ""
        raise InvalidParameterError(
            f"The 'pairwise' parameter of {func} must be a PairwiseTable. Got {type(pairwise).__name__} instead.{hint}")
    confidence_level = check_confidence_level(confidence_level, func)
    n_resamples = check_positive_int(n_resamples, "n_resamples", func, minimum=REPORT_MIN_N_RESAMPLES)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidParameterError(
            f"The 'seed' parameter of {func} must be a non-negative integer. Got {seed!r} instead.")
    for name, eps in (("epsilon", epsilon), ("alt_test_epsilon", alt_test_epsilon)):
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 <= float(eps) < 1:
            raise InvalidParameterError(
                f"The '{name}' parameter of {func} must be a float in [0, 1). Got {eps!r} instead.")
    check_probability(stability_threshold, "stability_threshold", func, open_high=False)
    if isinstance(reference_floor, bool) or not isinstance(reference_floor, (int, float)) \
            or not 0 <= float(reference_floor) < 1:
        raise InvalidParameterError(
            f"The 'reference_floor' parameter of {func} must be a float in [0, 1). Got {reference_floor!r} instead.")
    analysed: tuple[str, ...] | None = None
    if judges is not None:
        judges = [str(j) for j in dict.fromkeys(judges)]
        for j in judges:
            table.rater_index(j)
        if all(str(table.roles[table.rater_index(j)]) == "judge" for j in judges):
            analysed = tuple(judges)  # the table's other judges stay judges (not humans), just not analysed
        else:
            table = table.with_roles(judges=judges)
    if unsampled not in ("error", "omit"):
        raise InvalidParameterError(f"The 'unsampled' parameter of {func} must be 'error' or 'omit'. Got {unsampled!r} "
                                    "instead.")
    if inclusion_prob is not None:
        inclusion_prob = _check_inclusion(inclusion_prob, table, func, unsampled=unsampled)

    # refuse a table too large for memory before any section allocates (the same line as `validate`)
    from ..workflows import check_table_fits

    check_table_fits(table)
    ctx = Context(table=table, judges=analysed or tuple(table.judges), humans=tuple(table.humans), pairwise=pairwise,
                  pairwise_covariates=pairwise_covariates, pairwise_choice=bool(pairwise_choice),
                  estimated_by_group=getattr(grouped_estimate, "grouped", None) is not None,
                  pairwise_choice_folds=int(pairwise_choice_folds),
                  inclusion_prob=inclusion_prob, seed=int(seed), confidence_level=confidence_level,
                  n_resamples=n_resamples, epsilon=float(epsilon), alt_test_epsilon=float(alt_test_epsilon),
                  stability_threshold=float(stability_threshold), reference_floor=float(reference_floor),
                  unsampled=unsampled)
    steps = [max(1, int(SECTION_STEPS.get(key, lambda c: 1)(ctx))) for key, _, _ in SECTIONS]
    total = sum(steps) + 1
    sections: list[Section] = []
    done = 0
    for (key, name, builder), n_steps in zip(SECTIONS, steps):
        sections.append(_run_section(key, name, builder, ctx, _Ticker(progress, name, done, n_steps, total)))
        done += n_steps
    if progress is not None:
        progress("Reporting checklist", done, total)
    checklist = build_checklist(ctx, sections)
    sections.insert(0, _run_section("glance", "At a glance", lambda c, w: build_glance(c, w, sections), ctx))
    if progress is not None:
        progress("done", total, total)

    inp = _input_meta(input_path, getattr(table, "source", ""), table.fingerprint)
    meta: dict[str, Any] = {
        "package": "voirdire",
        "version": __version__,
        "seed": int(seed),
        "confidence_level": confidence_level,
        "n_resamples": n_resamples,
        "epsilon": float(epsilon),
        "alt_test_epsilon": float(alt_test_epsilon),
        "stability_threshold": float(stability_threshold),
        "reference_floor": float(reference_floor),
        "judges": list(ctx.judges),
        "humans": list(ctx.humans),
        "input": inp,
        "pairwise_input": None,
        "inclusion_prob": _describe_inclusion(inclusion_prob),
        "generated_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "python": platform.python_version(),
    }
    if pairwise is not None:
        meta["pairwise_input"] = _input_meta(pairwise_path, str(getattr(pairwise, "source", "") or ""),
                                             lambda: _fingerprint_any(pairwise))
    summary = table.summary().to_dict()
    if grouped is not None:  # one verdict per (judge, group) after the pool's sections
        from ..workflows import validate_judges_by
        from ._groups import grouped_section

        sections.append(grouped_section(validate_judges_by(
            grouped, list(dict.fromkeys(judges)) if judges else None, seed=seed, confidence_level=confidence_level,
            n_resamples=n_resamples, epsilon=epsilon, alt_test_epsilon=alt_test_epsilon,
            stability_threshold=stability_threshold, reference_floor=reference_floor)))
    if grouped_estimate is not None and getattr(grouped_estimate, "grouped", None) is not None:
        from ._groups import grouped_estimate_section

        sections.append(grouped_estimate_section(grouped_estimate))
    return Report(title=title or f"voirdire validation report: {inp['name']}", meta=meta, summary=summary,
                  checklist=tuple(checklist), sections=tuple(sections))


def _pairwise_only_report(pairwise: Any, *, pairwise_covariates: Any, seed: Any, choice: tuple[bool, int],
                          confidence_level: float,
                          pairwise_path: str | os.PathLike[str] | None, title: str | None,
                          progress: ProgressCallback | None, options: dict[str, Any]) -> Report:
    """``build_report(None, pairwise=...)``: the pairwise sections only (no grading file).

    ``options`` (the graded analyses' n_resamples, epsilon, alt_test_epsilon) are recorded in the
    meta as given; no section of a pairwise-only report uses them."""
    from .. import __version__
    from ._sections import PAIRWISE_SECTIONS, SECTIONS

    from ..data import PairwiseTable

    func = "build_report"
    if not isinstance(pairwise, PairwiseTable):
        raise InvalidParameterError(
            f"The 'pairwise' parameter of {func} must be a PairwiseTable. Got {type(pairwise).__name__} instead.")
    confidence_level = check_confidence_level(confidence_level, func)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidParameterError(
            f"The 'seed' parameter of {func} must be a non-negative integer. Got {seed!r} instead.")
    ctx = Context(table=None, judges=tuple(pairwise.judges), humans=tuple(pairwise.humans), pairwise=pairwise,
                  pairwise_covariates=pairwise_covariates, inclusion_prob=None, seed=int(seed),
                  confidence_level=confidence_level, n_resamples=10, epsilon=0.0, pairwise_choice=choice[0],
                  pairwise_choice_folds=choice[1])
    total = len(PAIRWISE_SECTIONS) + 1
    built = {key: _run_section(key, name, builder, ctx, _Ticker(progress, name, k, 1, total))
             for k, (key, name, builder) in enumerate(PAIRWISE_SECTIONS)}
    why = "no annotation file: a pairwise-only report (give FILE for the graded analyses)."
    from ._sections import build_pairwise_glance

    sections = [_run_section("glance", "At a glance",
                             lambda c, w: build_pairwise_glance(c, w, list(built.values())), ctx)]
    sections += [built.get(key) or Section(key=key, title=name, status="not available", reason=why)
                 for key, name, _ in SECTIONS]
    if progress is not None:
        progress("done", total, total)
    inp = _input_meta(pairwise_path, str(getattr(pairwise, "source", "") or ""), lambda: _fingerprint_any(pairwise))
    meta: dict[str, Any] = {
        "package": "voirdire", "version": __version__, "seed": int(seed), "confidence_level": confidence_level,
        "n_resamples": int(options["n_resamples"]), "epsilon": float(options["epsilon"]),
        "alt_test_epsilon": float(options["alt_test_epsilon"]), "inclusion_prob": None,
        "judges": list(ctx.judges), "humans": list(ctx.humans), "input": inp, "pairwise_input": inp,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "python": platform.python_version(),
    }
    s = pairwise.summary()
    n_raters = s.n_humans + s.n_judges
    cells = np.unique(pairwise.label_pair.astype(np.int64) * max(n_raters, 1) + pairwise.rater_idx).size
    summary = {"n_items": s.n_pairs, "n_pairs": s.n_pairs, "n_raters": n_raters, "n_humans": s.n_humans,
               "n_judges": s.n_judges, "n_labels": s.n_labels, "n_abstentions": 0,
               "density": cells / max(1, s.n_pairs * n_raters),   # (pair, rater) cells with a verdict
               "scale": {"level": "nominal", "categories": ["A", "T", "B"], "abstain": []},
               "verdict_counts": dict(s.verdict_counts), "n_swapped_judge_pairs": s.n_swapped_judge_pairs}
    ok = {k for k, sec in built.items() if sec.status == "ok"}
    checklist = [
        ChecklistItem(item="Judgment scale", value="pairwise, 3 outcomes", detail="A better / tie / B better"),
        ChecklistItem(item="Tie handling", value="ties are a third outcome",
                      detail="Pairwise verdicts keep ties as a third outcome (A / tie / B)."),
        ChecklistItem(item="Abstention policy and coverage", value="no abstentions",
                      detail="pairwise verdicts have no abstention value; empty verdicts are an error or "
                             "dropped when the file is read"),
        ChecklistItem(item="Confusion matrix", value="shown" if "pairwise" in ok else "not shown",
                      detail="each human's posterior confusion matrix, in the Pairwise section",
                      section="pairwise" if "pairwise" in ok else None),
        ChecklistItem(item="Aggregation level", value="per pair (a judge asked in both orders counts once a pair "
                                                      "in the bias effects)"),
        ChecklistItem(item="Coefficients with intervals", value="judge biases with intervals" if "biases" in ok
                      else "-", detail=f"{100 * confidence_level:g}% normal intervals from per-pair scores; "
                                       "no agreement coefficients without the annotation file",
                      section="biases" if "biases" in ok else None),
        ChecklistItem(item="n items and n pairs", value=f"{fmt_int(s.n_pairs)} pairs", detail=""),
    ]
    return Report(title=title or f"voirdire pairwise report: {inp['name']}", meta=meta, summary=summary,
                  checklist=tuple(checklist), sections=tuple(sections))


def _fingerprint_any(obj: Any) -> str:
    """SHA-256 of a table's content (its long frame as CSV) when there is no input file."""
    to_frame = getattr(obj, "to_frame", None)
    text = to_frame().to_csv(index=False) if callable(to_frame) else repr(obj)
    return hashlib.sha256(text.encode()).hexdigest()


def _check_inclusion(value: Any, table: Any, func: str, *, unsampled: str = "error") -> Any:
    n_items = table.n_items
    if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool):
        v = float(value)
        if not 0 < v <= 1:
            hint = " Did you give a percentage?" if 1 < v <= 100 else ""
            raise InvalidParameterError(
                f"The 'inclusion_prob' parameter of {func} must be in (0, 1]. Got {value!r} instead.{hint}")
        return v
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The 'inclusion_prob' parameter of {func} must be a number or an array of numbers.") from None
    if arr.ndim != 1 or arr.shape[0] != n_items:
        raise InvalidParameterError(
            f"The 'inclusion_prob' parameter of {func} must be one number or one per item "
            f"({n_items}). Got an array of shape {arr.shape} instead.")
    # nan is allowed on items no human labelled: only the human-scored items' probabilities are used
    is_h = (table.roles[table.rater_idx] == "human") & ~table.is_abstention
    labelled = np.bincount(table.label_item[is_h], minlength=n_items) > 0
    bad = ~((arr > 0) & (arr <= 1)) & ~(np.isnan(arr) & (~labelled | (unsampled == "omit")))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(
            f"The 'inclusion_prob' parameter of {func} must hold probabilities in (0, 1] (nan only on items no "
            f"human labelled); item {str(table.items[i])!r} has {arr[i]!r}.")
    return arr


def _describe_inclusion(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, float):
        return {"kind": "constant", "value": v}
    return {"kind": "per item", "min": float(np.nanmin(v)), "max": float(np.nanmax(v)), "mean": float(np.nanmean(v)),
            "n_missing": int(np.count_nonzero(np.isnan(v)))}


class _Ticker:
    """Progress inside one section: ``n_steps`` ticks between ``start`` and ``start + n_steps``."""

    def __init__(self, progress: ProgressCallback | None, title: str, start: int, n_steps: int, total: int) -> None:
        self.progress, self.title, self.start, self.n_steps, self.total = progress, title, start, n_steps, total
        self.done = 0

    def __call__(self, label: str = "") -> None:
        if self.progress is None:
            return
        step = min(self.done, self.n_steps - 1)
        self.progress(f"{self.title}: {label}" if label else self.title, self.start + step, self.total)
        self.done += 1


def _run_section(key: str, title: str, builder: Callable[[Context, Writer], None], ctx: Context,
                 ticker: _Ticker | None = None) -> Section:
    w = Writer(key, title, tick=ticker)
    w.tick()
    try:
        builder(ctx, w)
    except NotAvailable as exc:
        return Section(key=key, title=title, status="not available", reason=str(exc))
    except VoirdireError as exc:
        logger.info("report section %s: %s", key, exc)
        return Section(key=key, title=title, status="error", reason=str(exc), warnings=tuple(w.warnings))
    except Exception as exc:  # an analysis bug must not cost the user the rest of the report
        # the section says so on the page; the traceback is for debugging (logging at DEBUG), not for users
        logger.debug("report section %s failed", key, exc_info=True)
        return Section(key=key, title=title, status="error",
                       reason=f"internal error ({type(exc).__name__}: {exc}); please report it",
                       warnings=tuple(w.warnings))
    return w.section()
