"""Both cores for the per-item arithmetic of large tables (private).

NumPy releases the GIL in its loops, so two threads on two halves of an array run on two cores.
Every helper here computes each element exactly as one call on the whole array would (the same
operations on the same operands, only split between threads), so results do not depend on the
number of threads; below :data:`MIN_ELEMENTS` (or on one core) everything runs on the calling
thread.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["MIN_ELEMENTS", "both", "by_halves", "in_threads", "n_threads", "two_cores"]

T = TypeVar("T")
U = TypeVar("U")

#: arrays from this many elements are split between two threads (below, a thread costs more than it saves)
MIN_ELEMENTS = 400_000


def n_threads() -> int:
    """Cores this process may run on (at most 8)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def two_cores() -> bool:
    """Whether this process may run on two or more cores."""
    return n_threads() >= 2


def both(f: Callable[[], T], g: Callable[[], U], size: int) -> tuple[T, U]:
    """``(f(), g())``, ``f`` on a second thread while ``g`` runs here when ``size`` (the elements
    each touches) reaches :data:`MIN_ELEMENTS` and two cores are free to this process."""
    if size < MIN_ELEMENTS or not two_cores():
        return f(), g()
    with ThreadPoolExecutor(max_workers=1) as ex:
        fut = ex.submit(f)
        b = g()
        return fut.result(), b


def by_halves(fn: Callable[[slice], Any], n: int) -> None:
    """``fn(slice(0, h))`` and ``fn(slice(h, n))`` on two threads (``fn(slice(0, n))`` when small):
    ``fn`` writes its slice of the outputs; elementwise work gives the same values either way."""
    if n < MIN_ELEMENTS or not two_cores():
        fn(slice(0, n))
        return
    h = n // 2
    both(lambda: fn(slice(0, h)), lambda: fn(slice(h, n)), n)


def in_threads(calls: Sequence[Callable[[], T]], workers: int) -> list[T]:
    """``[c() for c in calls]``, on up to ``workers`` threads (one: on the calling thread, in order).

    Each call runs in a copy of the caller's context (its context variables: the draws that
    :func:`voirdire._stats.resampling.shared_draws` keeps are shared), and is started in the
    order given. An exception is raised as the loop would raise it: that of the first call (in
    the order given) that failed, after the calls already started have ended, the rest not started.
    Calls that are deterministic give the same values whatever ``workers`` is.

    >>> in_threads([lambda: 1, lambda: 2, lambda: 3], workers=2)
    [1, 2, 3]
    """
    if workers <= 1 or len(calls) <= 1:
        return [c() for c in calls]
    with ThreadPoolExecutor(max_workers=min(int(workers), len(calls))) as ex:
        futures = [ex.submit(contextvars.copy_context().run, c) for c in calls]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise
