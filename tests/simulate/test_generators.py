"""The synthetic generator recovers its parameters; the dense alpha matches krippendorff."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire.exceptions import InvalidParameterError
from voirdire.simulate import LatentClassModel, simulate_annotations
from voirdire._simulation import alpha_dense
from voirdire.validation import loo_core


@pytest.mark.statistical
def test_generator_recovers_accuracies_noise_and_prevalence() -> None:
    # n = 20000 items: the accuracy of each rater is within 4 binomial standard errors
    # (sqrt(0.85 * 0.15 / 20000) = 0.0025) of its parameter; wrong labels are uniform over the
    # other L - 1 classes; class shares match the prevalence.
    n, L = 20000, 4
    prev = [0.4, 0.3, 0.2, 0.1]
    sim = simulate_annotations(n_items=n, n_humans=3, n_categories=L, human_accuracy=[0.85, 0.8, 0.9],
                               judge_accuracies=[0.6, 0.95], prevalence=prev, rng=123)
    codes = sim.table.dense()
    acc = (codes == sim.truth[:, None]).mean(axis=0)
    want = np.array([0.85, 0.8, 0.9, 0.6, 0.95])
    se = np.sqrt(want * (1 - want) / n)
    assert np.all(np.abs(acc - want) < 4 * se)
    np.testing.assert_allclose(np.bincount(sim.truth, minlength=L) / n, prev, atol=4 * np.sqrt(0.25 / n))
    # symmetric noise: given truth z and a wrong label, each other class has probability 1/3
    wrong = codes[:, 3] != sim.truth
    offs = (codes[wrong, 3] - sim.truth[wrong]) % L
    shares = np.bincount(offs, minlength=L)[1:] / wrong.sum()
    np.testing.assert_allclose(shares, 1 / 3, atol=4 * np.sqrt((1 / 3) * (2 / 3) / wrong.sum()))
    assert sim.table.n_items == n and sim.table.judges == ("judge_1", "judge_2")
    df = sim.to_frame()
    assert (df.groupby("item").truth.nunique() == 1).all()


@pytest.mark.statistical
def test_population_d_matches_large_sample() -> None:
    sim = simulate_annotations(n_items=30000, n_humans=4, n_categories=5, judge_accuracies=[0.7, 0.9], rng=9)
    codes = sim.table.dense()
    la = loo_core(codes, np.arange(4), np.array([4, 5]), n_categories=5)
    pop = sim.population_d()
    np.testing.assert_allclose(la.d.mean(axis=1), [pop["judge_1"], pop["judge_2"]], atol=0.01)
    model = LatentClassModel(n_items=10, n_categories=5, human_accuracy=(0.85,) * 4, judge_accuracies=(0.7, 0.9))
    np.testing.assert_allclose(model.population_d().mean(axis=1), [pop["judge_1"], pop["judge_2"]])


@pytest.mark.statistical
def test_clusters_correlate_correctness_within_cluster() -> None:
    # With cluster difficulty, whether two raters are right on an item is positively correlated
    # (both find the same clusters hard); without clusters the correlation is ~0.
    def corr(**kw: object) -> float:
        sim = simulate_annotations(n_items=8000, n_humans=2, judge_accuracies=[], rng=4, **kw)  # type: ignore[arg-type]
        right = sim.table.dense() == sim.truth[:, None]
        return float(np.corrcoef(right[:, 0], right[:, 1])[0, 1])
    c0, c1 = corr(), corr(n_clusters=100, cluster_sd=1.5)
    assert abs(c0) < 4 / np.sqrt(8000)
    assert c1 > 0.05


def test_reproducible_and_errors() -> None:
    a = simulate_annotations(n_items=50, rng=3)
    b = simulate_annotations(n_items=50, rng=3)
    assert np.array_equal(a.table.dense(), b.table.dense()) and a.seed == 3
    assert a.table.fingerprint() == b.table.fingerprint()
    with pytest.raises(InvalidParameterError, match="human_accuracy"):
        simulate_annotations(n_humans=3, human_accuracy=[0.8, 0.9])
    with pytest.raises(InvalidParameterError, match="judge_accuracies"):
        simulate_annotations(judge_accuracies=[1.2])
    with pytest.raises(InvalidParameterError, match="prevalence"):
        simulate_annotations(n_categories=2, prevalence=[0.2, 0.2])
    with pytest.raises(InvalidParameterError, match="n_clusters"):
        simulate_annotations(n_items=10, n_clusters=11)
    with pytest.raises(InvalidParameterError, match="n_humans"):
        simulate_annotations(n_humans=1)


def _random_codes(seed: int, n: int = 300, r: int = 5, L: int = 4, missing: float = 0.4) -> np.ndarray:
    gen = np.random.default_rng(seed)
    truth = gen.integers(0, L, size=n)
    codes = np.where(gen.random((n, r)) < 0.7, truth[:, None], gen.integers(0, L, size=(n, r)))
    codes[gen.random((n, r)) < missing] = -1
    return codes


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_dense_matches_krippendorff(level: str, seed: int) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    codes = _random_codes(seed)
    values = np.array([1.0, 2.0, 4.0, 7.0])           # unequal spacing exercises interval/ratio
    data = np.where(codes >= 0, values[np.maximum(codes, 0)], np.nan).T
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level, value_domain=list(values))
    got = alpha_dense(codes, 4, level=level, category_values=values)
    assert got == pytest.approx(ref, abs=1e-10)


def test_alpha_dense_matches_agreement_package() -> None:
    agreement = pytest.importorskip("voirdire.agreement")
    sim = simulate_annotations(n_items=200, n_humans=4, judge_accuracies=[], rng=5)
    t = sim.table
    keep = np.random.default_rng(0).random(t.n_labels) > 0.3
    t = t.select(label_mask=keep)
    res = agreement.krippendorff_alpha(t, level="nominal")
    assert alpha_dense(t.dense(), t.n_categories) == pytest.approx(res.estimate, abs=1e-10)


def test_alpha_dense_undefined_cases() -> None:
    assert np.isnan(alpha_dense(np.array([[0, -1], [1, -1]]), 2))          # nothing pairable
    assert np.isnan(alpha_dense(np.array([[0, 0], [0, 0]]), 2))            # one category: D_e = 0
    assert alpha_dense(np.array([[0, 0], [1, 1], [2, 2]]), 3) == pytest.approx(1.0)
