"""Is the number of human-scored items one the design's inclusion probabilities allow? (private)

Under the two-stage design each item (or cluster) is sent to humans independently with its
inclusion probability, so the number of human-scored items ``S`` has mean ``sum(pi)``. A count
far above it is not bad luck: it means the human scores are not the designed sample (LLM judges
read as humans, a wrong probability column, the whole pool labelled). The check is one-sided
(fewer labels than expected happen: annotators drop out) and conservative, so an honest design
never trips it in practice.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._results import Result

__all__ = ["LabelledCount", "labelled_count", "TAIL"]

#: probability, under the design, of a count above the limit (Bernstein's bound): the error is
#: a false alarm at most once in a billion honest designs
TAIL = 1e-9


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LabelledCount(Result):
    """The human-scored count against what the inclusion probabilities allow.

    Attributes
    ----------
    n_labeled : int
        Items with a human score.
    n_items : int
        Items in the design.
    expected : float
        ``sum(pi)``: the design's expected count.
    sd : float
        Its standard deviation under independent (Poisson) sampling of the units, ``sqrt(V)``
        with ``V`` the bound below.
    limit : float
        ``expected + t``: a count above it has probability below ``tail`` under the design.
    tail : float
    """

    n_labeled: int
    n_items: int
    expected: float
    sd: float
    limit: float
    tail: float

    @property
    def impossible(self) -> bool:
        """The count is above the limit: the design could not have produced it."""
        return self.n_labeled > self.limit

    def sentence(self) -> str:
        """One clause for error messages: what was seen against what the design allows."""
        return (f"{self.n_labeled:,} of {self.n_items:,} items are human-scored, but the inclusion probabilities "
                f"give an expected {self.expected:.4g} (sd {self.sd:.3g}); more than {math.floor(self.limit):,} "
                f"has probability below {self.tail:.0e} under the design")


def labelled_count(labelled: np.ndarray, pi: np.ndarray, clusters: np.ndarray | None = None, *,
                   tail: float = TAIL) -> LabelledCount | None:
    """The human-scored count of a design against the one-sided limit its probabilities allow.

    With units ``c`` (clusters, else items) sampled independently, ``X_c`` the unit's
    human-scored items (at most its size ``m_c``, mean ``mu_c = sum_{i in c} pi_i``),
    ``Var X_c <= mu_c (m_c - mu_c)`` (Bhatia-Davis; ``pi_i (1 - pi_i)`` for a single item,
    exact) and ``X_c - mu_c <= M = max m_c``. Bernstein's inequality gives
    ``P(S - sum pi >= t) <= exp(-t^2 / (2 (V + M t / 3)))``; the limit is the ``t`` at which that
    bound equals ``tail``: ``t = L M / 3 + sqrt((L M / 3)^2 + 2 L V)``, ``L = log(1 / tail)``.
    At 600 items with ``pi = 0.1``: expected 60, sd 7.3, limit 114.

    Parameters
    ----------
    labelled : ndarray of bool, shape (N,)
        Items with a human score.
    pi : ndarray of float, shape (N,)
        Each item's inclusion probability.
    clusters : ndarray of int, shape (N,), optional
        The sampling unit of each item (codes); items when None.
    tail : float, default 1e-9

    Returns
    -------
    LabelledCount or None
        None when a probability is unknown (``nan``): the design's expected count is then unknown.

    Notes
    -----
    ``voirdire estimate``, :func:`compare_estimators` and :func:`dr_mean_table` refuse an impossible
    count: the usual cause is LLM judges read as humans (every item "human-scored"). Sound under
    the design the estimators assume (units sampled independently); items sent to humans in
    undeclared groups can exceed the item-level limit: declare the groups as clusters.
    Fewer labels than expected are not flagged (annotators drop out; the estimators stay valid
    when the missing labels are missing at random within the design).

    Examples
    --------
    >>> import numpy as np
    >>> c = labelled_count(np.ones(600, bool), np.full(600, 0.1))
    >>> c.expected, round(c.sd, 2), round(c.limit, 1), c.impossible
    (60.0, 7.35, 114.7, True)
    """
    lab = np.asarray(labelled, dtype=bool)
    p = np.asarray(pi, dtype=float)
    if p.size == 0 or not np.all(np.isfinite(p)):
        return None
    if clusters is None:
        mu, size = p, np.ones(p.size)
    else:
        codes = np.unique(np.asarray(clusters), return_inverse=True)[1].ravel()
        mu = np.bincount(codes, weights=p)
        size = np.bincount(codes).astype(float)
    var = float(np.sum(mu * np.clip(size - mu, 0.0, None)))
    big_m = float(size.max())
    L = math.log(1.0 / tail)
    a = L * big_m / 3.0
    t = a + math.sqrt(a * a + 2.0 * L * var)
    expected = float(p.sum())
    return LabelledCount(n_labeled=int(lab.sum()), n_items=int(p.size), expected=expected, sd=math.sqrt(var),
                         limit=expected + t, tail=tail)
