"""Agreement with ppi_py (ppi-python 0.2.3) on the same arrays.

ppi_py runs ``warnings.simplefilter("ignore")`` when it is imported, which would silence every
warning test that runs after it; the fixture imports it inside ``catch_warnings`` so the filters
are restored, and this module tests no warnings of its own. ppi_py's default is ``alpha=0.1``
(90% intervals): every call below passes ``alpha`` explicitly.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from voirdire.estimation import classical_mean, dr_mean, ppi_mean


@pytest.fixture(scope="module")
def ppi():
    with warnings.catch_warnings():
        ppi_py = pytest.importorskip("ppi_py")
    return ppi_py


def _data(seed, n_total=4000, frac=0.1, slope=0.8, noise=0.6):
    rng = np.random.default_rng(seed)
    x = rng.normal(3, 1, n_total)
    y = 0.4 + slope * x + rng.normal(0, noise, n_total)
    lab = rng.random(n_total) < frac
    return x, y, lab


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("confidence_level", [0.9, 0.95])
def test_ppi_mean_matches_ppi_py(ppi, seed, confidence_level):
    x, y, lab = _data(seed)
    ours = ppi_mean(x, np.where(lab, y, np.nan), confidence_level=confidence_level)
    lo, hi = ppi.ppi_mean_ci(y[lab], x[lab], x[~lab], alpha=1 - confidence_level)
    point = ppi.ppi_mean_pointestimate(y[lab], x[lab], x[~lab])
    assert ours.estimate == pytest.approx(float(np.squeeze(point)), abs=1e-10)
    assert ours.ci.low == pytest.approx(float(np.squeeze(lo)), abs=1e-10)
    assert ours.ci.high == pytest.approx(float(np.squeeze(hi)), abs=1e-10)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_ppi_mean_fixed_lambda_matches_ppi_py(ppi, lam):
    x, y, lab = _data(5, slope=1.2)
    ours = ppi_mean(x, np.where(lab, y, np.nan), lam=lam)
    lo, hi = ppi.ppi_mean_ci(y[lab], x[lab], x[~lab], alpha=0.05, lam=lam)
    assert ours.ci.low == pytest.approx(float(np.squeeze(lo)), abs=1e-10)
    assert ours.ci.high == pytest.approx(float(np.squeeze(hi)), abs=1e-10)
    assert ours.lam == lam


def test_ppi_lambda_clipped_for_an_unrelated_judge(ppi):
    x, y, lab = _data(6, slope=-0.5)  # negative covariance -> lambda clipped to 0 (classical)
    ours = ppi_mean(x, np.where(lab, y, np.nan))
    lo, hi = ppi.ppi_mean_ci(y[lab], x[lab], x[~lab], alpha=0.05)
    assert ours.lam == 0.0
    assert ours.ci.low == pytest.approx(float(np.squeeze(lo)), abs=1e-10)


@pytest.mark.parametrize("seed", [0, 3])
def test_classical_mean_matches_ppi_py(ppi, seed):
    x, y, lab = _data(seed)
    # ppi_py's interval is the symmetric normal one; the default ("auto") moves both ends by the
    # skewness correction, with the same standard error and width
    ours = classical_mean(np.where(lab, y, np.nan), interval="normal")
    lo, hi = ppi.classical_mean_ci(y[lab], alpha=0.05)
    assert ours.ci.low == pytest.approx(float(lo), abs=1e-10)
    assert ours.ci.high == pytest.approx(float(hi), abs=1e-10)
    auto = classical_mean(np.where(lab, y, np.nan))
    # the same standard error; from 100 labels the width grows by the heavy-tail term of the
    # labelled scores (next to nothing for normal scores), the skewness correction only shifts
    from voirdire.estimation._dr import _tail_term

    z = float(hi - lo) / (2 * ours.se)
    tail = _tail_term(np.ones(int(lab.sum())), y[lab], z, int(lab.sum()))
    assert 0 <= tail < 1e-3
    assert auto.se == ours.se and auto.ci.width == pytest.approx(float(hi - lo) * (1 + tail / z), abs=1e-10)
    # fully labelled data: the plain mean and std/sqrt(N)
    full = classical_mean(y)
    lo, hi = ppi.classical_mean_ci(y, alpha=0.1)
    assert full.ci.confidence_level == 0.95
    assert classical_mean(y, confidence_level=0.9).ci.high == pytest.approx(float(hi), abs=1e-10)


def test_dr_identity_equals_ppi_lambda_one_when_unlabelled_include_all(ppi):
    # DR with m(X) = X and pi = n/N is PPI (lam = 1) with every judge score as the "unlabelled" set:
    # mean_all(X) + mean_lab(Y - X).
    x, y, lab = _data(7)
    n = int(lab.sum())
    ours = dr_mean(x, np.where(lab, y, np.nan), n / x.size, model="identity")
    point = ppi.ppi_mean_pointestimate(y[lab], x[lab], x, lam=1)
    assert ours.estimate == pytest.approx(float(np.squeeze(point)), abs=1e-10)
