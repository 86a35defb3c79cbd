"""Overlap diagnostics: who labelled what, who shares items with whom, and what the LOO rule can use."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._checks import check_positive_int
from .._results import Result, to_jsonable
from ..data import AnnotationTable
from ..exceptions import InvalidParameterError, SmallSampleWarning

__all__ = ["OverlapResult", "overlap", "find_primary"]

_FUNC = "overlap"


def _present(table: AnnotationTable) -> np.ndarray:
    """Boolean (items x raters): a substantive (non-abstention) label is present."""
    codes = table.dense()
    return (codes >= 0) & (codes < table.n_categories)


def find_primary(table: AnnotationTable, present: np.ndarray | None = None) -> str | None:
    """The human who labelled every item (the most-covering one if several), or ``None``."""
    p = _present(table) if present is None else present
    hidx = table.human_idx
    if hidx.size == 0:
        return None
    cov = p[:, hidx].sum(axis=0)
    best = int(np.argmax(cov))
    if cov[best] == table.n_items:
        return str(table.raters[hidx[best]])
    return None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class OverlapResult(Result):
    """The overlap structure of an annotation table (see :func:`overlap`).

    Attributes
    ----------
    raters, roles : tuple of str
        Rater names and roles, in table order.
    n_items : int
        Items in the table.
    n_labelled : numpy.ndarray
        Items each rater gave a substantive label to (abstentions are not counted).
    n_abstentions : numpy.ndarray
        Abstentions per rater.
    coverage : numpy.ndarray
        ``n_labelled / n_items`` per rater (the per-rater coverage rho).
    observed : numpy.ndarray
        (raters x raters) items both raters labelled; the diagonal is ``n_labelled``.
    expected : numpy.ndarray
        Overlap expected if every rater's items were an independent uniform draw of their size:
        ``n_a * n_b / n_items`` (``rho * n`` with a full-coverage rater, ``rho_a * rho_b * n``
        between two partial raters). Exact in expectation for a fixed-size uniform draw.
    primary : str or None
        The human who labelled every item (None when no human did).
    secondaries : tuple of str
        The other humans.
    shared_panel : bool or None
        Whether the secondaries share one panel: every pair of secondaries overlaps on at
        least 90% of the smaller one's items. None with fewer than two secondaries.
    panel_share : float
        Mean over secondary pairs of ``observed / min(n_a, n_b)`` (1 = nested or identical sets,
        close to the smaller coverage for independent draws); nan with fewer than two.
    global_overlap_rate : float
        Mean over human pairs of ``observed / n_items``: the *global* rho. It is a different
        quantity from the per-rater coverage and must not be converted with ``m = rho * n``.
    judges : tuple of str
        The judges the eligible counts refer to.
    eligible : numpy.ndarray
        (humans x judges) items of the leave-one-human-out rule: labelled by the held-out human,
        by the judge and by at least one other human.
    n_pairs : numpy.ndarray
        (humans x judges) comparison pairs: for each eligible item, one per other human labelling it.
    min_eligible : int
        The threshold below which a warning was issued.
    below_min : tuple of tuple of str
        (human, judge) comparisons with fewer than ``min_eligible`` eligible items.
    items, eligible_mask : numpy.ndarray
        Item ids and the (humans x judges x items) eligibility mask behind ``eligible``; use
        :meth:`eligible_items`.
    """

    raters: tuple[str, ...]
    roles: tuple[str, ...]
    n_items: int
    n_labelled: np.ndarray
    n_abstentions: np.ndarray
    coverage: np.ndarray
    observed: np.ndarray
    expected: np.ndarray
    primary: str | None
    secondaries: tuple[str, ...]
    shared_panel: bool | None
    panel_share: float
    global_overlap_rate: float
    humans: tuple[str, ...]
    judges: tuple[str, ...]
    eligible: np.ndarray
    n_pairs: np.ndarray
    min_eligible: int
    below_min: tuple[tuple[str, str], ...]
    items: np.ndarray = dataclasses.field(default_factory=lambda: np.array([], dtype=object), repr=False)
    eligible_mask: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0, 0), bool), repr=False)

    def eligible_items(self, human: str, judge: str) -> np.ndarray:
        """Ids of the items eligible for held-out ``human`` against ``judge``.

        Examples
        --------
        >>> from voirdire.datasets import load_hanna
        >>> res = overlap(load_hanna(criterion="Surprise"), judges=["ChatGPT"])
        >>> len(res.eligible_items("human_1", "ChatGPT")) == int(res.eligible[0, 0])
        True
        """
        if human not in self.humans:
            raise InvalidParameterError(f"{human!r} is not a human of this table. Humans: {list(self.humans)}.")
        if judge not in self.judges:
            raise InvalidParameterError(f"{judge!r} is not among the judges of this result: {list(self.judges)}.")
        return self.items[self.eligible_mask[self.humans.index(human), self.judges.index(judge)]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields (the per-item eligibility mask is left out; see :meth:`eligible_items`)."""
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.name not in ("items", "eligible_mask")}

    def to_frame(self) -> pd.DataFrame:
        """One row per rater pair (a < b): observed and expected overlap and their ratio."""
        rows: list[dict[str, Any]] = []
        r = len(self.raters)
        for a in range(r):
            for b in range(a + 1, r):
                exp = float(self.expected[a, b])
                obs = int(self.observed[a, b])
                rows.append({"rater_a": self.raters[a], "rater_b": self.raters[b],
                             "role_a": self.roles[a], "role_b": self.roles[b],
                             "observed": obs, "expected": exp,
                             "ratio": obs / exp if exp > 0 else float("nan")})
        return pd.DataFrame(rows, columns=["rater_a", "rater_b", "role_a", "role_b", "observed",
                                           "expected", "ratio"])

    def coverage_frame(self) -> pd.DataFrame:
        """One row per rater: labelled items, abstentions and coverage."""
        kind = ["primary" if r == self.primary else ("secondary" if r in self.secondaries else "judge")
                for r in self.raters]
        return pd.DataFrame({"rater": list(self.raters), "role": list(self.roles), "kind": kind,
                             "n_labelled": self.n_labelled, "n_abstentions": self.n_abstentions,
                             "coverage": self.coverage})

    def eligible_frame(self) -> pd.DataFrame:
        """One row per (held-out human, judge): eligible items and comparison pairs of the LOO rule."""
        rows = [{"human": h, "judge": j, "eligible_items": int(self.eligible[a, b]),
                 "n_pairs": int(self.n_pairs[a, b]),
                 "below_min": bool(self.eligible[a, b] < self.min_eligible)}
                for a, h in enumerate(self.humans) for b, j in enumerate(self.judges)]
        return pd.DataFrame(rows, columns=["human", "judge", "eligible_items", "n_pairs", "below_min"])


