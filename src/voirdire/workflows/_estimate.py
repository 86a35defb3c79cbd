"""``estimate_judges``: the mean human score per judge, three ways (private).

For each judge, over the items it scored: the doubly-robust estimate with m(X) = X (the paper's choice)
and calibrated (``voirdire estimate``'s default), human-only and PPI++, from
:func:`voirdire.estimation.compare_estimators` with its defaults and the seed given: the numbers of
``voirdire estimate --drop-unscored --seed``. The report's "Estimation" section renders this result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._checks import check_probability
from .._results import Result, to_jsonable
from ..exceptions import VoirdireError
from ._seeds import check_seed

__all__ = ["JudgeEstimate", "EstimationSummary", "estimate_judges", "MeanEstimate", "estimate_mean", "FileEstimate",
           "estimate_from_file", "inclusion_prob_from_file"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JudgeEstimate(Result):
    """One judge's estimates (``error`` says why there are none)."""

    judge: str
    n_items_scored: int
    dr: Any = None
    dr_calibrated: Any = None
    human_only: Any = None
    ppi: Any = None
    ppi_note: str | None = None
    hints: tuple[dict[str, Any], ...] = ()
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"judge": self.judge, "n_items_scored": self.n_items_scored}
        if self.error is not None:
            d["error"] = self.error
            return d
        d["dr"] = self.dr.to_dict()
        d["dr_calibrated"] = self.dr_calibrated.to_dict()
        if self.human_only is not None:
            d["human_only"] = self.human_only.to_dict()
        if self.ppi is not None:
            d["ppi"] = self.ppi.to_dict()
        d["ppi_note"] = self.ppi_note
        d["hints"] = [dict(h) for h in self.hints]
        return d


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EstimationSummary(Result):
    """The composite result of :func:`estimate_judges`: one :class:`JudgeEstimate` per judge, and the human
    labels left out because their item has no inclusion probability (``unsampled="omit"``)."""

    judges: tuple[JudgeEstimate, ...]
    n_human_labels_left_out: int
    n_items_left_out: int
    options: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"judges": [j.to_dict() for j in self.judges], "n_human_labels_left_out": self.n_human_labels_left_out,
                "n_items_left_out": self.n_items_left_out, "options": dict(self.options)}


def estimate_judges(table: Any, judges: Sequence[str], inclusion_prob: Any, *, unsampled: str | None = None,
                    confidence_level: float = 0.95, seed: int = 0,
                    progress: Callable[[str, int, int], None] | None = None) -> EstimationSummary:
    """The mean human score over all items, per judge: DR (m(X) = X and calibrated), human-only, PPI++.

    Parameters
    ----------
    table : AnnotationTable
        Numeric labels; the humans' items are a design sample with known probabilities.
    judges : sequence of str
    inclusion_prob : float or array of float (one per item)
        The probability that each item went to the humans (``nan``: outside the probability sample).
    unsampled : {"omit"} or None
        ``"omit"``: human labels on items without a probability are left out (and counted).
    confidence_level : float, default 0.95
    seed : int, default 0
        As ``voirdire estimate --seed``.
    progress : callable, optional
        ``progress(judge, k, n)``.

    Returns
    -------
    EstimationSummary
    """
    from ..estimation import compare_estimators, item_scores

    func = "estimate_judges"
    confidence_level = check_probability(confidence_level, "confidence_level", func)
    seed = check_seed(seed, func)
    t = table
    pi_all = np.broadcast_to(np.asarray(inclusion_prob, dtype=float), (t.n_items,))
    items_all = np.asarray(t.items)
    left_out = n_items_out = 0
    if unsampled == "omit":  # items with no probability are outside the probability sample
        is_h = (t.roles[t.rater_idx] == "human") & ~t.is_abstention
        outside = np.isnan(pi_all)[t.label_item] & is_h
        left_out = int(outside.sum())
        n_items_out = int(np.unique(t.label_item[outside]).size)
    out: list[JudgeEstimate] = []
    for jn, judge in enumerate(judges):
        if progress is not None:
            progress(judge, jn, len(judges))
        x, y, _ = item_scores(t, judge)
        if left_out:
            y = np.where(np.isnan(pi_all), np.nan, y)
        keep = np.isfinite(x)
        cl = None if t.clusters is None else t.clusters[keep]
        same = dict(judges=[judge], items=items_all[keep], clusters=cl, confidence_level=confidence_level, rng=seed)
        try:
            comp = compare_estimators(x[keep], y[keep], pi_all[keep].copy(), **same)
            paper = compare_estimators(x[keep], y[keep], pi_all[keep].copy(), model="identity", compare=False,
                                       **same)
        except VoirdireError as exc:
            out.append(JudgeEstimate(judge=judge, n_items_scored=int(keep.sum()), error=str(exc)))
            continue
        out.append(JudgeEstimate(judge=judge, n_items_scored=int(keep.sum()), dr=paper.dr, dr_calibrated=comp.dr,
                                 human_only=comp.human_only, ppi=comp.ppi, ppi_note=comp.ppi_note,
                                 hints=tuple(comp.hints)))
    return EstimationSummary(judges=tuple(out), n_human_labels_left_out=left_out, n_items_left_out=n_items_out,
                             options={"confidence_level": confidence_level, "seed": seed, "unsampled": unsampled})


