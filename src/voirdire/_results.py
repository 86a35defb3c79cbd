"""Result base classes shared by every analysis (private).

Every public function returns a frozen, slotted, keyword-only dataclass deriving from
:class:`Result`. Results hold raw floats and numpy arrays; formatting lives in ``report``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ConfidenceInterval", "Result", "to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays, dataclasses, frames and nan to JSON-safe Python objects.

    ``nan`` and infinities become ``None`` (JSON has no nan).
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "to_dict"):
            return to_jsonable(value.to_dict())  # a custom to_dict may still hold nan or numpy scalars
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, pd.DataFrame):
        return [to_jsonable(r) for r in value.to_dict(orient="records")]
    if isinstance(value, pd.Series):
        return to_jsonable(value.to_dict())
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if value is None or isinstance(value, (int, str)):
        return value
    return str(value)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """Base of every result object: ``to_dict()`` (JSON-safe) and ``to_frame()`` (tidy)."""

    def to_dict(self) -> dict[str, Any]:
        """All fields as JSON-safe Python objects (nan becomes None)."""
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def to_frame(self) -> pd.DataFrame:
        """A one-row tidy frame of the scalar fields (override for multi-row results)."""
        row: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, ConfidenceInterval):
                row[f"{f.name}_low"] = v.low
                row[f"{f.name}_high"] = v.high
            elif isinstance(v, (int, float, str, bool, np.number, type(None))):
                row[f.name] = v
        return pd.DataFrame([row])


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ConfidenceInterval(Result):
    """A two-sided (or one-sided, with an infinite bound) confidence interval."""

    low: float
    high: float
    confidence_level: float
    method: str = ""

    def __contains__(self, value: float) -> bool:
        return bool(self.low <= value <= self.high)

    @property
    def width(self) -> float:
        return float(self.high - self.low)
