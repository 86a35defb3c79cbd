"""The `voirdire study` commands (registered on import): a workspace of rounds on one SQLite file."""

from __future__ import annotations

import inspect
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer

from . import _estimate, _report, _validate  # noqa: F401  (registered first: the study commands take their options)
from ._app import (HelpGroup, ReaderOptions, app, console, emit_json, fail, handle_errors, json_extra,
                   reader_options)
from ._console import styled
from ._plan import TableOrJson
from ._watch import SeqMethod

study_app = typer.Typer(help="A study workspace: rounds of labels, assignments and inclusion probabilities in one "
                             "SQLite file (init, add, status, assign, draw, export, validate, estimate, report).",
                        no_args_is_help=True, rich_markup_mode=None, cls=HelpGroup)  # plain help, as in _app.py
app.add_typer(study_app, name="study")


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
                  # a draw round has no source file: missing is None under pandas 2, NaN under pandas 3
                  Path(r.source).name if isinstance(r.source, str) and r.source else f"{r.design} seed {r.seed}")
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
            why = d["reason"] if r.decision in ("accept", "reject") else run  # no count above the items on hand
            q.add_row(r.judge, "-" if e is None else e.verdict.decision.upper(), r.decision, str(d["look"]), why)
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
                  f"wrote {output}.", highlight=False, soft_wrap=True)


def _string_frame(df: Any) -> Any:
    """``df`` as its CSV export reads back: every cell a string, a missing value empty."""
    out = df.copy()
    for c in out.columns:
        col = out[c].astype(object)
        out[c] = col.where(col.notna(), "").astype(str)
    return out


def _round_numbers(values: list[str] | None) -> list[int] | None:
    """``--rounds 4,6`` (or repeated): the round numbers."""
    if not values:
        return None
    out = []
    for v in ",".join(values).split(","):
        if not v.strip():
            continue
        try:
            out.append(int(v.strip()))
        except ValueError:
            fail(f"--rounds takes round numbers (e.g. --rounds 4,6). Got {v.strip()!r}.")
    return out or None


def _sample_note(ps: Any) -> str:
    """What ``study estimate`` / ``study report`` estimate from, and what they leave out."""
    rounds = ", ".join(map(str, ps.draw_rounds))
    text = (f"Estimating from the probability sample of draw round(s) {rounds}: {ps.n_items_drawn:,} item(s) drawn "
            f"with recorded probabilities, {ps.n_items_labelled:,} of them with human labels "
            f"({ps.n_human_labels:,} labels).")
    if ps.n_human_labels_left_out:
        text += (f" Left out: {ps.n_human_labels_left_out:,} other human label(s) on {ps.n_items_left_out:,} item(s) "
                 f"no chosen draw drew (round(s) {', '.join(map(str, ps.left_out_rounds))}): no probability says how "
                 f"those items went to the humans.")
    if ps.n_items_labelled < ps.n_items_drawn:
        text += (f" {ps.n_items_drawn - ps.n_items_labelled:,} drawn item(s) have no human label yet and count as "
                 f"not drawn; add their labels (an estimate is valid for the design only when the drawn items are "
                 f"labelled).")
    return text + (" Choose the draws with --rounds." if ps.n_human_labels_left_out else "")


#: What a study fixes for the command it hands its labels to: its own columns, and a long table.
_STUDY_READING: dict[str, Any] = {"item": "item", "rater": "rater", "label": "label", "role": "role",
                                  "format_in": "auto", "wide": False, "where": None, "control": None,
                                  "question": None}

_ROUNDS = inspect.Parameter(
    "rounds", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[list[str]],
    default=typer.Option(None, "--rounds", help="The draw round(s) whose drawn items and recorded probabilities "
                                                 "the estimate uses (comma-separated or repeated; default: every "
                                                 "draw round)."))


def _target(name: str) -> Any:
    """The callback of ``voirdire NAME``."""
    for info in app.registered_commands:
        if info.name == name and info.callback is not None:
            return info.callback
    raise RuntimeError(f"voirdire {name} is not registered")  # pragma: no cover - import order


