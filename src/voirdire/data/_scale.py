"""The measurement scale of a label column."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from .. import _options
from .._results import Result
from ..exceptions import InvalidParameterError

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = _options.LEVELS  # the one registry of option values

__all__ = ["Scale", "Level", "LEVELS"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Scale(Result):
    """What the labels mean: level of measurement, category order and abstention values.

    Parameters
    ----------
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement. Nominal labels are unordered; ordinal labels have an order
        (given by ``categories``); interval and ratio labels are numbers.
    categories : tuple, optional
        The substantive categories in their order. For interval/ratio data with many distinct
        values this is the sorted tuple of distinct values observed. ``None`` until a table
        fixes it.
    abstain : tuple
        Label values that mean "cannot assess". They are kept out of ``categories`` and handled
        by an explicit abstention policy in :mod:`voirdire.agreement`.

    Examples
    --------
    >>> Scale(level="ordinal", categories=(1, 2, 3, 4, 5)).is_numeric
    True
    """

    level: Level = "nominal"
    categories: tuple[Any, ...] | None = None
    abstain: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise InvalidParameterError(
                f"The 'level' parameter of Scale must be one of {list(LEVELS)}. Got {self.level!r} instead."
            )
        if self.categories is not None:
            cats = tuple(self.categories)
            if len(set(cats)) != len(cats):
                raise InvalidParameterError(f"Scale categories must be distinct. Got {list(cats)}.")
            object.__setattr__(self, "categories", cats)
            overlap = set(cats) & set(self.abstain)
            if overlap:
                raise InvalidParameterError(
                    f"Values {sorted(map(str, overlap))} are declared both as categories and as abstention values."
                )
        object.__setattr__(self, "abstain", tuple(self.abstain))

    @property
    def is_numeric(self) -> bool:
        """Whether every category is a number (always true for interval and ratio scales)."""
        if self.level in ("interval", "ratio"):
            return True
        if self.categories is None:
            return False
        return all(_is_number(c) for c in self.categories)

    @property
    def n_categories(self) -> int:
        return 0 if self.categories is None else len(self.categories)

    def to_dict(self) -> dict[str, Any]:
        cats = None if self.categories is None else [_plain(c) for c in self.categories]
        if cats is not None and len(cats) > 50:
            cats = cats[:50] + [f"... ({len(self.categories or ())} in all)"]
        return {"level": self.level, "categories": cats, "abstain": [_plain(a) for a in self.abstain]}


def _is_number(x: Any) -> bool:
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return not isinstance(x, bool)


def _plain(x: Any) -> Any:
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x
