"""Sequential validation (private): the running anytime-valid decision per judge, beside its verdict.

The one workflow behind ``voirdire watch``, ``validate --sequential``, ``study status`` and the API:
:func:`sequential_validation` runs each judge's :func:`voirdire.validation.validate_sequential` on
every label with its round, at one seed, and puts beside it the one verdict of the judge
(:func:`judge_verdicts`: what ``voirdire validate`` says on the same labels and seed), never instead
of it. :func:`sequential_validation_by` does the same per ``--by`` group and on the pool (the loop is
:func:`watch_judges_by`'s). :func:`label_rounds` gives each label its round as the table reader
keeps the labels (a row repeated whole is one label; ``duplicates`` resolves the rest);
:func:`read_sequential` reads a file's rounds and runs the one or the other.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .._results import Result
from .._safe import shown
from ..exceptions import InvalidParameterError, SchemaError
from ._seeds import check_seed

__all__ = ["watch_judges", "label_rounds", "RunningDecision", "SequentialValidation", "sequential_validation",
           "GroupedSequentialValidation", "sequential_validation_by", "with_verdicts", "follow_file", "not_ready",
           "read_sequential"]


def watch_judges(table: Any, rounds: Any, judges: Sequence[str] | None = None, *, method: str = "alt-test",
                 epsilon: float | None = None, q: float = 0.05, seed: int = 0) -> list[Any]:
    """The anytime-valid sequential rule for every judge (one look per round).

    Parameters
    ----------
    table : AnnotationTable
        Every label so far.
    rounds : DataFrame or sequence
        The round of each label (see :func:`voirdire.validation.validate_sequential`).
    judges : sequence of str, optional
        Default: every judge of the table.
    method, epsilon, q
        As :func:`~voirdire.validation.validate_sequential`.
    seed : int, default 0
        Order of the items within a round.

    Returns
    -------
    list of SequentialResult
        One per judge, in order.

    Raises
    ------
    InvalidParameterError
        No judge to validate.
    """
    from ..validation import validate_sequential

    seed = check_seed(seed, "watch_judges")
    names = list(dict.fromkeys(str(j) for j in judges)) if judges else [str(j) for j in table.judges]
    if not names:
        raise InvalidParameterError(f"{table.source}: no judge to validate; name it with --judge.")
    return [validate_sequential(table, j, rounds=rounds, method=method, epsilon=epsilon, q=q,  # type: ignore[arg-type]
                                rng=seed) for j in names]


def label_rounds(rounds: Any, *, duplicates: str = "error", source: str = "") -> Any:
    """Each label's round (``item``, ``rater``, ``round``), with repeated labels resolved as the table reader
    resolves them: a row repeated whole (same round) is one label; an (item, rater) in two rounds keeps the
    ``first`` or ``last`` row, and with ``"error"`` is refused (which round the label arrived in is unknown).

    Raises
    ------
    SchemaError
        An (item, rater) with two rounds and ``duplicates="error"`` (naming both rounds and ``source``).
    """
    from ..data import id_str

    key = rounds["item"].map(id_str) + "\x00" + rounds["rater"].map(id_str)
    same = (key + "\x00" + rounds["round"].astype(str)).duplicated()
    rounds, key = rounds.loc[~same], key.loc[~same]
    if duplicates in ("first", "last"):
        return rounds.loc[~key.duplicated(keep=duplicates)]
    if key.duplicated().any():
        r = rounds.loc[key.duplicated(keep=False)]
        first = r.iloc[0]
        other = r.loc[key.loc[r.index] == key.loc[r.index[0]], "round"].iloc[1]
        raise SchemaError(f"{source}: item {shown(id_str(first['item']))}, rater {shown(id_str(first['rater']))} has "
                          f"two rounds ({shown(str(first['round']))} and {shown(str(other))}): which one the label arrived in is "
                          f"unknown. Keep one row with --duplicates first|last, or fix the file.")
    return rounds


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunningDecision(Result):
    """One judge's running anytime-valid decision at its latest look (or the look it was decided at).

    ``text`` is the decision as every view prints it beside the verdict (:func:`running_text`): a number of
    further comparisons only when the items on hand can give them.
    """

    judge: str
    method: str
    decision: str
    look: str | None
    reason: str
    more_per_human: float | None
    more_direction: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "method": self.method, "decision": self.decision, "look": self.look,
                "reason": self.reason, "more_per_human": self.more_per_human, "more_direction": self.more_direction}


def _running(table: Any, r: Any) -> RunningDecision:
    from ._advice import comparison_capacity, running_text

    at = r.looks.index(r.decided_at) if r.decided_at is not None else len(r.looks) - 1
    more = float(r.more_items[-1]) if len(r.looks) else math.nan
    direction = r.more_direction[-1] if r.more_direction else ""
    n_items, _, cap = comparison_capacity(table, r.judge)
    text = running_text(r.decision, more, direction, int(cap.max()) if cap.size else 0, n_items, rule=r.method)
    return RunningDecision(judge=r.judge, method=r.method, decision=r.decision,
                           look=r.looks[at] if r.looks else None, reason=r.reasons[at] if r.reasons else "",
                           more_per_human=more if math.isfinite(more) else None, more_direction=direction, text=text)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SequentialValidation(Result):
    """The result of :func:`sequential_validation`.

    Attributes
    ----------
    results : tuple of SequentialResult
        One per judge: every look.
    running : tuple of RunningDecision
        One per judge: the running decision at its latest look, in words.
    verdicts : ValidationResult or None
        The one verdict per judge (``voirdire validate`` on every label so far, same seed), shown beside the
        running decision; ``None`` when validation cannot run (fewer than two humans) or was not asked for.
    n_items : int
        Items on hand (a "more per human" above it cannot be settled with them).
    seed : int
    """

    results: tuple[Any, ...]
    running: tuple[RunningDecision, ...]
    verdicts: Any
    n_items: int
    seed: int

    @property
    def decided(self) -> bool:
        """Whether every judge is decided (accept or reject): ``watch --follow`` stops."""
        return all(r.decision in ("accept", "reject") for r in self.results)

    def verdicts_dict(self) -> list[dict[str, Any]]:
        """The verdicts as JSON records (judge, verdict, advice); empty when there are none."""
        if self.verdicts is None:
            return []
        return [{"judge": j.judge, "verdict": j.verdict.to_dict(),
                 "advice": None if j.advice is None else j.advice.to_dict()} for j in self.verdicts.judges]

    def to_dict(self) -> dict[str, Any]:
        return {"judges": [r.to_dict() for r in self.results], "verdicts": self.verdicts_dict()}

    def to_frame(self) -> Any:
        """One row per judge: the running decision and the verdict beside it."""
        import pandas as pd

        verdict = {} if self.verdicts is None else {j.judge: j.verdict.decision for j in self.verdicts.judges}
        return pd.DataFrame([{**r.to_dict(), "verdict": verdict.get(r.judge)} for r in self.running])


def _validation(table: Any, results: Sequence[Any], seed: int, verdicts: bool) -> SequentialValidation:
    from ._advice import judge_verdicts

    val = judge_verdicts(table, [r.judge for r in results], seed=seed) if verdicts and results else None
    return SequentialValidation(results=tuple(results), running=tuple(_running(table, r) for r in results),
                                verdicts=val, n_items=int(table.n_items), seed=seed)


def sequential_validation(table: Any, rounds: Any, judges: Sequence[str] | None = None, *, method: str = "alt-test",
                          epsilon: float | None = None, q: float = 0.05, seed: int = 0,
                          verdicts: bool = True) -> SequentialValidation:
    """The running anytime-valid decision per judge (:func:`watch_judges`) and, beside it, the judge's verdict.

    Parameters
    ----------
    table : AnnotationTable
        Every label so far.
    rounds : DataFrame
        The round of each label (``item``, ``rater``, ``round``; :func:`label_rounds`).
    judges : sequence of str, optional
        Default: every judge of the table.
    method, epsilon, q
        As :func:`~voirdire.validation.validate_sequential`.
    seed : int, default 0
        Order of the items within a round, and the seed of the verdicts.
    verdicts : bool, default True
        Compute the verdicts (``watch --follow`` computes them once, on the last version read).

    Returns
    -------
    SequentialValidation

    Raises
    ------
    InvalidParameterError
        No judge to validate, or a bad option.

    Examples
    --------
    >>> import pandas as pd
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> f = t.to_frame()
    >>> rounds = f.assign(round=f["item"].astype("category").cat.codes // 200)[["item", "rater", "round"]]
    >>> res = sequential_validation(t, rounds, ["ChatGPT"], method="loo", verdicts=False)
    >>> res.running[0].decision in ("accept", "reject", "continue")
    True
    """
    results = watch_judges(table, rounds, judges, method=method, epsilon=epsilon, q=q, seed=seed)
    return _validation(table, results, seed, verdicts)


@dataclasses.dataclass(frozen=True, slots=True)
class _JudgeVerdict:
    """A judge's verdict in a group (``validate --by``'s cell) and its advice where the cell keeps the group's."""

    judge: str
    verdict: Any
    advice: Any


