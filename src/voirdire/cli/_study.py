"""The `voirdire study` commands (registered on import): a workspace of rounds on one SQLite file."""

from __future__ import annotations

import tempfile
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from ._app import HelpGroup, ReaderOptions, app, console, emit_json, handle_errors, reader_options
from ._console import styled
from ._plan import TableOrJson
from ._watch import SeqMethod

study_app = typer.Typer(help="A study workspace: rounds of labels, assignments and inclusion probabilities in one "
                             "SQLite file (init, add, status, assign, draw, export, validate, estimate, report).",
                        no_args_is_help=True, rich_markup_mode=None, cls=HelpGroup)  # plain help, as in _app.py
app.add_typer(study_app, name="study")

_FORWARD = {"allow_extra_args": True, "ignore_unknown_options": True}


class ExportFormat(str, Enum):
    csv = "csv"
    parquet = "parquet"


class DrawDesign(str, Enum):
    uniform = "uniform"
    active = "active"
    neyman = "neyman"


def _open(path: Path) -> Any:
    from ..study import Study

    return Study(path)


@study_app.command("init")
@handle_errors
def init_command(path: Path = typer.Argument(..., readable=False, help="The study file to create (e.g. study.vdb)."),
                 note: str = typer.Option("", "--note", help="A note stored with the study.")) -> None:
    """Create an empty study (one SQLite file; never overwrites)."""
    from ..study import Study

    s = Study.init(path, note=note or None)
    console.print(f"Created study {s.path} (schema {s.meta['schema_version']}).", highlight=False)


@study_app.command("add")
@handle_errors
@reader_options
def add_command(
    path: Path = typer.Argument(..., readable=False, help="The study file."),
    file: Path = typer.Argument(..., readable=False, help="Labels to import as one new round (any file voirdire reads)."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="An LLM judge (repeatable)."),
    strict: bool = typer.Option(False, "--strict", help="Refuse the round if a human label was never assigned."),
    output: TableOrJson = typer.Option(TableOrJson.table, "--format", "-f", help="table or json."),
    *,
    reader: ReaderOptions,
) -> None:
    """Import a file of labels as one round, in one transaction (all rows or none)."""
    s = _open(path)
    res = s.add(file, strict=strict, judges=judge or (), **reader.read_kwargs())
    if output == TableOrJson.json:
        emit_json(res.to_dict())
        return
    console.print(f"Round {res.round}: {res.n_rows:,} rows from {file}: {res.n_imported:,} imported, "
                  f"{res.n_replaced:,} replaced, {res.n_duplicate:,} duplicate, {res.n_rejected:,} rejected"
                  + (f" ({', '.join(f'{k}: {v}' for k, v in res.rejected.items())})" if res.rejected else "")
                  + f"; {res.n_flagged:,} flagged (never assigned).", highlight=False, soft_wrap=True)


