"""data.frame_as_file: a frame read under a path, inside the block only (how the study commands read a study)."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from voirdire.data import frame_as_file, read_annotations, read_long_frame, read_rounds
from voirdire.exceptions import SchemaError


def _frame() -> pd.DataFrame:
    # 2 items x (2 humans + 1 judge), two rounds; strings, as a CSV export reads back
    rows = [("-1f", "h1", "human", "1", "1"), ("-1f", "h2", "human", "1", "1"), ("-1f", "j", "judge", "0", "1"),
            ("=2", "h1", "human", "0", "2"), ("=2", "h2", "human", "1", "2"), ("=2", "j", "judge", "0", "2")]
    return pd.DataFrame(rows, columns=["item", "rater", "role", "label", "round"])


def test_reading_the_path_gives_the_frame_and_names_the_source(tmp_path) -> None:
    p = tmp_path / "s.vdb"
    p.write_bytes(b"SQLite format 3\x00")                    # what is on disk is never read inside the block
    with frame_as_file(p, _frame(), source="s.vdb"):
        t = read_annotations(p, role="role")
        df, rows, src = read_long_frame(p)
        r = read_rounds(p, column="round")
        with pytest.raises(SchemaError, match=r"^s\.vdb"):   # messages name the source, never another file
            read_annotations(p, role="role", scale="interval", label="item")
    assert (t.n_items, t.humans, t.judges, t.source) == (2, ("h1", "h2"), ("j",), "s.vdb")
    assert [str(i) for i in t.items] == ["-1f", "=2"]         # ids exactly as given: no formula escaping
    assert src == "s.vdb" and list(rows) == [2, 3, 4, 5, 6, 7] and len(df) == 6
    assert list(r["round"].astype(str)) == ["1", "1", "1", "2", "2", "2"]
    with pytest.raises(SchemaError):                          # outside the block: the file itself
        read_annotations(p, role="role")


def test_the_mapping_is_seen_only_inside_the_block_of_its_thread(tmp_path) -> None:
    p = tmp_path / "labels.csv"
    seen: list[int] = []
    with frame_as_file(p, _frame(), source="x"):
        t = threading.Thread(target=lambda: seen.append(p.exists()))
        t.start()
        t.join()
        with pytest.raises(SchemaError, match="file not found"):
            # another thread (its own context) does not see the frame
            err: list[BaseException] = []
            th = threading.Thread(target=lambda: _catch(err, lambda: read_long_frame(p)))
            th.start()
            th.join()
            raise err[0]
    assert seen == [False]


def _catch(box: list[BaseException], fn) -> None:
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        box.append(exc)