# ------------------------------------------------------------------------------------------------ voirdire estimate
_JSON_KEYS = {"DR": "doubly_robust", "human-only": "human_only", "PPI++": "ppi"}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class MeanEstimate(Result):
    """The result of :func:`estimate_mean`: ``voirdire estimate``'s numbers on one table.

    ``comparison`` is the :class:`~voirdire.estimation.EstimatorComparison` (DR, human-only, PPI++,
    hints, warnings); ``design`` the inclusion probabilities in brief (``min``, ``max``,
    ``n_distinct``, ``n_items_with_prob``, ``expected_n_labeled``: their sum when every item has one).
    """

    judges: tuple[str, ...]
    comparison: Any
    design: dict[str, Any]
    n_items: int
    n_labeled: int

    @property
    def estimates(self) -> dict[str, Any]:
        """``{"DR": ..., "human-only": ..., "PPI++": ...}``: the estimators computed, in that order."""
        c = self.comparison
        out: dict[str, Any] = {"DR": c.dr}
        if c.human_only is not None:
            out["human-only"] = c.human_only
        if c.ppi is not None:
            out["PPI++"] = c.ppi
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judges[0], "judges": list(self.judges), "model": self.comparison.dr.model,
                "design": dict(self.design), "n_items": self.n_items, "n_labeled": self.n_labeled,
                "estimates": {_JSON_KEYS[k]: v.to_dict() for k, v in self.estimates.items()},
                "hints": [dict(h) for h in self.comparison.hints], "warnings": list(self.comparison.warnings)}


