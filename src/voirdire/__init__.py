"""voirdire: tell whether an LLM judge can be trusted, and how many human labels you need to know it."""

from typing import TYPE_CHECKING, Any

from . import exceptions
from .exceptions import VoirdireError

if TYPE_CHECKING:
    from .data import AnnotationTable, Scale, read_annotations

    __version__: str

# Imported when first used, so that `voirdire --help` and `--version` load neither pandas nor numpy.
_LAZY = {"AnnotationTable": "data", "Scale": "data", "read_annotations": "data"}

__all__ = ["AnnotationTable", "Scale", "read_annotations", "VoirdireError", "exceptions", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    # the version is looked up when asked for: importlib.metadata costs every command ~0.1 s at start
    if name != "__version__":
        raise AttributeError(f"module 'voirdire' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("voirdire")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        v = "0.0.0"
    globals()["__version__"] = v
    return v
