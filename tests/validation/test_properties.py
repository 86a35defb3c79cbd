"""Property tests of the leave-one-out kernel: invariances every score must have."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from voirdire.data import AnnotationTable
from voirdire.validation import leave_one_out, loo_core

SCORES = [("agreement", "nominal"), ("kappa", "nominal"), ("ac1", "nominal"), ("alpha", "nominal"),
          ("alpha", "ordinal"), ("alpha", "interval")]


@st.composite
def code_tables(draw):
    n = draw(st.integers(6, 30))
    K = draw(st.integers(2, 4))
    J = draw(st.integers(1, 3))
    L = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, L, (n, K + J)).astype(np.int32)
    codes[:, :K][rng.random((n, K)) < 0.3] = -1
    return codes, K, J, L, seed


def _run(codes, K, J, L, score, level):
    return loo_core(codes, np.arange(K), np.arange(K, K + J), n_categories=L, score=score, level=level)


def _same(a, b):
    for f in ("s_judge", "s_human", "d", "n_items", "n_pairs"):
        x, y = np.asarray(getattr(a, f), float), np.asarray(getattr(b, f), float)
        assert np.allclose(x, y, equal_nan=True, atol=1e-10), f


@settings(max_examples=25, deadline=None)
@given(code_tables())
def test_item_permutation_invariance(tab) -> None:
    codes, K, J, L, seed = tab
    perm = np.random.default_rng(seed + 1).permutation(codes.shape[0])
    for score, level in SCORES:
        _same(_run(codes, K, J, L, score, level), _run(codes[perm], K, J, L, score, level))


@settings(max_examples=25, deadline=None)
@given(code_tables())
def test_pool_member_order_and_judge_order_invariance(tab) -> None:
    codes, K, J, L, seed = tab
    rng = np.random.default_rng(seed + 2)
    hp, jp = rng.permutation(K), rng.permutation(J)
    for score, level in SCORES:
        a = _run(codes, K, J, L, score, level)
        b = loo_core(codes, hp, K + jp, n_categories=L, score=score, level=level)
        assert np.allclose(a.d[np.ix_(jp, hp)], b.d, equal_nan=True, atol=1e-10)
        assert np.allclose(a.s_human[hp], b.s_human, equal_nan=True, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(code_tables())
def test_nominal_relabelling_invariance(tab) -> None:
    codes, K, J, L, seed = tab
    relabel = np.random.default_rng(seed + 3).permutation(L)
    coded = np.where(codes >= 0, relabel[np.maximum(codes, 0)], -1).astype(np.int32)
    for score in ("agreement", "kappa", "ac1", "alpha"):
        _same(_run(codes, K, J, L, score, "nominal"), _run(coded, K, J, L, score, "nominal"))


@settings(max_examples=25, deadline=None)
@given(code_tables())
def test_judge_copying_the_pool_majority_and_perfect_agreement(tab) -> None:
    codes, K, J, L, seed = tab
    # every rater gives the same label per item -> every score is 1 where defined, d = 0
    col = codes[:, :1].copy()
    col[col < 0] = 0
    same = np.repeat(col, K + J, axis=1).astype(np.int32)
    r = _run(same, K, J, L, "agreement", "nominal")
    assert np.allclose(r.s_judge, 1.0) and np.allclose(r.d, 0.0)
    rk = _run(same, K, J, L, "kappa", "nominal")
    ok = ~np.isnan(rk.s_judge)
    assert np.allclose(rk.s_judge[ok], 1.0)


def test_string_labels_equal_integer_labels() -> None:
    rng = np.random.default_rng(0)
    n = 40
    lab = rng.integers(0, 3, (n, 4))
    names = np.array(["bad", "fair", "good"])
    rows_i, rows_r = np.repeat(np.arange(n), 4), np.tile(["a", "b", "c", "J"], n)
    t_int = AnnotationTable.from_arrays(rows_i, rows_r, lab.ravel(), judges=["J"])
    t_str = AnnotationTable.from_arrays(rows_i, rows_r, names[lab.ravel()], judges=["J"])
    for score in ("agreement", "kappa", "ac1", "alpha"):
        a = leave_one_out(t_int, "J", score=score, n_resamples=0)
        b = leave_one_out(t_str, "J", score=score, n_resamples=0)
        assert np.allclose(a.d, b.d)
