"""Reading annotation files: formats, roles, scales, and every bad-input error."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from voirdire.data import AnnotationTable, Scale, read_annotations
from voirdire.exceptions import InvalidParameterError, SchemaError

from ..conftest import shared_data

ROWS = [("i1", "a", "pass"), ("i1", "b", "pass"), ("i1", "llm", "fail"),
        ("i2", "a", "fail"), ("i2", "b", "pass"), ("i2", "llm", "fail"),
        ("i3", "a", "pass"), ("i3", "llm", "pass")]


def _frame(rows=ROWS) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["item", "rater", "label"])


@pytest.mark.parametrize("ext", ["csv", "tsv", "jsonl", "parquet", "json"])
def test_every_long_format_reads_the_same_table(tmp_path, ext):
    df = _frame()
    path = tmp_path / f"labels.{ext}"
    if ext == "csv":
        df.to_csv(path, index=False)
    elif ext == "tsv":
        df.to_csv(path, sep="\t", index=False)
    elif ext == "jsonl":
        df.to_json(path, orient="records", lines=True)
    elif ext == "parquet":
        df.to_parquet(path)
    else:
        df.to_json(path, orient="records")
    t = read_annotations(path, judges=["llm"])
    assert (t.n_items, t.n_raters, t.n_labels) == (3, 3, 8)
    assert t.humans == ("a", "b") and t.judges == ("llm",)
    assert t.scale.categories == ("fail", "pass")
    dense = t.dense()
    # i3 has no label from b
    assert dense[2, 1] == -1 and dense[0, 0] == 1 and dense[0, 2] == 0


def test_nested_json_with_judge_file(tmp_path):
    (tmp_path / "h.json").write_text(json.dumps({"a": {"x": 1, "y": 2}, "b": {"x": 1}}))
    (tmp_path / "j.json").write_text(json.dumps({"llm": {"x": 1, "y": 3}}))
    t = read_annotations(tmp_path / "h.json", judge_path=tmp_path / "j.json", scale="ordinal")
    assert t.judges == ("llm",) and t.humans == ("a", "b")
    assert t.scale.categories == (1, 2, 3)


def test_alttest_directory_reads_humans_and_judges():
    t = read_annotations(shared_data("alttest", "mtbench"), cluster_sep="__")
    assert t.n_items == 120 and len(t.humans) == 3 and len(t.judges) == 6
    assert t.clusters is not None and 1 < np.unique(t.clusters).size < t.n_items


def test_summary_counts_dropped_rows():
    rows = ROWS + [("i1", "a", "pass"), ("i2", "b", "fail"), ("i3", "b", "")]
    t = AnnotationTable.from_frame(_frame(rows), duplicates="last", missing="drop")
    s = t.summary()
    assert s.n_rows_read == 11
    assert s.dropped == {"empty label": 1, "identical duplicate": 1, "conflicting duplicate (last kept)": 1}
    # last kept: b says fail on i2
    assert t.label_of(t.dense()[1, t.rater_index("b")]) == "fail"


def test_duplicates_first_keeps_first():
    rows = ROWS + [("i2", "b", "fail")]
    t = AnnotationTable.from_frame(_frame(rows), duplicates="first")
    assert t.label_of(t.dense()[1, t.rater_index("b")]) == "pass"


def test_declared_order_and_abstention_codes():
    rows = ROWS + [("i3", "b", "cannot assess")]
    t = AnnotationTable.from_frame(_frame(rows), categories=["pass", "fail"], abstain=["cannot assess"])
    assert t.scale.categories == ("pass", "fail") and t.n_categories == 2
    assert t.is_abstention.sum() == 1
    assert np.isnan(t.values[t.is_abstention]).all()


def test_string_and_integer_labels_give_same_codes():
    a = AnnotationTable.from_arrays([1, 1, 2, 2], ["r", "s", "r", "s"], [1, 2, 2, 2])
    b = AnnotationTable.from_arrays([1, 1, 2, 2], ["r", "s", "r", "s"], ["1", "2", "2", "2"])
    assert np.array_equal(a.codes, b.codes) and a.scale.categories == b.scale.categories == (1, 2)


def test_select_and_roles():
    t = AnnotationTable.from_frame(_frame(), judges=["llm"])
    s = t.select(items=[0, 2], raters=["a", "llm"])
    assert s.n_items == 2 and s.n_labels == 4 and s.judges == ("llm",)
    assert t.with_roles(judges=["a"]).judges == ("a",)


def test_fingerprint_changes_with_content():
    t = AnnotationTable.from_frame(_frame())
    u = AnnotationTable.from_frame(_frame(ROWS[:-1]))
    assert t.fingerprint() != u.fingerprint() and t.fingerprint() == AnnotationTable.from_frame(_frame()).fingerprint()


# ---------------------------------------------------------------- bad input
def _write(tmp_path, text, name="bad.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_empty_file(tmp_path):
    with pytest.raises(SchemaError, match=r"bad\.csv: the file is empty"):
        read_annotations(_write(tmp_path, ""))


def test_header_only(tmp_path):
    with pytest.raises(SchemaError, match="no rows"):
        read_annotations(_write(tmp_path, "item,rater,label\n"))


def test_missing_column_is_named(tmp_path):
    with pytest.raises(SchemaError, match=r"column 'label': missing column\(s\) \['label'\]"):
        read_annotations(_write(tmp_path, "item,rater,score\n1,a,2\n"))


def test_conflicting_duplicate_names_row(tmp_path):
    p = _write(tmp_path, "item,rater,label\n1,a,x\n1,b,x\n1,a,y\n")
    with pytest.raises(SchemaError, match=r"bad\.csv, row 4, column 'label': rater 'a' labels item '1' twice"):
        read_annotations(p)


def test_label_outside_categories(tmp_path):
    p = _write(tmp_path, "item,rater,label\n1,a,fail\n1,b,maybe\n")
    with pytest.raises(SchemaError, match=r"row 3, column 'label': label 'maybe' is not in the declared categories \['fail', 'pass'\]"):
        read_annotations(p, categories=["fail", "pass"])


def test_non_numeric_on_interval(tmp_path):
    p = _write(tmp_path, "item,rater,label\n1,a,3\n1,b,high\n")
    with pytest.raises(SchemaError, match=r"row 3, column 'label': label 'high' is not a number"):
        read_annotations(p, scale="interval")


def test_negative_on_ratio(tmp_path):
    p = _write(tmp_path, "item,rater,label\n1,a,3\n1,b,-2\n")
    with pytest.raises(SchemaError, match="negative"):
        read_annotations(p, scale="ratio")


def test_empty_label(tmp_path):
    p = _write(tmp_path, "item,rater,label\n1,a,3\n1,b,\n")
    with pytest.raises(SchemaError, match=r"row 3, column 'label': empty label"):
        read_annotations(p)


def test_fewer_than_two_raters(tmp_path):
    p = _write(tmp_path, "item,rater,label\n1,a,3\n2,a,2\n")
    with pytest.raises(SchemaError, match="at least two raters"):
        read_annotations(p)


def test_unknown_judge(tmp_path):
    p = _write(tmp_path, "item,rater,label\n1,a,3\n1,b,2\n")
    with pytest.raises(SchemaError, match=r"judge\(s\) \['gpt'\] are not raters"):
        read_annotations(p, judges=["gpt"])


def test_ordinal_strings_need_order(tmp_path):
    p = _write(tmp_path, "item,rater,label\n1,a,low\n1,b,high\n")
    with pytest.raises(SchemaError, match="needs the category order"):
        read_annotations(p, scale="ordinal")


def test_bad_jsonl_line(tmp_path):
    p = _write(tmp_path, '{"item": 1, "rater": "a", "label": 1}\n{oops\n', "bad.jsonl")
    with pytest.raises(SchemaError, match=r"bad\.jsonl, row 2: invalid JSON"):
        read_annotations(p)


def test_unknown_extension(tmp_path):
    with pytest.raises(SchemaError, match="unknown file type"):
        read_annotations(_write(tmp_path, "x", "bad.docx"))


def test_nested_json_error_names_rater_and_item(tmp_path):
    (tmp_path / "h.json").write_text(json.dumps({"a": {"x": "yes"}, "b": {"x": "nah"}}))
    with pytest.raises(SchemaError, match=r"rater 'b', item 'x'"):
        read_annotations(tmp_path / "h.json", categories=["yes", "no"])


def test_bad_policy_parameters():
    with pytest.raises(InvalidParameterError, match="'duplicates' parameter"):
        AnnotationTable.from_frame(_frame(), duplicates="keep")
    with pytest.raises(InvalidParameterError, match="'level' parameter of Scale"):
        Scale(level="binary")  # type: ignore[arg-type]


@pytest.mark.parametrize("n_items", [3, 1500])  # 1,500: the Arrow dictionary's first-byte scan
def test_ids_a_csv_writer_quoted_read_back_as_themselves(tmp_path, n_items):
    # assign/study assign write '=it3 for the id =it3 (no spreadsheet formula): the labels that come
    # back must join the ids they were written from, not become new items and raters
    import pandas as pd

    from voirdire._safe import csv_cell

    ids = [f"=it{i}" if i % 2 else f"it{i}" for i in range(n_items)]
    raters = ["+ann", "bob", "'lit"]  # "'lit" was never written by csv_cell: it stays as it is
    df = pd.DataFrame([(csv_cell(i), csv_cell(r), k % 2) for k, i in enumerate(ids) for r in raters],
                      columns=["item", "rater", "label"])
    for name in ("t.csv", "t.parquet"):
        if name.endswith("parquet"):
            pytest.importorskip("pyarrow")
            df.to_parquet(tmp_path / name, index=False)
        else:
            df.to_csv(tmp_path / name, index=False)
        t = read_annotations(tmp_path / name)
        assert sorted(t.items) == sorted(ids) and sorted(t.raters) == sorted(raters), name


def test_quoted_ids_read_back_after_rows_are_dropped(tmp_path):
    # dropped rows (empty labels) renumber the distinct ids: the quoted ones must still be found
    import pandas as pd

    pytest.importorskip("pyarrow")
    rows = [(f"'=q{i}" if i % 3 == 0 else f"q{i}", r, "" if i < 400 else str(i % 2))
            for i in range(1500) for r in ("a", "b")]
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_parquet(tmp_path / "d.parquet", index=False)
    t = read_annotations(tmp_path / "d.parquet", missing="drop")
    assert sorted(t.items) == sorted(f"=q{i}" if i % 3 == 0 else f"q{i}" for i in range(400, 1500))
