"""Optional dependencies, imported lazily in one place.

``pyarrow`` (Parquet, fast CSV), ``dask[distributed]`` (``simulate --scheduler``), ``openpyxl``
(Excel), ``inspect_ai`` (Inspect logs) and ``scikit-learn`` (``dr_mean(model="gbm")``) are extras:
``pip install 'voirdire[parquet,dask,excel,inspect,ml]'``
or ``voirdire[all]``. Code that can do without one asks :func:`optional_import` and falls back;
code that cannot calls :func:`require` and the user gets one line naming the install command.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .exceptions import InvalidParameterError, VoirdireError

__all__ = ["EXTRAS", "MissingExtraError", "dask_client", "optional_import", "require"]

#: module -> the extra that installs it
EXTRAS = {"pyarrow": "parquet", "distributed": "dask", "dask": "dask", "openpyxl": "excel", "inspect_ai": "inspect",
          "sklearn": "ml", "threadpoolctl": "ml"}


class MissingExtraError(VoirdireError, ImportError):
    """An optional dependency is not installed; the message names the ``pip install`` line."""


def optional_import(module: str) -> ModuleType | None:
    """The module, or ``None`` when it (or one of its own dependencies) cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def require(module: str, what: str, extra: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` with the ``pip install`` line.

    Examples
    --------
    >>> require("json", "Reading JSON").__name__
    'json'
    """
    mod = optional_import(module)
    if mod is None:
        extra = extra or EXTRAS.get(module.split(".")[0], "all")
        raise MissingExtraError(
            f"{what} needs the optional package '{module.split('.')[0]}'. "
            f"Install it with: pip install 'voirdire[{extra}]'")
    return mod


def dask_client(scheduler: Any, func: str) -> tuple[Any, bool]:
    """A ``dask.distributed.Client`` for ``scheduler`` (an address or a client) and whether the
    caller owns it (and closes it); one-line errors for a missing extra or an unreachable address."""
    Client = require("distributed", "Running on a Dask scheduler (scheduler=, --scheduler)").Client
    if isinstance(scheduler, Client):
        return scheduler, False
    if isinstance(scheduler, str):
        try:
            return Client(scheduler, timeout="20s"), True
        except (OSError, TimeoutError, ValueError, TypeError) as exc:  # ValueError: a malformed address
            raise InvalidParameterError(
                f"Cannot reach the Dask scheduler at {scheduler!r}: {exc}. Give an address like 'tcp://host:8786'."
            ) from None
    raise InvalidParameterError(
        f"The 'scheduler' parameter of {func} must be an address like 'tcp://host:8786' or a "
        f"dask.distributed.Client. Got {type(scheduler).__name__}.")
