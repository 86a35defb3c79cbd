"""The `voirdire watch` command (registered on import): anytime-valid validation, look by look."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from .._option_specs import SeqMethod, TableOrJson
from ._app import (
    ReaderOptions, app, console, emit_json, err_console, fail, format_options, handle_errors, option,
    reader_options,
)


def read_watch(file: Path, *, judges: list[str], round_column: str, method: str, epsilon: float | None, q: float,
               seed: int, reader: ReaderOptions, verdicts: bool = True) -> tuple[Any, Any]:
    """Read ``file`` and its rounds once with the command's reading options and run the sequential rule
    (:func:`voirdire.workflows.read_sequential`; per group with ``--by``): the result and the table (or grouped
    tables) it was computed on."""
    from ..workflows import read_sequential

    load = reader.load_groups if reader.by else reader.load
    return read_sequential(file, lambda: load(file, judges=judges), round_column=round_column, item=reader.item,
                           rater=reader.rater, duplicates=reader.read_kwargs()["duplicates"], grouped=bool(reader.by),
                           judges=judges, method=method, epsilon=epsilon, q=q, seed=seed, verdicts=verdicts)


@app.command("watch")
@handle_errors
@format_options
@reader_options
def watch_command(
    file: Path = typer.Argument(..., readable=False, help="Long annotation file with a round (batch or timestamp) column."),
    judge: list[str] = option("judge"),
    round_column: str = option("watch.round_column"),
    method: SeqMethod = option("watch.method"),
    epsilon: float | None = option("watch.epsilon"),
    q: float = option("watch.q"),
    follow: float | None = option("watch.follow"),
    max_wait: float | None = option("watch.max_wait"),
    seed: int = option("watch.seed"),
    output: TableOrJson = option("format"),
    *,
    reader: ReaderOptions,
) -> None:
    """Validate a judge as labels arrive: accept, reject or continue after every round, anytime-valid.

    Looking after every batch does not inflate the error: with a judge exactly on the margin the
    chance of ever accepting stays below q. Each look also says about how many more comparisons per
    human would settle the decision at the current estimates.
    """
    from ..report.console.watch import render_verdicts, render_version, render_watch, render_watch_by
    from ..workflows import follow_file, with_verdicts

    if follow is not None and not follow > 0:
        fail(f"--follow must be a positive number of seconds. Got {follow:g}.")
    kw = dict(judges=list(judge or []), round_column=round_column, method=method.value, epsilon=epsilon, q=q,
              seed=seed, reader=reader)
    table = output == "table"
    if follow is None:
        res, _ = read_watch(file, **kw)  # type: ignore[arg-type]
    else:
        res, tables = None, None
        for kind, got in follow_file(file, lambda: read_watch(file, **kw, verdicts=False),  # type: ignore[arg-type]
                                     every=follow, max_wait=max_wait):
            if kind == "waiting":
                err_console.print(f"waiting: {file}: {got}.", highlight=False, soft_wrap=True)
                continue
            if table:
                render_version(console, got[0], res)
            res, tables = got
        if not res.decided:
            err_console.print(f"no decision after {max_wait:g} s; stopping (the file can be watched again).",
                              highlight=False)
        res = with_verdicts(res, tables)  # as without --follow, on the last complete version read
    if not table:
        emit_json({"file": str(file), **res.to_dict()})
    elif reader.by:
        render_watch_by(console, res)
    elif follow is None:
        render_watch(console, res)
    else:
        render_verdicts(console, res)
