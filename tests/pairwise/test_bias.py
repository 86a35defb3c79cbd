"""Judge bias diagnostics: closed-form cases, bad input, and planted-bias coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voirdire.data import PairwiseTable
from voirdire.exceptions import InvalidParameterError, SchemaError
from voirdire.pairwise import bias_report, model_family, pair_covariates


def _softmax3(a, t):
    u = np.stack([a, t, -a], -1)
    e = np.exp(u - u.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _draw(p, rng):
    c = p.cumsum(-1)
    return (rng.random(p.shape[:-1])[..., None] > c).sum(-1).clip(0, 2)


def _table(pair, rater, verdict, order, names, roles):
    return PairwiseTable.from_codes(pair_idx=pair, rater_idx=rater, verdicts=verdict, orders=order,
                                    pairs=[f"p{k}" for k in range(int(max(pair)) + 1)], raters=names, roles=roles)


def _position_stream(n, b, rng, n_h=3):
    """Pairs with quality theta; humans see the latent verdict with 20% noise; a judge in both orders."""
    th = rng.normal(0, 1, n)
    z = _draw(_softmax3(th, np.zeros(n)), rng)
    P, R, V, O = [], [], [], []
    for h in range(n_h):
        y = np.where(rng.random(n) < 0.8, z, rng.integers(0, 3, n))
        P.append(np.arange(n)); R.append(np.full(n, h)); V.append(y); O.append(np.full(n, -1))
    for o, s in ((0, 1.0), (1, -1.0)):
        y = _draw(_softmax3(th + s * b, np.full(n, -1.0)), rng)
        P.append(np.arange(n)); R.append(np.full(n, n_h)); V.append(y); O.append(np.full(n, o))
    return (np.concatenate(P), np.concatenate(R), np.concatenate(V), np.concatenate(O),
            [f"h{k}" for k in range(n_h)] + ["judge"], ["human"] * n_h + ["judge"])


def _truth_position(b):
    rng = np.random.default_rng(12345)
    P, R, V, O, names, roles = _position_stream(400_000, b, rng)
    t = _table(P, R, V, O, names, roles)
    e = bias_report(t).effects.set_index("effect")["estimate"]
    return e["position (swap)"], e["position (humans tie)"]


def test_position_closed_form_and_flip_rate():
    # p1: first-shown wins in both orders; p2: A both times (no flip); p3: second-shown both times
    t = PairwiseTable.from_arrays(
        pair=["p1", "p1", "p2", "p2", "p3", "p3", "p1", "p2", "p3"],
        rater=["g"] * 6 + ["h"] * 3, verdict=["A", "B", "A", "A", "B", "A", "T", "T", "A"],
        order=["AB", "BA", "AB", "BA", "AB", "BA", None, None, None], judges=["g"])
    e = bias_report(t).effects.set_index("effect")
    sw = e.loc["position (swap)"]
    # per-pair scores 1, 0, -1: mean 0, sd 1
    assert sw["estimate"] == pytest.approx(0.0) and sw["se"] == pytest.approx(1 / np.sqrt(3))
    assert "flip rate 0.667" in sw["detail"] and sw["n_pairs"] == 3
    tie = e.loc["position (humans tie)"]
    assert tie["n_pairs"] == 2 and tie["estimate"] == pytest.approx(0.5)    # p1: +1, p2: 0
    assert "P(first wins | humans tie) 0.750" in tie["detail"]     # 3 of the 4 labels
    assert np.isnan(e.loc["length", "estimate"]) and "len_a" in e.loc["length", "detail"]


def test_self_preference_closed_form():
    t = PairwiseTable.from_arrays(
        pair=["p1", "p1", "p2", "p2", "p3", "p3"], rater=["gpt-4", "h", "gpt-4", "h", "gpt-4", "h"],
        verdict=["A", "B", "B", "B", "T", "A"], order=["AB", None, "AB", None, "AB", None], judges=["gpt-4"])
    cov = pd.DataFrame({"model_a": ["gpt-3.5-turbo", "llama-2", "gpt-4"], "model_b": ["vicuna", "gpt-4", "claude"]},
                       index=["p1", "p2", "p3"])
    e = bias_report(t, covariates=cov).effects.set_index("effect").loc["self-preference"]
    # own = A, B, A: judge 1, 1, 0.5; humans 0, 1, 1 -> differences 1, 0, -0.5
    assert e["estimate"] == pytest.approx(0.5 / 3) and e["n_pairs"] == 3
    assert e["se"] == pytest.approx(np.std([1, 0, -0.5], ddof=1) / np.sqrt(3))


def test_model_family_and_bh():
    assert model_family("GPT-4") == "openai" and model_family("Claude v1") == "anthropic"
    assert model_family("palm-2") == "google" and model_family("koala-13b") is None
    from voirdire.pairwise._bias import _bh_qvalues

    p = np.array([0.01, 0.04, 0.03, np.nan, 0.5])
    np.testing.assert_allclose(_bh_qvalues(p), [0.04, 0.16 / 3, 0.16 / 3, np.nan, 0.5])


def test_bad_covariates_name_the_row():
    f = pd.DataFrame({"pair": ["p1", "p1", "p2"], "len_a": [3, 3, -1], "len_b": [1, 1, 2]})
    with pytest.raises(SchemaError, match=r"row 3, column 'len_a'.*not a non-negative number"):
        pair_covariates(f)
    f = pd.DataFrame({"pair": ["p1", "p2"], "len_a": ["12", "long"], "len_b": [1, 2]})
    with pytest.raises(SchemaError, match=r"row 2, column 'len_a'"):
        pair_covariates(f)
    f = pd.DataFrame({"pair": ["p1", "p1"], "len_a": [3, 4], "len_b": [1, 1]})
    with pytest.raises(SchemaError, match="more than one value"):
        pair_covariates(f)
    with pytest.raises(InvalidParameterError, match="PairwiseTable"):
        bias_report("votes.csv")


@pytest.mark.statistical
def test_position_effects_coverage():
    b = 0.4
    truth_sw, truth_tie = _truth_position(b)
    assert truth_sw > 0.1
    hits = np.zeros(2)
    for s in range(200):
        rng = np.random.default_rng(s)
        t = _table(*_position_stream(300, b, rng))
        e = bias_report(t).effects.set_index("effect")
        for k, (name, tr) in enumerate((("position (swap)", truth_sw), ("position (humans tie)", truth_tie))):
            hits[k] += e.loc[name, "low"] <= tr <= e.loc[name, "high"]
    cov = hits / 200
    assert ((cov >= 0.91) & (cov <= 0.985)).all(), cov


@pytest.mark.statistical
def test_length_effect_coverage_and_null_size():
    g_true = 0.5
    hits, false_flags = 0, 0
    for s in range(200):
        rng = np.random.default_rng(1000 + s)
        n = 300
        z = rng.integers(0, 3, n)
        hum = [np.where(rng.random(n) < 0.75, z, rng.integers(0, 3, n)) for _ in range(3)]
        h = np.mean([(y == 0).astype(float) - (y == 2) for y in hum], 0)
        x = rng.normal(0, 1, n)
        for g, store in ((g_true, "alt"), (0.0, "null")):
            eta = -0.2 + 1.5 * h + g * x
            y = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), 0, 2)
            y = np.where(rng.random(n) < 0.1, 1, y)                          # some ties (ignored)
            P = np.concatenate([np.arange(n)] * 4)
            R = np.concatenate([np.full(n, k) for k in range(4)])
            V = np.concatenate(hum + [y])
            O = np.concatenate([np.full(3 * n, -1), np.zeros(n, int)])
            t = _table(P, R, V, O, ["h0", "h1", "h2", "j"], ["human"] * 3 + ["judge"])
            cov = pd.DataFrame({"len_a": 100 * 2.0 ** x, "len_b": 100.0}, index=[f"p{k}" for k in range(n)])
            e = bias_report(t, covariates=cov).effects.set_index("effect").loc["length"]
            if store == "alt":
                # the estimand is per doubling of (len_a + 1) / (len_b + 1): ~ g for lengths near 100
                hits += e["low"] <= g_true * np.log2(2) <= e["high"]
            else:
                false_flags += bool(e["p_value"] < 0.05)
    assert 0.91 <= hits / 200 <= 0.985, hits
    assert false_flags / 200 <= 0.09, false_flags


@pytest.mark.statistical
def test_self_preference_coverage():
    # humans: own-family response wins 0.4, tie 0.2 (rate 0.5); judge: wins 0.5, tie 0.1 (rate 0.55)
    truth = 0.55 - 0.5
    hits = 0
    for s in range(200):
        rng = np.random.default_rng(5000 + s)
        n = 400
        own_a = rng.random(n) < 0.5
        ma = np.where(own_a, "gpt-4", "vicuna-13b")
        mb = np.where(own_a, "koala-13b", "gpt-3.5-turbo")
        own = np.where(own_a, 0, 2)

        def verdicts(pw, pt):
            u = rng.random(n)
            return np.where(u < pw, own, np.where(u < pw + pt, 1, 2 - own))
        hum = [verdicts(0.4, 0.2) for _ in range(2)]
        P = np.concatenate([np.arange(n)] * 3)
        R = np.concatenate([np.full(n, k) for k in range(3)])
        V = np.concatenate(hum + [verdicts(0.5, 0.1)])
        O = np.concatenate([np.full(2 * n, -1), np.zeros(n, int)])
        t = _table(P, R, V, O, ["h0", "h1", "gpt-4o"], ["human", "human", "judge"])
        cov = pd.DataFrame({"model_a": ma, "model_b": mb}, index=[f"p{k}" for k in range(n)])
        e = bias_report(t, covariates=cov).effects.set_index("effect").loc["self-preference"]
        hits += e["low"] <= truth <= e["high"]
    assert 0.91 <= hits / 200 <= 0.985, hits


def _swap_only_table():
    """36 pairs, one judge in both orders: 5 pairs won by the first-shown response in both orders, 31 with
    the same verdict in both (swap score 0); humans tie on the last 4 (a tested 'humans tie' effect, p = 1);
    no len_*/model_* columns, so length and self-preference are untested (p = nan)."""
    pair, rater, verdict, order = [], [], [], []
    for k in range(36):
        p = f"p{k}"
        pair += [p, p]
        rater += ["g", "g"]
        verdict += ["A", "B"] if k < 5 else ["A", "A"]
        order += ["AB", "BA"]
        for h in ("h1", "h2"):
            pair.append(p)
            rater.append(h)
            verdict.append("T" if k >= 32 else ("A" if k % 2 else "B"))
            order.append(None)
    return PairwiseTable.from_arrays(pair=pair, rater=rater, verdict=verdict, order=order, judges=["g"])


def test_flags_are_the_bh_q_values_over_tested_effects_only():
    # issue 29 item 2: swap scores 1 (x5) and 0 (x31): mean 5/36 = 0.139, sd sqrt((5 - 36 * 0.139^2) / 35)
    # = 0.351, se 0.0585, z 2.37, p 0.0175; the two tested effects give q = 0.0175 * 2 / 1 = 0.035 <= 0.05.
    # The old flag counted the two untested effects in m (threshold 0.05 / 4 = 0.0125) and said 'no'.
    e = bias_report(_swap_only_table()).effects.set_index("effect")
    sw = e.loc["position (swap)"]
    assert sw["estimate"] == pytest.approx(5 / 36)
    assert sw["p_value"] == pytest.approx(0.0175, abs=5e-4) and sw["q_value"] == pytest.approx(0.035, abs=1e-3)
    assert bool(sw["flagged"]) is True
    assert np.isnan(e.loc["length", "p_value"]) and not e.loc["length", "flagged"]
    assert not e.loc["self-preference", "flagged"]
    # one computation: flagged <=> q <= fdr, at any fdr
    for fdr in (0.01, 0.03, 0.035, 0.04, 0.05, 0.2):
        eff = bias_report(_swap_only_table(), fdr=fdr).effects
        q = eff["q_value"].to_numpy(dtype=float)
        assert list(eff["flagged"]) == list(np.isfinite(q) & (q <= fdr))
