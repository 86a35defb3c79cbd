"""The coefficient engine, for analyses built on agreement's sufficient statistics.

Every coefficient is a :class:`Spec`: ``stats()`` gives an ``(n_items, k)`` matrix of per-item
sufficient statistics, ``estimate(sums)`` maps ``(B, k)`` column sums to ``(B,)`` estimates, and
a bootstrap resample is ``estimate(W @ stats)`` with ``W`` the resample's unit multiplicities.
:func:`voirdire.diagnostics.rater_diagnostics` builds its own specs on this (a rater against the
pool) so that one joint bootstrap serves every quantity it reports.

Names here are public for the package's own analyses and for extensions; users call the
coefficient functions of :mod:`voirdire.agreement`.
"""

from __future__ import annotations

from ._coefficients import _level, _make_spec
from . import _core
from ._core import Options, _AlphaMatrix, _AlphaMoments, _AlphaOrdinal, _AlphaRatio, _GwetFamily, _Spec, bootstrap, run
from ._prepare import Prepared, prepare

__all__ = ["Options", "Prepared", "Spec", "additive", "bootstrap", "index_free_units", "make_spec", "prepare",
           "resolve_level", "run"]

#: The base class of every coefficient's specification (see the module docstring).
Spec = _Spec


def make_spec(name: str, prep: Prepared, *, level: object = None, weights: object = None) -> _Spec:
    """The :class:`Spec` of coefficient ``name`` (one of ``voirdire.agreement.COEFFICIENTS``) on ``prep``."""
    return _make_spec(name, prep, level=level, weights=weights)


def resolve_level(level: object, prep: Prepared, func: str) -> str:
    """The measurement level to use: ``level`` checked, or the table's own (nominal under ``category`` abstention)."""
    return _level(level, prep, func)


def additive(spec: _Spec) -> bool:
    """Whether ``spec``'s per-item statistics add over items and depend only on the item's own labels.

    False for ordinal alpha (its metric depends on every item's ranks) and ratio alpha (its
    nodes come from the whole table), and for specs of other kinds.
    """
    if isinstance(spec, (_AlphaOrdinal, _AlphaRatio)):
        return False
    return isinstance(spec, (_GwetFamily, _AlphaMatrix, _AlphaMoments))


def index_free_units(n_units: int) -> bool:
    """Whether the engine's bootstrap over ``n_units`` units (items or clusters) takes index-free unit
    weights (:mod:`voirdire._stats._poisson`) rather than drawing indices: from 20,000 units."""
    return n_units >= _core._POISSON_MIN_UNITS
