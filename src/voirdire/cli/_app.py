"""The Typer application and the helpers every command shares (parsing, errors, output)."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import inspect
import json
import sys
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import Any, NoReturn, Optional, TypeVar

import typer
from typer.core import TyperGroup

from .._option_ranges import check_ranges
from .._option_specs import OPTIONS, Duplicates, Level, Missing
from ..report.console.terminal import console, err_console, print_error, progress_bar  # noqa: F401 (re-exported)
from ._errors import report_exception, set_debug


class HelpGroup(TyperGroup):
    """A command group whose help lists each command's whole first paragraph, wrapped (Click's
    plain listing cuts it at one line with "...")."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            text = cmd.short_help or inspect.cleandoc(cmd.help or "").split("\n\n")[0]
            rows.append((name, " ".join(text.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


app = typer.Typer(
    name="voirdire",
    cls=HelpGroup,
    help="Examine an LLM judge before it may serve: agreement, validation, design, estimation, pairwise.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain (Click-style) help: Rich's option panels truncated long option names at 80 columns
    # ("--min-items-per…"); the plain layout puts a long name on its own line instead (issue 32).
    rich_markup_mode=None,
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
#: the reading options of the running command, set by :func:`format_options`, read by :func:`load_table`
_FORMAT_OPTS: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("voirdire_format_opts", default={})


#: An option group's options: parameter name -> annotation, in the order ``--help`` lists them. Their flags, defaults
#: and help are the registry's ``"<group>.<name>"``, or ``"<command>.<name>"`` where a command gives one its own
#: meaning, default or name (:data:`voirdire._option_specs.OPTIONS`).
OptionGroup = dict[str, Any]

#: What FILE holds (:func:`format_options`).
_FORMAT_SPECS: OptionGroup = {"format_in": str, "wide": bool, "where": Optional[list[str]], "control": Optional[str],
                              "question": Optional[str], "by": Optional[list[str]]}
_FORMAT_PARAMS = tuple(_FORMAT_SPECS)


def _spec_parameters(group: str, specs: OptionGroup, *, command: str | None = None,
                     only: tuple[str, ...] | None = None) -> list[inspect.Parameter]:
    """``specs`` as keyword-only parameters whose defaults are the registry's options (see :data:`OptionGroup`);
    a command may keep ``only`` some."""
    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                              default=option(own if (own := f"{command}.{name}") in OPTIONS else f"{group}.{name}"))
            for name, annotation in specs.items() if only is None or name in only]


#: the commands that group by ``--by`` (the others say they do not, before any work)
BY_COMMANDS = frozenset({"validate_command", "agree_command", "report_command", "raters_command",
                         "estimate_command", "watch_command"})


def format_options(func: F) -> F:
    """Give a command the options that say what its FILE holds, declared once here.

    ``--format-in``, ``--wide``, ``--where``, ``--control`` and ``--question`` are appended to
    the command's own options; :func:`load_table` reads them, so the command body needs no change.
    """
    import typing

    sig = inspect.signature(func)
    hints = typing.get_type_hints(func) if not hasattr(func, "__signature__") else {}
    own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()]
    params = own + _spec_parameters("format", _FORMAT_SPECS)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opts = {k: kwargs.pop(k) for k in _FORMAT_PARAMS if k in kwargs}
        if opts.get("by") and func.__name__ not in BY_COMMANDS:
            fail("--by is not available for this command yet; run it once per group with --where COLUMN=VALUE.")
        token = _FORMAT_OPTS.set(opts)
        try:
            return func(*args, **kwargs)
        finally:
            _FORMAT_OPTS.reset(token)

    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # typer must read the new signature, not the wrapped one
    return wrapper  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class ReaderOptions:
    """The options every command that reads an annotation file shares (see :func:`reader_options`)."""

    scale: Level | None = None
    categories: list[str] | None = None
    abstain: list[str] | None = None
    item: str = "item"
    rater: str = "rater"
    label: str = "label"
    role: str | None = None
    cluster: str | None = None
    cluster_sep: str | None = None
    duplicates: Duplicates | str = "error"
    missing: Missing | str = "error"

    def read_kwargs(self) -> dict[str, Any]:
        """These options as keyword arguments of :func:`voirdire.data.read_annotations` (plain values)."""
        return dict(scale=self.scale.value if isinstance(self.scale, Enum) else self.scale,
                    categories=split_categories(self.categories), abstain=tuple(self.abstain or ()),
                    item=self.item, rater=self.rater, label=self.label, role=self.role, cluster=self.cluster,
                    cluster_sep=self.cluster_sep, duplicates=_value(self.duplicates), missing=_value(self.missing))

    def load_groups(self, file: Path, *, judges: list[str] | None = None) -> Any:
        """Read ``file`` once, split by the command's ``--by`` columns (:func:`voirdire.data.read_annotation_groups`)."""
        return load_groups(file, judges=judges, **self.read_kwargs())

    @property
    def by(self) -> list[str]:
        """The running command's ``--by`` columns (empty when not given)."""
        return list(_FORMAT_OPTS.get().get("by") or [])

    def load(self, file: Path, *, judges: list[str] | None = None, **extra: Any) -> Any:
        """Read ``file`` with these options."""
        return load_table(file, judges=judges, **self.read_kwargs(), **extra)


#: The shared reader options (:func:`reader_options`).
_READER_SPECS: OptionGroup = {"scale": Optional[Level], "categories": Optional[list[str]],
                              "abstain": Optional[list[str]], "item": str, "rater": str, "label": str,
                              "role": Optional[str], "cluster": Optional[str], "cluster_sep": Optional[str],
                              "duplicates": Duplicates, "missing": Missing}


def _reader_parameters(**spec: Any) -> list[inspect.Parameter]:
    """The shared reader options as parameters (:data:`_READER_SPECS`; ``spec``: see :func:`_spec_parameters`)."""
    return _spec_parameters("reader", _READER_SPECS, **spec)


READER_OPTION_NAMES = tuple(f.name for f in dataclasses.fields(ReaderOptions))


def _option_group(func: F, argname: str, cls: type, parameters: list[inspect.Parameter]) -> F:
    """Replace ``func``'s parameter ``argname`` by the options ``parameters`` (Typer reads the new
    signature); the wrapper builds ``cls(**those options)`` and passes it as ``argname``.

    An option the command already declares (e.g. ``--rater`` from the graded reader group) is
    shared: it is not declared twice, and its value goes both to ``cls`` and to the command."""
    import typing

    try:
        hints = typing.get_type_hints(func)
    except NameError:  # an already wrapped command: its annotations are the evaluated ones
        hints = dict(getattr(func, "__annotations__", {}))
    sig = inspect.signature(func)
    own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()
           if p.name != argname]
    taken = {p.name for p in own}
    names = tuple(f.name for f in dataclasses.fields(cls))
    shared = tuple(n for n in names if n in taken)
    params = own + [p for p in parameters if p.name not in taken]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        group = cls(**{k: (kwargs[k] if k in shared else kwargs.pop(k)) for k in names if k in kwargs})
        return func(*args, **{argname: group}, **kwargs)

    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # typer must read the new signature, not the wrapped one
    return wrapper  # type: ignore[return-value]