@dataclasses.dataclass(frozen=True, slots=True)
class _Verdicts:
    judges: tuple[_JudgeVerdict, ...]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupedSequentialValidation(Result):
    """The result of :func:`sequential_validation_by`: the running decisions per (judge, group) and on the
    pool (``watch``: a :class:`GroupedWatch`), each group's and the pool's :class:`SequentialValidation`
    (``None`` where the rule could not run; ``watch.errors`` / ``watch.pooled_error`` say why), and the
    verdicts of ``validate --by`` (``verdicts``: a :class:`GroupedValidation`, ``None`` when not computed
    or validation cannot run) that each group's result shows beside its running decision."""

    watch: Any
    groups: tuple[SequentialValidation | None, ...]
    pooled: SequentialValidation | None
    pooled_n_items: int
    seed: int = 0
    verdicts: Any = None

    @property
    def by(self) -> tuple[str, ...]:
        return tuple(self.watch.by)

    @property
    def decided(self) -> bool:
        """Every judge decided in every group that runs, and on the pool (``watch --by --follow`` stops)."""
        runs = [r for r in [*self.groups, self.pooled] if r is not None]
        return bool(runs) and all(r.decided for r in runs)

    def parts(self) -> list[tuple[str, int, SequentialValidation | None, str | None]]:
        """(group, items, result, error) per group, then ``("(pooled)", ...)``."""
        w = self.watch
        return [*zip(w.groups, w.n_items, self.groups, w.errors),
                ("(pooled)", self.pooled_n_items, self.pooled, w.pooled_error)]

    def records(self) -> list[dict[str, Any]]:
        """One record per (judge, group), the pool last (group ``(pooled)``): the running decision (``None``, with
        the group's ``error``, where the rule did not run) and the verdict beside it (``validate --by``'s cell,
        so a group too small still has its verdict and reason)."""
        out = []
        blank = dict.fromkeys(("method", "decision", "look", "reason", "more_per_human", "more_direction"))
        judges = list(dict.fromkeys(x.judge for _, _, r, _ in self.parts() if r is not None for x in r.running))
        for g, n, r, e in self.parts():
            run = {} if r is None else {x.judge: x for x in r.running}
            ver = {} if r is None or r.verdicts is None else {v.judge: v for v in r.verdicts.judges}
            for j in judges:
                x, v = run.get(j), ver.get(j)
                cell = None if v is not None or self.verdicts is None or g == "(pooled)" else \
                    next((c for c in self.verdicts.cells if c.judge == j and c.group == g), None)
                verdict = v.verdict if v is not None else None if cell is None else cell.verdict
                out.append({"judge": j, "group": g, "n_items": n, "error": e if r is None else None,
                            **(blank if x is None else {k: val for k, val in x.to_dict().items() if k != "judge"}),
                            "verdict": None if verdict is None else verdict.to_dict(),
                            "advice": None if v is None or v.advice is None else v.advice.to_dict()})
        return out

    def to_dict(self) -> dict[str, Any]:
        d = self.watch.to_dict()
        for g, r in zip(d["groups"], self.groups):
            if r is not None:
                g["verdicts"] = r.verdicts_dict()
        return {**d, "pooled_verdicts": None if self.pooled is None else self.pooled.verdicts_dict(),
                "rule": None if self.verdicts is None else self.verdicts.rule, "records": self.records()}

    def to_frame(self) -> Any:
        return self.watch.to_frame()


