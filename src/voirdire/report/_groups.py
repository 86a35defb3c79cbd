"""Rendering of by-group results (private): the judge x group grid of verdicts (colour and text, so it
reads in print), the per-group statistic as a forest plot, and the CI summaries with one case per
(judge, group). Reads :class:`voirdire.workflows.GroupedValidation` /
:class:`~voirdire.workflows.GroupedComparison` / the ``--by`` estimate of
:func:`voirdire.workflows.estimate_from_file`; computes nothing."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table

from .._safe import escape_control
from ._format import fmt_ci, fmt_num
from ._gate import _FAILS, _ICON, _attr, _md, _text as _xml
from ._terminal import _COLOUR, _WORD, _text, agreement_table

__all__ = ["render_grouped_validation", "render_grouped_comparison", "grouped_markdown", "grouped_junit",
           "grid_svg", "forest_svg", "grouped_section", "grouped_estimate_section", "POOLED"]

#: The pooled column's name in every rendering.
POOLED = "(pooled)"
_SHORT = {"accept": "accept", "reject": "REJECT", "inconclusive": "inconcl."}


def _grid_rows(res: Any) -> list[tuple[str, list[tuple[str, bool]], str]]:
    """Per judge: ``(judge, [(decision, flagged) per group], pooled decision)``."""
    rows = []
    for j in res.judges:
        cells = [(c.verdict.decision, c.slice_flag) for c in res.cells if c.judge == j]
        pv = res.pooled.verdicts.get(j)
        rows.append((j, cells, "inconclusive" if pv is None else pv.decision))
    return rows


def grid_table(res: Any) -> Table:
    """The judge x group grid: each cell the verdict's word in its colour (``!`` marks a flagged slice)."""
    t = Table(title=f"Verdicts by {escape_control(', '.join(res.by))}", title_justify="left")
    t.add_column("judge")
    for g, n in zip(res.groups, res.n_items):
        t.add_column(f"{escape_control(g)}\n({n} items)", justify="center")
    t.add_column(POOLED, justify="center")
    for j, cells, pooled in _grid_rows(res):
        row = [_text(j)]
        for d, flag in cells:
            row.append(_text((_SHORT[d] + (" !" if flag else ""), _COLOUR[d])))
        row.append(_text((_SHORT[pooled], _COLOUR[pooled])))
        t.add_row(*row)
    return t


def forest_table(res: Any) -> Table | None:
    """Per (judge, group) with a worst-slice check: the advantage difference against the rest, its
    interval, and a text forest (``|`` = 0, ``*`` the estimate, ``-`` the interval)."""
    rows = [c for c in res.cells if c.advantage is not None]
    if not rows:
        return None
    lo = min(min(c.advantage_low if c.advantage_low is not None else c.advantage for c in rows), 0.0)
    hi = max(max(c.advantage_high if c.advantage_high is not None else c.advantage for c in rows), 0.0)
    t = Table(title="Worst slice: the judge's advantage in the group minus the rest of the pool",
              title_justify="left")
    for col in ("judge", "group", "difference", "interval", ""):
        t.add_column(col)
    for c in rows:
        t.add_row(_text(c.judge), _text(c.group), fmt_num(c.advantage), fmt_ci(c.advantage_low, c.advantage_high),
                  _text((_bar(c.advantage, c.advantage_low, c.advantage_high, lo, hi), "bold red" if c.slice_flag else "")))
    return t


def _bar(x: float, a: float | None, b: float | None, lo: float, hi: float, width: int = 31) -> str:
    span = (hi - lo) or 1.0

    def pos(v: float) -> int:
        return max(0, min(width - 1, round((v - lo) / span * (width - 1))))

    chars = [" "] * width
    if a is not None and b is not None:
        for k in range(pos(a), pos(b) + 1):
            chars[k] = "-"
    chars[pos(0.0)] = "|"
    chars[pos(x)] = "*"
    return "".join(chars)