def reader_options(func: F | None = None, **spec: Any) -> Any:
    """Give a command the shared reader options, declared once here.

    The command takes ``reader: ReaderOptions`` instead of the eleven options; its ``--help``
    lists them after its own. ``@reader_options(command=..., only=...)`` gives it some of them, with the meaning,
    default or name the command's registry entries give them (see :func:`_spec_parameters`).
    """
    if func is None:
        return lambda f: _option_group(f, "reader", ReaderOptions, _reader_parameters(**spec))
    return _option_group(func, "reader", ReaderOptions, _reader_parameters())


@dataclasses.dataclass(frozen=True)
class PairwiseReaderOptions:
    """The options of every command that reads a file of pairwise verdicts (``pairwise``, ``bias``,
    ``report --pairwise``), declared once (see :func:`pairwise_reader_options`)."""

    pair: list[str] | None = None
    rater: str = "rater"
    verdict: str = "verdict"
    order: str = "order"
    role: str | None = None
    presented: bool = False
    verdict_map: list[str] | None = None
    missing: Missing | str = "error"

    def __post_init__(self) -> None:  # a malformed --verdict-map fails before any reading
        from ..workflows import verdict_spellings

        verdict_spellings(self.verdict_map)

    @property
    def pair_key(self) -> list[str]:
        """The pair-id column(s) (``--pair``, repeatable; default ``pair``)."""
        return list(self.pair) if self.pair else ["pair"]

    def read(self, file: Path, *, judges: list[str] | tuple[str, ...] | None = (),
             fallback_judges: list[str] | tuple[str, ...] = (), covariates: bool = False,
             role_if_present: bool = False) -> tuple[Any, Any]:
        """Read ``file`` (a long table, or a public set's folder) into ``(PairwiseTable, covariates)``.

        Judges: ``judges`` and/or the ``--role`` column; with neither, the file's ``role`` column
        when it has one, else the ``fallback_judges`` that appear in it. ``covariates``: also return
        one row per pair with the ``model_a, model_b, len_a, len_b`` columns the file has (None
        when it has none), for :func:`voirdire.pairwise.bias_report`. ``role_if_present``: a
        ``--role`` column the file lacks is ignored (``report``, where ``--role`` is the graded
        file's too)."""
        from ..workflows import read_pairwise_votes

        return read_pairwise_votes(file, pair=self.pair_key, rater=self.rater, verdict=self.verdict, order=self.order,
                                   role=self.role, presented=self.presented, verdict_map=self.verdict_map,
                                   missing=_value(self.missing), judges=judges, fallback_judges=fallback_judges,
                                   covariates=covariates, role_if_present=role_if_present)


