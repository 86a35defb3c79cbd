"""Input checks shared by the validation functions (private)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._checks import check_epsilon, fraction_hint  # noqa: F401 - check_epsilon re-exported for validation
from ..data import AnnotationTable
from ..exceptions import InvalidParameterError

JUDGE = "judge"


def check_table(table: Any, func: str) -> AnnotationTable:
    if not isinstance(table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'table' parameter of {func} must be an AnnotationTable (see voirdire.read_annotations). "
            f"Got {type(table).__name__} instead.")
    return table


def resolve_judges(table: AnnotationTable, judges: str | Sequence[str], func: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Names, column indices of the judges, and column indices of the humans; clear errors."""
    names = [judges] if isinstance(judges, str) else list(judges)
    if not names:
        raise InvalidParameterError(f"{func} needs at least one judge. Judges in {table.source}: {list(table.judges)}.")
    if len(set(map(str, names))) != len(names):
        raise InvalidParameterError(f"The judges given to {func} repeat a name: {names}.")
    jidx = []
    for name in names:
        if not isinstance(name, str):
            raise InvalidParameterError(f"A judge name given to {func} must be a str. Got {name!r}.")
        hits = np.flatnonzero(table.raters == name)
        if hits.size == 0:
            known = list(table.judges) or list(map(str, table.raters))[:12]
            raise InvalidParameterError(
                f"Judge {name!r} is not in {table.source}. Judges there: {list(table.judges)}; raters: {known}.")
        j = int(hits[0])
        if table.roles[j] != JUDGE:
            raise InvalidParameterError(
                f"Rater {name!r} is marked human in {table.source}, so it cannot be the judge under test "
                f"(it would also sit in the human pool). Mark it as a judge: table.with_roles(judges=[...]) "
                f"or --judge {name} on the command line.")
        jidx.append(j)
    hidx = table.human_idx
    if hidx.size < 2:
        raise InvalidParameterError(
            f"{func} needs at least two human raters (one held out, at least one in the pool). "
            f"{table.source} has {hidx.size}: {list(table.humans)}.")
    return [str(n) for n in names], np.asarray(jidx, dtype=np.intp), hidx


def check_nonneg_int(value: Any, name: str, func: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be an integer >= 0. Got {value!r} instead.")
    return int(value)


def category_values(table: AnnotationTable) -> np.ndarray:
    """Numeric value of each category (the category itself on numeric scales, else its position)."""
    L = table.n_categories
    if table.scale.is_numeric:
        return np.asarray([float(c) for c in (table.scale.categories or ())], dtype=float)
    return np.arange(L, dtype=float)
