"""The seed tree of the workflows (private): every random stream derives from one seed.

A stream is named by a path of strings (``("validation", "alt_test", judge)``); its generator is
``numpy.random.default_rng(SeedSequence(seed, spawn_key=hash(path)))``. Naming streams instead of
numbering them means a judge's numbers do not depend on which other judges were analysed with
it, nor on their order: ``validate -j A`` and ``validate -j B -j A`` give A the same intervals.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .._checks import check_positive_int

__all__ = ["seed_sequence", "stream", "check_seed"]


def _key(part: str) -> int:
    return int.from_bytes(hashlib.sha256(part.encode("utf-8")).digest()[:4], "little")


def seed_sequence(seed: int, *path: str) -> np.random.SeedSequence:
    """The ``SeedSequence`` of the stream named ``path`` under ``seed``."""
    return np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(_key(p) for p in path))


def stream(seed: int, *path: str) -> np.random.Generator:
    """A fresh generator for the stream named ``path`` under ``seed`` (same inputs, same draws).

    Examples
    --------
    >>> a = stream(0, "validation", "alt_test", "gpt-4o").integers(0, 100, 3)
    >>> b = stream(0, "validation", "alt_test", "gpt-4o").integers(0, 100, 3)
    >>> bool((a == b).all()), bool((a == stream(0, "validation", "alt_test", "other").integers(0, 100, 3)).all())
    (True, False)
    """
    return np.random.default_rng(seed_sequence(seed, *path))


def check_seed(seed: object, func: str) -> int:
    """A non-negative integer seed, else InvalidParameterError."""
    return check_positive_int(seed, "seed", func, minimum=0)
