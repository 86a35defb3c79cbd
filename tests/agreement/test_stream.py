"""Streaming alpha (agreement/_stream.py): equal to the in-memory path on the same file, in any
batch size; refuses items that are not grouped; one-line errors naming the file row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voirdire.agreement import krippendorff_alpha
from voirdire.agreement._stream import krippendorff_alpha_stream
from voirdire.data import read_annotations
from voirdire.exceptions import SchemaError

pytest.importorskip("pyarrow")


def _frame(n=600, R=5, seed=0, continuous=False):
    rng = np.random.default_rng(seed)
    mask = rng.random((n, R)) < 0.6
    ii, rr = np.nonzero(mask)
    truth = rng.normal(size=n)
    lab = (truth[ii] + rng.normal(scale=0.8, size=ii.size)).round(3) if continuous else \
        np.clip(np.round(truth[ii] + 3 + rng.normal(scale=0.8, size=ii.size)), 1, 5).astype(int)
    return pd.DataFrame({"item": np.char.add("it", ii.astype(str)), "rater": np.char.add("r", rr.astype(str)),
                         "label": lab})


@pytest.mark.parametrize("level,continuous", [("nominal", False), ("interval", False), ("interval", True)])
@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_stream_equals_in_memory(tmp_path, level, continuous, ext):
    df = _frame(continuous=continuous)
    path = tmp_path / f"t.{ext}"
    df.to_parquet(path, index=False) if ext == "parquet" else df.to_csv(path, index=False)
    ref = krippendorff_alpha(read_annotations(path, scale=level), level=level, n_resamples=150, rng=4)
    for batch in (97, 1000, 10**6):  # blocks split items at every batch boundary
        got = krippendorff_alpha_stream(path, level=level, batch_rows=batch, n_resamples=150, rng=4)
        assert got.estimate == pytest.approx(ref.estimate, abs=1e-12)
        assert got.analytic_se == pytest.approx(ref.analytic_se, abs=1e-12)
        assert got.ci.low == pytest.approx(ref.ci.low, abs=1e-12) and got.ci.high == pytest.approx(ref.ci.high, abs=1e-12)
        assert (got.n_items, got.n_labels, got.n_pairs, got.raters) == (ref.n_items, ref.n_labels, ref.n_pairs,
                                                                        ref.raters)


def test_stream_with_abstentions(tmp_path):
    df = _frame(seed=1)
    df.loc[df.index % 17 == 0, "label"] = -1
    path = tmp_path / "t.parquet"
    df.to_parquet(path, index=False)
    ref = krippendorff_alpha(read_annotations(path, scale="interval", abstain=[-1]), level="interval", n_resamples=0)
    got = krippendorff_alpha_stream(path, level="interval", abstain=[-1], batch_rows=50, n_resamples=0)
    assert got.estimate == pytest.approx(ref.estimate, abs=1e-12)
    assert got.abstention.n_abstentions == ref.abstention.n_abstentions > 0
    assert got.abstention.item_coverage == pytest.approx(ref.abstention.item_coverage)


@pytest.mark.parametrize("col", ["item", "rater"])
@pytest.mark.parametrize("blank", [None, "  "])
def test_a_missing_id_is_named_as_in_memory_not_as_items_not_grouped(tmp_path, col, blank):
    # a missing item id inside an item's rows splits its run: it was reported as "not grouped"
    df = _frame(n=20).astype({"item": object, "rater": object})
    k = next(k for k in range(1, len(df) - 1) if df.item[k - 1] == df.item[k] == df.item[k + 1])
    df.loc[k, col] = blank  # inside an item's rows
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    with pytest.raises(SchemaError) as mem:
        read_annotations(path)
    with pytest.raises(SchemaError, match=f"empty {col} id") as e:
        krippendorff_alpha_stream(path, batch_rows=4)
    assert str(e.value) == str(mem.value)  # the same file, row and column


def test_items_not_grouped_are_refused(tmp_path):
    df = _frame(n=50)
    df = pd.concat([df, df.iloc[:1].assign(rater="late")], ignore_index=True)  # item it0 again at the end
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    with pytest.raises(SchemaError, match=r"items are not grouped: item 'it0' appears again at row \d+") as e:
        krippendorff_alpha_stream(path, batch_rows=10)
    assert "\n" not in str(e.value) and str(len(df) + 1) in str(e.value)  # the file row of the late label
    # the same within one batch
    with pytest.raises(SchemaError, match="not grouped"):
        krippendorff_alpha_stream(path, batch_rows=10**6)


def test_label_type_change_mid_file_is_one_line_naming_the_row(tmp_path):
    df = _frame(n=200)
    df["label"] = df["label"].astype(str)
    df.loc[150, "label"] = "high"
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    with pytest.raises(SchemaError, match=r"t.csv, row 152, column 'label': label 'high' is not a number") as e:
        krippendorff_alpha_stream(path, level="interval", batch_rows=40)
    assert "\n" not in str(e.value)


def test_parquet_type_change_between_files_is_an_error(tmp_path):
    # a single Parquet file has one schema; a CSV read in batches keeps every column as text, so a
    # change of type shows as a label the scale refuses (above). The batch check itself:
    from voirdire.agreement import _stream

    import pyarrow as pa

    b1 = pa.record_batch({"item": ["a", "a"], "rater": ["x", "y"], "label": [1, 2]})
    b2 = pa.record_batch({"item": ["b", "b"], "rater": ["x", "y"], "label": ["1", "2"]})

    def fake(path, cols, batch_rows):
        yield b1
        yield b2

    mp = pytest.MonkeyPatch()
    mp.setattr(_stream, "_batches", fake)
    try:
        with pytest.raises(SchemaError, match=r"x.parquet, row 3, column 'label': the column's type changes here: "
                                               r"int64 in the rows before, string from this row on") as e:
            _stream._scan(tmp_path / "x.parquet", ["item", "rater", "label"], 2, 1)
        assert "\n" not in str(e.value)
    finally:
        mp.undo()


def test_parquet_row_groups_with_their_own_dictionaries_stream_right(tmp_path):
    """One Parquet file has one schema (its footer's), but each row group stores a dictionary-typed
    column with its own dictionary: here the item, rater and label columns are dictionary-encoded
    chunk by chunk (as bench_scale.py writes its 100M-label file), so the same id has different
    codes in different row groups, and batches cut across row groups. Streaming compares values,
    not codes, and gives the whole-file answer."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from voirdire.agreement import agreement
    from voirdire.agreement._stream import agreement_stream

    df = _frame(n=600, seed=4)
    schema = pa.schema([("item", pa.dictionary(pa.int32(), pa.string())),
                        ("rater", pa.dictionary(pa.int8(), pa.string())),
                        ("label", pa.dictionary(pa.int8(), pa.int64()))])
    path = tmp_path / "dict.parquet"
    cuts = [0, 700, 1100, len(df)]  # cut inside items: an item's rows span two row groups
    with pq.ParquetWriter(path, schema) as w:
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            part = df.iloc[lo:hi]
            cols = {}
            for name in ("item", "rater", "label"):
                vals = part[name].to_numpy()
                uniq = np.unique(vals)[::-1] if lo else np.unique(vals)  # a different order each chunk
                idx = np.searchsorted(np.sort(uniq), vals)
                idx = (len(uniq) - 1 - idx) if lo else idx
                cols[name] = pa.DictionaryArray.from_arrays(pa.array(idx.astype(schema.field(name).type.index_type
                                                                                .to_pandas_dtype())),
                                                            pa.array(uniq))
            w.write_table(pa.table(cols, schema=schema), row_group_size=250)
    pf = pq.ParquetFile(path)
    assert pf.metadata.num_row_groups > 3 and pa.types.is_dictionary(pf.schema_arrow.field("item").type)
    names = ["observed_agreement", "krippendorff_alpha", "gwet_ac1"]
    ref = agreement(read_annotations(path, scale="ordinal"), coefficients=names, level="ordinal", n_resamples=50,
                    rng=2)
    plain = tmp_path / "plain.parquet"
    df.to_parquet(plain, index=False)
    ref_plain = agreement(read_annotations(plain, scale="ordinal"), coefficients=names, level="ordinal",
                          n_resamples=50, rng=2)
    _same(ref, ref_plain)
    for batch in (41, 10**6):
        got = agreement_stream(path, coefficients=names, scale="ordinal", level="ordinal", batch_rows=batch,
                               n_resamples=50, rng=2)
        _same(got, ref)


def _same(got, ref):
    for g, r in zip(got, ref, strict=True):
        assert g.coefficient == r.coefficient
        for a, b in ((g.estimate, r.estimate), (g.se, r.se), (g.ci.low, r.ci.low), (g.ci.high, r.ci.high),
                     (g.observed, r.observed), (g.expected, r.expected)):
            assert a == pytest.approx(b, rel=1e-12, abs=1e-12, nan_ok=True), g.coefficient
        assert (g.analytic_se is None) == (r.analytic_se is None)
        if r.analytic_se is not None:
            assert g.analytic_se == pytest.approx(r.analytic_se, abs=1e-12, nan_ok=True)
        assert (g.n_items, g.n_labels, g.n_pairs, g.raters, g.ci.method) == \
            (r.n_items, r.n_labels, r.n_pairs, r.raters, r.ci.method)
        assert g.abstention == r.abstention


STREAMED = ["observed_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1", "gwet_ac2", "bennett_s"]


@pytest.mark.parametrize("scale,level,weights", [("nominal", None, None), ("ordinal", "ordinal", None),
                                                 ("ordinal", "ordinal", "linear"), ("interval", "interval", None)])
def test_every_streamed_coefficient_equals_in_memory(tmp_path, scale, level, weights):
    from voirdire.agreement import agreement
    from voirdire.agreement._stream import agreement_stream

    df = _frame(n=400, seed=3)
    path = tmp_path / "t.parquet"
    df.to_parquet(path, index=False)
    names = STREAMED if scale != "nominal" else [n for n in STREAMED if n != "gwet_ac2"]
    ref = agreement(read_annotations(path, scale=scale), coefficients=names, level=level, weights=weights,
                    n_resamples=120, rng=9)
    for batch in (53, 10**6):
        got = agreement_stream(path, coefficients=names, scale=scale, level=level, weights=weights, batch_rows=batch,
                               n_resamples=120, rng=9)
        _same(got, ref)


@pytest.mark.parametrize("policy", ["exclude", "category", "disagree"])
def test_streamed_abstention_policies_and_rater_subsets_equal_in_memory(tmp_path, policy):
    from voirdire.agreement import agreement
    from voirdire.agreement._stream import agreement_stream

    df = _frame(n=300, seed=5)
    df["label"] = df["label"].astype(str)
    df.loc[df.index % 13 == 0, "label"] = "n/a"
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    names = ["observed_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1"]
    sel = ["r0", "r2", "r3"]
    t = read_annotations(path, scale="nominal", abstain=["n/a"])
    ref = agreement(t, coefficients=names, raters=sel, abstain_policy=policy, n_resamples=100, rng=2)
    got = agreement_stream(path, coefficients=names, raters=sel, scale="nominal", abstain=["n/a"],
                           abstain_policy=policy, batch_rows=41, n_resamples=100, rng=2)
    _same(got, ref)


def test_coefficients_that_do_not_stream_are_refused_in_one_line(tmp_path):
    from voirdire.agreement._stream import agreement_stream
    from voirdire.exceptions import InvalidParameterError

    path = tmp_path / "t.parquet"
    _frame(n=30).to_parquet(path, index=False)
    with pytest.raises(InvalidParameterError, match="'cohen_kappa' does not stream") as e:
        agreement_stream(path, coefficients=["krippendorff_alpha", "cohen_kappa"])
    assert "\n" not in str(e.value)


def test_streamed_state_is_the_distinct_rows_with_counts(tmp_path):
    """Categorical labels: the pass over the file keeps each distinct row of per-item statistics
    once and a 4-byte row number per item (not the per-item arrays), and the answer is the one of
    the items written out (the same types, draws, jackknife and analytic SE)."""
    from voirdire.agreement import _core, _stream, agreement

    df = _frame(n=1500, seed=6)
    path = tmp_path / "t.parquet"
    df.to_parquet(path, index=False)
    names = ["fleiss_kappa", "krippendorff_alpha", "gwet_ac2"]
    st = _stream._setup(path, names=names, groups=(_stream.StreamGroup(),), judges=(), level="interval",
                        weights=None, scale="interval", item="item", rater="rater", label="label", categories=None,
                        abstain=(), duplicates="error", missing="error", abstain_policy="exclude", batch_rows=211)
    part = _stream._local(st)
    rows = part.rows[0]
    assert rows is not None and rows.n_items == df["item"].nunique() and all(c.dtype == np.int32 for c in rows.codes)
    assert rows.table.shape[0] < 1500 / 4 and len(np.unique(rows.hashes)) == rows.table.shape[0]
    assert all(getattr(s, "d", None) is None for s in part.specs[0])  # no per-item arrays kept
    used = []
    mp = pytest.MonkeyPatch()
    mp.setattr(_core, "rows_resample_by_types", lambda *a: used.append(True) or True)
    try:
        got = _stream.agreement_stream(path, coefficients=names, scale="interval", level="interval", batch_rows=211,
                                       n_resamples=300, rng=5)
    finally:
        mp.undo()
    assert used == [True]
    ref = agreement(read_annotations(path, scale="interval"), coefficients=names, level="interval", n_resamples=300,
                    rng=5)
    _same(got, ref)


def test_many_distinct_rows_are_kept_per_item_and_stream_right(tmp_path, monkeypatch):
    # continuous labels: past _ROWS_MIN distinct rows (and a quarter of the items) the join keeps
    # per-item arrays, one copy of what the coefficients share (told by value); the answer is unchanged
    from voirdire.agreement import _stream, agreement

    df = _frame(n=500, seed=7, continuous=True)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    names = ["observed_agreement", "krippendorff_alpha"]
    ref = agreement(read_annotations(path, scale="interval"), coefficients=names, level="interval",
                    n_resamples=200, rng=3)
    monkeypatch.setattr(_stream, "_ROWS_MIN", 16)
    st = _stream._setup(path, names=names, groups=(_stream.StreamGroup(),), judges=(),
                        level="interval", weights=None, scale="interval", item="item", rater="rater", label="label",
                        categories=None, abstain=(), duplicates="error", missing="error", abstain_policy="exclude",
                        batch_rows=300)
    part = _stream._local(st)
    pa_, alpha = part.specs[0]
    assert part.rows[0] is None and alpha.d.shape == (part.n_items,) and pa_.r is alpha.r
    got = _stream.agreement_stream(path, coefficients=names, scale="interval", level="interval",
                                   batch_rows=300, n_resamples=200, rng=3)
    _same(got, ref)


@pytest.mark.parametrize("agree_all", [False, True])
def test_two_raters_binary_streams_like_in_memory(tmp_path, agree_all):
    # two raters on binary labels: Donner-Eliasziw's interval from the items' counts (the stream
    # keeps no labels), and the bound for tables without disagreement
    from voirdire.agreement import agreement
    from voirdire.agreement._stream import agreement_stream

    rng = np.random.default_rng(8)
    n = 120
    a = rng.integers(0, 2, n)
    b = a if agree_all else np.where(rng.random(n) < 0.8, a, 1 - a)
    df = pd.DataFrame({"item": np.repeat(np.arange(n), 2), "rater": ["x", "y"] * n,
                       "label": np.column_stack([a, b]).ravel()})
    path = tmp_path / "t.parquet"
    df.to_parquet(path, index=False)
    names = ["fleiss_kappa", "krippendorff_alpha"]
    ref = agreement(read_annotations(path, scale="nominal"), coefficients=names, n_resamples=200, rng=1)
    got = agreement_stream(path, coefficients=names, scale="nominal", batch_rows=37, n_resamples=200, rng=1)
    _same(got, ref)
    assert all(r.method == g.method for r, g in zip(ref, got))