def estimate_mean(table: Any, judges: Sequence[str], inclusion_prob: float | Mapping[str, float], *,
                  item_ids: Sequence[str] | None = None, strata: Mapping[str, str] | None = None,
                  model: str = "calibrated", cross_fit: int | str = "auto", target: str = "superpopulation",
                  confidence_level: float = 0.95, compare: bool = True, drop_unscored: bool = False, seed: int = 0,
                  source: str | None = None, prob_column: str | None = None, strata_column: str | None = None,
                  unnamed: Sequence[str] = ()) -> MeanEstimate:
    """``voirdire estimate`` on one table: the mean human score from the judges' scores on every item
    and the humans' on a design sample, by :func:`voirdire.estimation.compare_estimators`.

    Parameters
    ----------
    table : AnnotationTable
        Numeric scores.
    judges : sequence of str
        The predictors (several are combined by the model).
    inclusion_prob : float or mapping
        One probability for every item, or item id -> probability (an item missing from it has none).
    item_ids : sequence of str, optional
        The id of each item of ``table`` in the mappings (default: the table's ids; a ``--by`` pool
        whose groups share items gives each pooled item its own id).
    strata : mapping, optional
        Item id -> design stratum (every item needs one).
    model, cross_fit, target, confidence_level, compare
        As :func:`~voirdire.estimation.compare_estimators`.
    drop_unscored : bool, default False
        Leave out the items a judge did not score (else an error).
    seed : int, default 0
        The cross-fitting folds (``--seed``).
    source, prob_column, strata_column, unnamed
        For messages: the file, the probability and strata columns, the raters counted as humans
        only because no judge role named them.

    Returns
    -------
    MeanEstimate

    Raises
    ------
    SchemaError
        A human-scored item without a probability, an item without a stratum, an unscored item (without
        ``drop_unscored``), no human score, or a human-scored count the probabilities make impossible.
    """
    from ..estimation import compare_estimators, judge_matrix, labelled_count
    from ..exceptions import SchemaError

    src = str(table.source if source is None else source)
    judges = list(dict.fromkeys(str(j) for j in judges))
    ids = [str(i) for i in table.items] if item_ids is None else [str(i) for i in item_ids]
    X, y, _ = judge_matrix(table, judges)
    if isinstance(inclusion_prob, Mapping):
        pi = np.array([inclusion_prob.get(i, np.nan) for i in ids], dtype=float)
        miss = np.flatnonzero(np.isnan(pi) & np.isfinite(y))
        if miss.size:
            raise SchemaError(f"item {ids[miss[0]]!r} was scored by humans but has no inclusion probability in column "
                              f"{prob_column!r} ({miss.size} such item(s)). Put the item's design probability on its "
                              "rows.", source=src, column=prob_column)
    else:
        pi = np.full(len(ids), float(inclusion_prob))
    st = None
    if strata is not None:
        st_list = [strata.get(i) for i in ids]
        gaps = [ids[k] for k, v in enumerate(st_list) if v is None]
        if gaps:
            raise SchemaError(f"item {gaps[0]!r} has no stratum in column {strata_column!r}; every item needs one.",
                              source=src, column=strata_column)
        st = np.array(st_list, dtype=object).astype(str)
    cl = table.clusters
    items = np.asarray(table.items)
    keep = np.isfinite(X).all(axis=1)
    if not keep.all():
        if not drop_unscored:
            k = int(np.flatnonzero(~np.isfinite(X).all(axis=0))[0])
            bad = table.items[~np.isfinite(X[:, k])]
            raise SchemaError(f"{src}: judge {judges[k]!r} has no score for {bad.size} of {table.n_items} item(s) (e.g. "
                              f"{', '.join(repr(str(b)) for b in bad[:3])}). The estimator needs every judge's score on "
                              "every item; pass --drop-unscored to estimate over the items they all scored.")
        X, y, pi, items = X[keep], y[keep], pi[keep], items[keep]
        st = None if st is None else st[keep]
        cl = None if cl is None else cl[keep]
    n_lab = int(np.isfinite(y).sum())
    if n_lab == 0:
        raise SchemaError(f"{src}: no item has a human score, so there is nothing to estimate the human mean from. "
                          "Check the judge name and the role of the raters.")
    count = labelled_count(np.isfinite(y), pi, cl)
    if count is not None and count.impossible:
        where = f"column '{prob_column}'" if prob_column is not None else f"--inclusion-prob {inclusion_prob}"
        from .._safe import escape_control

        who = (" Raters not named by --judge were counted as humans: "
               + ", ".join(repr(escape_control(r)) for r in unnamed[:8]) + (" ..." if len(unnamed) > 8 else "")
               + "; name every LLM judge with --judge (or give a --role column).") if unnamed else (
            " Are LLM judges marked as humans in the role column?")
        raise SchemaError(f"{src}, {where}: {count.sentence()}: these are not the designed human sample.{who} "
                          "Otherwise the probabilities are not the ones the sample was drawn with, or whole groups of "
                          "items were sent to humans together (declare them with --cluster or --cluster-sep).")
    comp = compare_estimators(X if X.shape[1] > 1 else X[:, 0], y, pi, judges=judges, items=items, model=model,
                              cross_fit=cross_fit, strata=st, clusters=cl, confidence_level=confidence_level,
                              target=target, compare=compare, rng=seed)  # type: ignore[arg-type]
    known = pi[np.isfinite(pi)]
    design = {"inclusion_prob": str(inclusion_prob) if prob_column is None else prob_column,
              "min": float(known.min()), "max": float(known.max()),
              "n_distinct": int(np.unique(known).size), "n_items_with_prob": int(known.size),
              "expected_n_labeled": float(known.sum()) if known.size == pi.size else None}
    return MeanEstimate(judges=tuple(judges), comparison=comp, design=design, n_items=int(y.size), n_labeled=n_lab)


