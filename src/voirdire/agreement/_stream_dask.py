"""The streaming statistics on a Dask cluster: each task reads a run of a Parquet file's row
groups and returns the per-item statistics of its complete items; the client joins them in file
order (``agreement_stream(..., scheduler=)``, ``voirdire agree --stream --scheduler ADDRESS``).

An item whose rows straddle two partitions is neither item's statistics on either worker: each
task hands back the rows of its first item and of its last item as they are (a few rows), and
the client joins them with the neighbouring partition's before computing that item. The
per-item statistics do not depend on where blocks are cut, so the result is the one of the local
path (the same arrays in the same order; pooled sums may differ in the last bit). The workers
must see the file at the same path (a shared file system or object store).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


from .._optional import dask_client, require
from ..exceptions import InvalidParameterError
from ._stream import _batches, _block, _join, _Part, _run_starts, _runs, _Setup

__all__ = ["partitioned"]


def _first_run(tbl: Any, item: str) -> int:
    """Rows of the table's first item."""
    starts = _run_starts(tbl.column(item))
    return int(starts[1]) if starts.size > 1 else tbl.num_rows


def _partition(st: _Setup, row_groups: list[int], pos: int) -> tuple[tuple[Any, int], _Part | None, tuple[Any, int] | None]:
    """On a worker: ``((head rows, row), statistics of the items between, (tail rows, row))``."""
    item = st.cols[0]
    head: tuple[Any, int] | None = None
    tail: tuple[Any, int] | None = None
    parts: list[_Part] = []
    for tbl, p, last in _runs(_batches(Path(st.path), list(st.cols), st.batch_rows, row_groups=row_groups), item, pos):
        if head is None:
            cut = _first_run(tbl, item)
            head = (tbl.slice(0, cut), p)
            if cut == tbl.num_rows:
                continue
            tbl, p = tbl.slice(cut), p + cut
        if last:
            tail = (tbl, p)
        else:
            parts.append(_block(tbl, p, st))
    if head is None:  # pragma: no cover - a row group always has rows here
        raise InvalidParameterError(f"row groups {row_groups} of {st.path} are empty.")
    return head, (_join(parts) if parts else None), tail


def _same_item(a: Any, b: Any, item: str) -> bool:
    return bool(a.column(item)[a.num_rows - 1].as_py() == b.column(item)[0].as_py())


def partitioned(st: _Setup, scheduler: Any) -> _Part:
    """Pass 2 on the cluster behind ``scheduler`` (an address or a ``dask.distributed.Client``)."""
    pa = require("pyarrow", "Streaming a table")
    import pyarrow.parquet as pq

    if Path(st.path).suffix.lower() not in (".parquet", ".pq"):
        raise InvalidParameterError(
            f"--scheduler splits a Parquet file by row groups; {st.path} is not Parquet. Convert it (e.g. DuckDB: "
            f"COPY (SELECT * FROM '{Path(st.path).name}') TO 'f.parquet'), or stream it here without --scheduler.")
    md = pq.ParquetFile(st.path).metadata
    sizes = [md.row_group(k).num_rows for k in range(md.num_row_groups)]
    client, own = dask_client(scheduler, "agreement_stream")
    try:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        target = max(st.batch_rows, -(-sum(sizes) // (4 * n_workers)))  # about 4 tasks a worker
        tasks: list[tuple[list[int], int]] = []
        rows = pos = 0
        cur: list[int] = []
        for k, n in enumerate(sizes):
            cur.append(k)
            rows += n
            if rows >= target or k == len(sizes) - 1:
                tasks.append((cur, pos))
                pos += rows
                cur, rows = [], 0
        futures = [client.submit(_partition, st, rgs, p0, pure=False) for rgs, p0 in tasks]
        results = client.gather(futures)
    finally:
        if own:
            client.close()
    item = st.cols[0]
    parts: list[_Part] = []
    pending: tuple[Any, int] | None = None
    for head, middle, tail in results:
        if pending is not None and _same_item(pending[0], head[0], item):
            pending = (pa.concat_tables([pending[0], head[0]]), pending[1])
        else:
            if pending is not None:
                parts.append(_block(pending[0], pending[1], st))
            pending = head
        if middle is not None or tail is not None:  # the head item is complete
            parts.append(_block(pending[0], pending[1], st))
            pending = None
            if middle is not None:
                parts.append(middle)
            pending = tail
    if pending is not None:
        parts.append(_block(pending[0], pending[1], st))
    return _join(parts)
