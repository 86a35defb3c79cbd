"""The vectorised table constructor gives the same table, or the same error, as the row-by-row one
it replaced (kept in ``_reference_table.py``), on random frames full of awkward values; and the same
table whatever the column dtypes (object, Arrow strings, categorical)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voirdire.data import AnnotationTable
from voirdire.exceptions import VoirdireError

from ._reference_table import reference_from_frame

ITEMS = ["i1", "i2", " i2", "i3", "01", "1", 1, 2, 2.0, "", "  ", None]
RATERS = ["a", "b", "c", " a", "llm", 7, 7.0, "", None]
LABELS_TEXT = ["pass", "fail", " pass", "x", "", " ", None, "nan", "1", "2.0", " 2 ", "-1", "1e0", "inf", "3.5"]
LABELS_NUM = [1, 2, 3, -1, 2.5, 0, np.nan]
ROLES = ["human", "judge", " Human", "LLM", "h", None]
CLUSTERS = ["c1", "c2", " c1", 5, None]

OPTIONS = st.fixed_dictionaries({
    "scale": st.sampled_from([None, "nominal", "ordinal", "interval", "ratio"]),
    "categories": st.sampled_from([None, None, None, ["pass", "fail"], [1, 2, 3], ["fail", "pass", "x"],
                                   [1, 2.5, -1, 3, 0]]),
    "abstain": st.sampled_from([(), (), ("x",), (-1,), ("x", -1)]),
    "duplicates": st.sampled_from(["error", "first", "last", "last"]),
    "missing": st.sampled_from(["error", "drop"]),
    "judges": st.sampled_from([(), ("llm",), ("b",), ("zz",)]),
})


@st.composite
def frames(draw):
    n = draw(st.integers(1, 24))
    kind = draw(st.sampled_from(["text", "num", "mixed"]))
    pool = {"text": LABELS_TEXT, "num": LABELS_NUM, "mixed": LABELS_TEXT + LABELS_NUM}[kind]
    clean = draw(st.integers(0, 3)) > 0  # mostly-valid frames reach the later checks and the tables
    items = ITEMS[:6] + [1, 2] if clean else ITEMS
    raters = RATERS[:5] + [7] if clean else RATERS
    labels = [x for x in pool if x not in ("", " ", None, "nan", "inf") and not (isinstance(x, float) and np.isnan(x))
              ] if clean else pool
    df = pd.DataFrame({
        "item": draw(st.lists(st.sampled_from(items), min_size=n, max_size=n)),
        "rater": draw(st.lists(st.sampled_from(raters), min_size=n, max_size=n)),
        "label": draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n)),
    })
    if kind == "num" and draw(st.booleans()):
        df["label"] = df["label"].astype(float)
    if draw(st.booleans()):
        df["role"] = draw(st.lists(st.sampled_from(ROLES[:4] if clean else ROLES), min_size=n, max_size=n))
    if draw(st.booleans()):
        if clean:  # one cluster per item, spelt in several ways
            df["cl"] = [{"i1": "c1", "i2": " c1", " i2": "c1"}.get(x, 5) if isinstance(x, str) else 5.0
                        for x in df["item"]]
        else:
            df["cl"] = draw(st.lists(st.sampled_from(CLUSTERS), min_size=n, max_size=n))
    return df


def _outcome(fn):
    try:
        return ("ok", fn())
    except VoirdireError as exc:
        return ("error", type(exc).__name__, str(exc))


def _fields(t: AnnotationTable | dict) -> dict:
    f = t if isinstance(t, dict) else {k: getattr(t, k) for k in (
        "items", "raters", "roles", "indptr", "rater_idx", "codes", "values", "scale", "clusters", "dropped",
        "n_rows_read")}
    return {k: list(v) if k in ("items", "raters", "roles") else v for k, v in f.items() if k != "source"}


def _same(a, b) -> None:
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a == b
        return
    fa, fb = a[1], b[1]
    assert fa.keys() == fb.keys()
    for k in fa:
        x, y = fa[k], fb[k]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if x is None or y is None:
                assert x is None and y is None, k
            else:
                assert np.array_equal(np.asarray(x), np.asarray(y), equal_nan=np.asarray(x).dtype.kind == "f"), k
                assert np.asarray(x).dtype.kind == np.asarray(y).dtype.kind, k
        else:
            assert x == y, k
            assert [type(v) for v in x] == [type(v) for v in y] if isinstance(x, list) else True, k


@st.composite
def valid_cases(draw):
    """Frames and options that mostly make a table (the checks above mostly stop early)."""
    n = draw(st.integers(2, 30))
    kind = draw(st.sampled_from(["text", "num", "numtext"]))
    pool = {"text": ["pass", "fail", " pass", "x", "1", "2.0"], "num": [1, 2, 3, -1, 2.5, 0],
            "numtext": ["1", "2.0", " 2 ", "-1", "1e0", "3.5", "0"]}[kind]
    df = pd.DataFrame({
        "item": draw(st.lists(st.sampled_from(["i1", "i2", " i2", "i3", "01", "1", "i4"]), min_size=n, max_size=n)),
        "rater": ["a", "b"] + draw(st.lists(st.sampled_from(["a", "b", "c", " a", "llm"]), min_size=n - 2,
                                            max_size=n - 2)),
        "label": draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)),
    })
    if draw(st.booleans()):
        df["role"] = ["judge" if r == "llm" else draw(st.sampled_from(["human", " Human"])) for r in df["rater"]]
    if draw(st.booleans()):
        df["cl"] = [{"i1": "c1", "i2": " c1", " i2": "c1"}.get(x, 5) for x in df["item"]]
    levels = ["nominal"] if kind == "text" else ["nominal", "ordinal", "interval"] + (["ratio"] if kind == "num" else [])
    opts = {"scale": draw(st.sampled_from(levels)),
            "abstain": draw(st.sampled_from([(), (-1,)] if kind != "text" else [(), ("x",)])),
            "duplicates": draw(st.sampled_from(["first", "last"])),
            "judges": draw(st.sampled_from([(), ("b",)]))}
    if kind == "text" and draw(st.booleans()):
        opts["categories"] = ["fail", "pass", "1", "2"] + ([] if opts["abstain"] else ["x"])
    return df, opts


def _compare(df, opts):
    kw = dict(opts, role="role" if "role" in df else None, cluster="cl" if "cl" in df else None,
              source="f.csv", row_numbers=np.arange(2, len(df) + 2))
    try:
        ref = _outcome(lambda: _fields(reference_from_frame(df, **kw)))
    except ValueError:
        # the old constructor crashed (a traceback) on mixed text/number labels with a numeric
        # abstention value; the new one reads them: nothing to compare against
        return "crash"
    new = _outcome(lambda: _fields(AnnotationTable.from_frame(df, **kw)))
    _same(ref, new)
    return ref[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=frames(), opts=OPTIONS)
def test_vectorised_constructor_matches_the_row_by_row_one(df, opts):
    _compare(df, opts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=valid_cases())
def test_vectorised_constructor_matches_on_valid_frames(case):
    _compare(*case)


def test_dtypes_do_not_change_the_table():
    rng = np.random.default_rng(3)
    n = 2000
    df = pd.DataFrame({"item": [f"it{k}" for k in rng.integers(0, 400, n)],
                       "rater": [f"r{k}" for k in rng.integers(0, 6, n)],
                       "label": [str(k) for k in rng.integers(1, 5, n)]})
    base = _fields(AnnotationTable.from_frame(df, duplicates="last"))
    for dtype in ("category", "string[pyarrow]", pd.ArrowDtype(__import__("pyarrow").string())):
        other = _fields(AnnotationTable.from_frame(df.astype(dtype), duplicates="last"))
        _same(("ok", base), ("ok", other))
    # unused categories are not labels
    cat = df.astype("category")
    cat["label"] = cat["label"].cat.add_categories(["maybe"])
    _same(("ok", base), ("ok", _fields(AnnotationTable.from_frame(cat, duplicates="last"))))


@pytest.mark.parametrize("labels,expected", [
    # 1,000+ distinct values take the Arrow path for strings
    ([f"{k / 7:.6f}" for k in range(1500)], "numbers"),
    ([f" {k}" for k in range(1500)] + ["nan(1)"], "text"),
])
def test_many_distinct_labels(labels, expected):
    n = len(labels)
    df = pd.DataFrame({"item": np.repeat(np.arange(n), 2), "rater": ["a", "b"] * n, "label": np.repeat(labels, 2)})
    kw = dict(scale="nominal")
    ref = _outcome(lambda: _fields(reference_from_frame(df, **kw)))
    new = _outcome(lambda: _fields(AnnotationTable.from_frame(df, **kw)))
    _same(ref, new)
    assert isinstance(new[1]["scale"].categories[0], str) == (expected == "text")


TEXT_ITEMS = ["i1", "i2", " i2", "i3", "01", "1", "1.0", ""]
TEXT_RATERS = ["a", "b", "c", "llm", "7", "7.0", ""]
TEXT_LABELS = ["pass", "fail", "x", "", "nan", "1", "2.0", "-1", "3.5", "é"]


@st.composite
def csv_texts(draw):
    n = draw(st.integers(1, 20))
    rows = [(draw(st.sampled_from(TEXT_ITEMS)), draw(st.sampled_from(TEXT_RATERS)), draw(st.sampled_from(TEXT_LABELS)))
            for _ in range(n)]
    spaced = draw(st.booleans())  # a space after the delimiter: pandas' skipinitialspace decides
    quoted = draw(st.booleans())
    sep = draw(st.sampled_from([",", "\t"]))
    lines = ["item" + sep + "rater" + sep + "label"]
    for r in rows:
        cells = [f'"{c}"' if quoted and k == 2 else c for k, c in enumerate(r)]
        lines.append((sep + " " if spaced else sep).join(cells))
    return sep, "\n".join(lines) + "\n"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=csv_texts(), opts=OPTIONS)
def test_arrow_reader_matches_pandas_reader(tmp_path, case, opts):
    """read_annotations (Arrow's CSV reader, coded by Arrow) gives the table, or the error, that the
    old row-by-row constructor gave on pandas' reading of the same file."""
    from voirdire.data import read_annotations

    sep, text = case
    path = tmp_path / ("t.csv" if sep == "," else "t.tsv")
    path.write_text(text, encoding="utf-8")
    df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, skipinitialspace=True)
    kw = dict(opts, source=str(path), row_numbers=np.arange(2, len(df) + 2))
    try:
        ref = _outcome(lambda: _fields(reference_from_frame(df, **kw)))
    except ValueError:
        return
    new = _outcome(lambda: _fields(read_annotations(path, **opts)))
    _same(ref, new)


