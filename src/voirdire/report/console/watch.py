"""Terminal view of sequential validation (``voirdire watch``, ``validate --sequential``): each judge's looks,
its running anytime-valid decision, and beside it the one verdict of the judge.

Renders :class:`voirdire.workflows.SequentialValidation` and
:class:`~voirdire.workflows.GroupedSequentialValidation`; computes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ._lines import line

__all__ = ["line", "render_looks", "render_verdicts", "render_watch", "render_watch_by", "render_running_by", "render_version",
           "verdict_text", "render_groups"]

_NOTE = ("Anytime-valid: the decision may be read after every round without inflating its error (betting "
         "e-processes, e-BH across humans). 'more per human': expected further comparisons at the current estimates.")


def verdict_text(e: Any) -> str:
    """What a judge's verdict line says after its decision: the advice, else the verdict's own reasons."""
    return (e.advice.sentence if e.advice is not None else "; ".join(m.rstrip(".") for m in e.verdict.shown)) + "."


def _more(r: Any, i: int, n_items: int | None) -> str:
    from .._format import fmt_int

    more = r.more_items[i]
    if not math.isfinite(more):
        return "none expected" if r.decisions[i] == "continue" and r.n_compared[i] >= 2 else ""
    if n_items is not None and more > n_items:
        return f"cannot be settled with the {fmt_int(n_items)} items you have"
    return f"{fmt_int(more)} ({r.more_direction[i]})"


def render_looks(console: Any, results: Sequence[Any], *, since: int = 0, n_items: int | None = None) -> None:
    """One table of looks per judge (from look ``since`` on), the humans at the deciding (or last) look, then
    the running decision's line. With ``n_items`` (the items on hand), a 'more per human' above it reads
    "cannot be settled with the N items you have" instead of a number nobody can act on."""
    from rich import box
    from rich.table import Table

    from .._format import fmt_int, fmt_num

    for r in results:
        t = Table(title=f"{r.judge}: sequential {r.method} (epsilon {r.epsilon:g}, e-BH q {r.q:g})",
                  title_justify="left", box=box.SIMPLE_HEAD)
        for c in ("look", "humans", "wins", "losses", "decision", "more per human"):
            t.add_column(c, justify="left" if c in ("look", "decision") else "right", no_wrap=True)
        for i in range(since, len(r.looks)):
            t.add_row(r.looks[i], fmt_int(r.n_compared[i]), fmt_int(r.n_win[i]), fmt_int(r.n_loss[i]),
                      r.decisions[i], _more(r, i, n_items))
        console.print(t)
        at = r.looks.index(r.decided_at) if r.decided_at is not None else len(r.looks) - 1
        h = Table(box=box.SIMPLE_HEAD, title=f"per human at look {r.looks[at]}"
                  + (" (the decision)" if r.decided_at is not None else ""), title_justify="left")
        for c in ("human", "n", "estimate", "95% CS", "e win", "e loss", "status"):
            h.add_column(c, justify="left" if c in ("human", "status") else "right",
                         no_wrap=c != "human", overflow="fold", min_width=len(c))
        for k, name in enumerate(r.humans):
            h.add_row(name, fmt_int(r.n_items[at, k]), fmt_num(r.estimate[at, k]),
                      f"[{fmt_num(r.ci_low[at, k])}, {fmt_num(r.ci_high[at, k])}]", fmt_num(r.e_win[at, k], 2),
                      fmt_num(r.e_loss[at, k], 2), str(r.status[at, k]))
        console.print(h)
        colour = {"accept": "green", "reject": "red"}.get(r.decision, "yellow")
        console.print(line(("running anytime-valid decision: ", "dim"), (r.decision.upper(), f"bold {colour}"),
                           f"  {r.judge}: {r.reasons[at]}" + (f" (look {r.looks[at]})" if r.decided_at is not None
                                                              else "")), highlight=False, soft_wrap=True)
    console.print(_NOTE, style="dim", highlight=False, soft_wrap=True)


def render_verdicts(console: Any, res: Any, *, command: str = "voirdire validate") -> None:
    """The verdict per judge (as ``command``), after the running anytime-valid decision so that the two are
    read together: the running decision is what this view adds, never the verdict."""
    for e in [] if res.verdicts is None else res.verdicts.judges:
        console.print(line((f"Verdict {e.judge} (as {command}, seed {res.seed}): "
                            f"{e.verdict.decision.upper()}", "bold"), " - ", verdict_text(e)),
                      highlight=False, soft_wrap=True)


def render_watch(console: Any, res: Any, *, command: str = "voirdire validate") -> None:
    """A :class:`~voirdire.workflows.SequentialValidation`: every judge's looks, then the verdicts."""
    render_looks(console, res.results, n_items=res.n_items)
    render_verdicts(console, res, command=command)


def render_running_by(console: Any, res: Any) -> None:
    """``watch --by --follow``'s line per new version: each (judge, group)'s running decision and its last look."""
    cells = []
    for g, _, r, e in res.parts():
        for x in [] if r is None else r.results:
            cells.append(f"{x.judge} / {g}: {x.decision} (look {x.looks[-1] if x.looks else '-'})")
        if r is None:
            cells.append(f"{g}: no decision ({e})")
    console.print(line(("running anytime-valid decisions: ", "dim"), "; ".join(cells)), highlight=False,
                  soft_wrap=True)


def render_version(console: Any, res: Any, previous: Any) -> None:
    """``watch --follow``'s view of each new version read: with ``--by`` one line of running decisions, else
    the looks not shown yet (the last one shown again: it may have grown)."""
    if hasattr(res, "watch"):
        render_running_by(console, res)
    else:
        since = 0 if previous is None else max(0, len(res.results[0].looks) - 1)
        render_looks(console, res.results, since=since, n_items=res.n_items)


def render_watch_by(console: Any, res: Any) -> None:
    """A :class:`~voirdire.workflows.GroupedSequentialValidation`: each group's looks and decision beside its
    verdicts, then the pool's."""
    render_groups(console, res, lambda r, g: render_watch(
        console, r, command=f"voirdire validate --by {','.join(res.by)}" if g != "(pooled)" else "voirdire validate"))
    console.print("The e-BH level q holds within each group; nothing is corrected across groups. A group's "
                  "decisions are those of --where on it at the same seed.", highlight=False, soft_wrap=True)
    if res.verdicts is not None:
        console.print(f"Verdicts: {res.verdicts.rule}", style="dim", highlight=False, soft_wrap=True)


def render_groups(console: Any, res: Any, render: Any, *, blank: bool = True) -> None:
    """Each part of a grouped sequential result (the groups, then the pool) under its heading: ``render(result,
    group)`` for a group with a decision, its reason for one without; with ``blank``, a blank line after each."""
    for g, n, r, e in res.parts():
        head = f"{', '.join(res.by)} = {g}" if g != "(pooled)" else g
        if r is None:
            console.print(line((head, "bold"), f" ({n} items): ", ("no decision", "bold yellow"), f": {e}"),
                          highlight=False, soft_wrap=True)
        else:
            console.print(line((head, "bold"), f" ({n} items)"), highlight=False, soft_wrap=True)
            render(r, g)
        if blank:
            console.print()
