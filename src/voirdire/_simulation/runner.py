"""The experiment-grid runner: settings x designs x coverages x repetitions, locally or on Dask."""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from .. import _options
from .._checks import check_choice, check_positive_int, fraction_hint
from .._results import Result, to_jsonable
from ..data import AnnotationTable
from .._designs import DESIGNS
from ..exceptions import InfeasiblePlanError, InvalidParameterError, VoirdireError
from ..validation import loo_core, rank_error, top1_error
from .._checks import check_epsilon
from .alpha import alpha_dense
from .generators import LatentClassModel, SimulatedAnnotations
from .subsample import budget_for, sparse_codes

__all__ = ["ExperimentSetting", "ExperimentResult", "run_experiment", "PAPER_DESIGNS", "PAPER_COVERAGES"]

logger = logging.getLogger(__name__)

PAPER_DESIGNS: tuple[str, ...] = ("random", "strat", "seq-refined", "seq-coverage")
PAPER_COVERAGES: tuple[float, ...] = (0.05, 0.25, 0.50)
from .._scores import SCORES as _SCORES  # noqa: E402 - the one registry of score names
_RANK_BY = ("mean_d", "omega", "pool")
Progress = Callable[[int, int], None]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ExperimentSetting(Result):
    """One full matrix to draw sparse designs from: its judges are the grid's cells.

    Parameters
    ----------
    name : str
        Shown in every table.
    table : AnnotationTable, optional
        The full (fully crossed, or nearly) matrix; its decisions are the reference.
    model : LatentClassModel, optional
        Instead of a table: every repetition draws a fresh full matrix from the model, and the
        reference decision is the model's population rule (``d_k >= -epsilon`` for the population
        differences), so FR and FA are errors against the truth rather than against one matrix.
    primary : str, optional
        The first-pass human (default: the human with the most labels).
    group : str, default "default"
        Tables 1-3 are summarised per group (e.g. "synthetic", "real").
    level : str, optional
        Level of measurement for the human-pool alpha (default: the table's scale level).
    """

    name: str
    table: AnnotationTable | None = None
    model: LatentClassModel | None = None
    primary: str | None = None
    group: str = "default"
    level: str | None = None

    def __post_init__(self) -> None:
        if (self.table is None) == (self.model is None):
            raise InvalidParameterError(f"ExperimentSetting {self.name!r} needs exactly one of table= or model=.")

    def to_dict(self) -> dict[str, Any]:
        if self.table is None:
            assert self.model is not None
            return to_jsonable({"name": self.name, "group": self.group, "model": self.model.to_dict()})
        return to_jsonable({"name": self.name, "group": self.group, "primary": self.primary, "level": self.level,
                            "n_items": self.table.n_items, "humans": list(self.table.humans),
                            "judges": list(self.table.judges)})


@dataclasses.dataclass(frozen=True, slots=True)
class _Prepared:
    name: str
    group: str
    codes: np.ndarray
    human_cols: np.ndarray
    judge_cols: np.ndarray
    primary_col: int
    secondary_cols: np.ndarray
    judges: tuple[str, ...]
    n_categories: int
    level: str
    category_values: np.ndarray | None
    ref_mean_d: np.ndarray
    ref_rank: np.ndarray
    alpha_full: float
    model: LatentClassModel | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class _Payload:
    settings: tuple[_Prepared, ...]
    designs: tuple[str, ...]
    coverages: tuple[float, ...]
    n_repetitions: int
    epsilon: float
    score: str
    rank_by: str
    entropy: int

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (len(self.settings), len(self.designs), len(self.coverages), self.n_repetitions)


def _loo(codes: np.ndarray, s: _Prepared, score: str) -> Any:
    return loo_core(codes, s.human_cols, s.judge_cols, n_categories=s.n_categories, score=score,
                    category_values=s.category_values, level=s.level if score == "alpha" else "nominal")