def _grouped_verdicts(grouped: Any, w: Any, seed: int) -> Any:
    """``validate --by``'s verdicts (:func:`validate_judges_by`, its defaults, this seed) for the judges the
    sequential rule ran; ``None`` when validation cannot run on the pool."""
    import warnings

    from ..exceptions import VoirdireError
    from ._groups import validate_judges_by

    names = list(dict.fromkeys(x.judge for r in [*w.results, w.pooled] if r is not None for x in r))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return validate_judges_by(grouped, names, seed=seed) if names else None
    except VoirdireError:
        return None


def _group_verdicts(val: Any, group: str, results: Sequence[Any]) -> _Verdicts:
    """The cells of ``group`` for the judges in ``results``, each with the group's advice when the cell keeps
    the group's decision (a decision changed by the rules across groups has no advice of its own)."""
    g = list(val.groups).index(group)
    own = {e.judge: e for e in (val.results[g].judges if val.results[g] is not None else ())}
    cells = {c.judge: c for c in val.cells if c.group == group}
    out = []
    for r in results:
        c = cells.get(r.judge)
        if c is not None:
            e = own.get(r.judge)
            out.append(_JudgeVerdict(judge=c.judge, verdict=c.verdict,
                                     advice=e.advice if e is not None and c.group_verdict is not None
                                     and c.verdict.decision == c.group_verdict.decision else None))
    return _Verdicts(judges=tuple(out))


