"""voirdire: tell whether an LLM judge can be trusted, and how many human labels you need to know it."""

from importlib.metadata import PackageNotFoundError, version

from . import exceptions
from .data import AnnotationTable, Scale, read_annotations
from .exceptions import VoirdireError

try:
    __version__ = version("voirdire")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["AnnotationTable", "Scale", "read_annotations", "VoirdireError", "exceptions", "__version__"]
