"""A frame read as if it were a file (private): how ``study validate|estimate|report`` hand a study to a command.

Inside ``with frame_as_file(path, frame, source=...)``, reading ``path`` with
:func:`~voirdire.data.read_annotations`, :func:`~voirdire.data.read_long_frame` or
:func:`~voirdire.data.read_rounds` gives ``frame`` (a long table of strings, as a CSV export of it
reads) instead of the file's bytes, and every message names ``source``. No temporary file is
written, so no temporary name can reach the user. The mapping lives in a context variable: only
the code inside the block (this thread or task) sees it.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["frame_as_file", "virtual_frame"]

_FRAMES: contextvars.ContextVar[dict[str, tuple[Any, str]]] = contextvars.ContextVar("voirdire_virtual_files",
                                                                                       default={})


def _key(path: str | os.PathLike[str]) -> str:
    try:
        return str(Path(path).resolve())
    except OSError:  # pragma: no cover - resolve() fails only on exotic file systems
        return os.path.abspath(path)


@contextlib.contextmanager
def frame_as_file(path: str | os.PathLike[str], frame: Any, *, source: str) -> Iterator[None]:
    """While the block runs, reading ``path`` gives ``frame``; messages name ``source``.

    Row numbers are those of the frame written as a CSV with a header (the first row is row 2),
    i.e. of ``voirdire study export``'s file.

    Examples
    --------
    >>> import pandas as pd
    >>> from voirdire.data import frame_as_file, read_annotations
    >>> df = pd.DataFrame({"item": ["a", "a", "b", "b"], "rater": ["h1", "h2", "h1", "h2"],
    ...                    "label": ["1", "1", "0", "1"]})
    >>> with frame_as_file("study.vdb", df, source="study.vdb"):
    ...     t = read_annotations("study.vdb")
    >>> t.n_items, t.raters.tolist(), t.source
    (2, ['h1', 'h2'], 'study.vdb')
    """
    token = _FRAMES.set({**_FRAMES.get(), _key(path): (frame, source)})
    try:
        yield
    finally:
        _FRAMES.reset(token)


def virtual_frame(path: str | os.PathLike[str]) -> tuple[Any, np.ndarray, str] | None:
    """``(frame copy, row numbers, source)`` when ``path`` is read as a frame here, else None."""
    frames = _FRAMES.get()
    if not frames or str(path) == "-":
        return None
    hit = frames.get(_key(path))
    if hit is None:
        return None
    frame, source = hit
    return frame.copy(), np.arange(2, len(frame) + 2), source