# ------------------------------------------------------------------------------------------------ the file's columns
def _read_frame(file: Any, column: str, item_col: str, option: str) -> tuple[Any, Any, str]:
    from pathlib import Path

    from ..data import read_long_frame
    from ..exceptions import SchemaError

    if Path(file).is_dir() or Path(file).suffix.lower() == ".json":
        raise SchemaError(f"{option} {column!r} names a column, but {file} is not a long table "
                          "(CSV/TSV/JSONL/Parquet).", source=str(file))
    df, rows, src = read_long_frame(file)
    if column not in df.columns:
        raise SchemaError(f"{option} names column {column!r}, which is not in the file; found "
                          f"{[str(c) for c in df.columns]}.", source=src, column=column)
    if item_col not in df.columns:
        raise SchemaError(f"no item column {item_col!r} (set it with --item).", source=src, column=item_col)
    return df, rows, src


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip())


def _per_item_column(file: Any, column: str, table: Any, item_col: str, rater_col: str, *, numeric: bool,
                     option: str) -> tuple[dict[str, Any], str]:
    """Values of ``column`` of ``file`` per item (constant within an item); errors name the file, row and column.
    ``numeric``: inclusion probabilities, checked in (0, 1] and positive wherever a human of ``table`` scored."""
    from ..data import id_str
    from ..exceptions import SchemaError

    df, rows, src = _read_frame(file, column, item_col, option)
    # ids as the table reader reads them (a CSV export's "'-3x" is the item "-3x", see _safe.uncell)
    ids = df[item_col].map(id_str).to_numpy()
    raw = df[column].to_numpy(dtype=object)
    vals: list[Any] = [None] * len(raw)
    for k, v in enumerate(raw):
        if _blank(v):
            continue
        if numeric:
            try:
                vals[k] = float(str(v).strip())
            except ValueError:
                raise SchemaError(f"inclusion probability {str(v)!r} is not a number.",
                                  source=src, row=int(rows[k]), column=column) from None
        else:
            vals[k] = str(v).strip()
    if numeric:
        humans = set(table.humans)
        raters = df[rater_col].astype(str).str.strip().to_numpy() if rater_col in df.columns else None
        # humans on a zero-probability item first: the most specific message
        for k, v in enumerate(vals):
            if v == 0 and raters is not None and raters[k] in humans:
                raise SchemaError(f"human {raters[k]!r} scored item {ids[k]!r}, whose inclusion probability is 0: "
                                  "an item that could never be drawn cannot have been drawn. Fix the probability "
                                  "(the design's value for that item) or drop the row.",
                                  source=src, row=int(rows[k]), column=column)
        for k, v in enumerate(vals):
            if v is not None and not (0 < v <= 1):
                hint = " Probabilities are fractions: did you give a percentage?" if 1 < v <= 100 else ""
                raise SchemaError(f"inclusion probability {v:g} is outside (0, 1]; every item must have had a "
                                  f"positive chance of being sent to humans, and at most 1.{hint}",
                                  source=src, row=int(rows[k]), column=column)
    per_item: dict[str, Any] = {}
    first: dict[str, int] = {}
    for k, v in enumerate(vals):
        if v is None:
            continue
        i = ids[k]
        if i in per_item and per_item[i] != v:
            raise SchemaError(f"item {i!r} has two values ({per_item[i]!r} at row {first[i]} and {v!r}); "
                              f"{option} must be constant within an item.", source=src, row=int(rows[k]),
                              column=column)
        if i not in per_item:
            per_item[i] = v
            first[i] = int(rows[k])
    return per_item, src


def _probability_spec(spec: str) -> float | None:
    """``--inclusion-prob`` as one number (checked in (0, 1]), or None when it names a column."""
    from ..exceptions import InvalidParameterError

    try:
        p = float(spec)
    except ValueError:
        return None
    if not (0 < p <= 1):
        raise InvalidParameterError(f"--inclusion-prob must be a probability in (0, 1] or a column name. Got {spec}."
                                    + (" Did you mean a fraction, e.g. 0.1?" if 1 < p <= 100 else ""))
    return p


