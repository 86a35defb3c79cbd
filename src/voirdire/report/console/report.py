"""Terminal lines of ``voirdire report``: where the page went, the sections it could not compute."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ..._safe import escape_control

__all__ = ["render_written_report"]


def render_written_report(console: Console, err_console: Console, rep: Any, paths: Any) -> str | None:
    """Say on ``err_console`` each section that is not available and why, then the two files written.

    Returns
    -------
    str or None
        The error to end with when no analysis of the page could be computed (a page of errors is no
        report), else None.
    """
    for s in rep.not_available:
        line = Text(escape_control(f"{s.status}:", keep="\n\t"), style="yellow")
        line.append(escape_control(f" {s.title}: {s.reason}", keep="\n\t"))
        err_console.print(line, highlight=False, soft_wrap=True)
    console.print(f"Report: {paths.html}", highlight=False, soft_wrap=True, markup=False)
    console.print(f"JSON:   {paths.json}", highlight=False, soft_wrap=True, markup=False)
    analyses = [s for s in rep.sections if s.key != "data"]
    failed = [s for s in analyses if s.status == "error"]
    if failed and not any(s.status == "ok" for s in analyses):
        return (f"no section of the report could be computed ({len(failed)} failed, the others do not apply); "
                f"the page lists why. First: {failed[0].title}: {failed[0].reason}")
    return None
