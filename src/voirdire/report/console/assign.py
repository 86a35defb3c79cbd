"""Terminal rendering of ``voirdire assign`` (:class:`~voirdire.workflows.BatchDraw` and the files written)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from .._format import fmt_int

__all__ = ["render_assignment"]


def render_assignment(console: Console, draw: Any, *, design: str, source: str, file: str, written: Any,
                      manifest: Any) -> None:
    """Items per rater, the strata, the files written, and what the annotators will not see."""
    from rich.table import Table

    res = draw.assignment
    t = Table(title=f"{design} assignments from {source}", title_justify="left")
    t.add_column("rater")
    t.add_column("items", justify="right")
    for r, n in zip(res.raters, res.n_per_rater):
        t.add_row(r, fmt_int(n))
    console.print(t)
    strata = ", ".join(f"{k}: {fmt_int(v)}" for k, v in res.strata.items())
    console.print(f"Strata ({'primary ' + res.primary if res.primary else 'per-item mode of all humans'}): {strata}.",
                  highlight=False, soft_wrap=True)
    console.print(f"Wrote {written} and {manifest} (seed {res.seed}).", highlight=False, soft_wrap=True)
    if draw.n_with_content is not None and draw.n_with_content < draw.n_items:
        console.print(f"{draw.n_items - draw.n_with_content:,} of {draw.n_items:,} items have no content from {file} "
                      "(only a Label Studio or Argilla export holds it): their tasks carry the item id only; add the "
                      "text the annotators must see before importing.", style="yellow", highlight=False, soft_wrap=True)
    if res.label_dependent:
        console.print("This design picks items using labels: the masks depend on the labels, which the "
                      "independent-mask variance results do not cover. Say so when you report.", style="dim",
                      highlight=False, soft_wrap=True)
