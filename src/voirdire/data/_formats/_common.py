"""What every format reader shares: the long frame it hands back, short echoes, optional extras."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from ..._optional import MissingExtraError, require
from ..._safe import shown
from ...exceptions import SchemaError

__all__ = ["ToolFrame", "shown", "shaped", "require_extra", "MissingExtraError", "load_json", "LONG_COLUMNS"]

LONG_COLUMNS = ["item", "rater", "label", "role"]


def require_extra(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module`` or fail with one line naming the extra that installs it."""
    return require(module, what, extra)


def load_json(p: Path, src: str) -> Any:
    """The JSON in ``p`` (``.gz``/``.bz2``/``.xz`` decompressed); NUL bytes, non-UTF-8 bytes, syntax errors,
    too deep nesting and huge integers are a :class:`SchemaError` naming the file (and line)."""
    from .._source import check_text, decode_text, loads_json, read_bytes

    data = read_bytes(p, src)
    check_text(data, src, what="JSON")
    return loads_json(decode_text(data, src), src)


@contextlib.contextmanager
def shaped(what: str, src: str, where: str | None = None) -> Iterator[None]:
    """Read a tool's export inside this: a field holding a value of another type than the tool
    writes (a number where the export has an object, a list where it has a name) is a
    :class:`SchemaError` naming the file, ``where`` (the task or record) and what the file was
    taken for, never an internal error. Readers check the fields they know by name; this guard
    catches the ones a hand-edited or foreign file breaks in ways nobody listed."""
    try:
        yield
    except (AttributeError, TypeError, KeyError, IndexError) as exc:
        why = shown(f"{type(exc).__name__}: {exc}", 100, quote=False)
        raise SchemaError(f"does not have the shape of {what}: a field holds a value of another type ({why}). "
                          "Check the file, or say what it holds with --format-in.", source=src, row=where) from None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolFrame:
    """A tool's export flattened to one row per label.

    ``frame`` has the columns item, rater, label and role (``human``/``judge``); ``rows`` says
    where each row came from (``"task 3, annotation 12"``) for error messages; ``skipped``
    counts what was left out and why (it ends up in ``table.summary().dropped``).
    """

    frame: pd.DataFrame
    rows: np.ndarray
    skipped: dict[str, int]
    taken_for: str

    @classmethod
    def build(cls, records: list[tuple[Any, Any, Any, str, str]], *, skipped: dict[str, int], taken_for: str,
              src: str, what: str) -> ToolFrame:
        if not records:
            lost = ", ".join(f"{v} {k}" for k, v in skipped.items() if v)
            raise SchemaError(f"the {taken_for} holds no {what}" + (f" ({lost} skipped)." if lost else "."), source=src)
        df = pd.DataFrame.from_records([r[:4] for r in records], columns=LONG_COLUMNS)
        rows = np.array([r[4] for r in records], dtype=object)
        return cls(frame=df, rows=rows, skipped={k: v for k, v in skipped.items() if v}, taken_for=taken_for)
