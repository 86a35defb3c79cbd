"""Errors and warnings raised by voirdire.

Every error derives from :class:`VoirdireError`, so ``except VoirdireError`` catches
everything the library raises on purpose. Warnings derive from :class:`VoirdireWarning`.
"""

from __future__ import annotations

__all__ = [
    "VoirdireError",
    "SchemaError",
    "InvalidParameterError",
    "InfeasiblePlanError",
    "UndefinedStatisticError",
    "VoirdireWarning",
    "DegenerateDataWarning",
    "ConvergenceWarning",
    "SmallSampleWarning",
]


class VoirdireError(Exception):
    """Base class of every error voirdire raises on purpose."""


class SchemaError(VoirdireError, ValueError):
    """Input data do not match the expected schema.

    The message names the file, the row and the column where possible, and says how to fix it.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        row: int | str | None = None,
        column: str | None = None,
    ) -> None:
        self.source = source
        self.row = row
        self.column = column
        where = []
        if source is not None:
            where.append(str(source))
        if row is not None:
            where.append(f"row {row}" if isinstance(row, int) else str(row))
        if column is not None:
            where.append(f"column '{column}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class InvalidParameterError(VoirdireError, ValueError):
    """A parameter has an invalid type or value."""


class InfeasiblePlanError(VoirdireError, ValueError):
    """A planning problem has no solution (the message says why)."""


class UndefinedStatisticError(VoirdireError, ArithmeticError):
    """A statistic is undefined on these data (raised when ``on_undefined="raise"``)."""


class VoirdireWarning(UserWarning):
    """Base class of voirdire's warnings."""


class DegenerateDataWarning(VoirdireWarning):
    """A statistic is undefined (zero denominator, one category, no overlap); ``nan`` returned."""


class ConvergenceWarning(VoirdireWarning):
    """An iterative algorithm stopped before meeting its tolerance."""


class SmallSampleWarning(VoirdireWarning):
    """Too few items or pairs for the asymptotic approximation to be trusted."""
