"""The experiment runner: reference cells, summaries, identical results across executors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voirdire.exceptions import InfeasiblePlanError, InvalidParameterError
from voirdire.simulate import (ExperimentSetting, LatentClassModel, run_experiment, simulate_annotations,
                               sparse_overlap_settings)
from voirdire._simulation import alpha_dense
from voirdire.validation import loo_core


@pytest.fixture(scope="module")
def settings():
    return sparse_overlap_settings(n_items=120, n_humans=(3, 4), n_categories=(2,),
                                   judge_accuracies=(0.6, 0.75, 0.8, 0.9), rng=0)


def test_full_coverage_reproduces_the_reference(settings) -> None:
    # With coverage 1 every secondary keeps every label: the sparse decision is the full one.
    res = run_experiment(settings, designs=["random", "strat"], coverages=[1.0], n_repetitions=3, rng=0)
    assert res.n_validations == 2 * 2 * 3 * 4
    assert not res.runs.wrong.any()
    t3 = res.table3()
    assert (t3.mean_wdr == 0).all()
    assert np.allclose(res.tasks.alpha_sparse, res.tasks.alpha_full)
    assert (res.tasks.rank_error == 0).all() and (res.tasks.top1_error == 0).all()
    t1 = res.table1()
    assert (t1.reliability == 1).all() and np.allclose(t1.abs_bias, 0)


def test_reference_cells_are_the_full_matrix_rule(settings) -> None:
    res = run_experiment(settings[:1], designs=["random"], coverages=[0.5], n_repetitions=2, rng=0)
    t = settings[0].table
    la = loo_core(t.dense(), t.human_idx, t.judge_idx, n_categories=t.n_categories)
    T = la.tests(0.05)
    omega = la.omega(0.05)
    kind = np.where(omega < 0.5, "reject", np.where(T.min(axis=1) == 1, "strong pass", "boundary pass"))
    assert res.cells.cell_type.tolist() == kind.tolist()
    np.testing.assert_allclose(res.cells.omega_full, omega)
    assert res.tasks.alpha_full.iloc[0] == pytest.approx(alpha_dense(t.dense()[:, t.human_idx], 2))


def test_table3_by_hand(settings) -> None:
    res = run_experiment(settings, designs=["random"], coverages=[0.1], n_repetitions=6, rng=2)
    r = res.runs
    per = r.groupby(["setting", "judge"]).agg(kind=("cell_type", "first"), acc=("accept", "mean"))
    fr = 1 - per[per.kind == "strong pass"].acc
    fa = per[per.kind == "reject"].acc
    wrong = r.groupby(["setting", "judge"]).wrong.mean()
    row = res.table3().iloc[0]
    assert row.mean_fr == pytest.approx(fr.mean()) and row.mean_fa == pytest.approx(fa.mean())
    assert row.mean_wdr == pytest.approx(wrong.mean())
    assert row.n_strong_pass + row.n_boundary_pass + row.n_reject == 8
    t2 = res.table2()
    assert t2.mean_rank_error.iloc[0] == pytest.approx(res.tasks.groupby("setting").rank_error.mean().mean())
    d = res.to_dict()
    assert set(d) >= {"table1", "table2", "table3", "seed", "n_validations"}


def test_identical_whatever_the_chunking(settings) -> None:
    a = run_experiment(settings, designs=["strat", "seq-coverage"], coverages=[0.1, 0.3], n_repetitions=4, rng=5)
    b = run_experiment(settings, designs=["strat", "seq-coverage"], coverages=[0.1, 0.3], n_repetitions=4, rng=5,
                       chunk_size=3)
    pd.testing.assert_frame_equal(a.runs, b.runs)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)
    c = run_experiment(settings, designs=["strat", "seq-coverage"], coverages=[0.1, 0.3], n_repetitions=4, rng=6)
    assert not a.tasks.alpha_sparse.equals(c.tasks.alpha_sparse)


def test_progress_callback(settings) -> None:
    seen: list[tuple[int, int]] = []
    run_experiment(settings, designs=["random"], coverages=[0.2], n_repetitions=5, rng=0, chunk_size=4,
                   progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, 10) and seen[-1] == (10, 10)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_model_settings_use_the_population_reference() -> None:
    m = LatentClassModel(n_items=100, n_categories=2, human_accuracy=(0.85,) * 3, judge_accuracies=(0.6, 0.95))
    res = run_experiment([ExperimentSetting(name="m", model=m)], designs=["random"], coverages=[0.5],
                         n_repetitions=5, rng=0)
    assert res.cells.cell_type.tolist() == ["reject", "strong pass"]
    # every repetition draws a fresh matrix: the full alpha varies
    assert res.tasks.alpha_full.nunique() > 1


def test_errors(settings) -> None:
    with pytest.raises(InvalidParameterError, match="'designs' parameter"):
        run_experiment(settings, designs=["bogus"], n_repetitions=1)
    with pytest.raises(InvalidParameterError, match="coverages"):
        run_experiment(settings, coverages=[5], n_repetitions=1)
    # regression: epsilon >= 1 ran and made every cell a strong pass; the rule needs [0, 1)
    with pytest.raises(InvalidParameterError, match=r"'epsilon' parameter of run_experiment.*\[0, 1\)"):
        run_experiment(settings, epsilon=1.5, n_repetitions=1)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        run_experiment(settings, epsilon=-0.1, n_repetitions=1)
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        run_experiment(settings, n_jobs=0, n_repetitions=1)
    with pytest.raises(InvalidParameterError, match="distinct"):
        run_experiment([settings[0], settings[0]], n_repetitions=1)
    with pytest.raises(InvalidParameterError, match="scheduler"):
        run_experiment(settings, scheduler=3.5, n_repetitions=1)
    with pytest.raises(InvalidParameterError, match="exactly one of table= or model="):
        ExperimentSetting(name="x")
    t = settings[0].table
    short = t.select(label_mask=~((t.rater_idx == 1) & (t.label_item < 10)))
    with pytest.raises(InfeasiblePlanError, match="Lower the coverage"):
        run_experiment([short], coverages=[1.0], n_repetitions=1)
    sim = simulate_annotations(n_items=20, n_humans=2, judge_accuracies=[], rng=0)
    with pytest.raises(InvalidParameterError, match="no judge"):
        run_experiment([sim], n_repetitions=1)


@pytest.mark.statistical
def test_more_overlap_fewer_wrong_decisions() -> None:
    sts = sparse_overlap_settings(n_items=300, n_humans=(4,), n_categories=(2,), rng=1)
    res = run_experiment(sts, designs=["random"], coverages=[0.05, 0.5], n_repetitions=60, rng=3)
    t3 = res.table3().set_index("coverage")
    assert t3.loc[0.5, "mean_wdr"] < t3.loc[0.05, "mean_wdr"]
    t1 = res.table1().set_index("coverage")
    assert t1.loc[0.5, "reliability"] > t1.loc[0.05, "reliability"]
    assert t1.loc[0.5, "std"] < t1.loc[0.05, "std"]


def _grid(settings):
    return dict(designs=["random", "seq-refined"], coverages=[0.1, 0.4], n_repetitions=3, rng=11)


@pytest.mark.slow
def test_local_processes_give_identical_results(settings) -> None:
    a = run_experiment(settings, **_grid(settings))
    b = run_experiment(settings, n_jobs=2, **_grid(settings))
    assert b.executor == "processes" and b.n_workers == 2
    pd.testing.assert_frame_equal(a.runs, b.runs)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)


@pytest.mark.slow
def test_dask_local_cluster_gives_identical_results(settings) -> None:
    distributed = pytest.importorskip("distributed")
    a = run_experiment(settings, **_grid(settings))
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as cl:
        with distributed.Client(cl) as client:
            b = run_experiment(settings, scheduler=client, chunk_size=5, **_grid(settings))
            c = run_experiment(settings, scheduler=cl.scheduler_address, **_grid(settings))
    assert b.executor == "dask" and b.n_workers == 2
    pd.testing.assert_frame_equal(a.runs, b.runs)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)
    pd.testing.assert_frame_equal(a.runs, c.runs)


def test_model_settings_need_the_agreement_score() -> None:
    m = LatentClassModel(n_items=50, n_categories=2, human_accuracy=(0.85,) * 3, judge_accuracies=(0.9,))
    with pytest.raises(InvalidParameterError, match="score='agreement'"):
        run_experiment([ExperimentSetting(name="m", model=m)], score="kappa", n_repetitions=1)


def test_chance_corrected_score_on_tables(settings) -> None:
    res = run_experiment(settings[:1], designs=["random"], coverages=[1.0], score="kappa", n_repetitions=2, rng=0)
    assert not res.runs.wrong.any() and res.score == "kappa"


@pytest.mark.parametrize("rank_by", ["omega", "pool"])
def test_other_rankings_at_full_coverage(settings, rank_by: str) -> None:
    res = run_experiment(settings, designs=["strat"], coverages=[1.0], rank_by=rank_by, n_repetitions=2, rng=0)
    assert (res.tasks.rank_error.fillna(0) == 0).all() and res.rank_by == rank_by
    if rank_by == "pool":
        t = settings[0].table
        codes = t.dense()
        h, j = t.human_idx, t.judge_idx
        pool = (codes[:, j][:, :, None] == codes[:, h][:, None, :]).mean(axis=(0, 2))
        np.testing.assert_allclose(res.cells.rank_score_full.iloc[: j.size], pool)


def test_one_judge_keeps_its_rows_and_strict_json() -> None:
    """One judge: no ranking (nan), but table2 keeps the (coverage, design) row and to_dict() is strict JSON."""
    import json

    sim = simulate_annotations(n_items=60, n_humans=3, judge_accuracies=[0.9], rng=0)
    res = run_experiment([sim], designs=["random", "strat"], coverages=[0.5], n_repetitions=2, rng=0)
    t2 = res.table2()
    assert len(t2) == 2 and list(t2["design"]) == ["random", "strat"]  # were dropped by pivot_table
    assert t2["mean_rank_error"].isna().all() and t2["mean_top1_error"].isna().all()
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert d["table2"][0]["mean_rank_error"] is None
    t3 = d["table3"][0]
    assert t3["n_reject"] == 0 and t3["mean_fa"] is None  # nan -> null


def test_reliability_undefined_without_a_full_alpha() -> None:
    """Every label in one category: alpha_full is undefined, so is the reliability (never 0)."""
    from voirdire.data import AnnotationTable

    rows = [(f"i{i}", r, "x") for i in range(40) for r in ("h1", "h2", "h3", "llm")]
    t = AnnotationTable.from_frame(pd.DataFrame(rows, columns=["item", "rater", "label"]), judges=["llm"])
    res = run_experiment([t], designs=["random"], coverages=[0.5], n_repetitions=2, rng=0)
    t1 = res.table1()
    assert t1["alpha_full"].isna().all() and t1["reliability"].isna().all()


def test_several_matrices_keep_the_first_seed_and_report_spread() -> None:
    one = sparse_overlap_settings(n_items=60, n_humans=(4,), n_categories=(2,), rng=3)
    many = sparse_overlap_settings(n_items=60, n_humans=(4,), n_categories=(2,), n_matrices=3, rng=3)
    assert [s.name for s in many] == ["syn_K4_L2_m0", "syn_K4_L2_m1", "syn_K4_L2_m2"]
    np.testing.assert_array_equal(one[0].table.dense(), many[0].table.dense())
    assert not np.array_equal(many[0].table.dense(), many[1].table.dense())
    res = run_experiment(many, coverages=[0.25], designs=["random"], n_repetitions=3, rng=0)
    row = res.table3().iloc[0]
    per = res.runs.groupby(["setting", "judge"]).agg(ct=("cell_type", "first"), w=("wrong", "mean")).reset_index()
    by_setting = per.groupby("setting").w.mean()
    assert row.n_settings == 3 and row.sd_wdr == pytest.approx(by_setting.std(ddof=1))
    with pytest.raises(InvalidParameterError, match="n_matrices"):
        sparse_overlap_settings(n_matrices=0)
