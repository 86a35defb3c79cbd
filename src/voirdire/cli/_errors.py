"""The command line's last line of defence: no input, option or bug ever prints a raw traceback.

Every exception becomes the one line of :func:`voirdire.exceptions.user_message` (exit code 1). The
traceback is shown only with ``--debug`` (anywhere on the command line) or ``VOIRDIRE_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["debug_enabled", "set_debug", "report_exception", "strip_debug_flag", "guard_main"]

_STATE = {"debug": False}


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


def report_exception(exc: BaseException) -> str | None:
    """The error line for ``exc``, or ``None`` when it must propagate (Typer's exits and usage errors, --debug)."""
    import typer
    from typer._click import exceptions as click_exceptions  # Typer (>= 0.26) carries its own click

    from ..exceptions import user_message

    if isinstance(exc, (typer.Exit, typer.Abort, click_exceptions.ClickException)):
        return None
    return user_message(exc, debug=debug_enabled())


def guard_main(run: Any, argv: list[str] | None = None) -> Any:
    """Run ``run(args)`` (the Typer app) with the top-level handler; ``argv`` defaults to ``sys.argv[1:]``."""
    args = strip_debug_flag(list(sys.argv[1:] if argv is None else argv))
    try:
        return run(args)
    except BaseException as exc:  # noqa: BLE001 - the last line of defence
        message = report_exception(exc)
        if message is None:
            raise
        from ..report.console.terminal import print_error

        print_error(message)
        raise SystemExit(1) from None
