"""The round (batch, or arrival time) of every label, read from a long file (for sequential validation)."""

from __future__ import annotations

import os

import pandas as pd

from ..exceptions import SchemaError
from ._readers import read_long_frame

__all__ = ["read_rounds"]


def read_rounds(path: str | os.PathLike[str], *, column: str, item: str = "item",
                rater: str = "rater") -> pd.DataFrame:
    """The ``item``, ``rater`` and ``round`` of every row of a long annotation file.

    The frame feeds :func:`voirdire.validation.validate_sequential` (``rounds=``) next to the
    table that :func:`read_annotations` reads from the same file.

    Parameters
    ----------
    path : path-like
        A long table (CSV, TSV, JSONL, Parquet).
    column : str
        The column holding each label's round (a batch number or a timestamp).
    item, rater : str
        Column names of the item and rater ids.

    Returns
    -------
    pandas.DataFrame
        Columns ``item``, ``rater``, ``round``.

    Raises
    ------
    SchemaError
        A missing column (with the columns found), or an empty round (with its row).
    """
    df, rows, src = read_long_frame(path)
    missing = [c for c in (item, rater, column) if c not in df.columns]
    if missing:
        found = [str(c)[:40] for c in list(df.columns)[:12]]
        raise SchemaError(f"missing column(s) {missing} for sequential validation; found {found}. Name the round "
                          f"column with --round-column (and the ids with --item/--rater).", source=src)
    rnd = df[column]
    empty = rnd.isna() | (rnd.astype(str).str.strip() == "")
    if empty.any():
        i = int(empty.to_numpy().nonzero()[0][0])
        raise SchemaError("empty round: every label needs the round (batch or time) it arrived in.", source=src,
                          row=int(rows[i]), column=column)
    return pd.DataFrame({"item": df[item].to_numpy(), "rater": df[rater].to_numpy(), "round": rnd.to_numpy()})