def _rank_scores(la: Any, codes: np.ndarray, s: _Prepared, rank_by: str, epsilon: float) -> np.ndarray:
    if rank_by == "omega":
        return la.omega(epsilon)
    if rank_by == "pool":
        H = codes[:, s.human_cols]
        vh = (H >= 0) & (H < s.n_categories)
        G = codes[:, s.judge_cols]
        agree = ((G[:, :, None] == H[:, None, :]) & vh[:, None, :]).sum(axis=(0, 2))
        vj = (G >= 0) & (G < s.n_categories)
        pairs = (vj[:, :, None] & vh[:, None, :]).sum(axis=(0, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(pairs > 0, agree / np.maximum(pairs, 1), np.nan)
    with np.errstate(invalid="ignore"):
        d = la.d
        cnt = (~np.isnan(d)).sum(axis=1)
        return np.where(cnt > 0, np.nansum(d, axis=1) / np.maximum(cnt, 1), np.nan)


def _run_task(p: _Payload, t: int) -> tuple[Any, ...]:
    si, di, ci, _ = np.unravel_index(t, p.shape)
    s = p.settings[si]
    gen = np.random.default_rng(np.random.SeedSequence(entropy=p.entropy, spawn_key=(int(t),)))
    if s.model is not None:
        full = s.model.draw_codes(gen)
        a_full = alpha_dense(full[:, s.human_cols], s.n_categories, level=s.level)
    else:
        full, a_full = s.codes, s.alpha_full
    m = budget_for(p.coverages[ci], full.shape[0])
    sp = sparse_codes(full, primary_col=s.primary_col, secondary_cols=s.secondary_cols,
                      design=p.designs[di], m=m, n_categories=s.n_categories, rng=gen)
    la = _loo(sp, s, p.score)
    omega = la.omega(p.epsilon)
    accept = np.where(np.isnan(omega), False, omega >= 0.5)
    cnt = (~np.isnan(la.d)).sum(axis=1)
    with np.errstate(invalid="ignore"):
        mean_d = np.where(cnt > 0, np.nansum(la.d, axis=1) / np.maximum(cnt, 1), np.nan)
    elig = la.n_items_judge.min(axis=1)
    if s.judge_cols.size >= 2:
        rs = _rank_scores(la, sp, s, p.rank_by, p.epsilon)
        rerr = float(rank_error(rs, s.ref_rank))
        t1 = float(top1_error(rs, s.ref_rank))
    else:
        rerr = t1 = float("nan")
    a = alpha_dense(sp[:, s.human_cols], s.n_categories, level=s.level, category_values=s.category_values)
    return accept, omega, mean_d, elig, a, rerr, t1, a_full


def _run_chunk(p: _Payload, lo: int, hi: int) -> tuple[list[tuple[Any, ...]], tuple[float, float]]:
    t0, c0 = time.perf_counter(), time.process_time()
    out = [_run_task(p, t) for t in range(lo, hi)]
    return out, (time.perf_counter() - t0, time.process_time() - c0)


_WORKER_PAYLOAD: _Payload | None = None


def _init_worker(p: _Payload) -> None:
    global _WORKER_PAYLOAD
    _WORKER_PAYLOAD = p


def _start_method() -> str:
    """``fork`` where it is safe (Linux, no other Python thread running), else ``spawn``.

    A spawned worker re-imports numpy, scipy, pandas and voirdire (about 2 s here), which on a
    grid of a few CPU-seconds eats most of the gain of a second worker; a forked worker starts at
    once. Forking a process that runs other threads (a Dask client, say) can deadlock, so then we
    spawn. The results do not depend on the start method: every task seeds its own generator.
    """
    import sys
    import threading

    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _run_chunk_in_worker(lo: int, hi: int) -> tuple[list[tuple[Any, ...]], tuple[float, float]]:
    assert _WORKER_PAYLOAD is not None  # set by the pool initializer
    return _run_chunk(_WORKER_PAYLOAD, lo, hi)


def _prepare_model(st: ExperimentSetting, epsilon: float) -> tuple[_Prepared, pd.DataFrame]:
    md = st.model
    assert md is not None
    K, J = len(md.human_accuracy), len(md.judge_accuracies)
    if K < 2 or J < 1:
        raise InvalidParameterError(f"Setting {st.name!r}: a model needs at least two humans and one judge.")
    _, jn = md.names()
    d = md.population_d()
    T = d >= -epsilon
    omega = T.mean(axis=1)
    accept = omega >= 0.5
    kind = np.where(~accept, "reject", np.where(T.all(axis=1), "strong pass", "boundary pass"))
    mean_d = d.mean(axis=1)
    level = st.level or "nominal"
    prep = _Prepared(name=st.name, group=st.group, codes=np.zeros((0, K + J), dtype=np.int16),
                     human_cols=np.arange(K, dtype=np.intp), judge_cols=K + np.arange(J, dtype=np.intp),
                     primary_col=0, secondary_cols=np.arange(1, K, dtype=np.intp), judges=tuple(jn),
                     n_categories=md.n_categories, level=level, category_values=None, ref_mean_d=mean_d,
                     ref_rank=mean_d, alpha_full=float("nan"), model=md)
    cells = pd.DataFrame({"setting": st.name, "group": st.group, "judge": list(jn), "cell_type": kind,
                          "reference_accept": accept, "omega_full": omega, "mean_d_full": mean_d,
                          "rank_score_full": mean_d, "n_humans": K, "n_items": md.n_items, "primary": "human_1"})
    return prep, cells


def _prepare(st: ExperimentSetting, score: str, epsilon: float, rank_by: str) -> tuple[_Prepared, pd.DataFrame]:
    if st.model is not None:
        return _prepare_model(st, epsilon)
    t = st.table
    assert t is not None
    codes = t.dense()
    L = t.n_categories
    hidx = t.human_idx
    jidx = t.judge_idx
    if hidx.size < 2:
        raise InvalidParameterError(f"Setting {st.name!r} needs at least two humans; it has {hidx.size}.")
    if jidx.size < 1:
        raise InvalidParameterError(f"Setting {st.name!r} has no judge; mark the judges when reading it.")
    if st.primary is None:
        cov = ((codes[:, hidx] >= 0) & (codes[:, hidx] < L)).sum(axis=0)
        pcol = int(hidx[int(np.argmax(cov))])
    else:
        pcol = t.rater_index(st.primary)
        if t.roles[pcol] != "human":
            raise InvalidParameterError(f"Setting {st.name!r}: the primary {st.primary!r} is not a human.")
    sec = np.array([h for h in hidx if h != pcol], dtype=np.intp)
    level = st.level or t.scale.level
    check_choice(level, "level", "ExperimentSetting", _options.LEVELS)
    cv = np.asarray([float(c) for c in (t.scale.categories or ())], dtype=float) if t.scale.is_numeric else None
    small = codes.astype(np.int16) if codes.max(initial=0) < 32767 else codes
    prep = _Prepared(name=st.name, group=st.group, codes=small, human_cols=hidx.astype(np.intp),
                     judge_cols=jidx.astype(np.intp), primary_col=pcol, secondary_cols=sec,
                     judges=tuple(t.judges), n_categories=L, level=level, category_values=cv,
                     ref_mean_d=np.array([]), ref_rank=np.array([]), alpha_full=float("nan"))
    la = _loo(small, prep, score)
    T = la.tests(epsilon)
    omega = la.omega(epsilon)
    accept = np.where(np.isnan(omega), False, omega >= 0.5)
    all_pass = np.nansum(T, axis=1) == (~np.isnan(T)).sum(axis=1)
    kind = np.where(~accept, "reject", np.where(all_pass, "strong pass", "boundary pass"))
    cnt = (~np.isnan(la.d)).sum(axis=1)
    with np.errstate(invalid="ignore"):
        mean_d = np.where(cnt > 0, np.nansum(la.d, axis=1) / np.maximum(cnt, 1), np.nan)
    rank = _rank_scores(la, small, prep, rank_by, epsilon)
    a_full = alpha_dense(small[:, hidx], L, level=level, category_values=cv)
    prep = dataclasses.replace(prep, ref_mean_d=mean_d, ref_rank=rank, alpha_full=a_full)
    cells = pd.DataFrame({"setting": st.name, "group": st.group, "judge": list(t.judges), "cell_type": kind,
                          "reference_accept": accept, "omega_full": omega, "mean_d_full": mean_d,
                          "rank_score_full": rank, "n_humans": hidx.size, "n_items": t.n_items,
                          "primary": str(t.raters[pcol])})
    return prep, cells


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ExperimentResult(Result):
    """Tidy results of :func:`run_experiment` and the paper's summaries.

    Attributes
    ----------
    runs : pandas.DataFrame
        One row per (setting, design, coverage, repetition, judge): the sparse decision
        (``accept``, ``omega``, ``mean_d``, ``min_eligible``), the reference (``cell_type``,
        ``reference_accept``) and ``wrong`` (decision differs from the reference).
    tasks : pandas.DataFrame
        One row per (setting, design, coverage, repetition): ``alpha_sparse`` (human-pool
        Krippendorff alpha on the sparse matrix), ``alpha_full``, ``rank_error``, ``top1_error``.
    cells : pandas.DataFrame
        One row per (setting, judge): the full-matrix reference (``strong pass``: accepted with
        every T_k = 1; ``boundary pass``: accepted with some T_k = 0; ``reject``).
    designs, coverages : tuple
    n_repetitions : int
    epsilon : float
    score, rank_by : str
    seed : int
        Every task's generator is ``SeedSequence(seed, spawn_key=(task_index,))``: results do not
        depend on the executor, the number of workers or the chunking.
    executor : str
        ``"local"`` (in-process), ``"processes"`` or ``"dask"``.
    n_workers : int
    elapsed_s : float
        Wall time of the grid (excluding the reference computation).
    busy_s : float
        Seconds the workers spent computing tasks, summed over workers (``busy_s / elapsed_s``
        over ``n_workers`` is the parallel efficiency; start-up and transfers are the rest).
    cpu_s : float
        CPU seconds the workers spent on tasks (below ``busy_s`` when the machine is shared).
    """

    runs: pd.DataFrame
    tasks: pd.DataFrame
    cells: pd.DataFrame
    designs: tuple[str, ...]
    coverages: tuple[float, ...]
    n_repetitions: int
    epsilon: float
    score: str
    rank_by: str
    seed: int
    executor: str
    n_workers: int
    elapsed_s: float
    busy_s: float = float("nan")
    cpu_s: float = float("nan")

    @property
    def n_validations(self) -> int:
        """Sparse validations run (one per cell, design, coverage and repetition)."""
        return int(len(self.runs))

    def to_frame(self) -> pd.DataFrame:
        return self.runs

    def to_dict(self) -> dict[str, Any]:
        """The settings and Tables 1-3 as JSON-safe Python objects (nan becomes None)."""
        return to_jsonable({
            "designs": list(self.designs), "coverages": list(self.coverages), "n_repetitions": self.n_repetitions,
            "epsilon": self.epsilon, "score": self.score, "rank_by": self.rank_by, "seed": self.seed,
            "executor": self.executor, "n_workers": self.n_workers, "elapsed_s": self.elapsed_s,
            "busy_s": self.busy_s, "cpu_s": self.cpu_s, "n_validations": self.n_validations,
            "table1": self.table1().to_dict(orient="records"),
            "table2": self.table2().to_dict(orient="records"),
            "table3": self.table3().to_dict(orient="records")})

    def table1(self, *, tolerance: float = 0.05) -> pd.DataFrame:
        """Human-pool alpha per (setting, coverage, design): full value, absolute bias, std, reliability.

        ``abs_bias = |mean(alpha_sparse) - alpha_full|``; ``reliability`` = share of runs with
        ``|alpha_sparse - alpha_full| <= tolerance`` (an undefined sparse alpha counts as a miss; nan
        when the full-matrix alpha itself is undefined, e.g. every label in one category);
        ``n_undefined`` counts runs where the sparse alpha was undefined.
        """
        t = self.tasks.copy()
        t["err"] = t["alpha_sparse"] - t["alpha_full"]
        t["ok"] = (t["err"].abs() <= tolerance) & t["err"].notna()
        g = t.groupby(["group", "setting", "coverage", "design"], sort=False)
        out = g.agg(alpha_full=("alpha_full", "first"), mean_alpha=("alpha_sparse", "mean"),
                    std=("alpha_sparse", "std"), reliability=("ok", "mean"),
                    mean_abs_error=("err", lambda e: float(np.nanmean(np.abs(e))) if e.notna().any() else np.nan),
                    n_undefined=("alpha_sparse", lambda a: int(a.isna().sum())), n_runs=("ok", "size")).reset_index()
        # no reference (alpha undefined on the full matrix, e.g. one category): reliability is undefined too
        out.loc[out["alpha_full"].isna(), "reliability"] = np.nan
        out.insert(out.columns.get_loc("mean_alpha") + 1, "abs_bias", (out["mean_alpha"] - out["alpha_full"]).abs())
        return out.sort_values(["group", "setting", "coverage"], kind="stable").reset_index(drop=True)

    def table2(self) -> pd.DataFrame:
        """Ranking: top-1 error per setting and mean rank / top-1 error per (group, coverage, design)."""
        t = self.tasks
        per = t.groupby(["group", "coverage", "design", "setting"], sort=False).agg(
            rank_error=("rank_error", "mean"), top1_error=("top1_error", "mean")).reset_index()
        # dropna=False: a setting with one judge has no ranking (nan), but its rows must stay
        wide = per.pivot_table(index=["group", "coverage", "design"], columns="setting", values="top1_error",
                               sort=False, dropna=False)
        wide.columns = [f"top1_{c}" for c in wide.columns]
        mean = per.groupby(["group", "coverage", "design"], sort=False).agg(
            mean_rank_error=("rank_error", "mean"), mean_top1_error=("top1_error", "mean"))
        out = wide.join(mean).reset_index()
        return out.sort_values(["group", "coverage"], kind="stable").reset_index(drop=True)

    def table3(self) -> pd.DataFrame:
        """Decisions per (group, coverage, design): mean FR, FA, WDR and boundary WDR over cells.

        Per cell, FR = share of runs that reject a strong-pass cell, FA = share that accept a
        reject cell, wrong-decision rate = share of runs differing from the reference. The table
        averages them over the strong-pass cells (FR), reject cells (FA), all cells (WDR) and
        boundary-pass cells (boundary WDR); nan when a group has no cell of that kind. ``sd_fr``,
        ``sd_fa``, ``sd_wdr``: standard deviation over the group's settings (matrices) of each
        setting's mean (nan with one setting), the spread that one matrix draw carries.
        """
        r = self.runs
        per = r.groupby(["group", "coverage", "design", "setting", "judge"], sort=False).agg(
            cell_type=("cell_type", "first"), wrong=("wrong", "mean")).reset_index()

        def spread(cells: pd.DataFrame) -> float:
            # sd over the settings (matrices) of each setting's mean: how much one matrix's draw matters
            m = cells.groupby("setting", sort=False).wrong.mean()
            return float(m.std(ddof=1)) if m.size > 1 else float("nan")

        rows = []
        for key, g in per.groupby(["group", "coverage", "design"], sort=False):
            sp = g[g.cell_type == "strong pass"]
            rj = g[g.cell_type == "reject"]
            bd = g[g.cell_type == "boundary pass"]
            rows.append({"group": key[0], "coverage": key[1], "design": key[2],
                         "n_strong_pass": len(sp), "n_boundary_pass": len(bd), "n_reject": len(rj),
                         "mean_fr": float(sp.wrong.mean()) if len(sp) else float("nan"),
                         "mean_fa": float(rj.wrong.mean()) if len(rj) else float("nan"),
                         "mean_wdr": float(g.wrong.mean()),
                         "boundary_wdr": float(bd.wrong.mean()) if len(bd) else float("nan"),
                         "n_settings": int(g.setting.nunique()), "sd_fr": spread(sp), "sd_fa": spread(rj),
                         "sd_wdr": spread(g)})
        out = pd.DataFrame(rows)
        return out.sort_values(["group", "coverage"], kind="stable").reset_index(drop=True)


def _coerce_settings(settings: Any) -> list[ExperimentSetting]:
    if isinstance(settings, (ExperimentSetting, AnnotationTable, SimulatedAnnotations, LatentClassModel)):
        settings = [settings]
    if isinstance(settings, Mapping):
        settings = [ExperimentSetting(name=str(k), table=v.table if isinstance(v, SimulatedAnnotations) else v)
                    if not isinstance(v, ExperimentSetting) else v for k, v in settings.items()]
    out: list[ExperimentSetting] = []
    for i, s in enumerate(settings):
        if isinstance(s, ExperimentSetting):
            out.append(s)
        elif isinstance(s, SimulatedAnnotations):
            out.append(ExperimentSetting(name=f"setting_{i + 1}", table=s.table, group="synthetic"))
        elif isinstance(s, AnnotationTable):
            out.append(ExperimentSetting(name=s.source, table=s))
        elif isinstance(s, LatentClassModel):
            out.append(ExperimentSetting(name=f"model_{i + 1}", model=s, group="model"))
        else:
            raise InvalidParameterError(
                "The 'settings' parameter of run_experiment must hold ExperimentSetting, AnnotationTable or "
                f"SimulatedAnnotations objects. Got {type(s).__name__}.")
    if not out:
        raise InvalidParameterError("The 'settings' parameter of run_experiment is empty.")
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"Setting names must be distinct. Got {names}.")
    return out


def _seed(rng: Any) -> int:
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63 - 1))
    if rng is None:
        return int(cast(int, np.random.SeedSequence().entropy) % (2**63))
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return int(rng)
    raise InvalidParameterError(
        f"The 'rng' parameter of run_experiment must be a non-negative int, a numpy Generator or None. Got {rng!r}.")


