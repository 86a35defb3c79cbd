"""Synthetic pairwise streams with known truth (the generative model of METHODS.md section 3)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .._checks import as_generator, check_positive_int, check_probability
from .._results import Result
from ..data import PairwiseTable
from ..exceptions import InvalidParameterError

__all__ = ["simulate_pairwise", "PairwiseTruth", "DEFAULT_CONFUSIONS"]

#: An expert, an average and a novice human (rows: true verdict A, T, B; columns: what they say).
DEFAULT_CONFUSIONS = np.array([
    [[0.85, 0.10, 0.05], [0.10, 0.80, 0.10], [0.05, 0.10, 0.85]],
    [[0.70, 0.20, 0.10], [0.15, 0.70, 0.15], [0.10, 0.20, 0.70]],
    [[0.60, 0.20, 0.20], [0.20, 0.60, 0.20], [0.20, 0.20, 0.60]],
])


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PairwiseTruth(Result):
    """The parameters a synthetic stream was drawn from."""

    theta: np.ndarray
    tau: np.ndarray
    verdict: np.ndarray
    confusions: np.ndarray
    biases: np.ndarray
    tie_offsets: np.ndarray
    humans: tuple[str, ...]
    judges: tuple[str, ...]
    reliabilities: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))


def _softmax3(theta: np.ndarray, tau: np.ndarray) -> np.ndarray:
    u = np.stack([theta, tau, -theta], axis=-1)
    u = u - u.max(-1, keepdims=True)
    e = np.exp(u)
    return e / e.sum(-1, keepdims=True)


def _draw(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random(p.shape[:-1])
    return (u[..., None] > np.cumsum(p, -1)[..., :-1]).sum(-1)


def simulate_pairwise(
    n_pairs: int,
    *,
    confusions: Sequence[Sequence[Sequence[float]]] | np.ndarray | None = None,
    biases: Sequence[float] = (0.5, 0.0),
    both_orders: bool = True,
    human_coverage: float = 1.0,
    theta_mean: float = 0.0,
    tie_offsets: Sequence[float] | None = None,
    reliabilities: Sequence[float] | None = None,
    rng: int | np.random.Generator | None = None,
) -> tuple[PairwiseTable, PairwiseTruth]:
    """Draw a pairwise stream from the BayesJudge model with known parameters.

    Each pair gets ``(theta, tau) ~ N(0, I)``, a latent verdict ``z ~ softmax(theta, tau, -theta)``;
    human ``r`` says ``y ~ C_r[z, :]``; judge ``j`` shown order AB (s = +1) / BA (s = -1) says
    ``y ~ softmax(theta + s beta_j, tau, -(theta + s beta_j))`` (in the original coordinates).

    Parameters
    ----------
    n_pairs : int
    confusions : array (n_humans, 3, 3), optional
        Row-stochastic confusion matrices; default :data:`DEFAULT_CONFUSIONS` (expert, average, novice).
    biases : sequence of float
        Position bias of each judge (default one biased judge, 0.5, and one unbiased).
    both_orders : bool
        Ask every judge in both orders (default) or only in order AB.
    human_coverage : float in (0, 1]
        Probability that a human labels a given pair.
    theta_mean : float
        Mean of ``theta`` (default 0, the model's prior); a non-zero mean (response A
        systematically better) is what a single presentation order confounds with a bias.
    tie_offsets : sequence of float, optional
        Per-judge offset of the tie logit (``tau + delta_j``; default 0: the paper's model).
    reliabilities : sequence of float, optional
        Per-judge reliability ``a_j``: the judge answers from
        ``softmax(a_j theta + s beta_j, a_j tau + delta_j, -(a_j theta + s beta_j))`` (default 1:
        the paper's model; 0: a judge whose verdict says nothing about the pair).
    rng : int, Generator or None

    Returns
    -------
    (PairwiseTable, PairwiseTruth)

    Examples
    --------
    >>> table, truth = simulate_pairwise(5, rng=0)
    >>> table.n_pairs, table.humans, table.judges
    (5, ('human_1', 'human_2', 'human_3'), ('judge_1', 'judge_2'))
    """
    name = "simulate_pairwise"
    n_pairs = check_positive_int(n_pairs, "n_pairs", name)
    human_coverage = check_probability(human_coverage, "human_coverage", name, open_high=False)
    C = DEFAULT_CONFUSIONS if confusions is None else np.asarray(confusions, dtype=float)
    if C.ndim != 3 or C.shape[1:] != (3, 3) or (C < 0).any() or not np.allclose(C.sum(-1), 1.0):
        raise InvalidParameterError(
            f"The 'confusions' parameter of {name} must be an array (n_humans, 3, 3) of row-stochastic matrices.")
    b = np.asarray(biases, dtype=float).reshape(-1)
    dt = np.zeros(len(b)) if tie_offsets is None else np.asarray(tie_offsets, dtype=float).reshape(-1)
    if len(dt) != len(b):
        raise InvalidParameterError(
            f"The 'tie_offsets' parameter of {name} needs one value per judge ({len(b)}). Got {len(dt)}.")
    rel = np.ones(len(b)) if reliabilities is None else np.asarray(reliabilities, dtype=float).reshape(-1)
    if len(rel) != len(b) or not np.isfinite(rel).all():
        raise InvalidParameterError(
            f"The 'reliabilities' parameter of {name} needs one finite value per judge ({len(b)}). Got {len(rel)}.")
    gen = as_generator(rng)
    theta = gen.standard_normal(n_pairs) + float(theta_mean)
    tau = gen.standard_normal(n_pairs)
    pi = _softmax3(theta, tau)
    z = _draw(pi, gen)
    R, J = C.shape[0], len(b)
    pair_idx, rater_idx, verdict, order = [], [], [], []
    for r in range(R):
        y = _draw(C[r][z], gen)
        keep = gen.random(n_pairs) < human_coverage
        idx = np.flatnonzero(keep)
        pair_idx.append(idx)
        rater_idx.append(np.full(len(idx), r))
        verdict.append(y[idx])
        order.append(np.full(len(idx), -1))
    for j in range(J):
        for o, s in ((0, 1.0), (1, -1.0)):
            if o == 1 and not both_orders:
                continue
            y = _draw(_softmax3(rel[j] * theta + s * b[j], rel[j] * tau + dt[j]), gen)
            pair_idx.append(np.arange(n_pairs))
            rater_idx.append(np.full(n_pairs, R + j))
            verdict.append(y)
            order.append(np.full(n_pairs, o))
    humans = tuple(f"human_{r + 1}" for r in range(R))
    judges = tuple(f"judge_{j + 1}" for j in range(J))
    table = PairwiseTable.from_codes(
        pair_idx=np.concatenate(pair_idx), rater_idx=np.concatenate(rater_idx), verdicts=np.concatenate(verdict),
        orders=np.concatenate(order), pairs=[f"pair_{t + 1}" for t in range(n_pairs)], raters=humans + judges,
        roles=["human"] * R + ["judge"] * J, source="simulate_pairwise")
    truth = PairwiseTruth(theta=theta, tau=tau, verdict=z, confusions=C.copy(), biases=b.copy(),
                          tie_offsets=dt.copy(), humans=humans, judges=judges, reliabilities=rel.copy())
    return table, truth