def overlap(table: AnnotationTable, *, judges: list[str] | tuple[str, ...] | None = None,
            primary: str | None = None, min_eligible: int = 30) -> OverlapResult:
    """Per-rater coverage, the rater-by-rater overlap, and what the leave-one-out rule can use.

    For each held-out human ``k`` and judge ``j`` the eligible items are those labelled by ``k``,
    by ``j`` and by at least one other human (METHODS §2); ``n_pairs`` counts one comparison
    pair per other human labelling an eligible item. Next to the observed overlap the result
    gives the overlap expected under independent uniform masks of the same sizes,
    ``n_a * n_b / n``: with per-secondary coverage rho that is ``rho * n`` with the primary or
    a judge, but only ``rho**2 * n`` between two secondaries.

    Parameters
    ----------
    table : AnnotationTable
        Labels with rater roles. Abstentions do not count as labelled.
    judges : list of str, optional
        Judges to report eligible items for (default: every judge in the table).
    primary : str, optional
        The first-pass human. Default: the human who labelled every item, if there is one.
    min_eligible : int, default 30
        Warn (:class:`~voirdire.exceptions.SmallSampleWarning`) when a held-out human has fewer
        eligible items than this for some judge.

    Returns
    -------
    OverlapResult
        ``to_frame()`` gives the pairwise observed/expected table; ``coverage_frame()`` and
        ``eligible_frame()`` the per-rater and per-comparison tables.

    Raises
    ------
    InvalidParameterError
        Unknown judge or primary, a primary that is not human, or a bad ``min_eligible``.

    Notes
    -----
    The expected overlap is exact in expectation when every partial rater's items are a uniform
    draw of fixed size independent of the others (design ``random``; proportional stratified
    draws share about as much). A shared panel raises secondary-secondary overlap above it and
    ``seq-coverage`` lowers it: a ratio far from 1 says the masks are not independent. The *global* overlap rate (mean pairwise overlap / n) is reported for
    completeness; never turn it into an item count with ``m = rho * n``.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> from voirdire.design import overlap
    >>> res = overlap(load_hanna())
    >>> res.primary is not None, res.shared_panel
    (True, True)
    >>> int(res.eligible.min())
    6303
    """
    if not isinstance(table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'table' parameter of {_FUNC} must be an AnnotationTable. Got {type(table).__name__} instead.")
    min_eligible = check_positive_int(min_eligible, "min_eligible", _FUNC, minimum=0)
    judge_names = tuple(table.judges) if judges is None else tuple(str(j) for j in judges)
    jidx = np.array([table.rater_index(j) for j in judge_names], dtype=int)
    for j, ji in zip(judge_names, jidx):
        if table.roles[ji] != "judge":
            raise InvalidParameterError(f"Rater {j!r} is not a judge in {table.source}. Judges: {list(table.judges)}.")
    p = _present(table)
    n = table.n_items
    hidx = table.human_idx
    humans = tuple(str(table.raters[h]) for h in hidx)
    if primary is None:
        primary = find_primary(table, p)
    else:
        pi = table.rater_index(primary)
        if table.roles[pi] != "human":
            raise InvalidParameterError(f"The primary {primary!r} must be a human rater; it is a judge.")
        primary = str(primary)
    secondaries = tuple(h for h in humans if h != primary)

    pf = p.astype(np.int64)
    observed = pf.T @ pf
    n_lab = np.diag(observed).copy()
    codes = table.dense()
    n_abst = (codes >= table.n_categories).sum(axis=0)
    expected = np.outer(n_lab, n_lab) / n if n else np.zeros_like(observed, dtype=float)
    np.fill_diagonal(expected, n_lab.astype(float))

    sec_idx = [table.rater_index(s) for s in secondaries]
    shares = []
    for a in range(len(sec_idx)):
        for b in range(a + 1, len(sec_idx)):
            lo = min(n_lab[sec_idx[a]], n_lab[sec_idx[b]])
            shares.append(observed[sec_idx[a], sec_idx[b]] / lo if lo > 0 else 0.0)
    panel_share = float(np.mean(shares)) if shares else float("nan")
    shared_panel = bool(min(shares) >= 0.9) if shares else None
    hh = [observed[hidx[a], hidx[b]] / n for a in range(hidx.size) for b in range(a + 1, hidx.size)]
    global_rate = float(np.mean(hh)) if hh and n else float("nan")

    ph = pf[:, hidx]
    n_h = ph.sum(axis=1)
    eligible = np.zeros((hidx.size, jidx.size), dtype=np.int64)
    n_pairs = np.zeros_like(eligible)
    mask = np.zeros((hidx.size, jidx.size, n), dtype=bool)
    for a in range(hidx.size):
        pool = n_h - ph[:, a]
        base = (ph[:, a] > 0) & (pool > 0)
        for b, ji in enumerate(jidx):
            e = base & p[:, ji]
            mask[a, b] = e
            eligible[a, b] = int(e.sum())
            n_pairs[a, b] = int(pool[e].sum())
    below = tuple((humans[a], judge_names[b]) for a in range(hidx.size) for b in range(jidx.size)
                  if eligible[a, b] < min_eligible)
    if below:
        shown = ", ".join(f"{h} vs {j} ({int(eligible[humans.index(h), judge_names.index(j)])})"
                          for h, j in below[:6])
        more = f" and {len(below) - 6} more" if len(below) > 6 else ""
        warnings.warn(
            f"{len(below)} leave-one-out comparison(s) have fewer than {min_eligible} eligible items: "
            f"{shown}{more}. Their verdicts rest on very few items; plan more overlap "
            f"(voirdire plan / plan_certification).", SmallSampleWarning, stacklevel=2)
    return OverlapResult(
        raters=tuple(str(r) for r in table.raters), roles=tuple(str(r) for r in table.roles),
        n_items=n, n_labelled=n_lab, n_abstentions=n_abst, coverage=n_lab / n if n else n_lab * np.nan,
        observed=observed, expected=expected, primary=primary, secondaries=secondaries,
        shared_panel=shared_panel, panel_share=panel_share, global_overlap_rate=global_rate,
        humans=humans, judges=judge_names, eligible=eligible, n_pairs=n_pairs,
        min_eligible=min_eligible, below_min=below, items=table.items, eligible_mask=mask,
    )
