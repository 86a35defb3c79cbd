"""Terminal rendering of ``voirdire demo`` (:class:`~voirdire.workflows.DemoAgreement` and the report step)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from .._format import fmt_num
from .._terminal import _text, agreement_table

__all__ = ["render_demo", "render_demo_report"]


def render_demo(console: Console, err_console: Console, res: Any) -> None:
    """The data, the pooled agreement table, alpha per criterion, and how to read them."""
    from rich.table import Table

    s = res.table.summary()
    console.print(
        f"HANNA (bundled, MIT): {s.n_items} items = 1,056 stories x 6 criteria, {s.n_humans} MTurk humans, "
        f"{s.n_judges} LLM judges, scores 1-5 (judges: means of several samples), clustered by story "
        f"({s.n_clusters} clusters).", highlight=False, soft_wrap=True)
    console.print(agreement_table(list(res.overall),
                                  title="All criteria pooled: the humans, then the humans with each judge"))
    console.print(f"95% intervals: {res.methods} over {res.overall[0].results[0].n_units} stories "
                  f"({res.n_resamples} resamples, seed {res.seed}).", highlight=False)
    ct = Table(title="Krippendorff's alpha (interval) per criterion; rows: the humans, then the humans with each judge",
               title_justify="left")
    ct.add_column("raters", style="bold", no_wrap=True)
    for c, _ in res.per_criterion:
        ct.add_column(c[:6], justify="right", no_wrap=True)
    for k, (label, _) in enumerate(res.groups):
        ct.add_row(label.removeprefix("+ ")[:12], *[fmt_num(row[k].estimate, 2) for _, row in res.per_criterion])
    console.print(ct)
    if res.halves is not None:
        console.print(f"Each value has a 95% interval of about +-{res.halves[0]:.2f} to +-{res.halves[1]:.2f} "
                      f"(bootstrap over stories; --format json in `voirdire agree` lists them).", highlight=False)
    console.print(
        "How to read it: the humans' alpha is the reference. A judge that behaves like one more human leaves "
        "alpha where the humans have it; a judge that disagrees with them pulls it down (Llama-13B here); a "
        "judge that raises it agrees with the humans more than they agree with each other (LLM scores here are "
        "means of several samples, which smooths them). Human alpha near 0 (Coherence, Surprise) means the "
        "reference itself is noise: no judge can be validated against it.",
        highlight=False, soft_wrap=True, style="italic")
    for n in res.notes:
        err_console.print(_text(("note:", "yellow"), " ", n), highlight=False, soft_wrap=True)
    console.print(f"Agreement part done in {res.elapsed_s:.1f} s.", highlight=False)


def render_demo_report(console: Console, paths: Any, elapsed_s: float) -> None:
    """Where the demo's validation report is."""
    console.print(f"Validation report written in {elapsed_s:.1f} s. Open it in a browser:", highlight=False)
    console.print(f"  {paths.html.resolve()}", highlight=False, soft_wrap=True, markup=False)
    console.print(f"  every number behind it: {paths.json.resolve()}", highlight=False, soft_wrap=True, markup=False)