def _on_study(name: str, help: str, prepare: Any, *, replace: dict[str, inspect.Parameter] | None = None,
              hide: tuple[str, ...] = (), extra: tuple[inspect.Parameter, ...] = ()) -> None:
    """Register ``study NAME``: ``voirdire NAME`` on the study's labels, with that command's own options.

    The options are read from ``voirdire NAME``'s signature (so ``--help`` lists them and they are
    parsed as there), less the ones a study fixes (its columns, the file format) and ``hide``,
    with ``replace`` and ``extra``. ``prepare(study, kw)`` gives the long frame the command reads
    (through :func:`voirdire.data.frame_as_file`: no temporary file, every message names the
    study), the fixed options and the keys to add to the command's JSON; it may change ``kw``.
    """
    target = _target(name)
    sig = inspect.signature(target)
    replace = replace or {}
    params = [inspect.Parameter("path", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Path,
                                default=typer.Argument(..., readable=False, help="The study file."))]
    for p in sig.parameters.values():
        if p.name == "file" or p.name in _STUDY_READING or p.name in hide:
            continue
        params.append(replace.get(p.name, p).replace(kind=inspect.Parameter.KEYWORD_ONLY))
    params += list(extra)
    fixed = {k: v for k, v in _STUDY_READING.items() if k in sig.parameters}

    def command(path: Path, **kw: Any) -> Any:
        from ..data import frame_as_file

        study = _open(path)
        frame, more, keys = prepare(study, kw)
        with frame_as_file(path, _string_frame(frame), source=str(path)), json_extra(**keys):
            return target(file=path, **fixed, **more, **kw)

    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__name__ = f"study_{name}_command"
    command.__doc__ = help
    study_app.command(name, help=help)(handle_errors(command))


def _is_table(kw: dict[str, Any]) -> bool:
    fmt = kw.get("output_format", kw.get("output", "table"))
    return str(getattr(fmt, "value", fmt) or "table") == "table"


def _prepare_validate(study: Any, kw: dict[str, Any]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    return study.export_frame(), {}, {}


def _sample_json(ps: Any) -> dict[str, Any]:
    """The ``study`` key of ``study estimate -f json``: what it estimated from, and what it left out."""
    return {"draw_rounds": list(ps.draw_rounds), "n_items_drawn": ps.n_items_drawn,
            "n_items_labelled": ps.n_items_labelled, "n_human_labels": ps.n_human_labels,
            "n_human_labels_left_out": ps.n_human_labels_left_out, "n_items_left_out": ps.n_items_left_out,
            "left_out_rounds": list(ps.left_out_rounds), "note": _sample_note(ps)}


def _prepare_estimate(study: Any, kw: dict[str, Any]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    rounds = _round_numbers(kw.pop("rounds", None))
    if kw.get("inclusion_prob") is not None:
        if rounds:
            fail("--rounds chooses the draws whose recorded probabilities are used; --inclusion-prob gives your "
                 "own. Give one or the other.")
        return study.export_frame(), {}, {}
    ps = study.probability_sample(rounds)
    kw["inclusion_prob"] = "inclusion_prob"
    if _is_table(kw):
        console.print(_sample_note(ps), highlight=False, soft_wrap=True, markup=False)
    return ps.frame, {}, {"study": _sample_json(ps)}


def _prepare_report(study: Any, kw: dict[str, Any]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    rounds = _round_numbers(kw.pop("rounds", None))
    frame = study.export_frame()
    if kw.get("inclusion_prob") is not None:
        if rounds:
            fail("--rounds chooses the draws whose recorded probabilities are used; --inclusion-prob gives your "
                 "own. Give one or the other.")
        return frame, {"unsampled": "error"}, {}
    if rounds is None and not study.draw_rounds():
        return frame, {"unsampled": "error"}, {}  # no draw: the report says why there is no Estimation section
    ps = study.probability_sample(rounds)
    frame["inclusion_prob"] = frame["item"].map(ps.inclusion_prob)
    kw["inclusion_prob"] = "inclusion_prob"
    return frame, {"unsampled": "omit"}, {}


_on_study("validate", "`voirdire validate` on every label of the study (its options below; the numbers are "
                      "those of `voirdire validate` on `study export`'s file).", _prepare_validate)
_on_study("estimate", "`voirdire estimate` on the study's probability sample: every judge label, the human labels of "
                      "the items its draw rounds drew, weighted by the probabilities they recorded (the other human "
                      "labels are left out and counted; --rounds chooses the draws).", _prepare_estimate,
          replace={"inclusion_prob": inspect.Parameter(
              "inclusion_prob", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str],
              default=typer.Option(None, "--inclusion-prob", "-p",
                                   help="Default: the probabilities the study's draw rounds recorded. A number or a "
                                        "column name instead: as `voirdire estimate` on `study export`'s file, with "
                                        "every label."))},
          extra=(_ROUNDS,))
_on_study("report", "`voirdire report` on every label of the study; its Estimation section uses the probabilities "
                    "the draw rounds recorded, on the drawn items (--rounds chooses the draws). Title: the study's "
                    "name.", _prepare_report, hide=("unsampled",), extra=(_ROUNDS,))
