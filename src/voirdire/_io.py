"""The one atomic-write helper: every file voirdire writes appears complete or not at all (private).

How a write works (:func:`atomic_outputs`, :func:`atomic_write`, :func:`write_text`):

1. Each destination gets a temporary file *in its own folder* (so the final rename never crosses
   a file system), created with ``O_CREAT | O_EXCL`` under a random name: a file or symlink
   planted at that name makes the creation fail instead of being written through.
2. The data are written and ``fsync``-ed, then the temporary file is renamed over the destination
   with :func:`os.replace` (atomic on POSIX and Windows), and the folder is ``fsync``-ed.
3. With several outputs (a data file and its manifest, a simulation's tables) every file is
   written completely first; the renames then run in the order the files were opened, so a
   manifest opened last is replaced last, after its data.
4. On any error, on Ctrl-C (SIGINT) and on SIGTERM the temporary files are removed and no
   destination is touched. A SIGKILL cannot be caught: the destination then still holds its old
   complete content (or the new one, if the rename already happened), and a stray
   ``.<name>.XXXXXXXX.tmp`` file may be left beside it. The next write of the same destination
   removes such leftovers (:func:`clean_stale_temps`): only regular files of exactly this naming
   pattern for that destination, owned by the user, untouched for :data:`STALE_AFTER_S` seconds,
   never following a link.

An output that is also an input of the same command (same file, through any path or link) is
refused before anything is written. Existing outputs are replaced (atomically): that is the
documented policy, see ``docs/safety.md``.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import time
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .exceptions import InvalidParameterError

__all__ = ["atomic_outputs", "atomic_write", "write_text", "write_bytes", "check_not_input", "AtomicOutputs",
           "clean_stale_temps", "STALE_AFTER_S"]

PathLike = str | os.PathLike[str]

#: A temporary file of ours untouched this long is a leftover of a killed writer (a live writer's
#: file changes as it is written; no voirdire output takes an hour between two writes).
STALE_AFTER_S = 3600.0
# tempfile.mkstemp's random part: 8 characters of this alphabet
_RANDOM = r"[a-z0-9_]{8}"


def _temp_prefix(dest: Path) -> str:
    return f".{dest.name}."


def clean_stale_temps(dest: PathLike, *, older_than: float = STALE_AFTER_S) -> list[Path]:
    """Remove temporary files a killed writer left beside ``dest``; return what was removed.

    Only names of this module's own pattern for this destination (``.<name>.XXXXXXXX.tmp``), only
    regular files (a link or folder of that name is left alone: ``lstat``, never followed), only
    the user's own files, and only those untouched for ``older_than`` seconds (a concurrent
    writer's live temporary file is younger). Errors (a file removed meanwhile, no permission)
    are ignored: cleaning is a courtesy, never a reason for a write to fail.
    """
    dest = Path(dest)
    folder = dest.parent if str(dest.parent) else Path(".")
    pattern = re.compile(re.escape(_temp_prefix(dest)) + _RANDOM + re.escape(".tmp"))
    now = time.time()
    uid = os.getuid() if hasattr(os, "getuid") else None
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        if not pattern.fullmatch(e.name):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
                continue
            if now - st.st_mtime < older_than:
                continue
            os.unlink(e.path)  # unlink never follows a link: at worst a link put here meanwhile goes
            removed.append(Path(e.path))
        except OSError:
            continue
    return removed


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    try:
        return a.resolve() == b.resolve()
    except OSError:  # pragma: no cover - resolve() fails only on exotic file systems
        return os.path.abspath(a) == os.path.abspath(b)


def check_not_input(output: PathLike, inputs: Iterable[PathLike | None] = ()) -> None:
    """Raise if ``output`` is one of ``inputs`` (the same file through any path, link or folder).

    An input that is a folder (an AltTest directory) also protects the files inside it.
    """
    out = Path(output)
    for inp in inputs:
        if inp is None:
            continue
        ip = Path(inp)
        clash = _same_file(out, ip)
        if not clash and ip.is_dir():
            with contextlib.suppress(OSError):
                clash = out.resolve().parent == ip.resolve() and (ip / out.name).exists()
        if clash:
            raise InvalidParameterError(
                f"Refusing to write {str(output)!r}: it is also an input of this command ({str(inp)!r}), "
                f"which would be destroyed. Choose another output path.")


class _Pending:
    __slots__ = ("dest", "tmp", "fh", "closed")

    def __init__(self, dest: Path, tmp: Path, fh: IO[Any]) -> None:
        self.dest, self.tmp, self.fh, self.closed = dest, tmp, fh, False


class _Terminated(BaseException):
    """Raised inside a write when SIGTERM arrives, so the temporary files are removed."""


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once, at import (os.umask is process-wide: never toggled while threads run)


class AtomicOutputs:
    """A group of outputs committed together; use through :func:`atomic_outputs`."""

    def __init__(self, inputs: Iterable[PathLike | None] = ()) -> None:
        self._inputs = [i for i in inputs if i is not None]
        self._pending: list[_Pending] = []

    @contextlib.contextmanager
    def open(self, path: PathLike, mode: str = "w", *, encoding: str = "utf-8",
             newline: str | None = "") -> Iterator[IO[Any]]:
        """Open a temporary file that will replace ``path`` when the group commits.

        ``mode`` is ``"w"`` (text, ``encoding``; ``newline=""`` writes line ends unchanged) or
        ``"wb"``. The handle is closed (and its data fsync-ed) when the ``with`` block ends.
        """
        if mode not in ("w", "wb"):
            raise InvalidParameterError(f"atomic write mode must be 'w' or 'wb'. Got {mode!r}.")
        dest = Path(path)
        check_not_input(dest, self._inputs)
        if any(_same_file(dest, p.dest) for p in self._pending):
            raise InvalidParameterError(f"{str(path)!r} is written twice by one command.")
        if dest.is_dir():
            raise InvalidParameterError(f"Cannot write {str(path)!r}: it is a folder. Give a file name.")
        folder = dest.parent if str(dest.parent) else Path(".")
        if not folder.is_dir():
            raise InvalidParameterError(
                f"Cannot write {str(path)!r}: the folder {str(folder)!r} does not exist. Create it first.")
        clean_stale_temps(dest)
        # mkstemp: O_CREAT | O_EXCL with a random name in the destination's folder; never follows a link
        fd, tmp_name = tempfile.mkstemp(prefix=_temp_prefix(dest), suffix=".tmp", dir=folder)
        tmp = Path(tmp_name)
        try:
            os.chmod(tmp, 0o666 & ~_UMASK)
            fh: IO[Any]
            if mode == "wb":
                fh = os.fdopen(fd, "wb")
            else:
                fh = os.fdopen(fd, "w", encoding=encoding, newline=newline)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        pending = _Pending(dest, tmp, fh)
        self._pending.append(pending)
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        pending.closed = True

    def _commit(self) -> None:
        for p in self._pending:
            if not p.closed:  # pragma: no cover - a handle used outside its ``with`` block
                raise RuntimeError(f"{p.dest} was not completely written")
        folders = []
        for p in self._pending:
            os.replace(p.tmp, p.dest)
            p.tmp = Path()
            if p.dest.parent not in folders:
                folders.append(p.dest.parent)
        for f in folders:
            _fsync_dir(f)

    def _abort(self) -> None:
        for p in self._pending:
            with contextlib.suppress(Exception):
                p.fh.close()
            if str(p.tmp) not in ("", "."):
                with contextlib.suppress(OSError):
                    p.tmp.unlink()


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder if str(folder) else ".", os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on folders
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While writing, SIGTERM raises (so ``finally`` blocks remove temp files) instead of killing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (ValueError, AttributeError):  # pragma: no cover
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Terminated()

    if previous not in (signal.SIG_DFL, None):
        # someone else handles SIGTERM (a test runner, a server): leave it to them
        yield
        return
    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)  # die of the signal, as the sender expects
        raise  # pragma: no cover
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def atomic_outputs(*, inputs: Iterable[PathLike | None] = ()) -> Iterator[AtomicOutputs]:
    """Write several files so that each appears complete or not at all.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_outputs() as out:
    ...     with out.open(d / "data.csv") as fh:
    ...         _ = fh.write("a,b\\n1,2\\n")
    ...     with out.open(d / "data.manifest.json") as fh:   # replaced after data.csv
    ...         _ = fh.write("{}\\n")
    >>> sorted(p.name for p in d.iterdir())
    ['data.csv', 'data.manifest.json']
    """
    group = AtomicOutputs(inputs)
    with _sigterm_raises():
        try:
            yield group
            group._commit()
        except BaseException:
            group._abort()
            raise


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "w", *, encoding: str = "utf-8", newline: str | None = "",
                 inputs: Iterable[PathLike | None] = ()) -> Iterator[IO[Any]]:
    """Open ``path`` for writing through a temporary file renamed into place when the block ends.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_write(p) as fh:
    ...     _ = fh.write("hello\\n")
    >>> p.read_text()
    'hello\\n'
    """
    with atomic_outputs(inputs=inputs) as group, group.open(path, mode, encoding=encoding, newline=newline) as fh:
        yield fh


def write_text(path: PathLike, text: str, *, encoding: str = "utf-8",
               inputs: Iterable[PathLike | None] = ()) -> Path:
    """Write ``text`` to ``path`` atomically; return the path."""
    with atomic_write(path, "w", encoding=encoding, inputs=inputs) as fh:
        fh.write(text)
    return Path(path)


def write_bytes(path: PathLike, data: bytes, *, inputs: Iterable[PathLike | None] = ()) -> Path:
    """Write ``data`` to ``path`` atomically; return the path."""
    with atomic_write(path, "wb", inputs=inputs) as fh:
        fh.write(data)
    return Path(path)
