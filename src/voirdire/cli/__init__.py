"""The ``voirdire`` command line (Typer): parse, call the public functions, render.

Each command lives in its own module; importing the module registers it on :data:`app`.
"""

from __future__ import annotations

from . import _agree, _assign, _bias, _demo, _estimate, _pairwise, _plan, _raters, _report, _simulate, _study, _validate, _watch  # noqa: F401
from ._app import app

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``voirdire`` console script (``--debug`` anywhere shows tracebacks)."""
    from ._errors import guard_main

    guard_main(lambda args: app(args=args, prog_name="voirdire"))
