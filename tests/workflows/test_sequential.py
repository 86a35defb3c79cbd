"""workflows/_sequential.py: the rounds of the labels, and watch --follow's reading loop (hand-checkable cases)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from voirdire.exceptions import SchemaError
from voirdire.workflows import follow_file, label_rounds, not_ready


def _rounds() -> pd.DataFrame:
    # (1, a) twice in round 0: one label; (1, b) in rounds 0 and 1: which round is unknown; (2, a) once
    return pd.DataFrame({"item": [1, 1, 1, 1, 2], "rater": ["a", "a", "b", "b", "a"], "round": [0, 0, 0, 1, 1]})


def test_label_rounds_keeps_one_round_per_label_as_the_reader_keeps_one_label():
    first = label_rounds(_rounds(), duplicates="first")
    assert first[["item", "rater", "round"]].values.tolist() == [[1, "a", 0], [1, "b", 0], [2, "a", 1]]
    last = label_rounds(_rounds(), duplicates="last")
    assert last[["item", "rater", "round"]].values.tolist() == [[1, "a", 0], [1, "b", 1], [2, "a", 1]]
    with pytest.raises(SchemaError, match=r"f.csv: item '1', rater 'b' has two rounds \('0' and '1'\)"):
        label_rounds(_rounds(), source="f.csv")
    ok = _rounds().iloc[[0, 1, 2, 4]]  # the whole-row repeat alone is not an error
    assert len(label_rounds(ok, source="f.csv")) == 3


def test_follow_file_waits_for_a_complete_version_and_stops_when_decided(tmp_path):
    f = tmp_path / "labels.csv"
    with pytest.raises(SchemaError, match="no labels to read after 0 s"):
        list(follow_file(f, lambda: None, every=0.01, max_wait=0))   # never there
    f.write_text("item,rater,label\n1,a,1")                          # a half-written last row
    assert not_ready(f) == "its last row is not complete yet"
    f.write_text("item,rater,label\n")
    assert not_ready(f) == "it holds no labels yet (only its header)"
    f.write_text("item,rater,label\n1,a,1\n")
    reads = []

    def read():
        reads.append(1)
        return SimpleNamespace(decided=len(reads) >= 1), "table"

    events = list(follow_file(f, read, every=0.01, max_wait=5))
    assert [k for k, _ in events] == ["read"] and events[0][1][1] == "table" and reads == [1]
    undecided = list(follow_file(f, lambda: (SimpleNamespace(decided=False), None), every=0.01, max_wait=0.05))
    assert [k for k, _ in undecided] == ["read"]  # read once (the file did not change), then max_wait


def test_read_sequential_reads_the_rounds_once_and_refuses_a_folder(tmp_path):
    from voirdire.data import read_annotations, read_rounds
    from voirdire.exceptions import InvalidParameterError
    from voirdire.workflows import read_sequential, sequential_validation

    f = tmp_path / "labels.csv"
    rows = [(i, r, (i + k * (r == "j")) % 2, i // 10) for i in range(40) for k, r in enumerate(("h1", "h2", "h3", "j"))]
    pd.DataFrame(rows, columns=["item", "rater", "label", "round"]).to_csv(f, index=False)
    load = lambda: read_annotations(f, judges=["j"])  # noqa: E731
    res, table = read_sequential(f, load, round_column="round", judges=["j"], method="loo", verdicts=False)
    direct = sequential_validation(load(), label_rounds(read_rounds(f, column="round")), ["j"], method="loo",
                                   verdicts=False)
    assert table.n_items == 40 and res.to_dict() == direct.to_dict()
    with pytest.raises(InvalidParameterError, match="not an AltTest directory"):
        read_sequential(tmp_path, load, round_column="round")