def inclusion_prob_from_file(spec: str, file: Any, table: Any, *, item: str = "item", rater: str = "rater",
                             human: Any = None) -> np.ndarray:
    """Each item's inclusion probability from ``--inclusion-prob SPEC``: one number for every item, or the
    value of column ``spec`` of ``file`` on the item's rows (constant within an item).

    Parameters
    ----------
    spec : str
        A probability in (0, 1], or the name of a column of ``file``.
    file : path
        The long file ``table`` was read from.
    table : AnnotationTable
    item, rater : str
        The file's item and rater columns.
    human : array of float, optional
        One value per item of ``table``, finite where the item needs a probability (its humans'
        score): an item with a finite value and no probability is an error. Default: none needed.

    Returns
    -------
    numpy.ndarray
        One probability per item of ``table`` (``nan``: none given).

    Raises
    ------
    InvalidParameterError
        A number outside (0, 1].
    SchemaError
        The column is missing, holds a value that is not a probability, differs within an item, is 0
        where a human scored, or is missing on an item that needs one.
    """
    from ..exceptions import SchemaError

    p = _probability_spec(spec)
    if p is not None:
        return np.full(table.n_items, p)
    per_item, src = _per_item_column(file, spec, table, item, rater, numeric=True, option="--inclusion-prob")
    out = np.array([per_item.get(str(i), np.nan) for i in table.items], dtype=float)
    need = np.zeros(out.size, dtype=bool) if human is None else np.isfinite(np.asarray(human, dtype=float))
    miss = np.flatnonzero(np.isnan(out) & need)
    if miss.size:
        raise SchemaError(f"item {str(table.items[miss[0]])!r} was scored by humans but has no inclusion "
                          f"probability in column {spec!r} ({miss.size} such item(s)). Put the item's design "
                          "probability on its rows.", source=src, column=spec)
    return out


def _unnamed_humans(table: Any, judges: Sequence[str], role: str | None) -> list[str]:
    """The raters counted as humans only because no judge role named them (no ``role`` column, and no role
    the file's format gave): what the warning lists. Empty when the roles were given."""
    if role is not None or set(table.judges) != set(judges):
        return []
    return [str(r) for r in table.humans]


def _unnamed_text(file: Any, table: Any, unnamed: list[str]) -> str:
    """One line: which raters were taken as humans, those that scored every item first (as a judge does)."""
    from .._safe import escape_control

    per = np.bincount(table.rater_idx, minlength=len(table.raters))
    every = {str(table.raters[k]) for k in range(len(table.raters)) if per[k] >= table.n_items}
    names = sorted(unnamed, key=lambda r: (r not in every, unnamed.index(r)))
    shown = ", ".join(repr(escape_control(r)) for r in names[:8]) + (
        f" and {len(names) - 8:,} more" if len(names) > 8 else "")
    full = [r for r in names if r in every]
    also = (f" ({', '.join(repr(escape_control(r)) for r in full[:3])}{' ...' if len(full) > 3 else ''} scored "
            "every item, as a judge does)") if full else ""
    return (f"{file}: {len(names):,} rater(s) not named by --judge are counted as humans: {shown}{also}. "
            "If any is an LLM judge, name it with --judge (or mark every row's role with --role COLUMN).")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FileEstimate(Result):
    """The result of :func:`estimate_from_file`: ``voirdire estimate`` on one file.

    ``estimate`` is the :class:`MeanEstimate` (``None`` with ``--by``); ``grouped`` the
    :class:`~voirdire.workflows.GroupedEstimate` (``None`` without). ``raters_counted_as_humans``
    are the raters taken as humans only because no judge role named them, and ``roles_note`` the
    warning that lists them; ``n_items`` the items of the table (the pool's, with ``--by``).
    ``streams`` names the seed of each random stream: the cross-fitting folds are drawn from
    ``seed`` itself (``rng=seed``, as every earlier version did, so a recorded seed keeps its numbers).
    """

    file: str
    judges: tuple[str, ...]
    inclusion_prob: str
    n_items: int
    estimate: MeanEstimate | None = None
    grouped: Any = None
    raters_counted_as_humans: tuple[str, ...] = ()
    roles_note: str | None = None
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    streams: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        """The lines for standard error: the raters counted as humans (when some were)."""
        return [self.roles_note] if self.roles_note else []

    def to_dict(self) -> dict[str, Any]:
        """``voirdire estimate --format json``: the design names ``--inclusion-prob`` as given."""
        unnamed = list(self.raters_counted_as_humans)
        if self.grouped is not None:
            d = self.grouped.to_dict()
            for g in [*d["groups"], {"result": d["pooled"]}]:
                if g["result"] is not None:
                    g["result"]["design"]["inclusion_prob"] = self.inclusion_prob
            return to_jsonable({"file": self.file, "judges": list(self.judges), **d, "warnings": self.warnings,
                                "raters_counted_as_humans": unnamed})
        assert self.estimate is not None
        e = self.estimate.to_dict()
        e["design"]["inclusion_prob"] = self.inclusion_prob
        return to_jsonable({"file": self.file, **{k: e[k] for k in ("judge", "judges", "model", "design", "estimates",
                                                                      "hints")},
                            "warnings": e["warnings"] + self.warnings, "raters_counted_as_humans": unnamed})

    def to_frame(self) -> Any:
        """One row per estimator (and group, with ``--by``)."""
        import pandas as pd

        if self.grouped is not None:
            return self.grouped.to_frame()
        assert self.estimate is not None
        return pd.DataFrame([{"estimator": k, "estimate": r.estimate, "se": r.se, "ci_low": r.ci.low,
                              "ci_high": r.ci.high, "n_labeled": r.n_labeled, "n_total": r.n_total}
                             for k, r in self.estimate.estimates.items()])


