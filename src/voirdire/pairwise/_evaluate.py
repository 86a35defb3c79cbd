"""Leave-one-human-out evaluation of pairwise aggregators, and probabilistic scoring rules."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np
import pandas as pd

from .._checks import as_generator, check_choice, check_positive_int
from .._results import Result, to_jsonable
from .._stats.resampling import cluster_index, weight_batches
from ..data import PairwiseTable
from ..exceptions import ConvergenceWarning, InvalidParameterError
from ._baselines import GLAD, MACE, BradleyTerryDavidson, DawidSkene, MajorityVote, SystemBradleyTerryDavidson
from ._model import PairwiseBayesModel

__all__ = ["leave_one_human_out", "LOHOResult", "score_predictions", "default_methods", "choose_forecaster",
           "ForecastChoice", "HeldOutChoice", "FORECAST_RULES"]

_EPS = 1e-12


def score_predictions(proba: np.ndarray, y: np.ndarray, *, n_bins: int = 10) -> dict[str, float]:
    """Accuracy, NLL (nats, probabilities clipped at 1e-12), Brier (sum over the 3 classes) and ECE.

    ECE: top-label confidence in ``n_bins`` equal-width bins, ``sum_b n_b/n |acc_b - conf_b|``.

    Examples
    --------
    >>> p = np.array([[0.8, 0.1, 0.1], [0.2, 0.5, 0.3]])
    >>> s = score_predictions(p, np.array([0, 2]))
    >>> round(s["accuracy"], 3), round(s["nll"], 4), round(s["brier"], 3), round(s["ece"], 3)
    (0.5, 0.7136, 0.42, 0.35)
    """
    func = "score_predictions"
    try:
        proba = np.asarray(proba, dtype=float)
        y_raw = np.asarray(y)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{func} needs a numeric (n, 3) 'proba' array and integer labels 'y'.") from None
    if proba.ndim != 2 or proba.shape[1] != 3:
        raise InvalidParameterError(
            f"The 'proba' parameter of {func} must be an (n, 3) array of P(A), P(tie), P(B). Got shape {proba.shape}.")
    if y_raw.ndim != 1 or y_raw.shape[0] != proba.shape[0]:
        raise InvalidParameterError(
            f"The 'y' parameter of {func} must hold one label per row of 'proba' ({proba.shape[0]}). "
            f"Got shape {y_raw.shape}.")
    if y_raw.size and (not np.issubdtype(y_raw.dtype, np.number) or np.issubdtype(y_raw.dtype, np.complexfloating)
                       or not np.all(np.isin(y_raw, (0, 1, 2)))):
        bad = [v for v in y_raw.tolist() if v not in (0, 1, 2)][:3]
        raise InvalidParameterError(
            f"The 'y' parameter of {func} must hold the labels 0 (A), 1 (tie) and 2 (B). Got {bad} among them.")
    y = y_raw.astype(np.int64)
    n = len(y)
    if n == 0:
        return {"n_labels": 0, "accuracy": float("nan"), "nll": float("nan"), "brier": float("nan"),
                "ece": float("nan")}
    pred = proba.argmax(1)
    correct = pred == y
    py = np.clip(proba[np.arange(n), y], _EPS, 1.0)
    onehot = np.zeros_like(proba)
    onehot[np.arange(n), y] = 1.0
    conf = proba.max(1)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        m = bins == b
        if m.any():
            ece += m.sum() / n * abs(correct[m].mean() - conf[m].mean())
    return {"n_labels": int(n), "accuracy": float(correct.mean()), "nll": float(-np.log(py).mean()),
            "brier": float(((proba - onehot) ** 2).sum(1).mean()), "ece": float(ece)}


def default_methods(*, n_particles: int = 300, rng: int | np.random.Generator | None = None,
                    laplace: bool = True, systems: bool = False) -> dict[str, Callable[[], Any]]:
    """Factories of the methods compared by :func:`leave_one_human_out`.

    BayesJudge is scored under its final state (a read-only second pass, ``predict_proba(table)``);
    majority vote gets 0.5 pseudo-votes per verdict so that its NLL is finite. ``systems``: also the
    systems' Bradley-Terry-Davidson (:class:`SystemBradleyTerryDavidson`, for tables that name the
    compared systems; :func:`leave_one_human_out` adds it for such a table).
    """
    gen = as_generator(rng)
    seeds = gen.integers(0, 2**32, size=2)
    out: dict[str, Callable[[], Any]] = {
        "BayesJudge": lambda: PairwiseBayesModel(n_particles=n_particles, laplace=laplace, rng=int(seeds[0])),
        "majority vote": lambda: MajorityVote(smoothing=0.5),
        "Bradley-Terry-Davidson": lambda: BradleyTerryDavidson(),
        "Dawid-Skene": lambda: DawidSkene(smoothing=0.01),
        "MACE": lambda: MACE(rng=int(seeds[1])),
        "GLAD": lambda: GLAD(),
    }
    if systems:
        out["systems Bradley-Terry-Davidson"] = lambda: SystemBradleyTerryDavidson()
    return out


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LOHOResult(Result):
    """Leave-one-human-out scores: one row per (method, group) in ``table``, and per human in ``per_human``.

    Groups are ``"all"`` plus the groups given (e.g. expert, crowd). Scores pool every held-out
    label of the group's humans (micro-average). ``labels`` holds every scored held-out label
    (``pair``, ``human``, ``group``, ``y``: 0 A, 1 tie, 2 B) and ``proba`` each method's forecast
    of it (``(n_labels, 3)``, rows aligned with ``labels``); :meth:`difference` compares two
    methods on them.
    """

    table: pd.DataFrame
    per_human: pd.DataFrame
    methods: tuple[str, ...]
    n_humans: int
    n_folds: int
    n_labels_unscored: int
    target: str
    labels: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame, repr=False)
    proba: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict, repr=False)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        """The scores (not the per-label forecasts) as JSON-safe objects."""
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.name not in ("labels", "proba")}

    def difference(self, method: str, baseline: str, *, other: LOHOResult | None = None, group: str = "all",
                   n_resamples: int = 2000, level: float = 0.95,
                   rng: int | np.random.Generator | None = None) -> pd.DataFrame:
        """``method`` minus ``baseline`` in accuracy and NLL, with a paired bootstrap over pairs.

        Both methods are scored on the same held-out labels; the bootstrap resamples *pairs*
        (every held-out label of a drawn pair comes with it, so the several humans of a pair are
        not counted as independent draws) and recomputes both scores on each resample, so the
        interval is for the paired difference. ``other``: a second result holding ``baseline``
        on the same held-out labels (e.g. the same protocol fitted without the judges); only the
        labels scored in both are compared (``n_labels``).

        Returns one row per metric: ``estimate``, ``low``, ``high`` (percentile interval at
        ``level``), ``share_positive`` (share of resamples with a difference > 0), ``n_pairs`` and ``n_labels``.

        Examples
        --------
        >>> from voirdire.pairwise import simulate_pairwise
        >>> t, _ = simulate_pairwise(150, rng=0)
        >>> res = leave_one_human_out(t, methods={"vote": lambda: MajorityVote(smoothing=0.5),
        ...                                       "DS": lambda: DawidSkene()}, rng=0)
        >>> d = res.difference("DS", "vote", rng=0)
        >>> d["metric"].tolist(), bool((d["low"] <= d["estimate"]).all() and (d["estimate"] <= d["high"]).all())
        (['accuracy', 'nll'], True)
        """
        func = "LOHOResult.difference"
        base = self if other is None else other
        for name, res in ((method, self), (baseline, base)):
            if name not in res.proba:
                raise InvalidParameterError(f"{func}: no forecasts of method {name!r}. Methods: {sorted(res.proba)}.")
        lab = self.labels
        if other is None:
            take_a = take_b = np.arange(len(lab))
        else:  # the labels scored in both (a pair left with no other label is unscored in one of them)
            key_a = pd.MultiIndex.from_frame(lab[["pair", "human"]])
            key_b = pd.MultiIndex.from_frame(other.labels[["pair", "human"]])
            pos_b = key_b.get_indexer(key_a)
            take_a = np.flatnonzero(pos_b >= 0)
            take_b = pos_b[take_a]
            if take_a.size == 0 or not np.array_equal(lab["y"].to_numpy()[take_a],
                                                      other.labels["y"].to_numpy()[take_b]):
                raise InvalidParameterError(f"{func}: 'other' was scored on different held-out labels.")
        level = float(level)
        if not 0 < level < 1:
            raise InvalidParameterError(f"The 'level' parameter of {func} must be in (0, 1). Got {level}.")
        n_resamples = check_positive_int(n_resamples, "n_resamples", func)
        sel = take_a if group == "all" else take_a[(lab["group"].to_numpy()[take_a] == group)]
        if sel.size == 0:
            raise InvalidParameterError(f"{func}: no held-out labels in group {group!r}.")
        sel_b = sel if other is None else take_b[np.searchsorted(take_a, sel)]
        y = lab["y"].to_numpy()[sel]
        pairs = lab["pair"].to_numpy()[sel]
        rows = np.arange(sel.size)

        def per_label(p: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            p = np.asarray(p)[at]
            return (p.argmax(1) == y).astype(float), -np.log(np.clip(p[rows, y], _EPS, 1.0))

        acc_a, nll_a = per_label(self.proba[method], sel)
        acc_b, nll_b = per_label(base.proba[baseline], sel_b)
        d = np.column_stack([acc_a - acc_b, nll_a - nll_b])
        codes, n_pairs = cluster_index(pairs)
        S = np.zeros((n_pairs, 3))
        np.add.at(S, codes, np.column_stack([d, np.ones(len(y))]))
        boots = []
        for W in weight_batches(n_pairs, n_resamples, as_generator(rng)):
            T = W @ S
            boots.append(T[:, :2] / T[:, 2:3])
        B = np.concatenate(boots)
        est = d.mean(0)
        lo, hi = np.quantile(B, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return pd.DataFrame({"metric": ["accuracy", "nll"], "estimate": est, "low": lo, "high": hi,
                             "share_positive": (B > 0).mean(0), "n_pairs": n_pairs, "n_labels": int(sel.size)})

    def best(self, metric: str = "nll", group: str = "all") -> str:
        """The method with the best ``metric`` in ``group`` (highest accuracy, lowest otherwise)."""
        t = self.table[self.table["group"] == group]
        if t.empty:
            raise InvalidParameterError(f"No group {group!r}. Groups: {sorted(self.table['group'].unique())}.")
        col = t[metric]
        return str(t.loc[col.idxmax() if metric == "accuracy" else col.idxmin(), "method"])


def leave_one_human_out(
    table: PairwiseTable,
    *,
    methods: Mapping[str, Callable[[], Any]] | None = None,
    groups: Mapping[str, str] | None = None,
    max_folds: int = 10,
    n_particles: int = 300,
    n_bins: int = 10,
    target: str = "human",
    rng: int | np.random.Generator | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> LOHOResult:
    """Predict each human's verdicts from everything else, for every method.

    For each human (or fold of humans, when there are more than ``max_folds``: humans are then
    split at random into ``max_folds`` folds) the human's labels are removed, every method is
    fitted on the rest, and its posterior verdict distribution for each pair is scored against
    the held-out verdicts (pairs left with no other label cannot be predicted and are counted in
    ``n_labels_unscored``). Scores: accuracy, NLL, Brier, ECE (:func:`score_predictions`).

    Parameters
    ----------
    table : PairwiseTable
    methods : mapping name -> factory, optional
        Zero-argument callables returning an unfitted estimator with ``fit(table)`` and
        ``predict_proba()`` (or ``predict_proba(table)`` for :class:`PairwiseBayesModel`, which
        is re-scored under its final state). Default :func:`default_methods`.
    groups : mapping human -> group name, optional
        E.g. ``{"e1": "expert", "w7": "crowd"}``; scores are reported per group and for ``"all"``.
    max_folds : int, default 10
    n_particles : int, default 300
        Particles of the default BayesJudge.
    n_bins : int, default 10
        Bins of the ECE.
    target : {"human", "latent"}, default "human"
        What a method forecasts. ``"human"``: methods with a model of human noise
        (``predict_human_proba``: BayesJudge, Dawid-Skene) forecast a typical human's verdict
        (the latent posterior pushed through the average confusion matrix of the training
        humans *of the held-out human's group* when ``groups`` are given, of all training humans
        otherwise; with folds of several humans, of the folds' groups); the others
        (majority vote, BTD, MACE, GLAD) have none and use their latent posterior. ``"latent"``:
        every method's latent posterior is scored directly.
    rng : int, Generator or None
    progress : callable, optional
        ``progress(done, total)`` before the first fit and after each (fold, method) fit (the CLI
        draws a progress bar with it); ``total`` = folds x methods.

    Returns
    -------
    LOHOResult

    Examples
    --------
    >>> from voirdire.pairwise import simulate_pairwise
    >>> t, _ = simulate_pairwise(120, rng=0)
    >>> res = leave_one_human_out(t, n_particles=50, rng=0)
    >>> res.table[["method", "group", "n_labels"]].head(2).to_dict("records")
    [{'method': 'BayesJudge', 'group': 'all', 'n_labels': 360}, {'method': 'majority vote', 'group': 'all', 'n_labels': 360}]
    """
    if not isinstance(table, PairwiseTable):
        raise InvalidParameterError(
            f"The 'table' parameter of leave_one_human_out must be a PairwiseTable. Got {type(table).__name__}.")
    max_folds = check_positive_int(max_folds, "max_folds", "leave_one_human_out")
    target = check_choice(target, "target", "leave_one_human_out", ("human", "latent"))
    n_particles = check_positive_int(n_particles, "n_particles", "leave_one_human_out")
    humans = list(table.humans)
    if len(humans) < 1:
        raise InvalidParameterError("leave_one_human_out needs at least one human rater in the table.")
    gen = as_generator(rng)
    if methods is None:
        methods = default_methods(n_particles=n_particles, rng=gen, systems=table.systems is not None)
    groups = dict(groups or {})
    unknown = set(groups) - set(humans)
    if unknown:
        raise InvalidParameterError(f"groups names raters that are not humans of the table: {sorted(unknown)[:5]}.")
    if len(humans) > max_folds:
        perm = gen.permutation(len(humans))
        folds = [[humans[k] for k in perm[f::max_folds]] for f in range(max_folds)]
    else:
        folds = [[h] for h in humans]
    names = list(methods)
    preds: dict[str, list[np.ndarray]] = {m: [] for m in names}
    ys: list[np.ndarray] = []
    who: list[np.ndarray] = []
    held_pairs: list[np.ndarray] = []
    unscored = 0
    total, done = len(folds) * len(names), 0
    if progress is not None:
        progress(0, total)
    is_human_label = table.roles[table.rater_idx] == "human"
    lp = table.label_pair
    for fold in folds:
        fold_idx = np.array([table.rater_index(h) for h in fold])
        held = np.isin(table.rater_idx, fold_idx) & is_human_label
        rest = table.select(label_mask=~held)
        pos = {p: k for k, p in enumerate(rest.pairs.tolist())}
        tgt_pairs = table.pairs[lp[held]]
        rows = np.array([pos.get(p, -1) for p in tgt_pairs.tolist()], dtype=np.int64)
        ok = rows >= 0
        unscored += int((~ok).sum())
        ys.append(table.verdicts[held][ok].astype(np.int64))
        who.append(table.raters[table.rater_idx[held][ok]])
        held_pairs.append(tgt_pairs[ok])
        for m in names:
            est = methods[m]()
            with warnings.catch_warnings():
                # a baseline that stops at n_iter is still scored; its warning is not the result
                warnings.simplefilter("ignore", ConvergenceWarning)
                est.fit(rest)
            if target == "human" and hasattr(est, "predict_human_proba"):
                # a typical human of the held-out human's group (every training human if no groups)
                fg = {groups.get(h, "") for h in fold}
                like = ([h for h in humans if h not in fold and groups.get(h, "") in fg]
                        if groups and fg != {""} else None)
                proba = (est.predict_human_proba(rest, like=like) if isinstance(est, _TABLE_READERS)
                         else est.predict_human_proba(like=like))
            else:
                proba = est.predict_proba(rest) if isinstance(est, _TABLE_READERS) else est.predict_proba()
            preds[m].append(np.asarray(proba)[rows[ok]])
            done += 1
            if progress is not None:
                progress(done, total)
    y_all = np.concatenate(ys)
    who_all = np.concatenate(who)
    grp = np.array([groups.get(str(h), "") for h in who_all], dtype=object)
    group_names = ["all"] + sorted({g for g in grp.tolist() if g})
    rows_out = []
    per_h = []
    proba_all = {m: np.concatenate(preds[m]) for m in names}
    for m in names:
        p_all = proba_all[m]
        for g in group_names:
            mask = np.ones(len(y_all), bool) if g == "all" else grp == g
            rows_out.append({"method": m, "group": g, **score_predictions(p_all[mask], y_all[mask], n_bins=n_bins)})
        for h in humans:
            mask = who_all == h
            if mask.any():
                per_h.append({"method": m, "human": h, "group": groups.get(h, ""),
                              **score_predictions(p_all[mask], y_all[mask], n_bins=n_bins)})
    return LOHOResult(table=pd.DataFrame(rows_out), per_human=pd.DataFrame(per_h), methods=tuple(names),
                      n_humans=len(humans), n_folds=len(folds), n_labels_unscored=unscored,
                      target=target, proba=proba_all,
                      labels=pd.DataFrame({"pair": np.concatenate(held_pairs), "human": who_all, "group": grp,
                                           "y": y_all}))



@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ForecastChoice(Result):
    """Which method to trust for forecasts on this file, from its leave-one-human-out scores.

    Attributes
    ----------
    chosen : str
        ``model``, or the best baseline when the rule prefers it (by default: when its held-out NLL
        is lower).
    model, best_baseline : str
        The model scored, and the other method with the lowest held-out NLL.
    nll_difference, nll_low, nll_high : float
        ``model`` minus ``best_baseline`` in held-out NLL (nats a label; < 0: the model forecasts
        better) and its paired ``confidence_level`` bootstrap interval over pairs.
    accuracy_difference, accuracy_low, accuracy_high : float
        The same for accuracy (> 0: the model is more often right).
    reason : str
        The rule's verdict in one sentence.
    rule : str
        The rule applied (:func:`choose_forecaster`): ``"lowest"`` or ``"not_worse"``.
    rule_text : str
        The rule in words (:data:`FORECAST_RULES`), as the terminal prints it.
    """

    chosen: str
    model: str
    best_baseline: str
    group: str
    nll_difference: float
    nll_low: float
    nll_high: float
    accuracy_difference: float
    accuracy_low: float
    accuracy_high: float
    confidence_level: float
    n_labels: int
    reason: str
    rule: str = "lowest"
    rule_text: str = ""


#: The held-out choice's rules in words (the CLI and the docs print these).
FORECAST_RULES = {"lowest": "the method with the lowest held-out NLL (the model on a tie)",
         "not_worse": "the model unless its held-out NLL is reliably worse (interval above 0)"}


def choose_forecaster(result: LOHOResult, *, model: str = "BayesJudge", group: str = "all",
                      confidence_level: float = 0.95, n_resamples: int = 2000,
                      rule: Literal["lowest", "not_worse"] = "lowest",
                      rng: int | np.random.Generator | None = 0) -> ForecastChoice:
    """The held-out choice between the model and the best baseline on the user's own file.

    Rule: the baseline with the lowest held-out NLL in ``group`` is the model's rival; the model
    minus the rival in NLL gets a paired bootstrap interval over pairs
    (:meth:`LOHOResult.difference`). ``rule="lowest"`` (default): the rival is chosen whenever its
    held-out NLL is lower than the model's (the point estimate; the interval is reported with it),
    the model on a tie. ``rule="not_worse"``: the rival is chosen only when the whole interval lies
    above 0 (the model forecasts the held-out humans reliably worse). Measured by nested
    leave-one-human-out (:class:`HeldOutChoice`, docs/pairwise.md "The system-strength prior and
    the held-out choice"): on sparse subjective raters "lowest" forecast as well as the best
    baseline where "not_worse" kept a model 0.5-0.8 points less accurate; elsewhere both chose the
    model (on SummEval "lowest" chose Dawid-Skene in one fold of three, NLL -0.0009).

    Parameters
    ----------
    result : LOHOResult
        From :func:`leave_one_human_out` with ``model`` among its methods.
    model : str, default "BayesJudge"
    group : str, default "all"
    confidence_level : float in (0, 1), default 0.95
    n_resamples : int, default 2000
    rng : int, Generator or None, default 0

    Returns
    -------
    ForecastChoice

    Examples
    --------
    >>> from voirdire.pairwise import simulate_pairwise
    >>> t, _ = simulate_pairwise(150, rng=0)
    >>> res = leave_one_human_out(t, methods={"vote": lambda: MajorityVote(smoothing=0.5),
    ...                                       "DS": lambda: DawidSkene()}, rng=0)
    >>> c = choose_forecaster(res, model="DS")      # unsmoothed Dawid-Skene on 150 pairs overfits
    >>> c.best_baseline, c.chosen, bool(c.nll_low > 0)
    ('vote', 'vote', True)
    """
    func = "choose_forecaster"
    if not isinstance(result, LOHOResult):
        raise InvalidParameterError(f"The 'result' parameter of {func} must be a LOHOResult. "
                                    f"Got {type(result).__name__}.")
    if model not in result.proba:
        raise InvalidParameterError(f"{func}: no forecasts of method {model!r}. Methods: {sorted(result.proba)}.")
    t = result.table[(result.table["group"] == group) & (result.table["method"] != model)]
    t = t[np.isfinite(t["nll"].to_numpy(dtype=float))]
    if t.empty:
        raise InvalidParameterError(f"{func}: no other method scored in group {group!r} to compare {model!r} with.")
    rival = str(t.loc[t["nll"].idxmin(), "method"])
    d = result.difference(model, rival, group=group, n_resamples=n_resamples, level=confidence_level,
                          rng=rng).set_index("metric")
    lo, hi, est = (float(d.loc["nll", k]) for k in ("low", "high", "estimate"))
    worse = lo > 0 if check_choice(rule, "rule", func, ("lowest", "not_worse")) == "not_worse" else est > 0
    pct = f"{100 * confidence_level:g}%"
    if worse and lo <= 0:
        reason = (f"{rival} forecasts the held-out humans better than {model} by the point estimate: NLL "
                  f"{est:+.4f} [{lo:+.4f}, {hi:+.4f}] ({pct} interval covers 0); use {rival}'s forecasts.")
    elif worse:
        reason = (f"{model} forecasts the held-out humans worse than {rival}: NLL {est:+.4f} "
                  f"[{lo:+.4f}, {hi:+.4f}] ({pct} interval above 0); use {rival}'s forecasts.")
    elif hi < 0:
        reason = (f"{model} forecasts the held-out humans better than the best baseline, {rival}: NLL "
                  f"{est:+.4f} [{lo:+.4f}, {hi:+.4f}] ({pct} interval below 0).")
    elif rule == "lowest":
        reason = (f"{model} forecasts the held-out humans at least as well as the best baseline, {rival}, by "
                  f"the point estimate: NLL {est:+.4f} [{lo:+.4f}, {hi:+.4f}] ({pct} interval covers 0); "
                  f"keep {model}.")
    else:
        reason = (f"{model} is not shown to forecast worse than the best baseline, {rival}: NLL {est:+.4f} "
                  f"[{lo:+.4f}, {hi:+.4f}] ({pct} interval covers 0); keep {model}.")
    return ForecastChoice(chosen=rival if worse else model, model=model, best_baseline=rival, group=group,
                          nll_difference=est, nll_low=lo, nll_high=hi,
                          accuracy_difference=float(d.loc["accuracy", "estimate"]),
                          accuracy_low=float(d.loc["accuracy", "low"]), accuracy_high=float(d.loc["accuracy", "high"]),
                          confidence_level=float(confidence_level), n_labels=int(d.loc["nll", "n_labels"]),
                          reason=reason, rule=str(rule), rule_text=FORECAST_RULES[str(rule)])


class HeldOutChoice:
    """The held-out choice as a forecaster: leave-one-human-out on the table it is fitted on, then the
    chosen method refitted on the whole table.

    ``fit(table)`` scores ``methods`` by :func:`leave_one_human_out` (``max_folds`` folds of humans),
    applies :func:`choose_forecaster` (``rule``) with ``model`` as the candidate, and fits the chosen
    method on ``table``; forecasts are that method's. This is what ``voirdire pairwise --evaluate``
    recommends, packaged so that its own held-out score can be measured (nested leave-one-human-out:
    ``bench/pairwise_sparse.py --variants "held-out choice"``).

    Parameters
    ----------
    methods : mapping name -> factory, optional
        Default :func:`default_methods` (with the systems' baseline when the table names systems).
    model : str, default "BayesJudge"
    max_folds : int, default 5
    rule : {"lowest", "not_worse"}, default "lowest"
    n_particles : int, default 300
        Particles of the default methods' BayesJudge.
    rng : int or None, default 0

    Attributes
    ----------
    evaluation_ : LOHOResult
    choice_ : ForecastChoice
    estimator_ : the fitted chosen method

    Examples
    --------
    >>> from voirdire.pairwise import simulate_pairwise
    >>> t, _ = simulate_pairwise(150, rng=0)
    >>> h = HeldOutChoice({"vote": lambda: MajorityVote(smoothing=0.5), "DS": lambda: DawidSkene()},
    ...                   model="DS").fit(t)
    >>> h.choice_.chosen, h.predict_proba().shape
    ('vote', (150, 3))
    """

    def __init__(self, methods: Mapping[str, Callable[[], Any]] | None = None, *, model: str = "BayesJudge",
                 max_folds: int = 5, rule: Literal["lowest", "not_worse"] = "lowest", n_particles: int = 300,
                 rng: int | None = 0) -> None:
        func = "HeldOutChoice"
        self.methods = methods
        self.model = model
        self.max_folds = check_positive_int(max_folds, "max_folds", func)
        self.rule = cast(Literal["lowest", "not_worse"], check_choice(rule, "rule", func, ("lowest", "not_worse")))
        self.n_particles = check_positive_int(n_particles, "n_particles", func)
        self.rng = rng

    def fit(self, table: PairwiseTable) -> HeldOutChoice:
        methods = self.methods
        if methods is None:
            methods = default_methods(n_particles=self.n_particles, rng=self.rng, systems=table.systems is not None)
        self.evaluation_ = leave_one_human_out(table, methods=methods, max_folds=self.max_folds, rng=self.rng)
        self.choice_ = choose_forecaster(self.evaluation_, model=self.model, rule=self.rule, rng=self.rng)
        est = methods[self.choice_.chosen]()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.estimator_ = est.fit(table)
        self._table = table
        return self

    def _check(self) -> None:
        if not hasattr(self, "estimator_"):
            raise InvalidParameterError("HeldOutChoice is not fitted yet; call fit(table) first.")

    def predict_proba(self, table: PairwiseTable | None = None) -> np.ndarray:
        """The chosen method's verdict distribution (n_pairs, 3) of the fitted table's pairs (or of
        ``table``'s, re-scored, when the chosen method is the Bayesian model)."""
        self._check()
        if isinstance(self.estimator_, PairwiseBayesModel):
            return self.estimator_.predict_proba(self._table if table is None else table)
        return np.asarray(self.estimator_.predict_proba())

    def predict_human_proba(self, table: PairwiseTable | None = None, *,
                            like: Sequence[str] | None = None) -> np.ndarray:
        """The chosen method's forecast of one more human verdict (its latent forecast when it has no
        model of the humans)."""
        self._check()
        est = self.estimator_
        if isinstance(est, PairwiseBayesModel):
            return est.predict_human_proba(self._table if table is None else table, like=like)
        if hasattr(est, "predict_human_proba"):
            return np.asarray(est.predict_human_proba(like=like))
        return np.asarray(est.predict_proba())


#: estimators whose forecasts are read for a table (re-scored under their final state)
_TABLE_READERS = (PairwiseBayesModel, HeldOutChoice)
