"""Array-level cores of the allocation designs (private; shared by ``allocate`` and ``simulate``).

Everything here works on dense integer codes (``-1`` = no label) and item indices, so the
simulation engine can call it in its hot loop without building tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _options
from ._results import Result
from .exceptions import InfeasiblePlanError

__all__ = ["DESIGNS", "LABEL_DEPENDENT", "proportional_quota", "stratified_draw", "item_modes",
           "draw_design", "AssignmentResult"]

DESIGNS: tuple[str, ...] = _options.ALLOCATION_DESIGNS  # the one registry of option values
#: Designs whose selection depends on observed labels (they break the label-independent-mask
#: assumption of the variance results in METHODS §2).
LABEL_DEPENDENT: frozenset[str] = frozenset({"strat", "panel", "seq-refined", "seq-coverage"})


def proportional_quota(sizes: np.ndarray, m: int) -> np.ndarray:
    """Items to draw per stratum: ``floor(m * N_h / N)``, the remainder one each to the larger strata.

    Ties in stratum size go to the stratum listed first. A quota never exceeds its stratum.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum())
    if m > total:
        raise InfeasiblePlanError(f"cannot draw {m} items from {total} eligible items.")
    if m == 0 or total == 0:
        return np.zeros_like(sizes)
    q = (m * sizes) // total
    rest = m - int(q.sum())
    order = np.argsort(-sizes, kind="stable")
    while rest > 0:  # at most one pass in practice (rest < number of non-empty strata)
        for h in order:
            if rest == 0:
                break
            if q[h] < sizes[h]:
                q[h] += 1
                rest -= 1
    return q


def stratified_draw(strata: np.ndarray, candidates: np.ndarray, m: int, rng: np.random.Generator,
                    *, priority: np.ndarray | None = None) -> np.ndarray:
    """Draw ``m`` of ``candidates`` (item indices) in proportion to their strata.

    Within a stratum the draw is uniform; with ``priority`` (lower first, e.g. label counts)
    items are taken in priority order with uniform random tie-breaking. Returns sorted indices.
    """
    cand = np.asarray(candidates, dtype=np.int64)
    s = strata[cand]
    labels, inv = np.unique(s, return_inverse=True)
    sizes = np.bincount(inv, minlength=labels.size)
    quota = proportional_quota(sizes, m)
    u = rng.random(cand.size)
    keys: tuple[np.ndarray, ...] = (u, inv) if priority is None else (u, priority[cand], inv)
    order = np.lexsort(keys)
    inv_sorted = inv[order]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.arange(cand.size) - starts[inv_sorted]
    take = rank < quota[inv_sorted]
    return np.sort(cand[order[take]])


def item_modes(codes: np.ndarray, n_categories: int, *, prefer: np.ndarray | None = None) -> np.ndarray:
    """Per-item mode of the labels in ``codes`` (items x raters, ``-1`` missing; abstentions ignored).

    Ties go to ``prefer[i]`` (e.g. the primary's label) when it is among the tied categories,
    else to the lowest category code. Items without a substantive label get ``-1``.
    """
    n, _ = codes.shape
    ok = (codes >= 0) & (codes < n_categories)
    rows = np.broadcast_to(np.arange(n)[:, None], codes.shape)[ok]
    counts = np.bincount(rows * n_categories + codes[ok], minlength=n * n_categories).reshape(n, n_categories)
    counts = counts.astype(np.float64)
    if prefer is not None:
        p = np.asarray(prefer)
        has = (p >= 0) & (p < n_categories)
        counts[np.flatnonzero(has), p[has]] += 0.5
    mode = np.argmax(counts, axis=1)
    mode[counts.max(axis=1) < 1] = -1
    return mode


