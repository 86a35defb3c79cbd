"""read_pairwise / PairwiseTable: formats, conventions, errors with file/row/column, real data sets."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from voirdire.data import PairwiseTable, pairwise_set_frame, read_pairwise
from voirdire.exceptions import InvalidParameterError, SchemaError

from ..conftest import shared_data

CSV = (
    "pair,rater,verdict,order\n"
    "p1,ann,A,\n"       # row 2
    "p1,bob,tie,\n"     # row 3
    "p1,gpt,A,AB\n"     # row 4
    "p1,gpt,B,BA\n"     # row 5
    "p2,ann,B,\n"       # row 6
    "p2,gpt,T,AB\n"     # row 7
)


def _write(tmp_path, text, name="v.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_hand_checked_csv(tmp_path):
    t = read_pairwise(_write(tmp_path, CSV), judges=["gpt"])
    assert t.n_pairs == 2 and t.humans == ("ann", "bob") and t.judges == ("gpt",)
    # pair-major: p1 (A, T, A@AB, B@BA), p2 (B, T@AB)
    assert t.verdicts.tolist() == [0, 1, 0, 2, 2, 1]
    assert t.orders.tolist() == [-1, -1, 0, 1, -1, 0]
    assert t.indptr.tolist() == [0, 4, 6]
    s = t.summary()
    assert s.n_swapped_judge_pairs == 1 and s.n_judge_labels == 3 and s.n_human_labels == 3
    assert s.verdict_counts == {"A": 2, "T": 2, "B": 2}
    assert s.to_dict()["n_pairs"] == 2


def test_formats_agree(tmp_path):
    ref = read_pairwise(_write(tmp_path, CSV), judges=["gpt"])
    df = pd.read_csv(tmp_path / "v.csv", dtype=str, keep_default_na=False)
    df.to_csv(tmp_path / "v.tsv", sep="\t", index=False)
    df.to_parquet(tmp_path / "v.parquet")
    with open(tmp_path / "v.jsonl", "w") as fh:
        for r in df.to_dict("records"):
            fh.write(json.dumps(r) + "\n")
    for ext in ("tsv", "parquet", "jsonl"):
        t = read_pairwise(tmp_path / f"v.{ext}", judges=["gpt"])
        assert t.fingerprint() == ref.fingerprint(), ext


def test_presented_coordinates_are_mapped_back(tmp_path):
    # the judge says "A" (= the response shown first) in both orders: in original coordinates
    # that is A in order AB and B in order BA (a pure position bias)
    text = "pair,rater,verdict,order\np1,gpt,A,AB\np1,gpt,A,BA\n"
    t = read_pairwise(_write(tmp_path, text), judges=["gpt"], presented=True)
    assert t.verdicts.tolist() == [0, 2]
    t0 = read_pairwise(_write(tmp_path, text), judges=["gpt"])
    assert t0.verdicts.tolist() == [0, 0]


def test_verdict_map_and_role_column(tmp_path):
    text = "id,who,kind,win,ord\nx,h1,human,model_1,\nx,j,judge,model_2,AB\nx,j,judge,TIE,BA\n"
    t = read_pairwise(_write(tmp_path, text), pair="id", rater="who", verdict="win", order="ord", role="kind",
                      verdict_map={"model_1": "A", "model_2": "B"})
    assert t.judges == ("j",) and t.verdicts.tolist() == [0, 2, 1]


def test_from_arrays_and_frame_roundtrip():
    t = PairwiseTable.from_arrays(pair=[1, 1, 2], rater=["a", "g", "g"], verdict=["A", "B", "T"],
                                  order=[None, "AB", "BA"], judges=["g"])
    f = t.to_frame()
    # a missing order is None under pandas 2 and NaN under pandas 3's string dtype: missing either way
    assert f["verdict"].tolist() == ["A", "B", "T"] and f["order"].isna().tolist() == [True, False, False]
    assert f["order"].tolist()[1:] == ["AB", "BA"]
    t2 = PairwiseTable.from_frame(f, role="role")
    assert t2.fingerprint() == t.fingerprint()


def test_select_and_batches():
    t = PairwiseTable.from_arrays(pair=list("aabbcc"), rater=list("xyxyxy"), verdict=list("ATBBTA"))
    sub = t.select(pairs=[0, 2])
    assert sub.pairs.tolist() == ["a", "c"] and sub.verdicts.tolist() == [0, 1, 1, 0]
    only_x = t.select(raters=["x"])
    assert only_x.raters.tolist() == ["x"] and only_x.n_labels == 3
    sizes = [b.n_pairs for b in t.iter_batches(2)]
    assert sizes == [2, 1]
    with pytest.raises(InvalidParameterError, match="Unknown rater 'z'"):
        t.select(raters=["z"])


def test_frozen_arrays():
    t = PairwiseTable.from_arrays(pair=[1], rater=["a"], verdict=["A"])
    with pytest.raises(ValueError):
        t.verdicts[0] = 2


# ----------------------------------------------------------------------------- errors
def test_unknown_verdict_names_row_and_column(tmp_path):
    bad = CSV.replace("p2,ann,B,", "p2,ann,maybe,")
    with pytest.raises(SchemaError, match=r"v\.csv, row 6, column 'verdict': unknown verdict 'maybe'"):
        read_pairwise(_write(tmp_path, bad), judges=["gpt"])


def test_judge_without_order(tmp_path):
    bad = CSV.replace("p2,gpt,T,AB", "p2,gpt,T,")
    with pytest.raises(SchemaError, match=r"row 7, column 'order': judge 'gpt' has no presented order"):
        read_pairwise(_write(tmp_path, bad), judges=["gpt"])


def test_unknown_order(tmp_path):
    bad = CSV.replace("p2,gpt,T,AB", "p2,gpt,T,XY")
    with pytest.raises(SchemaError, match=r"row 7, column 'order': unknown order 'XY'"):
        read_pairwise(_write(tmp_path, bad), judges=["gpt"])


def test_pair_with_no_label(tmp_path):
    bad = CSV + "p3,ann,,\n"
    with pytest.raises(SchemaError, match=r"row 8, column 'verdict': pair 'p3' has no label"):
        read_pairwise(_write(tmp_path, bad), judges=["gpt"])
    t = read_pairwise(_write(tmp_path, bad), judges=["gpt"], missing="drop")
    assert t.n_pairs == 2 and t.summary().dropped == {"empty verdict": 1, "pairs with no label": 1}


def test_empty_verdict_on_labelled_pair(tmp_path):
    bad = CSV + "p2,bob,,\n"
    with pytest.raises(SchemaError, match=r"row 8, column 'verdict': empty verdict"):
        read_pairwise(_write(tmp_path, bad), judges=["gpt"])


def test_empty_file_and_missing_column(tmp_path):
    with pytest.raises(SchemaError, match="empty"):
        read_pairwise(_write(tmp_path, ""))
    with pytest.raises(SchemaError, match="empty|no rows"):
        read_pairwise(_write(tmp_path, "pair,rater,verdict\n"))
    with pytest.raises(SchemaError, match=r"column 'verdict': missing column 'verdict'"):
        read_pairwise(_write(tmp_path, "pair,rater,label\np,a,A\n"))
    # no order column: judges are taken as asked in order AB, with a warning (issue 16)
    from voirdire.exceptions import VoirdireWarning

    with pytest.warns(VoirdireWarning, match="taken as shown in order AB"):
        t = read_pairwise(_write(tmp_path, "pair,rater,verdict\np,a,A\np,h,B\n"), judges=["a"])
    assert t.orders.tolist() == [0, -1] and t.judges == ("a",)


def test_duplicate_and_unknown_judge(tmp_path):
    dup = CSV + "p1,gpt,T,AB\n"
    with pytest.raises(SchemaError, match=r"row 8, column 'rater': rater 'gpt' labels pair 'p1' twice in order AB"):
        read_pairwise(_write(tmp_path, dup), judges=["gpt"])
    with pytest.raises(SchemaError, match=r"judge\(s\) \['claude'\] do not appear"):
        read_pairwise(_write(tmp_path, CSV), judges=["claude"])


def test_bad_verdict_map():
    with pytest.raises(InvalidParameterError, match="verdict_map must map to 'A', 'T' or 'B'"):
        PairwiseTable.from_arrays(pair=[1], rater=["a"], verdict=["x"], verdict_map={"x": "win"})


def test_from_codes_checks():
    with pytest.raises(InvalidParameterError, match="every judge label needs an order"):
        PairwiseTable.from_codes(pair_idx=[0], rater_idx=[0], verdicts=[0], orders=[-1], pairs=["p"],
                                 raters=["g"], roles=["judge"])


# ------------------------------------------------------------------------ real data sets
EXPECTED = {  # pairs, humans, judges, pairs with a judge in both orders
    "summeval_h2h": (4400, 3, 1, 4400),
    "summeval_h2h_8": (4400, 8, 1, 4400),
    "pandalm": (999, 3, 2, 0),
    "llmfao": (2139, 124, 2, 0),
    "llmbar": (885, 1, 6, 885),
    "autoj": (1392, 1, 1, 1392),
    "chatbot_arena": (26919, 1, 3, 0),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_sets_read_through_csv(name, tmp_path):
    folder = {"summeval_h2h_8": "summeval_h2h", "chatbot_arena": "chatbot_arena_ppr"}.get(name, name)
    root = shared_data("pairwise", folder).parent
    if name.endswith("_8"):
        shared_data("grading", "summeval")
    df = pairwise_set_frame(name, root)
    path = tmp_path / f"{name}.csv"
    df.to_csv(path, index=False)
    t = read_pairwise(path, role="role", missing="drop")
    s = t.summary()
    assert (s.n_pairs, s.n_humans, s.n_judges, s.n_swapped_judge_pairs) == EXPECTED[name]
    assert s.n_labels + sum(v for k, v in s.dropped.items() if k == "empty verdict") == len(df)


def test_summeval_8_humans_reproduce_the_expert_preferences():
    # the 3 experts derived from ../grading/summeval scores equal the file's expert_pref columns
    root = shared_data("pairwise", "summeval_h2h").parent
    shared_data("grading", "summeval")
    f8 = pairwise_set_frame("summeval_h2h_8", root)
    f3 = pairwise_set_frame("summeval_h2h", root)
    m = f8[f8["rater"].str.startswith("expert")].merge(f3[f3["role"] == "human"], on=["pair", "rater"])
    assert len(m) == 13200 and (m["verdict_x"] == m["verdict_y"]).all()
    assert sorted(f8.loc[f8["role"] == "human", "rater"].unique()) == [
        "crowd_1", "crowd_2", "crowd_3", "crowd_4", "crowd_5", "expert_1", "expert_2", "expert_3"]


def test_summeval_judge_in_original_coordinates():
    root = shared_data("pairwise", "summeval_h2h").parent
    raw = pd.read_json(root / "summeval_h2h" / "summeval_h2h_gpt35_both_orders.jsonl", lines=True)
    t = PairwiseTable.from_frame(pairwise_set_frame("summeval_h2h", root), role="role")
    judge = t.select(raters=["gpt-3.5-turbo-0301"])
    # the source's winner column is already mapped back: its counts must survive
    want = raw["winner"].map({"model_1": "A", "tie": "T", "model_2": "B"}).value_counts().to_dict()
    got = judge.summary().verdict_counts
    assert got == {k: want.get(k, 0) for k in ("A", "T", "B")}
    # mapped back to the presented frame, the verdicts reproduce the parsed answer positions
    v, o = judge.verdicts.astype(int), judge.orders.astype(int)
    presented = np.where(o == 1, 2 - v, v)
    want_pos = raw["parsed_choice_position"].map({"A": 0, "C": 1, "B": 2}).value_counts().to_dict()
    assert np.bincount(presented, minlength=3).tolist() == [want_pos.get(k, 0) for k in (0, 1, 2)]
    assert np.isin(judge.orders, [0, 1]).all()


# ------------------------------------------------------------------------ properties
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from("ATB"),
                          st.sampled_from(["AB", "BA"])), min_size=1, max_size=30))
def test_roundtrip_and_presented_mapping(rows):
    # one label per (pair, rater, order): dedupe, rater 3 is the judge
    seen, keep = set(), []
    for p, r, v, o in rows:
        o = o if r == 3 else None
        if (p, r, o) not in seen:
            seen.add((p, r, o))
            keep.append((p, f"r{r}", v, o))
    pair, rater, verdict, order = zip(*keep)
    judges = ["r3"] if "r3" in rater else []
    t = PairwiseTable.from_arrays(pair=pair, rater=rater, verdict=verdict, order=order, judges=judges)
    back = PairwiseTable.from_frame(t.to_frame(), role="role")
    cols = ["pair", "rater", "role", "verdict", "order"]

    def canon(tab):
        return tab.to_frame().astype(str).sort_values(cols).reset_index(drop=True)

    pd.testing.assert_frame_equal(canon(back), canon(t))
    assert t.n_labels == len(keep) and t.indptr[-1] == len(keep)
    # presented=True flips exactly the BA labels; applying the flip to the result restores the input
    tp = PairwiseTable.from_arrays(pair=pair, rater=rater, verdict=verdict, order=order, judges=judges,
                                   presented=True)
    flip = tp.orders == 1
    np.testing.assert_array_equal(np.where(flip, 2 - tp.verdicts, tp.verdicts), t.verdicts)


def test_pairwise_sets_model_and_length_columns():
    root = shared_data("pairwise", "llmfao").parent
    f = pairwise_set_frame("llmfao", root)
    raw = pd.read_csv(root / "llmfao" / "crowd-comparisons.csv", dtype=str).drop_duplicates("id").set_index("id")
    h = f[f["role"] == "human"].drop_duplicates("pair").set_index("pair")
    # the systems named by the reader are those the crowd saw left (A) and right (B)
    assert (h["model_a"] == raw.loc[h.index, "left"]).all() and (h["model_b"] == raw.loc[h.index, "right"]).all()
    assert (f["len_a"] >= 0).all() and f["len_a"].dtype.kind == "i"
    p = pairwise_set_frame("pandalm", shared_data("pairwise", "pandalm").parent)
    assert {"model_a", "model_b", "len_a", "len_b"} <= set(p.columns)
    assert p.groupby("pair")["len_a"].nunique().max() == 1


def test_read_pairwise_set_and_unknown_name(tmp_path):
    from voirdire.data import PAIRWISE_SETS, read_pairwise_set

    assert "summeval_h2h" in PAIRWISE_SETS
    with pytest.raises(InvalidParameterError, match="must be one of"):
        pairwise_set_frame("nope", tmp_path)
    with pytest.raises(SchemaError, match="file not found"):
        read_pairwise_set("pandalm", tmp_path)
    t = read_pairwise_set("pandalm", shared_data("pairwise", "pandalm").parent)
    assert t.summary().dropped == {"empty verdict": 25}


def test_read_pairwise_recognises_a_public_set_folder():
    # the set's folder as published is read with its documented reader (here the small PandaLM set)
    folder = shared_data("pairwise", "pandalm")
    s = read_pairwise(folder).summary()
    assert (s.n_pairs, s.n_humans, s.n_judges, s.n_swapped_judge_pairs) == EXPECTED["pandalm"]


def test_systems_from_model_columns(tmp_path):
    # model_a / model_b name the systems behind A and B: one pair per row of `systems`, carried by select
    (tmp_path / "s.csv").write_text("pair,rater,verdict,model_a,model_b\n"
                                    "p1,ann,A,x,y\np1,bob,B,x,\np2,ann,T,y,z\np3,ann,A,,\n")
    t = read_pairwise(tmp_path / "s.csv")
    assert t.systems.tolist() == [["x", "y"], ["y", "z"], ["", ""]]
    assert t.select(pairs=[1, 2]).systems.tolist() == [["y", "z"], ["", ""]]
    assert t.to_frame()[["model_a", "model_b"]].iloc[0].tolist() == ["x", "y"]
    assert read_pairwise(tmp_path / "s.csv").systems is not None
    (tmp_path / "n.csv").write_text("pair,rater,verdict\np1,ann,A\n")
    assert read_pairwise(tmp_path / "n.csv").systems is None


def test_systems_that_disagree_within_a_pair_name_the_row(tmp_path):
    (tmp_path / "s.csv").write_text("pair,rater,verdict,model_a,model_b\np1,ann,A,x,y\np1,bob,B,w,y\n")
    with pytest.raises(SchemaError, match=r"row 3.*'model_a'.*names two systems"):
        read_pairwise(tmp_path / "s.csv")


def test_systems_shape_is_checked():
    t = PairwiseTable.from_arrays(pair=[1], rater=["a"], verdict=["A"], model_a=["x"], model_b=["y"])
    assert t.systems.shape == (1, 2)
    with pytest.raises(InvalidParameterError, match="systems must be"):
        PairwiseTable.from_codes(pair_idx=np.array([0]), rater_idx=np.array([0]), verdicts=np.array([0]),
                                 orders=np.array([-1]), pairs=["p"], raters=["a"], roles=["human"],
                                 systems=np.array([["x", "y"], ["y", "z"]]))