def test_arrow_table_and_parquet_give_the_frame_table(tmp_path):
    import pyarrow as pa

    from voirdire.data import read_annotations

    rng = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({"item": [f"q{k}" for k in rng.integers(0, 700, n)],
                       "rater": rng.choice(["ann", "bob", "gpt"], n),
                       "label": rng.choice(["1", "2", "3", "4"], n),
                       "role": "human"})
    df.loc[df["rater"] == "gpt", "role"] = "judge"
    base = _fields(AnnotationTable.from_frame(df, duplicates="first", role="role", scale="ordinal"))
    via_arrow = _fields(AnnotationTable.from_frame(pa.Table.from_pandas(df), duplicates="first", role="role",
                                                   scale="ordinal"))
    _same(("ok", base), ("ok", via_arrow))
    df.to_parquet(tmp_path / "t.parquet")
    via_parquet = _fields(read_annotations(tmp_path / "t.parquet", duplicates="first", role="role", scale="ordinal"))
    _same(("ok", base), ("ok", via_parquet))
    # errors name the same row and value on either path
    bad = df.copy()
    bad.loc[1234, "label"] = "9"
    msgs = set()
    for frame in (bad, pa.Table.from_pandas(bad)):
        with pytest.raises(VoirdireError) as exc:
            AnnotationTable.from_frame(frame, categories=["1", "2", "3", "4"], duplicates="first")
        msgs.add(str(exc.value))
    assert msgs == {"<frame>, row 1235, column 'label': label '9' is not in the declared categories "
                    "[1, 2, 3, 4]. Declare it with --categories (or --abstain if it means 'cannot assess'), "
                    "or fix the row."}