#: The options of a file of pairwise verdicts (:func:`pairwise_reader_options`).
_PAIRWISE_SPECS: OptionGroup = {"pair": Optional[list[str]], "rater": str, "verdict": str, "order": str,
                                "role": Optional[str], "presented": bool, "verdict_map": Optional[list[str]],
                                "missing": Missing}


def pairwise_reader_options(func: F) -> F:
    """Give a command the pairwise reader options (``PairwiseReaderOptions``), declared once here.

    The command takes ``preader: PairwiseReaderOptions``. Apply it above :func:`reader_options`
    when a command reads both kinds of file: ``--rater``, ``--role`` and ``--missing`` are then
    shared by the two readers."""
    return _option_group(func, "preader", PairwiseReaderOptions, _spec_parameters("pairwise-reader", _PAIRWISE_SPECS))


#: Exit codes of every command: ran (and passed any gate); could not run (one-line error); the
#: command line itself was malformed (Click's usage error); ran and failed the ``--fail-on`` gate.
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_GATE = 0, 1, 2, 3


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code``."""
    print_error(message)
    raise typer.Exit(code)


def require_overlap(table: Any) -> None:
    """Refuse (one line, exit 1) a table in which no item has labels from two raters: nothing to compare."""
    from ..workflows import overlap_problem

    problem = overlap_problem(table)
    if problem:
        fail(problem)


#: Notes found while reading (e.g. numeric labels read as nominal), printed once the command has
#: succeeded (an error keeps its one line on stderr).
_DEFERRED_NOTES: list[str] = []


def defer_note(message: str) -> None:
    """A note for stderr, printed after the command's output when it succeeds."""
    if message not in _DEFERRED_NOTES:
        _DEFERRED_NOTES.append(message)


def _flush_notes() -> None:
    for n in _DEFERRED_NOTES:
        print_error(n, "note:", "yellow")
    _DEFERRED_NOTES.clear()


