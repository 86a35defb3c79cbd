"""The `voirdire watch` command (registered on import): anytime-valid validation, look by look."""

from __future__ import annotations

import math
import time
from enum import Enum
from pathlib import Path
from collections.abc import Callable
from typing import Any

import typer

from ._app import ReaderOptions, app, console, emit_json, err_console, fail, format_options, handle_errors, reader_options
from ._plan import TableOrJson
from ._console import styled


class SeqMethod(str, Enum):
    alt_test = "alt-test"
    loo = "loo"


def load_rounds(file: Path, *, round_column: str, item: str, rater: str, duplicates: Any) -> Any:
    """Each label's round from a long file, with in-file duplicates resolved as the table reader does."""
    from .._safe import shown
    from ..data import id_str, read_rounds

    if file.is_dir():
        fail(f"{file}: sequential validation needs a long file with a round column (--round-column), not an "
             f"AltTest directory.")
    rounds = read_rounds(file, column=round_column, item=item, rater=rater)
    dup = duplicates.value if isinstance(duplicates, Enum) else duplicates
    key = rounds["item"].map(id_str) + "\x00" + rounds["rater"].map(id_str)
    # a row repeated whole (same round) is one label, as the table reader keeps it
    same = (key + "\x00" + rounds["round"].astype(str)).duplicated()
    rounds, key = rounds.loc[~same], key.loc[~same]
    if dup in ("first", "last"):
        rounds = rounds.loc[~key.duplicated(keep=dup)]
    elif key.duplicated().any():
        r = rounds.loc[key.duplicated(keep=False)]
        first = r.iloc[0]
        other = r.loc[key.loc[r.index] == key.loc[r.index[0]], "round"].iloc[1]
        fail(f"{file}: item {shown(id_str(first['item']))}, rater {shown(id_str(first['rater']))} has two rounds "
             f"({shown(first['round'])} and {shown(other)}): which one the label arrived in is unknown. Keep one "
             f"row with --duplicates first|last, or fix the file.")
    return rounds


def sequential_results(table: Any, rounds: Any, judges: list[str], *, method: str, epsilon: float | None, q: float,
                       seed: int) -> list[Any]:
    """The sequential rule for every judge (``workflows.watch_judges``, as ``study status``)."""
    from ..workflows import watch_judges

    if not (judges or list(table.judges)):
        fail(f"{table.source}: no judge to validate; name it with --judge.")
    return watch_judges(table, rounds, judges, method=method, epsilon=epsilon, q=q, seed=seed)


def run_sequential(file: Path, *, judges: list[str], round_column: str, method: str, epsilon: float | None,
                   q: float, seed: int, reader: ReaderOptions) -> list[Any]:
    """Read the file and its rounds, and run the sequential rule for every judge (``watch``, ``validate
    --sequential``)."""
    return read_sequential(file, judges=judges, round_column=round_column, method=method, epsilon=epsilon, q=q,
                           seed=seed, reader=reader)[0]


def read_sequential(file: Path, *, judges: list[str], round_column: str, method: str, epsilon: float | None,
                    q: float, seed: int, reader: ReaderOptions) -> tuple[list[Any], Any]:
    """:func:`run_sequential`'s results and the table they were computed on (one read of the file)."""
    rounds = load_rounds(file, round_column=round_column, item=reader.item, rater=reader.rater,
                         duplicates=reader.duplicates)
    table = reader.load(file, judges=judges)
    return sequential_results(table, rounds, judges, method=method, epsilon=epsilon, q=q, seed=seed), table


