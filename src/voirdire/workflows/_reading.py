"""Reading the files the commands are given (private): an annotation table with the shared reading options,
the note on numeric labels read as nominal, and a file of pairwise verdicts with its pair covariates.

``voirdire``'s commands parse their options and call these; so does any caller that reads a file as a command
does (the report, a study)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..exceptions import InvalidParameterError

__all__ = ["MIN_SCORE_VALUES", "numeric_nominal_note", "read_table", "read_table_groups", "read_pairwise_votes",
           "read_inclusion_prob", "overlap_problem", "verdict_spellings"]

#: Numeric labels with at least this many distinct values, read without a scale, get a note.
MIN_SCORE_VALUES = 3


def numeric_nominal_note(table: Any) -> str | None:
    """The note for numeric labels read as nominal (no --scale): they look like scores.

    voirdire does not guess the level (a 1-5 rubric may be ordinal or interval, and 0/1/2 may be
    codes): it keeps nominal, the safe reading for codes, and says how to declare scores.
    """
    sc = table.scale
    if sc.level != "nominal" or not sc.is_numeric or sc.n_categories < MIN_SCORE_VALUES:
        return None
    cats = list(sc.categories or ())
    shown = ", ".join(str(c) for c in cats[:6]) + (", ..." if len(cats) > 6 else "")
    return (f"{table.source}: the labels are numbers ({shown}) and are read as nominal categories (no order, no "
            "distance) because --scale was not given. If they are scores, pass --scale ordinal (an order) or "
            "--scale interval (distances); the coefficients and the alt-test scoring change with it.")


def read_table(file: Any, *, format_options: dict[str, Any] | None = None, **options: Any) -> tuple[Any, str | None]:
    """``(table, note)``: :func:`voirdire.data.read_annotations` with a command's reading ``options`` and its
    format options (``format_in``, ``wide``, ``where``, ``control``, ``question``; an explicit option wins), and
    the :func:`numeric_nominal_note` when no scale was given."""
    from ..data import read_annotations

    fo = format_options or {}
    fmt = options.pop("format", None) or fo.get("format_in") or "auto"
    wide = True if (options.pop("wide", None) or fo.get("wide")) else None
    for key in ("where", "control", "question"):
        options[key] = options.get(key) or fo.get(key) or None
    table = read_annotations(file, format=fmt, wide=wide, **options)
    return table, (numeric_nominal_note(table) if options.get("scale") is None else None)


def read_table_groups(file: Any, *, by: Sequence[str], format_options: dict[str, Any] | None = None,
                      **options: Any) -> tuple[Any, str | None]:
    """``(grouped, note)``: :func:`voirdire.data.read_annotation_groups` (one table per ``by`` group and the
    pool) with a command's options, and the pool's :func:`numeric_nominal_note` when no scale was given."""
    from ..data import read_annotation_groups

    fo = format_options or {}
    grouped = read_annotation_groups(
        file, by=list(by), format=fo.get("format_in") or "auto", wide=True if fo.get("wide") else None,
        where=fo.get("where") or None, control=fo.get("control"), question=fo.get("question"), **options)
    return grouped, (numeric_nominal_note(grouped.pooled) if options.get("scale") is None else None)


def verdict_spellings(specs: Sequence[str] | None) -> dict[str, str] | None:
    """``RAW=A|T|B`` specifications (``--verdict-map``, repeatable) as a dict; None when none are given.

    Examples
    --------
    >>> verdict_spellings(["model_1=A", " tie = T"])
    {'model_1': 'A', 'tie': 'T'}
    """
    if not specs:
        return None
    bad = [spec for spec in specs if "=" not in spec]
    if bad:
        raise InvalidParameterError(f"--verdict-map expects RAW=A|T|B, e.g. model_1=A. Got {bad[0]!r}.")
    return {raw.strip(): v.strip() for raw, v in (spec.split("=", 1) for spec in specs)}


def read_pairwise_votes(file: Any, *, pair: Sequence[str], rater: str = "rater", verdict: str = "verdict",
                        order: str = "order", role: str | None = None, presented: bool = False,
                        verdict_map: dict[str, str] | Sequence[str] | None = None, missing: str = "error",
                        judges: Sequence[str] | None = (), fallback_judges: Sequence[str] = (),
                        covariates: bool = False, role_if_present: bool = False) -> tuple[Any, Any]:
    """Read a file of pairwise verdicts (a long table, or a public set's folder) into ``(PairwiseTable,
    covariates)``.

    Judges: ``judges`` and/or the ``role`` column; with neither, the file's ``role`` column when it has one,
    else the ``fallback_judges`` that appear in it. ``covariates``: also return one row per pair with the
    ``model_a, model_b, len_a, len_b`` columns the file has (None when it has none), for
    :func:`voirdire.pairwise.bias_report`. ``role_if_present``: a ``role`` column the file lacks is ignored
    (``report``, where ``--role`` is the graded file's too). ``verdict_map``: the verdicts' spellings, a dict or
    ``RAW=A|T|B`` strings (:func:`verdict_spellings`).
    """
    from ..data import PairwiseTable, join_pair_key, pairwise_set_of, read_long_frame, read_pairwise
    from ..pairwise import pair_covariates

    pair = list(pair)
    if verdict_map is not None and not isinstance(verdict_map, dict):
        verdict_map = verdict_spellings(verdict_map)
    folder = Path(file)
    set_name = pairwise_set_of(folder)
    rows = None
    if set_name is not None:  # a public set as published (its own columns)
        from ..data import pairwise_set_frame

        table = read_pairwise(folder)
        df = pairwise_set_frame(set_name, folder.parent) if covariates else None
        kcol = "pair"
        src = str(file)
    else:
        df, rows, src = read_long_frame(file)
        jl = list(judges or ())
        if role_if_present and role not in df.columns:
            role = None
        if not jl and role is None:
            if "role" in df.columns:
                role = "role"
            elif rater in df.columns and fallback_judges:
                present = set(df[rater].astype(str).str.strip())
                jl = [j for j in fallback_judges if j in present]
        table = PairwiseTable.from_frame(df, pair=pair, rater=rater, verdict=verdict, order=order, judges=jl,
                                         role=role, verdict_map=verdict_map, presented=presented,
                                         missing=missing,  # type: ignore[arg-type]
                                         source=src, row_numbers=rows)
        kcol = pair[0]
        if covariates and len(pair) > 1:
            df, kcol = join_pair_key(df, pair, src)
    cov = None
    if covariates and df is not None and kcol in df.columns and (
            {"model_a", "model_b"} <= set(df.columns) or {"len_a", "len_b"} <= set(df.columns)):
        cov = pair_covariates(df, pair=kcol, source=src, row_numbers=rows)  # the file's line numbers
    return table, cov


def read_inclusion_prob(spec: str, file: Any, table: Any, *, item: str = "item", rater: str = "rater",
                        unsampled: str = "error") -> Any:
    """``--inclusion-prob SPEC`` of the report: a number (returned as a float, the same for every item) or the
    per-item probabilities of column ``SPEC`` of ``file``, read and checked as ``voirdire estimate`` reads them
    (:func:`voirdire.workflows.inclusion_prob_from_file`). Every human-labelled item needs one, unless
    ``unsampled="omit"`` (then such an item without a probability is outside the probability sample)."""
    import numpy as np

    from ._estimate import inclusion_prob_from_file

    is_h = (table.roles[table.rater_idx] == "human") & ~table.is_abstention
    labelled = (np.bincount(table.label_item[is_h], minlength=table.n_items) > 0) & (unsampled != "omit")
    pi = inclusion_prob_from_file(spec, file, table, item=item, rater=rater, human=np.where(labelled, 0.0, np.nan))
    try:
        return float(spec)  # one number (checked above): the report records it as a constant
    except ValueError:
        return pi


def overlap_problem(table: Any) -> str | None:
    """Why ``table`` holds nothing to compare (no item has labels from two raters), or None when it does."""
    import numpy as np

    if table.n_items and int(np.diff(table.indptr).max()) < 2:
        return (f"{table.source}: no item has two raters (each of its {table.n_items:,} items has one label), so no "
                "rater can be compared with another. Check that the same item has the same id in every rater's rows.")
    return None
