"""The `voirdire study` commands (registered on import): a workspace of rounds on one SQLite file."""

from __future__ import annotations

import inspect

from pathlib import Path
from typing import Any, Optional

import typer

from .._options import ANNOTATION_TOOLS
from . import _estimate, _report, _validate  # noqa: F401  (registered first: the study commands take their options)
from .._option_specs import DrawDesign, ExportFormat, SeqMethod, TableOrJson
from ._app import (
    HelpGroup, ReaderOptions, app, console, emit_json, err_console, fail, handle_errors, json_extra, option,
    reader_options,
)

study_app = typer.Typer(help="A study workspace: rounds of labels, assignments and inclusion probabilities in one "
                             "SQLite file (init, add, status, assign, draw, export, validate, estimate, report).",
                        no_args_is_help=True, rich_markup_mode=None, cls=HelpGroup)  # plain help, as in _app.py
app.add_typer(study_app, name="study")


def _open(path: Path) -> Any:
    from ..study import Study

    return Study(path)


@study_app.command("init")
@handle_errors
def init_command(path: Path = typer.Argument(..., readable=False, help="The study file to create (e.g. study.vdb)."),
                 note: str = option("study.init.note")) -> None:
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
    judge: list[str] = option("judge"),
    strict: bool = option("study.add.strict"),
    by: list[str] = option("study.add.by"),
    output: TableOrJson = option("format"),
    *,
    reader: ReaderOptions,
) -> None:
    """Import a file of labels as one round, in one transaction (all rows or none)."""
    from ..report.console.study import render_added

    res = _open(path).add(file, strict=strict, judges=judge or (), by=tuple(by or ()), **reader.read_kwargs())
    if output == "json":
        return emit_json(res.to_dict())
    render_added(console, res, file)


@study_app.command("status")
@handle_errors
def status_command(path: Path = typer.Argument(..., readable=False, help="The study file."),
                   output: TableOrJson = option("format"),
                   sequential: bool = option("study.status.sequential"),
                   method: SeqMethod = option("study.status.method"),
                   epsilon: float | None = option("study.status.epsilon"),
                   seed: int = option("study.status.seed"),
                   by: list[str] = option("study.status.by")) -> None:
    """Rounds, every row accounted for, coverage per rater, open assignments, the running decision per judge."""
    from ..exceptions import InvalidParameterError
    from ..report.console.study import render_study_status, study_status_json

    s = _open(path)
    if by:  # the item groups `study add --by` kept
        s.check_groups(by)
    st = s.status()
    seq, why = None, None
    if sequential and st.n_labels:
        try:  # the one workflow of voirdire watch (watch --by): the running decision, the verdict beside it
            seq = s.sequential(method=method.value, epsilon=epsilon, rng=seed, by=by or None)
        except InvalidParameterError as exc:
            why = str(exc)
    if output == "json":
        emit_json(study_status_json(st, seq, why, by=bool(by)))
    else:
        render_study_status(console, st, seq, why, by=bool(by))


@study_app.command("export")
@handle_errors
def export_command(path: Path = typer.Argument(..., readable=False, help="The study file."),
                   output: Path = option("study.export.output"),
                   to: ExportFormat = option("study.export.to")) -> None:
    """Every label (item, rater, role, label, round, flagged, inclusion_prob, item groups) as one long file."""
    _open(path).export(output, to=to.value)
    console.print(f"Wrote {output}.", highlight=False)


@study_app.command("assign")
@handle_errors
def assign_command(
    path: Path = typer.Argument(..., readable=False, help="The study file."),
    n_per_rater: int = option("study.assign.n_per_rater"),
    output: Path = option("study.assign.output"),
    design: str = option("study.assign.design"),
    assignee: list[str] = option("study.assign.assignee"),
    seed: int = option("study.assign.seed"),
    to: str = option("study.assign.to"),
) -> None:
    """The next batch of assignments, written for the annotators and recorded with its probabilities.

    With --to label-studio or argilla each task carries the item's content (task data, record
    fields) from the study's rounds imported from that tool's exports, where those files are still
    in place and unchanged."""
    from ..design import write_assignments
    from ..report.console.study import render_assigned

    s = _open(path)
    content = s.item_content() if to in ANNOTATION_TOOLS else None
    written: list[Any] = []  # written (atomically) inside the round's transaction: a failed write rolls it back
    res, rnd = s.assign(design=design, n_per_rater=n_per_rater, raters=assignee or None, rng=seed,
                        before_commit=lambda res, _: written.extend(
                            write_assignments(res, output, format=to, inputs=[path], item_data=content)))
    render_assigned(console, res, f"Round {rnd}: {len(res.item):,} assignments ({design}, seed {seed})", written,
                    content)