def run_experiment(
    settings: Sequence[ExperimentSetting | AnnotationTable | SimulatedAnnotations] | Mapping[str, Any] | ExperimentSetting,
    *,
    designs: Sequence[str] = PAPER_DESIGNS,
    coverages: Sequence[float] = PAPER_COVERAGES,
    n_repetitions: int = 300,
    epsilon: float = 0.05,
    score: str = "agreement",
    rank_by: str = "mean_d",
    rng: int | np.random.Generator | None = 0,
    n_jobs: int = 1,
    scheduler: Any = None,
    chunk_size: int | None = None,
    progress: Progress | None = None,
) -> ExperimentResult:
    """Run the sparse-design grid: settings x designs x coverages x repetitions.

    For every setting (a full matrix) the reference decision of each judge (a *cell*) comes from
    the leave-one-human-out rule on the full matrix. Each task draws one sparse design
    (:func:`subsample`: the primary and judges keep everything, each secondary keeps
    ``round(coverage * n)`` labels), reruns the rule for every judge, ranks the judges and
    computes the human-pool Krippendorff alpha.

    Parameters
    ----------
    settings : sequence of ExperimentSetting, AnnotationTable or SimulatedAnnotations, or mapping
        The full matrices (a mapping gives names).
    designs : sequence of str, default ("random", "strat", "seq-refined", "seq-coverage")
    coverages : sequence of float, default (0.05, 0.25, 0.5)
        Per-secondary coverages.
    n_repetitions : int, default 300
    epsilon : float, default 0.05
        Tolerance of ``T_k = 1[d_k >= -epsilon]``.
    score : {"agreement", "alpha", "kappa", "ac1"}, default "agreement"
        The score S of the rule.
    rank_by : {"mean_d", "omega", "pool"}, default "mean_d"
        How judges are ranked for the rank and top-1 errors: mean leave-one-out difference, the
        winning rate, or observed agreement with every human label.
    rng : int, numpy.random.Generator or None, default 0
        Seed. Task ``t`` uses ``SeedSequence(seed, spawn_key=(t,))``.
    n_jobs : int, default 1
        Local worker processes (``-1``: all cores). Ignored with ``scheduler``.
    scheduler : str or dask.distributed.Client, optional
        Run on a Dask cluster: a scheduler address (``"tcp://host:8786"``) or a client. Every
        worker needs the same voirdire version installed; the settings are broadcast once.
    chunk_size : int, optional
        Tasks per chunk sent to a worker (default: about eight chunks per worker, at most 500).
    progress : callable, optional
        ``progress(done, total)`` after every chunk (the CLI draws a progress bar with it).

    Returns
    -------
    ExperimentResult
        Tidy ``runs``/``tasks``/``cells`` frames and ``table1()``, ``table2()``, ``table3()``.

    Notes
    -----
    The results are identical for a given seed whatever the executor, number of workers and
    chunk size. A sparse run whose winning rate is undefined (no eligible item at all) counts
    as a rejection.

    Examples
    --------
    >>> from voirdire.simulate import simulate_annotations, run_experiment
    >>> sim = simulate_annotations(n_items=100, n_humans=3, judge_accuracies=[0.6, 0.95], rng=0)
    >>> res = run_experiment([sim], designs=["random"], coverages=[0.5], n_repetitions=4, rng=1)
    >>> res.n_validations, list(res.table3().columns[:3])
    (8, ['group', 'coverage', 'design'])
    """
    func = "run_experiment"
    sts = _coerce_settings(settings)
    designs = tuple(check_choice(d, "designs", func, DESIGNS) for d in designs)
    covs = []
    for c in coverages:
        if isinstance(c, bool) or not isinstance(c, (int, float, np.floating)) or not (0 < c <= 1):
            raise InvalidParameterError(f"The 'coverages' parameter of {func} must hold floats in (0, 1]. Got {c!r}."
                                        + fraction_hint(c, open_high=False))
        covs.append(float(c))
    if not designs or not covs:
        raise InvalidParameterError(f"{func} needs at least one design and one coverage.")
    n_repetitions = check_positive_int(n_repetitions, "n_repetitions", func)
    score = check_choice(score, "score", func, _SCORES)
    rank_by = check_choice(rank_by, "rank_by", func, _RANK_BY)
    epsilon = check_epsilon(epsilon, func)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1:
        raise InvalidParameterError(f"The 'n_jobs' parameter of {func} must be a positive int or -1. Got {n_jobs!r}.")
    if chunk_size is not None:
        chunk_size = check_positive_int(chunk_size, "chunk_size", func)
    seed = _seed(rng)
    if score != "agreement" and any(st.model is not None for st in sts):
        raise InvalidParameterError(
            f"{func}: model settings decide their reference with the population rule for observed agreement; "
            f"use score='agreement' with them (got {score!r}), or draw a table with simulate_annotations.")

    prepared = []
    cells = []
    for st in sts:
        pr, cl = _prepare(st, score, float(epsilon), rank_by)
        prepared.append(pr)
        cells.append(cl)
    for pr in prepared:
        if pr.model is None:
            have = (pr.codes[:, pr.secondary_cols] >= 0).sum(axis=0)
            m = budget_for(max(covs), pr.codes.shape[0])
            if have.size and have.min() < m:
                raise InfeasiblePlanError(
                    f"Setting {pr.name!r}: coverage {max(covs):g} needs {m} labels per secondary, but a secondary "
                    f"has only {int(have.min())} in the full matrix. Lower the coverage.")
    payload = _Payload(settings=tuple(prepared), designs=designs, coverages=tuple(covs),
                       n_repetitions=n_repetitions, epsilon=float(epsilon), score=score, rank_by=rank_by,
                       entropy=seed)
    n_tasks = int(np.prod(payload.shape))

    client = None
    own_client = False
    if scheduler is not None:
        client, own_client = _dask_client(scheduler)
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        executor = "dask"
    else:
        n_workers = (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
        executor = "local" if n_workers == 1 else "processes"
    cs = chunk_size or max(1, min(500, math.ceil(n_tasks / (8 * n_workers))))
    chunks = [(lo, min(lo + cs, n_tasks)) for lo in range(0, n_tasks, cs)]
    logger.info("run_experiment: %d tasks in %d chunks on %s (%d workers)", n_tasks, len(chunks), executor, n_workers)

    t0 = time.perf_counter()
    results: list[list[tuple[Any, ...]] | None] = [None] * len(chunks)
    busy = cpu = 0.0
    done = 0
    if progress is not None:
        progress(0, n_tasks)
    try:
        if executor == "local":
            for i, (lo, hi) in enumerate(chunks):
                results[i], sec = _run_chunk(payload, lo, hi)
                busy += sec[0]
                cpu += sec[1]
                done += hi - lo
                if progress is not None:
                    progress(done, n_tasks)
        elif executor == "processes":
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            ctx = multiprocessing.get_context(_start_method())
            with ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx, initializer=_init_worker,
                                     initargs=(payload,)) as pool:
                futs = {pool.submit(_run_chunk_in_worker, lo, hi): i for i, (lo, hi) in enumerate(chunks)}
                for f in as_completed(futs):
                    i = futs[f]
                    results[i], sec = f.result()
                    busy += sec[0]
                    cpu += sec[1]
                    done += chunks[i][1] - chunks[i][0]
                    if progress is not None:
                        progress(done, n_tasks)
        else:
            from distributed import as_completed as dask_completed

            assert client is not None
            # one copy of the payload per worker, sent to it directly: scatter(broadcast=True) replicates by
            # worker-to-worker transfers, which hung a local cluster in CI (a worker stuck in get_data_from_worker)
            workers = sorted(client.scheduler_info().get("workers", {}))
            copies = ([client.scatter(payload, workers=[w], hash=False) for w in workers] if workers
                      else [client.scatter(payload, hash=False)])
            dfuts = [client.submit(_run_chunk, copies[i % len(copies)], lo, hi, pure=False,
                                   workers=[workers[i % len(workers)]] if workers else None, allow_other_workers=True)
                     for i, (lo, hi) in enumerate(chunks)]
            index = {df.key: i for i, df in enumerate(dfuts)}
            for df in dask_completed(dfuts):
                i = index[df.key]
                try:
                    results[i], sec = df.result()
                except Exception as exc:  # a worker-side failure: name it, do not leak a remote traceback
                    from .. import __version__

                    raise VoirdireError(
                        f"A simulation task failed on the Dask cluster ({type(exc).__name__}: {exc}). Check that "
                        f"voirdire {__version__} is installed on every worker.") from exc
                busy += sec[0]
                cpu += sec[1]
                done += chunks[i][1] - chunks[i][0]
                if progress is not None:
                    progress(done, n_tasks)
    finally:
        if own_client and client is not None:
            client.close()
    elapsed = time.perf_counter() - t0
    flat = [r for chunk in results for r in (chunk or [])]
    runs, tasks = _assemble(payload, flat)
    cells_df = pd.concat(cells, ignore_index=True)
    runs = _attach_reference(runs, cells_df)
    return ExperimentResult(runs=runs, tasks=tasks, cells=cells_df, designs=designs, coverages=tuple(covs),
                            n_repetitions=n_repetitions, epsilon=float(epsilon), score=score, rank_by=rank_by,
                            seed=seed, executor=executor, n_workers=n_workers, elapsed_s=elapsed, busy_s=busy,
                            cpu_s=cpu)


