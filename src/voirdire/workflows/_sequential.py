"""``watch_judges``: the running anytime-valid decision per judge over rounds of labels (private).

The one loop behind ``voirdire watch``, ``validate --sequential`` and ``study status``: each judge's
:func:`voirdire.validation.validate_sequential` on every label with its round, at one seed. Every view
shows it beside the verdict of :func:`validate_judges` (:func:`judge_verdicts`), never instead of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..exceptions import InvalidParameterError
from ._seeds import check_seed

__all__ = ["watch_judges"]


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