def estimate_from_file(file: Any, table: Any, judges: Sequence[str], inclusion_prob: str, *,
                       strata: str | None = None, role: str | None = None, item: str = "item",
                       rater: str = "rater", model: str = "calibrated", cross_fit: int | str = "auto",
                       target: str = "superpopulation", confidence_level: float = 0.95, compare: bool = True,
                       drop_unscored: bool = False, seed: int = 0) -> FileEstimate:
    """``voirdire estimate``: the mean human score from the judges' scores on every item of a file and the
    humans' on a design sample whose probabilities the file holds (or one number gives).

    Parameters
    ----------
    file : path
        The long file the table was read from (its ``inclusion_prob`` and ``strata`` columns are read
        from it).
    table : AnnotationTable or GroupedTables
        The file's scores; a :class:`~voirdire.data.GroupedTables` (``--by``) gives one estimate per
        group and the pooled one (:func:`estimate_mean_by`).
    judges : sequence of str
    inclusion_prob : str
        A probability in (0, 1] for every item, or the name of a column of ``file`` with each item's.
    strata : str, optional
        The column of ``file`` with each item's design stratum.
    role : str, optional
        The role column the table was read with (no warning about raters counted as humans then).
    item, rater : str
        The file's item and rater columns.
    model, cross_fit, target, confidence_level, compare, drop_unscored, seed
        As :func:`estimate_mean`.

    Returns
    -------
    FileEstimate

    Raises
    ------
    SchemaError
        No human rater, or a column or value :func:`inclusion_prob_from_file` and :func:`estimate_mean` refuse.
    InvalidParameterError
        ``inclusion_prob`` a number outside (0, 1].
    """
    from ..exceptions import SchemaError
    from ._groups import estimate_mean_by

    seed = check_seed(seed, "estimate_from_file")
    judges = list(dict.fromkeys(str(j) for j in judges))
    grouped = table if hasattr(table, "pooled") else None
    t = table.pooled if grouped is not None else table
    if not t.humans:
        raise SchemaError("no human rater (every rater is a judge).", source=str(file))
    unnamed = _unnamed_humans(t, judges, role)
    p = _probability_spec(inclusion_prob)
    prob: Any = p
    column = None
    if p is None:
        prob, _ = _per_item_column(file, inclusion_prob, t, item, rater, numeric=True, option="--inclusion-prob")
        column = inclusion_prob
    st = None if strata is None else _per_item_column(file, strata, t, item, "rater", numeric=False,
                                                       option="--strata")[0]
    options: dict[str, Any] = dict(model=model, cross_fit=cross_fit, target=target, confidence_level=confidence_level,
                                   compare=compare, drop_unscored=drop_unscored, seed=seed)
    same = dict(strata=st, prob_column=column, unnamed=unnamed, source=str(file), strata_column=strata, **options)
    if grouped is not None:
        res: dict[str, Any] = {"grouped": estimate_mean_by(grouped, judges, prob, **same)}
    else:
        res = {"estimate": estimate_mean(t, judges, prob, **same)}
    return FileEstimate(file=str(file), judges=tuple(judges), inclusion_prob=inclusion_prob, n_items=int(t.n_items),
                        raters_counted_as_humans=tuple(unnamed),
                        roles_note=_unnamed_text(file, t, unnamed) if unnamed else None, options=options,
                        streams={"cross_fit": seed}, **res)
