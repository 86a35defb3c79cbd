"""``read_annotation_groups`` / ``split_groups``: one read, one table per ``--by`` group, each the table
``--where`` on that group reads; the pooled table; ``rater:criterion`` wide names."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from voirdire.data import read_annotation_groups, read_annotations
from voirdire.datasets import hanna_path
from voirdire.exceptions import SchemaError

HANNA = dict(label="score", role="role", scale="interval", abstain=[-1], cluster="story")


def _same(a, b):
    for f in ("items", "raters", "roles", "indptr", "rater_idx", "codes", "clusters"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert np.array_equal(a.values, b.values, equal_nan=True)
    assert a.scale == b.scale
    assert a.summary() == b.summary()


def test_each_group_is_the_where_table():
    g = read_annotation_groups(hanna_path(), by=["criterion"], where=["criterion=Coherence", "criterion=Surprise"],
                               **HANNA)
    assert g.names == ("Coherence", "Surprise")
    for name, t in zip(g.names, g.tables):
        _same(t, read_annotations(hanna_path(), where=[f"criterion={name}"], **HANNA))
    # HANNA's items are <story>__<criterion>: disjoint across criteria, so the pool is the file as it is
    assert not g.shared_items
    _same(g.pooled, read_annotations(hanna_path(), where=["criterion=Coherence", "criterion=Surprise"], **HANNA))
    assert np.bincount(g.item_group).tolist() == [1056, 1056]


def _rubric(tmp_path):
    # 3 items x 2 criteria, shared item ids; 2 humans and a judge
    rows = []
    for it in ("a", "b", "c"):
        for crit, base in (("clarity", 1), ("safety", 0)):
            for r in ("h1", "h2", "j"):
                rows.append({"item": it, "criterion": crit, "rater": r, "label": str(base if r != "j" else 1),
                             "role": "judge" if r == "j" else "human"})
    p = tmp_path / "rubric.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def test_shared_items_are_pooled_per_item_and_group_clustered_by_item(tmp_path):
    g = read_annotation_groups(_rubric(tmp_path), by="criterion", role="role")
    assert g.shared_items and g.names == ("clarity", "safety")
    assert [t.n_items for t in g.tables] == [3, 3]
    # 6 pooled items "a | clarity", ...; item a's two criteria share a cluster (resampled together)
    assert g.pooled.n_items == 6
    assert sorted(g.pooled.items)[:2] == ["a | clarity", "a | safety"]
    k = {str(it): c for it, c in zip(g.pooled.items, g.pooled.clusters)}
    assert k["a | clarity"] == k["a | safety"] != k["b | clarity"]
    assert [g.names[i] for i in g.item_group[:1]] == [str(g.pooled.items[0]).split(" | ")[1]]


def test_two_by_columns_and_a_missing_one(tmp_path):
    p = _rubric(tmp_path)
    df = pd.read_csv(p)
    df["lang"] = np.where(df["item"] == "c", "fr", "en")
    df.to_csv(p, index=False)
    g = read_annotation_groups(p, by=["criterion", "lang"], role="role")
    assert g.names == ("clarity/en", "safety/en", "clarity/fr", "safety/fr")
    assert [t.n_items for t in g.tables] == [2, 2, 1, 1]
    with pytest.raises(SchemaError, match="--by names column 'domain'"):
        read_annotation_groups(p, by="domain", role="role")


def test_wide_rater_criterion_columns(tmp_path):
    # one row per item; columns RATER:CRITERION
    p = tmp_path / "wide.csv"
    pd.DataFrame({"item": ["x", "y", "z"], "h1:fluency": [1, 2, 3], "h2:fluency": [1, 2, 2],
                  "gpt:fluency": [1, 3, 3], "h1:facts": [0, 1, 1], "h2:facts": [0, 1, 0],
                  "gpt:facts": [1, 1, 1]}).to_csv(p, index=False)
    g = read_annotation_groups(p, by="criterion", wide=True, judges=["gpt"])
    assert g.names == ("fluency", "facts")
    t = g.tables[0]
    assert sorted(map(str, t.raters)) == ["gpt", "h1", "h2"] and t.judges == ("gpt",)
    assert t.dense_values()[:, list(t.raters).index("gpt")].tolist() == [1.0, 3.0, 3.0]
    assert dataclasses.is_dataclass(g)


def test_label_studio_several_controls_give_one_group_per_control():
    from voirdire.data._groups import read_annotation_groups as rg

    fix = __import__("pathlib").Path(__file__).parent / "fixtures" / "formats" / "label_studio_export.json"
    g = rg(fix, by="control")
    assert g.names == ("quality", "sentiment")
    for name, t in zip(g.names, g.tables):
        one = read_annotations(fix, control=name)
        assert sorted(map(str, t.items)) == sorted(map(str, one.items)) and t.n_labels == one.n_labels
        assert t.judges == one.judges == ("gpt-4o-judge",)
    assert g.shared_items and g.pooled.n_items == g.tables[0].n_items + g.tables[1].n_items


def test_a_group_with_one_rater_gets_its_reason_and_the_others_are_read(tmp_path):
    # criterion 'tone' is rated by h1 alone: its --where read fails ('only 1 rater'); the --by read keeps
    # the other groups (equal to their --where tables) and gives 'tone' that reason, not an abort
    p = _rubric(tmp_path)
    df = pd.read_csv(p)
    df = pd.concat([df, pd.DataFrame({"item": ["a", "b"], "criterion": "tone", "rater": "h1", "label": "1",
                                      "role": "human"})], ignore_index=True)
    df.to_csv(p, index=False)
    with pytest.raises(SchemaError, match="only 1 rater"):
        read_annotations(p, role="role", where=["criterion=tone"])
    g = read_annotation_groups(p, by="criterion", role="role")
    assert g.names == ("clarity", "safety", "tone")
    assert g.tables[2] is None and "only 1 rater" in g.error(2) and g.error(0) is None
    assert g.n_items == (3, 3, 2)
    for name, t in zip(g.names[:2], g.tables[:2]):
        _same(t, read_annotations(p, role="role", where=[f"criterion={name}"]))
    assert g.pooled.n_items == 8


def test_a_judge_absent_from_a_group_is_not_an_error_of_the_read(tmp_path):
    p = _rubric(tmp_path)
    df = pd.read_csv(p)
    df = df[~((df["rater"] == "j") & (df["criterion"] == "safety"))].drop(columns="role")
    df.to_csv(p, index=False)
    g = read_annotation_groups(p, by="criterion", judges=["j"])
    assert g.tables[0].judges == ("j",) and g.tables[1].judges == () and not g.errors
    # an error of the file (a judge no group has) is still the file's
    with pytest.raises(SchemaError, match="not raters in this file"):
        read_annotation_groups(p, by="criterion", judges=["nobody"])


# ------------------------------------------------------------------------------------------------ command line
def _cli(*args):
    import json

    from typer.testing import CliRunner

    from voirdire.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _sans_source(d):
    if isinstance(d, dict):
        return {k: _sans_source(v) for k, v in d.items() if k != "source"}
    return [_sans_source(v) for v in d] if isinstance(d, list) else d


def test_cli_wide_rater_criterion_file_equals_the_long_file_by_criterion(tmp_path):
    # the same labels written wide (RATER:CRITERION columns) and long (a criterion column): validate --by
    # criterion gives the same per-group results; the long file's --where run gives them too
    rng = np.random.default_rng(3)
    n = 40
    wide = {"item": [f"i{k}" for k in range(n)]}
    for c in ("fluency", "facts"):
        truth = rng.integers(1, 6, n)
        for r in ("h1", "h2", "h3", "gpt"):
            wide[f"{r}:{c}"] = np.clip(truth + rng.integers(-1, 2, n) * (rng.random(n) < 0.3), 1, 5)
    pw, pl = tmp_path / "wide.csv", tmp_path / "long.csv"
    pd.DataFrame(wide).to_csv(pw, index=False)
    long = pd.DataFrame(wide).melt(id_vars="item", var_name="rc", value_name="label")
    long[["rater", "criterion"]] = long["rc"].str.split(":", expand=True)
    long.drop(columns="rc").to_csv(pl, index=False)
    opts = ["--by", "criterion", "--judge", "gpt", "--n-resamples", "40", "--no-check-raters", "-f", "json"]
    dw = _cli("validate", pw, "--wide", *opts)
    dl = _cli("validate", pl, *opts)
    assert [g["group"] for g in dw["groups"]] == ["fluency", "facts"]
    for gw, gl in zip(dw["groups"], dl["groups"]):
        assert _sans_source(gw["result"]) == _sans_source(gl["result"]), gw["group"]
    assert dw["records"] == dl["records"]
    alone = _cli("validate", pl, "--where", "criterion=facts", "--judge", "gpt", "--n-resamples", "40",
                 "--no-check-raters", "-f", "json")
    assert alone["judges"] == dw["groups"][1]["result"]["judges"]
    # --where on the wide file's CRITERION (the part after ':') reads the same group, told wide or guessed
    for wide in (["--wide"], []):
        w = _cli("validate", pw, *wide, "--where", "criterion=facts", "--judge", "gpt", "--n-resamples", "40",
                 "--no-check-raters", "-f", "json")
        assert w["judges"] == dw["groups"][1]["result"]["judges"]
    g = read_annotation_groups(pw, by="criterion", wide=True, judges=["gpt"])
    _same(g.tables[1], read_annotations(pw, wide=True, judges=["gpt"], where=["criterion=facts"]))
    with pytest.raises(SchemaError, match="matches no row"):
        read_annotations(pw, wide=True, judges=["gpt"], where=["criterion=tone"])
    with pytest.raises(SchemaError, match="--where names column 'criterion'"):
        read_annotations(pw, format="long", judges=["gpt"], where=["criterion=facts"])  # told long: not melted


def test_cli_label_studio_several_controls_one_group_per_control():
    fix = __import__("pathlib").Path(__file__).parent / "fixtures" / "formats" / "label_studio_export.json"
    d = _cli("agree", fix, "--by", "control", "--n-resamples", "20", "-f", "json")
    assert [g["group"] for g in d["groups"]] == ["quality", "sentiment"]
    for g in d["groups"]:
        one = _cli("agree", fix, "--control", g["group"], "--n-resamples", "20", "-f", "json")
        # the same numbers (the notes differ: the --by read names its groups, the plain read the file)
        same = set(one) & set(g["result"]) - {"table", "notes", "source"}
        assert "groups" in same and {k: g["result"][k] for k in same} == {k: one[k] for k in same}, g["group"]
