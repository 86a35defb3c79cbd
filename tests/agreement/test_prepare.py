"""The prepared selection (voirdire/agreement/_prepare.py) and what interval alpha reads from it on
large tables: the labels' own values instead of a gather of the category values, and the category
values converted only when asked for; the same bits as the category path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from voirdire.agreement import _core
from voirdire.agreement import _prepare as P
from voirdire.agreement._coefficients import _make_spec
from voirdire.data import AnnotationTable


def _table(n: int, seed: int, abstain: bool = False) -> AnnotationTable:
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(n, 3)) * 7.3 + 2.1).round(6)
    ii, rr = np.nonzero(rng.random((n, 3)) < 0.8)
    vals = x[ii, rr].astype(object)
    if abstain:
        vals[rng.random(vals.size) < 0.05] = "NA"
    return AnnotationTable.from_arrays(ii, np.array(["a", "b", "c"])[rr], vals, scale="interval",
                                       abstain=["NA"] if abstain else ())


@pytest.mark.parametrize(("policy", "raters", "abstain"), [("exclude", None, False), ("exclude", ["a", "c"], False),
                                                           ("disagree", None, True), ("exclude", None, True)])
def test_label_values_path_gives_the_category_path_bit_for_bit(monkeypatch, policy, raters, abstain):
    t = _table(2000, 1, abstain)
    monkeypatch.setattr(P, "_LAZY_CATEGORIES", 1)
    monkeypatch.setattr(_core, "_LABEL_VALUES_MIN", 1)
    prep = P.prepare(t, raters=raters, policy=policy, func="x")
    assert not isinstance(prep.cat_source, np.ndarray)  # not converted yet
    new = _make_spec("krippendorff_alpha", prep, level="interval", weights=None)
    # every category has a label here unless raters were dropped: no conversion needed then
    assert isinstance(prep.cat_source, np.ndarray) == (raters is not None)
    old_prep = dataclasses.replace(prep, label_values=None)
    old = _make_spec("krippendorff_alpha", old_prep, level="interval", weights=None)
    cv = np.asarray(t.scale.categories, dtype=float)
    assert np.array_equal(old_prep.cat_values, cv)
    assert (old.center, old.scale) == (new.center, new.scale) == ((cv.min() + cv.max()) / 2, cv.max() - cv.min())
    for name in ("s1", "s2", "d", "m", "a"):
        assert np.array_equal(getattr(old, name), getattr(new, name)), name
    assert np.array_equal(old.stats(), new.stats())


def test_value_range_with_unlabelled_categories_and_mismatched_values(monkeypatch):
    monkeypatch.setattr(P, "_LAZY_CATEGORIES", 1)
    monkeypatch.setattr(_core, "_LABEL_VALUES_MIN", 1)
    t = AnnotationTable.from_arrays([0, 0, 1, 1, 2, 2], ["a", "b"] * 3, [1.0, 2.0, 2.0, 3.0, 3.0, 3.0],
                                    scale="interval", categories=[5.0, 1.0, 2.0, 3.0, -4.0])
    prep = P.prepare(t, raters=None, policy="exclude", func="x")
    assert prep.value_range() == (-4.0, 5.0)  # categories no label uses count: converted, not read from labels
    # a table whose stored values do not match its categories: the probe sees it, the categories rule
    u = _table(300, 2)
    bad = dataclasses.replace(u, values=u.values + 1.0)
    prep = P.prepare(bad, raters=None, policy="exclude", func="x")
    assert _core._label_scores(prep, 0.0, 1.0, prep.n_sub) is None
    ref = _make_spec("krippendorff_alpha", P.prepare(u, raters=None, policy="exclude", func="x"), level="interval",
                     weights=None)
    got = _make_spec("krippendorff_alpha", prep, level="interval", weights=None)
    assert np.array_equal(ref.s1, got.s1) and np.array_equal(ref.s2, got.s2)


def test_column_major_statistics_give_the_same_jackknife_and_sums():
    t = _table(3000, 3)
    spec = _make_spec("krippendorff_alpha", P.prepare(t, raters=None, policy="exclude", func="x"), level="interval",
                      weights=None)
    S = spec.stats()
    assert S.flags.f_contiguous
    C = np.ascontiguousarray(S)
    one = np.ones((1, S.shape[0]))
    jf, jc = spec.loo_from_weights(one, S)[0], spec.loo_from_weights(one, C)[0]
    # the totals (a matrix-vector product) may round differently in the other layout: last bits only
    np.testing.assert_allclose(jf, jc, rtol=1e-13, atol=0)
    np.testing.assert_allclose(jf, spec.loo_from_weights(np.ones((2, S.shape[0])), S)[0], rtol=1e-13, atol=0)
    tot = S.sum(axis=0)
    for j in (0, 17, S.shape[0] - 1):  # the leave-one-out value is the estimate of the totals less that unit
        assert jf[j] == pytest.approx(spec.estimate((tot - S[j])[None, :])[0][0], rel=1e-12)
    W = np.ones((1, S.shape[0]))
    W[0, 5] = 0
    assert np.isnan(spec.loo_from_weights(W, S)[0][5])
