"""Several judges as covariates, power tuning, the small-sample t interval, bad judge matrices."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from voirdire.data import AnnotationTable
from voirdire.estimation import classical_mean, dr_mean, dr_mean_table, ppi_mean
from voirdire.estimation._dr import _hajek_form, _tail_term, _tune, _variance
from voirdire.exceptions import DegenerateDataWarning, InvalidParameterError, SmallSampleWarning

small = pytest.mark.filterwarnings("ignore::voirdire.exceptions.SmallSampleWarning")


def _world(seed: int, n: int = 1500, frac: float = 0.2):
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 1, n)
    X = np.column_stack([z + rng.normal(0, 0.8, n), 2 * z + rng.normal(0, 1.5, n) + 3, rng.normal(0, 1, n)])
    y_full = 3 + z + rng.normal(0, 0.7, n)
    lab = rng.random(n) < frac
    return X, np.where(lab, y_full, np.nan), y_full


def test_linear_on_two_judges_equals_weighted_least_squares():
    X, y, _ = _world(0)
    pi = np.where(X[:, 0] > 0, 0.3, 0.15)
    res = dr_mean(X[:, :2], y, pi, model="linear", cross_fit=1, interval="normal")
    lab = np.isfinite(y)
    w = np.sqrt(1 / pi[lab])
    A = np.column_stack([np.ones(lab.sum()), X[lab, :2]])
    beta = np.linalg.lstsq(A * w[:, None], y[lab] * w, rcond=None)[0]
    m = np.column_stack([np.ones(y.size), X[:, :2]]) @ beta
    ref = (m.sum() + np.sum((y[lab] - m[lab]) / pi[lab])) / y.size
    assert res.estimate == pytest.approx(ref, abs=1e-10)
    assert res.n_judges == 2 and res.lam is None


def test_frame_columns_and_covariates_are_predictors():
    X, y, _ = _world(1)
    frame = pd.DataFrame(X[:, :2], columns=["a", "b"])
    a = dr_mean(frame, y, 0.2, covariates=X[:, 2], model="linear", cross_fit=1)
    b = dr_mean(X, y, 0.2, model="linear", cross_fit=1)
    assert a.estimate == pytest.approx(b.estimate, abs=1e-10)
    assert a.n_judges == 2 and b.n_judges == 3


@pytest.mark.parametrize("model", ["calibrated", "ridge", "isotonic", "gbm", "linear"])
def test_every_model_takes_a_matrix_and_beats_one_judge(model):
    X, y, _ = _world(2)
    one = dr_mean(X[:, 0], y, 0.2, model="linear", rng=0)
    many = dr_mean(X, y, 0.2, model=model, rng=0)
    assert np.isfinite(many.estimate) and many.n_judges == 3
    assert many.se < one.se  # the second judge adds information about z
    assert many.r2 > one.r2


def test_power_tuning_minimises_the_variance_exactly():
    # lam from the closed-form quadratic equals a brute-force grid minimum of the one variance
    # formula (Hajek-normalised DR), and lam = 0 is exactly classical_mean (estimate and SE)
    X, y, _ = _world(3, n=400)
    lab = np.isfinite(y)
    pi = np.where(X[:, 0] > 0, 0.3, 0.15)
    rng = np.random.default_rng(0)
    m = X[:, 0] * 0.3 + rng.normal(0, 0.5, y.size) + 3  # a noisy, mis-scaled prediction
    li = np.flatnonzero(lab)
    c = np.sum(y[li] / pi[li]) / np.sum(1 / pi[li])
    for target in ("superpopulation", "finite"):
        _, lam, _ = _tune(y, m, pi, lab, None, None, target)

        def var(lam_):
            ml, scale = _hajek_form(y, c + lam_ * (m - c), pi, li)
            ce = scale * (y[li] - ml[li])
            theta = (ml.sum() + np.sum(ce / pi[li])) / y.size
            vt, vr, _ = _variance(ml, li, ce / pi[li], ce, pi[li], theta, None, None)
            return vt if target == "superpopulation" else vr

        grid = np.linspace(0, 1, 2001)
        best = grid[np.argmin([var(g) for g in grid])]
        assert lam == pytest.approx(best, abs=1e-3)
        human = classical_mean(y, pi, target=target, interval="t")  # the linearised SE (auto: jackknife)
        assert var(0.0) == pytest.approx(human.se**2, rel=1e-12)
        assert var(lam) <= human.se**2


def test_useless_judge_gives_the_human_only_interval():
    rng = np.random.default_rng(4)
    n = 3000
    y_full = rng.normal(3, 1, n)
    x = rng.normal(0, 1, (n, 2))  # unrelated to the humans
    y = np.where(rng.random(n) < 0.1, y_full, np.nan)
    cal = dr_mean(x, y, 0.1, rng=0)
    ident = dr_mean(x[:, 0], y, 0.1, model="identity")
    human = classical_mean(y, 0.1)
    assert cal.lam < 0.2
    assert cal.se <= human.se * (1 + 1e-12)  # by construction: lam = 0 is human-only
    assert ident.se > 1.2 * human.se  # the paper's identity model pays for the bad judge


@pytest.mark.filterwarnings("ignore:Only .* labelled item")
def test_calibrated_with_few_labels_falls_back_to_human_only():
    X, y, y_full = _world(5, n=200, frac=0.03)
    n_lab = int(np.isfinite(y).sum())
    assert n_lab < 10
    with pytest.warns(SmallSampleWarning, match="too few to fit the calibrated model"):
        res = dr_mean(X, y, 0.03, rng=0)
    assert res.lam == 0.0
    assert res.estimate == pytest.approx(np.nanmean(y), abs=1e-12)


@small
def test_t_interval_hand_checked():
    # X4/Y4 of test_dr: two labelled items at pi = 0.5 -> a_i = (1-pi)/pi^2 = 2 each, Kish n = 2,
    # df = 1; the superpopulation human term is 0 here, so df = 1 and q = t_{0.975, 1} = 12.706
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([3.0, np.nan, 2.0, np.nan])
    res = dr_mean(x, y, 0.5, model="identity")
    assert res.ci.method == "t" and res.df == pytest.approx(1.0)
    q = stats.t.ppf(0.975, 1)
    assert res.ci.high - res.estimate == pytest.approx(q * res.se)
    normal = dr_mean(x, y, 0.5, model="identity", interval="normal")
    assert normal.ci.method == "normal" and math.isinf(normal.df)


def test_effective_df_equal_probabilities_is_n_minus_one_and_unequal_is_smaller():
    X, y, _ = _world(6, n=300, frac=0.15)
    n = int(np.isfinite(y).sum())
    res = dr_mean(X[:, 0], y, 0.15, model="identity", target="finite")
    assert res.df == pytest.approx(n - 1)
    pi = np.where(X[:, 0] > 0, 0.3, 0.05)
    res2 = dr_mean(X[:, 0], y, pi, model="identity", target="finite", interval="t")
    assert res2.df < n - 1
    assert dr_mean(X[:, 0], y, 0.15, model="identity", interval="auto").ci.method == "t"  # n < 100


def test_auto_interval_is_normal_with_many_labels():
    X, y, _ = _world(7, n=2000, frac=0.2)
    assert dr_mean(X, y, 0.2, rng=0).ci.method == "normal"
    assert dr_mean(X, y, 0.2, rng=0, interval="t").ci.method == "t"


def test_table_with_two_judges_equals_the_matrix():
    X, y, _ = _world(8, n=120, frac=0.5)
    rows = []
    for i in range(y.size):
        rows += [(f"i{i}", "A", X[i, 0]), (f"i{i}", "B", X[i, 1])]
        if np.isfinite(y[i]):
            rows.append((f"i{i}", "h", y[i]))
    df = pd.DataFrame(rows, columns=["item", "rater", "label"])
    t = AnnotationTable.from_frame(df, judges=["A", "B"], scale="interval")
    res = dr_mean_table(t, ["A", "B"], inclusion_prob=0.5, rng=3)
    order = np.array([int(str(i)[1:]) for i in t.items])
    ref = dr_mean(X[order, :2], y[order], 0.5, rng=3)
    assert res.estimate == pytest.approx(ref.estimate, abs=1e-10)
    assert res.n_judges == 2


# ------------------------------------------------------------------------------------ bad input
def test_missing_judge_score_refused_or_imputed():
    X, y, _ = _world(9)
    X[5, 1] = np.nan
    with pytest.raises(InvalidParameterError, match="column 'judge 1' has no score for 1 item.*missing_judge='impute'"):
        dr_mean(X, y, 0.2, rng=0)
    res = dr_mean(X, y, 0.2, rng=0, missing_judge="impute")
    assert np.isfinite(res.estimate) and res.n_judges == 3


def test_constant_judge_warns_and_is_dropped():
    X, y, _ = _world(10)
    X[:, 2] = 4.0
    with pytest.warns(DegenerateDataWarning, match="constant over the items"):
        res = dr_mean(X, y, 0.2, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = dr_mean(X[:, :2], y, 0.2, rng=0)
    assert res.estimate == pytest.approx(ref.estimate)


def test_collinear_judges_are_fine_for_calibrated_and_linear():
    X, y, _ = _world(11)
    Xc = np.column_stack([X[:, 0], 2 * X[:, 0] + 1, X[:, 1]])
    res = dr_mean(Xc, y, 0.2, rng=0)
    lin = dr_mean(Xc, y, 0.2, model="linear", rng=0)
    ref = dr_mean(X[:, :2], y, 0.2, model="linear", rng=0)
    assert np.isfinite(res.estimate)
    assert lin.estimate == pytest.approx(ref.estimate, abs=1e-8)  # min-norm fit: same predictions


def test_identity_and_ppi_need_one_judge():
    X, y, _ = _world(12)
    with pytest.raises(InvalidParameterError, match="model='identity' of dr_mean uses one judge"):
        dr_mean(X, y, 0.2, model="identity")
    with pytest.raises(InvalidParameterError, match="ppi_mean takes one judge's scores"):
        ppi_mean(X, y)


@pytest.mark.parametrize("kwargs, match", [
    ({"power_tuning": "yes"}, "'power_tuning' parameter"),
    ({"interval": "bootstrap"}, "'interval' parameter"),
    ({"missing_judge": "drop"}, "'missing_judge' parameter"),
])
def test_bad_new_parameters(kwargs, match):
    X, y, _ = _world(13)
    with pytest.raises(InvalidParameterError, match=match):
        dr_mean(X, y, 0.2, **kwargs)


def test_zero_probability_on_a_labelled_item_is_refused():
    X, y, _ = _world(14)
    pi = np.full(y.size, 0.2)
    pi[np.flatnonzero(np.isfinite(y))[0]] = 0.0
    with pytest.raises(InvalidParameterError, match="must be in \\(0, 1\\] for every item"):
        dr_mean(X, y, pi)


# ------------------------------------------------------------------ leave-one-out cross-fitting
def _brute_loo(X, y, pi, lab, clusters, ridge):
    """Refit for every labelled unit: the definition of leave-one-out cross-fitting (scaling by all items)."""
    from voirdire.estimation._models import _ridge_sets

    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    w = 1.0 / pi
    unit = np.arange(y.size) if clusters is None else clusters
    out = np.empty(y.size)
    for i in range(y.size):
        tr = lab & (unit != unit[i])
        mz, icpt, coef = _ridge_sets(Z[tr], y[tr], w[tr], np.zeros(0, dtype=np.int64), 0, ridge=ridge)
        out[i] = icpt[0] + (Z[i] - mz[0]) @ coef[0]
    return out


@pytest.mark.parametrize("ridge", [True, False])
@pytest.mark.parametrize("with_clusters", [False, True])
def test_leave_one_out_equals_refitting_without_each_unit(ridge, with_clusters):
    from voirdire.estimation._models import cross_fit_predict

    rng = np.random.default_rng(3)
    n = 120
    X = rng.normal(0, 1, (n, 3)) * [1.0, 3.0, 0.2] + [2.0, 0.0, 5.0]
    y = 1 + X @ [0.5, -0.2, 1.0] + rng.normal(0, 1, n)
    pi = rng.uniform(0.2, 0.6, n)
    lab = rng.random(n) < pi
    cl = rng.integers(0, 40, n) if with_clusters else None
    got = cross_fit_predict(X, y, pi, lab, model="ridge" if ridge else "linear", n_folds="loo", rng=rng,
                            clusters=cl, func="t")
    np.testing.assert_allclose(got, _brute_loo(X, y, pi, lab, cl, ridge), rtol=1e-9, atol=1e-9)
    # a labelled item's prediction does not move when its own score does
    y2 = y.copy()
    i = int(np.flatnonzero(lab)[0])
    y2[i] += 100.0
    got2 = cross_fit_predict(X, y2, pi, lab, model="ridge" if ridge else "linear", n_folds="loo", rng=rng,
                             clusters=cl, func="t")
    assert got2[i] == pytest.approx(got[i], abs=1e-9)
    if cl is not None:
        same = cl == cl[i]
        np.testing.assert_allclose(got2[same], got[same], atol=1e-9)


def test_ridge_sets_matches_a_direct_weighted_ridge():
    # the penalty GCV picks, then the closed-form weighted ridge with that penalty
    from voirdire.estimation._models import _ALPHAS, _ridge_sets

    rng = np.random.default_rng(4)
    n, p = 80, 4
    Z = rng.normal(0, 1, (n, p))
    y = Z @ [0.3, 0.0, -0.4, 0.1] + rng.normal(0, 1, n)
    w = rng.uniform(1, 3, n)
    mz, icpt, coef = _ridge_sets(Z, y, w, np.zeros(0, dtype=np.int64), 0, ridge=True)
    zbar, ybar = (w @ Z) / w.sum(), (w @ y) / w.sum()
    A, b = (Z - zbar) * np.sqrt(w)[:, None], (y - ybar) * np.sqrt(w)
    gcv = []
    for a in _ALPHAS * w.sum():
        beta = np.linalg.solve(A.T @ A + a * np.eye(p), A.T @ b)
        hat = A @ np.linalg.solve(A.T @ A + a * np.eye(p), A.T)
        gcv.append((n * np.sum((b - A @ beta) ** 2) / (n - np.trace(hat) - 1) ** 2, beta))
    beta = min(gcv, key=lambda t: t[0])[1]
    np.testing.assert_allclose(coef[0], beta, rtol=1e-8)
    np.testing.assert_allclose(mz[0], zbar, rtol=1e-10)
    assert icpt[0] == pytest.approx(ybar)


def test_auto_cross_fit_is_leave_one_out_for_the_linear_models():
    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, (400, 2))
    y = np.where(rng.random(400) < 0.2, x.sum(axis=1) + rng.normal(0, 1, 400), np.nan)
    n_lab = int(np.isfinite(y).sum())
    assert dr_mean(x, y, 0.2, rng=0).cross_fit == n_lab
    assert dr_mean(x, y, 0.2, cross_fit="loo", rng=0).estimate == dr_mean(x, y, 0.2, rng=1).estimate  # no randomness
    assert dr_mean(x, y, 0.2, model="isotonic", rng=0).cross_fit == 5
    with pytest.raises(InvalidParameterError, match="'loo'"):
        dr_mean(x, y, 0.2, model="isotonic", cross_fit="loo", rng=0)


def test_gbm_without_scikit_learn_names_the_ml_extra(monkeypatch):
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path

    from voirdire import _optional

    extras = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert any(d.startswith("scikit-learn") for d in extras["ml"])
    real = _optional.optional_import
    monkeypatch.setattr(_optional, "optional_import", lambda m: None if m.startswith("sklearn") else real(m))
    X, y, _ = _world(6, n=300)
    with pytest.raises(_optional.MissingExtraError, match=r"pip install 'voirdire\[ml\]'"):
        dr_mean(X, y, 0.2, model="gbm", rng=0)


def _direct_gcv_fit(Z, y, w, free, alphas):
    """Weighted least squares of y on an intercept and Z, the columns not in ``free`` penalised
    by ``alpha``; the GCV-best ``alpha`` (explicit hat matrix). Returns (gcv, coef)."""
    n, p = Z.shape
    A = np.column_stack([np.ones(n), Z]) * np.sqrt(w)[:, None]
    b = y * np.sqrt(w)
    pen = np.ones(p + 1)
    pen[0] = 0.0
    pen[[1 + j for j in free]] = 0.0
    best = None
    for a in alphas:
        M = A.T @ A + a * np.diag(pen)
        beta = np.linalg.solve(M, A.T @ b)
        hat = A @ np.linalg.solve(M, A.T)
        g = n * np.sum((b - A @ beta) ** 2) / (n - np.trace(hat)) ** 2
        if best is None or g < best[0]:
            best = (g, beta[1:])
    return best


@pytest.mark.parametrize("seed, truth", [
    (6, [0.8, 0.0, 0.0, 0.0, 0.0]),    # one judge carries it: the anchored path
    (12, [0.3, 0.3, 0.3, 0.3, 0.3]),   # all alike: ridge on every column
    (10, [0.0, 0.0, 0.0, 0.0, 0.0]),   # nothing: the constant
])
def test_select_is_the_gcv_best_of_ridge_anchored_ridge_and_constant(seed, truth):
    # oracle: each candidate fitted directly (explicit weighted normal equations and hat matrix)
    from voirdire.estimation._models import _ALPHAS, _ridge_sets

    rng = np.random.default_rng(seed)
    n, p = 40, 5
    z = rng.normal(0, 1, n)
    Z = z[:, None] + rng.normal(0, 1.0, (n, p))
    y = Z @ np.asarray(truth) + rng.normal(0, 1, n)
    w = rng.uniform(1, 3, n)
    _, _, coef = _ridge_sets(Z, y, w, np.zeros(0, dtype=np.int64), 0, ridge=True, select=True)
    zbar = (w @ Z) / w.sum()
    ss = ((Z - zbar) ** 2 * w[:, None]).sum(axis=0)
    cy = ((Z - zbar) * ((y - (w @ y) / w.sum()) * w)[:, None]).sum(axis=0)
    j = int(np.argmax(cy**2 / ss))
    alphas = _ALPHAS * w.sum()
    cands = [_direct_gcv_fit(Z, y, w, [], alphas), _direct_gcv_fit(Z, y, w, [j], alphas)]
    resid = (y - (w @ y) / w.sum()) * np.sqrt(w)
    cands.append((n * np.sum(resid**2) / (n - 1.0) ** 2, np.zeros(p)))
    np.testing.assert_allclose(coef[0], min(cands, key=lambda t: t[0])[1], rtol=1e-7, atol=1e-10)
    which = int(np.argmin([c[0] for c in cands]))
    assert which == {6: 1, 12: 0, 10: 2}[seed], [c[0] for c in cands]


@small
def test_skewness_correction_equal_probabilities_is_the_sample_skewness_over_root_n():
    # Hall's correction: with pi = f the third cumulant over se^3 is (1 - 2f)/sqrt(1 - f) * g1/sqrt(n)
    # (g1 the sample skewness, ddof 0), shrunk by its reliability (sum e^3)^2 / ((sum e^3)^2 + (1-f) sum e^6)
    rng = np.random.default_rng(12)
    n_items, f = 600, 0.08
    y_full = np.clip(5 - rng.gamma(0.6, 1.2, n_items), 1, 5)  # a long lower tail, as SummEval consistency
    lab = rng.random(n_items) < f
    y = np.where(lab, y_full, np.nan)
    res = classical_mean(y, f, target="finite")
    e = y_full[lab] - y_full[lab].mean()
    n = int(lab.sum())
    k3 = (1 - 2 * f) / math.sqrt(1 - f) * stats.skew(y_full[lab]) / math.sqrt(n)
    reliab = np.sum(e**3) ** 2 / (np.sum(e**3) ** 2 + (1 - f) * np.sum(e**6))
    q = stats.t.ppf(0.975, res.df)
    expect = k3 * reliab * (2 * q * q + 1) / 6
    assert res.skew == pytest.approx(expect, rel=1e-9)
    assert res.skew < 0  # a long lower tail: the interval moves down
    assert res.ci.low == pytest.approx(res.estimate - (q - expect) * res.se, rel=1e-12)
    assert res.ci.high == pytest.approx(res.estimate + (q + expect) * res.se, rel=1e-12)
    assert res.ci.width == pytest.approx(2 * q * res.se)  # a shift, not a widening
    # the plain t and normal intervals stay symmetric, and so does a symmetric sample
    for kind in ("t", "normal"):
        plain = classical_mean(y, f, target="finite", interval=kind)
        assert plain.skew == 0.0
        assert plain.ci.high - plain.estimate == pytest.approx(plain.estimate - plain.ci.low)
    sym = classical_mean(np.array([1.0, 2.0, 3.0, 4.0, 5.0, np.nan, np.nan]), 0.5)
    assert sym.skew == 0.0
    sym = classical_mean(np.array([1.0, 2.0, 3.0, 4.0, 5.0, np.nan, np.nan, np.nan, np.nan, np.nan]), 0.3)
    assert sym.skew == pytest.approx(0.0, abs=1e-12)


def test_tail_term_is_halls_second_order_term_of_the_skewness_and_kurtosis():
    # closed form: -q (kappa (q^2 - 3)/12 - gamma^2 (q^4 + 2 q^2 - 3)/18) / n with scipy's sample
    # skewness and excess kurtosis (biased, Fisher); integer weights are repeated values; a
    # symmetric heavy-tailed sample (whose term is negative) gets nothing: never a narrower interval
    rng = np.random.default_rng(33)
    v = 5 - rng.gamma(0.5, 1.0, 150)
    q, n = 1.959964, 150
    g, k = stats.skew(v), stats.kurtosis(v)
    expected = -q * (k * (q * q - 3) / 12 - g * g * (q**4 + 2 * q * q - 3) / 18) / n
    assert expected > 0.02
    assert _tail_term(np.ones(v.size), v, q, n) == pytest.approx(expected, rel=1e-12)
    reps = rng.integers(1, 4, v.size)
    vr = np.repeat(v, reps)
    g, k = stats.skew(vr), stats.kurtosis(vr)
    expected = -q * (k * (q * q - 3) / 12 - g * g * (q**4 + 2 * q * q - 3) / 18) / n
    assert _tail_term(reps.astype(float), v, q, n) == pytest.approx(expected, rel=1e-12)
    sym = rng.laplace(0, 1, 100)
    sym = np.concatenate([sym, -sym])
    assert stats.kurtosis(sym) > 1 and _tail_term(np.ones(200), sym, q, 200) == 0.0
    assert _tail_term(np.ones(5), np.full(5, 3.0), q, 5) == 0.0


def test_from_100_labels_the_normal_quantile_grows_by_the_tail_term():
    # human-only on 160 labels with a long lower tail: half-width / se is the normal quantile plus
    # the tail term of its labelled scores; interval="normal" keeps the plain quantile; the
    # calibrated model's quantile is never above human-only's on the same labels
    rng = np.random.default_rng(8)
    n_items, f = 1600, 0.1
    g = rng.gamma(0.4, 1.0, n_items)
    y_full = np.clip(5 - 1.5 * g, 1, 5)
    X = np.column_stack([-g + rng.normal(0, 0.8, n_items), -g + rng.normal(0, 1.2, n_items)])
    lab = rng.random(n_items) < f
    y = np.where(lab, y_full, np.nan)
    res = classical_mean(y, f, target="finite")
    z = stats.norm.ppf(0.975)
    tail = _tail_term(np.ones(int(lab.sum())), y_full[lab], z, int(lab.sum()))
    assert lab.sum() >= 100 and tail > 0.01
    assert res.ci.width == pytest.approx(2 * (z + tail) * res.se, rel=1e-9)
    assert res.tail == pytest.approx(tail, rel=1e-12)
    plain = classical_mean(y, f, target="finite", interval="normal")
    assert plain.ci.width == pytest.approx(2 * z * plain.se, rel=1e-12) and plain.tail == 0.0
    dr = dr_mean(X, y, f, target="finite", rng=0)
    assert dr.ci.width / (2 * dr.se) <= z + tail + 1e-12
    assert dr.ci.width <= res.ci.width


@pytest.mark.parametrize("layout", ["items, strata", "clusters"])
def test_small_sample_variance_is_the_jackknife_of_the_whole_estimator(layout):
    # below 100 labelled units the default's design term is the linearised one moved a third of the
    # way to the delete-one jackknife: the same as calling dr_mean again without each labelled
    # unit's human scores (model, penalty and lam refitted), with the (1 - pi) factor and within strata
    rng = np.random.default_rng(31)
    n = 450
    X = rng.normal(size=(n, 2))
    y_full = 3 + X @ np.array([0.6, 0.3]) + rng.normal(0, 0.7, n)
    cl = st = None
    if layout == "clusters":  # whole clusters of 3 items drawn, one probability per cluster
        cl = np.repeat(np.arange(n // 3), 3)
        p_cl = np.where(rng.random(n // 3) > 0.5, 0.2, 0.08)
        pi = p_cl[cl]
        lab = (rng.random(n // 3) < p_cl)[cl]
    else:
        pi = np.where(X[:, 0] > 0, 0.1, 0.04)
        st = (X[:, 1] > 0).astype(int)
        lab = rng.random(n) < pi
    y = np.where(lab, y_full, np.nan)
    res = dr_mean(X, y, pi, target="finite", clusters=cl, strata=st, rng=0)
    units = np.unique(cl[lab]) if cl is not None else np.flatnonzero(lab)
    assert 10 <= units.size < 100
    thetas, pis, strata = [], [], []
    for u in units:
        drop = (cl == u) if cl is not None else (np.arange(n) == u)
        thetas.append(dr_mean(X, np.where(drop, np.nan, y), pi, target="finite", clusters=cl, strata=st,
                              rng=0, interval="t").estimate)
        pis.append(pi[drop & lab].mean())
        strata.append(0 if st is None else st[drop][0])
    thetas, pis, strata = np.array(thetas), np.array(pis), np.array(strata)
    v = 0.0
    for h in np.unique(strata):
        t, p = thetas[strata == h], pis[strata == h]
        v += (t.size - 1) / t.size * np.sum((1 - p) * (t - t.mean()) ** 2)
    lin = dr_mean(X, y, pi, target="finite", clusters=cl, strata=st, rng=0, interval="t")
    expected = lin.var_residual + (v - lin.var_residual) / 3
    assert res.var_residual == pytest.approx(expected, rel=1e-9)
    assert res.se == pytest.approx(math.sqrt(expected), rel=1e-9)
    assert lin.estimate == res.estimate and abs(v - lin.var_residual) > 0.05 * lin.var_residual


@pytest.mark.parametrize("seed", [6, 12])
def test_anchored_ridge_is_ridge_with_the_anchor_feature_unpenalised(seed):
    # oracle: least squares on [1, Z a, Z] with only Z's coefficients penalised, GCV-best penalty
    # (explicit hat matrix); the anchored coefficient vector is t a + gamma
    from voirdire.estimation._models import _ALPHAS, _first_component, _ridge_sets

    rng = np.random.default_rng(seed)
    n, p = 40, 5
    z = rng.normal(0, 1, n)
    Z = z[:, None] + rng.normal(0, 1.0, (n, p))
    y = Z @ rng.uniform(0, 0.5, p) + rng.normal(0, 1, n)
    w = rng.uniform(1, 3, n)
    a = _first_component(Z)
    assert a @ a == pytest.approx(1.0) and a.sum() > 0
    _, _, coef = _ridge_sets(Z, y, w, np.zeros(0, dtype=np.int64), 0, ridge=True, anchor=a)
    _, beta = _direct_gcv_fit(np.column_stack([Z @ a, Z]), y, w, [0], _ALPHAS * w.sum())
    np.testing.assert_allclose(coef[0], beta[0] * a + beta[1:], rtol=1e-7, atol=1e-10)


def test_calibrated_anchored_on_the_judges_agreement_beats_plain_ridge_with_many_weak_judges():
    # 20 equally noisy judges of one truth, 50 labels: shrinking towards the judges' common
    # direction (calibrated) predicts better out of sample than shrinking towards 0 (ridge)
    from voirdire.estimation._models import cross_fit_predict

    err = {"calibrated": 0.0, "ridge": 0.0}
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n = 1000
        z = rng.normal(0, 1, n)
        X = z[:, None] + rng.normal(0, 2.0, (n, 20))
        y = 3 + z + rng.normal(0, 0.7, n)
        lab = rng.random(n) < 0.05
        for model in err:
            m = cross_fit_predict(X, y, np.full(n, 0.05), lab, model=model, n_folds="loo", rng=rng, clusters=None,
                                  func="t")
            err[model] += float(np.mean((y[~lab] - m[~lab]) ** 2))
    assert err["calibrated"] < 0.97 * err["ridge"], err
