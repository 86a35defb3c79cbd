"""Inputs that expand (issue 29 items 8, 9): ZIP bombs (.xlsx, Inspect .eval, .npz), a sheet's far
corner, XML entities, .gz bombs, FIFOs nobody writes to, endless devices, lone surrogates.

Every one is refused in one line naming the file, the limit and the variable that raises it, in
well under a second of work: the bombs are generated here, small (tens of KB) but claiming tens of
MB; the limits are lowered through the environment where the default would need a large file.
"""

from __future__ import annotations

import gzip
import io
import os
import threading
import time
import zipfile
from pathlib import Path

import pytest

from voirdire.data import read_annotations, read_long_frame
from voirdire.data._limits import LIMITS, check_zip, limit
from voirdire.exceptions import InvalidParameterError, SchemaError

GOOD = [["item", "rater", "label"], *[[f"i{i}", r, str(i % 2)] for i in range(6) for r in ("a", "b")]]


def _xlsx(tmp_path: Path, name: str = "ok.xlsx", **cells: str) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    pytest.importorskip("defusedxml")
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in GOOD:
        ws.append(row)
    for ref, value in cells.items():
        ws[ref] = value
    p = tmp_path / name
    wb.save(p)
    return p


def _rezip(src: Path, dest: Path, member: str, change) -> Path:  # type: ignore[no-untyped-def]
    """``src`` rewritten to ``dest`` with ``member``'s bytes passed through ``change``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            zout.writestr(info.filename, change(data) if info.filename == member else data)
    return dest


SHEET = "xl/worksheets/sheet1.xml"


def test_a_good_workbook_still_reads(tmp_path: Path) -> None:
    t = read_annotations(_xlsx(tmp_path))
    assert (t.n_items, t.n_raters, t.n_labels) == (6, 2, 12)


def test_an_xlsx_zip_bomb_is_refused_from_its_directory(tmp_path: Path) -> None:
    # 20 MB of spaces after the sheet deflate to ~20 KB (ratio ~1,000); before: inflated whole
    bomb = _rezip(_xlsx(tmp_path), tmp_path / "bomb.xlsx", SHEET, lambda d: d + b" " * (20 << 20))
    assert bomb.stat().st_size < 200_000
    t0 = time.process_time()
    with pytest.raises(SchemaError, match=r"bomb\.xlsx: member 'xl/worksheets/sheet1\.xml' inflates [\d,]+ times .*"
                                          r"VOIRDIRE_MAX_COMPRESSION_RATIO=\d+\.$"):
        read_annotations(bomb)
    assert time.process_time() - t0 < 1.0


def test_a_cell_at_the_sheets_far_corner_is_refused_before_pandas_fills_the_span(tmp_path: Path) -> None:
    # one value at XFD1048576 made openpyxl + pandas build 17 billion cells from a 5 KB file
    p = _xlsx(tmp_path, "corner.xlsx", XFD1048576="x")
    t0 = time.process_time()
    with pytest.raises(SchemaError, match=r"corner\.xlsx: the sheet spans more than 20,000,000 cells \(row 1,048,576, "
                                          r"column 16,384\).*VOIRDIRE_MAX_CELLS="):
        read_annotations(p)
    assert time.process_time() - t0 < 1.0


def test_the_cell_limit_can_be_raised_and_lowered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _xlsx(tmp_path, "wide.xlsx", Z3="x")  # 13 rows x 26 columns once pandas pads to column Z
    monkeypatch.setenv("VOIRDIRE_MAX_CELLS", "100")
    with pytest.raises(SchemaError, match="VOIRDIRE_MAX_CELLS"):
        read_annotations(p, missing="drop")
    monkeypatch.setenv("VOIRDIRE_MAX_CELLS", "1000")
    assert read_annotations(_xlsx(tmp_path)).n_labels == 12


@pytest.mark.parametrize("doctype", [
    b'<!DOCTYPE worksheet [<!ENTITY e SYSTEM "file:///etc/passwd">]>',                      # XXE
    b'<!DOCTYPE worksheet [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>',  # billion laughs
])
def test_xml_entities_in_a_workbook_are_refused(tmp_path: Path, doctype: bytes) -> None:
    p = _rezip(_xlsx(tmp_path), tmp_path / "ent.xlsx", SHEET, lambda d: doctype + d)
    with pytest.raises(SchemaError, match=r"ent\.xlsx: the workbook's XML declares an entity or a DTD .*refused"):
        read_annotations(p)


def test_the_excel_reader_refuses_to_run_without_defusedxml_in_openpyxl(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    p = _xlsx(tmp_path)
    import openpyxl

    monkeypatch.setattr(openpyxl, "DEFUSEDXML", False)  # as OPENPYXL_DEFUSEDXML=False leaves it
    with pytest.raises(SchemaError, match="not parsing through defusedxml"):
        read_annotations(p)


def test_the_excel_extra_requires_defusedxml() -> None:
    import tomllib

    meta = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert any(d.startswith("defusedxml") for d in meta["project"]["optional-dependencies"]["excel"])


def test_members_and_total_size_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "many.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        for k in range(12):
            z.writestr(f"m{k}.json", b"{}" * 1000)
    monkeypatch.setenv("VOIRDIRE_MAX_ARCHIVE_MEMBERS", "10")
    with pytest.raises(SchemaError, match=r"many\.zip: the archive holds 12 members, over the limit of 10 .*"
                                          r"VOIRDIRE_MAX_ARCHIVE_MEMBERS=\d+"):
        check_zip(p, str(p))
    monkeypatch.delenv("VOIRDIRE_MAX_ARCHIVE_MEMBERS")
    monkeypatch.setenv("VOIRDIRE_MAX_INFLATED_BYTES", "10K")
    with pytest.raises(SchemaError, match=r"members inflate to 23\.4 KB, over the limit of 10 KB .*"
                                          r"VOIRDIRE_MAX_INFLATED_BYTES=1G"):
        check_zip(p, str(p))
    monkeypatch.setenv("VOIRDIRE_MAX_INFLATED_BYTES", "1M")
    check_zip(p, str(p))  # within every limit


def test_limit_values_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert limit("VOIRDIRE_MAX_INFLATED_BYTES") == LIMITS["VOIRDIRE_MAX_INFLATED_BYTES"][0] == 2 << 30
    for raw, want in (("8G", 8 << 30), ("500m", 500 << 20), ("12", 12), ("3 GiB", 3 << 30), ("1KB", 1024)):
        monkeypatch.setenv("VOIRDIRE_MAX_INFLATED_BYTES", raw)
        assert limit("VOIRDIRE_MAX_INFLATED_BYTES") == want, raw
    monkeypatch.setenv("VOIRDIRE_MAX_INFLATED_BYTES", "lots")
    with pytest.raises(InvalidParameterError, match="VOIRDIRE_MAX_INFLATED_BYTES must be a whole number of bytes"):
        limit("VOIRDIRE_MAX_INFLATED_BYTES")
    monkeypatch.setenv("VOIRDIRE_MAX_CELLS", "1G")  # a count takes no unit
    with pytest.raises(InvalidParameterError, match="VOIRDIRE_MAX_CELLS must be a whole number. Got '1G'"):
        limit("VOIRDIRE_MAX_CELLS")


def test_an_inspect_eval_bomb_is_refused_before_inspect_reads_it(tmp_path: Path) -> None:
    p = tmp_path / "log.eval"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", "{}")
        z.writestr("samples/1_epoch_1.json", b'{"a": "' + b"x" * (20 << 20) + b'"}')
    with pytest.raises(SchemaError, match=r"log\.eval: member 'samples/1_epoch_1\.json' inflates"):
        read_annotations(p)


def test_a_pairwise_state_bomb_is_refused_before_numpy_reads_it(tmp_path: Path) -> None:
    from voirdire.pairwise import PairwiseBayesModel

    p = tmp_path / "state.npz"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("meta.npy", b"\x93NUMPY" + b"\0" * (20 << 20))
    with pytest.raises(SchemaError, match=r"state\.npz: member 'meta\.npy' inflates"):
        PairwiseBayesModel.load(p)


@pytest.mark.parametrize("name", ["bomb.csv.gz", "bomb.jsonl.gz", "bomb.json.gz"])
def test_a_gzip_bomb_stops_at_the_inflated_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    p = tmp_path / name
    p.write_bytes(gzip.compress(b"item,rater,label\n" + b" " * (3 << 20), compresslevel=1))
    monkeypatch.setenv("VOIRDIRE_MAX_INFLATED_BYTES", "1M")
    with pytest.raises(SchemaError, match=rf"{name}: the file inflates to more than 1 MB, over the limit of 1 MB .*"
                                          r"VOIRDIRE_MAX_INFLATED_BYTES="):
        read_annotations(p)


def test_a_lone_surrogate_in_json_is_refused_with_its_row(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text('{"item": "i1", "rater": "a", "label": 1}\n{"item": "i1", "rater": "b\\ud800", "label": 1}\n'
                 '{"item": "i2", "rater": "\\ud83d\\ude00", "label": 1}\n')
    with pytest.raises(SchemaError, match=r"s\.jsonl, row 2: the JSON text 'b\\ud800' holds a lone surrogate"):
        read_long_frame(p)
    p.write_text('{"item": "i1", "rater": "a", "label": 1}\n{"item": "i1", "rater": "\\ud83d\\ude00", "label": 1}\n'
                 '{"item": "i2", "rater": "\\\\ud800", "label": 1}\n')  # a pair (an emoji) and an escaped backslash
    df, _, _ = read_long_frame(p)
    assert df["rater"].tolist() == ["a", "\U0001f600", "\\ud800"]


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


@needs_fifo
def test_a_fifo_nobody_writes_to_is_an_error_not_a_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "nobody.csv"
    os.mkfifo(fifo)
    monkeypatch.setenv("VOIRDIRE_PIPE_TIMEOUT", "1")
    t0 = time.monotonic()
    with pytest.raises(SchemaError, match=r"nobody\.csv: no data arrived for 1 s .*VOIRDIRE_PIPE_TIMEOUT=SECONDS"):
        read_annotations(fifo)
    with pytest.raises(SchemaError, match="no data arrived"):
        read_long_frame(fifo)  # the pairwise, bias and watch reader: it blocked in pandas before
    assert time.monotonic() - t0 < 10


@needs_fifo
def test_an_endless_pipe_stops_at_the_pipe_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "endless.csv"
    os.mkfifo(fifo)
    stop = threading.Event()

    def writer() -> None:
        try:
            with open(fifo, "wb") as fh:
                fh.write(b"item,rater,label\n")
                while not stop.is_set():
                    fh.write(b"i1,a,1\n" * 10_000)
        except (BrokenPipeError, OSError):
            pass

    w = threading.Thread(target=writer, daemon=True)
    w.start()
    monkeypatch.setenv("VOIRDIRE_MAX_PIPE_BYTES", "1M")
    try:
        with pytest.raises(SchemaError, match=r"endless\.csv: more than 1 MB arrived, over the limit of 1 MB .*"
                                              r"VOIRDIRE_MAX_PIPE_BYTES="):
            read_annotations(fifo)
    finally:
        stop.set()
        w.join(5)


@pytest.mark.skipif(not Path("/dev/urandom").exists(), reason="no /dev/urandom")
def test_dev_urandom_stops_at_its_first_block() -> None:
    t0 = time.monotonic()
    # the format is sniffed from random bytes: CSV mostly, JSON when the first byte read is '{' or '[' (seen once)
    with pytest.raises(SchemaError, match=r"^/dev/urandom, row \d+: cannot be parsed as (CSV|JSON|JSONL): it holds a NUL "
                                          r"byte"):
        read_annotations("/dev/urandom")
    assert time.monotonic() - t0 < 5


def test_standard_input_is_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"item,rater,label\n" + b"i1,a,1\n" * 200_000)))
    monkeypatch.setenv("VOIRDIRE_MAX_PIPE_BYTES", "100K")
    with pytest.raises(SchemaError, match=r"^<stdin>: more than 100 KB arrived"):
        read_annotations("-")


def _parquet_bomb(path: Path, n_rows: int) -> None:
    """A long Parquet table of ``n_rows`` equal rows: run-length and dictionary encoded, a few KB on disk."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    tab = pa.table({"item": pa.array(["i1"] * 2 + ["i2"] * (n_rows - 2)),
                    "rater": pa.array(["a", "b"] * (n_rows // 2)), "label": pa.array([1] * n_rows)})
    pq.write_table(tab, path, compression="zstd")


def test_a_parquet_file_is_refused_from_its_footer_before_decoding(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 29: 200,000 rows x 3 columns decode to at least 200,000 x 3 x 8 bytes = 4.58 MB, over a 1M limit
    p = tmp_path / "bomb.parquet"
    _parquet_bomb(p, 200_000)
    assert p.stat().st_size < 50_000
    monkeypatch.setenv("VOIRDIRE_MAX_INFLATED_BYTES", "1M")
    want = (r"bomb\.parquet: the Parquet file's 200,000 rows \(1 row groups\) decode to 4\.58 MB or more, over the "
            r"limit of 1 MB \(bytes an archive, compressed or Parquet file may inflate to; a decompression bomb\?\)\. If the "
            r"input is genuine, raise the limit: VOIRDIRE_MAX_INFLATED_BYTES=1G\.$")
    with pytest.raises(SchemaError, match=want):
        read_annotations(p)          # the Arrow reader (three columns)
    with pytest.raises(SchemaError, match=want):
        read_long_frame(p)           # the general reader (every column)
    monkeypatch.setenv("VOIRDIRE_MAX_INFLATED_BYTES", "5M")
    assert read_long_frame(p)[0].shape == (200_000, 3)  # raised: read
