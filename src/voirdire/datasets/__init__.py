"""Data sets bundled with voirdire (licences allow redistribution)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["hanna_path", "load_hanna"]


def hanna_path() -> Path:
    """Path of the bundled compact HANNA table (MIT licence; see its README)."""
    return Path(str(resources.files("voirdire.datasets").joinpath("hanna/hanna_long.csv.gz")))


def load_hanna(*, criterion: str | None = None, **kwargs: Any) -> Any:
    """The bundled HANNA story ratings as an :class:`~voirdire.data.AnnotationTable`.

    Three MTurk humans and five LLM judges (prompt variant 1) rate 1,056 stories on six criteria
    (1-5). Items are ``<story>__<criterion>``, clustered by story; LLM scores are means of
    several generations, so the scale is interval; ``-1`` (unparsed LLM answer) is an abstention.

    Parameters
    ----------
    criterion : str, optional
        Keep one criterion (``"Relevance"``, ``"Coherence"``, ``"Empathy"``, ``"Surprise"``,
        ``"Engagement"``, ``"Complexity"``).
    **kwargs
        Passed to :meth:`AnnotationTable.from_frame` (e.g. ``scale=``).

    Examples
    --------
    >>> t = load_hanna(criterion="Coherence")
    >>> t.n_items, t.humans, len(t.judges)
    (1056, ('human_1', 'human_2', 'human_3'), 5)
    """
    import pandas as pd

    from ..data import AnnotationTable
    from ..exceptions import InvalidParameterError

    df = pd.read_csv(hanna_path())
    if criterion is not None:
        if criterion not in set(df["criterion"]):
            raise InvalidParameterError(
                f"The 'criterion' parameter of load_hanna must be one of {sorted(set(df['criterion']))}. "
                f"Got {criterion!r} instead.")
        df = df[df["criterion"] == criterion]
    kwargs.setdefault("scale", "interval")
    kwargs.setdefault("abstain", (-1,))
    return AnnotationTable.from_frame(df, item="item", rater="rater", label="score", role="role",
                                      cluster="story", source=f"hanna ({hanna_path().name})", **kwargs)
