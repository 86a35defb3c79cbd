"""Synthetic pairwise streams with known truth (the generative model of METHODS.md section 3)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .._checks import as_generator, check_positive_int, check_probability
from .._results import Result
from ..data import PairwiseTable
from ..exceptions import InvalidParameterError

__all__ = ["simulate_pairwise", "simulate_sparse_pairwise", "PairwiseTruth", "DEFAULT_CONFUSIONS"]

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


def simulate_sparse_pairwise(n_pairs: int = 2400, *, n_humans: int = 60, n_systems: int = 12,
                             subjective: bool = False, systems_named: bool = True,
                             rng: int | np.random.Generator | None = None) -> PairwiseTable:
    """A sparse-rater export with known structure: the held-out setting of issue 30.

    ``n_pairs`` pairs of ``n_systems`` systems (Bradley-Terry strengths N(0, 0.8^2); each pair compares
    two different systems drawn at random, so systems repeat across pairs; the pair's
    ``theta`` = strength difference + N(0, 0.5^2), ``tau ~ N(-0.3, 1)``), ``n_humans`` humans with
    confusion matrices of accuracy 0.55-0.90 (ties confused more often than A/B), each pair judged by
    1 or 2 of them (equal odds), and one LLM judge ``llm`` (reliability 0.7, tie offset -1, position
    bias 0.4) shown each pair in a random order that the export does not record (every judge row says
    AB, the verdict in the original frame). ``subjective``: the humans share no latent verdict: each
    says ``softmax(theta + e, tau + t_h, -(theta + e))`` with its own view ``e ~ N(0, 1)`` of every
    pair and its own tie habit ``t_h ~ N(0, 0.7^2)`` (a model the confusion matrices only
    approximate). ``systems_named``: the table carries ``model_a``/``model_b`` (``sys_<k>``).

    Examples
    --------
    >>> t = simulate_sparse_pairwise(50, rng=0)
    >>> t.n_pairs, len(t.humans) <= 60, t.judges, t.systems.shape
    (50, True, ('llm',), (50, 2))
    """
    func = "simulate_sparse_pairwise"
    n_pairs = check_positive_int(n_pairs, "n_pairs", func)
    n_humans = check_positive_int(n_humans, "n_humans", func, minimum=2)
    n_systems = check_positive_int(n_systems, "n_systems", func, minimum=2)
    g = as_generator(rng)
    strength = g.normal(0.0, 0.8, n_systems)
    sa = g.integers(0, n_systems, n_pairs)
    sb = (sa + g.integers(1, n_systems, n_pairs)) % n_systems
    theta = strength[sa] - strength[sb] + g.normal(0.0, 0.5, n_pairs)
    tau = g.normal(-0.3, 1.0, n_pairs)
    z = _draw(_softmax3(theta, tau), g)
    acc = g.uniform(0.55, 0.90, n_humans)
    conf = np.empty((n_humans, 3, 3))
    for h in range(n_humans):
        for k in range(3):
            a = acc[h] if k != 1 else acc[h] - 0.1
            conf[h, k] = (1 - a) / 2
            conf[h, k, k] = a
    pair, rater, verdict, order = [], [], [], []
    tie_habit = g.normal(0.0, 0.7, n_humans)
    for p in range(n_pairs):
        for h in g.choice(n_humans, 1 + int(g.random() < 0.5), replace=False):
            pair.append(p)
            rater.append(int(h))
            if subjective:   # the human's own view of the pair: no shared latent verdict
                pv = _softmax3(np.array([theta[p] + g.normal(0.0, 1.0)]), np.array([tau[p] + tie_habit[h]]))[0]
                verdict.append(int(g.choice(3, p=pv)))
            else:
                verdict.append(int(g.choice(3, p=conf[h, z[p]])))
            order.append(-1)
    s = np.where(g.random(n_pairs) < 0.5, 1.0, -1.0)                  # the order the judge really saw
    yj = _draw(_softmax3(0.7 * theta + 0.4 * s, 0.7 * tau - 1.0), g)
    pair += list(range(n_pairs))
    rater += [n_humans] * n_pairs
    verdict += yj.tolist()
    order += [0] * n_pairs                                             # the export does not say
    used = np.array(list(dict.fromkeys(rater[:len(rater) - n_pairs])), dtype=np.int64)   # in order of appearance
    remap = np.full(n_humans + 1, -1)
    remap[used] = np.arange(len(used))
    remap[n_humans] = len(used)
    names = [f"h{h}" for h in used.tolist()] + ["llm"]
    systems = np.column_stack([sa, sb]).astype(str).astype(object)
    systems = np.char.add("sys_", systems.astype(str)).astype(object)
    return PairwiseTable.from_codes(
        pair_idx=np.array(pair), rater_idx=remap[np.array(rater)], verdicts=np.array(verdict),
        orders=np.array(order), pairs=[f"p{t}" for t in range(n_pairs)], raters=names,
        roles=["human"] * len(used) + ["judge"], source=func, systems=systems if systems_named else None)
