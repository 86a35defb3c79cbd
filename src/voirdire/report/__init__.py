"""The validation report: every analysis the data allow, as one self-contained HTML page and JSON.

``build_report`` runs the analyses (and only it calls them); ``render_html`` turns a report into a
page with inline CSS and SVG plots; ``write_report`` writes ``report.html`` and ``report.json``
(validated by :func:`report_schema`); ``render_validation`` / ``render_comparison`` print the
workflows' results on a terminal, ``render_markdown`` / ``render_junit`` summarise a validation for CI. This package is the only place in voirdire where numbers
are rounded and turned into strings. See ``docs/report.md``.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._build import ProgressCallback, build_report
    from ._format import fmt_ci, fmt_int, fmt_num, fmt_p, fmt_pct
    from ._gate import render_junit, render_markdown
    from ._groups import (
        forest_svg, grid_svg, grouped_junit, grouped_markdown, grouped_section, render_grouped_comparison,
        render_grouped_validation,
    )
    from ._html import ReportPaths, render_html, report_schema, write_report
    from ._model import SCHEMA_VERSION, ChecklistItem, Report, Section
    from ._terminal import agreement_table, render_comparison, render_validation

# Each name is imported from its module when first used: `voirdire agree` prints a table with
# `agreement_table` and must not pay for jinja2 and matplotlib, which only the HTML report needs.
_WHERE = {
    "build_report": "_build", "ProgressCallback": "_build",
    "fmt_ci": "_format", "fmt_int": "_format", "fmt_num": "_format", "fmt_p": "_format", "fmt_pct": "_format",
    "render_junit": "_gate", "render_markdown": "_gate",
    "forest_svg": "_groups", "grid_svg": "_groups", "grouped_junit": "_groups", "grouped_markdown": "_groups",
    "grouped_section": "_groups", "render_grouped_comparison": "_groups", "render_grouped_validation": "_groups",
    "ReportPaths": "_html", "render_html": "_html", "report_schema": "_html", "write_report": "_html",
    "SCHEMA_VERSION": "_model", "ChecklistItem": "_model", "Report": "_model", "Section": "_model",
    "agreement_table": "_terminal", "render_comparison": "_terminal", "render_validation": "_terminal",
}


def _submodule(name: str) -> Any:
    # plain imports, one per module, so that the layer test reads what the report imports
    if name == "_build":
        from . import _build

        return _build
    if name == "_format":
        from . import _format

        return _format
    if name == "_gate":
        from . import _gate

        return _gate
    if name == "_groups":
        from . import _groups

        return _groups
    if name == "_html":
        from . import _html

        return _html
    if name == "_model":
        from . import _model

        return _model
    from . import _terminal

    return _terminal


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_submodule(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "build_report",
    "render_html",
    "render_comparison",
    "agreement_table",
    "render_validation",
    "render_markdown",
    "render_junit",
    "render_grouped_validation",
    "render_grouped_comparison",
    "grouped_markdown",
    "grouped_junit",
    "grid_svg",
    "forest_svg",
    "grouped_section",
    "write_report",
    "report_schema",
    "Report",
    "Section",
    "ChecklistItem",
    "ReportPaths",
    "ProgressCallback",
    "SCHEMA_VERSION",
    "fmt_num",
    "fmt_int",
    "fmt_p",
    "fmt_pct",
    "fmt_ci",
]