def render_sequential(results: list[Any], *, since: int = 0, n_items: int | None = None) -> None:
    """Terminal view: one table of looks per judge (from look ``since`` on), then the running decision's line.
    With ``n_items`` (the items on hand), a 'more per human' above it reads "cannot be settled with the N items
    you have" instead of a number nobody can act on."""
    from rich import box
    from rich.table import Table

    from ..report import fmt_int, fmt_num

    for r in results:
        t = Table(title=f"{r.judge}: sequential {r.method} (epsilon {r.epsilon:g}, e-BH q {r.q:g})",
                  title_justify="left", box=box.SIMPLE_HEAD)
        for c in ("look", "humans", "wins", "losses", "decision", "more per human"):
            t.add_column(c, justify="left" if c in ("look", "decision") else "right", no_wrap=True)
        for i in range(since, len(r.looks)):
            more = r.more_items[i]
            mtxt = "" if not math.isfinite(more) else f"{fmt_int(more)} ({r.more_direction[i]})"
            if n_items is not None and math.isfinite(more) and more > n_items:
                mtxt = f"cannot be settled with the {fmt_int(n_items)} items you have"
            if r.decisions[i] == "continue" and r.n_compared[i] >= 2 and not math.isfinite(more):
                mtxt = "none expected"
            t.add_row(r.looks[i], fmt_int(r.n_compared[i]), fmt_int(r.n_win[i]), fmt_int(r.n_loss[i]),
                      r.decisions[i], mtxt)
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
        console.print(styled(("running anytime-valid decision: ", "dim"), (r.decision.upper(), f"bold {colour}"),
                             f"  {r.judge}: {r.reasons[at]}"
                             + (f" (look {r.looks[at]})" if r.decided_at is not None else "")),
                      highlight=False, soft_wrap=True)
    console.print("Anytime-valid: the decision may be read after every round without inflating its error "
                  "(betting e-processes, e-BH across humans). 'more per human': expected further comparisons "
                  "at the current estimates.", style="dim", highlight=False, soft_wrap=True)


def _verdicts(table: Any, results: list[Any], seed: int) -> Any:
    """The one verdict per judge (``voirdire validate`` on every label so far, same seed)."""
    from ..workflows import judge_verdicts

    return judge_verdicts(table, [r.judge for r in results], seed=seed)


def _verdicts_json(table: Any, results: list[Any], seed: int) -> list[dict[str, Any]]:
    val = _verdicts(table, results, seed)
    return [] if val is None else [{"judge": j.judge, "verdict": j.verdict.to_dict(),
                                    "advice": None if j.advice is None else j.advice.to_dict()} for j in val.judges]


def render_verdicts(table: Any, results: list[Any], seed: int) -> None:
    """The verdict per judge (as ``voirdire validate``), printed after the running anytime-valid decision so
    that the two are read together: the running decision is what this view adds, never the verdict."""
    val = _verdicts(table, results, seed)
    if val is None:
        return
    for e in val.judges:
        console.print(styled((f"Verdict {e.judge} (as voirdire validate, seed {seed}): "
                              f"{e.verdict.decision.upper()}", "bold"), " - ",
                             (e.verdict.sentence if e.advice is None else e.advice.sentence) + "."),
                      highlight=False, soft_wrap=True)


@app.command("watch")
@handle_errors
@format_options
@reader_options
def watch_command(
    file: Path = typer.Argument(..., readable=False, help="Long annotation file with a round (batch or timestamp) column."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="An LLM judge (repeatable)."),
    round_column: str = typer.Option(..., "--round-column", help="Column with each label's round or arrival time."),
    method: SeqMethod = typer.Option(SeqMethod.alt_test, "--method", help="alt-test or loo."),
    epsilon: float | None = typer.Option(None, "--epsilon", help="Margin (default 0.2 alt-test, 0.05 loo)."),
    q: float = typer.Option(0.05, "--q", help="e-BH level across humans."),
    follow: float | None = typer.Option(None, "--follow", help="Re-read the file every SECONDS while it grows, "
                                                                "until a decision (Ctrl-C stops)."),
    max_wait: float | None = typer.Option(None, "--max-wait", min=0.0, help="With --follow: give up after SECONDS."),
    seed: int = typer.Option(0, "--seed", min=0, help="Order of the items within a round."),
    output: TableOrJson = typer.Option(TableOrJson.table, "--format", "-f", help="table or json."),
    *,
    reader: ReaderOptions,
) -> None:
    """Validate a judge as labels arrive: accept, reject or continue after every round, anytime-valid.

    Looking after every batch does not inflate the error: with a judge exactly on the margin the
    chance of ever accepting stays below q. Each look also says about how many more comparisons per
    human would settle the decision at the current estimates.
    """
    if not 0 < q < 1:
        fail(f"--q must be in (0, 1). Got {q:g}.")
    if follow is not None and not follow > 0:
        fail(f"--follow must be a positive number of seconds. Got {follow:g}.")
    kw = dict(judges=list(judge or []), round_column=round_column, method=method.value, epsilon=epsilon, q=q,
              seed=seed, reader=reader)
    if reader.by:
        if follow is None:
            res, grouped = read_sequential_by(file, kw)
        else:
            res, grouped = _follow(file, kw, every=follow, max_wait=max_wait, table=output == TableOrJson.table,
                                   step=lambda: read_sequential_by(file, kw), show=_show_by, decided=_decided_by)
        _render_by(file, res, grouped, seed, output)
        return
    if follow is None:
        results = run_sequential(file, **kw)  # type: ignore[arg-type]
        table = reader.load(file, judges=[r.judge for r in results])
        if output == TableOrJson.json:
            emit_json({"file": str(file), "judges": [r.to_dict() for r in results],
                       "verdicts": _verdicts_json(table, results, seed)})
        else:
            render_sequential(results, n_items=table.n_items)
            render_verdicts(table, results, seed)
        return
    results, table = _follow(file, kw, every=follow, max_wait=max_wait, table=output == TableOrJson.table)
    if output == TableOrJson.json:   # as without --follow, on the last complete version read
        emit_json({"file": str(file), "judges": [r.to_dict() for r in results],
                   "verdicts": _verdicts_json(table, results, seed)})
    else:
        render_verdicts(table, results, seed)