@study_app.command("status")
@handle_errors
def status_command(path: Path = typer.Argument(..., readable=False, help="The study file."),
                   output: TableOrJson = typer.Option(TableOrJson.table, "--format", "-f", help="table or json."),
                   sequential: bool = typer.Option(True, "--sequential/--no-sequential",
                                                   help="Show the running anytime-valid decision per judge over the "
                                                        "rounds (as voirdire watch)."),
                   method: SeqMethod = typer.Option(SeqMethod.alt_test, "--method", help="alt-test or loo."),
                   epsilon: float | None = typer.Option(None, "--epsilon",
                                                        help="Margin (default 0.2 alt-test, 0.05 loo)."),
                   seed: int = typer.Option(0, "--seed", min=0, help="Order of the items within a round.")) -> None:
    """Rounds, every row accounted for, coverage per rater, open assignments, the running decision per judge."""
    from rich import box
    from rich.table import Table

    from ..exceptions import InvalidParameterError

    from ..workflows import judge_verdicts

    s = _open(path)
    st = s.status()
    seq: list[Any] = []
    why = None
    val = None
    if sequential and st.n_labels:
        try:
            seq = s.sequential(method=method.value, epsilon=epsilon, rng=seed)
        except InvalidParameterError as exc:
            why = str(exc)
        if seq:  # the one verdict per judge (voirdire validate on the study's labels, same seed), beside it
            val = judge_verdicts(s.to_table(), [r.judge for r in seq], seed=seed)
    verdicts = {} if val is None else {j.judge: j for j in val.judges}
    if output == "json":
        emit_json({**st.to_dict(), "sequential": [_seq_summary(r) for r in seq], "sequential_note": why,
                   "verdicts": [{"judge": j.judge, "verdict": j.verdict.to_dict(),
                                 "advice": None if j.advice is None else j.advice.to_dict()}
                                for j in verdicts.values()]})
        return
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
                  Path(str(r.source)).name if r.source else f"{r.design} seed {r.seed}")
    console.print(t)
    cov = Table(title="Coverage", title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("rater", "role", "labels", "coverage"):
        cov.add_column(col, justify="left" if col in ("rater", "role") else "right", no_wrap=True)
    for r in st.coverage.itertuples():
        cov.add_row(str(r.rater), str(r.role), f"{int(r.n_labels):,}", f"{r.coverage:.1%}")
    console.print(cov)
    if seq:
        from ..workflows import comparison_capacity, running_text

        q = Table(title=f"Verdict per judge (as voirdire validate / study validate, seed {seed}) and beside it the "
                        f"running anytime-valid {seq[0].method} decision (one look per round)",
                  title_justify="left", box=box.SIMPLE_HEAD)
        for c in ("judge", "verdict", "anytime-valid", "at look", "why (anytime-valid)"):
            q.add_column(c, justify="left", no_wrap=c not in ("why (anytime-valid)",), overflow="fold")
        table = s.to_table()
        lines = []
        for r in seq:
            d = _seq_summary(r)
            e = verdicts.get(r.judge)
            n_items, _, cap = comparison_capacity(table, r.judge)
            more = float("inf") if d["more_per_human"] is None else d["more_per_human"]
            run = running_text(r.decision, more, d["more_direction"], int(cap.max()) if cap.size else 0, n_items,
                               rule=seq[0].method)
            q.add_row(r.judge, "-" if e is None else e.verdict.decision.upper(), r.decision, str(d["look"]),
                      d["reason"])
            lines.append((r.judge, e, run))
        console.print(q)
        for judge, e, run in lines:
            if e is not None:
                console.print(styled((f"{judge}: {e.verdict.decision.upper()}", "bold"), " - ",
                                     (e.advice.sentence if e.advice is not None else e.verdict.sentence) + "."),
                              highlight=False, soft_wrap=True)
            console.print(styled((f"  beside it, {run}", "dim")), highlight=False, soft_wrap=True)
    elif why:
        console.print(f"No sequential decision: {why}", highlight=False, soft_wrap=True)


def _seq_summary(r: Any) -> dict[str, Any]:
    """A judge's running decision at the latest look (or the look it was decided at)."""
    import math

    at = r.looks.index(r.decided_at) if r.decided_at is not None else len(r.looks) - 1
    more = float(r.more_items[-1]) if len(r.looks) else math.nan
    return {"judge": r.judge, "method": r.method, "decision": r.decision, "look": r.looks[at] if r.looks else None,
            "reason": r.reasons[at] if r.reasons else "", "more_per_human": more if math.isfinite(more) else None,
            "more_direction": r.more_direction[-1] if r.more_direction else ""}


@study_app.command("export")
@handle_errors
def export_command(path: Path = typer.Argument(..., readable=False, help="The study file."),
                   output: Path = typer.Option(..., "--output", "-o", readable=False, help="File to write."),
                   to: ExportFormat = typer.Option(ExportFormat.csv, "--to", help="csv or parquet.")) -> None:
    """Every label (item, rater, role, label, round, flagged, inclusion_prob) as one long file."""
    _export(_open(path), output, to.value)
    console.print(f"Wrote {output}.", highlight=False)


def _export(study: Any, output: Path, to: str) -> None:
    from .._io import atomic_write
    from .._safe import csv_frame

    df = study.export_frame()
    if to == "parquet":
        import io

        from .._io import write_bytes
        from .._optional import require

        require("pyarrow", "Writing Parquet")
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        write_bytes(output, buf.getvalue(), inputs=[study.path])
    else:
        with atomic_write(output, inputs=[study.path]) as fh:
            csv_frame(df).to_csv(fh, index=False)


def _round_content(study: Any) -> dict[str, dict[str, Any]]:
    """Each item's content (Label Studio task data, Argilla record fields) from the study's label
    rounds whose files are still where they were imported from, unchanged (same sha256); a later
    round's content wins."""
    from ..data import read_item_data

    out: dict[str, dict[str, Any]] = {}
    rounds = study.status().rounds
    for rec in rounds.to_dict("records"):
        if rec.get("kind") == "labels" and rec.get("source") and rec.get("file_hash"):
            out.update(read_item_data(str(rec["source"]), sha256=str(rec["file_hash"])))
    return out


@study_app.command("assign")
@handle_errors
def assign_command(
    path: Path = typer.Argument(..., readable=False, help="The study file."),
    n_per_rater: int = typer.Option(..., "--n-per-rater", "-n", min=1, help="Items each rater gets."),
    output: Path = typer.Option(..., "--output", "-o", readable=False, help="The next batch (.csv, .jsonl, or .json with --to)."),
    design: str = typer.Option("strat", "--design", help="random, strat, panel, seq-refined or seq-coverage."),
    assignee: list[str] = typer.Option(None, "--rater", "-r", help="A human to give work (repeatable; default all)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the draw (recorded)."),
    to: str = typer.Option(None, "--to", help="csv, jsonl, label-studio or argilla."),
) -> None:
    """The next batch of assignments, written for the annotators and recorded with its probabilities.

    With --to label-studio or argilla each task carries the item's content (task data, record
    fields) from the study's rounds imported from that tool's exports, where those files are still
    in place and unchanged."""
    from ..design import write_assignments

    s = _open(path)
    content = _round_content(s) if to in ("label-studio", "argilla") else None
    written: list[Any] = []
    # the batch file is written (atomically) inside the round's transaction: a file that cannot be
    # written (a missing folder, the study itself as -o) rolls the round back
    res, rnd = s.assign(design=design, n_per_rater=n_per_rater, raters=assignee or None, rng=seed,
                        before_commit=lambda res, _: written.extend(write_assignments(res, output, format=to,
                                                                                      inputs=[path],
                                                                                      item_data=content)))
    out, manifest = written
    console.print(f"Round {rnd}: {len(res.item):,} assignments ({design}, seed {seed}) recorded with their "
                  f"inclusion probabilities; wrote {out} and {manifest}.", highlight=False, soft_wrap=True)
    if content is not None:
        items = list(dict.fromkeys(str(i) for i in res.item))
        bare = sum(1 for i in items if not content.get(i))
        if bare:
            console.print(f"{bare:,} of {len(items):,} items have no content (no Label Studio or Argilla export of "
                          "the study's rounds holds them where it was imported from): their tasks carry the item id "
                          "only; add the text the annotators must see before importing.", style="yellow",
                          highlight=False, soft_wrap=True)


@study_app.command("draw")
@handle_errors
def draw_command(
    path: Path = typer.Argument(..., readable=False, help="The study file."),
    n: int = typer.Option(..., "-n", min=1, help="Expected number of items to send to humans."),
    output: Path = typer.Option(..., "--output", "-o", readable=False, help="CSV of the drawn items with their probabilities."),
    design: DrawDesign = typer.Option(DrawDesign.uniform, "--design", help="uniform (Poisson, pi = n/N); active "
                                      "(more where the judges disagree, plan_active); neyman (strata = the first "
                                      "judge's score, residual sd from the humans' scores so far, plan_allocation)."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="Judge(s) whose scores drive active/neyman "
                                                                "(default: every judge of the study)."),
    floor: float = typer.Option(0.3, "--floor", help="active: share of the uniform design mixed in; neyman: every "
                                                     "item keeps at least floor * n / N."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the draw (recorded)."),
) -> None:
    """Draw the human subsample for estimation; every probability is recorded in the study."""
    from .._io import atomic_write
    from .._safe import csv_frame

    def write(drawn: Any, _: int) -> None:  # inside the round's transaction: a failed write records nothing
        with atomic_write(output, inputs=[path]) as fh:
            csv_frame(drawn).to_csv(fh, index=False)

    s = _open(path)
    drawn, rnd = s.draw(n=n, design=design.value, rng=seed, judges=list(judge) if judge else None, floor=floor,
                        before_commit=write)
    console.print(f"Round {rnd}: {len(drawn):,} items drawn ({design.value}, seed {seed}); probabilities recorded; "
                  f"wrote {output}.", highlight=False)


def _forward(command: str, path: Path, extra: list[str]) -> None:
    """Run `voirdire COMMAND` on the study exported to a temporary file (identical to running it on an export)."""
    from typer.main import get_command

    s = _open(path)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / f"{path.stem}.csv"
        _export(s, f, "csv")
        args = [command, str(f), "--role", "role", *extra]
        if command == "estimate" and "inclusion_prob" in s.export_frame().columns and \
                not any(a.startswith("--inclusion-prob") for a in extra):
            args += ["--inclusion-prob", "inclusion_prob"]
        rc = get_command(app).main(args=args, prog_name="voirdire", standalone_mode=False)
        if isinstance(rc, int) and rc:   # click returns the exit code of typer.Exit when not standalone
            raise typer.Exit(rc)


@study_app.command("validate", context_settings=_FORWARD)
@handle_errors
def validate_command(ctx: typer.Context, path: Path = typer.Argument(..., readable=False, help="The study file.")) -> None:
    """`voirdire validate` over every round (any validate option after PATH, e.g. --judge J)."""
    _forward("validate", path, list(ctx.args))


@study_app.command("estimate", context_settings=_FORWARD)
@handle_errors
def estimate_command(ctx: typer.Context, path: Path = typer.Argument(..., readable=False, help="The study file.")) -> None:
    """`voirdire estimate` over every round with the recorded inclusion probabilities."""
    _forward("estimate", path, list(ctx.args))


@study_app.command("report", context_settings=_FORWARD)
@handle_errors
def report_command(ctx: typer.Context, path: Path = typer.Argument(..., readable=False, help="The study file.")) -> None:
    """`voirdire report` over every round (any report option after PATH)."""
    _forward("report", path, list(ctx.args))