@study_app.command("draw")
@handle_errors
def draw_command(
    path: Path = typer.Argument(..., readable=False, help="The study file."),
    n: int = option("study.draw.n"),
    output: Path = option("study.draw.output"),
    design: DrawDesign = option("study.draw.design"),
    judge: list[str] = option("study.draw.judge"),
    floor: float = option("study.draw.floor"),
    seed: int = option("study.draw.seed"),
) -> None:
    """Draw the human subsample for estimation; every probability is recorded in the study."""
    drawn, rnd = _open(path).draw(n=n, design=design.value, rng=seed, judges=list(judge) if judge else None,
                                  floor=floor, output=output)  # written inside the round's transaction
    console.print(f"Round {rnd}: {len(drawn):,} items drawn ({design.value}, seed {seed}); probabilities recorded; "
                  f"wrote {output}.", highlight=False, soft_wrap=True)


def _round_numbers(values: list[str] | None) -> list[int] | None:
    """``--rounds 4,6`` (or repeated): the round numbers."""
    out = []
    for v in (v.strip() for v in ",".join(values or []).split(",") if v.strip()):
        try:
            out.append(int(v))
        except ValueError:
            fail(f"--rounds takes round numbers (e.g. --rounds 4,6). Got {v!r}.")
    return out or None


#: What a study fixes for the command it hands its labels to: its own columns, and a long table.
_STUDY_READING: dict[str, Any] = {"item": "item", "rater": "rater", "label": "label", "role": "role",
                                  "format_in": "long", "wide": False, "where": None, "control": None,
                                  "question": None}

_ROUNDS = inspect.Parameter(
    "rounds", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[list[str]],
    default=option("study.rounds"))


def _target(name: str) -> Any:
    """The callback of ``voirdire NAME``."""
    for info in app.registered_commands:
        if info.name == name and info.callback is not None:
            return info.callback
    raise RuntimeError(f"voirdire {name} is not registered")  # pragma: no cover - import order


def _on_study(name: str, help: str, *, replace: dict[str, inspect.Parameter] | None = None,
              hide: tuple[str, ...] = (), extra: tuple[inspect.Parameter, ...] = ()) -> None:
    """Register ``study NAME``: ``voirdire NAME`` on the study's labels, with that command's own options.

    The options are read from ``voirdire NAME``'s signature (so ``--help`` lists them and they are
    parsed as there), less the ones a study fixes (its columns, the file format) and ``hide``,
    with ``replace`` and ``extra``. :meth:`voirdire.study.Study.command_input` gives the long frame
    the command reads (through :func:`voirdire.data.frame_as_file`: no temporary file, every message
    names the study), the column it weights by and the probability sample it estimates from.
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
        from ..study import text_frame

        study = _open(path)
        if kw.get("by"):  # the item groups `study add --by` kept
            study.check_groups(kw["by"])
        inp = study.command_input(name, rounds=_round_numbers(kw.pop("rounds", None)),
                                  inclusion_prob=kw.get("inclusion_prob"), by=kw.get("by"))
        kw["inclusion_prob"] = inp.inclusion_prob or kw.get("inclusion_prob")
        more = {} if inp.unsampled is None else {"unsampled": inp.unsampled}
        if inp.note and name == "estimate" and str(getattr(kw.get("output"), "value", "table")) == "table":
            console.print(inp.note, highlight=False, soft_wrap=True, markup=False)
        elif inp.note and name != "estimate":
            err_console.print(f"note: {inp.note}", highlight=False, soft_wrap=True)
        keys = {} if name != "estimate" or inp.sample is None else {"study": inp.sample.summary()}
        with frame_as_file(path, text_frame(inp.frame), source=str(path)), json_extra(**keys):
            return target(file=path, **fixed, **more, **{k: v for k, v in kw.items() if k in sig.parameters})

    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__name__ = f"study_{name}_command"
    command.__doc__ = help
    study_app.command(name, help=help)(handle_errors(command))


_on_study("validate", "`voirdire validate` on every label of the study (its options below; the numbers are "
                      "those of `voirdire validate` on `study export`'s file).")
_on_study("estimate", "`voirdire estimate` on the study's probability sample: every judge label, the human labels of "
                      "the items its draw rounds drew, weighted by the probabilities they recorded (the other human "
                      "labels are left out and counted; --rounds chooses the draws).",
          replace={"inclusion_prob": inspect.Parameter(
              "inclusion_prob", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str],
              default=option("study.estimate.inclusion_prob"))},
          extra=(_ROUNDS,))
_on_study("report", "`voirdire report` on every label of the study; its Estimation section uses the probabilities "
                    "the draw rounds recorded, on the drawn items (--rounds chooses the draws). Title: the study's "
                    "name.", hide=("unsampled",), extra=(_ROUNDS,))
