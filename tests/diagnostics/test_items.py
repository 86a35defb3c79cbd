"""Per-item diagnostics: direct recomputation over pairs, clusters, adjudication files, bad input."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from voirdire.agreement import krippendorff_alpha
from voirdire.data import AnnotationTable
from voirdire.design import write_assignments
from voirdire.diagnostics import ItemDiagnosticsResult, item_diagnostics
from voirdire.exceptions import InvalidParameterError


def _table(rng, n=50, K=5, q=4, miss=0.4, scale="nominal"):
    z = rng.integers(0, q, n)
    lab = np.where(rng.random((n, K)) < 0.6, z[:, None], rng.integers(0, q, (n, K))) + 1
    ii, kk = np.nonzero(rng.random((n, K)) >= miss)
    kw = {"scale": scale, "categories": list(range(1, q + 1))} if scale != "nominal" else {}
    return AnnotationTable.from_arrays([f"i{i:03d}" for i in ii], [f"r{k}" for k in kk], lab[ii, kk], **kw)


def _direct(t: AnnotationTable, level: str):
    """Pair-by-pair recomputation with explicit loops."""
    df = t.to_frame()
    vals = sorted(df["label"].unique())
    raters = sorted(df["rater"].unique())
    dist = {r: df[df.rater == r]["label"].value_counts(normalize=True).to_dict() for r in raters}
    pairable = df[df.groupby("item")["label"].transform("size") >= 2]
    cnt = pairable["label"].value_counts().to_dict()

    def delta(a, b):
        if level == "nominal":
            return float(a != b)
        if level == "interval":
            return float(a - b) ** 2
        lo, hi = min(a, b), max(a, b)  # ordinal: Krippendorff's rank metric on the pooled counts
        s = sum(cnt.get(g, 0) for g in vals if lo <= g <= hi)
        return (s - (cnt.get(a, 0) + cnt.get(b, 0)) / 2) ** 2

    N = sum(cnt.values())
    de = sum(cnt[a] * cnt[b] * delta(a, b) for a in cnt for b in cnt) / (N * (N - 1))
    out = {}
    for item, g in df.groupby("item"):
        labs = list(zip(g["rater"], g["label"]))
        if len(labs) < 2:
            continue
        o = e = 0.0
        for (ra, ya), (rb, yb) in itertools.permutations(labs, 2):
            o += delta(ya, yb)
            e += sum(pa * pb * delta(a, b) for a, pa in dist[ra].items() for b, pb in dist[rb].items())
        m = len(labs) * (len(labs) - 1)
        out[str(item)] = (o / m / de, e / m / de)
    return out, de


@pytest.mark.parametrize("level", ["nominal", "interval", "ordinal"])
def test_equals_direct_recomputation(level):
    t = _table(np.random.default_rng(1), scale=level)
    r = item_diagnostics(t)
    ref, de = _direct(t, level)
    assert r.level == level and r.chance_disagreement == pytest.approx(de, rel=1e-12)
    for i, it in enumerate(r.items):
        if str(it) in ref:
            o, e = ref[str(it)]
            assert r.observed[i] == pytest.approx(o, abs=1e-12) and r.expected[i] == pytest.approx(e, abs=1e-12)
        else:
            assert np.isnan(r.observed[i]) and r.rank[i] == -1
    # the pair-weighted mean of observed disagreement is 1 - alpha (Krippendorff's D_o / D_e)
    if level == "nominal":
        w = np.where(r.n_labels >= 2, r.n_labels * (r.n_labels - 1) / np.maximum(r.n_labels - 1, 1), 0.0)
        do = np.nansum(r.observed * w) / w.sum()
        assert 1 - do == pytest.approx(krippendorff_alpha(t, n_resamples=0).estimate, abs=1e-12)


def test_ranking_puts_planted_ambiguous_items_first():
    rng = np.random.default_rng(3)
    n, K, q = 200, 6, 4
    z = rng.integers(0, q, n)
    lab = np.where(rng.random((n, K)) < 0.9, z[:, None], rng.integers(0, q, (n, K)))
    amb = np.arange(10)
    lab[amb] = rng.integers(0, q, (amb.size, K))  # ten items on which the raters split at random
    ii, kk = np.repeat(np.arange(n), K), np.tile(np.arange(K), n)
    t = AnnotationTable.from_arrays(ii, kk.astype(str), lab[ii, kk])
    r = item_diagnostics(t)
    top = set(r.items[r.top(10)].astype(int).tolist())
    assert len(top & set(amb.tolist())) >= 8
    fr = r.to_frame()
    assert fr["rank"].tolist()[:3] == [0, 1, 2]


def test_clusters_are_ranked_whole(tmp_path):
    t = _table(np.random.default_rng(4), n=60)
    t = dataclasses.replace(t, clusters=np.arange(t.n_items) // 3)
    r = item_diagnostics(t)
    assert r.unit == "cluster" and r.cluster_ids is not None
    first = r.top(1)
    assert first.size == 3 and len(set(t.clusters[first].tolist())) == 1
    a = r.assignments(2, adjudicator="=lead")
    assert a.n_per_rater == (6,) and a.design == "adjudication"
    out, man = write_assignments(a, tmp_path / "adjudicate.csv")
    text = out.read_text()
    assert text.splitlines()[0] == "rater,item,stratum" and "'=lead" in text  # formula escaped
    assert json.loads(man.read_text())["design"] == "adjudication"


def test_bad_input_reported_without_traceback():
    t = AnnotationTable.from_arrays([1, 2, 3], ["a", "b", "a"], ["x", "y", "x"])  # no item with two labels
    r = item_diagnostics(t)
    assert isinstance(r, ItemDiagnosticsResult)
    assert r.n_ranked == 0 and np.isnan(r.observed).all() and r.top(5).size == 0
    same = AnnotationTable.from_arrays([1, 1, 2, 2], ["a", "b"] * 2, ["x"] * 4)  # no variation at all
    r2 = item_diagnostics(same)
    assert r2.n_ranked == 0 and r2.chance_disagreement == 0
    with pytest.raises(InvalidParameterError, match="at least two raters"):
        item_diagnostics(t, raters=["a"])
    with pytest.raises(InvalidParameterError, match="AnnotationTable"):
        item_diagnostics([1, 2])  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'k' parameter"):
        r.top(0)