def draw_design(
    design: str,
    *,
    n_items: int,
    sizes: Sequence[int],
    strata: np.ndarray,
    known: np.ndarray | None = None,
    n_categories: int = 0,
    exclude: np.ndarray | None = None,
    reveal: Callable[[int, np.ndarray], np.ndarray] | None = None,
    rng: np.random.Generator,
    names: Sequence[str] | None = None,
    overlap: np.ndarray | None = None,
    judged: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Items for each of ``len(sizes)`` raters under ``design`` (METHODS §2).

    Parameters
    ----------
    design : str
        One of :data:`DESIGNS`.
    n_items : int
        Number of items.
    sizes : sequence of int
        Items to assign to each rater, in the order the raters work (sequential designs).
    strata : numpy.ndarray
        Static stratum of each item (the primary's label; ``-1`` for no label is a stratum too).
    known : numpy.ndarray, optional
        Dense human codes known before the round (items x humans, ``-1`` missing), for the
        sequential designs' per-item mode and label counts.
    n_categories : int
        Number of substantive categories (codes at or above it are abstentions).
    exclude : numpy.ndarray, optional
        Boolean (raters x items): items a rater may not get (e.g. already labelled by them).
    reveal : callable, optional
        ``reveal(t, items)`` returns the codes rater ``t`` gives on ``items`` (simulation from a
        full matrix). Without it the sequential designs update label counts with the assignment
        but the strata only with labels known before the round.
    rng : numpy.random.Generator
        Source of randomness.
    names : sequence of str, optional
        The raters' names, for error messages (default: ``rater #1``, ``rater #2``, ...).
    overlap : numpy.ndarray, optional
        ``strat`` only: human labels per item before the round. Given (no primary human), each rater takes
        the items another human labelled first, so that every assigned label can be a leave-one-out
        comparison; this round's earlier raters count too.
    judged : numpy.ndarray, optional
        ``strat`` with ``overlap``: whether a judge labelled each item (items without come last).
    """
    n_r = len(sizes)
    all_items = np.arange(n_items)

    def candidates(t: int) -> np.ndarray:
        if exclude is None:
            return all_items
        return all_items[~exclude[t]]

    def check(t: int, cand: np.ndarray) -> None:
        if sizes[t] > cand.size:
            who = f"rater {names[t]!r}" if names is not None else f"rater #{t + 1}"
            raise InfeasiblePlanError(
                f"{who} needs {sizes[t]} items but only {cand.size} are available to them "
                f"(items they already labelled are excluded). Lower n_per_rater.")

    out: list[np.ndarray] = []
    if design == "random":
        for t in range(n_r):
            cand = candidates(t)
            check(t, cand)
            out.append(np.sort(rng.choice(cand, size=sizes[t], replace=False)))
        return out
    if design == "strat":
        # overlap first (no primary): inside each stratum, items another human (or an earlier rater of this
        # round) labelled come first, then items without one; items no judge labelled last. Without it,
        # independent draws give most items to one human each, and such an item is no leave-one-out comparison.
        counts = None if overlap is None else np.asarray(overlap, dtype=np.int64).copy()
        for t in range(n_r):
            cand = candidates(t)
            check(t, cand)
            pri = None if counts is None else (counts < 1).astype(np.int64) + (
                0 if judged is None else 2 * (~np.asarray(judged, dtype=bool)).astype(np.int64))
            chosen = stratified_draw(strata, cand, sizes[t], rng, priority=pri)
            out.append(chosen)
            if counts is not None:
                counts[chosen] += 1
        return out
    if design == "panel":
        m_max = max(sizes) if n_r else 0
        if exclude is not None:
            ok = ~exclude.any(axis=0)
        else:
            ok = np.ones(n_items, dtype=bool)
        cand = all_items[ok]
        if m_max > cand.size:
            raise InfeasiblePlanError(
                f"a shared panel of {m_max} items is needed but only {cand.size} items are open to "
                f"every rater. Lower n_per_rater.")
        panel = stratified_draw(strata, cand, m_max, rng)
        order = rng.permutation(panel.size)
        for t in range(n_r):
            if sizes[t] == m_max:
                out.append(panel)
            else:  # a smaller budget takes a random part of the shared panel
                out.append(np.sort(panel[order[: sizes[t]]]))
        return out
    if design in ("seq-refined", "seq-coverage"):
        if known is None:
            known_codes = np.full((n_items, 0), -1, dtype=np.int32)
        else:
            known_codes = np.asarray(known)
        prefer = strata
        extra = np.full((n_items, n_r), -1, dtype=np.int32)
        counts = ((known_codes >= 0) & (known_codes < n_categories)).sum(axis=1).astype(np.int64) \
            if known_codes.shape[1] else np.zeros(n_items, dtype=np.int64)
        for t in range(n_r):
            cand = candidates(t)
            check(t, cand)
            if n_categories > 0:
                cur = np.concatenate([known_codes, extra[:, :t]], axis=1) if t else known_codes
                st = item_modes(cur, n_categories, prefer=prefer) if cur.shape[1] else strata
            else:
                st = strata
            pri = counts if design == "seq-coverage" else None
            chosen = stratified_draw(st, cand, sizes[t], rng, priority=pri)
            out.append(chosen)
            if reveal is not None:
                lab = np.asarray(reveal(t, chosen))
                extra[chosen, t] = lab
                counts[chosen] += ((lab >= 0) & (lab < n_categories))
            else:
                counts[chosen] += 1
        return out
    raise ValueError(design)  # unreachable: callers check the design name


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class AssignmentResult(Result):
    """Which rater labels which item in the next round (see :func:`voirdire.design.allocate`; here, in
    the bottom layer, because ``diagnostics`` builds one too).

    Attributes
    ----------
    design : str
        The allocation design.
    seed : int or None
        The integer seed the draw can be reproduced from (None when a Generator was passed).
    raters : tuple of str
        Raters given work, in the order they work (sequential designs).
    n_per_rater : tuple of int
        Items assigned to each rater.
    rater, item : numpy.ndarray
        One entry per assignment (object arrays of names and item ids).
    stratum : numpy.ndarray
        The stratum label (the category's display value, or ``"none"`` for items without a
        label) the item was drawn from.
    primary : str or None
        The human whose labels define the strata (None: the per-item mode of all human labels).
    strata : dict
        Items per stratum among all items, ``{stratum: count}``.
    label_dependent : bool
        True for designs whose selection depends on labels (``strat``, ``panel``, ``seq-*``):
        the masks are then not independent of the labels, which the variance results assume.
    source_fingerprint : str
        :meth:`AnnotationTable.fingerprint` of the table the design was drawn from.
    n_items : int
        Items in the source table.
    """

    design: str
    seed: int | None
    raters: tuple[str, ...]
    n_per_rater: tuple[int, ...]
    rater: np.ndarray
    item: np.ndarray
    stratum: np.ndarray
    primary: str | None
    strata: dict[str, int]
    label_dependent: bool
    source_fingerprint: str
    n_items: int

    def to_frame(self) -> Any:
        """The assignment table (a pandas DataFrame): columns rater, item, stratum."""
        import pandas as pd

        return pd.DataFrame({"rater": self.rater, "item": self.item, "stratum": self.stratum})

    def manifest(self) -> dict[str, Any]:
        """What a reader of the assignment file needs to reproduce and audit it."""
        from . import __version__

        return {
            "design": self.design, "seed": self.seed, "source_fingerprint": self.source_fingerprint,
            "voirdire_version": __version__, "n_items_in_source": self.n_items,
            "raters": list(self.raters), "n_per_rater": list(self.n_per_rater),
            "n_assignments": int(self.rater.size), "primary": self.primary,
            "strata": dict(self.strata), "label_dependent": self.label_dependent,
        }
