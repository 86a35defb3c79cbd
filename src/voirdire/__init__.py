"""voirdire: tell whether an LLM judge can be trusted, and how many human labels you need to know it."""

from typing import TYPE_CHECKING

from . import exceptions
from .data import AnnotationTable, Scale, read_annotations
from .exceptions import VoirdireError

if TYPE_CHECKING:
    __version__: str

__all__ = ["AnnotationTable", "Scale", "read_annotations", "VoirdireError", "exceptions", "__version__"]


def __getattr__(name: str) -> str:
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