def _dask_client(scheduler: Any) -> tuple[Any, bool]:
    from .._optional import dask_client

    return dask_client(scheduler, "run_experiment")


def _assemble(p: _Payload, flat: list[tuple[Any, ...]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    S, D, C, R = p.shape
    n_tasks = len(flat)
    si, di, ci, ri = np.unravel_index(np.arange(n_tasks), p.shape)
    set_names = np.array([s.name for s in p.settings], dtype=object)
    groups = np.array([s.group for s in p.settings], dtype=object)
    des = np.array(p.designs, dtype=object)
    cov = np.array(p.coverages, dtype=float)
    tasks = pd.DataFrame({
        "setting": set_names[si], "group": groups[si], "design": des[di], "coverage": cov[ci], "repetition": ri,
        "alpha_sparse": np.array([f[4] for f in flat], dtype=float),
        "alpha_full": np.array([f[7] for f in flat], dtype=float),
        "rank_error": np.array([f[5] for f in flat], dtype=float),
        "top1_error": np.array([f[6] for f in flat], dtype=float),
    })
    nj = np.array([p.settings[s].judge_cols.size for s in si])
    rep = np.repeat(np.arange(n_tasks), nj)
    judge_names = np.concatenate([np.array(p.settings[s].judges, dtype=object) for s in si]) if n_tasks else np.array([])
    accept = np.concatenate([f[0] for f in flat]) if n_tasks else np.array([], bool)
    omega = np.concatenate([f[1] for f in flat]) if n_tasks else np.array([])
    mean_d = np.concatenate([f[2] for f in flat]) if n_tasks else np.array([])
    elig = np.concatenate([f[3] for f in flat]) if n_tasks else np.array([], int)
    runs = pd.DataFrame({
        "setting": set_names[si][rep], "group": groups[si][rep], "design": des[di][rep], "coverage": cov[ci][rep],
        "repetition": ri[rep], "judge": judge_names, "accept": accept.astype(bool), "omega": omega,
        "mean_d": mean_d, "min_eligible": elig.astype(np.int64),
    })
    return runs, tasks


def _attach_reference(runs: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    out = runs.merge(cells[["setting", "judge", "cell_type", "reference_accept"]], on=["setting", "judge"],
                     how="left", sort=False)
    out["wrong"] = out["accept"] != out["reference_accept"]
    return out