def _assemble(grouped: Any, w: Any, seed: int, verdicts: bool) -> GroupedSequentialValidation:
    val = _grouped_verdicts(grouped, w, seed) if verdicts else None

    def one(table: Any, results: Any, group: str | None) -> SequentialValidation:
        res = _validation(table, results, seed, False)
        if val is None:
            return res
        v = val.pooled if group is None else _group_verdicts(val, group, results)
        return dataclasses.replace(res, verdicts=v)

    groups = tuple(None if r is None or t is None else one(t, r, g)
                   for t, r, g in zip(grouped.tables, w.results, w.groups))
    pooled = None if w.pooled is None else one(grouped.pooled, w.pooled, None)
    return GroupedSequentialValidation(watch=w, groups=groups, pooled=pooled,
                                       pooled_n_items=int(grouped.pooled.n_items), seed=seed, verdicts=val)


def sequential_validation_by(grouped: Any, rounds: Any, judges: Sequence[str] | None = None, *,
                             min_group_items: int = 2, seed: int = 0, verdicts: bool = True,
                             **options: Any) -> GroupedSequentialValidation:
    """:func:`sequential_validation` per ``--by`` group and on the pool, same options and seed (a group's
    decisions are those of ``--where`` on it); a group too small, without the judge, or where the rule
    cannot run gets its reason (:func:`watch_judges_by`). The e-BH level holds within each group.

    Beside each (judge, group)'s running decision stands the one verdict ``validate --by`` gives there
    (:func:`validate_judges_by` at its defaults and this seed: the rules across groups applied), and
    beside the pool's the pooled verdict.

    ``grouped`` is a :class:`~voirdire.data.GroupedTables`; ``rounds`` the round of every label
    (:func:`label_rounds`); ``options`` are ``method``, ``epsilon`` and ``q``.
    """
    from ._groups import watch_judges_by

    if not (judges or list(grouped.pooled.judges)):
        raise InvalidParameterError(f"{grouped.pooled.source}: no judge to validate; name it with --judge.")
    w = watch_judges_by(grouped, rounds, judges or None, min_group_items=min_group_items, seed=seed, **options)
    return _assemble(grouped, w, seed, verdicts)


def with_verdicts(result: Any, tables: Any) -> Any:
    """``result`` (:func:`sequential_validation` or ``_by`` with ``verdicts=False``) with its verdicts, on the
    table (or grouped tables) it was computed on: ``watch --follow`` computes them once, at the end."""
    if isinstance(result, GroupedSequentialValidation):
        return _assemble(tables, result.watch, result.seed, True)
    return _validation(tables, result.results, result.seed, True)


def _signature(file: Any) -> tuple[int, int, int] | None:
    """What tells one version of a file from the next (inode, size, mtime), or None when it is not there."""
    try:
        st = file.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


