"""Anytime-valid (sequential) judge validation: look after every batch, stop when it is settled."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from .. import _options
from .._checks import as_generator, check_choice, check_confidence_level, check_probability
from .._results import Result
from ..data import AnnotationTable, id_str
from ..exceptions import InvalidParameterError
from ._alt_test import indicators
from ._betting import confidence_sequence, e_bh, expected_growth, log_wealth
from ._common import check_epsilon, check_table, resolve_judges

__all__ = ["SequentialResult", "validate_sequential"]

METHODS = _options.SEQUENTIAL_METHODS  # the one registry of option values
_E_MAX = 1e300


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SequentialResult(Result):
    """Running, anytime-valid validation of one judge, one row of arrays per look.

    Per look ``r`` and human ``k`` (arrays of shape ``(n_looks, n_humans)``): ``n_items``
    (comparisons seen so far), ``estimate`` (running estimate of the human's parameter: the
    alt-test advantage ``E[d] = rho_h - rho_f``, or the leave-one-out ``d_k``), ``ci_low`` /
    ``ci_high`` (the confidence sequence, valid at every look at once), ``e_win`` / ``e_loss``
    (the e-values against "the judge does not win against this human" and "the judge does not
    lose"), ``status`` ("win", "loss" or "open", after e-BH across humans).

    Per look: ``n_compared`` (humans with at least one comparison), ``n_win``, ``n_loss``,
    ``decision`` ("accept", "reject" or "continue"; sticky once reached), ``reason`` (a sentence),
    ``more_items`` (expected further comparisons per undecided human before a decision, from the
    current estimates; ``inf`` when the estimates sit on the margin) and ``more_direction``.

    ``decision`` / ``decided_at`` / ``items_at_decision`` summarise the run.
    """

    judge: str
    method: str
    epsilon: float
    q: float
    threshold: float
    confidence_level: float
    humans: tuple[str, ...]
    looks: tuple[str, ...]
    n_items: np.ndarray
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    e_win: np.ndarray
    e_loss: np.ndarray
    status: np.ndarray
    n_compared: np.ndarray
    n_win: np.ndarray
    n_loss: np.ndarray
    decisions: tuple[str, ...]
    reasons: tuple[str, ...]
    more_items: np.ndarray
    more_direction: tuple[str, ...]
    decision: str
    decided_at: str | None
    items_at_decision: int | None

    def to_frame(self) -> pd.DataFrame:
        """One row per look and human."""
        L, K = self.n_items.shape
        return pd.DataFrame({
            "judge": self.judge, "look": np.repeat(list(self.looks), K), "human": list(self.humans) * L,
            "n_items": self.n_items.ravel(), "estimate": self.estimate.ravel(), "ci_low": self.ci_low.ravel(),
            "ci_high": self.ci_high.ravel(), "e_win": self.e_win.ravel(), "e_loss": self.e_loss.ravel(),
            "status": self.status.ravel(), "decision": np.repeat(list(self.decisions), K),
        })

    def looks_frame(self) -> pd.DataFrame:
        """One row per look: the running decision, its reason and the labels still expected."""
        return pd.DataFrame({
            "judge": self.judge, "look": list(self.looks), "n_compared": self.n_compared, "n_win": self.n_win,
            "n_loss": self.n_loss, "decision": list(self.decisions), "more_items": self.more_items,
            "more_direction": list(self.more_direction), "reason": list(self.reasons),
        })


# ---------------------------------------------------------------------------- rounds
def _round_values(values: pd.Series, func: str) -> np.ndarray:
    """Sortable round values: numbers as float, else timestamps (ns); an error names the first bad one."""
    if values.isna().any():
        bad = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise InvalidParameterError(f"{func}: the round of label {bad} is missing; every label needs its round.")
    num = pd.to_numeric(values, errors="coerce")
    if not num.isna().any():
        return num.to_numpy(dtype=float)
    try:
        ts = pd.to_datetime(values, errors="raise", format="mixed")
    except (ValueError, TypeError):
        bad = values[num.isna()].iloc[0]
        raise InvalidParameterError(
            f"{func}: round {str(bad)[:80]!r} is neither a number nor a timestamp. Give the batch number or "
            f"the time each label arrived.") from None
    return ts.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(float)


def label_rounds(table: AnnotationTable, rounds: Any, func: str = "validate_sequential") -> tuple[np.ndarray, list[str]]:
    """Look index of every label of ``table`` and the look names.

    ``rounds`` is a frame with columns ``item``, ``rater`` and ``round`` (one row per label), or a
    sequence aligned with the rows of ``table.to_frame()``.
    """
    if isinstance(rounds, pd.DataFrame):
        frame = table.to_frame()  # the labels' item and rater, to look their rounds up
        missing = [c for c in ("item", "rater", "round") if c not in rounds.columns]
        if missing:
            raise InvalidParameterError(
                f"The 'rounds' frame of {func} needs the columns item, rater and round; missing {missing}.")
        rf = pd.DataFrame({"item": rounds["item"].map(id_str), "rater": rounds["rater"].map(id_str),
                           "round": rounds["round"].to_numpy()})
        dup = rf.duplicated(["item", "rater"])
        if dup.any():
            r = rf[dup].iloc[0]
            raise InvalidParameterError(
                f"{func}: the rounds give two rounds for item {r['item'][:80]!r}, rater {r['rater'][:80]!r}.")
        key = pd.DataFrame({"item": frame["item"].map(id_str), "rater": frame["rater"].map(id_str)})
        merged = key.merge(rf, on=["item", "rater"], how="left", validate="one_to_one")
        if merged["round"].isna().any():
            r = merged[merged["round"].isna()].iloc[0]
            raise InvalidParameterError(
                f"{func}: no round for the label of item {r['item'][:80]!r} by rater {r['rater'][:80]!r}. "
                f"Every label needs its round.")
        raw = merged["round"]
    else:
        raw = pd.Series(list(rounds))
        if raw.size != table.n_labels:
            raise InvalidParameterError(
                f"The 'rounds' of {func} must give one round per label ({table.n_labels}); got {raw.size}.")
    vals = _round_values(raw.reset_index(drop=True), func)
    uniq, idx = np.unique(vals, return_inverse=True)
    names = [str(v) for v in pd.Series(raw.to_numpy()).iloc[[int(np.flatnonzero(idx == i)[0]) for i in range(uniq.size)]]]
    return idx.astype(np.int64), names


# ---------------------------------------------------------------------------- streams
def _comparisons(table: AnnotationTable, jidx: np.ndarray, hidx: np.ndarray, method: str, scoring: str,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item and human at one look: eligibility ``(n, K)``, numerator and denominator."""
    if method == "alt-test":
        wf, wh, elig, _ = indicators(table, jidx, hidx, scoring, 2)
        d = wh[:, 0, :].astype(float) - wf[:, 0, :].astype(float)
        e = elig[:, 0, :]
        return e, np.where(e, d, 0.0), e.astype(float)
    codes = table.dense()
    L = table.n_categories
    H = codes[:, hidx]
    g = codes[:, jidx[0]]
    vk = (H >= 0) & (H < L)
    vj = (g >= 0) & (g < L)
    K = hidx.size
    onehot = np.zeros((H.shape[0], L + 1))
    np.add.at(onehot, (np.repeat(np.arange(H.shape[0]), K), np.where(vk, H, L).ravel()), 1.0)
    counts = onehot[:, :L]                                             # human labels per category
    nh = vk.sum(axis=1)
    pool = nh[:, None] - vk                                             # pool size when k held out
    elig = vk & vj[:, None] & (pool >= 1)
    same_k = np.take_along_axis(counts, np.where(vk, H, 0), axis=1) - 1.0      # pool members agreeing with k
    same_j = counts[np.arange(H.shape[0]), np.where(vj, g, 0)][:, None] - (vk & (H == g[:, None]))
    N = max(1, K - 1)
    num = np.where(elig, (same_j - same_k) / N, 0.0)
    den = np.where(elig, pool / N, 0.0)
    return elig, num, den


def validate_sequential(table: Any, judge: str, *, rounds: Any, method: Literal["alt-test", "loo"] = "alt-test",
                        epsilon: float | None = None, q: float = 0.05, threshold: float = 0.5,
                        scoring: Literal["accuracy", "neg_rmse"] = "accuracy", confidence_level: float = 0.95,
                        stop_when_decided: bool = False, confidence_sequences: bool = True,
                        rng: int | np.random.Generator | None = 0) -> SequentialResult:
    r"""Anytime-valid validation of a judge, looked at after every round of labels.

    The labels arrive in rounds (batches, or timestamps). At each look the comparisons that became
    possible in that round enter, one item at a time, two betting e-processes per human
    (Waudby-Smith & Ramdas 2024): one against "the judge does not win against this human", one
    against "the judge does not lose". The humans' e-values are combined with e-BH at level ``q``
    (valid under any dependence), and the judge is **accepted** as soon as it wins against at least
    ``threshold`` of the compared humans, **rejected** as soon as it has lost against so many that
    this is impossible, and otherwise the advice is to **continue**. Because e-processes stay
    valid at stopping times, looking after every round (or every item) does not inflate the error:
    with a judge exactly on the margin the probability of ever accepting is at most ``q``.

    Parameters
    ----------
    table : AnnotationTable
        Every label so far (humans and the judge).
    judge : str
    rounds : DataFrame or sequence
        The round of each label: a frame with columns ``item``, ``rater``, ``round`` (numbers or
        timestamps), or a sequence aligned with ``table.to_frame()``. Looks are the sorted
        distinct rounds.
    method : {"alt-test", "loo"}, default "alt-test"
        ``alt-test``: per human, the advantage ``d = W^h - W^f`` of the Alternative Annotator Test
        against ``epsilon`` (default 0.2); the judge wins when ``E[d] < epsilon``. ``loo``: per
        held-out human, the pooled leave-one-out difference of observed agreement
        ``d_k = E[z] / E[n]`` (z: judge's minus the human's agreements with the pool on an item,
        n: pool labels on it) against ``-epsilon`` (default 0.05); the judge wins when
        ``d_k > -epsilon``.
    epsilon : float in [0, 1), optional
    q : float in (0, 1), default 0.05
        e-BH level: the false-discovery rate of "wins" (and of "losses"); with every human on the
        margin, the probability of ever accepting.
    threshold : float in (0, 1], default 0.5
        Share of compared humans the judge must win against.
    scoring : {"accuracy", "neg_rmse"}, default "accuracy"
        Alt-test scoring (as :func:`alt_test`).
    confidence_level : float, default 0.95
        Level of each human's confidence sequence (not corrected across humans).
    stop_when_decided : bool, default False
        Stop at the first look with a decision (the result then ends there), as a user who stops
        labelling would; saves the work of the later looks.
    confidence_sequences : bool, default True
        Compute each human's confidence sequence (``ci_low`` / ``ci_high``). ``False`` leaves them
        ``nan`` and skips their grid of bettors (401 boundaries per human, most of the run's time on a
        large table): for callers that read only the decisions, e-values and ``more_items`` (the
        planner, :func:`voirdire.design.plan_judges`), which do not depend on them.
    rng : int, Generator or None, default 0
        Order of the items that enter in the same round (shuffled, so that the file's order cannot
        matter).

    Returns
    -------
    SequentialResult

    Raises
    ------
    InvalidParameterError
        Unknown judge, fewer than two humans, a label without a round, or a bad parameter.

    Notes
    -----
    *What is assumed.* The items compared in a round are a random sample (of the items that could
    have been sent for overlap), chosen without looking at the labels being compared: random,
    stratified or panel designs qualify; choosing items because the judge disagreed with the first
    annotator does not. An item's comparison for a human is taken at the first look where it is
    possible and frozen (labels arriving later on the same item do not change it).

    *Expected further labels.* ``more_items`` is the number of further comparisons per undecided
    human that the current plug-in estimates need: for each human the remaining log-wealth to
    e-BH's threshold divided by the plug-in expected log-growth of the Kelly bet, and for the
    judge the number at which enough humans would be settled. It is a forecast, not a guarantee;
    ``inf`` means the estimates sit on the margin.

    Confidence sequences are the hedged betting ones; they are valid uniformly over looks.

    References
    ----------
    Waudby-Smith & Ramdas, *Estimating means of bounded random variables by betting*, JRSS-B 2024,
    arXiv:2010.09686. Wang & Ramdas, *False discovery rate control with e-values*, JRSS-B 2022,
    arXiv:2009.02824. Calderon, Reichart & Dror, *The Alternative Annotator Test*, ACL 2025.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> f = t.to_frame()
    >>> rounds = (f["item"].astype("category").cat.codes // 200).to_numpy()   # 200 items a round
    >>> r = validate_sequential(t, t.judges[0], rounds=rounds)
    >>> r.decision in ("accept", "reject", "continue")
    True
    """
    func = "validate_sequential"
    table = check_table(table, func)
    method = check_choice(method, "method", func, METHODS)  # type: ignore[assignment]
    epsilon = check_epsilon(0.2 if method == "alt-test" and epsilon is None else 0.05 if epsilon is None
                            else epsilon, func)
    q = check_probability(q, "q", func)
    threshold = check_probability(threshold, "threshold", func, open_low=True, open_high=False)
    confidence_level = check_confidence_level(confidence_level, func)
    scoring = check_choice(scoring, "scoring", func, ("accuracy", "neg_rmse"))  # type: ignore[assignment]
    gen = as_generator(rng)
    names, jidx, hidx = resolve_judges(table, judge, func)
    if len(names) != 1:
        raise InvalidParameterError(f"{func} validates one judge at a time.")
    if method == "alt-test" and scoring == "neg_rmse" and not table.scale.is_numeric:
        raise InvalidParameterError(f"scoring='neg_rmse' needs numeric labels; {table.source} is not numeric.")
    look_of, look_names = label_rounds(table, rounds, func)
    K = hidx.size
    m = epsilon if method == "alt-test" else -epsilon
    win_dir = -1 if method == "alt-test" else 1            # alt-test wins when E[d] < eps (down bettor)
    humans = tuple(str(table.raters[h]) for h in hidx)

    # Streams: at each look, the newly possible comparisons (frozen), in a shuffled order. The shuffle permutes
    # the look's new items in id order, so that the same labels in another row order (a study, an export, a re-sorted
    # file) give the same numbers at one seed.
    by_id = np.argsort(np.asarray([str(x) for x in table.items], dtype=object), kind="stable")
    entered = np.zeros((table.n_items, K), dtype=bool)
    nums: list[list[np.ndarray]] = [[] for _ in range(K)]
    dens: list[list[np.ndarray]] = [[] for _ in range(K)]
    ends = np.zeros((len(look_names), K), dtype=np.int64)
    for r in range(len(look_names)):
        sub = table.select(label_mask=look_of <= r)
        elig, num, den = _comparisons(sub, jidx, hidx, method, scoring)
        new = elig & ~entered
        entered |= elig
        # only the items with a new comparison are shuffled, so a look's order (and every e-value from it
        # on) depends on the labels read so far, never on rounds still to come (`watch --follow`)
        cand = by_id[np.asarray(new.any(axis=1))[by_id]]
        order = cand[gen.permutation(cand.size)]
        for k in range(K):
            rows = order[new[order, k]]
            nums[k].append(num[rows, k])
            dens[k].append(den[rows, k])
            ends[r, k] = (ends[r - 1, k] if r else 0) + rows.size
        if stop_when_decided and _decided_now(nums, dens, ends[r], m, win_dir, q, threshold):
            look_names = look_names[:r + 1]
            ends = ends[:r + 1]
            break

    L = len(look_names)
    est = np.full((L, K), np.nan)
    lo = np.full((L, K), -1.0)
    hi = np.full((L, K), 1.0)
    lew = np.zeros((L, K))
    lel = np.zeros((L, K))
    streams = []
    for k in range(K):
        nk = np.concatenate(nums[k]) if nums[k] else np.zeros(0)
        dk = np.concatenate(dens[k]) if dens[k] else np.zeros(0)
        streams.append((nk, dk))
        if nk.size:
            up, down = log_wealth(nk, dk, m)
            win, loss = (up, down) if win_dir > 0 else (down, up)
            at = ends[:, k]
            pos = np.maximum(at - 1, 0)
            lew[:, k] = np.where(at > 0, win[0, pos], 0.0)
            lel[:, k] = np.where(at > 0, loss[0, pos], 0.0)
            cs, cd = np.cumsum(nk), np.cumsum(dk)
            with np.errstate(invalid="ignore", divide="ignore"):
                est[:, k] = np.where(at > 0, cs[pos] / cd[pos], np.nan)
            if confidence_sequences:
                lo[:, k], hi[:, k] = confidence_sequence(nk, dk, at, significance_level=1 - confidence_level)
            else:
                lo[:, k] = hi[:, k] = np.nan
    # an e-process is read as it stands at each look (Ville's inequality covers its supremum)
    e_win = np.minimum(np.exp(np.minimum(lew, 690.0)), _E_MAX)
    e_loss = np.minimum(np.exp(np.minimum(lel, 690.0)), _E_MAX)

    status = np.full((L, K), "open", dtype=object)
    n_comp = np.zeros(L, dtype=np.int64)
    n_win = np.zeros(L, dtype=np.int64)
    n_loss = np.zeros(L, dtype=np.int64)
    decisions: list[str] = []
    reasons: list[str] = []
    more = np.full(L, np.nan)
    more_dir: list[str] = []
    decided: str | None = None
    decided_at: str | None = None
    items_at: int | None = None
    for r in range(L):
        comp = ends[r] > 0
        kc = int(comp.sum())
        n_comp[r] = kc
        if decided is not None:
            decisions.append(decided)
            reasons.append(f"decided at look {decided_at}; later looks do not change it")
            more_dir.append("")
            status[r] = status[r - 1]
            n_win[r], n_loss[r] = n_win[r - 1], n_loss[r - 1]
            continue
        if kc < 2:
            decisions.append("continue")
            reasons.append(f"only {kc} human(s) share items with the judge and another human so far; "
                           f"at least two are needed")
            more_dir.append("")
            continue
        need, w, los = _look_decision(e_win[r], e_loss[r], comp, q, threshold)
        status[r, w] = "win"
        status[r, los] = "loss"
        n_win[r], n_loss[r] = int(w.sum()), int(los.sum())
        items_now = int(ends[r].sum())
        if n_win[r] >= need:
            decided, decided_at, items_at = "accept", look_names[r], items_now
            decisions.append("accept")
            reasons.append(f"the judge wins against {n_win[r]} of {kc} humans (e-BH at q={q}); "
                           f"{need} were needed")
            more_dir.append("")
            continue
        if n_loss[r] > kc - need:
            decided, decided_at, items_at = "reject", look_names[r], items_now
            decisions.append("reject")
            reasons.append(f"the judge loses against {n_loss[r]} of {kc} humans (e-BH at q={q}); it can no "
                           f"longer win against {need}")
            more_dir.append("")
            continue
        decisions.append("continue")
        target = math.log(kc / (q * need))
        acc = _more_items(streams, ends[r], comp & ~w & ~los, lew[r], target, m, win_dir, need - int(n_win[r]))
        target_l = math.log(kc / (q * (kc - need + 1)))
        rej = _more_items(streams, ends[r], comp & ~w & ~los, lel[r], target_l, m, -win_dir,
                          kc - need + 1 - int(n_loss[r]))
        if acc <= rej:
            more[r], d = acc, "accept"
        else:
            more[r], d = rej, "reject"
        more_dir.append(d if math.isfinite(more[r]) else "")
        if math.isfinite(more[r]):
            reasons.append(f"not settled: {n_win[r]} win(s), {n_loss[r]} loss(es) of {kc}; about {int(more[r])} "
                           f"more comparisons per open human would settle it ({d}), at the current estimates")
        else:
            reasons.append(f"not settled: {n_win[r]} win(s), {n_loss[r]} loss(es) of {kc}; the estimates sit on "
                           f"the margin (epsilon={epsilon}), so no finite number of labels is expected to settle it")
    return SequentialResult(
        judge=names[0], method=method, epsilon=epsilon, q=q, threshold=threshold, confidence_level=confidence_level,
        humans=humans, looks=tuple(look_names), n_items=ends, estimate=est, ci_low=lo, ci_high=hi,
        e_win=e_win, e_loss=e_loss, status=status.astype(str), n_compared=n_comp, n_win=n_win, n_loss=n_loss,
        decisions=tuple(decisions), reasons=tuple(reasons), more_items=more, more_direction=tuple(more_dir),
        decision=decided or "continue", decided_at=decided_at, items_at_decision=items_at,
    )


def _look_decision(e_win: np.ndarray, e_loss: np.ndarray, comp: np.ndarray, q: float,
                   threshold: float) -> tuple[int, np.ndarray, np.ndarray]:
    """Wins needed, and the humans won and lost against (e-BH over the compared humans) at one look."""
    kc = int(comp.sum())
    need = max(1, math.ceil(threshold * kc - 1e-12))
    w = np.zeros(comp.size, dtype=bool)
    los = np.zeros(comp.size, dtype=bool)
    w[comp] = e_bh(e_win[comp], q)
    los[comp] = e_bh(e_loss[comp], q)
    both = w & los
    return need, w & ~both, los & ~both


def _decided_now(nums: list[list[np.ndarray]], dens: list[list[np.ndarray]], ends: np.ndarray, m: float,
                 win_dir: int, q: float, threshold: float) -> bool:
    """Whether the rule decides at this look (the same rule as the full pass, on the streams so far)."""
    comp = ends > 0
    kc = int(comp.sum())
    if kc < 2:
        return False
    ew = np.ones(ends.size)
    el = np.ones(ends.size)
    for k in np.flatnonzero(comp):
        up, down = log_wealth(np.concatenate(nums[k]), np.concatenate(dens[k]), m)
        win, loss = (up, down) if win_dir > 0 else (down, up)
        ew[k] = math.exp(min(float(win[0, -1]), 690.0))
        el[k] = math.exp(min(float(loss[0, -1]), 690.0))
    need, w, los = _look_decision(ew, el, comp, q, threshold)
    return int(w.sum()) >= need or int(los.sum()) > kc - need


def _more_items(streams: Sequence[tuple[np.ndarray, np.ndarray]], ends: np.ndarray, open_: np.ndarray,
                log_e: np.ndarray, target: float, m: float, direction: int, still: int) -> float:
    """Further comparisons per open human until ``still`` more of them reach ``target`` log-wealth."""
    if still <= 0:
        return 0.0
    need = []
    for k in np.flatnonzero(open_).tolist():
        nk, dk = streams[k]
        g = expected_growth(nk[:ends[k]], dk[:ends[k]], m, direction)
        if not (g > 1e-12):
            need.append(math.inf)
        else:
            need.append(max(0.0, (target - float(log_e[k])) / g))
    need.sort()
    return float(math.ceil(need[still - 1])) if len(need) >= still and math.isfinite(need[still - 1]) else math.inf
