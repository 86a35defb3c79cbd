"""The report's data model (private): a :class:`Report` is a list of sections; a section holds the
JSON-safe results of the analyses it ran and the blocks (text, tables, figures) that show them."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Literal

from .._results import Result

__all__ = ["Cell", "Text", "Table", "Figure", "Section", "ChecklistItem", "Report", "SCHEMA_VERSION"]

#: Version of the JSON document written beside the HTML page (``report.json``).
SCHEMA_VERSION = "1.0"

SectionStatus = Literal["ok", "not available", "error"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One table cell: its text, and the JSON pointer of the number it shows (if it shows one)."""

    text: str
    pointer: str | None = None
    numeric: bool = False
    title: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Text:
    """A paragraph; ``kind`` is ``"p"`` (plain), ``"note"`` (how to read), ``"warning"`` or ``"h3"``
    (a sub-heading, optionally with a decision ``badge``)."""

    text: str
    kind: Literal["p", "note", "warning", "h3"] = "p"
    badge: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Table:
    """A small table of formatted cells (headers are plain strings)."""

    key: str
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    """An inline SVG figure (matplotlib output, without the XML prologue)."""

    key: str
    title: str
    svg: str
    caption: str = ""


Block = Text | Table | Figure


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Section(Result):
    """One part of the report.

    Attributes
    ----------
    key : str
        Identifier (HTML anchor and key in the JSON ``sections`` object).
    title : str
        Heading.
    status : {"ok", "not available", "error"}
        ``"not available"`` when the data or the installed analyses do not allow the section
        (``reason`` says why); ``"error"`` when an analysis raised (``reason`` holds its message).
    results : dict
        The ``to_dict()`` of every analysis the section ran (JSON-safe, raw numbers).
    blocks : tuple
        What the page shows: :class:`Text`, :class:`Table` and :class:`Figure` blocks.
    warnings : tuple of str
        Warnings the analyses raised while running (e.g. degenerate data).
    """

    key: str
    title: str
    status: SectionStatus = "ok"
    reason: str = ""
    results: dict[str, Any] = dataclasses.field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def figures(self) -> tuple[Figure, ...]:
        return tuple(b for b in self.blocks if isinstance(b, Figure))

    def to_dict(self) -> dict[str, Any]:
        """A copy: changing it never changes the (frozen) section."""
        return {
            "title": self.title, "status": self.status, "reason": self.reason,
            "results": copy.deepcopy(self.results), "warnings": list(self.warnings),
            "figures": [{"key": f.key, "title": f.title, "caption": f.caption} for f in self.figures],
        }


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ChecklistItem:
    """One line of the reporting checklist (METHODS.md §1)."""

    item: str
    value: str
    detail: str = ""
    section: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item, "value": self.value, "detail": self.detail, "section": self.section}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Report(Result):
    """A validation report: header data, the filled-in reporting checklist and the sections.

    Build one with :func:`build_report`; show it with :func:`render_html`; save it (HTML and
    JSON) with :func:`write_report`. ``to_dict()`` is the JSON document (``report.json``), which
    holds every number of every analysis but not the figures' SVG.
    """

    title: str
    meta: dict[str, Any]
    summary: dict[str, Any]
    checklist: tuple[ChecklistItem, ...]
    sections: tuple[Section, ...]
    schema_version: str = SCHEMA_VERSION

    def section(self, key: str) -> Section | None:
        """The section called ``key``, or ``None``."""
        return next((s for s in self.sections if s.key == key), None)

    @property
    def figures(self) -> tuple[Figure, ...]:
        return tuple(f for s in self.sections for f in s.figures)

    @property
    def not_available(self) -> tuple[Section, ...]:
        return tuple(s for s in self.sections if s.status != "ok")

    def to_dict(self) -> dict[str, Any]:
        """The JSON document, a copy: changing it never changes the report."""
        return {
            "schema_version": self.schema_version,
            "title": self.title,
            "meta": copy.deepcopy(self.meta),
            "summary": copy.deepcopy(self.summary),
            "checklist": [c.to_dict() for c in self.checklist],
            "sections": {s.key: s.to_dict() for s in self.sections},
            "not_available": [{"section": s.key, "title": s.title, "status": s.status, "reason": s.reason}
                              for s in self.not_available],
        }

    def to_frame(self) -> Any:
        """One row per section: key, title, status, reason, number of figures."""
        import pandas as pd

        return pd.DataFrame([{"section": s.key, "title": s.title, "status": s.status, "reason": s.reason,
                              "n_figures": len(s.figures)} for s in self.sections])