#: Text formats read line by line: a change is read only once its last line is complete.
_LINE_FORMATS = {".csv": 2, ".tsv": 2, ".tab": 2, ".txt": 2, ".jsonl": 1, ".ndjson": 1}


def not_ready(file: Any) -> str | None:
    """Why a file being written cannot be read yet (None when it can): missing (rotated), empty, only
    its header, or a last row the writer has not finished (no line end yet). Text formats only; any
    other file is read as it is."""
    need = _LINE_FORMATS.get(file.suffix.lower())
    try:
        size = file.stat().st_size
        if size == 0:
            return "the file is empty"
        if need is None:
            return None
        with open(file, "rb") as fh:
            fh.seek(-1, 2)
            if fh.read(1) not in (b"\n", b"\r"):
                return "its last row is not complete yet"
            fh.seek(0)
            head = fh.read(1 << 16)
    except FileNotFoundError:
        return "the file is not there (rotated or not created yet)"
    except OSError as exc:
        return f"it cannot be read now ({exc.strerror or exc})"
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if len(lines) < need and len(head) < 1 << 16:
        return "it holds no labels yet" + (" (only its header)" if lines else "")
    return None


def follow_file(file: Any, read: Callable[[], tuple[Any, Any]], *, every: float,
                max_wait: float | None = None) -> Iterator[tuple[str, Any]]:
    """``watch --follow``: re-read ``file`` (a :class:`pathlib.Path`) with ``read()`` whenever it changes, until
    the result is ``decided`` or ``max_wait`` seconds have passed.

    Yields ``("read", (result, table))`` for each new version read and ``("waiting", why)`` when the reason
    it waits changes. A change is read only when it is complete: a missing file (rotated, or not created
    yet), an empty or header-only file, and a last row without its line end are waited for, not errors.
    A read that fails while the file changed under it is retried at the next poll; a failure on a file
    that did not change is the file's own error. Raises :class:`SchemaError` when ``max_wait`` passes
    before any version could be read.
    """
    import time

    start = time.monotonic()
    stamp: tuple[int, int, int] | None = None
    said: str | None = None
    got = False
    while True:
        sig = _signature(file)
        why = not_ready(file) if sig is not None else "the file is not there (rotated or not created yet)"
        if why is None and sig != stamp:
            try:
                new = read()
            except SchemaError:
                if _signature(file) == sig:
                    raise
                why = "it changed while being read"
            else:
                stamp, got = sig, True
                yield "read", new
                if new[0].decided:
                    return
        if why is not None and why != said:
            yield "waiting", why
        said = why
        if max_wait is not None and time.monotonic() - start > max_wait:
            if not got:
                raise SchemaError(f"{file}: no labels to read after {max_wait:g} s ({why or 'no complete version'}).")
            return
        time.sleep(every)


def read_sequential(file: Any, load: Callable[[], Any], *, round_column: str, item: str = "item",
                    rater: str = "rater", duplicates: str = "error", grouped: bool = False,
                    judges: Sequence[str] | None = None, method: str = "alt-test", epsilon: float | None = None,
                    q: float = 0.05, seed: int = 0, verdicts: bool = True) -> tuple[Any, Any]:
    """Read the rounds of ``file`` once (its ``round_column``, :func:`label_rounds`) and run
    :func:`sequential_validation` on the table ``load()`` reads (:func:`sequential_validation_by` on its
    groups when ``grouped``): the result and the table (or grouped tables) it was computed on.

    Raises
    ------
    InvalidParameterError
        When ``file`` is a folder (an AltTest directory has no round column).
    """
    from pathlib import Path

    from ..data import read_rounds

    if Path(file).is_dir():
        raise InvalidParameterError(f"{file}: sequential validation needs a long file with a round column "
                                    f"(--round-column), not an AltTest directory.")
    rounds = label_rounds(read_rounds(file, column=round_column, item=item, rater=rater), duplicates=duplicates,
                          source=str(file))
    table = load()
    run = sequential_validation_by if grouped else sequential_validation
    return run(table, rounds, judges, method=method, epsilon=epsilon, q=q, seed=seed, verdicts=verdicts), table
