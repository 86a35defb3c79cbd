"""The one line builder of the terminal renderers: plain and ``(text, style)`` parts, shown literally."""

from __future__ import annotations

from typing import Any

__all__ = ["line"]


def line(*parts: str | tuple[str, str], keep: str = "\n\t") -> Any:
    """One Rich ``Text`` from plain and ``(text, style)`` parts, each shown literally (control characters
    escaped, the ``keep`` ones (newlines and tabs) kept), whatever the parts hold (rater names, file names,
    labels)."""
    from rich.text import Text

    from ..._safe import escape_control

    out = Text()
    for part in parts:
        text, style = part if isinstance(part, tuple) else (part, "")
        out.append(escape_control(text, keep=keep), style=style)
    return out
