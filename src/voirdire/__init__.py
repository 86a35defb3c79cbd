"""voirdire: tell whether an LLM judge can be trusted, and how many human labels you need to know it."""

from typing import TYPE_CHECKING, Any

from . import exceptions
from ._version import __version__
from .exceptions import VoirdireError

if TYPE_CHECKING:
    from .data import AnnotationTable, Scale, read_annotations


# Imported when first used, so that `voirdire --help` and `--version` load neither pandas nor numpy.
_LAZY = {"AnnotationTable": "data", "Scale": "data", "read_annotations": "data"}

__all__ = ["AnnotationTable", "Scale", "read_annotations", "VoirdireError", "exceptions", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'voirdire' has no attribute {name!r}")
