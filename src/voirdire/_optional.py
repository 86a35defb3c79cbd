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
EXTRAS = {"pyarrow": "parquet", "distributed": "dask", "dask": "dask", "openpyxl": "excel", "defusedxml": "excel",
          "inspect_ai": "inspect", "sklearn": "ml", "threadpoolctl": "ml"}


class MissingExtraError(VoirdireError, ImportError):
    """An optional dependency is not installed; the message names the ``pip install`` line."""


def optional_import(module: str) -> ModuleType | None:
    """The module, or ``None`` when it (or one of its own dependencies) cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _import_failure(module: str) -> str | None:
    """Why an installed ``module`` fails to import, or ``None`` when it is simply not installed."""
    import importlib.util

    try:
        if importlib.util.find_spec(module.split(".")[0]) is None:
            return None
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        return None if exc.name == module.split(".")[0] else str(exc).splitlines()[0]
    except ImportError as exc:
        return (str(exc).splitlines() or [type(exc).__name__])[0]
    except ValueError:  # sys.modules[name] = None (a blocked import) makes find_spec raise
        return None
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
        broken = _import_failure(module)
        if broken is not None:  # installed, but it does not import (e.g. pyarrow >= 26 beside numpy 1)
            raise MissingExtraError(
                f"{what} needs the optional package '{module.split('.')[0]}', which is installed but does not import: "
                f"{broken}. Reinstall it to match: pip install --force-reinstall 'voirdire[{extra}]'")
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
        why = _not_dask(scheduler)
        if why is not None:
            raise InvalidParameterError(
                f"The server at {scheduler!r} is not a Dask scheduler: {why}. Check the address (and connect only to "
                "schedulers you trust: Dask unpickles what they send).")
        try:
            return Client(scheduler, timeout="20s"), True
        except (OSError, TimeoutError, ValueError, TypeError) as exc:  # ValueError: a malformed address
            raise InvalidParameterError(
                f"Cannot reach the Dask scheduler at {scheduler!r}: {exc}. Give an address like 'tcp://host:8786'."
            ) from None
        except MemoryError:  # a reply whose length field is absurd (the probe saw a plausible one)
            raise InvalidParameterError(
                f"The server at {scheduler!r} did not answer like a Dask scheduler (its reply announced more bytes "
                "than memory holds). Check the address.") from None
    raise InvalidParameterError(
        f"The 'scheduler' parameter of {func} must be an address like 'tcp://host:8786' or a "
        f"dask.distributed.Client. Got {type(scheduler).__name__}.")


#: the longest first message a Dask scheduler sends on a new connection (its handshake is a few hundred bytes)
_HANDSHAKE_MAX = 64 << 20


def _not_dask(address: str, timeout: float = 10.0) -> str | None:
    """Why the server at a plain-TCP ``address`` is not a Dask scheduler, or ``None`` when it may be one.

    A Dask scheduler writes its handshake as soon as a connection opens, framed by an 8-byte
    little-endian length. Dask trusts that length: an SSH or HTTP server's greeting read as one
    asked for exabytes ("ran out of memory"), and a server that says nothing held the client for
    its whole timeout. The first 8 bytes, read here with a deadline, tell them apart. TLS and
    other transports, and addresses that do not connect, are left to Dask's own errors.
    """
    import socket
    import struct

    scheme, sep, rest = address.partition("://")
    if sep and scheme != "tcp":
        return None
    host, _, port = (rest if sep else address).rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return None
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as conn:
            head = b""
            while len(head) < 8:
                chunk = conn.recv(8 - len(head))
                if not chunk:
                    return "it closed the connection without a handshake"
                head += chunk
    except socket.timeout:
        return f"it sent nothing within {timeout:g} s (a scheduler greets every new connection at once)"
    except OSError:
        return None
    (n,) = struct.unpack("<Q", head)
    if n > _HANDSHAKE_MAX:
        return f"its first bytes {head!r} announce a {n:,}-byte message, not a handshake"
    return None
