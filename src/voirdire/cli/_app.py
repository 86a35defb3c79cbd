"""The Typer application and the helpers every command shares (parsing, errors, output)."""

from __future__ import annotations

import contextvars
import functools
import inspect
import json
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, NoReturn, Optional, TypeVar

import typer

from ._console import console, err_console, styled
from ._errors import one_line, report_exception, set_debug
from ._ranges import check_ranges

app = typer.Typer(
    name="voirdire",
    help="Examine an LLM judge before it may serve: agreement, validation, design, estimation, pairwise.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version_callback(value: bool) -> None:
    if value:
        from .. import __version__

        console.print(f"voirdire {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                 callback=_version_callback, is_eager=True),
    debug: bool = typer.Option(False, "--debug", help="Show the traceback of an internal error."),
) -> None:
    """Examine an LLM judge before it may serve: agreement, validation, design, estimation, pairwise."""
    if debug:
        set_debug(True)


F = TypeVar("F", bound=Callable[..., Any])


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class Level(str, Enum):
    nominal = "nominal"
    ordinal = "ordinal"
    interval = "interval"
    ratio = "ratio"


class Duplicates(str, Enum):
    """``--duplicates``: what to do when a rater labels an item twice with different labels."""

    error = "error"
    first = "first"
    last = "last"


class Missing(str, Enum):
    """``--missing``: what to do with an empty label."""

    error = "error"
    drop = "drop"


DUPLICATES_HELP = "A rater labelling an item twice differently: error, first or last."
MISSING_HELP = "Empty labels: error or drop."


def duplicates_option() -> Any:
    """The ``--duplicates`` option every command that reads an annotation file shares."""
    return typer.Option(Duplicates.error, "--duplicates", help=DUPLICATES_HELP)


def missing_option() -> Any:
    """The ``--missing`` option every command that reads an annotation file shares."""
    return typer.Option(Missing.error, "--missing", help=MISSING_HELP)


def role_option() -> Any:
    """The ``--role`` option: a column marking each row's rater as human or judge."""
    return typer.Option(None, "--role", help="Column with human/judge per row (instead of --judge).")


_FORMAT_PARAMS = ("format_in", "wide", "where", "control", "question")
#: the reading options of the running command, set by :func:`format_options`, read by :func:`load_table`
_FORMAT_OPTS: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("voirdire_format_opts", default={})


def _format_parameters() -> list[inspect.Parameter]:
    kw = inspect.Parameter.KEYWORD_ONLY
    P = inspect.Parameter
    return [
        P("format_in", kw, annotation=str, default=typer.Option(
            "auto", "--format-in", help="What FILE holds: auto (guess from extension and content), long, wide, csv, "
            "tsv, jsonl, json, parquet, excel, label-studio, label-studio-min, argilla, inspect, promptfoo, lm-eval, "
            "alttest. FILE '-' reads standard input.")),
        P("wide", kw, annotation=bool, default=typer.Option(
            False, "--wide", help="FILE is wide: one row per item, one column per rater (--judge names the judge "
            "columns). Detected when there are no rater/label columns.")),
        P("where", kw, annotation=Optional[list[str]], default=typer.Option(
            None, "--where", help="Keep only rows where COLUMN=VALUE (repeatable; a column repeated means any of "
            "its values).")),
        P("control", kw, annotation=Optional[str], default=typer.Option(
            None, "--control", help="Label Studio export: the control (from_name) holding the label.")),
        P("question", kw, annotation=Optional[str], default=typer.Option(
            None, "--question", help="Argilla export: the question whose answers are the labels.")),
    ]


def format_options(func: F) -> F:
    """Give a command the options that say what its FILE holds, declared once here.

    ``--format-in``, ``--wide``, ``--where``, ``--control`` and ``--question`` are appended to
    the command's own options; :func:`load_table` reads them, so the command body needs no change.
    """
    import typing

    sig = inspect.signature(func)
    hints = typing.get_type_hints(func) if not hasattr(func, "__signature__") else {}
    own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()]
    params = own + _format_parameters()

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opts = {k: kwargs.pop(k) for k in _FORMAT_PARAMS if k in kwargs}
        token = _FORMAT_OPTS.set(opts)
        try:
            return func(*args, **kwargs)
        finally:
            _FORMAT_OPTS.reset(token)

    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # typer must read the new signature, not the wrapped one
    return wrapper  # type: ignore[return-value]


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code``."""
    err_console.print(styled(("error:", "bold red"), " ", one_line(message)), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def handle_errors(func: F) -> F:
    """Turn any exception into a one-line message and exit code 1 (see :mod:`voirdire.cli._errors`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bad = check_ranges(kwargs)  # option ranges, declared once in cli/_ranges.py
        if bad is not None:
            fail(bad)
        try:
            return func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - our errors, OS errors and bugs alike end in one line
            message = report_exception(exc)
            if message is None:
                raise
            fail(message)

    return wrapper  # type: ignore[return-value]


def load_table(file: Path, *, judges: list[str] | None = None, scale: Level | str | None = None,
               categories: list[str] | None = None, abstain: list[str] | None = None,
               item: str = "item", rater: str = "rater", label: str = "label", role: str | None = None,
               cluster: str | None = None, cluster_sep: str | None = None, judge_file: Path | None = None,
               duplicates: Duplicates | str = "error", missing: Missing | str = "error",
               format_in: str | None = None, wide: bool | None = None, where: list[str] | None = None,
               control: str | None = None, question: str | None = None) -> Any:
    """Read an annotation file with the options every command shares (``-`` reads standard input).

    The format options default to the running command's ``--format-in``, ``--wide``,
    ``--where``, ``--control`` and ``--question`` (see :func:`format_options`).
    """
    from ..data import read_annotations

    fo = _FORMAT_OPTS.get()
    cats: list[str] | None = None
    if categories:
        cats = [c.strip() for part in categories for c in part.split(",") if c.strip()]
    return read_annotations(
        file, item=item, rater=rater, label=label, judges=judges or (), role=role,
        scale=scale.value if isinstance(scale, Enum) else scale, categories=cats, abstain=abstain or (),
        cluster=cluster, cluster_sep=cluster_sep, judge_path=judge_file,
        duplicates=duplicates.value if isinstance(duplicates, Enum) else duplicates,  # type: ignore[arg-type]
        missing=missing.value if isinstance(missing, Enum) else missing,  # type: ignore[arg-type]
        format=format_in or fo.get("format_in") or "auto", wide=True if (wide or fo.get("wide")) else None,
        where=where or fo.get("where") or None, control=control or fo.get("control"),
        question=question or fo.get("question"),
    )


def emit_json(obj: Any) -> None:
    """Write JSON (the ``to_dict()`` of a result, or a plain object) to stdout."""
    from .._results import to_jsonable

    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2) + "\n")