def read_sequential_by(file: Path, kw: dict[str, Any]) -> tuple[Any, Any]:
    """``watch --by COLUMN``: one running decision per (judge, group) and per judge on the pool
    (:func:`voirdire.workflows.watch_judges_by`), and the grouped tables they came from (one read)."""
    from ..workflows import watch_judges_by

    reader: ReaderOptions = kw["reader"]
    rounds = load_rounds(file, round_column=kw["round_column"], item=reader.item, rater=reader.rater,
                         duplicates=reader.duplicates)
    grouped = reader.load_groups(file, judges=kw["judges"])
    if not (kw["judges"] or list(grouped.pooled.judges)):
        fail(f"{file}: no judge to validate; name it with --judge.")
    res = watch_judges_by(grouped, rounds, kw["judges"] or None, method=kw["method"], epsilon=kw["epsilon"],
                          q=kw["q"], seed=kw["seed"])
    return res, grouped


def _decided_by(res: Any) -> bool:
    """Whether ``watch --by --follow`` may stop: every judge decided in every group that runs, and on the pool."""
    runs = [r for r in [*res.results, res.pooled] if r is not None]
    return bool(runs) and all(x.decision in ("accept", "reject") for r in runs for x in r)


def _show_by(res: Any, grouped: Any, previous: Any) -> None:
    """``watch --by --follow``'s line per new version: each (judge, group)'s running decision and its last look."""
    cells = []
    for g, r, e in [*zip(res.groups, res.results, res.errors), ("(pooled)", res.pooled, res.pooled_error)]:
        for x in r or []:
            cells.append(f"{x.judge} / {g}: {x.decision} (look {x.looks[-1] if x.looks else '-'})")
        if r is None:
            cells.append(f"{g}: no decision ({e})")
    console.print(styled(("running anytime-valid decisions: ", "dim"), "; ".join(cells)), highlight=False,
                  soft_wrap=True)


def _render_by(file: Path, res: Any, grouped: Any, seed: int, output: TableOrJson) -> None:
    """The grouped view: each group's looks and decision beside its verdicts, then the pool's (JSON: one record
    per group, as ``--where`` gives it)."""
    parts = [*zip(res.groups, res.n_items, grouped.tables, res.results, res.errors),
             ("(pooled)", grouped.pooled.n_items, grouped.pooled, res.pooled, res.pooled_error)]
    if output == TableOrJson.json:
        d = res.to_dict()
        for g, (_, _, table, r, _) in zip([*d["groups"], None], parts):
            if r is not None and g is not None:
                g["verdicts"] = _verdicts_json(table, r, seed)
        pooled_verdicts = None if res.pooled is None else _verdicts_json(grouped.pooled, res.pooled, seed)
        emit_json({"file": str(file), **d, "pooled_verdicts": pooled_verdicts})
        return
    for g, n, table, r, e in parts:
        head = f"{', '.join(res.by)} = {g}" if g != "(pooled)" else g
        if r is None:
            console.print(styled((head, "bold"), f" ({n} items): ", ("no decision", "bold yellow"), f": {e}"),
                          highlight=False, soft_wrap=True)
        else:
            console.print(styled((head, "bold"), f" ({n} items)"), highlight=False, soft_wrap=True)
            render_sequential(r, n_items=table.n_items)
            render_verdicts(table, r, seed)
        console.print()
    console.print("The e-BH level q holds within each group; nothing is corrected across groups. A group's "
                  "decisions are those of --where on it at the same seed.", highlight=False, soft_wrap=True)


