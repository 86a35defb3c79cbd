"""The design-mask engine (private): it lives in the shared layer (:mod:`voirdire._designs`), used by
``design`` (allocation) and ``simulate`` (subsampling) alike, so neither package imports the other for it."""

from .._designs import *  # noqa: F401,F403
from .._designs import __all__  # noqa: F401
