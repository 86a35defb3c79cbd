"""Rendering a :class:`Report` to one self-contained HTML page, and writing it with its JSON (private)."""

from __future__ import annotations

import dataclasses
import json
import os
from importlib import resources
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from .._results import Result
from .._safe import escape_control
from ..exceptions import InvalidParameterError
from ._format import fmt_int, fmt_num, fmt_pct
from ._model import Figure, Report, Table, Text

__all__ = ["render_html", "write_report", "report_schema", "ReportPaths"]


def _template_text(name: str) -> str:
    return resources.files("voirdire.report").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``report.json``.

    Examples
    --------
    >>> report_schema()["properties"]["schema_version"]["const"]
    '1.0'
    """
    return json.loads(_template_text("report.schema.json"))


def _kind_of(block: Any) -> str:
    if isinstance(block, Text):
        return "text"
    if isinstance(block, Table):
        return "table"
    if isinstance(block, Figure):
        return "figure"
    return "unknown"


def _shown_as_itself(value: Any) -> Any:
    """Every text the template prints (names from the annotation file) with control characters and
    bidirectional overrides escaped (``\\x1b``, ``\\u202e``) as the terminal shows them: autoescape
    stops markup, not an escape sequence or a reordering of what the reader sees. Pre-rendered
    markup (the SVG figures) passes as it is."""
    import markupsafe

    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return escape_control(value, keep="\n\t")
    return value


def render_html(report: Report) -> str:
    """The report as one self-contained HTML page (inline CSS and SVG, no script, no network).

    Every user-supplied string (rater names, item ids, labels, file names) is HTML-escaped by the
    template engine (autoescape on); the page's Content-Security-Policy forbids scripts and any
    network request, so even a hostile string could not run code.

    Parameters
    ----------
    report : Report
        From :func:`build_report`.

    Returns
    -------
    str
        The HTML document.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> from voirdire.report import build_report, render_html
    >>> html = render_html(build_report(load_hanna(criterion="Coherence").select(items=range(40)), n_resamples=20))
    >>> html.startswith("<!DOCTYPE html>"), "<script" in html
    (True, False)
    """
    import jinja2

    if not isinstance(report, Report):
        raise InvalidParameterError(
            f"The 'report' parameter of render_html must be a Report (from build_report). Got {type(report).__name__}.")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=False, lstrip_blocks=False, finalize=_shown_as_itself)
    env.globals["kind_of"] = _kind_of
    tpl = env.from_string(_template_text("report.html.j2"))
    s = report.summary
    cards = [
        {"label": "items", "value": fmt_int(s.get("n_items")), "pointer": "/summary/n_items"},
        {"label": "humans", "value": fmt_int(s.get("n_humans")), "pointer": "/summary/n_humans"},
        {"label": "LLM judges", "value": fmt_int(s.get("n_judges")), "pointer": "/summary/n_judges"},
        {"label": "labels", "value": fmt_int(s.get("n_labels")), "pointer": "/summary/n_labels"},
        {"label": "scale", "value": str((s.get("scale") or {}).get("level", "")), "pointer": None},
        {"label": "density (labels / items × raters)", "value": fmt_num(s.get("density"), 3),
         "pointer": "/summary/density"},
    ]
    if s.get("n_abstentions"):
        cards.append({"label": "abstentions", "value": fmt_int(s.get("n_abstentions")),
                      "pointer": "/summary/n_abstentions"})
    if s.get("n_clusters"):
        cards.append({"label": "clusters", "value": fmt_int(s.get("n_clusters")), "pointer": "/summary/n_clusters"})
    cl = report.meta.get("confidence_level")
    return tpl.render(report=report, meta=report.meta, cards=cards, css=_template_text("report.css"),
                      cl_pct=fmt_pct(cl, 0) if cl is not None else "")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReportPaths(Result):
    """Where :func:`write_report` wrote the report."""

    html: Path
    json: Path
    out_dir: Path


def write_report(report: Report, out_dir: str | os.PathLike[str], *,
                 inputs: Sequence[str | os.PathLike[str] | None] = ()) -> ReportPaths:
    """Write ``report.html`` and ``report.json`` into ``out_dir`` (created if needed).

    Parameters
    ----------
    report : Report
        From :func:`build_report`.
    out_dir : path-like
        Output folder; existing ``report.html``/``report.json`` there are replaced.

    Returns
    -------
    ReportPaths
        ``html``, ``json`` and ``out_dir`` paths.

    Raises
    ------
    InvalidParameterError
        ``out_dir`` exists and is not a folder.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"The output path {str(out)!r} exists and is not a folder. Choose a folder with -o.")
    out.mkdir(parents=True, exist_ok=True)
    html_path, json_path = out / "report.html", out / "report.json"
    html = render_html(report)
    doc = report.to_dict()
    text_j = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    from .._io import atomic_outputs

    # both appear complete or not at all (temp files under random names: a planted link is never followed)
    with atomic_outputs(inputs=inputs) as files:
        with files.open(html_path) as fh:
            fh.write(html)
        with files.open(json_path) as fh:
            fh.write(text_j)
    return ReportPaths(html=html_path, json=json_path, out_dir=out)
