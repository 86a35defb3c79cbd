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
    "user_message",
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


def user_message(exc: BaseException, *, debug: bool = False) -> str | None:
    """The one line a user is shown for ``exc`` (the command line prints it after ``error:``; exit code 1).

    voirdire's own errors and file-system errors as they are; a file that is not text as "cannot decode";
    running out of memory or recursion as "too large"; anything else as an ``internal error`` naming the
    version, with a hint to report it. ``None`` when the exception must propagate: exits and interrupts
    always, and with ``debug`` every exception that is not voirdire's own or the file system's.

    Examples
    --------
    >>> user_message(SchemaError("no label column", source="a.csv", row=3))
    'a.csv, row 3: no label column'
    >>> user_message(KeyboardInterrupt()) is None
    True
    """
    if isinstance(exc, (SystemExit, KeyboardInterrupt, GeneratorExit)):
        return None
    if isinstance(exc, VoirdireError):
        return str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"cannot decode the input as text ({exc.reason} at byte {exc.start}). Save the file as UTF-8."
    if isinstance(exc, OSError):
        return str(exc) if str(exc) else type(exc).__name__
    if debug:
        return None
    if isinstance(exc, MemoryError):
        return ("too large: the computation ran out of memory. Use fewer items, raters or categories "
                "(or --resamples), or a machine with more memory.")
    if isinstance(exc, RecursionError):
        return "too large: the input is nested too deeply to process."
    from ._safe import one_line
    from ._version import __version__

    detail = one_line(f"{type(exc).__name__}: {exc}")
    if len(detail) > 300:
        detail = detail[:297] + "..."
    return (f"internal error ({detail}). This is a bug in voirdire {__version__}: please report it with the "
            "command you ran; rerun with --debug to see the traceback.")
