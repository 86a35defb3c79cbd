"""A frame read as if it were a file (private): how ``study validate|estimate|report`` hand a study to a command.

And a pipe read more than once: inside ``with pipe_as_file(path)``, a FIFO or character device
``path`` is copied once (within the limits of :mod:`voirdire.data._limits`) and every reader of
``path`` reads the copy, naming ``path`` in its messages (``study add`` hashes the round's bytes,
then reads them).

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

__all__ = ["frame_as_file", "virtual_frame", "pipe_as_file", "pipe_copy"]

_FRAMES: contextvars.ContextVar[dict[str, tuple[Any, str]]] = contextvars.ContextVar("voirdire_virtual_files",
                                                                                       default={})
_PIPES: contextvars.ContextVar[dict[str, Path]] = contextvars.ContextVar("voirdire_pipe_copies", default={})


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


@contextlib.contextmanager
def pipe_as_file(path: str | os.PathLike[str], *, format: str = "auto") -> Iterator[Path]:
    """While the block runs, reading the FIFO or character device ``path`` reads one copy of it.

    A pipe can be read once, and a reader that needs its bytes twice (a hash, then the table)
    would find it drained. The copy is bounded as every pipe read is (``VOIRDIRE_MAX_PIPE_BYTES``,
    ``VOIRDIRE_PIPE_TIMEOUT``); an empty pipe (``/dev/null``) is a one-line
    :class:`~voirdire.exceptions.SchemaError` ("the file is empty"). Yields the copy's path (to
    hash it); messages of the readers name ``path``. Any other ``path`` is yielded as it is.
    """
    from ._formats import stdin_file
    from ._readers import is_pipe

    if not is_pipe(path):
        yield Path(path)
        return
    with stdin_file(format, pipe=str(path)) as copy:
        token = _PIPES.set({**_PIPES.get(), _key(path): copy})
        try:
            yield copy
        finally:
            _PIPES.reset(token)


def pipe_copy(path: str | os.PathLike[str]) -> Path | None:
    """The copy of the pipe ``path`` made by an enclosing :func:`pipe_as_file`, else None."""
    pipes = _PIPES.get()
    return pipes.get(_key(path)) if pipes and str(path) != "-" else None