def render_grouped_validation(console: Console, err_console: Console, res: Any) -> None:
    """Print a :class:`~voirdire.workflows.GroupedValidation`: the grid, then why, then the slices."""
    p = res.pooled
    console.print(_text((str(p.source), "bold"), f": {len(res.groups)} groups by {', '.join(res.by)}."),
                  highlight=False)
    console.print(grid_table(res))
    console.print(_text("  ", res.rule), highlight=False, soft_wrap=True)
    console.print()
    console.print(_text(("Why", "bold")), highlight=False)
    for c in res.cells:
        if c.verdict.decision == "accept" and not c.slice_flag:
            continue
        why = "; ".join(w.rstrip(".") for w in c.verdict.shown[:2])
        console.print(_text("  ", f"{c.judge} / {c.group}: ", _decision(c.verdict.decision), f" - {why}"),
                      highlight=False, soft_wrap=True)
    for j in res.judges:
        pv = p.verdicts.get(j)
        if pv is not None:
            why = "; ".join(w.rstrip(".") for w in pv.shown[:2])
            console.print(_text("  ", f"{j} / {POOLED}: ", _decision(pv.decision), f" - {why}" if why else ""),
                          highlight=False, soft_wrap=True)
    for s in res.simpson.values():
        console.print(_text("  ", (s, "bold")), highlight=False, soft_wrap=True)
    flags = [c for c in res.cells if c.slice_flag]
    if flags:
        console.print()
        console.print(_text(("Worst slice", "bold")), highlight=False)
        for c in flags:
            console.print(_text("  ", (f"{c.judge} / {c.group}: ", "bold red"), c.slice_reason or ""),
                          highlight=False, soft_wrap=True)
    ft = forest_table(res)
    if ft is not None:
        console.print(ft)
    for n in (*res.notes, *p.notes):
        err_console.print(_text(("note:", "yellow"), " ", n), highlight=False, soft_wrap=True)


def _decision(d: str) -> tuple[str, str]:
    return _WORD[d], _COLOUR[d]


def render_grouped_comparison(console: Console, err_console: Console, res: Any) -> None:
    """Print a :class:`~voirdire.workflows.GroupedComparison`: each group's agreement table, then the pool's."""
    for g, n, r, e in zip(res.groups, res.n_items, res.results, res.errors):
        console.print(_text((f"{', '.join(res.by)} = {g}", "bold"), f" ({n} items)"), highlight=False)
        if r is None:
            console.print(_text("  ", ("not computed", "bold yellow"), f": {e}"), highlight=False, soft_wrap=True)
        else:
            console.print(agreement_table(r.groups, title=f"Agreement on {escape_control(g)}"))
        console.print()
    console.print(_text((POOLED, "bold")), highlight=False)
    console.print(agreement_table(res.pooled.groups, title="Agreement, every group pooled"))
    notes = list(res.pooled.notes) + [n for r in res.results if r is not None for n in r.notes]
    for n in dict.fromkeys(notes):
        err_console.print(_text(("note:", "yellow"), " ", n), highlight=False, soft_wrap=True)


def grouped_markdown(res: Any, *, fail_on: str | None = None) -> str:
    """Markdown: the judge x group grid, one line per (judge, group) that is not a clean accept, the gate."""
    lines = [f"### voirdire validate --by {_md(', '.join(res.by))}: {_md(res.pooled.source)}", ""]
    head = "| judge | " + " | ".join(f"{_md(g)} ({n})" for g, n in zip(res.groups, res.n_items)) + f" | {POOLED} |"
    lines += [head, "|---" * (len(res.groups) + 2) + "|"]
    for j, cells, pooled in _grid_rows(res):
        lines.append(f"| {_md(j)} | " + " | ".join(_ICON[d] + (" (slice flagged)" if f else "") for d, f in cells)
                     + f" | {_ICON[pooled]} |")
    lines += ["", _md(res.rule), ""]
    for c in res.cells:
        lines.append(f"- {_md(c.group)}: {_md(c.verdict.sentence)}")
    for s in res.simpson.values():
        lines.append(f"- {_md(s)}")
    o = res.pooled.options
    lines += ["", f"Seed {o['seed']}, {o['n_resamples']} bootstrap resamples, --group-error {res.group_error}."]
    if fail_on is not None:
        failing = res.failing(_FAILS[fail_on])
        lines.append("")
        lines.append(f"**Gate (--fail-on {fail_on}): {'failed' if failing else 'passed'}**"
                     + (": " + ", ".join(f"{_md(c.judge)} / {_md(c.group)}" for c in failing) if failing else "."))
    return "\n".join(lines) + "\n"


def grouped_junit(res: Any, *, fail_on: str | None = None) -> str:
    """JUnit XML: one test case per (judge, group), classname ``voirdire.validate.<group>``; a case fails
    when its verdict fails the gate (``fail_on``; without it, when the verdict is ``reject``)."""
    fails = _FAILS[fail_on] if fail_on is not None else ("reject",)
    cases, n_fail = [], 0
    for c in res.cells:
        v = c.verdict
        body = ""
        if v.decision in fails:
            n_fail += 1
            body = (f"<failure message={_attr(v.decision + ': ' + ', '.join(v.codes))} type={_attr(v.decision)}>"
                    f"{_xml(v.sentence)}</failure>")
        body += f"<system-out>{_xml(v.sentence)}</system-out>"
        cases.append(f"  <testcase classname={_attr('voirdire.validate.' + c.group)} "
                     f"name={_attr(c.judge + ' / ' + c.group)}>{body}</testcase>")
    suite = (f'<testsuite name={_attr("voirdire validate --by " + ",".join(res.by) + " " + str(res.pooled.source))} '
             f'tests="{len(cases)}" failures="{n_fail}" errors="0">')
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n' + suite + "\n" + "\n".join(cases) \
        + "\n</testsuite>\n</testsuites>\n"


