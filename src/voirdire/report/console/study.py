"""Terminal view of ``voirdire study status``: rounds, coverage, and per judge the one verdict with the running
anytime-valid decision beside it (labelled as such, never instead of it). Computes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .watch import line, render_groups, verdict_text

__all__ = ["render_added", "render_assigned", "render_status", "render_status_by", "render_status_decisions",
           "render_study_status", "study_status_json"]


def study_status_json(st: Any, seq: Any, why: str | None, *, by: bool) -> dict[str, Any]:
    """``study status --format json``: the status ``st``, the running decisions ``seq`` (None: ``why`` there
    are none); with ``by``, ``seq`` is grouped and its records are given as ``watch --by`` gives them."""
    if by:
        return {**st.to_dict(), **({} if seq is None else seq.to_dict()), "sequential_note": why}
    return {**st.to_dict(), "sequential": [] if seq is None else [r.to_dict() for r in seq.running],
            "sequential_note": why, "verdicts": [] if seq is None else seq.verdicts_dict()}


def render_study_status(console: Any, st: Any, seq: Any, why: str | None, *, by: bool) -> None:
    """``study status``: the status, then the running decisions per judge (per group with ``by``), or why none."""
    render_status(console, st)
    if seq is not None:
        (render_status_by if by else render_status_decisions)(console, seq)
    elif why:
        console.print(f"No sequential decision: {why}", highlight=False, soft_wrap=True)


def render_status(console: Any, st: Any) -> None:
    """A :class:`~voirdire.study.StudyStatus`: the summary line, the rounds and the coverage per rater."""
    from rich import box
    from rich.table import Table

    console.print(f"{st.path}: {st.n_items:,} items, {st.n_humans} humans, {st.n_judges} judges, {st.n_labels:,} "
                  f"labels ({st.n_flagged:,} flagged); {st.n_open_assignments:,} open and "
                  f"{st.n_delivered_assignments:,} delivered assignments; {st.n_items_with_probability:,} items "
                  f"with a recorded inclusion probability. Schema {st.schema_version}.", highlight=False,
                  soft_wrap=True)
    t = Table(title="Rounds (rows = imported + replaced + duplicate + rejected)", title_justify="left",
              box=box.SIMPLE_HEAD)
    for c in ("round", "kind", "rows", "imported", "replaced", "dup.", "rejected", "flagged", "from"):
        t.add_column(c, justify="left" if c in ("kind", "from") else "right", no_wrap=c != "from", overflow="fold")
    for r in st.rounds.itertuples():
        t.add_row(str(r.round), r.kind, f"{r.n_rows:,}", f"{r.n_imported:,}", f"{r.n_replaced:,}",
                  f"{r.n_duplicate:,}", f"{r.n_rejected:,}", f"{r.n_flagged:,}",
                  # a draw round has no source file: missing is None under pandas 2, NaN under pandas 3
                  Path(r.source).name if isinstance(r.source, str) and r.source else f"{r.design} seed {r.seed}")
    console.print(t)
    cov = Table(title="Coverage", title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("rater", "role", "labels", "coverage"):
        cov.add_column(col, justify="left" if col in ("rater", "role") else "right", no_wrap=True)
    for r in st.coverage.itertuples():
        cov.add_row(str(r.rater), str(r.role), f"{int(r.n_labels):,}", f"{r.coverage:.1%}")
    console.print(cov)


def render_status_decisions(console: Any, seq: Any, *, command: str = "voirdire validate / study validate") -> None:
    """A :class:`~voirdire.workflows.SequentialValidation`: one row per judge with its verdict (as ``voirdire
    validate``) and beside it the running anytime-valid decision, then each verdict's sentence with the running
    decision under it; ``command`` is the one whose verdict it shows."""
    from rich import box
    from rich.table import Table

    verdicts = {} if seq.verdicts is None else {j.judge: j for j in seq.verdicts.judges}
    q = Table(title=f"Verdict per judge (as {command}, seed {seq.seed}) and beside "
                    f"it the running anytime-valid {seq.running[0].method} decision (one look per round)",
              title_justify="left", box=box.SIMPLE_HEAD)
    for c in ("judge", "verdict", "anytime-valid", "at look", "why (anytime-valid)"):
        q.add_column(c, justify="left", no_wrap=c not in ("why (anytime-valid)",), overflow="fold")
    for r in seq.running:
        e = verdicts.get(r.judge)
        why = r.reason if r.decision in ("accept", "reject") else r.text  # no count above the items on hand
        q.add_row(r.judge, "-" if e is None else e.verdict.decision.upper(), r.decision, str(r.look), why)
    console.print(q)
    for r in seq.running:
        e = verdicts.get(r.judge)
        if e is not None:
            console.print(line((f"{r.judge}: {e.verdict.decision.upper()}", "bold"), " - ", verdict_text(e)),
                          highlight=False, soft_wrap=True)
        console.print(line((f"  beside it, {r.text}", "dim")), highlight=False, soft_wrap=True)


def render_added(console: Any, res: Any, file: Any) -> None:
    """What ``study add`` did with every row of the file (:class:`~voirdire.study.AddResult`)."""
    console.print(f"Round {res.round}: {res.n_rows:,} rows from {file}: {res.n_imported:,} imported, "
                  f"{res.n_replaced:,} replaced, {res.n_duplicate:,} duplicate, {res.n_rejected:,} rejected"
                  + (f" ({', '.join(f'{k}: {v}' for k, v in res.rejected.items())})" if res.rejected else "")
                  + f"; {res.n_flagged:,} flagged (never assigned).", highlight=False, soft_wrap=True)


def render_assigned(console: Any, res: Any, head: str, written: Any, content: dict[str, Any] | None) -> None:
    """``study assign``'s line, and how many tasks carry no content (with ``--to label-studio|argilla``)."""
    out, manifest = written
    console.print(f"{head} recorded with their inclusion probabilities; wrote {out} and {manifest}.", highlight=False,
                  soft_wrap=True)
    items = list(dict.fromkeys(str(i) for i in res.item))
    bare = 0 if content is None else sum(1 for i in items if not content.get(i))
    if bare:
        console.print(f"{bare:,} of {len(items):,} items have no content (no Label Studio or Argilla export of the "
                      "study's rounds holds them where it was imported from): their tasks carry the item id only; add "
                      "the text the annotators must see before importing.", style="yellow", highlight=False,
                      soft_wrap=True)


def render_status_by(console: Any, res: Any) -> None:
    """A :class:`~voirdire.workflows.GroupedSequentialValidation`: per group, then the pool, each judge's verdict
    (``validate --by``'s in a group, ``validate``'s on the pool) with the running decision beside it."""
    render_groups(console, res, lambda r, g: render_status_decisions(console, r, command="study validate" + (
        f" --by {' --by '.join(res.by)}" if g != "(pooled)" else "")), blank=False)
    if res.verdicts is not None:
        console.print(f"Verdicts: {res.verdicts.rule}", style="dim", highlight=False, soft_wrap=True)
