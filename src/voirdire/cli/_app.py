"""The Typer application and the helpers every command shares (parsing, errors, output)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer

from ._console import console, err_console, styled
from ._errors import one_line, report_exception, set_debug

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


def format_in_option() -> Any:
    """``--format-in``: what the file holds when the extension and content do not say (or say wrong)."""
    return typer.Option("auto", "--format-in", help="What FILE holds: auto (guess), long, wide, csv, tsv, jsonl, json, "
                        "parquet, excel, label-studio, label-studio-min, argilla, inspect, promptfoo, lm-eval, alttest.")


def wide_option() -> Any:
    """``--wide``: one row per item, one column per rater."""
    return typer.Option(False, "--wide", help="FILE is wide: one row per item, one column per rater (--judge names "
                        "the judge columns). Detected when there are no rater/label columns.")


def where_option() -> Any:
    """``--where COLUMN=VALUE`` (repeatable)."""
    return typer.Option(None, "--where", help="Keep only rows where COLUMN=VALUE (repeatable; one column repeated "
                        "means any of its values).")


def control_option() -> Any:
    """``--control``: the Label Studio control to read."""
    return typer.Option(None, "--control", help="Label Studio export: the control (from_name) holding the label.")


def question_option() -> Any:
    """``--question``: the Argilla question to read."""
    return typer.Option(None, "--question", help="Argilla export: the question whose answers are the labels.")


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code``."""
    err_console.print(styled(("error:", "bold red"), " ", one_line(message)), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def handle_errors(func: F) -> F:
    """Turn any exception into a one-line message and exit code 1 (see :mod:`voirdire.cli._errors`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
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
               format_in: str = "auto", wide: bool = False, where: list[str] | None = None,
               control: str | None = None, question: str | None = None) -> Any:
    """Read an annotation file with the options every command shares (``-`` reads standard input)."""
    from ..data import read_annotations

    cats: list[str] | None = None
    if categories:
        cats = [c.strip() for part in categories for c in part.split(",") if c.strip()]
    return read_annotations(
        file, item=item, rater=rater, label=label, judges=judges or (), role=role,
        scale=scale.value if isinstance(scale, Enum) else scale, categories=cats, abstain=abstain or (),
        cluster=cluster, cluster_sep=cluster_sep, judge_path=judge_file,
        duplicates=duplicates.value if isinstance(duplicates, Enum) else duplicates,  # type: ignore[arg-type]
        missing=missing.value if isinstance(missing, Enum) else missing,  # type: ignore[arg-type]
        format=format_in, wide=True if wide else None,
        where=where or None, control=control, question=question,
    )


def emit_json(obj: Any) -> None:
    """Write JSON (the ``to_dict()`` of a result, or a plain object) to stdout."""
    from .._results import to_jsonable

    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2) + "\n")