def handle_errors(func: F) -> F:
    """Turn any exception into a one-line message and exit code 1 (see :mod:`voirdire.cli._errors`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bad = check_ranges(kwargs)  # option ranges, declared once in voirdire/_option_ranges.py
        if bad is not None:
            fail(bad)
        _DEFERRED_NOTES.clear()
        fmt = kwargs.get("output_format", kwargs.get("output", "table"))
        # machine-readable output (json, csv, markdown, junit) carries its notes itself; stderr stays clean
        human = str(getattr(fmt, "value", fmt) or "table") == "table"
        try:
            out = func(*args, **kwargs)
        except typer.Exit as exc:
            if exc.exit_code in (0, EXIT_GATE) and human:
                _flush_notes()
            else:
                _DEFERRED_NOTES.clear()
            raise
        except Exception as exc:  # noqa: BLE001 - our errors, OS errors and bugs alike end in one line
            _DEFERRED_NOTES.clear()
            message = report_exception(exc)
            if message is None:
                raise
            fail(message)
        if human:
            _flush_notes()
        _DEFERRED_NOTES.clear()
        return out

    return wrapper  # type: ignore[return-value]


def split_categories(categories: list[str] | None) -> list[str] | None:
    """``--categories`` given comma-separated or repeated, as one list (``None`` when not given)."""
    if not categories:
        return None
    return [c.strip() for part in categories for c in part.split(",") if c.strip()]


def _value(x: Any) -> Any:
    return x.value if isinstance(x, Enum) else x


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
    from ..workflows import read_table

    fo = _FORMAT_OPTS.get()
    if fo.get("by"):
        fail("--by is not available for this command yet; run it once per group with --where COLUMN=VALUE.")
    table, note = read_table(
        file, format_options=fo, item=item, rater=rater, label=label, judges=judges or (), role=role,
        scale=_value(scale), categories=split_categories(categories), abstain=abstain or (), cluster=cluster,
        cluster_sep=cluster_sep, judge_path=judge_file, duplicates=_value(duplicates), missing=_value(missing),
        format=format_in, wide=wide, where=where, control=control, question=question)
    if note:
        defer_note(note)
    return table


def load_groups(file: Path, *, judges: list[str] | None = None, **kwargs: Any) -> Any:
    """Read an annotation file once into one table per ``--by`` group and the pooled table
    (:func:`voirdire.data.read_annotation_groups`), with the running command's format options."""
    from ..workflows import read_table_groups

    fo = _FORMAT_OPTS.get()
    grouped, note = read_table_groups(file, by=list(fo.get("by") or ()), format_options=fo, judges=judges or (),
                                      categories=split_categories(kwargs.pop("categories", None)), **kwargs)
    if note:
        defer_note(note)
    return grouped


def scale_notes(table: Any, reader: ReaderOptions) -> list[str]:
    """The note for numeric labels read as nominal (:func:`voirdire.workflows.numeric_nominal_note`) when
    ``--scale`` was not given, for a JSON document's notes (the terminal gets it on stderr)."""
    from ..workflows import numeric_nominal_note

    note = numeric_nominal_note(table) if reader.scale is None else None
    return [note] if note else []


#: Keys a wrapping command adds to the JSON object the command it runs emits (``study estimate`` adds
#: ``study``: the probability sample it estimated from), set with :func:`json_extra`.
_JSON_EXTRA: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("voirdire_json_extra", default={})


@contextlib.contextmanager
def json_extra(**keys: Any) -> Iterator[None]:
    """While the block runs, every JSON object :func:`emit_json` writes also holds ``keys``."""
    token = _JSON_EXTRA.set({**_JSON_EXTRA.get(), **keys})
    try:
        yield
    finally:
        _JSON_EXTRA.reset(token)


def emit_result_json(res: Any, head: dict[str, Any], *, notes: list[str] | None = None,
                     drop: tuple[str, ...] = ()) -> None:
    """``res.to_dict()`` as JSON: ``head`` first, ``notes`` before its own notes, the ``drop`` keys left out."""
    doc = {**head, **res.to_dict()}
    if notes:
        doc["notes"] = notes + doc["notes"]
    emit_json({k: v for k, v in doc.items() if k not in drop})


def emit_json(obj: Any) -> None:
    """Write JSON (the ``to_dict()`` of a result, or a plain object) to stdout."""
    from .._results import to_jsonable

    extra = _JSON_EXTRA.get()
    if extra and isinstance(obj, dict):
        obj = {**obj, **extra}
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2) + "\n")


def option(name: str) -> Any:
    """The option ``name`` of the registry (:data:`voirdire._option_specs.OPTIONS`): its flags, default and help."""
    spec = OPTIONS[name]
    return typer.Option(spec.default, *spec.flags, help=spec.help, readable=spec.readable, min=spec.min,
                        hidden=spec.hidden, metavar=spec.metavar)