def test_chunked_dictionaries_give_the_frame_table(tmp_path):
    """Parquet row groups and CSV blocks each carry their own dictionary (read without decoding the
    rows): the table equals the pandas frame's, integer labels included, and an error deep in the
    file names its row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from voirdire.data import read_annotations

    rng = np.random.default_rng(7)
    n = 120_000  # about 2.4 MB of CSV: several 1 MB blocks for Arrow's reader
    items = rng.permutation(np.repeat(np.arange(n // 3), 3))  # items not grouped: the sort path too
    df = pd.DataFrame({"item": [f"item-{k}" for k in items],
                       "rater": rng.choice(["ann", "bob", "cy", "gpt"], n),
                       "label": rng.integers(1, 6, n),
                       "role": "human"})
    df.loc[df["rater"] == "gpt", "role"] = "judge"
    opts = dict(duplicates="last", role="role", scale="ordinal")
    base = _fields(AnnotationTable.from_frame(df.astype({"label": str}), **opts))
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "t.parquet", row_group_size=7_000)
    assert pq.ParquetFile(tmp_path / "t.parquet").metadata.num_row_groups > 10
    df.to_csv(tmp_path / "t.csv", index=False)
    for name in ("t.parquet", "t.csv"):
        _same(("ok", base), ("ok", _fields(read_annotations(tmp_path / name, **opts))))
    bad = df.copy()
    bad.loc[98_765, "label"] = 9
    pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), tmp_path / "b.parquet", row_group_size=7_000)
    bad.to_csv(tmp_path / "b.csv", index=False)
    for name, row in (("b.parquet", 98_766), ("b.csv", 98_767)):
        with pytest.raises(VoirdireError, match=f"row {row}, column 'label': label '?9'? is not in the declared"):
            read_annotations(tmp_path / name, categories=[1, 2, 3, 4, 5], duplicates="last")


def test_categorical_parquet_gives_the_frame_table(tmp_path, monkeypatch):
    """A Parquet file written from pandas Categoricals: every row group's dictionary holds categories
    its rows do not use (and one category no row uses), a rater first seen in the last row, rater
    categories in another order than their first appearance. The table equals the plain frame's;
    a missing item deep in the file is named by its row."""
    import pyarrow.parquet as pq

    from voirdire.data import read_annotations

    rng = np.random.default_rng(11)
    n_items = 20_000
    k = rng.integers(2, 5, n_items)
    items = np.repeat([f"it{j}" for j in range(n_items)], k)
    n = items.size
    raters = rng.choice(["bo", "al", "cy", "gpt"], n)
    raters[-1] = "zed"  # first seen in the last row: past any prefix of the file
    df = pd.DataFrame({"item": items, "rater": raters, "label": rng.integers(1, 6, n)})
    cats = pd.DataFrame({
        "item": pd.Categorical(df["item"], categories=[*df["item"].unique(), "never-used"]),
        "rater": pd.Categorical(df["rater"], categories=["zed", "gpt", "cy", "bo", "al"]),
        "label": df["label"]})
    path = tmp_path / "cat.parquet"
    cats.to_parquet(path, index=False, row_group_size=9_000)
    pf = pq.ParquetFile(path)
    assert pf.metadata.num_row_groups > 4
    chunk = pf.read_row_group(1, columns=["item"]).column("item").chunk(0)
    assert len(chunk.dictionary) > len(np.unique(chunk.indices.to_numpy()))  # unused values in the dictionary
    opts = dict(duplicates="last", scale="ordinal")
    base = _fields(AnnotationTable.from_frame(df.astype({"label": str}), **opts))
    got = _fields(read_annotations(path, **opts))
    _same(("ok", base), ("ok", got))
    assert got["raters"][-1] == "zed"
    import os  # one core: the row groups read by Arrow in one call, the same table

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    _same(("ok", base), ("ok", _fields(read_annotations(path, **opts))))
    monkeypatch.undo()
    bad = cats.copy()
    bad.loc[n - 7, "item"] = None
    bad.to_parquet(path, index=False, row_group_size=9_000)
    with pytest.raises(VoirdireError, match=f"row {n - 6}, column 'item': empty item id"):
        read_annotations(path, **opts)


_EDGES = st.sampled_from(["a", "Z", "7", " ", "\t", "\n", "\x1c", "\x85", "\xa0", "\u2003", "\u3000", "é", "-", "_", "€", ""])


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.tuples(_EDGES, st.text(max_size=4), _EDGES), min_size=1, max_size=40),
       cut=st.integers(0, 5), large=st.booleans())
def test_strip_of_distinct_values_is_python_strip(words, cut, large):
    """The distinct values' ``str.strip`` found from the bytes at each string's ends (Arrow arrays,
    sliced or not, string or large_string) equals Python's own on every value."""
    import pyarrow as pa

    from voirdire.data._columns import _strip

    values = [f"id{j}" for j in range(1200)] + ["".join(w) for w in words]
    arrow = pa.array(["pad"] * cut + values, type=pa.large_string() if large else pa.string()).slice(cut)
    uniq = np.array(values, dtype=object)
    assert list(_strip(uniq, arrow)) == [v.strip() for v in values]
    assert list(_strip(uniq)) == [v.strip() for v in values]