# ------------------------------------------------------------------------------------------------ figures
_FILL = {"accept": "#1a7f37", "reject": "#cf222e", "inconclusive": "#bf8700"}


def grid_svg(res: Any) -> str:
    """The judge x group grid as an SVG: each cell coloured and labelled with the verdict's word
    (readable in black and white); a flagged slice carries ``!``."""
    from xml.sax.saxutils import escape

    rows = _grid_rows(res)
    cols = [*res.groups, POOLED]
    cw, ch, lw, th = 96, 24, 140, 40
    w, h = lw + cw * len(cols), th + ch * len(rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="11" role="img" aria-label="verdicts by group">']
    for k, g in enumerate(cols):
        out.append(f'<text x="{lw + cw * k + cw / 2}" y="{th - 8}" text-anchor="middle">'
                   f'{escape(escape_control(g)[:16])}</text>')
    for r, (j, cells, pooled) in enumerate(rows):
        y = th + ch * r
        out.append(f'<text x="4" y="{y + 16}">{escape(escape_control(j)[:22])}</text>')
        for k, (d, flag) in enumerate([*cells, (pooled, False)]):
            x = lw + cw * k
            out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cw - 2}" height="{ch - 2}" fill="{_FILL[d]}" '
                       f'fill-opacity="0.25" stroke="{_FILL[d]}"/>')
            out.append(f'<text x="{x + cw / 2}" y="{y + 16}" text-anchor="middle">{_SHORT[d]}{" !" if flag else ""}'
                       '</text>')
    out.append("</svg>")
    return "".join(out)


