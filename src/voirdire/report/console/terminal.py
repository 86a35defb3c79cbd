"""The terminal's two consoles (standard output and error) and its progress bar: nothing they print is
interpreted as markup or reaches the terminal raw.

Every rater, item, category and file name the CLI prints comes from a file someone else wrote.
These consoles never interpret console markup or emoji codes (a judge named ``[/j]`` or
``[link=http://x]`` prints as itself) and show every control character escaped (see
:func:`voirdire._safe.escape_control`), so no name can clear the screen, set the window title or
hide text. Styling is explicit: ``console.print(text, style="dim")`` or :func:`styled`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.text import Text

from ..._safe import escape_control, one_line
from ._lines import line

__all__ = ["SafeConsole", "console", "err_console", "styled", "echo_csv", "print_error", "progress_bar"]


class SafeConsole(Console):
    """A rich Console that prints strings literally: no markup, no emoji codes, control characters escaped."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        super().__init__(**kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:  # type: ignore[override]
        kwargs["markup"] = False
        kwargs["emoji"] = False
        return super().render_str(escape_control(text, keep="\n\t"), **kwargs)


#: One line from plain and styled parts, e.g. ``styled(("warning:", "yellow"), " ", message)``; every part shown
#: literally (control characters escaped), whatever it holds: the renderers' one line builder.
styled = line


console = SafeConsole()
err_console = SafeConsole(stderr=True)


def description_column() -> Any:
    """A progress-bar column showing ``task.description`` literally (no markup, control characters escaped)."""
    from rich.progress import ProgressColumn

    class _Description(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(escape_control(str(task.description)), style="progress.description")

    return _Description()


@contextlib.contextmanager
def progress_bar(first: str, *, quiet: bool = False, elapsed: bool = False, count: bool = False,
                 prefix: str = "") -> Iterator[Callable[[str, int, int], None]]:
    """The commands' progress bar on stderr (transient; ``quiet`` draws nothing, e.g. for JSON or CSV
    output) and the ``progress(step, done, total)`` callback a workflow reports to.

    Columns: ``first``, then each step after ``prefix``; the bar; the time spent (``elapsed``), or
    ``done/total`` (``count``) or the percentage, and the time left.
    """
    from rich.progress import (
        BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TimeElapsedColumn, TimeRemainingColumn,
    )

    cols: list[Any] = [description_column(), BarColumn()]
    if elapsed:
        cols.append(TimeElapsedColumn())
    else:
        cols += [MofNCompleteColumn() if count else TaskProgressColumn(), TimeRemainingColumn()]
    with Progress(*cols, console=err_console, transient=True, disable=quiet) as bar:
        task = bar.add_task(first, total=None)

        def progress(step: str, done: int, total: int) -> None:
            bar.update(task, description=prefix + step, completed=done, total=total)

        yield progress


def with_styled_words(text: str, styles: dict[str, str]) -> Text:
    """``text`` shown literally, with each whole word in ``styles`` given its style (e.g. ACCEPT in green)."""
    out = Text(escape_control(text, keep="\n\t"))
    for word, style in styles.items():
        out.highlight_regex(rf"(?<![\w-]){word}(?![\w-])", style)
    return out


def echo_csv(frame: Any) -> None:
    """A table as CSV on standard output: every cell through :func:`voirdire._safe.csv_cell` (no
    formula runs in a spreadsheet) and, when standard output is a terminal, control characters
    shown escaped like every other name the CLI prints (a file or a pipe gets the exact values)."""
    import sys

    from ..._safe import csv_frame

    text = csv_frame(frame).to_csv(index=False)
    if sys.stdout.isatty():
        text = escape_control(text, keep="\n")
    sys.stdout.write(text)
    sys.stdout.flush()


def print_error(message: str, label: str = "error:", style: str = "bold red") -> None:
    """One line on standard error: ``label`` in ``style``, then ``message`` made safe (:func:`voirdire._safe.one_line`)."""
    err_console.print(styled((label, style), " ", one_line(message)), highlight=False, soft_wrap=True)
