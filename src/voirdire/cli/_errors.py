"""The command line's last line of defence: no input, option or bug ever prints a raw traceback.

:func:`report_exception` turns an exception into the one line a user sees (exit code 1):
our own errors and file-system errors as they are; running out of memory or recursion as
"too large"; anything else as an ``internal error`` with a hint to report it. The traceback is
shown only with ``--debug`` (anywhere on the command line) or ``VOIRDIRE_DEBUG=1``.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from .._safe import escape_control

__all__ = ["debug_enabled", "set_debug", "one_line", "report_exception", "strip_debug_flag"]

_STATE = {"debug": False}
_LONG_WORD = re.compile(r"\S{301,}")


def set_debug(on: bool) -> None:
    _STATE["debug"] = bool(on)


def debug_enabled() -> bool:
    return _STATE["debug"] or os.environ.get("VOIRDIRE_DEBUG", "") not in ("", "0")


def strip_debug_flag(argv: list[str]) -> list[str]:
    """``argv`` without ``--debug`` (which turns debugging on); ``--`` ends option parsing."""
    out: list[str] = []
    for k, a in enumerate(argv):
        if a == "--":
            out.extend(argv[k:])
            break
        if a == "--debug":
            set_debug(True)
            continue
        out.append(a)
    return out


def one_line(message: Any) -> str:
    """A message made safe to print: control characters escaped, any run over 300 characters cut."""
    text = escape_control(str(message), keep="\n")
    return _LONG_WORD.sub(lambda m: m.group(0)[:120] + f"... ({len(m.group(0)):,} characters)", text)


def report_exception(exc: BaseException) -> str | None:
    """The error line for ``exc``, or ``None`` when it must propagate (exits, usage errors, --debug)."""
    from ..exceptions import VoirdireError

    if isinstance(exc, (SystemExit, KeyboardInterrupt, GeneratorExit)):
        return None
    if isinstance(exc, _control_flow_exceptions()):
        return None
    if isinstance(exc, VoirdireError):
        return str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"cannot decode the input as text ({exc.reason} at byte {exc.start}). Save the file as UTF-8."
    if isinstance(exc, OSError):
        return str(exc) if str(exc) else type(exc).__name__
    if debug_enabled():
        return None
    if isinstance(exc, MemoryError):
        return ("too large: the computation ran out of memory. Use fewer items, raters or categories "
                "(or --resamples), or a machine with more memory.")
    if isinstance(exc, RecursionError):
        return "too large: the input is nested too deeply to process."
    from .. import __version__

    detail = one_line(f"{type(exc).__name__}: {exc}")
    if len(detail) > 300:
        detail = detail[:297] + "..."
    return (f"internal error ({detail}). This is a bug in voirdire {__version__}: please report it with the "
            "command you ran; rerun with --debug to see the traceback.")


def _control_flow_exceptions() -> tuple[type[BaseException], ...]:
    """The exceptions Typer handles itself (exits, aborts, usage errors: exit code 2).

    Typer (>= 0.26, the declared floor) carries its own copy of click and installs no click.
    """
    import typer
    from typer._click import exceptions as click_exceptions

    return (typer.Exit, typer.Abort, click_exceptions.ClickException)


def _print_error(message: str) -> None:
    from ._console import err_console, styled

    err_console.print(styled(("error:", "bold red"), " ", one_line(message)), highlight=False, soft_wrap=True)


def guard_main(run: Any, argv: list[str] | None = None) -> Any:
    """Run ``run(args)`` (the Typer app) with the top-level handler; ``argv`` defaults to ``sys.argv[1:]``."""
    args = strip_debug_flag(list(sys.argv[1:] if argv is None else argv))
    try:
        return run(args)
    except BaseException as exc:  # noqa: BLE001 - the last line of defence
        message = report_exception(exc)
        if message is None:
            raise
        _print_error(message)
        raise SystemExit(1) from None