def _signature(file: Path) -> tuple[int, int, int] | None:
    """What tells one version of a file from the next (inode, size, mtime), or None when it is not there."""
    try:
        st = file.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


#: Text formats read line by line: a change is read only once its last line is complete.
_LINE_FORMATS = {".csv": 2, ".tsv": 2, ".tab": 2, ".txt": 2, ".jsonl": 1, ".ndjson": 1}


def not_ready(file: Path) -> str | None:
    """Why a file being written cannot be read yet (None when it can): missing (rotated), empty, only
    its header, or a last row the writer has not finished (no line end yet). Text formats only; any
    other file is read as it is."""
    need = _LINE_FORMATS.get(file.suffix.lower())
    try:
        size = file.stat().st_size
        if size == 0:
            return "the file is empty"
        if need is None:
            return None
        with open(file, "rb") as fh:
            fh.seek(-1, 2)
            if fh.read(1) not in (b"\n", b"\r"):
                return "its last row is not complete yet"
            fh.seek(0)
            head = fh.read(1 << 16)
    except FileNotFoundError:
        return "the file is not there (rotated or not created yet)"
    except OSError as exc:
        return f"it cannot be read now ({exc.strerror or exc})"
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if len(lines) < need and len(head) < 1 << 16:
        return "it holds no labels yet" + (" (only its header)" if lines else "")
    return None


def _follow(file: Path, kw: dict[str, Any], *, every: float, max_wait: float | None, table: bool,
            step: Callable[[], tuple[Any, Any]] | None = None, show: Callable[[Any, Any, Any], None] | None = None,
            decided: Callable[[Any], bool] | None = None) -> tuple[Any, Any]:
    """``watch --follow``: re-read ``file`` by its path whenever it changes, until every judge is decided.

    A change is read only when it is complete: a missing file (rotated, or not created yet), an empty
    or header-only file, and a last row without its line end are waited for, not errors. A read that
    fails while the file changed under it is retried at the next poll; a failure on a file that did
    not change is the file's own error (one line, exit 1). Returns the last results and the table
    they were computed on. ``step`` reads a version (default: :func:`read_sequential`), ``show`` prints
    it (with the previous results) and ``decided`` says when to stop (``--by`` passes its own three).
    """
    from ..exceptions import SchemaError

    start = time.monotonic()
    stamp: tuple[int, int, int] | None = None
    results: Any = []
    last: Any = None
    said: str | None = None
    while True:
        sig = _signature(file)
        why = not_ready(file) if sig is not None else "the file is not there (rotated or not created yet)"
        if why is None and sig != stamp:
            try:
                new, tab = step() if step is not None else read_sequential(file, **kw)  # type: ignore[arg-type]
            except SchemaError:
                if _signature(file) == sig:
                    raise
                why = "it changed while being read"
            else:
                stamp = sig
                if table and show is not None:
                    show(new, tab, results)
                elif table:
                    render_sequential(new, since=0 if not results else max(0, len(new[0].looks) - 1),
                                      n_items=tab.n_items)
                results, last = new, tab
                if decided(results) if decided is not None else all(r.decision in ("accept", "reject")
                                                                    for r in results):
                    return results, last
        if why is not None and why != said:
            err_console.print(f"waiting: {file}: {why}.", highlight=False, soft_wrap=True)
        said = why
        if max_wait is not None and time.monotonic() - start > max_wait:
            if not results:
                fail(f"{file}: no labels to read after {max_wait:g} s ({why or 'no complete version'}).")
            err_console.print(f"no decision after {max_wait:g} s; stopping (the file can be watched again).",
                              highlight=False)
            return results, last
        time.sleep(every)
