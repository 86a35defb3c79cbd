"""Each item's content (the text annotators see) in an annotation tool's export (private)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from ._formats._common import load_json
from ._formats.argilla import argilla_item_fields
from ._formats.label_studio import label_studio_item_data

__all__ = ["read_item_data"]

_COMPRESSED = (".gz", ".bz2", ".xz")


def read_item_data(path: str | os.PathLike[str], *, item: str = "item", control: str | None = None,
                   sha256: str | None = None) -> dict[str, dict[str, Any]]:
    """Each item's content in a Label Studio or Argilla export: item id -> task ``data`` / record ``fields``.

    The next round written for the tool (:func:`voirdire.design.write_assignments` with
    ``format="label-studio"`` or ``"argilla"``) carries it over, so the imported batch shows the
    annotators the same text the labelling config or dataset settings point at. Item ids are the
    ones :func:`read_annotations` gives (``data[item]`` / ``fields[item]``, else the task or record
    id).

    Parameters
    ----------
    path : path-like
        A Label Studio JSON or JSON-MIN export, or an Argilla records export (``.json``, possibly
        compressed).
    item : str, default "item"
        The data key holding the item id (``--item``).
    control : str, optional
        The Label Studio control that holds the label (``--control``): in a JSON-MIN export it is
        not task data. Without it, JSON-MIN keys count as task data only where every task has its
        own value.
    sha256 : str, optional
        The file's content hash when it was read before (a study round's ``file_hash``): a file
        that changed since gives ``{}`` (its content may no longer be that round's).

    Returns
    -------
    dict
        Item id -> the source task's ``data`` (Label Studio) or the record's ``fields`` (Argilla);
        empty for any other file (a CSV has no task content to carry over).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> tasks = [{"id": 7, "data": {"text": "Refund arrived."}, "annotations": []}]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d) / "export.json"
    ...     _ = p.write_text(json.dumps(tasks))
    ...     read_item_data(p)
    {'7': {'text': 'Refund arrived.'}}
    """
    p = Path(path)
    name = p.name.lower()
    for ext in _COMPRESSED:
        if name.endswith(ext):
            name = name[: -len(ext)]
    if not name.endswith(".json") or not p.is_file():
        return {}
    if sha256 is not None and hashlib.sha256(p.read_bytes()).hexdigest() != sha256:
        return {}
    obj = load_json(p, str(p))
    return label_studio_item_data(obj, item=item, control=control) or argilla_item_fields(obj, item=item)
