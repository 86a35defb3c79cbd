"""The one distance/weight-matrix module (voirdire/_stats/distances.py) against the definitions
(Krippendorff 2011, section E; Gwet 2014, ch. 3), and its callers reading the same matrices."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire._stats import distances as Dm


def test_krippendorff_metrics_match_their_definitions():
    v = np.array([1.0, 2.0, 4.0, 7.0])
    assert np.array_equal(Dm.delta("nominal", None, n_categories=3), 1 - np.eye(3))
    assert np.array_equal(Dm.delta("nominal", v), 1 - np.eye(4))
    assert Dm.delta("interval", v)[0, 3] == 36.0
    assert Dm.delta("ratio", v)[1, 2] == pytest.approx(((2 - 4) / (2 + 4)) ** 2)
    assert Dm.delta("ratio", np.array([0.0, 1.0]))[0, 0] == 0.0  # 0/0 on the diagonal is 0
    n = np.array([3.0, 1.0, 5.0, 2.0])
    want = np.array([[(n[min(a, b):max(a, b) + 1].sum() - (n[a] + n[b]) / 2) ** 2 for b in range(4)]
                     for a in range(4)])
    assert np.allclose(Dm.delta("ordinal", None, margins=n), want, rtol=0, atol=1e-12)
    # batched over leading axes: one matrix per row of margins
    batch = Dm.ordinal_delta(np.stack([n, n[::-1]]))
    assert batch.shape == (2, 4, 4) and np.allclose(batch[1], Dm.ordinal_delta(n[::-1]))
    with pytest.raises(ValueError):
        Dm.delta("ordinal", v)


def test_gwet_weights_match_their_definitions():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    for name in Dm.WEIGHT_NAMES:
        W = Dm.agreement_weights(name, x)
        assert np.allclose(np.diag(W), 1.0) and W.min() >= -1e-12 and np.allclose(W, W.T)
    assert Dm.agreement_weights("linear", x)[0, 2] == pytest.approx(1 - 2 / 4)
    assert Dm.agreement_weights("quadratic", x)[0, 2] == pytest.approx(1 - (2 / 4) ** 2)
    assert Dm.agreement_weights("radical", x)[0, 2] == pytest.approx(1 - np.sqrt(2) / 2)
    assert Dm.agreement_weights("ordinal", x)[0, 4] == 0.0  # the farthest pair gets no credit


def test_every_caller_reads_the_shared_matrices():
    from voirdire.agreement._prepare import prepare
    from voirdire.agreement._weights import distance_matrix
    from voirdire.data import AnnotationTable
    from voirdire._simulation import alpha_dense
    from voirdire.validation._kernel import delta_matrix

    v = np.array([1.0, 2.0, 5.0])
    pad = delta_matrix("ratio", 3, v)
    assert pad.shape == (4, 4) and np.array_equal(pad[:3, :3], Dm.delta("ratio", v)) and not pad[3].any()
    import pandas as pd
    t = AnnotationTable.from_frame(pd.DataFrame(
        {"item": [1, 1, 2, 2, 3, 3], "rater": list("ababab"), "label": [1, 2, 5, 5, 2, 1]}), scale="ratio")
    prep = prepare(t, raters=None, policy="exclude", func="test")
    D = distance_matrix("ratio", prep)
    R = Dm.delta("ratio", prep.cat_values)
    assert np.allclose(D, R / R.max())
    codes = np.array([[0, 1], [2, 2], [1, 0]])
    a = alpha_dense(codes, 3, level="ratio", category_values=v)
    import krippendorff
    assert a == pytest.approx(krippendorff.alpha(reliability_data=v[codes].T, level_of_measurement="ratio"))
