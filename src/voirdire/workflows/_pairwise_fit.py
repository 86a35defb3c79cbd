"""``fit_pairwise``: everything ``voirdire pairwise`` shows, in one result (private).

The Bayesian pairwise model (:class:`voirdire.pairwise.PairwiseBayesModel`, fitted or resumed from a saved
state) with its posterior, which orders each judge was asked in, the held-out choice of the forecaster
(by default: leave-one-human-out in ``choice_folds`` folds of humans, the model against the baselines,
:func:`voirdire.pairwise.choose_forecaster`), the per-pair forecasts of the chosen method and its most
uncertain pairs and, with ``evaluate``, the fuller leave-one-human-out comparison (every fold, the choice
made from it) and the plain sentences saying where BayesJudge is best and where a baseline beats it.
Nothing is computed where it is shown.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._checks import check_probability
from .._results import Result
from ..exceptions import ConvergenceWarning, InvalidParameterError

__all__ = ["PairwiseFit", "fit_pairwise", "human_groups", "evaluation_notes", "MODEL_NAME",
           "CHOICE_BASELINES"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PairwiseFit(Result):
    """The composite result of :func:`fit_pairwise`.

    Attributes
    ----------
    summary : table summary (pairs, humans, judges, verdicts, pairs with a judge in both orders)
    model : PairwiseBayesModel
        The fitted model (its options: particles, update, weights, ...).
    posterior : PairwisePosterior
    final_ess : float
        The effective sample size after the last pair (``nan`` before any).
    orders_seen : dict of str to str
        Per judge of the posterior: ``"AB"``, ``"BA"``, ``"AB+BA"`` or ``"-"`` (not in this file).
    uncertain : DataFrame
        The ``top`` most uncertain pairs.
    evaluation : LOHOResult or None
        The leave-one-human-out comparison (``evaluate``).
    choice : ForecastChoice or None
        The held-out choice between BayesJudge and the baselines (None when not made: ``choice_note``).
    choice_evaluation : LOHOResult or None
        The leave-one-human-out scores the choice was made from (``evaluation`` with ``evaluate``).
    choice_note : str
        Why the choice was not made (empty when it was, or when it was switched off: ``choice_off``).
    choice_off : bool
        ``choose=False`` (``--no-choice``).
    forecaster : str
        The method whose per-pair forecasts ``forecasts`` and ``uncertain`` hold: ``"BayesJudge"`` unless the
        held-out choice picked a baseline.
    forecasts : DataFrame
        Per pair of the posterior (stream order): ``pair, p_A, p_T, p_B, entropy`` and, for BayesJudge,
        ``theta, tau`` (its posterior's ``to_frame("items")``); a chosen baseline's are its fit on the
        whole file, with a ``forecaster`` column naming it.
    notes : tuple of str
        Where BayesJudge is best and where a baseline beats it (:func:`evaluation_notes`).
    evaluation_rows : DataFrame or None
        The comparison's rows as shown (one group holding every human is shown once).
    human_labels : tuple of float
        Per human of the posterior, the labels its confusion matrix has seen (its counts less the prior's).
    seed : int
    resumed_from : str or None
    """

    summary: Any
    model: Any
    posterior: Any
    final_ess: float
    orders_seen: dict[str, str]
    uncertain: Any
    evaluation: Any = None
    choice: Any = None
    choice_evaluation: Any = None
    choice_note: str = ""
    choice_off: bool = False
    forecaster: str = "BayesJudge"
    forecasts: Any = None
    notes: tuple[str, ...] = ()
    evaluation_rows: Any = None
    human_labels: tuple[float, ...] = ()
    seed: int = 0
    resumed_from: str | None = None

    def choice_dict(self) -> dict[str, Any]:
        """The held-out choice as ``voirdire pairwise --format json`` and the report's ``choice`` hold it:
        ``made``, ``method`` (whose forecasts ``forecasts`` holds), ``off`` (``--no-choice``), ``not_made`` (why,
        when it was not), ``folds`` and, when made, ``chosen``, ``rule``, ``rule_text``, ``model``,
        ``best_baseline``, the model minus the best baseline in NLL (``difference``) with its ``interval``, the
        same for accuracy, ``confidence_level``, ``n_labels`` and ``reason``."""
        ch, ev = self.choice, self.choice_evaluation
        out: dict[str, Any] = {"made": ch is not None, "method": self.forecaster, "off": self.choice_off,
                               "not_made": self.choice_note or None,
                               "folds": None if ev is None else ev.n_folds}
        if ch is None:
            return out
        return {**out, "chosen": ch.chosen, "rule": ch.rule, "rule_text": ch.rule_text, "model": ch.model,
                "best_baseline": ch.best_baseline, "metric": "nll", "difference": ch.nll_difference,
                "interval": [ch.nll_low, ch.nll_high], "accuracy_difference": ch.accuracy_difference,
                "accuracy_interval": [ch.accuracy_low, ch.accuracy_high], "confidence_level": ch.confidence_level,
                "n_labels": ch.n_labels, "reason": ch.reason}


def human_groups(specs: Sequence[str], humans: Sequence[str]) -> dict[str, str]:
    """``NAME=GROUP`` (exact human) or ``PREFIX*=GROUP`` (every human whose name starts with PREFIX); the first
    matching spec wins."""
    out: dict[str, str] = {}
    for spec in specs:
        if "=" not in spec:
            raise InvalidParameterError(
                f"--group expects NAME=GROUP or PREFIX*=GROUP (e.g. 'expert_*=expert'). Got {spec!r}.")
        name, group = (s.strip() for s in spec.split("=", 1))
        hits = [h for h in humans if (h.startswith(name[:-1]) if name.endswith("*") else h == name)]
        if not hits:
            raise InvalidParameterError(f"--group {spec!r} matches no human. Humans: {list(humans)[:10]}.")
        for h in hits:
            out.setdefault(h, group)
    return out


def _num(x: float) -> str:
    return "nan" if not math.isfinite(x) else f"{x:.3f}"


def evaluation_notes(loho: Any) -> list[str]:
    """Plain sentences: where BayesJudge is best and where a baseline beats it (per group and metric)."""
    t = loho.table
    lines = []
    gs = list(t["group"].unique())
    if len(gs) == 2 and (t[t["group"] == gs[0]]["n_labels"].to_numpy() == t[t["group"] == gs[1]]["n_labels"].to_numpy()).all():
        gs = gs[1:]
    for g in gs:
        sub = t[t["group"] == g].set_index("method")
        if "BayesJudge" not in sub.index:
            continue
        for metric, better in (("accuracy", max), ("nll", min), ("brier", min), ("ece", min)):
            col = sub[metric].dropna()
            if col.empty:
                continue
            best = better(col.index, key=lambda m: col[m])
            ours = col["BayesJudge"]
            runner = col.drop("BayesJudge")
            if not len(runner):
                continue
            rb = better(runner.index, key=lambda m: runner[m])
            if abs(ours - col[best]) < 5e-4:
                if abs(runner[rb] - ours) < 5e-4:
                    lines.append(f"[{g}] {metric}: BayesJudge tied best with {rb} ({_num(ours)}).")
                else:
                    lines.append(f"[{g}] {metric}: BayesJudge best ({_num(ours)}; next {rb} {_num(runner[rb])}).")
            else:
                lines.append(f"[{g}] {metric}: {best} beats BayesJudge ({_num(col[best])} vs {_num(ours)}).")
    return lines


def _shown_rows(loho: Any) -> Any:
    rows = loho.table
    n_all = rows.loc[rows["group"] == "all", "n_labels"]
    given = [g for g in rows["group"].unique() if g != "all"]
    if len(given) == 1 and len(n_all) and (rows.loc[rows["group"] == given[0], "n_labels"] == n_all.iloc[0]).all():
        rows = rows[rows["group"] != "all"]  # one group holding every human: show it once
    return rows


#: The model's name in the held-out choice (the method :func:`fit_pairwise` shows unless a baseline is chosen).
MODEL_NAME = "BayesJudge"


#: The baselines the default held-out choice scores against the model (the issue's goal's four; MACE and GLAD,
#: slower and never the best by held-out NLL on the shared sets or the simulations, are in ``--evaluate`` only).
CHOICE_BASELINES = ("majority vote", "Bradley-Terry-Davidson", "Dawid-Skene", "systems Bradley-Terry-Davidson")

_FEW_SCORED = ("fewer than 2 pairs had a held-out human verdict that the other raters could forecast "
               "(pairs seen by one human only)")


def _why_no_choice(table: Any) -> str:
    """Why the held-out choice cannot be made on ``table`` (empty when it can be tried)."""
    n = len(table.humans)
    if n < 2:
        return (f"the file has {n} human{'s' if n != 1 else ''}; the choice forecasts each held-out human from "
                "the other raters and needs at least 2")
    counts = np.bincount(table.label_pair, minlength=len(table.pairs))
    if not (counts >= 2).any():
        return ("every pair was labelled once (by one human only and no judge), so no held-out verdict can be "
                "forecast from the other raters")
    return ""


def _forecast_frame(est: Any, table: Any, name: str) -> Any:
    """``pair, p_A, p_T, p_B, entropy, forecaster`` of baseline ``name`` fitted on the whole ``table`` (the
    table's pair order)."""
    import pandas as pd

    proba = np.asarray(est.predict_proba(), dtype=float)
    df = pd.DataFrame({"pair": table.pairs})
    for k, v in enumerate(("A", "T", "B")):
        df[f"p_{v}"] = proba[:, k]
    with np.errstate(divide="ignore", invalid="ignore"):
        df["entropy"] = -np.where(proba > 0, proba * np.log(proba), 0.0).sum(1)
    df["forecaster"] = name
    return df


def _held_out_choice(table: Any, model_factory: Callable[[int], Any], *, n_particles: int, folds: int, seed: int,
                     progress: Callable[[int, int], None] | None) -> tuple[Any, Any, str]:
    """(LOHOResult, ForecastChoice, "") or (scores or None, None, why not) of the default held-out choice."""
    from ..pairwise import choose_forecaster, default_methods, leave_one_human_out
    from ._seeds import stream

    why = _why_no_choice(table)
    if why:
        return None, None, why
    gen = stream(seed, "pairwise", "choice")
    model_seed = int(gen.integers(0, 2**32))
    every = default_methods(n_particles=n_particles, rng=gen, systems=table.systems is not None)
    methods: dict[str, Callable[[], Any]] = {MODEL_NAME: lambda: model_factory(model_seed)}  # the user's options
    methods.update((m, every[m]) for m in CHOICE_BASELINES if m in every)
    loho = leave_one_human_out(table, methods=methods, max_folds=folds, n_particles=n_particles, rng=gen,
                               progress=progress)
    if loho.labels["pair"].nunique() < 2:
        return loho, None, _FEW_SCORED
    choice = choose_forecaster(loho, model=MODEL_NAME, rng=stream(seed, "pairwise", "choice", "bootstrap"))
    return loho, choice, ""


def fit_pairwise(table: Any, *, n_particles: int = 300, update: str = "soft", laplace: bool = True,
                 judge_ties: bool = True, judge_reliability: bool = True, calibrated: bool = False,
                 mode: str = "auto", seed: int = 0, top: int = 10, resume: str | Path | None = None,
                 evaluate: bool = False, groups: Sequence[str] = (), choose: bool = True, choice_folds: int = 5,
                 credible_level: float = 0.95, progress: Callable[[int, int], None] | None = None) -> PairwiseFit:
    """Fit (or resume) the Bayesian pairwise model on ``table``, choose the forecaster by held-out humans and,
    with ``evaluate``, compare it with the baselines leave-one-human-out in full (``groups``: ``--group``
    specs), as ``voirdire pairwise``.

    ``calibrated``: adaptive quadrature and a batch move after the stream (``--calibrated-intervals``);
    ``mode``: ``joint``, ``per-judge`` or ``auto`` (per judge above
    :data:`voirdire.pairwise.MAX_JOINT_JUDGES` judges); ``resume``: a saved state whose options replace these;
    ``credible_level``: of the posterior's intervals (``voirdire report --confidence-level``).

    The held-out choice (``choose``, the default; ``--no-choice`` skips it): the humans are split at random
    into ``choice_folds`` folds (one human a fold when there are fewer; seed stream ``("pairwise",
    "choice")``), every fold is held out in turn and forecast by the model (with the options above) and by
    the baselines (:data:`CHOICE_BASELINES`: majority vote, Bradley-Terry-Davidson, Dawid-Skene and, when
    the file names the systems, the systems' Bradley-Terry-Davidson; ``evaluate`` adds MACE and GLAD)
    fitted on the rest, and :func:`voirdire.pairwise.choose_forecaster` applies its default rule: **the
    method with the lowest held-out NLL, the model on a tie** (the paired 95% interval of the difference is
    reported, not used). When a baseline is chosen, ``forecasts`` and ``uncertain`` are that baseline's
    fitted on the whole file. With ``evaluate`` the choice is made from the full comparison instead (up to
    10 folds). Not made (``choice_note`` says why; the model's forecasts are shown): fewer than 2 humans
    (without ``evaluate``), no pair labelled twice or fewer than 2 pairs whose held-out verdicts could be
    forecast, or a resumed stream (the baselines would see this file only while the model carries the
    earlier ones).
    """
    from ..pairwise import MAX_JOINT_JUDGES, PairwiseBayesModel, choose_forecaster, leave_one_human_out

    if n_particles < 1:
        raise InvalidParameterError(f"--particles must be an integer >= 1. Got {n_particles}.")
    if top < 0:
        raise InvalidParameterError(f"--top must be an integer >= 0 (0 lists no pair). Got {top}.")
    if update not in ("soft", "hard"):
        raise InvalidParameterError(f"--update must be 'soft' or 'hard'. Got {update!r}.")
    if mode not in ("auto", "joint", "per-judge"):
        raise InvalidParameterError(f"--mode must be auto, joint or per-judge. Got {mode!r}.")
    if isinstance(choice_folds, bool) or not isinstance(choice_folds, (int, np.integer)) or choice_folds < 2:
        raise InvalidParameterError(f"--choice-folds must be an integer >= 2. Got {choice_folds!r}.")
    credible_level = check_probability(credible_level, "credible_level", "fit_pairwise")
    per_judge = mode == "per-judge" or (mode == "auto" and len(table.judges) > MAX_JOINT_JUDGES)

    def new_model(rng: int) -> Any:
        return PairwiseBayesModel(n_particles=n_particles, update=update, laplace=laplace,  # type: ignore[arg-type]
                                  judge_ties=judge_ties, judge_reliability=judge_reliability,
                                  particles="per_judge" if per_judge else "joint", batch_move=calibrated,
                                  quadrature="adaptive" if calibrated else "laplace", rng=rng)

    if resume is not None:
        model = PairwiseBayesModel.load(resume)
        model.partial_fit(table)
    else:
        model = new_model(seed)
        model.fit(table)
    post = model.posterior(credible_level=credible_level)
    named = human_groups(groups, table.humans) if groups else {}
    loho = choice = choice_loho = None
    choice_note = ""
    if evaluate:
        if not table.humans:
            raise InvalidParameterError("--evaluate needs human raters in the file (it predicts each held-out human).")
        loho = leave_one_human_out(table, groups=named, n_particles=n_particles, rng=seed, progress=progress)
        choice_loho = loho
        if loho.labels["pair"].nunique() < 2:
            choice_note = _FEW_SCORED
        else:
            choice = choose_forecaster(loho, rng=seed)
    elif choose and resume is not None:
        choice_note = ("a resumed stream: the baselines would be fitted on this file only while the model carries "
                       "the earlier files; rerun on the whole stream without --resume to choose")
    elif choose:
        choice_loho, choice, choice_note = _held_out_choice(table, new_model, n_particles=n_particles,
                                                            folds=choice_folds, seed=seed, progress=progress)
    forecaster = MODEL_NAME
    forecasts = post.to_frame("items")
    if choice is not None and choice.chosen != MODEL_NAME:
        if resume is not None:
            choice_note = (f"{choice.chosen} forecasts the held-out humans best, but the stream was resumed: the "
                           f"forecasts shown stay {MODEL_NAME}'s (the baselines see this file only)")
        else:
            from ..pairwise import default_methods
            from ._seeds import stream

            est = default_methods(n_particles=n_particles, rng=stream(seed, "pairwise", "choice", "refit"),
                                  systems=table.systems is not None)[choice.chosen]()
            with warnings.catch_warnings():  # a baseline that stops at n_iter still forecasts; not the result
                warnings.simplefilter("ignore", ConvergenceWarning)
                est.fit(table)
            forecaster, forecasts = choice.chosen, _forecast_frame(est, table, choice.chosen)
    seen = {}
    for jn in post.judges:
        if jn in table.judges:
            o = table.orders[table.rater_idx == table.rater_index(jn)]
            seen[str(jn)] = "+".join(n for n, c in (("AB", 0), ("BA", 1)) if (o == c).any())
        else:
            seen[str(jn)] = "-"
    ess = float(post.ess_history[-1, 1]) if len(post.ess_history) else float("nan")
    uncertain = forecasts.sort_values("entropy", ascending=False, kind="stable").head(top).reset_index(drop=True)
    return PairwiseFit(summary=table.summary(), model=model, posterior=post, final_ess=ess,
                       orders_seen=seen, uncertain=uncertain, evaluation=loho, choice=choice,
                       choice_evaluation=choice_loho, choice_note=choice_note, choice_off=not choose and not evaluate,
                       forecaster=forecaster, forecasts=forecasts,
                       notes=() if loho is None else tuple(evaluation_notes(loho)),
                       evaluation_rows=None if loho is None else _shown_rows(loho), seed=int(seed),
                       human_labels=tuple(float(post.dirichlet_counts[k].sum() - float(model.confusion_prior_.sum()))
                                          for k in range(len(post.humans))),
                       resumed_from=None if resume is None else str(resume))