def forest_svg(res: Any) -> str | None:
    """The per-group advantage difference (group minus the rest of the pool) with its interval, one row
    per (judge, group) checked; a flagged slice in red. ``None`` when no judge was checked."""
    from xml.sax.saxutils import escape

    rows = [c for c in res.cells if c.advantage is not None]
    if not rows:
        return None
    vals = [v for c in rows for v in (c.advantage, c.advantage_low, c.advantage_high) if v is not None]
    lo, hi = min(min(vals), 0.0), max(max(vals), 0.0)
    span = (hi - lo) or 1.0
    lw, pw, rh, top = 220, 360, 20, 24

    def X(v: float) -> float:
        return lw + (v - lo) / span * pw

    h = top + rh * len(rows) + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{lw + pw + 20}" height="{h}" font-family="sans-serif" '
           'font-size="11" role="img" aria-label="advantage by group">',
           f'<line x1="{X(0)}" y1="{top - 6}" x2="{X(0)}" y2="{h - 20}" stroke="#888" stroke-dasharray="3,3"/>']
    for r, c in enumerate(rows):
        y = top + rh * r + rh / 2
        colour = "#cf222e" if c.slice_flag else "#333"
        out.append(f'<text x="4" y="{y + 4}">{escape(escape_control(c.judge + " / " + c.group)[:34])}</text>')
        if c.advantage_low is not None and c.advantage_high is not None and math.isfinite(c.advantage_low):
            out.append(f'<line x1="{X(c.advantage_low)}" y1="{y}" x2="{X(c.advantage_high)}" y2="{y}" '
                       f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<circle cx="{X(c.advantage)}" cy="{y}" r="4" fill="{colour}"/>')
    out.append(f'<text x="{lw}" y="{h - 6}">{fmt_num(lo)}</text>'
               f'<text x="{lw + pw}" y="{h - 6}" text-anchor="end">{fmt_num(hi)}</text>'
               f'<text x="{X(0)}" y="{h - 6}" text-anchor="middle">0</text>')
    out.append("</svg>")
    return "".join(out)


# ------------------------------------------------------------------------------------------------ HTML report
def grouped_section(res: Any) -> Any:
    """The report's "By group" section: the rules across groups, the judge x group grid (SVG), one
    table row per (judge, group) and the forest plot of the worst-slice check; ``results`` is the
    :class:`~voirdire.workflows.GroupedValidation`'s ``to_dict()``, so every number on the page is in
    ``report.json``."""
    from ._model import Cell, Figure, Section, Table, Text

    blocks: list[Any] = [Text(text=res.rule, kind="note"),
                         Figure(key="group_grid", title=f"Verdicts by {', '.join(res.by)}", svg=grid_svg(res),
                                caption="Each cell: the verdict's word on its colour (green accept, red reject, "
                                        "amber inconclusive); '!' marks a slice the worst-slice check flags.")]
    rows = []
    for k, c in enumerate(res.cells):
        ptr = f"/sections/groups/results/cells/{k}"
        adv = "-" if c.advantage is None else f"{fmt_num(c.advantage)} {fmt_ci(c.advantage_low, c.advantage_high)}"
        rows.append((Cell(text=c.judge), Cell(text=c.group), Cell(text=str(c.n_items), numeric=True),
                     Cell(text=c.verdict.decision, pointer=f"{ptr}/verdict/decision"),
                     Cell(text=", ".join(c.verdict.codes)),
                     Cell(text=adv, pointer=None if c.advantage is None else f"{ptr}/advantage", numeric=True),
                     Cell(text="flagged" if c.slice_flag else "")))
    blocks.append(Table(key="group_cells", caption="One row per (judge, group)",
                        columns=("judge", "group", "items", "verdict", "reasons", "advantage vs rest", "slice"),
                        rows=tuple(rows)))
    fsvg = forest_svg(res)
    if fsvg is not None:
        blocks.append(Figure(key="group_forest", title="Worst slice: advantage in the group minus the rest of the pool",
                             svg=fsvg, caption="Point: the difference of mean per-item advantage; bar: its interval; "
                                               "red: flagged (Holm over the groups)."))
    for s in res.simpson.values():
        blocks.append(Text(text=s, kind="warning"))
    for c in res.cells:
        if c.slice_flag and c.slice_reason:
            blocks.append(Text(text=f"{c.judge} / {c.group}: {c.slice_reason}", kind="warning"))
    return Section(key="groups", title=f"By group ({', '.join(res.by)})", results=res.to_dict(),
                   blocks=tuple(blocks), warnings=tuple(res.notes))


def grouped_estimate_section(res: Any) -> Any:
    """The report's "By group: mean human score" section: :func:`voirdire.workflows.estimate_from_file`'s ``--by``
    result (``voirdire estimate --by``, the same numbers at the same seed), one row per (group, estimator) and the
    pool's; ``results`` is its ``to_dict()``."""
    from ._model import Cell, Section, Table, Text

    g = res.grouped
    judges = list(res.judges)
    who = judges[0] if len(judges) == 1 else f"the {len(judges)} judges together"
    cl = 100 * res.options["confidence_level"]
    blocks: list[Any] = [Text(kind="note", text=(
        f"The mean human score in each group, with {who} as the predictor and the humans' scores on the design "
        f"sample (inclusion probabilities: {res.inclusion_prob}); {cl:g}% intervals. Each interval is for its own "
        "group; nothing is corrected across groups (an estimate is not a test). These are the numbers of "
        f"`voirdire estimate FILE --by {' --by '.join(g.by)}` at this seed."))]
    rows = []
    records = [*zip(g.groups, g.n_items, g.results, g.errors, range(len(g.groups))),
               (POOLED, res.n_items, g.pooled, g.pooled_error, None)]
    for name, n, r, e, k in records:
        base = "/sections/groups_estimate/results/" + ("pooled" if k is None else f"groups/{k}/result")
        if r is None:
            rows.append((Cell(text=name), Cell(text=str(n), numeric=True), Cell(text="-"), Cell(text="no estimate"),
                         Cell(text=""), Cell(text=""), Cell(text=e or "")))
            continue
        keys = list(r.to_dict()["estimates"])  # the JSON's names of the estimators, in the same order
        for (est_name, est), key in zip(r.estimates.items(), keys):
            rows.append((Cell(text=name), Cell(text=str(n), numeric=True), Cell(text=est_name),
                         Cell(text=fmt_num(est.estimate), numeric=True, pointer=f"{base}/estimates/{key}/estimate"),
                         Cell(text=fmt_ci(est.ci.low, est.ci.high), numeric=True),
                         Cell(text=f"{est.n_labeled} / {est.n_total}", numeric=True), Cell(text="")))
    blocks.append(Table(key="group_estimates", caption="One row per (group, estimator); n / N: human-scored items / "
                                                       "all items", columns=("group", "items", "estimator",
                                                                             "estimate", "interval", "n / N", "note"),
                        rows=tuple(rows)))
    return Section(key="groups_estimate", title=f"By group ({', '.join(g.by)}): mean human score",
                   results=res.to_dict(), blocks=tuple(blocks), warnings=tuple(res.warnings))
