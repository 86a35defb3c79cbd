"""The ``voirdire`` command line (Typer): parse, call the workflows, render.

Each command lives in its own module; importing the module registers it on :data:`app`. The
modules are imported when :data:`app` is first asked for, so that ``voirdire --version`` answers
before Typer and rich are loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._app import app

__all__ = ["app", "main"]


def _load_app() -> Any:
    # importing a command module registers the command; the root help lists them in this order
    from . import _agree, _plan  # noqa: F401 - agree, then overlap and plan
    from . import (  # noqa: F401
        _assign, _bias, _demo, _estimate, _pairwise, _raters, _report, _simulate, _study, _validate, _watch,
    )
    from ._app import app

    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        value = _load_app()
        globals()["app"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Entry point of the ``voirdire`` console script (``--debug`` anywhere shows tracebacks)."""
    import sys

    if sys.argv[1:] == ["--version"]:  # answered before Typer and rich are imported (issue 27: fast start)
        from .._version import __version__

        sys.stdout.write(f"voirdire {__version__}\n")
        return
    from ._errors import guard_main

    app = _load_app()
    guard_main(lambda args: app(args=args, prog_name="voirdire"))
