"""Shared fixtures: paths to the real data sets in ../shared/data (tests only; never shipped)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_CANDIDATES = [os.environ.get("VOIRDIRE_SHARED", ""), str(_HERE.parent.parent / "shared"), "/work/shared"]
SHARED = next((Path(c) for c in _CANDIDATES if c and (Path(c) / "data").is_dir()), Path("/work/shared")) / "data"


def shared_data(*parts: str) -> Path:
    """Path under ../shared/data; skips the test when the shared data are not present."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared data not available: {p}")
    return p


@pytest.fixture
def alttest_dir():
    return lambda name: shared_data("alttest", name)
