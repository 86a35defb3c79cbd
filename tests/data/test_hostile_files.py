"""Hostile and malformed input files (issue 17): one regression test per cause, one-line errors naming where.

Large inputs are generated here; nothing is read from outside the test's temporary folder.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from voirdire.data import read_annotations, read_long_frame
from voirdire.exceptions import SchemaError


def _w(tmp_path: Path, name: str, data: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


def _err(path: Path, **kw: object) -> str:
    with pytest.raises(SchemaError) as e:
        read_annotations(path, **kw)  # type: ignore[arg-type]
    msg = str(e.value)
    assert msg.startswith(str(path)), msg
    return msg


def test_json_nested_100k_deep(tmp_path: Path) -> None:
    assert "nested too deeply" in _err(_w(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000))
    p = _w(tmp_path, "deep.jsonl", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(SchemaError, match="row 1: the JSON is nested too deeply"):
        read_long_frame(p)


def test_record_list_holding_non_objects(tmp_path: Path) -> None:
    p = _w(tmp_path, "r.json", json.dumps([{"item": 1, "rater": "a", "label": 1}, 5, "x"]))
    assert "record 2 is 5, not an object" in _err(p)


def test_integer_of_over_4300_digits(tmp_path: Path) -> None:
    big = "9" * 5000
    assert "number too long" in _err(_w(tmp_path, "b.json", f'[{{"item": 1, "rater": "a", "label": {big}}}]'))
    msg = _err(_w(tmp_path, "b.jsonl", f'{{"item":1,"rater":"b","label":1}}\n{{"item":1,"rater":"a","label":{big}}}\n'))
    assert "row 2" in msg and "number too long" in msg


def test_nul_bytes_never_merge_names(tmp_path: Path) -> None:
    p = _w(tmp_path, "nul.csv", b"item,rater,label\n1,ann\x00A,1\n1,ann\x00B,0\n2,ann\x00A,1\n2,ann\x00B,1\n")
    msg = _err(p)
    assert "row 2" in msg and "NUL byte" in msg
    p = _w(tmp_path, "nul.jsonl", b'{"item":1,"rater":"a","label":1}\n{"item":1,"rater":"ann\x00B","label":1}\n')
    assert "row 2" in _err(p)


def test_utf16_file_says_so(tmp_path: Path) -> None:
    p = _w(tmp_path, "u16.csv", "item,rater,label\n1,a,1\n1,b,1\n".encode("utf-16"))
    assert "UTF-16" in _err(p)


@pytest.mark.parametrize("label", ["1_0", "1_000", "_1"])
def test_underscore_is_text_not_a_digit_separator(tmp_path: Path, label: str) -> None:
    p = _w(tmp_path, "u.csv", f"item,rater,label\n1,a,{label}\n1,b,10\n2,a,10\n2,b,10\n")
    t = read_annotations(p)
    assert label in t.scale.categories and 10 not in t.scale.categories  # text categories, '10' kept apart
    with pytest.raises(SchemaError, match=f"label '{label}' is not a number"):
        read_annotations(p, scale="interval")


def test_second_label_column_is_an_error(tmp_path: Path) -> None:
    p = _w(tmp_path, "two.csv", "item,rater,label,label\n1,a,1,0\n1,b,1,1\n")
    msg = _err(p)
    assert "row 1" in msg and "'label' appears twice" in msg


@pytest.mark.parametrize("marker", ["NA", "nan", "NaN", "null", "N/A"])
def test_r_na_and_pandas_nan_are_treated_alike(tmp_path: Path, marker: str) -> None:
    p = _w(tmp_path, "na.csv", f"item,rater,label\n1,a,1\n1,b,{marker}\n2,a,0\n2,b,1\n")
    msg = _err(p)
    assert "row 3" in msg and "marks a missing value" in msg
    t = read_annotations(p, missing="drop")
    assert t.n_labels == 3 and t.scale.categories == (0, 1) and sum(t.dropped.values()) == 1
    if marker.lower() != "nan":  # declared as an answer, the text is an abstention ('nan' reads as a number)
        assert read_annotations(p, abstain=[marker]).n_labels == 4


def test_short_row_is_not_called_an_empty_label_and_is_never_dropped(tmp_path: Path) -> None:
    p = _w(tmp_path, "short.csv", "item,rater,label\n1,a,1\n1,b,\n2,a\n2,b,1\n")
    for policy in ("error", "drop"):
        msg = _err(p, missing=policy)
        assert "row 4" in msg and "2 field(s)" in msg and "empty label (" not in msg


def test_truncated_csv_gz_names_the_file(tmp_path: Path) -> None:
    data = gzip.compress(("item,rater,label\n" + "".join(f"{i},{r},1\n" for i in range(2000) for r in "ab")).encode())
    msg = _err(_w(tmp_path, "t.csv.gz", data[: len(data) // 2]))
    assert "ends early" in msg


def test_non_gzip_gz_names_the_file(tmp_path: Path) -> None:
    assert "cannot be read as a gzip file" in _err(_w(tmp_path, "x.csv.gz", "item,rater,label\n1,a,1\n"))


def test_json_gz_is_read(tmp_path: Path) -> None:
    recs = [{"item": i, "rater": r, "label": i % 2} for i in range(4) for r in "ab"]
    p = _w(tmp_path, "x.json.gz", gzip.compress(json.dumps(recs).encode()))
    assert read_annotations(p).n_labels == 8
    p = _w(tmp_path, "x.jsonl.gz", gzip.compress("".join(json.dumps(r) + "\n" for r in recs).encode()))
    assert read_annotations(p).n_labels == 8


def test_latin1_jsonl_names_file_and_row(tmp_path: Path) -> None:
    p = _w(tmp_path, "l.jsonl", '{"item":1,"rater":"a","label":"x"}\n{"item":1,"rater":"b","label":"caf\xe9"}\n'
           .encode("latin-1"))
    msg = _err(p)
    assert "row 2" in msg and "not UTF-8" in msg
    p = _w(tmp_path, "l.csv", "item,rater,label\n1,a,x\n1,b,caf\xe9\n".encode("latin-1"))
    msg = _err(p)
    assert "row 3" in msg and "not UTF-8" in msg


def test_a_2mb_item_id_is_not_echoed_in_full(tmp_path: Path) -> None:
    long_id = "i" * 2_000_000
    p = _w(tmp_path, "long.csv", f"item,rater,label\n{long_id},a,1\n{long_id},a,2\n{long_id},b,1\n")
    msg = _err(p)
    assert len(msg) < 1000 and "2,000,000 characters" in msg


def test_integer_labels_beyond_2_53_are_refused_not_merged(tmp_path: Path) -> None:
    # 2**53 + 1 and 2**53 + 2 are different labels; as floats they would read as one number (silently
    # raising agreement): refused naming the row, from CSV text and from Parquet int64 alike
    big = 2 ** 53
    rows = [("i1", "a", big + 1), ("i1", "b", big + 2), ("i2", "a", big + 3), ("i2", "b", big + 4)]
    csv = _w(tmp_path, "big.csv", "item,rater,label\n" + "".join(f"{i},{r},{v}\n" for i, r, v in rows))
    assert "row 2, column 'label': label '9007199254740993' is an integer beyond 2**53" in _err(csv)
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    pq = tmp_path / "big.parquet"
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_parquet(pq, index=False)
    assert "row 1, column 'label': label 9007199254740993 is an integer beyond 2**53" in _err(pq)
    # exactly representable large integers (multiples of 2**60) stay numbers, distinct as they are
    ok = _w(tmp_path, "ok.csv", "item,rater,label\ni1,a,%d\ni1,b,%d\n" % (2 ** 60, 2 ** 61))
    assert read_annotations(ok).scale.categories == (2 ** 60, 2 ** 61)


def test_list_values_in_a_parquet_column_are_refused(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    lab = tmp_path / "lab.parquet"
    pq.write_table(pa.table({"item": ["i1", "i1"], "rater": ["a", "b"], "label": [[1], [2]]}), lab)
    assert "row 1, column 'label': label [1] is a list, not a single value" in _err(lab)
    it = tmp_path / "it.parquet"
    pq.write_table(pa.table({"item": [["i1"], ["i1"]], "rater": ["a", "b"], "label": [1, 2]}), it)
    assert "row 1, column 'item': item id ['i1'] is a list, not a single value" in _err(it)
    js = _w(tmp_path, "it.jsonl", '{"item": "i1", "rater": "a", "label": 1}\n{"item": [1, 2], "rater": "b", "label": 1}\n')
    assert "row 2, column 'item': item id [1, 2] is a list" in _err(js)
